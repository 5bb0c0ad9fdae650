"""Real parsers for the languages the adapters judge (tree-sitter grammars from PyPI).

Every adapter reads code by its syntax tree, never by text patterns: the capability scanners
(``<language>/scan.py``) resolve aliases, renamed imports and folded strings on the tree, and
the canary writers (``<language>/canary.py``) find the literals of a test's assertions on it.
This module only loads the grammars and offers what every reader of a tree needs; what a tree
*means* stays in each adapter.

The parsers run on the host, on text that comes from hostile repositories and patches:
tree-sitter never executes anything, recovers from syntax errors (``ERROR`` nodes), and is
walked here iteratively so that no nesting depth can exhaust the stack.
"""

from __future__ import annotations

import contextlib
import contextvars
import random
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from swe_forge.errors import UsageError

#: Grammar name -> (module, function returning the language pointer).
_GRAMMARS = {
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
}

#: Bytes of a file the readers parse at most (a larger file is read as unscannable).
MAX_PARSE_BYTES = 4 << 20


@cache
def language(name: str) -> Any:
    """The tree-sitter ``Language`` of a grammar (loaded once)."""
    import importlib

    import tree_sitter

    try:
        module, attr = _GRAMMARS[name]
    except KeyError:
        raise UsageError(f"no grammar {name!r}", hint=", ".join(sorted(_GRAMMARS))) from None
    return tree_sitter.Language(getattr(importlib.import_module(module), attr)())


def parse(name: str, source: bytes) -> Any:
    """The syntax tree of ``source`` in grammar ``name`` (a new parser each time: parsers are
    not shared between threads)."""
    import tree_sitter

    return tree_sitter.Parser(language(name)).parse(source)


def grammar_for_path(path: str) -> str:
    """The JavaScript-family grammar of a file by its extension."""
    if path.endswith(".tsx"):
        return "tsx"
    if path.endswith((".ts", ".mts", ".cts")):
        return "typescript"
    return "javascript"


def walk(node: Any) -> Iterator[Any]:
    """Every node under ``node`` (itself included), in source order, iteratively."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def text(node: Any) -> str:
    """A node's source text."""
    return bytes(node.text or b"").decode("utf-8", "replace")


def has_errors(tree: Any) -> bool:
    """Did the parser have to recover from a syntax error anywhere?"""
    return bool(tree.root_node.has_error)


def line(node: Any) -> int:
    """A node's 1-based line."""
    return int(node.start_point[0]) + 1


def ancestors(node: Any) -> Iterator[Any]:
    """The parents of ``node``, nearest first."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


# ------------------------------------------------------------------ perturbed literal values
#
# A canary's value must be of the same type and shape as the value it replaces (a string for a
# string, of the same length and made of the same kinds of characters; a number near the
# number), so that code which sees it (a comparison it replaced, a test file it read) cannot
# tell it from the value the real test holds.

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"


def perturb_int(value: int, rng: random.Random) -> int:
    """A different integer near ``value`` (0 and 1 stay non-negative). A round number (a
    multiple of 5 or of a power of ten) moves by its own grain half of the time (``40`` ->
    ``30`` or ``60``), so that decoys of round numbers can be as round as the real ones."""
    step = rng.choice((1, 1, 1, 2, 3))
    if value % 5 == 0 and rng.random() < 0.5:
        grain = 5 if value % 10 else 10
        while value and value % (grain * 10) == 0 and grain < 10**9:
            grain *= 10
        step = grain if not value else step * grain
    if value <= 0 and value > -step:
        return value + step
    return value + rng.choice((-step, step))


def perturb_float(value: float, rng: random.Random) -> float:
    """A different float near ``value``, far outside any approximate comparison's tolerance."""
    scale = max(1.0, abs(value)) * rng.choice((0.1, 0.25, 0.5))
    return value + rng.choice((-scale, scale))


# Punctuation a perturbed character may become: nothing that opens, closes or escapes a
# literal in any of the languages (no quotes, backslash, backtick, ``$``, braces).
_PUNCT = "-_.:,;!?#%&*+=/"


