"""Which Go tests a test patch defines or changes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: A subtest named by its place: `TestBool/#05` (no name given), `TestX/case#01` (a repeat).
_BY_INDEX = re.compile(r"#\d+(?:/|$)")


def package_dir(path: str) -> str:
    """The package directory of a file (``.`` at the root)."""
    return path.rsplit("/", 1)[0] if "/" in path else "."


@dataclass(frozen=True)
class GoScope:
    """The tests a test patch defines or changes: top-level test functions its added lines
    declare, and every test of a test file it creates."""

    names: frozenset[tuple[str, str]]  # (package dir, TestName)
    new_dirs: frozenset[str]
    #: The tests whose own function the patch adds or changes (the rest of ``names`` it
    #: reaches through a changed table or helper). None: all of ``names``.
    direct: frozenset[tuple[str, str]] | None = None

    def covers(self, test: str) -> bool:
        """Is ``test`` (``dir::TestName/sub``) defined or changed by the test patch?"""
        pkg, _, name = test.partition("::")
        top = name.split("/", 1)[0]
        return (pkg, top) in self.names

    def covers_directly(self, test: str) -> bool:
        """Does the test patch add or change ``test``'s own function? Never for a subtest
        named by its index (``TestBool/#05``): rows the patch inserts renumber those after
        them, so the same id at the base is another case, and a pass there says nothing of
        this one (first contact, spf13/cast: 1,180 of 1,666 FAIL_TO_PASS were such ids that
        passed at the base)."""
        pkg, _, name = test.partition("::")
        top, _, sub = name.partition("/")
        if sub and _BY_INDEX.search(sub):
            return False
        return (pkg, top) in (self.names if self.direct is None else self.direct)
