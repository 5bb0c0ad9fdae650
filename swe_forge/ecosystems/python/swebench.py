"""A pytest task's SWE-bench 5 eval script and log parser (see :mod:`swe_forge.admission.swebench`).

Our instance image holds the base commit as a *one-commit* repository (history scrubbed), so
the eval script resets the test files to ``HEAD``, never to ``base_commit`` (which that
repository does not have). It then applies the test patch, and runs the same tests the gates
ran, with the gates' pytest settings and environment, as the same unprivileged uid (1000).
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Iterable

from swe_forge.diffs import DiffParseError, parse_diff
from swe_forge.ecosystems.python.runner import PYTEST_SETTINGS
from swe_forge.errors import InputError
from swe_forge.records import TaskManifest

#: SWE-bench's markers around the test output (``swebench.harness.constants``).
START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"

#: ``parse_log_pytest`` reads pytest's ``-rA`` summary lines (``PASSED <node id>``) and takes
#: the first word after the status as the test; ``parse_log_pytest_v2`` joins every word, so
#: it is the one that keeps node ids with whitespace whole (parametrized ids).
LOG_PARSER = "parse_log_pytest"
LOG_PARSER_WHITESPACE_IDS = "parse_log_pytest_v2"

#: The uid the gates and the verifier run tests as (the images' ``USER 1000:1000``).
TEST_UID = 1000

#: Where the test patch goes in the container (decoded from the script itself).
TEST_PATCH_FILE = "/tmp/swe_forge_test.patch"

#: The gates' environment for pytest (``gates/harness/swe_forge_supervisor.py``), with the
#: verifier's fixed hash seed. PATH and VIRTUAL_ENV come from the image.
TEST_ENV = (
    ("HOME", "/home/swe"),
    ("LANG", "C.UTF-8"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("PYTHONNOUSERSITE", "1"),
    ("PYTEST_ADDOPTS", ""),
    ("PY_COLORS", "0"),
    ("TZ", "UTC"),
    ("PYTHONHASHSEED", "0"),
)


def log_parser(tests: Iterable[str]) -> str:
    """The SWE-bench log parser that reads these pytest node ids back from ``-rA`` output."""
    if any(len(t.split()) > 1 for t in tests):
        return LOG_PARSER_WHITESPACE_IDS
    return LOG_PARSER


def held_out_paths(test_patch: str) -> tuple[list[str], list[str]]:
    """The test patch's paths as (restore from HEAD, remove): a path the base has is checked
    out again, a path the test patch creates is removed, so the patch applies whatever the
    prediction did to them.

    Raises:
        InputError: the test patch does not parse.
    """
    try:
        parsed = parse_diff(test_patch)
    except DiffParseError as exc:
        raise InputError(f"the test patch does not parse: {exc}") from exc
    restore: set[str] = set()
    remove: set[str] = set()
    for fp in parsed:
        if fp.old_path:
            restore.add(fp.old_path)
        if fp.new_path and fp.new_path != fp.old_path:
            remove.add(fp.new_path)
    return sorted(restore), sorted(remove - restore)


def _reset(restore: list[str], remove: list[str]) -> list[str]:
    lines = []
    if restore:
        lines.append("git checkout HEAD -- " + " ".join(shlex.quote(p) for p in restore))
    if remove:
        lines.append("rm -rf -- " + " ".join(shlex.quote(p) for p in remove))
    return lines


def eval_script(task: TaskManifest) -> str:
    """The bash script SWE-bench runs (as root, in ``/testbed``) after applying a prediction.

    It resets the test patch's files to ``HEAD`` (the scrubbed image has one commit: the
    base), applies the test patch (carried base64-encoded, so no line of it can end the here
    document or be taken for a marker; a test patch that does not apply ends the script before
    the markers: nothing graded), gives the tree to uid 1000, and runs the gates' test files
    with the gates' pytest settings (``-rA`` added for SWE-bench's parser, ``--no-cov`` when
    pytest-cov is installed, as the gates do) as uid 1000 between SWE-bench's markers. The test
    command is the line just before the end marker: SWE-bench 5 records its exit status there.

    Raises:
        InputError: its test patch does not parse.
    """
    restore, remove = held_out_paths(task.test_patch)
    # The gates' own selection: the test patch's files, or the whole suite.
    files = [] if task.gates.get("scope") == "suite" else list(task.harness.get("test_files", []))
    encoded = base64.encodebytes(task.test_patch.encode("utf-8")).decode("ascii").rstrip("\n")
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in TEST_ENV)
    pytest = [
        "setpriv",
        f"--reuid={TEST_UID}",
        f"--regid={TEST_UID}",
        "--clear-groups",
        "python",
        "-m",
        "pytest",
        "-rA",
        *PYTEST_SETTINGS,
    ]
    test_command = " ".join(
        [*(shlex.quote(a) for a in pytest), "$no_cov", *(shlex.quote(f) for f in files)]
    )
    lines = [
        "#!/bin/bash",
        "set -uxo pipefail",
        "cd /testbed",
        "git -c core.fileMode=false status --short",
        "# The held-out tests: the test patch's files back to HEAD, then the test patch.",
        *_reset(restore, remove),
        f"base64 -d > {TEST_PATCH_FILE} <<'EOF_SWE_FORGE_TEST_PATCH'",
        encoded,
        "EOF_SWE_FORGE_TEST_PATCH",
        f"git apply --verbose {TEST_PATCH_FILE} || exit 1",
        f"chown -R {TEST_UID}:{TEST_UID} /testbed",
        f"export {exports}",
        "no_cov=",
        "if compgen -G '/opt/venv/lib/python*/site-packages/pytest_cov-*.dist-info' >/dev/null;"
        " then no_cov=--no-cov; fi",
        f": '{START_TEST_OUTPUT}'",
        test_command,
        f": '{END_TEST_OUTPUT}'",
        *_reset(restore, remove),
    ]
    return "\n".join(lines) + "\n"
