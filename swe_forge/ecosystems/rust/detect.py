"""What Rust's files are called: ``Cargo.toml`` at the root; every ``.rs`` file under
``tests/`` is an integration test (read by the miner's classifier without loading the
adapter)."""

from __future__ import annotations

from swe_forge.ecosystems.naming import Naming

#: The file at the root that makes a repository Rust's.
MARKER = "Cargo.toml"


def is_test_module(path: str) -> bool:
    """A ``.rs`` file in a ``tests`` directory: cargo builds each as a test target."""
    return path.endswith(".rs") and "tests" in path.split("/")[:-1]


NAMING = Naming(code_extensions=(".rs",), is_test_module=is_test_module)
