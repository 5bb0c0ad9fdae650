"""Which tests a test patch adds or changes (the FAIL_TO_PASS scope), from real diffs."""

from __future__ import annotations

import difflib

from swe_forge.ecosystems.python.scope import PatchScope, patch_scope

BASE = """\
import pytest

from pkg import old


def helper():
    return 1


def test_plain():
    assert old() == 1


@pytest.mark.parametrize("x", [1, 2])
def test_param(x):
    assert x


class TestThing:
    def setup_method(self):
        self.n = 1

    def test_a(self):
        assert self.n

    def test_b(self):
        assert self.n


class TestMore(TestThing):
    def test_c(self):
        assert True
"""


def diff(path: str, old: str | None, new: str) -> str:
    """A git-style diff of one file (created when ``old`` is None)."""
    a = [] if old is None else old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = f"diff --git a/{path} b/{path}\n"
    if old is None:
        head += "new file mode 100644\n"
    body = difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{path}", f"b/{path}", n=3)
    return head + "".join(body)


def scope_of(new: str, old: str | None = BASE, path: str = "tests/test_x.py") -> PatchScope:
    files = {} if old is None else {path: old.encode()}
    return patch_scope(
        diff(path, old, new), lambda p: files.get(p), lambda p: p.startswith("tests/")
    )


def test_an_import_at_the_top_changes_no_test() -> None:
    # The collection-error case: every test of the module fails before, none is the task's.
    s = scope_of(BASE.replace("from pkg import old\n", "from pkg import new, old\n"))
    assert s.modules == {"tests/test_x.py"} and not s.changed
    for t in ("test_plain", "test_param[1]", "TestThing::test_a", "TestMore::test_c"):
        assert not s.covers(f"tests/test_x.py::{t}")


def test_a_changed_test_and_a_new_one() -> None:
    new = BASE.replace("assert old() == 1", "assert old() == 2") + "\n\ndef test_new():\n    pass\n"
    s = scope_of(new)
    assert s.covers("tests/test_x.py::test_plain")
    assert s.covers("tests/test_x.py::test_new")
    assert not s.covers("tests/test_x.py::test_param[1]")
    assert not s.covers("tests/test_x.py::TestThing::test_a")


def test_a_new_parametrize_case_covers_every_case() -> None:
    s = scope_of(BASE.replace("[1, 2])", "[1, 2, 3])"))
    assert s.covers("tests/test_x.py::test_param[3]")
    # Parameter ids may hold anything, "::" and "[" included.
    assert s.covers("tests/test_x.py::test_param[a::b[c]")
    assert not s.covers("tests/test_x.py::test_plain")


def test_removed_lines_inside_a_test_change_it() -> None:
    s = scope_of(
        BASE.replace(
            "    def test_b(self):\n        assert self.n\n",
            "    def test_b(self):\n        pass\n",
        )
    )
    assert s.covers("tests/test_x.py::TestThing::test_b")
    assert not s.covers("tests/test_x.py::TestThing::test_a")


def test_shared_class_code_covers_the_class_and_its_subclasses() -> None:
    s = scope_of(BASE.replace("self.n = 1", "self.n = 2"))
    assert s.covers("tests/test_x.py::TestThing::test_a")
    assert s.covers("tests/test_x.py::TestThing::test_b")
    # Inherited: pytest collects TestThing's tests again under TestMore.
    assert s.covers("tests/test_x.py::TestMore::test_a")
    assert not s.covers("tests/test_x.py::test_plain")


def test_a_test_added_to_a_base_class_is_the_subclass_test_too() -> None:
    new = BASE.replace(
        "    def test_b(self):\n",
        "    def test_new(self):\n        assert self.n\n\n    def test_b(self):\n",
    )
    s = scope_of(new)
    assert s.covers("tests/test_x.py::TestThing::test_new")
    assert s.covers("tests/test_x.py::TestMore::test_new")
    assert not s.covers("tests/test_x.py::TestMore::test_c")


def test_a_module_level_helper_is_no_test() -> None:
    s = scope_of(BASE.replace("return 1", "return 2"))
    assert not s.changed


def test_a_new_module_defines_all_its_tests() -> None:
    s = scope_of(
        "def test_one():\n    pass\n\n\nclass TestK:\n    def test_two(self):\n        pass\n",
        old=None,
    )
    assert s.covers("tests/test_x.py::test_one") and s.covers("tests/test_x.py::TestK::test_two")
    assert not s.covers("tests/test_other.py::test_one")


def test_what_cannot_be_analysed_is_not_filtered() -> None:
    broken = scope_of(BASE + "\ndef test_broken(:\n")
    assert (
        "tests/test_x.py" in broken.unanalysed
        and "SyntaxError" in broken.unanalysed["tests/test_x.py"]
    )
    assert broken.covers("tests/test_x.py::test_plain")
    no_base = patch_scope(diff("tests/test_x.py", BASE, BASE + "\n# more\n"), None, lambda p: True)
    assert no_base.unanalysed == {"tests/test_x.py": "the base source is not at hand"}
    assert no_base.covers("tests/test_x.py::test_plain")
    assert no_base.to_dict()["unanalysed"] == {"tests/test_x.py": "the base source is not at hand"}
