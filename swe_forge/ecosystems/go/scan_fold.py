"""The Go scan's constant folding: the value of a literal, and of a conversion or standard
function of constant arguments (``string(rune(22))``, ``fmt.Sprintf``, ``strings.Join``...).

Functions of values only; the walk (:mod:`swe_forge.ecosystems.go.scan_walk`) calls them
bottom-up on the syntax tree, so a string split across an expression is judged whole.
"""

from __future__ import annotations

from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.scanning import decode_escapes

_MAX_TEXT = 1 << 16


def _fold_function(name: str, values: list[Any]) -> Any:
    """A conversion or std function of constant arguments."""
    if not values:
        return None
    first = values[0]
    if name in ("string", "[]byte", "[]rune"):
        if isinstance(first, int) and name == "string":
            return chr(first) if 0 <= first <= 0x10FFFF else None
        if isinstance(first, list):
            return "".join(chr(c) for c in first if 0 <= c <= 0x10FFFF)
        if isinstance(first, str):
            return first
        return None
    if name in ("rune", "byte", "int", "int32", "uint8"):
        return first if isinstance(first, int) else None
    if name == "strings.Join" and len(values) == 2 and isinstance(values[1], str):
        return values[1].join(first)[:_MAX_TEXT] if isinstance(first, tuple) else None
    if not all(isinstance(v, str | int) for v in values):
        return None
    if name == "fmt.Sprint":
        return "".join(str(v) for v in values)[:_MAX_TEXT]
    if name == "fmt.Sprintf" and isinstance(first, str):
        return _sprintf(first, values[1:])
    if name == "strings.Repeat" and isinstance(first, str) and isinstance(values[-1], int):
        count = max(0, min(values[-1], _MAX_TEXT // max(1, len(first)) + 1))
        return (first * count)[:_MAX_TEXT]
    change = _CASE.get(name)
    if change is not None and isinstance(first, str):
        return change(first)
    if (
        name == "strings.ReplaceAll"
        and len(values) == 3
        and all(isinstance(v, str) for v in values)
    ):
        return str(first).replace(str(values[1]), str(values[2]))[:_MAX_TEXT]
    return None


_CASE: dict[str, Any] = {
    "strings.ToUpper": str.upper,
    "strings.ToLower": str.lower,
    "strings.TrimSpace": str.strip,
}


def _sprintf(fmt: str, args: list[Any]) -> str | None:
    """``fmt.Sprintf`` of constants, for the verbs that print a value as it is."""
    out: list[str] = []
    rest = iter(args)
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        verb = fmt[i + 1 : i + 2]
        i += 2
        if verb == "%":
            out.append("%")
        elif verb in ("s", "v", "d", "c", "q"):
            value = next(rest, None)
            if value is None:
                return None
            if verb == "c" and isinstance(value, int):
                out.append(chr(value) if 0 <= value <= 0x10FFFF else "")
            elif verb == "q":
                out.append(f'"{value}"')
            else:
                out.append(str(value))
        else:
            return None
    return "".join(out)[:_MAX_TEXT]


def _literal(node: Any) -> Any:
    """The value of a string, rune or integer literal (None for anything else)."""
    kind = node.type
    raw = syntax.text(node)
    if kind == "raw_string_literal":
        return raw[1:-1].replace("\r", "")
    if kind == "interpreted_string_literal":
        return decode_escapes(raw[1:-1])
    if kind == "rune_literal":
        body = decode_escapes(raw[1:-1])
        return ord(body) if len(body) == 1 else None
    if kind == "int_literal":
        try:
            return int(raw.replace("_", ""), 0)
        except ValueError:
            try:
                return int(raw.replace("_", ""), 8)  # Go's 0755
            except ValueError:
                return None
    return None
