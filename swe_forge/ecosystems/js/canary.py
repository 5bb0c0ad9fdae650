"""JavaScript and TypeScript's canary writer: the literals of an ``it``/``test`` call.

A test id is ``<file>::<describe> > ... > <title>`` for Jest and Vitest, ``<file>::<full
title>`` for Mocha (the describe titles and the test's, joined with spaces). A test is an
``it``/``test``/``specify`` call (``.only``, ``.skip``, ``.concurrent``... too) whose title
is a string, nested in ``describe``/``context``/``suite`` calls whose titles are strings;
Jest's and Vitest's ``test.each(table)(title, fn)`` with a literal table is one test per row,
named as jest-each names them (``%s``, ``%d``, ``%i``, ``%p``, ``%j``, ``%#``, ``$key``).
What cannot be located safely (computed titles, ``describe.each``, tagged-template tables,
two tests of one name) has no sites. Expected (role ``expected``):

- the arguments of Jest's and chai's matchers on ``expect(actual)`` (and ``x.should``):
  ``toBe``, ``toEqual``, ``toStrictEqual``, ``toMatch``, ``toHaveLength``, ``toContain``,
  ``toThrow``, ``toBeCloseTo`` (not its precision), ``toHaveProperty``'s value,
  ``toHaveBeenCalledWith``..., ``equal``, ``eql``, ``include``, ``lengthOf``, ``property``'s
  value, ``closeTo``... (not after ``.not``);
- node's and chai's ``assert.equal``/``strictEqual``/``deepEqual``/``deepStrictEqual``
  (the value side of ``actual, expected``), ``include``, ``lengthOf``, ``propertyVal``,
  ``closeTo``; the value side of ``===``/``==`` in ``assert(...)``/``assert.ok(...)``;
- supertest's ``.expect(status, body)`` and a header's value in ``.expect(name, value)``;
- a ``const``/``let`` of the test used there; the columns of an ``.each`` row whose parameter
  is named like an expectation (``expected``, ``want``, ``output``, ``result``...).

Inside an expected value, literals reached through arrays, objects (values, not keys),
``new Set``/``new Map``..., ``expect.objectContaining(..)``-like matchers, ``Buffer.from``,
``as const`` and arithmetic are expected; under any other call they are ``other``. Every
other literal of the test function is ``other``, except messages (of assertions, of
``expect(x, msg)``), ``console`` output, module paths (``require``, ``import()``,
``jest.mock``), TypeScript types, ``case`` labels, and the columns of an ``.each`` row its
title is made of.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import canary_name
from swe_forge.ecosystems.canaries import (
    Copy,
    Found,
    Site,
    TreeWriter,
    assigned_names,
    inside,
    line_indent,
    perturbed_body,
    replace_spans,
    span,
)
from swe_forge.errors import UsageError

_DESCRIBE = frozenset(["describe", "context", "suite", "fdescribe", "xdescribe", "xcontext"])
_TEST = frozenset(["it", "test", "specify", "fit", "xit", "xtest", "xspecify"])
_MODIFIERS = frozenset(
    ["only", "skip", "concurrent", "sequential", "shuffle", "failing", "fails", "serial"]
)
#: Matchers on ``expect(x)``: name -> (index of the first expected argument, index after the
#: last one: None to the end), the others are ``other`` (a precision, a property path).
_MATCHERS: dict[str, tuple[int, int | None]] = {
    **dict.fromkeys(
        [
            "toBe",
            "toEqual",
            "toStrictEqual",
            "toMatchObject",
            "toContain",
            "toContainEqual",
            "toHaveLength",
            "toHaveBeenCalledWith",
            "toBeCalledWith",
            "toHaveBeenLastCalledWith",
            "lastCalledWith",
            "toHaveReturnedWith",
            "toHaveLastReturnedWith",
            "toHaveBeenCalledTimes",
            "toBeCalledTimes",
            "toHaveReturnedTimes",
            "toThrow",
            "toThrowError",
            "toMatch",
            "toEqualTypeOf",
        ],
        (0, None),
    ),
    "toBeCloseTo": (0, 1),
    "toHaveProperty": (1, 2),
    "toHaveBeenNthCalledWith": (1, None),
    "toHaveNthReturnedWith": (1, 2),
}
#: chai's assertions (the value first, a message after it).
_CHAI: dict[str, tuple[int, int | None]] = {
    **dict.fromkeys(
        [
            "equal",
            "equals",
            "eq",
            "eql",
            "eqls",
            "include",
            "includes",
            "contain",
            "contains",
            "members",
            "lengthOf",
            "length",
            "match",
            "matches",
            "string",
            "throw",
            "throws",
            "Throw",
            "oneOf",
            "keys",
            "key",
        ],
        (0, 1),
    ),
    "property": (1, 2),
    "ownProperty": (1, 2),
    "nested.property": (1, 2),
    "closeTo": (0, 1),
    "approximately": (0, 1),
}
_CHAI_MESSAGE_AT = {"property": 2, "ownProperty": 2, "closeTo": 2, "approximately": 2}
#: ``assert.X(...)``: name -> (index of the actual value or -1, index of the expected one, index
#: of the message).
_ASSERTS: dict[str, tuple[int, int, int]] = {
    **dict.fromkeys(
        [
            "equal",
            "strictEqual",
            "deepEqual",
            "deepStrictEqual",
            "sameMembers",
            "sameDeepMembers",
            "sameOrderedMembers",
            "eql",
        ],
        (0, 1, 2),
    ),
    **dict.fromkeys(["include", "deepInclude", "lengthOf", "match"], (-1, 1, 2)),
    "propertyVal": (-1, 2, 3),
    "deepPropertyVal": (-1, 2, 3),
    "closeTo": (0, 1, 3),
    "approximately": (0, 1, 3),
}
_NEGATED_ASSERTS = frozenset(
    ["notEqual", "notStrictEqual", "notDeepEqual", "notDeepStrictEqual", "notInclude"]
)
_VALUE_CLASSES = frozenset(
    [
        "Set",
        "Map",
        "Date",
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "URL",
        "Uint8Array",
        "Int8Array",
        "Uint16Array",
        "Int16Array",
        "Uint32Array",
        "Int32Array",
        "Float32Array",
        "Float64Array",
        "BigInt64Array",
        "Array",
    ]
)
_VALUE_CALLS = frozenset(
    [
        "Buffer.from",
        "BigInt",
        "Object.freeze",
        "Symbol.for",
        "String",
        "Number",
        "Array.of",
        "Array.from",
    ]
)
_THROUGH = frozenset(
    [
        "array",
        "object",
        "pair",
        "unary_expression",
        "parenthesized_expression",
        "binary_expression",
        "arguments",
        "spread_element",
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "type_assertion",
    ]
)
_TYPE_NODES = frozenset(
    [
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "literal_type",
        "type_alias_declaration",
        "interface_declaration",
        "enum_declaration",
        "predefined_type",
    ]
)
_WANT = re.compile(
    r"^(want|wanted|expect|expected|exp|expectation|output|out|result|res|golden)(?![a-z])",
    re.I,
)
_CACHE_SIZE = 20000
#: Literal node types (numbers are ints or floats by how they are written).
_KINDS = {
    "string": "string",
    "template_string": "string",
    "number": "number",
    "true": "bool",
    "false": "bool",
}


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


# ---------------------------------------------------------------------------- the reader


class _Reader:
    """One test function read: expected values and excluded spans."""

    def __init__(self, test: _Test) -> None:
        self.test = test
        self.excluded: list[tuple[int, int]] = []
        self.expected: set[tuple[int, int]] = set()
        self._assigned: set[str] | None = None

    def read(self) -> None:
        """Find the expected values and what is no site."""
        body = _field(self.test.fn, "body")
        if body is None:
            return
        for node in syntax.walk(body):
            if node.type == "call_expression":
                self._call(node)
            elif node.type in _TYPE_NODES:
                self.excluded.append(span(node))
            elif node.type == "switch_case":
                value = _field(node, "value")
                if value is not None:
                    self.excluded.append(span(value))
            elif node.type == "expression_statement" and _directive(node):
                self.excluded.append(span(node))  # 'use strict'
            elif node.type == "variable_declarator" and _narrow_type(node):
                # const mode: Mode = 'fast': another string is not a Mode (TypeScript).
                value = _field(node, "value")
                if value is not None:
                    self.excluded.append(span(value))

    def _call(self, call: Any) -> None:
        fn = _field(call, "function")
        args = _args(call)
        if fn is None:
            return
        root, props = _chain(fn)
        if root == "console" or (not props and root in ("require", "import")):
            self._exclude(args)
            return
        if root in ("jest", "vi") and props[-1:] in (["mock"], ["doMock"], ["unmock"]):
            self._exclude(args[:1])
            return
        if fn.type == "import":
            self._exclude(args)
            return
        if root == "expect" and not props and len(args) >= 2:
            self._exclude(args[1:])  # expect(actual, message)
            return
        if root == "assert" or (root == "chai" and props[:1] == ["assert"]):
            self._assert(props[1:] if root == "chai" else props, args)
            return
        if fn.type == "member_expression":
            obj = _field(fn, "object")
            if (
                _text(_field(fn, "property")) == "expect"
                and obj is not None
                and (obj.type == "call_expression")
            ):
                self._supertest(args)
                return
            self._matcher(fn, args)

    def _supertest(self, args: list[Any]) -> None:
        """supertest's ``request(app).get(..).expect(200, 'body', done)``: the status and
        body are expected; of ``.expect('Header', 'value')`` the value only."""
        values = [a for a in args if a.type not in ("identifier", "arrow_function", "function")]
        if len(values) >= 2 and values[0].type == "string" and args[0] is values[0]:
            values = values[1:2]  # a header: its name is no expectation
        for arg in values:
            self._expected(arg)

    def _assert(self, props: list[str], args: list[Any]) -> None:
        name = props[-1] if props else ""
        if props[:1] == ["strict"]:
            name = props[-1] if len(props) > 1 else ""
        if name in ("", "ok", "isOk", "isTrue"):
            if args:
                self._condition(args[0])
            self._exclude(args[1:])
            return
        if name in _ASSERTS:
            actual, expected, message = _ASSERTS[name]
            self._exclude(args[message:])
            if expected < len(args):
                if actual >= 0:
                    self._pair(args[expected], args[actual])
                else:
                    self._expected(args[expected])
            return
        if name in _NEGATED_ASSERTS:
            self._exclude(args[2:])
        elif name in ("throws", "rejects", "doesNotThrow", "doesNotReject"):
            if len(args) >= 2 and args[1].type in ("string", "template_string"):
                self._exclude(args[1:])
            else:
                self._exclude(args[2:])
        elif name == "fail":
            self._exclude(args)

    def _matcher(self, fn: Any, args: list[Any]) -> None:
        """``expect(x)...matcher(args)``, ``x.should...matcher(args)``."""
        name = _text(_field(fn, "property"))
        links: list[str] = []
        node = _field(fn, "object")
        rooted = False
        while node is not None:
            if node.type == "member_expression":
                prop = _text(_field(node, "property"))
                if prop == "should":
                    rooted = True
                    break
                links.append(prop)
                node = _field(node, "object")
            elif node.type == "call_expression":
                inner = _field(node, "function")
                if inner is not None and inner.type == "identifier" and _text(inner) == "expect":
                    rooted = True
                    break
                if inner is None or inner.type != "member_expression":
                    break
                links.append(_text(_field(inner, "property")) + "()")
                node = _field(inner, "object")
            else:
                break
        if not rooted:
            return
        negated = "not" in links
        if name in _MATCHERS and not any(link.endswith("()") for link in links):
            first, last = _MATCHERS[name]
            if not negated:
                for arg in args[first:last]:
                    self._expected(arg)
            return
        key = "nested.property" if name == "property" and "nested" in links else name
        if key in _CHAI:
            first, last = _CHAI[key]
            self._exclude(args[_CHAI_MESSAGE_AT.get(key, last or 1) :])
            if not negated:
                for arg in args[first:last]:
                    self._expected(arg)

    def _condition(self, node: Any) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("arrow_function", "function_expression", "call_expression"):
                continue
            if current.type == "unary_expression" and _text(current).startswith("!"):
                continue
            if current.type == "binary_expression":
                op = _text(_field(current, "operator"))
                if op in ("===", "=="):
                    self._pair(_field(current, "right"), _field(current, "left"))
                    continue
            stack.extend(current.named_children)

    def _pair(self, preferred: Any, other: Any) -> None:
        if preferred is None or other is None:
            return
        ra, rb = self._resolve(preferred), self._resolve(other)
        if ra is not None:
            self._mark(ra)
        elif rb is not None:
            self._mark(rb)
        else:
            # Neither is a value ("foo" + SEP): the literals the expected argument is made of
            # (through concatenation, arrays...; not under a call) are still what it expects.
            self._mark(preferred)

    def _expected(self, node: Any) -> None:
        got = self._resolve(node)
        self._mark(got if got is not None else node)

    def _resolve(self, node: Any, depth: int = 0) -> Any:
        if node is None or depth > 4:
            return None
        if node.type == "identifier" and _text(node) != "undefined":
            bound = self._binding(_text(node), node.start_byte)
            return self._resolve(bound, depth + 1) if bound is not None else None
        return node if is_value(node) else None

    def _binding(self, name: str, before: int) -> Any:
        """The value of the nearest declaration of ``name`` before ``before`` in the test
        (none for a name assigned or updated in it)."""
        if self._assigned is None:
            self._assigned = assigned_names(
                self.test.fn,
                ("assignment_expression", "augmented_assignment_expression"),
                ("update_expression",),
            )
        if name in self._assigned:
            return None
        best = None
        for node in syntax.walk(self.test.fn):
            if node.start_byte >= before:
                break
            if node.type == "variable_declarator" and _text(_field(node, "name")) == name:
                value = _field(node, "value")
                if value is not None:
                    best = value
        return best

    def _mark(self, root: Any) -> None:
        self.expected |= set(value_literals(root))

    def _exclude(self, nodes: list[Any]) -> None:
        self.excluded += [span(n) for n in nodes]


def _call_path(fn: Any) -> str:
    root, props = _chain(fn)
    return ".".join([root, *props]) if root else ""


def is_value(node: Any) -> bool:
    """Is an expression a value written in the test (see the module docstring)?"""
    kind = node.type
    if kind in _KINDS or kind in ("array", "object", "null", "undefined", "regex"):
        return kind != "template_string" or _plain_template(node)
    if kind in (
        "unary_expression",
        "parenthesized_expression",
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "type_assertion",
    ):
        inner = [c for c in node.named_children if c.type not in _TYPE_NODES]
        return bool(inner) and is_value(inner[-1] if kind == "type_assertion" else inner[0])
    if kind == "binary_expression":
        op = _text(_field(node, "operator"))
        left, right = _field(node, "left"), _field(node, "right")
        return op in ("+", "-", "*", "/", "%", "**", "|", "&", "<<", ">>") and all(
            n is not None and is_value(n) for n in (left, right)
        )
    if kind == "new_expression":
        return _text(_field(node, "constructor")) in _VALUE_CLASSES
    if kind == "call_expression":
        return _value_call(node)
    return False


def _value_call(node: Any) -> bool:
    path = _call_path(_field(node, "function"))
    return path in _VALUE_CALLS or path.startswith("expect.")


def _plain_template(node: Any) -> bool:
    return not any(c.type == "template_substitution" for c in node.named_children)


def value_literals(root: Any) -> Iterator[tuple[int, int]]:
    """Spans of the literals a value is made of (not object keys, not those under other
    calls)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if _KINDS.get(node.type) is not None and (
            node.type != "template_string" or _plain_template(node)
        ):
            yield span(node)
            continue
        if node.type in ("call_expression", "new_expression"):
            if is_value(node):
                args = _field(node, "arguments")
                if args is not None:
                    stack.append(args)
            continue
        if node.type == "pair":
            value = _field(node, "value")
            if value is not None:
                stack.append(value)
            continue
        if node.type in _THROUGH:
            stack.extend(c for c in node.named_children if c.type not in _TYPE_NODES)


