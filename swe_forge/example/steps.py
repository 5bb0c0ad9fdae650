"""The example history's building blocks: edit records, commits, pull requests, people.

Data only; :mod:`swe_forge.example.history` holds the steps themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from swe_forge.git.writer import Identity

# ---------------------------------------------------------------------------- edit records


@dataclass(frozen=True)
class Write:
    """Create or overwrite a file."""

    path: str
    content: str | bytes


@dataclass(frozen=True)
class Replace:
    """Replace the one occurrence of ``old`` in a text file by ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Append:
    """Append ``text`` to a text file."""

    path: str
    text: str


@dataclass(frozen=True)
class Delete:
    """Delete a file."""

    path: str


Edit = Write | Replace | Append | Delete


@dataclass(frozen=True)
class Commit:
    """One commit on a PR branch (or on main, for a direct commit)."""

    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Person:
    """A contributor: their git identity and GitHub login."""

    identity: Identity
    login: str


Kind = Literal[
    "bugfix",
    "feature",
    "docs",
    "tests",
    "ci",
    "already_passing",
    "flaky",
    "binary",
    "no_tests",
    "after_license_change",
]


@dataclass(frozen=True)
class PullRequest:
    """A pull request merged into main with a merge commit or a squash.

    ``based_on``: the branch starts from main as it was right after PR ``based_on`` was merged
    (0: the initial commit); None starts it from the tip of main, the usual case.
    """

    number: int
    kind: Kind
    title: str
    body: str
    branch: str
    author: Person
    strategy: Literal["merge", "squash"]
    commits: tuple[Commit, ...]
    based_on: int | None = None


@dataclass(frozen=True)
class DirectCommit:
    """A commit pushed straight to main by a maintainer (not a PR)."""

    message: str
    edits: tuple[Edit, ...]
    author: Person


Step = PullRequest | DirectCommit

# ---------------------------------------------------------------------------- people

OWNER = "swe-forge"
NAME = "textkit"

MAINTAINER = Person(Identity("Maya Okafor", "maya.okafor@textkit.example.org"), OWNER)
LIN = Person(Identity("Lin Chen", "lin.chen@example.com"), "linchen")
PIOTR = Person(Identity("Piotr Kowalski", "piotr.kowalski@example.net"), "pkowalski")
AMARA = Person(Identity("Amara Nwosu", "amara.nwosu@example.org"), "amaranw")
JONAS = Person(Identity("Jonas Berg", "jonas.berg@example.com"), "jberg")
