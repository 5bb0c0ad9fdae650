"""Which literals of a JavaScript/TypeScript test are its expected values, and which are
no site.

The reader of one located test's function (:class:`_Reader`): the arguments of Jest's and
chai's matchers, of node's and chai's asserts, of supertest's ``.expect``, the ``const``s they
name, each with the literals the value is made of (:func:`is_value`,
:func:`value_literals`); and the spans no decoy may change (messages, ``console`` output,
module paths, TypeScript types, ``case`` labels, directives). Split from
:mod:`swe_forge.ecosystems.js.canary`, whose writer turns these into sites.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.canaries import assigned_names, negates_plainly, span
from swe_forge.ecosystems.js.canary_locate import _args, _chain, _field, _Test, _text

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
#: Literal node types (numbers are ints or floats by how they are written).
_KINDS = {
    "string": "string",
    "template_string": "string",
    "number": "number",
    "true": "bool",
    "false": "bool",
}


# ---------------------------------------------------------------------------- the reader


class _Reader:
    """One test function read: expected values and excluded spans."""

    def __init__(self, test: _Test) -> None:
        self.test = test
        self.excluded: list[tuple[int, int]] = []
        self.expected: set[tuple[int, int]] = set()
        self.guards: list[Any] = []  # truthiness assertions' conditions (see the writer's find)
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
                self._guard(args[0], negative=False)
            self._exclude(args[1:])
            return
        if name in ("notOk", "isNotOk", "isFalse") and args:
            self._guard(args[0], negative=True)
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
        plain = not any(link.endswith("()") for link in links)
        if name in ("toBeTruthy", "toBeFalsy") and plain and node is not None:
            # expect(cond).toBeTruthy(): the condition is the expectation (a guard).
            subject = _args(node) if node.type == "call_expression" else []
            if subject:
                # `expect(!x)` is a tell either way (red team, session 20).
                self._guard(subject[0], negative=True)
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

    def _guard(self, node: Any, *, negative: bool) -> None:
        """A truthiness assertion's condition as a guard site, unless its decoy would read as no
        author writes (a function: always truthy; a double negative: see negates_plainly)."""
        if node.type in ("arrow_function", "function_expression", "function"):
            return
        if negative and not negates_plainly(_text(node)):
            return
        self.guards.append(node)

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
