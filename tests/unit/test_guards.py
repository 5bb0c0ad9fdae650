"""Static guards on candidate patches (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.mining.classify import PathClassifier
from swe_forge.verify.guards import GuardLimits, PatchGuard
from tests.unit.test_diffs import FORMS, Form, git_apply, git_changed, git_repo

GUARD = PatchGuard(
    PathClassifier(load_config().classify),
    test_patch_paths={"tests/test_core.py", "tests/data/x.json"},
)


def new(path: str, body: str = "x = 1\n", mode: str = "100644") -> str:
    lines = "".join(f"+{ln}\n" for ln in body.splitlines())
    return f"diff --git a/{path} b/{path}\nnew file mode {mode}\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(body.splitlines())} @@\n{lines}"


def codes(patch: str, guard: PatchGuard = GUARD) -> set[str]:
    return {v["code"] for v in guard.check(patch).violations}


def test_a_plain_source_change_passes() -> None:
    patch = "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    report = GUARD.check(patch)
    assert report.ok and report.files == ["pkg/core.py"]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("tests/test_core.py", "test_patch_path"),
        ("TESTS/Test_Core.py", "test_file"),
        ("tests/new_helper.py", "test_file"),
        ("conftest.py", "runner_config"),
        ("pkg/deep/conftest.py", "runner_config"),
        ("pytest.ini", "runner_config"),
        ("tox.ini", "runner_config"),
        ("sitecustomize.py", "startup_hook"),
        ("pkg/usercustomize.py", "startup_hook"),
        ("pkg/evil.pth", "startup_hook"),
        ("pkg/x-1.0.dist-info/entry_points.txt", "distribution_metadata"),
        ("pkg/__pycache__/core.cpython-311.pyc", "compiled_code"),
        (".github/workflows/ci.yml", "ci_config"),
        ("pytest.py", "shadows_framework"),
        ("src/_pytest/hack.py", "shadows_framework"),
        ("src/json.py", "shadows_stdlib"),
        ("os/__init__.py", "shadows_stdlib"),
        (".git/config", "git_internals"),
        ("pkg/.GIT/hooks/x", "git_internals"),
        (".gitattributes", "git_internals"),
    ],
)
def test_refused_paths(path: str, code: str) -> None:
    assert code in codes(new(path))


def test_nested_stdlib_name_is_fine() -> None:
    assert codes(new("pkg/json.py")) == set()


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        ("", "empty_patch"),
        ("   \n", "empty_patch"),
        ("not a diff\n", "malformed_diff"),
        (
            "diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n",
            "path_escape",
        ),
        (
            "diff --git a//etc/x b//etc/x\n--- a//etc/x\n+++ b//etc/x\n@@ -1 +1 @@\n-a\n+b\n",
            "absolute_path",
        ),
        (new("pkg/link", "../../etc", "120000"), "symlink"),
        (new("vendor/lib", "Subproject commit " + "1" * 40, "160000"), "submodule"),
        (new("pkg/tool.sh", "echo", "104755"), "bad_mode"),
        (
            "diff --git a/pkg/a.bin b/pkg/a.bin\nindex 1..2 100644\nBinary files a/pkg/a.bin and b/pkg/a.bin differ\n",
            "binary_patch",
        ),
        (new("pkg/big.py", "x = 1\n" * 200_000), "too_large"),
    ],
)
def test_refused_patches(patch: str, code: str) -> None:
    assert code in codes(patch)


def test_non_utf8_and_caps() -> None:
    assert "not_utf8" in {v["code"] for v in GUARD.check(b"diff --git a/x b/x\n+\xff\n").violations}
    small = PatchGuard(
        PathClassifier(load_config().classify),
        test_patch_paths=set(),
        limits=GuardLimits(max_files=1),
    )
    assert "too_many_files" in codes(new("pkg/a.py") + new("pkg/b.py"), small)


def test_pytest_settings_in_pyproject() -> None:
    patch = 'diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1,2 +1,3 @@\n [tool.pytest.ini_options]\n-x = 1\n+addopts = "-p no:python"\n+x = 1\n'
    assert "runner_config" in codes(patch)
    ok = 'diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1,2 +1,2 @@\n [project]\n-version = "1"\n+version = "2"\n'
    assert codes(ok) == set()
    # A change beside pytest's settings (the ruff table), whose context shows pytest's keys:
    # refused by nothing here; the parsed comparison after applying judges pytest's settings.
    beside = (
        "diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n"
        "+++ b/pyproject.toml\n@@ -1,4 +1,4 @@\n [tool.pytest.ini_options]\n"
        ' filterwarnings = ["error"]\n [tool.ruff]\n-lint.ignore = ["D203"]\n'
        '+lint.ignore = ["D211"]\n'
    )
    assert codes(beside) == set()


def test_code_is_not_judged_by_text() -> None:
    # What added code can do is the capability gate's business (by syntax tree, in the
    # container, against the base and the gold patch): the static guards judge paths only.
    assert codes(new("pkg/evil.py", "import ctypes\nimport sys\nsys.settrace(None)\n")) == set()


def test_audit_needles_ignore_names_at_the_base() -> None:
    from swe_forge.images.audit import needles_from_test_patch

    patch = "diff --git a/tests/test_m.py b/tests/test_m.py\n--- a/tests/test_m.py\n+++ b/tests/test_m.py\n@@ -1 +1,4 @@\n def test_basic():\n+    pass\n+def test_brand_new_behaviour():\n+    assert True\n"
    needles = needles_from_test_patch(patch, base_lines={b"def test_basic():", b"pass"})
    assert needles.names == frozenset({b"test_brand_new_behaviour"})
    assert needles.modified_files == {"tests/test_m.py": ""}


def test_audit_names_in_installed_libraries_need_to_be_distinctive() -> None:
    from swe_forge.images.audit import AuditReport, Needles, _check_content

    needles = Needles(
        frozenset({b"test_run", b"test_dotenv_values_file_stream"}), frozenset(), (), {}
    )

    def failed(name: str, data: bytes) -> bool:
        report = AuditReport(image="i", instance_id="x")
        _check_content(name, data, needles, report)
        return not report.passed

    lib = "opt/venv/lib/python3.9/site-packages/IPython/core/tests/test_run.py"
    # A library's own test_run is chance; the project's tree is not a library.
    assert not failed(lib, b"def test_run():\n    pass\n")
    assert failed("testbed/tests/test_x.py", b"def test_run():\n    pass\n")
    # A distinctive name, or several, in a library is a leak.
    assert failed(lib, b"def test_dotenv_values_file_stream(): ...\n")
    assert failed(lib, b"test_run test_dotenv_values_file_stream\n")


def test_a_framework_project_gets_no_exemption() -> None:
    # pluggy's own modules run inside the judge: a patch to them is refused even for pluggy.
    patch = "diff --git a/src/pluggy/_hooks.py b/src/pluggy/_hooks.py\n--- a/src/pluggy/_hooks.py\n+++ b/src/pluggy/_hooks.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    own = PatchGuard(
        PathClassifier(load_config().classify), test_patch_paths=set(), project_name="pluggy"
    )
    assert "shadows_framework" in codes(patch, own)


# ----------------------------------------------------------------------------------------------
# Traditional diffs: every form git applies is accepted, with git's file list; the path guards
# hold for them as for git's own sections (checked against the real git).


@pytest.mark.parametrize("form", FORMS, ids=[f.name for f in FORMS])
def test_traditional_forms_pass_with_gits_file_list(form: Form, tmp_path: Path) -> None:
    repo = git_repo(tmp_path, form.files)
    assert git_apply(repo, form.patch, "--check").returncode == 0
    report = GUARD.check(form.patch)
    assert report.ok, report.violations
    assert report.files == git_changed(repo, form.patch) == form.changed


def test_a_model_style_traditional_fix_passes() -> None:
    # What a model writes: a/ b/ names and a hunk, no "diff --git" line.
    patch = "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    report = GUARD.check(patch)
    assert report.ok and report.files == ["pkg/core.py"]


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("a/../x.py", "b/../x.py", "path_escape"),
        ("../x.py", "../x.py", "path_escape"),  # git would strip "..": refused all the same
        ("a/pkg/../../x.py", "b/pkg/../../x.py", "path_escape"),
        ("/x.py", "/x.py", "absolute_path"),  # git would change x.py
        ("/etc/passwd", "/etc/passwd", "absolute_path"),
        ("a//etc/passwd", "b//etc/passwd", "absolute_path"),
        ("C:/x.py", "C:/x.py", "absolute_path"),
        # Mismatched names: git patches the new one (and renames nothing), so does the guard.
        ("a/pkg/core.py", "b/tests/test_core.py", "test_patch_path"),
        ("a/pkg/core.py", "b/conftest.py", "runner_config"),
        # The old name is not what git changes, but an escape in it is refused anyway.
        ("a/../../etc/x.py", "b/pkg/core.py", "path_escape"),
    ],
)
def test_traditional_paths_refused(old: str, new: str, code: str) -> None:
    patch = f"--- {old}\n+++ {new}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    assert code in codes(patch)


def test_mismatched_names_guard_what_git_changes(tmp_path: Path) -> None:
    # git changes pkg/core.py only: the test file named on the --- line is not touched.
    patch = b"--- a/tests/test_core.py\n+++ b/pkg/core.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    repo = git_repo(tmp_path, {"tests/test_core.py": b"a\nb\nc\n", "pkg/core.py": b"a\nb\nc\n"})
    assert git_changed(repo, patch) == ["pkg/core.py"]
    report = GUARD.check(patch)
    assert report.ok and report.files == ["pkg/core.py"]
    assert git_apply(repo, patch).returncode == 0
    assert (repo / "tests/test_core.py").read_bytes() == b"a\nb\nc\n"


@pytest.mark.parametrize(
    "patch",
    [
        "--- a/pkg/core.py\n+++ b/pkg/core.py\n",  # a header without hunks
        "--- a/pkg/new.py\t1970-01-01 00:00:00.000000000 +0000\n+++ b/pkg/new.py\t2024-01-01 00:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+n\n",
        "--- core.py\n+++ core.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/pkg/x.py b/pkg/x.py\n--- a/pkg/x.py\n+++ b/pkg/x.py\n@@ -1 +1 @@\n-a\n+b\n",
        "The fix:\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n-a\n+b\n",
    ],
    ids=["no hunks", "epoch creation", "git header after -p0", "prose"],
)
def test_traditional_malformed(patch: str) -> None:
    assert codes(patch) == {"malformed_diff"}


def test_a_traditional_creation_without_dev_null_is_guarded_as_new() -> None:
    # One hunk from -0,0 and no /dev/null: git creates the file when it is missing.
    patch = "--- a/src/json.py\n+++ b/src/json.py\n@@ -0,0 +1 @@\n+x = 1\n"
    assert "shadows_stdlib" in codes(patch)
    assert codes(patch.replace("src/json.py", "pkg/util.py")) == set()


def test_a_new_top_level_module_is_refused_unless_the_gold_adds_it() -> None:
    # Found before the installed packages on sys.path: `hamcrest.py` would judge the tests
    # that assert with hamcrest.
    def new(path: str) -> str:
        return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"

    for path in (
        "hamcrest.py",
        "src/dirty_equals.py",
        "lib/hamcrest/__init__.py",
        "deepdiff/__init__.py",
    ):
        assert "new_top_level_module" in codes(new(path)), path
    for path in ("src/pkg/helpers.py", "pkg/sub/__init__.py", "docs/conf_extra.txt"):
        assert "new_top_level_module" not in codes(new(path)), path
    gold = PatchGuard(
        PathClassifier(load_config().classify),
        test_patch_paths=set(),
        gold_patch=new("src/newmod.py"),
    )
    assert "new_top_level_module" not in codes(new("src/newmod.py"), gold)
    assert "new_top_level_module" in codes(new("src/other.py"), gold)
