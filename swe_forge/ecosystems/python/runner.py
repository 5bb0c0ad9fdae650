"""pytest with the judge's plugin: Python's test runner and what its runs lock.

The command is the same for admission's gate and for verification (the harness plugin,
``-p swe_forge_harness``, brought in from a read-only mount); exported SWE-bench rows use the
same settings without the plugin.
"""

from __future__ import annotations

import shlex

from swe_forge.mining.classify import PathClassifier

#: pytest's settings for every run of a task's tests, ours and exported ones (SWE-bench's
#: eval scripts): caches and order/rerun plugins out, collection errors reported per file.
PYTEST_SETTINGS = (
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
)

#: How the harness runs pytest: its plugin in, then :data:`PYTEST_SETTINGS`.
PYTEST_ARGS = ("python", "-m", "pytest", "-p", "swe_forge_harness", *PYTEST_SETTINGS, "-q")


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


def protect_spec(test_patch: str, classifier: PathClassifier) -> dict[str, list[str]]:
    """What the supervisor locks before the tests run: every path the test patch touches,
    and the test trees they live in (the top-most test directory on each path, as the path
    classifier names them: ``tests/``, ``pkg/tests/``...). Runner configuration anywhere in
    the tree (``conftest.py``, ``pytest.ini``, ``setup.cfg``...) is found and locked by the
    supervisor itself."""
    from swe_forge.diffs import DiffParseError, parse_diff

    files: set[str] = set()
    trees: set[str] = set()
    try:
        parsed = parse_diff(test_patch)
    except DiffParseError:
        parsed = []
    for fp in parsed:
        for path in (fp.old_path, fp.new_path):
            if not path:
                continue
            files.add(path)
            parts = path.split("/")
            for i in range(1, len(parts)):
                # Test trees are locked whole; never the top of the work tree itself.
                prefix = "/".join(parts[:i])
                # The first directory that makes the path test code is the tree to lock.
                if classifier.is_test(prefix + "/x"):
                    trees.add(prefix)
                    break
    return {"files": sorted(files), "trees": sorted(trees)}
