"""Static guards: refuse a candidate patch before anything applies or runs it.

A candidate patch is hostile. Each guard that fails adds a named violation; any violation
makes the patch ``invalid_patch`` (reward 0) without it ever touching a container. The same
path checks run again on what ``git apply`` actually changed, inside the container.

Refused:

- empty or malformed diffs (two independent parsers must both accept it), non-UTF-8 text,
  binary patches, caps on bytes, files and hunks; git's own sections and traditional ones
  (``--- a/x``/``+++ b/x``, ``diff -u`` with timestamps, no prefixes, CRLF) are read as
  ``git apply`` reads them (:mod:`swe_forge.diffs`), so the paths guarded are the paths git
  changes; a traditional header's names as written must not be absolute or hold ``..``
  either, even where git's stripping of a leading component would hide it;
- paths that are absolute, escape the tree (``..``), touch ``.git``, contain control
  characters, backslashes or NUL, or collide with a protected path by case or Unicode form;
- symlinks, submodules, and modes other than 100644/100755;
- test files (by the path classifier), every path the test patch touches, test-runner
  configuration (``conftest.py`` at any depth, ``pytest.ini``, ``tox.ini``, ``noxfile.py``,
  pytest settings in ``setup.cfg``/``pyproject.toml``), CI files, ``.gitattributes`` and
  ``.gitmodules``;
- code that runs around the tests: ``sitecustomize.py``, ``usercustomize.py``, ``*.pth``,
  ``*.dist-info``/``*.egg-info`` contents, ``__pycache__``/``*.pyc``, modules that shadow
  ``pytest``/``pluggy`` anywhere or a stdlib module at an import root, and any new
  top-level module (``x.py`` or ``x/__init__.py`` at the top, under ``src/`` or ``lib/``)
  the gold patch does not add: it would shadow an installed library of that name.

What the added *code* can do is not judged here by its text: the capability gate
(:mod:`swe_forge.verify.capabilities`) judges it by syntax tree, file by file, against the base
code and the gold patch, once the patch is applied in the container.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass, field

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from swe_forge.diffs import DiffParseError, FilePatch, parse_diff
from swe_forge.mining.classify import FileKind, PathClassifier

_ALLOWED_MODES = {"100644", "100755"}
_RUNNER_CONFIG = {
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "noxfile.py",
    "conftest.py",
}
#: Deeper paths are refused: nothing honest nests this far, and walking it costs the judge.
MAX_PATH_DEPTH = 48
_GIT_META = {".gitattributes", ".gitmodules", ".git"}
_STARTUP = {"sitecustomize.py", "usercustomize.py"}
_FRAMEWORK_MODULES = {"pytest", "_pytest", "pluggy", "py", "swe_forge_harness", "iniconfig"}
#: Projects whose code the test runner itself imports: tasks from them cannot be judged safely.
FRAMEWORK_PROJECTS = frozenset({"pytest", "pluggy", "py", "iniconfig"})
_ADDED, _REMOVED = ord("+"), ord("-")
_IMPORT_ROOTS = ("", "src/", "lib/", "tests/", "test/", "testing/")
#: Where a new module is a top-level one (``tests/`` and the like hold test files only).
_MODULE_ROOTS = ("", "src/", "lib/")
_PYTEST_SETTING = re.compile(
    r"\[(?:tool:pytest|pytest|tool\.pytest[^\]]*|coverage:run)\]|\baddopts\b|\btestpaths\b|\bpython_files\b"
    r"|\bpython_functions\b|\bnorecursedirs\b|\bfilterwarnings\b|\brequired_plugins\b|\busefixtures\b"
    r"|\bconfcutdir\b|\bpytest_plugins\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GuardLimits:
    """Caps on the size of a candidate patch."""

    max_bytes: int = 1 << 20
    max_files: int = 100
    max_hunks: int = 500


@dataclass
class GuardReport:
    """Violations found by the guards (empty when the patch may be applied)."""

    violations: list[dict[str, str]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def add(self, code: str, detail: str) -> None:
        """Record one violation."""
        self.violations.append({"code": code, "detail": detail})

    @property
    def ok(self) -> bool:
        """True when no guard objected."""
        return not self.violations


def _fold(path: str) -> str:
    return unicodedata.normalize("NFKC", path).casefold()


class PatchGuard:
    """The guards of one task: its protected paths and what its gold patch does."""

    def __init__(
        self,
        classifier: PathClassifier,
        *,
        test_patch_paths: set[str],
        gold_patch: str = "",
        limits: GuardLimits | None = None,
        project_name: str | None = None,
    ) -> None:
        self.classifier = classifier
        self.protected = {_fold(p) for p in test_patch_paths}
        self.limits = limits or GuardLimits()
        # No exemption for a project that *is* pytest or pluggy: its code would run inside the
        # judge. Such projects are refused at admission (framework_project) instead.
        self.framework = _FRAMEWORK_MODULES
        self.project_name = project_name
        self.gold_patch = gold_patch
        self._gold_new: set[str] | None = None

    def _gold_created(self) -> set[str]:
        """The paths the gold patch creates (folded), parsed once."""
        if self._gold_new is None:
            try:
                files = parse_diff(self.gold_patch) if self.gold_patch.strip() else []
            except DiffParseError:
                files = []
            self._gold_new = {
                _fold(fp.new_path) for fp in files if fp.new_path and fp.old_path is None
            }
        return self._gold_new

    # ------------------------------------------------------------------ paths
    def check_path(self, path: str, report: GuardReport) -> None:
        """Violations of one repository-relative path (also used after applying)."""
        if not path:
            report.add("bad_path", "empty path")
            return
        if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
            report.add("absolute_path", path)
            return
        if "\\" in path or "\x00" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
            report.add("bad_path", f"control character or backslash in {path!r}")
            return
        parts = path.split("/")
        if any(p in ("", ".", "..") for p in parts):
            report.add("path_escape", path)
            return
        if len(parts) > MAX_PATH_DEPTH:
            report.add("bad_path", f"{len(parts)} levels deep (cap {MAX_PATH_DEPTH})")
            return
        folded = [_fold(p) for p in parts]
        if any(p == ".git" or p.startswith(".git/") for p in folded) or folded[-1] in _GIT_META:
            report.add("git_internals", path)
            return
        if unicodedata.normalize("NFC", path) != path:
            report.add("unicode_path", f"{path!r} is not in NFC form")
        if _fold(path) in self.protected:
            report.add("test_patch_path", path)
        if self.classifier.classify(path) is FileKind.TEST:
            report.add("test_file", path)
        name = folded[-1]
        if name in _RUNNER_CONFIG:
            report.add("runner_config", path)
        if name in _STARTUP or name.endswith(".pth"):
            report.add("startup_hook", path)
        if any(p.endswith((".dist-info", ".egg-info")) for p in folded[:-1]) or name.endswith(
            (".dist-info", ".egg-info")
        ):
            report.add("distribution_metadata", path)
        if "__pycache__" in folded or name.endswith((".pyc", ".pyo", ".so", ".pyd")):
            report.add("compiled_code", path)
        if self.classifier.classify(path) is FileKind.CI:
            report.add("ci_config", path)
        module = name[:-3] if name.endswith(".py") else name
        if module in self.framework or any(p in self.framework for p in folded[:-1]):
            report.add("shadows_framework", path)

    def check_new_file(self, path: str, report: GuardReport) -> None:
        """Violations that only a newly created file can commit (shadowing an import)."""
        folded = [_fold(p) for p in path.split("/")]
        name = folded[-1]
        module = name[:-3] if name.endswith(".py") else None
        parent = "/".join(folded[:-1])
        root = parent + "/" if parent else ""
        if module and root in _IMPORT_ROOTS and module in sys.stdlib_module_names:
            report.add("shadows_stdlib", path)
        top = (module and root in _MODULE_ROOTS) or (
            name == "__init__.py"
            and len(folded) >= 2
            and ("/".join(folded[:-2]) + "/" if len(folded) > 2 else "") in _MODULE_ROOTS
        )
        if top and _fold(path) not in self._gold_created():
            # A new top-level module is found on sys.path before the installed packages
            # (``python -m pytest`` puts the work tree first): one named like a library the
            # tests assert with (hamcrest, dirty_equals) would judge them. The reference fix
            # adding the same one excuses it.
            report.add("new_top_level_module", path)
        if len(folded) >= 2 and name == "__init__.py":
            grand = "/".join(folded[:-2])
            if (grand + "/" if grand else "") in _IMPORT_ROOTS and folded[
                -2
            ] in sys.stdlib_module_names:
                report.add("shadows_stdlib", path)

    # ------------------------------------------------------------------ whole patch
    def check(self, patch: str | bytes) -> GuardReport:
        """All static guards on a candidate patch."""
        report = GuardReport()
        raw = patch.encode("utf-8", "surrogateescape") if isinstance(patch, str) else patch
        if not raw.strip():
            report.add("empty_patch", "the patch is empty")
            return report
        if len(raw) > self.limits.max_bytes:
            report.add("too_large", f"{len(raw)} bytes (cap {self.limits.max_bytes})")
            return report
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            report.add("not_utf8", "the patch is not valid UTF-8")
            return report
        try:
            files = parse_diff(text)
        except DiffParseError as exc:
            report.add("malformed_diff", str(exc))
            return report
        try:
            PatchSet(text)
        except (UnidiffParseError, ValueError, IndexError) as exc:
            report.add("malformed_diff", f"second parser: {exc}")
            return report
        if len(files) > self.limits.max_files:
            report.add("too_many_files", f"{len(files)} files (cap {self.limits.max_files})")
        hunks = sum(len(f.hunks) for f in files)
        if hunks > self.limits.max_hunks:
            report.add("too_many_hunks", f"{hunks} hunks (cap {self.limits.max_hunks})")
        seen: set[str] = set()
        for fp in files:
            self._check_file(fp, report, seen)
        report.files = sorted(seen)
        return report

    def _check_file(self, fp: FilePatch, report: GuardReport, seen: set[str]) -> None:
        paths = {p for p in (fp.old_path, fp.new_path, fp.header_old, fp.header_new) if p}
        if not paths:
            report.add("bad_path", "a file section names no path")
            return
        for raw in fp.raw_names:
            # A traditional header's names as written: git strips a leading component
            # ("--- ../x" changes x, "--- /x" changes x), the guards do not look past it.
            if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
                report.add("absolute_path", raw)
            elif ".." in raw.split("/"):
                report.add("path_escape", raw)
        for p in sorted(paths):
            self.check_path(p, report)
            folded = _fold(p)
            if folded in {_fold(s) for s in seen} and p not in seen:
                report.add("case_collision", p)
            seen.add(p)
        if fp.new_path and (fp.old_path is None or fp.may_create):
            # may_create: a traditional hunk from -0,0 creates the file when it is missing.
            self.check_new_file(fp.new_path, report)
        if fp.is_binary:
            report.add("binary_patch", fp.path)
        for mode in (fp.old_mode, fp.new_mode):
            if mode is None:
                continue
            if mode == "120000":
                report.add("symlink", fp.path)
            elif mode == "160000":
                report.add("submodule", fp.path)
            elif mode not in _ALLOWED_MODES:
                report.add("bad_mode", f"{fp.path}: mode {mode}")
        if fp.is_copy:
            report.add("copy", fp.path)
        name = fp.path.rsplit("/", 1)[-1].lower()
        if name in ("setup.cfg", "pyproject.toml"):
            # An early, textual look at the lines the patch changes; the verdict on pytest's
            # settings is the parsed comparison after applying (``runner_settings_changes``),
            # so context lines (a ruff table beside pytest's) refuse nothing here.
            for hunk in fp.hunks:
                body = b"".join(
                    line for tag, line in hunk.lines if tag in (_ADDED, _REMOVED)
                ).decode("utf-8", "replace")
                if _PYTEST_SETTING.search(body):
                    report.add("runner_config", f"{fp.path}: a hunk changes pytest settings")
                    break


def protected_paths(test_patch: str) -> set[str]:
    """Every path a test patch touches (both sides of renames); empty if it does not parse."""
    out: set[str] = set()
    try:
        for fp in parse_diff(test_patch):
            out |= {p for p in (fp.old_path, fp.new_path) if p}
    except DiffParseError:
        return set()
    return out
