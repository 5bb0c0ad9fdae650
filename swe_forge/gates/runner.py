"""Test runners: run chosen test files in a fresh container and read per-test outcomes.

The interface (:class:`TestRunner`) is what a runner for another framework implements. The
pytest runner brings its harness plugin from outside the image (a read-only mount), so the
image needs nothing of ours; outcomes come from the plugin's structured report, never from
scraping stdout. Node ids are pytest's own (relative to ``/testbed``, parametrized ids in
full, never truncated).

Each run is made deterministic where it should be: a fixed ``PYTHONHASHSEED`` per run,
``TZ=UTC``, no cache provider, rerun and random-order plugins disabled (the harness does its
own seeded shuffle), a per-run wall clock.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from swe_forge.engine import Engine, Limits

#: Outcome values; "missing" is ours (the test did not run or was not collected).
PASSED = "passed"
MISSING = "missing"
#: Exit codes of our wrapper script for failures before the tests run.
EXIT_TEST_PATCH = 97
EXIT_GOLD_PATCH = 98
RESULTS_PATH = "/tmp/swe-forge-results.json"
MOUNT = "/swe-forge"


@dataclass
class RunResult:
    """One test run: outcome per node id, plus what happened to the run itself."""

    phase: str  # "before" | "after"
    hash_seed: int
    order_seed: int
    # "ok" | "test_patch_failed" | "gold_patch_failed" | "timeout" | "resource_limit" | "no_report"
    status: str
    exit_code: int | None
    seconds: float
    tests: dict[str, str] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)
    tampered: str = ""
    output_tail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the manifest (without the output tail)."""
        return {
            "phase": self.phase,
            "hash_seed": self.hash_seed,
            "order_seed": self.order_seed,
            "status": self.status,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "tests": dict(sorted(self.tests.items())),
            "collect_errors": dict(sorted(self.collect_errors.items())),
            "tampered": self.tampered,
        }


class TestRunner(Protocol):
    """What a test framework adapter provides."""

    name: str

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The shell command that runs ``test_files`` (all tests when empty) in /testbed."""

    def parse(self, report: bytes) -> tuple[dict[str, str], dict[str, str], str]:
        """Per-test outcomes, collection errors, and tamper evidence from the report."""


#: How the harness runs pytest: its plugin in, caches and order/rerun plugins out.
PYTEST_ARGS = (
    "python",
    "-m",
    "pytest",
    "-p",
    "swe_forge_harness",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:randomly",
    "-p",
    "no:rerunfailures",
    "-p",
    "no:flaky",
    "--rootdir=/testbed",
    "--continue-on-collection-errors",
    "-q",
)


class PytestRunner:
    """pytest with the swe-forge harness plugin."""

    name = "pytest"

    def __init__(self, extra_args: str = "") -> None:
        self.extra_args = extra_args

    def argv(self, test_files: list[str]) -> list[str]:
        """pytest's arguments with the harness: the same for admission and verification."""
        return [
            *PYTEST_ARGS,
            *shlex.split(self.extra_args),
            *test_files,
        ]

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The pytest command line (the order seed travels in the environment)."""
        return " ".join(shlex.quote(a) for a in self.argv(test_files))

    def parse(self, report: bytes) -> tuple[dict[str, str], dict[str, str], str]:
        """Read the harness plugin's JSON report."""
        data = json.loads(report.decode("utf-8"))
        tests = {str(k): str(v) for k, v in (data.get("tests") or {}).items()}
        errors = {str(k): str(v) for k, v in (data.get("collect_errors") or {}).items()}
        return tests, errors, str(data.get("tampered") or "")


@contextmanager
def harness_dir(work_dir: Path, *, test_patch: str, gold_patch: str | None) -> Iterator[Path]:
    """A temporary directory to mount read-only at /swe-forge: the plugin and the patches."""
    work_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=work_dir, prefix="harness-"))
    try:
        plugin = resources.files("swe_forge.gates.harness").joinpath("swe_forge_harness.py")
        (tmp / "swe_forge_harness.py").write_bytes(plugin.read_bytes())
        (tmp / "test.patch").write_text(test_patch)
        if gold_patch is not None:
            (tmp / "gold.patch").write_text(gold_patch)
        tmp.chmod(0o755)
        for f in tmp.iterdir():
            f.chmod(0o644)
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def wrapper_script(
    runner: TestRunner, test_files: list[str], *, with_gold: bool, order_seed: int
) -> str:
    """Apply the test patch (and the gold patch), then run the tests.

    ``git apply`` without fuzz or rejects: a patch that does not apply exactly is a failure
    with its own exit code, never a partial application.
    """
    steps = [
        "set -u",
        "cd /testbed",
        f"git apply --whitespace=nowarn {MOUNT}/test.patch || exit {EXIT_TEST_PATCH}",
    ]
    if with_gold:
        steps.append(f"git apply --whitespace=nowarn {MOUNT}/gold.patch || exit {EXIT_GOLD_PATCH}")
    steps.append(runner.command(test_files, order_seed=order_seed))
    return "\n".join(steps) + "\n"


def run_tests(
    engine: Engine,
    image: str,
    runner: TestRunner,
    harness: Path,
    test_files: list[str],
    *,
    phase: str,
    hash_seed: int,
    order_seed: int,
    timeout: float,
    limits: Limits | None = None,
) -> RunResult:
    """One run in a fresh container from ``image``."""
    script = wrapper_script(runner, test_files, with_gold=phase == "after", order_seed=order_seed)
    outcome = engine.run_locked(
        image,
        ["/bin/sh", "-c", script],
        timeout=timeout,
        volumes={str(harness): {"bind": MOUNT, "mode": "ro"}},
        environment={
            "PYTHONHASHSEED": str(hash_seed),
            "SWE_FORGE_ORDER_SEED": str(order_seed),
            "SWE_FORGE_RESULTS": RESULTS_PATH,
            "PYTHONPATH": MOUNT,
            "PYTHONDONTWRITEBYTECODE": "1",
            "TZ": "UTC",
            "PYTEST_ADDOPTS": "",
            "PY_COLORS": "0",
            "HOME": "/home/swe",
        },
        collect=[RESULTS_PATH],
        limits=limits,
    )
    result = RunResult(
        phase=phase,
        hash_seed=hash_seed,
        order_seed=order_seed,
        status="ok",
        exit_code=outcome.exit_code,
        seconds=outcome.seconds,
        output_tail=outcome.output[-4000:],
    )
    if outcome.timed_out:
        result.status = "timeout"
        return result
    if outcome.oom_killed or outcome.exit_code == 137:
        result.status = "resource_limit"
        return result
    if outcome.exit_code == EXIT_TEST_PATCH:
        result.status = "test_patch_failed"
        return result
    if outcome.exit_code == EXIT_GOLD_PATCH:
        result.status = "gold_patch_failed"
        return result
    report = outcome.files.get(RESULTS_PATH)
    if report is None:
        result.status = "no_report"
        return result
    try:
        result.tests, result.collect_errors, result.tampered = runner.parse(report)
    except (ValueError, UnicodeDecodeError):
        result.status = "no_report"
    return result
