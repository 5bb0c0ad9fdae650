"""How each ecosystem names its tests: what the miner's classifier asks the adapters.

Each adapter package's ``detect`` module declares a :class:`Naming` (data and two small
rules, nothing that loads the adapter); :func:`namings` gathers them in the registry's order,
and :class:`swe_forge.mining.classify.PathClassifier` builds its test-file rules from them, so
a new language's test files are its adapter's to declare.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

#: Ecosystems in detection order (the first whose marker file is at the root wins).
ECOSYSTEM_NAMES = ("go", "rust", "java", "js", "python")


def _never(path: str) -> bool:
    return False


@dataclass(frozen=True)
class Naming:
    """What an ecosystem's file names and directories say about tests (globs match whole
    file names, case-insensitively; directory names match whole path components)."""

    #: File names that are test code wherever they are (``*_test.go``, ``test_*.py``).
    test_files: tuple[str, ...] = ()
    #: File names of test *modules*: files that hold tests, not helpers (``*Test.java``).
    test_modules: tuple[str, ...] = ()
    #: Directory names of tests or test data at any depth (Go's ``testdata``).
    test_dirs: tuple[str, ...] = ()
    #: Top-level directories held out like tests (Python's static-typing tests).
    test_tops: tuple[str, ...] = ()
    #: Test-runner configuration that only the tests use, held out with them.
    test_config_files: tuple[str, ...] = ()
    #: Runner configuration outside test directories that a candidate may never touch.
    runner_files: tuple[str, ...] = ()
    #: Extensions of the ecosystem's code (a file at the root is source only with one).
    code_extensions: tuple[str, ...] = ()
    #: A file name that is a test by a rule globs cannot say (JavaScript's ``x-test.js``).
    is_test_name: Callable[[str], bool] = _never
    #: A test path that is a test module by the ecosystem's own rule (Rust: every file
    #: under ``tests/``; JavaScript: its runner's rule).
    is_test_module: Callable[[str], bool] = _never
    #: File names of test *data* the ecosystem's test modules read (a JSON or YAML case file
    #: under ``tests/``): a test side that changes only such files still drives tests, those
    #: of its test directory, when the fix is in this ecosystem's code.
    test_data: tuple[str, ...] = ()


@cache
def namings() -> tuple[Naming, ...]:
    """Every ecosystem's :class:`Naming`, in :data:`ECOSYSTEM_NAMES` order."""
    return tuple(
        importlib.import_module(f"swe_forge.ecosystems.{name}.detect").NAMING
        for name in ECOSYSTEM_NAMES
    )