def perturb_char(ch: str, rng: random.Random) -> str:
    """Another character of the same kind as ``ch``: a letter of the same case, a digit, a
    punctuation mark, or (beyond ASCII) a neighbouring code point of the same Unicode category
    and UTF-8 width (``ñ`` -> ``ò``, a CJK ideograph -> another)."""
    pool = _LOWER if ch in _LOWER else _UPPER if ch in _UPPER else _DIGITS if ch in _DIGITS else ""
    if pool:
        return rng.choice([c for c in pool if c != ch])
    if ch.isascii() and not ch.isspace() and ch.isprintable():
        return rng.choice([c for c in _PUNCT if c != ch])
    if ch.isascii() and ch.isprintable():  # a space: punctuation reads as text too
        return rng.choice(_PUNCT)
    near = _neighbours(ord(ch))
    return rng.choice(near) if near else rng.choice(_LOWER)


def _neighbours(code: int) -> list[str]:
    """Code points near ``code`` of its Unicode category and UTF-8 width (for surrogates:
    of its half of the surrogate range), so that a perturbed character reads like the one it
    replaces and stays encodable where the original was."""
    import unicodedata

    ch = chr(code)
    category = unicodedata.category(ch)
    width = len(ch.encode("utf-8", "surrogatepass"))
    half = (0xD800, 0xDBFF) if 0xD800 <= code <= 0xDBFF else (0xDC00, 0xDFFF)
    out = []
    for delta in (-3, -2, -1, 1, 2, 3, -8, 8, -16, 16):
        other = code + delta
        if not 0 <= other <= 0x10FFFF:
            continue
        c = chr(other)
        if unicodedata.category(c) != category:
            continue
        if len(c.encode("utf-8", "surrogatepass")) != width:
            continue
        if category == "Cs" and not half[0] <= other <= half[1]:
            continue
        out.append(c)
    return out


def _changeable(ch: str) -> int:
    """How readily a character of a literal is changed (lower first): ASCII letters and
    digits, then other letters, then other printable characters, spaces last."""
    if ch.isascii() and ch.isalnum():
        return 0
    if ch.isalnum():
        return 1
    if not ch.isspace():
        return 2
    return 3


def perturb_text(value: str, rng: random.Random) -> str:
    """``value`` with one character changed to another of the same kind (a letter for a
    letter of the same case, a digit for a digit, see :func:`perturb_char`), length kept;
    "" becomes one letter."""
    if not value:
        return rng.choice(_LOWER)
    best = min(_changeable(ch) for ch in value)
    i = rng.choice([i for i, ch in enumerate(value) if _changeable(ch) == best])
    return value[:i] + perturb_char(value[i], rng) + value[i + 1 :]


def perturb_escape(escape: str, rng: random.Random) -> str | None:
    """Another escape sequence of the same form and a different value (``\\n`` -> ``\\t``,
    ``\\x41`` -> ``\\x43``, ``\\u00e9`` -> ``\\u00ea``, ``\\u{1F600}``, ``\\101``), the
    character it stands for of the same kind; None for escapes that have no such twin
    (``\\\\``, quotes, ``\\0``, line continuations)."""
    import re

    named = {"n": "tr", "t": "nr", "r": "nt"}
    if len(escape) == 2 and escape[1] in named:
        return "\\" + rng.choice(named[escape[1]])
    forms = (
        (r"\\x([0-9a-fA-F]{2})", "\\x{}", 0xFF),
        (r"\\u([0-9a-fA-F]{4})", "\\u{}", 0xFFFF),
        (r"\\u\{([0-9a-fA-F]{1,6})\}", "\\u{{{}}}", 0x10FFFF),
        (r"\\U([0-9a-fA-F]{8})", "\\U{}", 0x10FFFF),
    )
    for pattern, form, top in forms:
        m = re.fullmatch(pattern, escape)
        if m:
            digits = m.group(1)
            code = int(digits, 16)
            # An ASCII escape stays ASCII: \x80 and above mean another thing (or nothing) in
            # some languages' strings.
            limit = 0x7F if code <= 0x7F else top
            new = _escaped_code(code, limit, rng)
            if new is None:
                return None
            text = format(new, f"0{len(digits)}x")
            if digits != digits.lower():
                text = text.upper()
            return form.format(text)
    m = re.fullmatch(r"\\([0-7]{1,3})", escape)
    if m and m.group(1) != "0":
        digits = m.group(1)
        code = int(digits, 8)
        new = _escaped_code(code, min(0o377, 8 ** len(digits) - 1), rng)
        return None if new is None else "\\" + format(new, f"0{len(digits)}o")
    return None


