"""What Rust's files are called: ``Cargo.toml`` at the root; every ``.rs`` file under
``tests/`` is an integration test, and a ``tests.rs`` module (``src/tests.rs``,
``src/map/tests.rs``) holds a library's unit tests (read by the miner's classifier without
loading the adapter)."""

from __future__ import annotations

from swe_forge.ecosystems.naming import Naming

#: The file at the root that makes a repository Rust's.
MARKER = "Cargo.toml"


def is_test_module(path: str) -> bool:
    """A ``.rs`` file in a ``tests`` directory (cargo builds each as a test target, or, under
    ``src/``, the library compiles it as a unit-test module), or a ``tests.rs`` module (by
    convention the library's ``#[cfg(test)] mod tests;``)."""
    parts = path.split("/")
    return path.endswith(".rs") and ("tests" in parts[:-1] or parts[-1] == "tests.rs")


#: A whole file of unit tests, wherever it is: ``#[cfg(test)] mod tests;`` is the convention
#: (the Rust book's); held out with the tests, not counted as source.
TEST_FILES = ("tests.rs",)


NAMING = Naming(code_extensions=(".rs",), test_files=TEST_FILES, is_test_module=is_test_module)
