"""Mutants of a gold patch: small, semantically different variants of the lines it changes.

A task whose tests still pass on a mutant of the gold fix would pay 1.0 for that wrong fix.
The test-strength gate (admission) grades each mutant as a candidate patch through the
verifier; this package only *makes* the mutants, deterministically for a seed.

Interface (shared by the engine and the gate):

- :func:`changed_lines` reads a gold patch and gives, per source file, the 1-based line
  numbers the patch adds or changes in the NEW (gold-patched) file.
- :func:`generate` gets the gold-patched text of those files and gives at most ``limit``
  mutants, hunks covered round-robin first, in a deterministic order for ``seed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """One wrong variant of the gold-patched tree: exactly one file changed."""

    id: str  # stable: sha256 of (path, new_text)[:12]
    path: str  # repository-relative path of the mutated file
    line: int  # 1-based line of the change in the gold-patched file
    operator: str  # comparison, boundary, arithmetic, boolean, constant, negate,
    # remove_statement, return_default, swap_arguments, drop_else, slice
    description: str  # human-readable, e.g. "`>` -> `>=`"
    new_text: str  # the whole mutated file
    diff: str  # unified diff gold-patched file -> mutated file (a/ b/ paths, git-apply-able)

    def to_dict(self) -> dict[str, object]:
        """The record kept in ``audit.test_strength`` (no full text)."""
        return {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "operator": self.operator,
            "description": self.description,
            "diff": self.diff,
        }


def changed_lines(gold_patch: str) -> dict[str, set[int]]:
    """Per file of ``gold_patch``: the new-file line numbers it adds (``+`` lines)."""
    raise NotImplementedError  # the engine's branch implements this


def generate(
    language: str,
    files: Mapping[str, str],
    lines: Mapping[str, set[int]],
    *,
    seed: int,
    limit: int,
) -> list[Mutant]:
    """At most ``limit`` mutants of ``files`` restricted to ``lines`` (and, where that gives
    too few, the functions enclosing them). ``language`` is an ecosystem name: python, go,
    rust, js, java. Mutants equal to the original after normalisation are not returned.
    """
    raise NotImplementedError  # the engine's branch implements this
