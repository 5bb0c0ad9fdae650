"""Twin-run canaries: the literals of a test's assertions, and the same test with one changed.

In a twin run the held-out tests run K+1 times in one container: once with the real test
files, and K times with the same files but exactly one literal of one test's assertion
replaced by a wrong value of the same type and shape (the test keeps its name, its file and
its place). A correct fix passes the real run and fails every twin; code that forges a report
or fakes comparisons passes them all. That holds only while code under test cannot tell a
twin from the real run, so a perturbed literal reads like the real one: a string of the same
length made of the same kinds of characters, an integer near the integer, a float far outside
any tolerance but written the same way, a flipped bool. And it is, wherever the writer can
tell, the *expected* side of an assertion: perturbing an input would change what the code
under test is called with, which it can observe.

This module holds what the four languages share: the :class:`Site` record (stored in task
manifests), the :class:`CanaryWriter` protocol (each adapter's is its ``canary_writer()``;
:func:`swe_forge.ecosystems.writer_for` finds it by name), and
:class:`TreeWriter`, the machinery every writer builds on (literals found, checked and
replaced on tree-sitter syntax trees, see :mod:`swe_forge.ecosystems.syntax`). What is an
assertion, and which side of it is expected, is each language's own (``<language>/canary.py``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from swe_forge.ecosystems import syntax
from swe_forge.errors import UsageError

#: Literal kinds a site can be, and ``guard``: the condition of a test's failing branch
#: (``if got != io.Discard { t.Fatal(...) }``) where no literal is the expectation; its
#: perturbation is the condition negated, which the gold patch fails wherever the branch runs.
KINDS = ("string", "int", "float", "bool", "char", "bytes", "guard")
#: The kind whose perturbation negates a condition instead of changing a literal.
GUARD = "guard"
#: Roles: the expected side of an assertion, or any other literal of the test.
ROLES = ("expected", "other")
#: Wrong values drawn for one literal, the most natural of them kept (see ``_new_literal``).
DRAWS = 24


@dataclass(frozen=True)
class Site:
    """One literal of one test that a twin run may perturb.

    ``test`` is the test id exactly as the runner reports it (as in FAIL_TO_PASS); ``index``
    counts the sites of that test in source order from 0 (stable for a given file text);
    ``start``/``end`` are the byte span of the literal in the file and ``text`` its source text
    (a perturbation checks it is still there). ``kind`` is one of :data:`KINDS`, ``role`` one
    of :data:`ROLES`.
    """

    path: str
    test: str
    index: int
    start: int
    end: int
    kind: str
    role: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The site as a JSON-safe dict (stored in task manifests)."""
        return {
            "path": self.path,
            "test": self.test,
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "role": self.role,
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Site:
        """Inverse of :meth:`to_dict`; raises ValueError when malformed."""
        try:
            site = cls(
                path=_typed(data, "path", str),
                test=_typed(data, "test", str),
                index=_typed(data, "index", int),
                start=_typed(data, "start", int),
                end=_typed(data, "end", int),
                kind=_typed(data, "kind", str),
                role=_typed(data, "role", str),
                text=_typed(data, "text", str),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a canary site: {exc}") from None
        if site.kind not in KINDS or site.role not in ROLES:
            raise ValueError(f"not a canary site: kind {site.kind!r}, role {site.role!r}")
        if not 0 <= site.start < site.end or site.index < 0:
            raise ValueError(f"not a canary site: span {site.start}..{site.end}")
        return site


def _typed(data: Mapping[str, Any], key: str, kind: type[Any]) -> Any:
    value = data[key]
    # bool is an int to Python; a site's numbers never are.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{key} is {type(value).__name__}, not {kind.__name__}")
    return value


#: A calibration copy: (test id, site or None, new name) or the same with the new literal.
CopySpec = tuple[str, Site | None, str] | tuple[str, Site | None, str, str]


class CanaryWriter(Protocol):
    """What every language's canary writer answers."""

    def test_files(self, test: str, candidates: list[str]) -> list[str]:
        """Which of the ``candidates`` (repository paths) can hold the test ``test``."""

    def sites(self, path: str, source: bytes, tests: list[str]) -> list[Site]:
        """The sites of ``tests`` (ids) in the file ``path`` whose bytes are ``source``, per
        test in the order given, each test's in source order; a test not in the file has
        none."""

    def perturb(self, source: bytes, site: Site, rng: random.Random) -> bytes | None:
        """``source`` with the site's literal replaced by a different literal of the same
        type, shape and quoting style (deterministic for a given ``rng`` state); None when
        the text at the span is no longer ``site.text`` or no such literal exists."""

    def copies(self, path: str, source: bytes, specs: list[CopySpec]) -> bytes:
        """``source`` with, for each ``(test id, site or None, new name[, literal])``, a copy of
        the test called ``new name`` right after the original (same file, same enclosing
        block), the site perturbed in the copy when given (to ``literal`` when given: what a
        twin of the same perturbation puts there); the originals are unchanged."""

    def copy_id(self, test: str, new_name: str) -> str:
        """The id the runner reports a copy of ``test`` called ``new_name`` under."""

    def new_name(self, test: str, rng: random.Random, taken: set[str]) -> str:
        """A plausible test name in the language's naming style, not in ``taken``."""


def punctuation_only(text: str) -> bool:
    """Is a string literal's text made of punctuation alone (``"..."``, ``"-"``; not ``""``)?
    No change of such a string reads as something a test's author would write."""
    body = text.strip("\"'`")
    return bool(body) and not any(c.isalnum() or c.isspace() for c in body)


# ------------------------------------------------------------------------- shared machinery


class Found(NamedTuple):
    """A literal a language's reader found in a test: its byte span, kind and role."""

    start: int
    end: int
    kind: str
    role: str


class Copy(NamedTuple):
    """Where a copy of a test goes and what it is: ``text`` is inserted at byte ``at`` of the
    file (before any other copy inserted there later)."""

    at: int
    text: bytes


def span(node: Any) -> tuple[int, int]:
    """A node's byte span."""
    return int(node.start_byte), int(node.end_byte)


def inside(node: Any, spans: Iterable[tuple[int, int]]) -> bool:
    """Does ``node`` lie within any of ``spans``?"""
    s, e = span(node)
    return any(a <= s and e <= b for a, b in spans)


def error_count(tree: Any) -> int:
    """How many error and missing nodes the parser had to make up."""
    if not tree.root_node.has_error:
        return 0
    return sum(1 for n in syntax.walk(tree.root_node) if n.is_error or n.is_missing)


def line_indent(source: bytes, offset: int) -> bytes:
    """The whitespace that starts the line ``offset`` is on."""
    start = source.rfind(b"\n", 0, offset) + 1
    end = start
    while end < len(source) and source[end : end + 1] in (b" ", b"\t"):
        end += 1
    return source[start:end]


def replace_spans(text: bytes, base: int, edits: Iterable[tuple[int, int, bytes]]) -> bytes:
    """``text`` (which starts at byte ``base`` of its file) with the file spans of ``edits``
    replaced (the spans must not overlap)."""
    out = text
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[: start - base] + new + out[end - base :]
    return out


def renamed_copy(
    source: bytes,
    start: int,
    end: int,
    name_node: Any,
    new_name: str,
    site: Site | None,
    literal: bytes | None,
) -> list[Copy]:
    """A copy of the test at ``start:end`` under ``new_name`` (its name node renamed), with
    ``site``'s literal replaced when given, inserted after the test at its indentation; none
    when the site lies outside the test."""
    edits = [(*span(name_node), new_name.encode())]
    if site is not None and literal is not None:
        if not start <= site.start < site.end <= end:
            return []
        edits.append((site.start, site.end, literal))
    text = replace_spans(source[start:end], start, edits)
    return [Copy(end, b"\n\n" + line_indent(source, start) + text)]


def assigned_names(root: Any, assignments: Iterable[str], updates: Iterable[str]) -> set[str]:
    """Names a function assigns (nodes of types ``assignments``, their ``left``) or updates
    (``x++``: nodes of types ``updates``) anywhere in it: a declaration's value is not what
    such a name holds when it is compared."""
    assigning, updating = set(assignments), set(updates)
    names: set[str] = set()
    for node in syntax.walk(root):
        if node.type in assigning:
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                names.add(syntax.text(left))
        elif node.type in updating:
            names |= {syntax.text(c) for c in node.named_children if c.type == "identifier"}
    return names


def site_rng(site: Site) -> random.Random:
    """The generator a copy's perturbation uses: seeded by the site alone, so the same site
    is perturbed the same way in every calibration."""
    seed = f"{site.path}\0{site.test}\0{site.index}\0{site.start}\0{site.text}"
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


class TreeWriter:
    """What every writer shares: sites numbered and recorded, a literal perturbed and the file
    checked to still parse, copies spliced in. A language supplies the hooks below."""

    # ------------------------------------------------------------------ language hooks
    def grammar(self, path: str) -> str:
        """The tree-sitter grammar of a file."""
        raise NotImplementedError

    def literal_kind(self, node: Any) -> str | None:
        """The site kind of a literal node (None: no literal a site can be)."""
        raise NotImplementedError

    def literal_text(self, node: Any, text: str, kind: str, rng: random.Random) -> str | None:
        """Another literal of the same type and style for the literal ``node`` (``text``)."""
        raise NotImplementedError

    def conflicts(self, node: Any, new_text: str) -> bool:
        """Would ``new_text`` in place of ``node`` break the program though it parses (a
        duplicate map key, say)?"""
        return False

    def prepare(self, tree: Any, path: str) -> Any:
        """What a reader of the file works out once for all its tests (passed to
        :meth:`find` and :meth:`copy_of` as ``state``; None by default)."""
        return None

    def find(
        self, tree: Any, source: bytes, path: str, test: str, state: Any = None
    ) -> list[Found] | None:
        """The literals of one test (None: the test is not in this file)."""
        raise NotImplementedError

    def copy_of(
        self,
        tree: Any,
        source: bytes,
        path: str,
        test: str,
        new_name: str,
        literal: bytes | None,
        site: Site | None,
        state: Any = None,
    ) -> list[Copy]:
        """The copies to insert for one spec (``literal``: the site's new text)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the protocol
    def sites(self, path: str, source: bytes, tests: list[str]) -> list[Site]:
        """See :meth:`CanaryWriter.sites`."""
        if len(source) > syntax.MAX_PARSE_BYTES:
            return []
        tree = syntax.parse(self.grammar(path), source)
        state = self.prepare(tree, path)
        out: list[Site] = []
        for test in dict.fromkeys(tests):
            try:
                found = self.find(tree, source, path, test, state)
            except RecursionError:
                # Expressions nested thousands deep: the readers recurse into values, and a
                # test they cannot read has no sites rather than taking the caller down.
                continue
            if not found:
                continue
            best: dict[tuple[int, int], Found] = {}
            for f in found:
                old = best.get((f.start, f.end))
                if old is None or (old.role == "other" and f.role == "expected"):
                    best[(f.start, f.end)] = f
            index = 0
            for (start, end), f in sorted(best.items()):
                try:
                    text = source[start:end].decode("utf-8")
                except UnicodeDecodeError:
                    continue  # a literal that is not UTF-8 cannot be recorded as text
                if not self._changeable(tree, start, end, f.kind, text):
                    continue
                out.append(Site(path, test, index, start, end, f.kind, f.role, text))
                index += 1
        return out

    def perturb(self, source: bytes, site: Site, rng: random.Random) -> bytes | None:
        """See :meth:`CanaryWriter.perturb`."""
        if source[site.start : site.end] != site.text.encode("utf-8"):
            return None
        tree = syntax.parse(self.grammar(site.path), source)
        new = self._new_literal(tree, source, site, rng)
        if new is None:
            return None
        return source[: site.start] + new + source[site.end :]

    def copies(self, path: str, source: bytes, specs: list[CopySpec]) -> bytes:
        """See :meth:`CanaryWriter.copies`. A site without a literal is perturbed with
        :func:`site_rng`. Raises
        UsageError when a test is not in the file, a site is not its own or cannot be
        perturbed, or the copies do not parse."""
        tree = syntax.parse(self.grammar(path), source)
        state = self.prepare(tree, path)
        inserts: list[tuple[int, int, bytes]] = []
        for n, spec in enumerate(specs):
            test, site, name = spec[0], spec[1], spec[2]
            given = spec[3] if len(spec) > 3 else None
            literal = None
            if site is not None:
                if site.path != path or site.test != test:
                    raise UsageError(f"site {site.index} of {site.test} is not one of {test}")
                if source[site.start : site.end] != site.text.encode("utf-8"):
                    raise UsageError(f"site {site.index} of {test}: the file changed")
                literal = (
                    given.encode("utf-8")
                    if isinstance(given, str)
                    else self._new_literal(tree, source, site, site_rng(site))
                )
                if literal is None:
                    raise UsageError(f"site {site.index} of {test} cannot be perturbed")
            try:
                made = self.copy_of(tree, source, path, test, name, literal, site, state)
            except RecursionError:
                made = []
            if not made:
                raise UsageError(f"{test} is not in {path}")
            inserts += [(c.at, n, c.text) for c in made]
        out = bytearray()
        last = 0
        for at, _, text in sorted(inserts, key=lambda i: (i[0], i[1])):
            out += source[last:at] + text
            last = at
        out += source[last:]
        result = bytes(out)
        if error_count(syntax.parse(self.grammar(path), result)) > error_count(tree):
            raise UsageError(f"the copies of tests in {path} do not parse")
        return result

    # ------------------------------------------------------------------ helpers
    def literal_at(self, tree: Any, start: int, end: int, kind: str | None = None) -> Any:
        """The literal node with exactly this span (of ``kind`` when given), or None."""
        node = tree.root_node.descendant_for_byte_range(start, end)
        if kind == GUARD:
            # A condition may be tokens of a macro call (Rust's `assert!(...)`): no node of
            # its own, so the smallest one around it stands for it.
            return node
        while node is not None and span(node) == (start, end):
            found = self.literal_kind(node)
            if found is not None and (kind is None or found == kind):
                return node
            node = node.parent
        return None

    def _changeable(self, tree: Any, start: int, end: int, kind: str, text: str) -> bool:
        """Has the literal another value of its form (``'\\''`` has none)?"""
        node = self.literal_at(tree, start, end, kind)
        if node is None:
            return False
        if kind == GUARD:
            return True
        for seed in range(3):
            new = self.literal_text(node, text, kind, random.Random(seed))
            if new is not None and new != text:
                return True
        return False

    def _new_literal(
        self, tree: Any, source: bytes, site: Site, rng: random.Random
    ) -> bytes | None:
        """A checked new text for a site's literal: a different value that keeps the file
        parsing as before (a few tries; None when none is found)."""
        node = self.literal_at(tree, site.start, site.end, site.kind)
        if node is None:
            return None
        if site.kind == GUARD:
            return self._negated(tree, source, site)
        if site.kind in ("string", "bytes") and punctuation_only(site.text):
            # Punctuation alone ("...", "-"): any change of it reads as no one would write it.
            return None
        errors = error_count(tree)
        words = syntax.vocabulary(source)
        context = syntax.LiteralContext(source, site.start, site.end)
        drawn: list[str] = []
        for _ in range(DRAWS):
            with syntax.using_vocabulary(words):
                new = self.literal_text(node, site.text, site.kind, rng)
            if new is None:
                break
            # Never another string the file holds: a test's other values (its inputs, the
            # answers of its other cases) are what a wrong fix returns, and a decoy it
            # passes would call an honest mistake tampering.
            copy = new in context.strings
            if new != site.text and new not in drawn and not copy and not self.conflicts(node, new):
                drawn.append(new)
        # The draw that stands out from its file as much as the real literal does, no more
        # and no less (see syntax.LiteralContext): code reading the file cannot pick the
        # decoy out by a word or a pair of characters found nowhere else, or by roundness.
        ranked = sorted(range(len(drawn)), key=lambda i: (context.distance(site.text, drawn[i]), i))
        for i in ranked:
            new = drawn[i]
            data = new.encode("utf-8")
            out = source[: site.start] + data + source[site.end :]
            after = syntax.parse(self.grammar(site.path), out)
            if error_count(after) > errors:
                continue
            if self.literal_at(after, site.start, site.start + len(data), site.kind) is None:
                continue
            return data
        return None

    def _negated(self, tree: Any, source: bytes, site: Site) -> bytes | None:
        """A guard's condition negated as its author could have written it (see
        :func:`negate_condition`), when the file still parses as well as before."""
        data = negate_condition(site.text).encode("utf-8")
        out = source[: site.start] + data + source[site.end :]
        if error_count(syntax.parse(self.grammar(site.path), out)) > error_count(tree):
            return None
        return data

    def literals(self, node: Any) -> Iterator[Any]:
        """Literal nodes under ``node`` (outermost only), in source order."""
        stack = [node]
        while stack:
            current = stack.pop()
            if self.literal_kind(current) is not None:
                yield current
                continue
            stack.extend(reversed(current.children))


#: Comparison operators and their negations (written with spaces around them, as formatters
#: do: `a < b`, never the `<` of `Vec<u8>`).
_INVERSE = {
    "===": "!==",
    "!==": "===",
    "==": "!=",
    "!=": "==",
    "<=": ">",
    ">=": "<",
    "<": ">=",
    ">": "<=",
}
_OPEN, _CLOSE = "([{", ")]}"


def _skeleton(text: str) -> str | None:
    """``text`` with what is inside brackets and quotes blanked (same length), so that what
    is left is the expression's top level; None when its brackets do not balance."""
    out: list[str] = []
    stack: list[str] = []
    quote = ""
    escaped = False
    for c in text:
        if quote:
            out.append(" ")
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
                out[-1] = c if not stack else " "
            continue
        if c in "\"'`":
            quote = c
            out.append(c if not stack else " ")
        elif c in _OPEN:
            out.append(c if not stack else " ")
            stack.append(_CLOSE[_OPEN.index(c)])
        elif c in _CLOSE:
            if not stack or stack.pop() != c:
                return None
            out.append(c if not stack else " ")
        else:
            out.append(" " if stack else c)
    return "".join(out) if not stack and not quote else None


def negate_condition(text: str) -> str:
    """A boolean expression's negation in the form its author could have written (Go, Rust,
    Java, JS and TS alike): its one comparison's operator inverted (``got == io.Discard``),
    a leading ``!`` dropped (``p.failed()`` from ``!p.failed()``) or put before an operand
    (a call, a name, a field), and ``!(...)`` around anything else. A decoy must read like a
    test: code that can see the test file must not pick it out by a negation no one writes."""
    stripped = text.strip()
    top = _skeleton(stripped)
    if top is None:
        return "!(" + stripped + ")"
    # Tabs and line breaks around an operator are spaces to the reading below (red team,
    # session 20: `a\t==\tb` became `!a\t==\tb`, which is `(!a) == b`).
    top = re.sub(r"\s", " ", top)
    found: list[tuple[int, str]] = []
    i = 1
    while i < len(top):
        op = next((o for o in _INVERSE if top.startswith(" " + o + " ", i - 1)), "")
        if op:
            found.append((i, op))
        i += max(len(op), 1)
    # What binds looser than a comparison somewhere (or differently per language): `&&`,
    # `||`, `?:`, bitwise operators, assignment. Then only `!(...)` is sure to negate.
    loose = any(x in top for x in ("&&", "||", "?", " & ", " | ", " ^ ", " = "))
    if len(found) == 1 and not loose:
        at, op = found[0]
        return stripped[:at] + _INVERSE[op] + stripped[at + len(op) :]
    # The top level with each bracket's and quote's (blanked) inside closed up: an operand
    # (`p.parse().isEmpty()`, `matches!(r, Err(_))`) has no space left in it.
    bare = re.sub(r"([(\[{\"'`])\s+([)\]}\"'`])", r"\1\2", top)
    # An operator written without spaces (`a===b`, `x<3`), a lambda (`() -> x`, `x => x`):
    # no operand, whatever the spacing says (Rust's turbofish `::<u8>` aside).
    unspaced = re.search(r"[=<>]", re.sub(r"::<[^<>]*>", "", bare))
    if (
        not found
        and not loose
        and not unspaced
        and " " not in bare
        and not bare.startswith(("-", "+", "*", "&", "<"))
    ):
        if stripped.startswith("!"):
            rest = stripped[1:]
            if rest.startswith("(") and rest.endswith(")") and _skeleton(rest[1:-1]) is not None:
                return rest[1:-1].strip()
            return rest
        return "!" + stripped
    return "!(" + stripped + ")"


def with_guards(found: list[Found], guards: Iterable[tuple[int, int]]) -> list[Found]:
    """A test's sites: ``found`` (its literals), and, when none of them is the expectation,
    the spans of ``guards`` (conditions of its failing branches or truthiness assertions) as
    expected sites of kind :data:`GUARD` (their decoys negate them)."""
    if any(f.role == "expected" for f in found):
        return found
    return found + [Found(start, end, GUARD, "expected") for start, end in guards]


def negates_plainly(text: str) -> bool:
    """Is the negation of ``text`` free of a leading ``!`` (an inverted comparison, a ``!``
    taken away)? A negative assertion (``assertFalse``, ``toBeFalsy``, ``notOk``) of a
    condition negated with ``!`` is a double negative no one writes: code that reads the test
    file would pick the decoy out by it (red team, session 20), so such a guard is no site."""
    return not negate_condition(text).startswith("!")


def _body_span(node: Any) -> tuple[int, int]:
    """The span of a quoted literal's body: between its first and last child tokens when
    those are unnamed (the quotes, with any prefix: ``b"``, ``\"\"\"``), else the whole."""
    children = list(node.children)
    start, end = span(node)
    if children and not children[0].is_named:
        start = children[0].end_byte
    if len(children) > 1 and not children[-1].is_named:
        end = children[-1].start_byte
    return start, end


def string_pieces(node: Any, escape_types: Iterable[str]) -> list[tuple[str, bool]]:
    """The body of a quoted literal node as ``(text, is_escape)`` parts, from its children:
    escape sequences (``escape_types``) kept apart, everything else between the quotes
    plain (read from the node's own text, so that no file is needed)."""
    escapes = set(escape_types)
    data = bytes(node.text or b"")
    base = node.start_byte
    start, end = _body_span(node)
    pieces: list[tuple[str, bool]] = []
    pos = start
    for child in node.children:
        if child.type in escapes and start <= child.start_byte and child.end_byte <= end:
            if child.start_byte > pos:
                pieces.append((data[pos - base : child.start_byte - base].decode(), False))
            pieces.append((syntax.text(child), True))
            pos = child.end_byte
    if end > pos:
        pieces.append((data[pos - base : end - base].decode(), False))
    return pieces


def requote(node: Any, pieces: list[str]) -> str:
    """A quoted literal node's text with its body replaced by ``pieces`` (joined), the quotes
    and any prefix kept (see :func:`string_pieces`)."""
    data = bytes(node.text or b"")
    base = node.start_byte
    start, end = _body_span(node)
    return data[: start - base].decode() + "".join(pieces) + data[end - base :].decode()


def perturbed_body(node: Any, escape_types: Iterable[str], rng: random.Random) -> str | None:
    """A quoted literal node's text with one character of its body changed."""
    try:
        pieces = string_pieces(node, escape_types)
    except UnicodeDecodeError:
        return None
    new = syntax.perturb_pieces(pieces, rng)
    return None if new is None else requote(node, new)


def perturbed_quoted_char(text: str, quote_at: int, rng: random.Random) -> str | None:
    """A character literal (``'a'``, ``'\\n'``, ``b'x'``: its quote at ``quote_at``) for
    another character of the same kind."""
    head, inner, tail = text[: quote_at + 1], text[quote_at + 1 : -1], text[-1:]
    if not inner:
        return None
    if inner.startswith("\\"):
        new = syntax.perturb_escape(inner, rng)
        return None if new is None else head + new + tail
    if len(inner) != 1:
        return None
    new_ch = syntax.perturb_char(inner, rng)
    if new_ch in ("'", "\\"):
        return None
    return head + new_ch + tail
