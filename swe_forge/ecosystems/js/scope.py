"""Which JS tests a test patch defines or changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class JsScope:
    """The tests a test patch defines or changes: every test of the test files it touches
    (JavaScript test titles are often computed, so the file is the unit)."""

    files: frozenset[str]

    def covers(self, test: str) -> bool:
        """Is ``test`` (``file::title``) in a file the test patch touches?"""
        return test.split("::", 1)[0] in self.files
