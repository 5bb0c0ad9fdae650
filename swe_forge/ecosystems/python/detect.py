"""What Python's files are called: its packaging and runner files at the root, pytest's test
modules and configuration, static-typing test trees (read by the miner's classifier without
loading the adapter)."""

from __future__ import annotations

from swe_forge.ecosystems.naming import Naming

#: Files that make a repository Python's even when it holds other languages' files.
PYTHON_MARKERS = ("setup.py", "pyproject.toml", "setup.cfg", "tox.ini", "requirements.txt")

#: Case files a data-driven test module reads (see :func:`data_test_dirs`).
TEST_DATA = (
    "*.json",
    "*.jsonl",
    "*.yaml",
    "*.yml",
    "*.toml",
    "*.txt",
    "*.csv",
    "*.tsv",
    "*.xml",
    "*.html",
    "*.htm",
    "*.ini",
    "*.cfg",
    "*.md",
    "*.rst",
    "*.sql",
    "*.in",
    "*.out",
)

NAMING = Naming(
    test_files=("test_*.py", "*_test.py", "*_tests.py", "tests.py", "conftest.py"),
    test_modules=("test_*.py", "*_test.py", "*_tests.py", "tests.py"),
    # Static-typing tests (checked by mypy/pyright), held out like tests.
    test_tops=("typing-examples", "typing_examples", "typesafety", "type-tests", "typing_tests"),
    test_config_files=("pytest.ini", "pytest.toml", ".pytest.toml"),
    runner_files=(
        "tox.ini",
        "noxfile.py",
        "pytest.ini",
        "conftest.py",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
    ),
    code_extensions=(".py", ".pyi", ".pyx", ".pxd", ".pxi"),
    # Case files of data-driven tests (a module under tests/ loads every case of a file).
    test_data=TEST_DATA,
)
