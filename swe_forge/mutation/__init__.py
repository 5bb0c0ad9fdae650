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

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swe_forge.mutation.select import FileMutations


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
    """Per file of ``gold_patch``: the new-file line numbers it adds (``+`` lines).

    Added files are included (every line), deleted files are not; a patch that does not parse
    gives ``{}``. A file whose hunks only remove lines maps to an empty set.
    """
    from swe_forge.ecosystems.base import ADDED, REMOVED, parse_patch

    out: dict[str, set[int]] = {}
    for fp in parse_patch(gold_patch):
        if not fp.new_path or fp.is_binary:
            continue
        lines = out.setdefault(fp.new_path, set())
        for hunk in fp.hunks:
            number = hunk.new_start
            for tag, _body in hunk.lines:
                if tag == REMOVED:
                    continue
                if tag == ADDED:
                    lines.add(number)
                number += 1
    return out


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

    Every hunk of changed lines (across files, sorted by path) gets a mutant before any gets
    a second; then the enclosing functions' other lines. The same inputs and ``seed`` give
    the same list; the seed only orders candidates of one line among themselves. Files that
    do not parse, or are not sources of ``language``, give none; the text is only parsed
    (``ast``, tree-sitter), never compiled or run. A UsageError for an unknown language.
    """
    from swe_forge.mutation.select import choose

    mutate = _mutator(language)
    found: list[FileMutations] = []
    for path in sorted(files):
        wanted = lines.get(path)
        if not wanted or not _is_source(language, path):
            continue
        try:
            source = files[path].encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            continue  # a lone surrogate no decoder made: not text from a file
        job = mutate(path, source, set(wanted))
        if job is not None:
            found.append(job)
    return choose(found, seed=seed, limit=max(limit, 0))


#: The source files each ecosystem mutates, by extension.
_EXTENSIONS = {
    "python": (".py",),
    "go": (".go",),
    "rust": (".rs",),
    "js": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
    "java": (".java",),
}


def _is_source(language: str, path: str) -> bool:
    return path.endswith(_EXTENSIONS.get(language, ())) and not path.endswith(".d.ts")


def _mutator(language: str) -> Callable[[str, bytes, set[int]], FileMutations | None]:
    """The candidate finder of an ecosystem (a UsageError for an unknown one)."""
    if language == "python":
        from swe_forge.mutation import python

        return python.mutations
    if language in ("go", "rust", "js", "java"):
        from swe_forge.mutation import treesitter

        return functools.partial(treesitter.mutations, language)
    from swe_forge.errors import UsageError

    raise UsageError(f"no mutation engine for {language!r}", hint=", ".join(sorted(_EXTENSIONS)))
