"""Classify a repository path as test, source, docs, CI, packaging or other.

The split of a PR into gold patch and test patch rests on this, so it matches whole path
components and whole file-name patterns, never substrings: ``pytest_plugin.py``,
``latest/`` and ``contest.py`` are source; ``tests/data/x.json`` and ``conftest.py`` are test.
"""

from __future__ import annotations

import fnmatch
import re
from enum import StrEnum
from functools import lru_cache

from swe_forge.config import ClassifyConfig


class FileKind(StrEnum):
    """What a changed file is, for the split and the filters."""

    TEST = "test"
    SOURCE = "source"
    DOCS = "docs"
    CI = "ci"
    PACKAGING = "packaging"
    TOOLING = "tooling"


#: File names (matched case-insensitively, whole name) that are test code wherever they are.
_TEST_FILE_PATTERNS = (
    "test_*.py",
    "*_test.py",
    "*_tests.py",
    "tests.py",
    "conftest.py",
    # Other ecosystems' test files (Go; JavaScript/TypeScript).
    "*_test.go",
    "*.test.js",
    "*.test.ts",
    "*.test.jsx",
    "*.test.tsx",
    "*.test.mjs",
    "*.test.cjs",
    "*.spec.js",
    "*.spec.ts",
    "*.spec.jsx",
    "*.spec.tsx",
    "*.spec.mjs",
    "*.spec.cjs",
)
#: JavaScript/TypeScript test modules by file name, as the JS adapter and its frameworks name
#: them: ``x.test.ts``, ``x.spec.js``, and Mocha's and Jasmine's ``x-test.js``, ``x_spec.mjs``,
#: ``x.tests.js``, ``test.js`` (``.d.ts`` declarations are not tests).
JS_TEST_NAME = re.compile(r"(^|[./_-])(test|spec)s?\.[cm]?[jt]sx?$", re.IGNORECASE)
#: JavaScript/TypeScript file extensions (any file of these under ``__tests__`` is a test module).
JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
#: Directory names of other ecosystems' test data and tests, at any depth (Go's ``testdata``).
_ECOSYSTEM_TEST_DIRS = ("testdata",)
#: Test-runner configuration files that only the tests use; held out with the tests.
_TEST_CONFIG_FILES = ("pytest.ini", "pytest.toml", ".pytest.toml")
#: Runner configuration outside test directories; held out with the tests.
_RUNNER_FILES = (
    "tox.ini",
    "noxfile.py",
    "pytest.ini",
    "conftest.py",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
)
#: File names of test *modules* (files that hold tests, not helpers or fixtures).
TEST_MODULE_PATTERNS = (
    "test_*.py",
    "*_test.py",
    "*_tests.py",
    "tests.py",
    *(p for p in _TEST_FILE_PATTERNS if not p.endswith(".py")),
    # Java test classes (under a test directory, e.g. src/test/java/; *IT are failsafe's).
    "*Test.java",
    "*Tests.java",
    "Test*.java",
    "*TestCase.java",
)
#: Top-level directories of static-typing tests (checked by mypy/pyright, held out like tests).
_TYPING_TEST_TOP = (
    "typing-examples",
    "typing_examples",
    "typesafety",
    "type-tests",
    "typing_tests",
)
#: Top-level directories of developer tooling: scripts, benchmarks, editor and agent settings.
_TOOLING_TOP = (
    "scripts",
    "script",
    "tools",
    "tasks",
    "bench",
    "benchmark",
    "benchmarks",
    "asv_bench",
    "downstream",
    "dev",
    "devtools",
    ".devcontainer",
    ".vscode",
    ".idea",
    ".claude",
    ".cursor",
    ".husky",
)
#: Extensions of code: a file at the repository root is source only with one of these.
_CODE_EXTENSIONS = (
    ".py",
    ".pyi",
    ".pyx",
    ".pxd",
    ".pxi",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".rs",
    ".go",
    ".js",
    ".ts",
    ".java",
)

_CI_TOP = (".github", ".circleci", ".gitlab", ".azure-pipelines", ".buildkite", ".ci")
_CI_FILES = (
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".appveyor.yml",
    "azure-pipelines.yml",
    "jenkinsfile",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    "codecov.yml",
    ".codecov.yml",
    ".cirrus.yml",
    ".mergify.yml",
    "renovate.json",
    ".readthedocs.yml",
    ".readthedocs.yaml",
    "readthedocs.yml",
    "readthedocs.yaml",
    ".azure-pipelines.yml",
    ".azure-pipelines.yaml",
    "mkdocs.yml",
    "mkdocs.yaml",
)
_PACKAGING_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "manifest.in",
    "tox.ini",
    "noxfile.py",
    "makefile",
    "poetry.lock",
    "pdm.lock",
    "uv.lock",
    "pipfile",
    "pipfile.lock",
    "environment.yml",
    "environment.yaml",
    ".gitignore",
    ".gitattributes",
    ".editorconfig",
    ".flake8",
    ".pylintrc",
    "pylintrc",
    "mypy.ini",
    ".coveragerc",
    "ruff.toml",
    ".ruff.toml",
    ".isort.cfg",
    ".mailmap",
    "dockerfile",
    ".dockerignore",
    "hatch_build.py",
    "build.py",
    "setup_build.py",
    "conftest.toml",
)
_PACKAGING_PATTERNS = ("requirements*.txt", "requirements*.in", "constraints*.txt")
#: Prose anywhere is documentation; ``.txt`` only at the top (package data is often .txt).
_DOC_EXTENSIONS = (".md", ".rst", ".adoc")
_DOC_NAME_PREFIXES = (
    "readme",
    "changelog",
    "changes",
    "history",
    "news",
    "authors",
    "contributors",
    "license",
    "licence",
    "copying",
    "notice",
    "code_of_conduct",
    "contributing",
    "security",
    "citation",
)


