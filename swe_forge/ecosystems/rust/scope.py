"""Which Rust tests a test patch defines or changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from swe_forge.ecosystems.rust.runner import _TEST_FN


@dataclass(frozen=True)
class RustScope:
    """The tests a test patch defines or changes: test functions its added lines declare or
    whose bodies it changes, and every test of a test file it creates."""

    names: frozenset[tuple[str, str]]  # (target file, function name)
    new_files: frozenset[str]

    def covers(self, test: str) -> bool:
        """Is ``test`` (``tests/x.rs::mod::name``) defined or changed by the test patch?"""
        file, _, name = test.partition("::")
        return file in self.new_files or (file, name.rsplit("::", 1)[-1]) in self.names


def _enclosing_fns(lines: list[str], index: int) -> list[str]:
    """The functions ``lines[index]`` is in, innermost first (itself when it declares one).

    By indentation, as rustfmt lays code out: a function encloses the line when every
    non-blank line from its declaration down to the line is indented deeper than it (its
    closing brace, at its own indentation, would end it)."""
    found: list[str] = []
    deepest = len(lines[index]) - len(lines[index].lstrip())
    m = _TEST_FN.match(lines[index])
    if m:
        found.append(m.group(1))
    for j in range(index - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = _TEST_FN.match(line)
        if m and indent < deepest:
            found.append(m.group(1))
        deepest = min(deepest, indent)
        if deepest == 0 and not m:
            break
    return found