def _escaped_code(code: int, limit: int, rng: random.Random) -> int | None:
    if code > 0x10FFFF:
        return None
    choices = [c for c in {ord(perturb_char(chr(code), rng)) for _ in range(4)} if c != code]
    choices = [c for c in sorted(choices) if c <= limit]
    return rng.choice(choices) if choices else None


_VOCABULARY: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "vocabulary", default=()
)
_QUOTED = re.compile(rb"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`")
_WORD = re.compile(r"[A-Za-z]{2,}")
#: The parts of a camelCase identifier (``getMessage``: ``get``, ``Message``).
_CAMEL = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")


def vocabulary(source: bytes) -> tuple[str, ...]:
    """The words of a file (two or more ASCII letters: those of its quoted strings, of its
    comments and of its identifiers, camelCase and snake_case split), sorted: a word of a
    string literal is changed to another of these, so that it reads as naturally as the
    real one (no word of the decoy is one the file never uses)."""
    text = source.decode("utf-8", "replace")
    words = set(_WORD.findall(text))
    words.update(_CAMEL.findall(text))
    return tuple(sorted(words))


class LiteralContext:
    """What a literal's file says around it, for choosing the most natural of several wrong
    values for it: the file's words, the character pairs of its other quoted strings, those
    strings, and how round its numbers are, all without the literal itself (``start``,
    ``end``: its span).

    A decoy's literal is read by code that may see the whole test file; it must look like
    the literal it replaces as much as a file can say: if the real one brings no word and no
    pair of characters the file has nowhere else, neither may the decoy's; if the real one is
    a near copy of another string of the file, the decoy's may be; if the real number is
    round, so is the decoy's (see :meth:`distance`).

    One measure for every language: this is the judge's own (``_Context`` of
    ``gates/harness/swe_forge_canaries.py``, which Python's decoys are chosen by in the
    container), given the quotes of the host's languages (backticks too)."""

    def __init__(self, source: bytes, start: int, end: int) -> None:
        self._measure = _judge_context()(source, start, end, _QUOTED)

    @property
    def strings(self) -> set[str]:
        """The file's other quoted strings, quotes included."""
        return set(self._measure.strings)

    def features(self, literal: str) -> tuple[float, ...]:
        """(new words, new character pairs, near copy of another string, copy of another
        string, round to 10, to 5, likelihood of its character pairs under the file's)."""
        return tuple(float(x) for x in self._measure.features(literal))

    def distance(self, real: str, decoy: str) -> float:
        """How much more (or less) a decoy's literal stands out than the real one's."""
        return float(self._measure.distance(real, decoy))


@cache
def _judge_context() -> Any:
    """The judge's measure class (the harness module is plain Python 3.6, untyped)."""
    import importlib

    return importlib.import_module("swe_forge.gates.harness.swe_forge_canaries")._Context


@contextlib.contextmanager
def using_vocabulary(words: tuple[str, ...]) -> Iterator[None]:
    """String perturbations inside the block swap whole words for words of ``words``."""
    token = _VOCABULARY.set(words)
    try:
        yield
    finally:
        _VOCABULARY.reset(token)


def _shape(word: str) -> str:
    if word.isupper():
        return "upper"
    if word[:1].isupper() and word[1:].islower():
        return "title"
    return "lower" if word.islower() else "mixed"


def _swap_word(text: str, rng: random.Random) -> str | None:
    """``text`` with one whole word replaced by another of the vocabulary of its length and
    case (None when none has one)."""
    words = _VOCABULARY.get()
    if not words:
        return None
    options = []
    # Never a word the string already says ("oh no!" -> "oh oh!"): a word said twice in one
    # string is what no one writes and what a swap makes.
    said = {m.group(0).lower() for m in _WORD.finditer(text)}
    for m in _WORD.finditer(text):
        word = m.group(0)
        same = [
            w
            for w in words
            if len(w) == len(word) and w.lower() not in said and _shape(w) == _shape(word)
        ]
        if same:
            options.append((m.start(), m.end(), same))
    if not options:
        return None
    a, b, same = options[rng.randrange(len(options))]
    return text[:a] + same[rng.randrange(len(same))] + text[b:]