def _number_kind(text: str) -> str:
    body = text.replace("_", "")
    if body.endswith("n") or body[:2].lower() in ("0x", "0o", "0b"):
        return "int"
    return "float" if "." in body or "e" in body.lower() else "int"


class JsCanaryWriter(TreeWriter):
    """The canary writer of Jest, Vitest and Mocha tests (see the module docstring). It
    remembers how each test it located is named (Jest's or Mocha's form), for
    :meth:`copy_id`."""

    def __init__(self) -> None:
        self._named: OrderedDict[str, tuple[str, list[str]]] = OrderedDict()

    def grammar(self, path: str) -> str:
        """JavaScript, TypeScript or TSX by the file's extension."""
        return syntax.grammar_for_path(path)

    def test_files(self, test: str, candidates: list[str]) -> list[str]:
        """The file the id names."""
        file = test.split("::", 1)[0]
        return [c for c in candidates if c == file]

    def literal_kind(self, node: Any) -> str | None:
        """Strings, templates without substitutions, numbers (int or float by how they are
        written), bools."""
        kind = _KINDS.get(node.type)
        if kind is None:
            return None
        if node.type == "template_string" and not _plain_template(node):
            return None
        if kind == "number":
            return _number_kind(_text(node))
        return kind

    def literal_text(self, node: Any, text: str, kind: str, rng: random.Random) -> str | None:
        """The same literal form (quotes, escapes, base, separators, ``n``) with another
        value."""
        if kind == "bool":
            return "false" if text == "true" else "true"
        if kind == "string":
            return perturbed_body(node, ("escape_sequence",), rng)
        big = text.endswith("n")
        body = text[:-1] if big else text
        if kind == "float":
            new = syntax.perturb_float_text(body, rng)
        else:
            new = syntax.perturb_int_text(body, rng, legacy_octal=True)
        return None if new is None else new + ("n" if big else "")

    def prepare(self, tree: Any, path: str) -> dict[str, list[tuple[_Test, str]]]:
        """Every test of the file by its ids: (test, ``jest`` or ``mocha``) per id."""
        by_id: dict[str, list[tuple[_Test, str]]] = {}
        for located in locate_tests(tree.root_node):
            jest, mocha = located.ids(path)
            by_id.setdefault(jest, []).append((located, "jest"))
            if mocha != jest:
                by_id.setdefault(mocha, []).append((located, "mocha"))
        return by_id

    def _locate(self, tree: Any, path: str, test: str, state: Any = None) -> _Test | None:
        """The test an id names (None when no test or more than one has it)."""
        if test.split("::", 1)[0] != path:
            return None
        by_id = state if state is not None else self.prepare(tree, path)
        found = by_id.get(test, [])
        if len(found) != 1:
            return None
        located, style = found[0]
        self._named[test] = (style, located.describes)
        self._named.move_to_end(test)
        while len(self._named) > _CACHE_SIZE:
            self._named.popitem(last=False)
        return located

    def find(
        self, tree: Any, source: bytes, path: str, test: str, state: Any = None
    ) -> list[Found] | None:
        """The literals of a test (see the module docstring)."""
        located = self._locate(tree, path, test, state)
        if located is None:
            return None
        reader = _Reader(located)
        reader.read()
        out = []
        body = _field(located.fn, "body")
        if body is not None:
            for node in self.literals(body):
                if inside(node, reader.excluded):
                    continue
                kind = self.literal_kind(node)
                if kind is not None:
                    s = span(node)
                    role = "expected" if s in reader.expected else "other"
                    out.append(Found(s[0], s[1], kind, role))
        out += self._row_literals(located)
        return out

    def _row_literals(self, located: _Test) -> list[Found]:
        """The columns of an ``.each`` row its title is not made of."""
        row = located.row
        if row is None:
            return []
        params = _param_names(located.fn)
        cells: list[tuple[Any, str]] = []
        if row.type == "object":
            for pair in row.named_children:
                key = _field(pair, "key")
                name = js_string_value(key) if key is not None and key.type == "string" else None
                name = name if name is not None else _text(key)
                if pair.type == "pair" and name not in located.consumed_keys:
                    cells.append((_field(pair, "value"), name))
        else:
            items = list(row.named_children) if row.type == "array" else [row]
            for k, cell in enumerate(items):
                if k not in located.consumed:
                    cells.append((cell, params[k] if k < len(params) else ""))
        out = []
        for cell, name in cells:
            expected = set(value_literals(cell)) if _WANT.match(name) else set()
            for node in self.literals(cell):
                kind = self.literal_kind(node)
                if kind is not None:
                    s = span(node)
                    out.append(Found(s[0], s[1], kind, "expected" if s in expected else "other"))
        return out

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
        """The test's call, renamed, after its statement (an ``.each`` row becomes a plain
        test calling the function with the row)."""
        located = self._locate(tree, path, test, state)
        if located is None:
            return []
        statement = located.call.parent
        if statement is None or statement.type != "expression_statement":
            return []
        edits: list[tuple[int, int, bytes]] = []
        if site is not None and literal is not None:
            edits.append((site.start, site.end, literal))
        title = _quoted(located.title_node, new_name).encode()
        if located.row is None:
            start, end = span(statement)
            if any(not start <= e[0] < e[1] <= end for e in edits):
                return []
            edits.append((*span(located.title_node), title))
            text = replace_spans(source[start:end], start, edits)
        else:
            text = self._each_copy(source, located, title, edits)
            if not text:
                return []
        return [Copy(statement.end_byte, b"\n" + line_indent(source, statement.start_byte) + text)]

    def _each_copy(
        self, source: bytes, located: _Test, title: bytes, edits: list[tuple[int, int, bytes]]
    ) -> bytes:
        """``test(<title>, () => (<fn>)(<row>));`` for one row of ``test.each``."""
        each = _field(located.call, "function")
        callee = _field(each, "function") if each is not None else None
        if callee is None or callee.type != "member_expression":
            return b""
        base = _field(callee, "object")
        row = located.row
        if row.type == "array":
            items = row.named_children
            args = (items[0].start_byte, items[-1].end_byte) if items else None
        else:
            args = span(row)
        parts = [span(located.fn)] + ([args] if args else [])
        for e in edits:
            if not any(a <= e[0] < e[1] <= b for a, b in parts):
                return b""

        def piece(s: tuple[int, int]) -> bytes:
            mine = [e for e in edits if s[0] <= e[0] < e[1] <= s[1]]
            return replace_spans(source[s[0] : s[1]], s[0], mine)

        fn = piece(span(located.fn))
        call_args = piece(args) if args else b""
        return _text(base).encode() + b"(" + title + b", () => (" + fn + b")(" + call_args + b"));"

    def copy_id(self, test: str, new_name: str) -> str:
        """The id of a copy: the test's describe titles and the new title, in the form (Jest's
        or Mocha's) the test's id has; the writer must have located the test (in
        :meth:`sites` or :meth:`copies`) unless the id is in Jest's form with a describe."""
        file, _, rest = test.partition("::")
        named = self._named.get(test)
        if named is None:
            if " > " in rest:
                return f"{file}::{rest.rsplit(' > ', 1)[0]} > {new_name}"
            raise UsageError(
                f"copy_id({test!r}): the test was not located",
                hint="call sites() or copies() on its file first",
            )
        style, describes = named
        if style == "jest":
            return f"{file}::{' > '.join([*(d for d in describes if d), new_name])}"
        return f"{file}::{' '.join([*describes, new_name])}"

    def new_name(self, test: str, rng: random.Random, taken: set[str]) -> str:
        """``parses nested header``: two to four lower-case words."""
        while True:
            name = canary_name(rng, "snake").replace("_", " ")
            if name not in taken:
                return name


