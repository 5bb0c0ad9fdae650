"""What every language's mutator shares: candidate edits, their order, the mutants' records.

A language module (``python.py``, ``treesitter.py``) only *proposes* candidates: one edit of a
byte span of the file, at a line, by an operator. This module orders them (every hunk of
changed lines first, round-robin, then the functions that enclose them), applies them one at
a time, lets the language check the result (it must parse; it must differ from the original
after normalisation), and writes each survivor as a :class:`~swe_forge.mutation.Mutant` with a
diff that ``git apply`` accepts.
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from swe_forge.mutation import Mutant

#: Bytes of a file the mutators read at most: a larger file gives no mutants (its text comes
#: from a mined repository, every mutant costs a parse of the whole file, and a source file
#: over a megabyte is generated code, not what a fix is about).
MAX_SOURCE_BYTES = 1 << 20

#: Candidates tried per mutant asked for, at most (beyond, a file full of candidates that do
#: not parse or are equivalent stops costing parses).
ATTEMPTS_PER_MUTANT = 20

#: Lines of one enclosing function the second tier reads at most (beyond, it is skipped).
MAX_FUNCTION_LINES = 2000


@dataclass(frozen=True)
class Candidate:
    """One proposed mutation: replace ``source[start:end]`` (bytes) with ``replacement``."""

    line: int  # 1-based line of the change
    col: int  # byte column of the change on that line (for the sort)
    operator: str
    description: str
    start: int
    end: int
    replacement: bytes

    def apply(self, source: bytes) -> bytes:
        """The mutated source."""
        return source[: self.start] + self.replacement + source[self.end :]

    @property
    def key(self) -> tuple[int, int, str, int, int, bytes]:
        """The deterministic sort key (line, column, operator, then the edit itself)."""
        return (self.line, self.col, self.operator, self.start, self.end, self.replacement)


class Lines:
    """Byte offsets of a source's lines (1-based), split at ``\\n`` only, as git counts."""

    def __init__(self, source: bytes) -> None:
        self.starts = [0]
        index = source.find(b"\n")
        while index != -1:
            self.starts.append(index + 1)
            index = source.find(b"\n", index + 1)
        self.size = len(source)

    def offset(self, line: int, col: int) -> int:
        """The byte offset of (1-based line, byte column)."""
        if line < 1 or line > len(self.starts):
            return self.size
        return min(self.starts[line - 1] + col, self.size)

    def line_of(self, offset: int) -> int:
        """The 1-based line of a byte offset."""
        return bisect.bisect_right(self.starts, offset)

    def span(self, line: int) -> tuple[int, int]:
        """(start, end) of a line, its ``\\n`` included."""
        start = self.offset(line, 0)
        end = self.starts[line] if line < len(self.starts) else self.size
        return start, end


class LineSet:
    """A set of 1-based lines that answers "does [first, last] meet it?" in O(log n)."""

    def __init__(self, lines: Iterable[int]) -> None:
        self.sorted = sorted(set(lines))
        self.members = set(self.sorted)

    def __contains__(self, line: object) -> bool:
        return line in self.members

    def __bool__(self) -> bool:
        return bool(self.sorted)

    def meets(self, first: int, last: int) -> bool:
        """Does any line in ``first..last`` belong to the set?"""
        index = bisect.bisect_left(self.sorted, first)
        return index < len(self.sorted) and self.sorted[index] <= last


#: Unchanged lines between two changes that git's default diff (3 lines of context on each
#: side) still shows in one hunk.
HUNK_GAP = 6


