"""What Go's files are called: ``go.mod`` at the root, tests in ``*_test.go``, test data in
``testdata/`` (read by the miner's classifier without loading the adapter)."""

from __future__ import annotations

from swe_forge.ecosystems.naming import Naming

#: The file at the root that makes a repository Go's.
MARKER = "go.mod"

NAMING = Naming(
    test_files=("*_test.go",),
    test_modules=("*_test.go",),
    test_dirs=("testdata",),
    code_extensions=(".go",),
)