def _directive(statement: Any) -> bool:
    children = statement.named_children
    return bool(children) and children[0].type == "string"


def _narrow_type(declarator: Any) -> bool:
    """Does a TypeScript declaration give its value a type narrower than ``string``/
    ``number``/``boolean`` (a literal union, an enum-like alias)?"""
    annotation = _field(declarator, "type")
    if annotation is None:
        return False
    kinds = [c.type for c in annotation.named_children]
    return kinds != ["predefined_type"]


def _quoted(node: Any, value: str) -> str:
    """``value`` as a string literal quoted as ``node`` is (a plain template, ``'``, ``"``)."""
    quote = _text(node)[:1]
    if quote not in ("'", '"', "`"):
        quote = "'"
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    if quote == "`":
        escaped = escaped.replace("${", "\\${")
    return quote + escaped + quote


def _param_names(fn: Any) -> list[str]:
    """The names of a function's parameters in order ("" for a pattern)."""
    params = _field(fn, "parameters")
    single = _field(fn, "parameter")
    if single is not None:
        return [_text(single)]
    out = []
    for p in params.named_children if params is not None else []:
        if p.type == "identifier":
            out.append(_text(p))
        elif p.type in ("required_parameter", "optional_parameter"):
            pattern = _field(p, "pattern")
            out.append(
                _text(pattern) if pattern is not None and pattern.type == "identifier" else ""
            )
        elif p.type == "assignment_pattern":
            left = _field(p, "left")
            out.append(_text(left) if left is not None and left.type == "identifier" else "")
        else:
            out.append("")
    return out
