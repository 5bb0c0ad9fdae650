"""The Rust scan's literals and folding: the token type, the value of a literal token
(strings and chars decoded, integers), a format string filled with constant arguments, and
the macros and functions whose arguments the walk folds into a string.

Functions of values only; the walk (:mod:`swe_forge.ecosystems.rust.scan_walk`) reads the
tokens and the tree and calls them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_forge.ecosystems.scanning import decode_escapes

_MAX_TEXT = 1 << 16


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    line: int


#: Functions that make a string of bytes.
_FROM_BYTES = frozenset({"from_utf8", "from_utf8_lossy", "from_utf8_unchecked"})
#: Macros whose arguments are folded into a string.
_FOLDING_MACROS = frozenset(
    {
        "concat",
        "stringify",
        "format",
        "format_args",
        "print",
        "println",
        "eprint",
        "eprintln",
        "write",
        "writeln",
        "panic",
    }
)


def _format(template: str, values: list[str | None]) -> str:
    """A format string with its ``{}`` filled by the constant arguments in order (``{{``,
    ``}}`` unescaped; a placeholder of an unknown value left empty)."""
    out: list[str] = []
    rest = iter(values)
    i = 0
    while i < len(template):
        ch = template[i]
        if template.startswith("{{", i) or template.startswith("}}", i):
            out.append(ch)
            i += 2
            continue
        if ch == "{":
            close = template.find("}", i)
            if close < 0:
                break
            spec = template[i + 1 : close]
            if spec.split(":", 1)[0] == "":
                out.append(next(rest, None) or "")
            i = close + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)[:_MAX_TEXT]


_STRING_PREFIX = re.compile(r'^(?:b|c|br|cr|r)?(#*)"', re.S)


def _literal(tok: _Tok) -> str | int | None:
    """The value of a literal token: a string or char decoded, an integer; None otherwise."""
    text = tok.text
    if tok.kind in ("string_literal", "raw_string_literal"):
        m = _STRING_PREFIX.match(text)
        if m is None:
            return None
        hashes = m.group(1)
        body = text[m.end() : len(text) - 1 - len(hashes)]
        if "r" in text[: m.start(1) if hashes else m.end() - 1]:
            return body
        return decode_escapes(body, octal=False)
    if tok.kind == "char_literal":
        body = text[text.index("'") + 1 : -1] if "'" in text else ""
        return decode_escapes(body, octal=False)
    if tok.kind == "integer_literal":
        digits = re.sub(r"(?:[iu](?:8|16|32|64|128|size))$", "", text.replace("_", ""))
        try:
            return int(digits, 0)
        except ValueError:
            return None
    return None
