"""Where a JavaScript/TypeScript file's tests are, and how each is named.

The ``it``/``test``/``specify`` calls (with ``.only``, ``.skip``...) nested in
``describe``/``context``/``suite`` calls whose titles are strings, each with its Jest and
Mocha ids; ``test.each(table)`` rows named as jest-each names them (:func:`each_title`);
string literals' values (:func:`js_string_value`) and the small node readers the canary
writer's other parts share. Split from :mod:`swe_forge.ecosystems.js.canary` (the writer,
which puts this and :mod:`~swe_forge.ecosystems.js.canary_expected` together).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from swe_forge.ecosystems import syntax

_DESCRIBE = frozenset(["describe", "context", "suite", "fdescribe", "xdescribe", "xcontext"])
_TEST = frozenset(["it", "test", "specify", "fit", "xit", "xtest", "xspecify"])
_MODIFIERS = frozenset(
    ["only", "skip", "concurrent", "sequential", "shuffle", "failing", "fails", "serial"]
)


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


def _args(call: Any) -> list[Any]:
    args = _field(call, "arguments")
    if args is None or args.type != "arguments":
        return []
    return [a for a in args.named_children if a.type != "comment"]


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def js_string_value(node: Any) -> str | None:
    """The value of a string literal (or template without substitutions; a ``+`` of
    those), None for anything else."""
    if node.type == "binary_expression" and _text(_field(node, "operator")) == "+":
        left, right = _field(node, "left"), _field(node, "right")
        a = js_string_value(left) if left is not None else None
        b = js_string_value(right) if right is not None else None
        return None if a is None or b is None else a + b
    if node.type == "parenthesized_expression" and node.named_children:
        return js_string_value(node.named_children[0])
    if node.type not in ("string", "template_string"):
        return None
    out = []
    for child in node.named_children:
        if child.type == "string_fragment":
            out.append(_text(child))
        elif child.type == "escape_sequence":
            esc = _text(child)
            body = esc[1:]
            if body[:1] in _ESCAPES and not (body[:1] == "0" and len(body) > 1):
                out.append(_ESCAPES[body[:1]])
            elif body[:1] == "x":
                out.append(chr(int(body[1:], 16)))
            elif body[:2] == "u{":
                out.append(chr(int(body[2:-1], 16)))
            elif body[:1] == "u":
                out.append(chr(int(body[1:], 16)))
            elif body[:1] in ("\n", "\r"):
                continue  # a line continuation
            else:
                out.append(body)
        else:
            return None  # a substitution, or something unknown
    return "".join(out)


@dataclass
class _Test:
    """A test call located in a file."""

    call: Any  # the call_expression that defines the test
    describes: list[str]
    title: str
    fn: Any  # the test function
    title_node: Any
    table: Any = None  # .each: the table's array node
    row: Any = None  # .each: this test's row
    row_index: int = -1
    consumed: tuple[int, ...] = ()  # .each: the row's columns its title is made of
    consumed_keys: tuple[str, ...] = ()

    def ids(self, path: str) -> tuple[str, str]:
        """(Jest id, Mocha id)."""
        jest = " > ".join([*(d for d in self.describes if d), self.title])
        return f"{path}::{jest}", f"{path}::{' '.join([*self.describes, self.title])}"


def _chain(node: Any) -> tuple[str, list[str]]:
    """(root identifier, properties) of ``a.b.c`` (("", []) when it is no such chain)."""
    props: list[str] = []
    while node is not None and node.type == "member_expression":
        props.insert(0, _text(_field(node, "property")))
        node = _field(node, "object")
    if node is None or node.type != "identifier":
        return "", []
    return _text(node), props


def _callee_kind(fn: Any) -> tuple[str, bool]:
    """("describe"|"test"|"", is .each) of a call's function."""
    root, props = _chain(fn)
    each = bool(props) and props[-1] == "each"
    if each:
        props = props[:-1]
    if not all(p in _MODIFIERS for p in props):
        return "", False
    if root in _DESCRIBE:
        return "describe", each
    if root in _TEST:
        return "test", each
    return "", False


def _is_function(node: Any) -> bool:
    return node is not None and node.type in ("arrow_function", "function_expression", "function")


def locate_tests(root: Any) -> list[_Test]:
    """Every test of a file that can be named (see the module docstring)."""
    out: list[_Test] = []
    for node in syntax.walk(root):
        if node.type != "call_expression":
            continue
        fn = _field(node, "function")
        if fn is None:
            continue
        each_call = None
        if fn.type == "call_expression":
            kind, each = _callee_kind(_field(fn, "function"))
            if not each or kind != "test":
                continue
            each_call = fn
        else:
            kind, each = _callee_kind(fn)
            if kind != "test" or each:
                continue
        args = _args(node)
        if len(args) < 2 or not _is_function(args[1]):
            continue
        title = js_string_value(args[0])
        describes = _describes(node)
        if title is None or describes is None:
            continue
        if each_call is None:
            out.append(_Test(node, describes, title, args[1], args[0]))
            continue
        table = _args(each_call)
        if len(table) != 1 or table[0].type != "array":
            continue
        for k, row in enumerate(table[0].named_children):
            named = each_title(title, row, k)
            if named is not None:
                name, consumed, keys = named
                out.append(
                    _Test(node, describes, name, args[1], args[0], table[0], row, k, consumed, keys)
                )
    return out


