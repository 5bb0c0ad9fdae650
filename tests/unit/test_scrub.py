"""The scrubbed one-commit checkout of a base commit: same tree, and a clear error (not a crash)
when the repository lacks an object of it (a shallow or partial clone)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge.errors import GitError
from swe_forge.git.repo import GitRepository
from swe_forge.git.scrub import scrubbed_checkout
from tests.conftest import RepoBuilder


def test_a_checkout_holds_the_base_tree_in_one_commit(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    builder = make_repo()
    head = builder.commit({"data/big.csv": "a,b\n1,2\n"})
    got = scrubbed_checkout(GitRepository(builder.path), head, tmp_path / "tree")
    assert (tmp_path / "tree" / "data" / "big.csv").read_text() == "a,b\n1,2\n"
    assert got.files >= 3


def test_an_object_the_clone_lacks_is_a_git_error_naming_the_file(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    # A snapshot without a large test data file (fetched mirrors leave them out) crashed
    # `images build` with libgit2's NotFoundError; it must fail that candidate only.
    builder = make_repo()
    head = builder.commit({"src/test/resources/big.csv": "x" * 1000 + "\n"})
    repo = GitRepository(builder.path)
    blob = repo._repo.revparse_single(f"{head}:src/test/resources/big.csv").id
    loose = builder.path / ".git" / "objects" / str(blob)[:2] / str(blob)[2:]
    loose.unlink()
    with pytest.raises(GitError, match=r"src/test/resources/big.csv at .* does not have"):
        scrubbed_checkout(GitRepository(builder.path), head, tmp_path / "tree")
