"""Data-driven tests: a test patch that changes only a case file under a test directory.

The case file (JSON, YAML...) is read by a test module of its test tree; such a task runs
that tree's modules instead of being rejected ``no_test_module``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems.python.adapter import PythonEcosystem
from swe_forge.git.repo import FileChange
from swe_forge.mining.classify import PathClassifier
from swe_forge.mining.split import SplitRejection, check_kinds
from swe_forge.records import Reason


def _change(path: str) -> FileChange:
    return FileChange(
        status="M",
        old_path=path,
        new_path=path,
        old_mode=0o100644,
        new_mode=0o100644,
        old_blob="1" * 40,
        new_blob="2" * 40,
        is_binary=False,
        additions=1,
        deletions=1,
        patch=b"",
    )


def _classifier() -> PathClassifier:
    return PathClassifier(load_config().classify)


def test_case_files_with_a_python_fix_are_a_test_side() -> None:
    kinds = check_kinds(
        [_change("src/jmes/parser.py"), _change("tests/compliance/syntax.json")], _classifier()
    )
    assert not isinstance(kinds, SplitRejection), kinds


@pytest.mark.parametrize(
    "paths",
    [
        # A helper or conftest alone still holds no test.
        ["src/pkg/core.py", "tests/helpers.py"],
        ["src/pkg/core.py", "tests/conftest.py"],
        # Runner configuration under tests/ is not a case file.
        ["src/pkg/core.py", "tests/pytest.ini"],
        # The fix is not Python's: a JavaScript project's fixtures are not Python's cases.
        ["lib/index.js", "tests/fixtures/cases.json"],
    ],
)
def test_other_test_sides_without_a_module_are_still_rejected(paths: list[str]) -> None:
    kinds = check_kinds([_change(p) for p in paths], _classifier())
    assert isinstance(kinds, SplitRejection) and kinds.reason is Reason.NO_TEST_MODULE


CASES_PATCH = (
    "diff --git a/tests/data/cases.yaml b/tests/data/cases.yaml\n"
    "--- a/tests/data/cases.yaml\n+++ b/tests/data/cases.yaml\n"
    "@@ -1 +1,2 @@\n - a: 1\n+- b: 2\n"
    "diff --git a/pkg/tests/compliance/basic.json b/pkg/tests/compliance/basic.json\n"
    "--- a/pkg/tests/compliance/basic.json\n+++ b/pkg/tests/compliance/basic.json\n"
    "@@ -1 +1 @@\n-[]\n+[1]\n"
)

MODULE_PATCH = (
    "diff --git a/tests/test_x.py b/tests/test_x.py\n"
    "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
    "@@ -1,2 +1,4 @@\n def test_a():\n+    pass\n+def test_b():\n     pass\n"
)


def test_a_case_file_patch_runs_its_test_trees() -> None:
    eco = PythonEcosystem(_classifier())
    assert eco.test_files(CASES_PATCH) == ["pkg/tests", "tests"]
    scope = eco.scope(CASES_PATCH, lambda path: b"")
    # Every test of those trees is the task's (which module reads the file is not known).
    assert scope.covers("tests/test_cases.py::test_case[b-2]")
    assert scope.covers("pkg/tests/unit/test_compliance.py::TestBasic::test_one")
    assert not scope.covers("other/test_other.py::test_one")
    assert scope.to_dict()["data_dirs"] == ["pkg/tests", "tests"]


def test_a_module_in_the_patch_keeps_the_patchs_modules() -> None:
    eco = PythonEcosystem(_classifier())
    both = MODULE_PATCH + CASES_PATCH
    assert eco.test_files(both) == ["tests/test_x.py"]
    scope = eco.scope(
        both, lambda path: b"def test_a():\n    pass\n" if path.endswith(".py") else b""
    )
    assert not scope.covers("tests/test_cases.py::test_case")
    assert "data_dirs" not in scope.to_dict()


def test_the_supervisor_closes_a_test_trees_modules_not_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swe_forge.gates.harness import swe_forge_supervisor as sup

    for rel in (
        "tests/test_cases.py",
        "tests/unit/check_test.py",
        "tests/helpers.py",
        "tests/data/cases.yaml",
        "src/pkg/test_like.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    monkeypatch.setattr(sup, "TESTBED", str(tmp_path))
    got = sup.test_modules_of(["tests", "src/pkg/test_like.py", "missing/test_gone.py"])
    assert got == [
        "missing/test_gone.py",
        "src/pkg/test_like.py",
        "tests/test_cases.py",
        "tests/unit/check_test.py",
    ]