def _describes(node: Any) -> list[str] | None:
    """The titles of the describe blocks a call is in, outermost first (None when one of
    them cannot be read, or the call is inside another test or a ``describe.each``)."""
    titles: list[str] = []
    child = node
    for parent in syntax.ancestors(node):
        fn = _field(parent, "function") if parent.type == "call_expression" else None
        if fn is not None and child.type == "arguments":
            if fn.type == "call_expression":
                if _callee_kind(_field(fn, "function"))[1]:
                    return None  # inside describe.each(table)(...) or test.each
            else:
                kind, each = _callee_kind(fn)
                if kind == "test" or each:
                    return None
                if kind == "describe":
                    args = _args(parent)
                    title = js_string_value(args[0]) if args else None
                    if title is None:
                        return None
                    titles.insert(0, title)
        child = parent
    return titles


# ------------------------------------------------------------------------- jest-each titles

_PLACEHOLDER = re.compile(r"%[sdifjoOp]")


def _primitive(node: Any) -> tuple[bool, Any]:
    """(is a primitive literal, its value): strings, numbers, bools, null, undefined."""
    if node.type in ("string", "template_string"):
        string = js_string_value(node)
        return string is not None, string
    if node.type == "number":
        number = _js_number(_text(node))
        return number is not None, number
    if node.type == "unary_expression" and _text(_field(node, "operator")) == "-":
        arg = _field(node, "argument")
        if arg is not None and arg.type == "number":
            number = _js_number(_text(arg))
            return number is not None, (None if number is None else -number)
    if node.type in ("true", "false"):
        return True, node.type == "true"
    if node.type == "null":
        return True, None
    if node.type == "undefined" or (node.type == "identifier" and _text(node) == "undefined"):
        return True, _UNDEFINED
    return False, None


class _Undefined:
    pass


_UNDEFINED = _Undefined()


def _js_number(text: str) -> float | int | None:
    text = text.replace("_", "")
    if text.endswith("n"):
        return None  # BigInt: pretty-format writes 1n
    try:
        if text[:2].lower() in ("0x", "0o", "0b"):
            return int(text, 0)
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _js_str(value: Any) -> str:
    """``String(value)`` of a primitive."""
    if value is _UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        text = repr(value)
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", text)
    return str(value)


def _pretty(value: Any) -> str:
    """pretty-format's text of a primitive (strings double-quoted)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return _js_str(value)


def _format_one(placeholder: str, value: Any) -> str | None:
    if placeholder in ("%s",):
        return _js_str(value)
    if placeholder == "%p":
        return _pretty(value)
    if placeholder in ("%d", "%i", "%f"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if placeholder == "%i":
            return str(int(value))
        return _js_str(value)
    if placeholder == "%j":
        return None if value is _UNDEFINED else json.dumps(value, ensure_ascii=False)
    if placeholder in ("%o", "%O"):
        if isinstance(value, str):
            return "'" + value + "'"
        return _js_str(value)
    return None


def each_title(
    title: str, row: Any, index: int
) -> tuple[str, tuple[int, ...], tuple[str, ...]] | None:
    """(title, columns it consumed, keys it used) of one row of ``test.each`` (None when the
    row is not made of literals this can name)."""
    text = title.replace("%%", "\0").replace("%#", str(index)).replace("%$", str(index + 1))
    if row.type == "object":
        values: dict[str, Any] = {}
        for pair in row.named_children:
            if pair.type != "pair":
                return None
            key = _field(pair, "key")
            ok, value = _primitive(_field(pair, "value"))
            name = js_string_value(key) if key is not None and key.type == "string" else _text(key)
            if not ok or name is None:
                return None
            values[name] = value
        used: list[str] = []

        def put(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in values:
                return m.group(0)
            used.append(name)
            return _pretty(values[name])

        out = re.sub(r"\$(\w+)", put, text)
        return out.replace("\0", "%"), (), tuple(used)
    cells = list(row.named_children) if row.type == "array" else [row]
    consumed = []
    for k, cell in enumerate(cells):
        m = _PLACEHOLDER.search(text)
        if m is None:
            break
        ok, value = _primitive(cell)
        if not ok:
            return None
        got = _format_one(m.group(0), value)
        if got is None:
            return None
        text = text[: m.start()] + got.replace("%", "\0") + text[m.end() :]
        consumed.append(k)
    return text.replace("\0", "%"), tuple(consumed), ()