def perturb_pieces(pieces: list[tuple[str, bool]], rng: random.Random) -> list[str] | None:
    """The body of a string literal with one character changed (see :func:`perturb_text`):
    ``pieces`` are its parts in order, ``(text, is_escape)``; escape sequences are kept whole
    and changed only when the literal has no plain character (:func:`perturb_escape`).
    Returns the new parts (same count and order), None when nothing can change. An empty body
    becomes one letter."""
    plain = [
        (k, i, ch)
        for k, (t, esc) in enumerate(pieces)
        if not esc
        for i, ch in enumerate(t)
        # A digit right after an octal escape (Java's "\1" then "8") could become part of it.
        if not (
            i == 0 and ch.isdigit() and k and pieces[k - 1][1] and pieces[k - 1][0][-1:].isdigit()
        )
        # Braces stay: in a format string (Rust's format!, checked when compiled) one
        # changed makes a decoy that does not build, and none reads as a real value.
        and ch not in "{}"
    ]
    out = [t for t, _ in pieces]
    plain_pieces = [k for k, (t, esc) in enumerate(pieces) if not esc and _WORD.search(t)]
    rng.shuffle(plain_pieces)
    for k in plain_pieces:
        swapped = _swap_word(pieces[k][0], rng)
        if swapped is not None:
            out[k] = swapped
            return out
    if plain:
        # Letters and digits first; half of the time any other character that is no space
        # (a caller drawing several values keeps the most natural: a letter changed where
        # no word of the file fits makes a word the file has never seen, a digit or a mark
        # changed may not).
        classes = sorted({_changeable(ch) for _, _, ch in plain})
        best = classes[0]
        if len(classes) > 1 and classes[1] < 3 and rng.random() < 0.5:
            best = rng.choice([c for c in classes if c < 3])
        k, i, ch = rng.choice([p for p in plain if _changeable(p[2]) == best])
        out[k] = out[k][:i] + perturb_char(ch, rng) + out[k][i + 1 :]
        return out
    escapes = [k for k, (_, esc) in enumerate(pieces) if esc]
    rng.shuffle(escapes)
    for k in escapes:
        new = perturb_escape(pieces[k][0], rng)
        if new is not None and new != pieces[k][0]:
            out[k] = new
            return out
    if not pieces:
        return [rng.choice(_LOWER)]
    return None


#: Powers of two an integer literal does not cross when perturbed: the edge of a fixed-width
#: type (a literal 255 for a byte becomes 254, never 256, which would not compile).
_INT_EDGES = tuple(1 << b for b in (7, 8, 15, 16, 31, 32, 63, 64, 127, 128))


