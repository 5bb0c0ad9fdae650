"""Classify a repository path as test, source, docs, CI, packaging or other.

The split of a PR into gold patch and test patch rests on this, so it matches whole path
components and whole file-name patterns, never substrings: ``pytest_plugin.py``,
``latest/`` and ``contest.py`` are source; ``tests/data/x.json`` and ``conftest.py`` are test.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from enum import StrEnum

from swe_forge.config import ClassifyConfig
from swe_forge.ecosystems.naming import namings


class FileKind(StrEnum):
    """What a changed file is, for the split and the filters."""

    TEST = "test"
    SOURCE = "source"
    DOCS = "docs"
    CI = "ci"
    PACKAGING = "packaging"
    TOOLING = "tooling"


def _joined(field: str) -> tuple[str, ...]:
    """One field of every ecosystem's :class:`~swe_forge.ecosystems.naming.Naming`, in order."""
    return tuple(x for naming in namings() for x in getattr(naming, field))


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
#: Extensions of code of languages no adapter reads yet (C and C++ sources of extensions and
#: bindings): a file at the root is source only with one of these or an ecosystem's.
_OTHER_CODE_EXTENSIONS = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp")

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


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns), re.IGNORECASE)


class PathClassifier:
    """Decides the :class:`FileKind` of a path; configured by :class:`ClassifyConfig`."""

    def __init__(self, config: ClassifyConfig) -> None:
        self._test_dirs = frozenset(d.lower() for d in config.test_dirs)
        self._top_test_dirs = frozenset(d.lower() for d in config.top_level_test_dirs)
        self._docs_dirs = frozenset(d.lower() for d in config.docs_dirs)
        # What each ecosystem's adapter says its tests are called (ecosystems/<name>/detect.py).
        self._namings = namings()
        self._ecosystem_test_dirs = frozenset(_joined("test_dirs"))
        self._typing_tops = frozenset(_joined("test_tops"))
        self._test_config_files = frozenset(_joined("test_config_files"))
        self._runner_files = frozenset(_joined("runner_files"))
        self._code_extensions = (*_joined("code_extensions"), *_OTHER_CODE_EXTENSIONS)
        self._test_files = _compile(_joined("test_files"))
        self._test_modules = _compile(_joined("test_modules"))
        # Per ecosystem: its code's extensions and the names of the test data its tests read.
        self._test_data = [
            (tuple(n.code_extensions), _compile(n.test_data)) for n in self._namings if n.test_data
        ]
        self._packaging = _compile(_PACKAGING_PATTERNS)

    def is_test(self, path: str) -> bool:
        """True for test code, test data and test-runner config (the held-out side)."""
        return self.classify(path) is FileKind.TEST

    def is_harness_owned(self, path: str) -> bool:
        """True for what a candidate may never touch and the harness applies itself: tests,
        CI configuration and test-runner configuration (``tox.ini``, ``noxfile.py``)."""
        kind = self.classify(path)
        name = path.rsplit("/", 1)[-1].lower()
        return kind in (FileKind.TEST, FileKind.CI) or name in self._runner_files

    def is_test_module(self, path: str) -> bool:
        """True for a test path whose file name says it holds tests (``test_*.py``, ...), or
        that an ecosystem's own rule calls one: a Mocha suite's ``test/clock-test.js`` as the
        JS adapter runs it, every ``.rs`` file under Rust's ``tests/``."""
        if not self.is_test(path):
            return False
        name = path.rsplit("/", 1)[-1]
        return bool(self._test_modules.fullmatch(name)) or any(
            n.is_test_module(path) for n in self._namings
        )

    def is_test_data(self, path: str, source_paths: Iterable[str]) -> bool:
        """True for a test path that is the data of data-driven tests (``tests/cases.json``)
        in an ecosystem whose code the fix (``source_paths``) changes: its test modules read
        the file, so a test side that changes only such files still has tests to run."""
        if not self.is_test(path) or self._runner(path):
            return False
        name = path.rsplit("/", 1)[-1]
        sources = [p.lower() for p in source_paths]
        return any(
            names.fullmatch(name) and any(p.endswith(exts) for p in sources)
            for exts, names in self._test_data
        )

    def _runner(self, path: str) -> bool:
        name = path.rsplit("/", 1)[-1].lower()
        return name in self._runner_files or name in self._test_config_files

    def classify(self, path: str) -> FileKind:
        """Classify one repository-relative path (forward slashes)."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return FileKind.SOURCE
        name = parts[-1].lower()
        dirs = [p.lower() for p in parts[:-1]]
        if any(d in self._test_dirs or d in self._ecosystem_test_dirs for d in dirs) or (
            dirs and dirs[0] in self._top_test_dirs
        ):
            return FileKind.TEST
        if dirs and dirs[0] in self._typing_tops:
            return FileKind.TEST
        if (
            self._test_files.fullmatch(name)
            or name in self._test_config_files
            or any(n.is_test_name(name) for n in self._namings)
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
        if not dirs and not name.endswith(self._code_extensions):
            # Configuration at the root (tox.toml, .python-version, package.json, ...).
            return FileKind.PACKAGING
        return FileKind.SOURCE
