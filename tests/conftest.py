"""Shared fixtures: real git repositories built in temporary directories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swe_forge.git.writer import RepoWriter

START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


class RepoBuilder:
    """Builds a repository whose history is a series of merged PRs, with fixed dates."""

    def __init__(self, path: Path, owner: str = "acme") -> None:
        self.writer = RepoWriter.init(path)
        self.path = path
        self.owner = owner
        self._tick = 0

    def when(self) -> datetime:
        """The next commit's date (one hour after the previous one)."""
        self._tick += 1
        return START + timedelta(hours=self._tick)

    def apply(self, files: dict[str, str | bytes | None]) -> None:
        """Write (str/bytes) or delete (None) files in the work tree."""
        for rel, content in files.items():
            if content is None:
                self.writer.delete(rel)
            elif isinstance(content, bytes):
                self.writer.write_bytes(rel, content)
            else:
                self.writer.write_text(rel, content)

    def commit(self, files: dict[str, str | bytes | None], message: str = "Direct commit") -> str:
        """A commit straight on the current branch (not a PR)."""
        self.apply(files)
        return self.writer.commit(message, self.when())

    def pr(
        self,
        number: int,
        files: dict[str, str | bytes | None],
        title: str = "Fix a bug",
        body: str = "Something was wrong; now it is right.",
        *,
        squash: bool = False,
    ) -> str:
        """Open a branch from main, commit ``files`` and merge it as PR ``number``."""
        branch = f"pr-{number}"
        self.writer.create_branch(branch, "main", checkout=True)
        self.apply(files)
        self.writer.commit(f"work on {title}", self.when())
        self.writer.checkout("main")
        if squash:
            return self.writer.squash_pr(
                number, branch, title, body, when=self.when(), delete_branch=True
            )
        return self.writer.merge_pr(
            number, branch, title, body, when=self.when(), owner=self.owner, delete_branch=True
        )


MIT_TEXT = Path(__file__).resolve().parent.parent / "swe_forge" / "example" / "data" / "MIT.txt"
GPL_TEXT = Path(__file__).resolve().parent.parent / "swe_forge" / "example" / "data" / "GPL-3.0.txt"


@pytest.fixture
def make_repo(tmp_path: Path) -> Iterator[Callable[..., RepoBuilder]]:
    """A factory of repositories: ``make_repo("name")`` gives a builder with an MIT base commit."""
    counter = {"n": 0}

    def factory(
        name: str = "repo", *, license_text: str | None = None, owner: str = "acme"
    ) -> RepoBuilder:
        counter["n"] += 1
        builder = RepoBuilder(tmp_path / f"{name}-{counter['n']}", owner=owner)
        text = MIT_TEXT.read_text() if license_text is None else license_text
        builder.commit(
            {
                "LICENSE": text,
                "README.md": "# demo\n",
                "pkg/__init__.py": "",
                "pkg/core.py": "def add(a, b):\n    return a - b\n",
                "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n",
            },
            "Initial commit",
        )
        return builder

    yield factory
