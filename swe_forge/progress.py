"""Progress reporting without printing: stages talk to a reporter, the CLI renders it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Reporter(Protocol):
    """What a long-running stage tells the outside world about its progress."""

    def start(self, description: str, total: int | None) -> None:
        """A new unit of work begins (e.g. one repository's commits)."""

    def advance(self, n: int = 1) -> None:
        """``n`` more items of the current unit are done."""

    def note(self, message: str) -> None:
        """A line worth showing to the user (a warning, a per-repository result)."""

    def finish(self) -> None:
        """The current unit is done."""


class NullReporter:
    """A reporter that shows nothing (library use and tests)."""

    def start(self, description: str, total: int | None) -> None:
        """Ignore."""

    def advance(self, n: int = 1) -> None:
        """Ignore."""

    def note(self, message: str) -> None:
        """Ignore."""

    def finish(self) -> None:
        """Ignore."""


class NoteReporter(NullReporter):
    """Passes notes to a callback and shows no bar: a step inside another stage's bar (the
    images one candidate of an admission run pulls)."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self._note = note

    def note(self, message: str) -> None:
        """Pass on."""
        self._note(message)


class RecordingReporter(NullReporter):
    """A reporter that keeps the notes (for tests)."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.advanced = 0

    def advance(self, n: int = 1) -> None:
        """Count."""
        self.advanced += n

    def note(self, message: str) -> None:
        """Keep."""
        self.notes.append(message)