def perturb_int_text(
    text: str, rng: random.Random, *, maximum: int | None = None, legacy_octal: bool = False
) -> str | None:
    """An integer literal's text (digits only: no sign, no type suffix) for a nearby different
    value written the same way: the base prefix (``0x``, ``0o``, ``0b``, a C-style leading
    ``0`` when ``legacy_octal``), the case of hex digits, the digit count where possible
    (leading zeros kept), digit separators (``_``) at the same places. Never negative, never
    above ``maximum``, never across the edge of a fixed-width type; None when ``text`` is no
    integer literal of these forms."""
    prefix, body, base = "", text, 10
    if text[:2].lower() in ("0x", "0o", "0b"):
        prefix, body = text[:2], text[2:]
        base = {"x": 16, "o": 8, "b": 2}[text[1].lower()]
    elif legacy_octal and len(text) > 1 and text[0] == "0" and text.isdigit():
        prefix, body, base = "0", text[1:], 8
    digits = body.replace("_", "")
    if not digits or (body.startswith("_") and not prefix) or body.endswith("_"):
        return None
    try:
        value = int(digits, base)
    except ValueError:
        return None
    # Separators by the count of digits to their right (kept where the digit count is).
    seps: dict[int, int] = {}
    for i, ch in enumerate(body):
        if ch == "_":
            right = sum(1 for c in body[i:] if c != "_")
            seps[right] = seps.get(right, 0) + 1
    upper = digits != digits.lower()
    padded = len(digits) > 1 and digits[0] == "0"

    def spell(n: int) -> str:
        out = format(n, {16: "x", 8: "o", 2: "b", 10: "d"}[base])
        if padded:
            out = out.rjust(len(digits), "0")
        if upper:
            out = out.upper()
        if len(out) == len(digits) and seps:
            out = "".join("_" * seps.get(len(out) - i, 0) + d for i, d in enumerate(out))
        return prefix + out

    def fits(n: int) -> bool:
        if n < 0 or n == value or (maximum is not None and n > maximum):
            return False
        low, high = min(n, value), max(n, value)
        return not any(low < edge <= high for edge in _INT_EDGES)

    tried = [perturb_int(value, rng) for _ in range(12)]
    pool = [n for n in tried if fits(n)] + [
        n for n in (value - 1, value + 1, value - 2, value + 2, value - 3, value + 3) if fits(n)
    ]
    if not pool:
        return None
    same = [n for n in pool if len(spell(n)) == len(text)]
    return spell((same or pool)[0])


#: The largest finite double; a float literal above it does not compile (or is infinity).
FLOAT_MAX = 1.7976931348623157e308
#: The largest finite single-precision float (``f32``, Java's ``1.0f``).
FLOAT32_MAX = 3.4028234663852886e38


def perturb_float_text(text: str, rng: random.Random, *, maximum: float = FLOAT_MAX) -> str | None:
    """A decimal float literal's text (no sign, no type suffix) for a value far from it (10 %
    or more, beyond any approximate comparison's tolerance) written the same way: the same
    count of fraction digits, the exponent kept as written (the mantissa changes), a whole
    mantissa stays whole (``3.0`` -> ``4.0``), the digit count where possible, never zero
    for a value that is not, never above ``maximum``. None when ``text`` is no decimal float
    of these forms (hex floats are not changed)."""
    import re

    m = re.fullmatch(r"([0-9_]*)(\.?)([0-9_]*)([eE][+-]?[0-9_]+)?", text)
    if m is None or not (m.group(1) or m.group(3)).strip("_") or "__" in text:
        return None
    whole, dot, frac, exp = m.group(1), m.group(2), m.group(3), m.group(4) or ""
    if not dot and not exp:
        return None
    whole_d, frac_d = whole.replace("_", ""), frac.replace("_", "")
    places = len(frac_d)
    units = int((whole_d or "0") + frac_d)  # the mantissa in units of its last digit
    step = 10**places

    def spell(n: int) -> str:
        digits = str(n).rjust(places + 1, "0")
        head, tail = digits[: len(digits) - places], digits[len(digits) - places :]
        if not whole and head == "0":
            head = ""
        if whole_d.startswith("0") and len(whole_d) > len(head):
            head = head.rjust(len(whole_d), "0")
        return head + dot + tail + exp

    def ok(n: int) -> bool:
        if n < 0 or n == units or (not whole and n >= step) or (n == 0 and units):
            return False
        if float(spell(n).replace("_", "")) > maximum:
            return False
        return abs(n - units) * 10 >= max(units, 1)

    whole_only = frac_d.strip("0") == ""
    pool = []
    for _ in range(12):
        # perturb_float's step (10, 25 or 50 % of the value, at least of 1) in whole units
        # of the last digit: no float arithmetic, so 1e308 or 40 digits stay exact.
        percent = rng.choice((10, 25, 50))
        delta = max(units, step) * percent // 100
        if whole_only:
            delta = max(step, (delta + step // 2) // step * step)
        n = units + rng.choice((-1, 1)) * max(delta, 1)
        if ok(n):
            pool.append(n)
    unit = step if whole_only else max(1, units // 5)
    pool += [n for n in (units + unit, units - unit, units + 2 * unit) if ok(n)]
    if not pool:
        return None
    same = [n for n in pool if len(spell(n)) == len(text)]
    return spell((same or pool)[0])