def hunks(lines: Iterable[int]) -> list[tuple[int, int]]:
    """The changed lines grouped as git's hunks group them, as (first, last) in order: two
    changes with at most :data:`HUNK_GAP` unchanged lines between them are one hunk."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        if out and line - out[-1][1] - 1 <= HUNK_GAP:
            out[-1] = (out[-1][0], line)
        else:
            out.append((line, line))
    return out


def group_of(line: int, groups: Sequence[tuple[int, int]]) -> int:
    """Index of the innermost sorted (first, last) group that holds ``line`` (groups may
    nest, as functions do), else the nearest one starting before it."""
    index = bisect.bisect_right([first for first, _ in groups], line) - 1
    for candidate in range(index, -1, -1):
        if groups[candidate][0] <= line <= groups[candidate][1]:
            return candidate
    return max(index, 0)


def tiers(
    changed: LineSet,
    functions: Iterable[tuple[int, int]],
    first: Sequence[Candidate],
    find: Callable[[LineSet], Iterable[Candidate]],
) -> list[list[list[Candidate]]]:
    """The candidates of one file as tiers of groups: tier 1 ``first`` (on the changed
    lines) grouped by hunk; tier 2 what ``find`` gives on the other lines of the innermost
    function (of ``functions``' line spans) around each changed line, grouped by function."""
    spans_of = list(functions)
    around: set[tuple[int, int]] = set()
    for line in changed.sorted:
        spans = [s for s in spans_of if s[0] <= line <= s[1]]
        if spans:
            around.add(min(spans, key=lambda s: s[1] - s[0]))
    spans = sorted(s for s in around if s[1] - s[0] < MAX_FUNCTION_LINES)
    wider = LineSet(n for s in spans for n in range(s[0], s[1] + 1) if n not in changed)
    second = [c for c in find(wider) if c.line in wider] if wider else []
    groups = hunks(changed.sorted)
    tier1: list[list[Candidate]] = [[] for _ in groups]
    for c in first:
        tier1[group_of(c.line, groups)].append(c)
    tier2: list[list[Candidate]] = [[] for _ in spans]
    for c in second:
        tier2[group_of(c.line, spans)].append(c)
    return [[g for g in tier1 if g], [g for g in tier2 if g]]


def _interleave(queues: Sequence[Sequence[Candidate]]) -> Iterator[tuple[int, Candidate]]:
    """(queue index, candidate): the first of every queue, then the second of every queue..."""
    depth = 0
    while True:
        emitted = False
        for index, queue in enumerate(queues):
            if depth < len(queue):
                emitted = True
                yield index, queue[depth]
        if not emitted:
            return
        depth += 1


def round_robin(
    groups: Sequence[list[Candidate]], rng: random.Random
) -> Iterator[tuple[list[Candidate], Candidate]]:
    """Candidates one group (hunk) at a time in turn, so every hunk is covered before any
    gets a second; within a hunk, one line at a time in turn. The order is the sort order;
    ``rng`` only shuffles the candidates of one line among themselves."""
    queues = []
    for group in groups:
        by_line: dict[int, list[Candidate]] = {}
        for candidate in sorted(group, key=lambda c: c.key):
            by_line.setdefault(candidate.line, []).append(candidate)
        for line in sorted(by_line):
            rng.shuffle(by_line[line])
        queues.append([c for _, c in _interleave([by_line[n] for n in sorted(by_line)])])
    for index, candidate in _interleave(queues):
        yield groups[index], candidate


def mutant_id(path: str, new_text: str) -> str:
    """The stable id of a mutant: sha256 of path NUL text, 12 hex digits."""
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape"))
    digest.update(b"\0")
    digest.update(new_text.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:12]


def _split_keep(text: str) -> list[str]:
    # str.splitlines also splits at \x0c, \x1c, U+2028, ...: git does not, and a diff that
    # counts lines differently does not apply.
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    """A git-style unified diff of one file (``a/PATH`` ``b/PATH``) that ``git apply`` takes,
    with the ``\\ No newline at end of file`` marker where a side has no final newline."""
    body = []
    for row in difflib.unified_diff(
        _split_keep(old), _split_keep(new), f"a/{path}", f"b/{path}", lineterm="\n"
    ):
        if row.endswith("\n"):
            body.append(row)
        else:
            body.append(row + "\n\\ No newline at end of file\n")
    if not body:
        return ""
    return f"diff --git a/{path} b/{path}\n" + "".join(body)


@dataclass
class FileMutations:
    """What a language module found in one file: its candidates by tier (changed lines, then
    the functions enclosing them), each tier grouped by hunk, and how to check a result."""

    path: str
    source: bytes
    tiers: list[list[list[Candidate]]]
    #: The normal form of a source mutated by a candidate (an AST dump, the text), None when
    #: it must not be kept (it does not parse, or it is the original's).
    accept: Callable[[bytes, Candidate], object | None]
    #: The original's normal form, when ``accept`` does not refuse it itself.
    original: object


def choose(files: Sequence[FileMutations], *, seed: int, limit: int) -> list[Mutant]:
    """At most ``limit`` mutants: tier by tier, round-robin over every file's hunks (sorted by
    path, then line), applied one at a time, kept when the language accepts the result and
    its normal form is new (not the original's, not an earlier mutant's)."""
    rng = random.Random(seed)
    ordered = sorted(files, key=lambda f: f.path)
    seen: dict[str, set[object]] = {f.path: {f.original} for f in ordered}
    out: list[Mutant] = []
    attempts = limit * ATTEMPTS_PER_MUTANT
    depth = max((len(f.tiers) for f in ordered), default=0)
    for tier in range(depth):
        owners: list[FileMutations] = []
        groups: list[list[Candidate]] = []
        for f in ordered:
            for group in f.tiers[tier] if tier < len(f.tiers) else []:
                owners.append(f)
                groups.append(group)
        index = {id(group): owner for group, owner in zip(groups, owners, strict=True)}
        for group, candidate in round_robin(groups, rng):
            if len(out) >= limit or attempts <= 0:
                return out
            attempts -= 1
            owner = index[id(group)]
            mutated = candidate.apply(owner.source)
            if mutated == owner.source:
                continue
            form = owner.accept(mutated, candidate)
            if form is None or form in seen[owner.path]:
                continue
            seen[owner.path].add(form)
            out.append(make_mutant(owner.path, owner.source, mutated, candidate))
    return out


def make_mutant(path: str, source: bytes, mutated: bytes, candidate: Candidate) -> Mutant:
    """The record of one applied candidate."""
    old = source.decode("utf-8", "surrogateescape")
    new = mutated.decode("utf-8", "surrogateescape")
    return Mutant(
        id=mutant_id(path, new),
        path=path,
        line=candidate.line,
        operator=candidate.operator,
        description=candidate.description,
        new_text=new,
        diff=unified_diff(path, old, new),
    )