@lru_cache(maxsize=64)
def is_js_test_file(path: str) -> bool:
    """A JavaScript/TypeScript test file: named as one (:data:`JS_TEST_NAME`), or any JS/TS
    file under ``__tests__`` (Jest's default); never in ``node_modules`` nor a ``.d.ts``."""
    parts = path.split("/")
    name = parts[-1]
    if "node_modules" in parts[:-1] or not name.lower().endswith(JS_EXTS):
        return False
    if name.lower().endswith(".d.ts"):
        return False
    return bool(JS_TEST_NAME.search(name)) or "__tests__" in parts[:-1]


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns), re.IGNORECASE)


class PathClassifier:
    """Decides the :class:`FileKind` of a path; configured by :class:`ClassifyConfig`."""

    def __init__(self, config: ClassifyConfig) -> None:
        self._test_dirs = frozenset(d.lower() for d in config.test_dirs)
        self._top_test_dirs = frozenset(d.lower() for d in config.top_level_test_dirs)
        self._docs_dirs = frozenset(d.lower() for d in config.docs_dirs)
        self._test_files = _compile(_TEST_FILE_PATTERNS)
        self._test_modules = _compile(TEST_MODULE_PATTERNS)
        self._packaging = _compile(_PACKAGING_PATTERNS)

    def is_test(self, path: str) -> bool:
        """True for test code, test data and test-runner config (the held-out side)."""
        return self.classify(path) is FileKind.TEST

    def is_harness_owned(self, path: str) -> bool:
        """True for what a candidate may never touch and the harness applies itself: tests,
        CI configuration and test-runner configuration (``tox.ini``, ``noxfile.py``)."""
        kind = self.classify(path)
        name = path.rsplit("/", 1)[-1].lower()
        return kind in (FileKind.TEST, FileKind.CI) or name in _RUNNER_FILES

    def is_test_module(self, path: str) -> bool:
        """True for a test path whose file name says it holds tests (``test_*.py``, ...).

        JavaScript/TypeScript follows the JS adapter's rule (:func:`is_js_test_file`), so a
        Mocha suite's ``test/clock-test.js`` is a test module as the adapter runs it."""
        name = path.rsplit("/", 1)[-1]
        if name.endswith(".rs") and "tests" in path.split("/")[:-1]:
            return self.is_test(path)  # Rust: every file under tests/ is an integration test
        return self.is_test(path) and (
            bool(self._test_modules.fullmatch(name)) or is_js_test_file(path)
        )

    def classify(self, path: str) -> FileKind:
        """Classify one repository-relative path (forward slashes)."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return FileKind.SOURCE
        name = parts[-1].lower()
        dirs = [p.lower() for p in parts[:-1]]
        if any(d in self._test_dirs or d in _ECOSYSTEM_TEST_DIRS for d in dirs) or (
            dirs and dirs[0] in self._top_test_dirs
        ):
            return FileKind.TEST
        if dirs and dirs[0] in _TYPING_TEST_TOP:
            return FileKind.TEST
        if (
            self._test_files.fullmatch(name)
            or name in _TEST_CONFIG_FILES
            or JS_TEST_NAME.search(name)
        ):
            return FileKind.TEST
        if dirs and dirs[0] in _CI_TOP:
            # Prose under .github (CONTRIBUTING.md, issue templates) is documentation.
            return FileKind.DOCS if name.endswith(_DOC_EXTENSIONS) else FileKind.CI
        if not dirs and name in _CI_FILES:
            return FileKind.CI
        if dirs and dirs[0] in self._docs_dirs:
            return FileKind.DOCS
        if dirs and dirs[0] in _TOOLING_TOP:
            return FileKind.TOOLING
        if not dirs and (name in _PACKAGING_FILES or self._packaging.fullmatch(name)):
            return FileKind.PACKAGING
        if dirs and dirs[0] == "requirements":
            return FileKind.PACKAGING
        if name.endswith(_DOC_EXTENSIONS) or (not dirs and name.endswith(".txt")):
            return FileKind.DOCS
        stem = name.split(".", 1)[0]
        if not dirs and stem.split("-", 1)[0] in _DOC_NAME_PREFIXES:
            return FileKind.DOCS
        if not dirs and not name.endswith(_CODE_EXTENSIONS):
            # Configuration at the root (tox.toml, .python-version, package.json, ...).
            return FileKind.PACKAGING
        return FileKind.SOURCE
