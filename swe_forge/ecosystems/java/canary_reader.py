"""The reading of one Java test method for the canary writer: which of its literals are the
expected values of its assertions and which spans hold no site (messages, printing and
logging, annotations, ``case`` labels).

The rules it follows are those of :mod:`swe_forge.ecosystems.java.canary`'s docstring (the
module docstring the comments below refer to): JUnit's, TestNG's, AssertJ's, Truth's and
Hamcrest's assertions, the framework told by a file's imports, and what a value written in
a test is. Kept apart from the writer (which finds a test's method, perturbs literals and
copies methods) because the assertion tables and the reader are most of its length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.canaries import assigned_names, negates_plainly, span

_KINDS = {
    "string_literal": "string",
    "character_literal": "char",
    "decimal_integer_literal": "int",
    "hex_integer_literal": "int",
    "octal_integer_literal": "int",
    "binary_integer_literal": "int",
    "decimal_floating_point_literal": "float",
    "true": "bool",
    "false": "bool",
}
#: Assertion -> count of the values it takes (messages and deltas aside).
_ARITY = {
    "assertEquals": 2,
    "assertArrayEquals": 2,
    "assertIterableEquals": 2,
    "assertLinesMatch": 2,
    "assertNotEquals": 2,
    "assertSame": 2,
    "assertNotSame": 2,
    "assertThrows": 2,
    "assertThrowsExactly": 2,
    "assertInstanceOf": 2,
    "assertTimeout": 2,
    "assertTrue": 1,
    "assertFalse": 1,
    "assertNull": 1,
    "assertNotNull": 1,
    "assertDoesNotThrow": 1,
    "fail": 0,
}
_COMPARING = frozenset(
    ["assertEquals", "assertArrayEquals", "assertIterableEquals", "assertLinesMatch"]
)
_DELTA = frozenset(["assertEquals", "assertArrayEquals", "assertNotEquals"])
#: Methods in ``assertTrue`` whose argument is the expected value.
_EXPECTING = frozenset(["contains", "startsWith", "endsWith", "equalsIgnoreCase", "containsKey"])
#: The start of an AssertJ/Truth chain.
_CHAIN_START = frozenset(
    [
        "assertThat",
        "assertThatThrownBy",
        "assertThatCode",
        "assertThatObject",
        "assertThatExceptionOfType",
        "then",
        "thenThrownBy",
        "that",
        "assume",
    ]
)
#: Chain methods whose arguments are expected values (-> how many of them, None: all).
_CHAIN_EXPECTING: dict[str, int | None] = {
    **dict.fromkeys(
        [
            "isEqualTo",
            "isEqualToIgnoringCase",
            "isEqualToIgnoringWhitespace",
            "isEqualToNormalizingWhitespace",
            "isEqualByComparingTo",
            "isSameAs",
            "hasSize",
            "hasLength",
            "contains",
            "containsExactly",
            "containsExactlyInAnyOrder",
            "containsExactlyElementsOf",
            "containsOnly",
            "containsOnlyOnce",
            "containsSequence",
            "containsSubsequence",
            "containsIgnoringCase",
            "containsEntry",
            "containsKey",
            "containsKeys",
            "containsValue",
            "containsAll",
            "startsWith",
            "endsWith",
            "hasMessage",
            "hasMessageContaining",
            "hasMessageStartingWith",
            "hasMessageEndingWith",
            "hasToString",
            "hasValue",
            "matches",
            "isIn",
            "hasLineCount",
            "containsPattern",
        ],
        None,
    ),
    "isCloseTo": 1,
}
#: Chain methods whose arguments are messages.
_CHAIN_MESSAGES = frozenset(
    ["as", "describedAs", "withFailMessage", "overridingErrorMessage", "assertWithMessage"]
)
#: Hamcrest matchers whose arguments are expected values (-> how many, None: all).
_MATCHERS: dict[str, int | None] = {
    **dict.fromkeys(
        [
            "is",
            "equalTo",
            "contains",
            "containsString",
            "containsInAnyOrder",
            "containsInRelativeOrder",
            "hasItem",
            "hasItems",
            "hasSize",
            "startsWith",
            "endsWith",
            "arrayContaining",
            "arrayContainingInAnyOrder",
            "arrayWithSize",
            "hasEntry",
            "hasKey",
            "hasValue",
            "equalToIgnoringCase",
            "equalToIgnoringWhiteSpace",
            "equalToCompressingWhiteSpace",
            "hasToString",
            "comparesEqualTo",
            "stringContainsInOrder",
            "matchesPattern",
            "allOf",
            "anyOf",
            "both",
            "either",
            "and",
            "or",
            "oneOf",
            "isOneOf",
            "hasLength",
            "samePropertyValuesAs",
        ],
        None,
    ),
    "closeTo": 1,
}
#: ``X.m(...)`` calls that make values (collections, boxed and big numbers, durations).
_VALUE_OWNERS = frozenset(
    [
        "List",
        "Set",
        "Map",
        "Arrays",
        "Collections",
        "Optional",
        "ImmutableList",
        "ImmutableSet",
        "ImmutableMap",
        "ImmutableSortedSet",
        "Lists",
        "Sets",
        "Maps",
        "Stream",
        "IntStream",
        "LongStream",
        "BigDecimal",
        "BigInteger",
        "Integer",
        "Long",
        "Double",
        "Float",
        "Short",
        "Byte",
        "Character",
        "Boolean",
        "String",
        "Duration",
        "Map.Entry",
        "Entry",
    ]
)
_VALUE_FUNCTIONS = frozenset(["asList", "entry", "newArrayList", "newHashSet", "immutableEntry"])
#: ``new X(...)`` of these JDK types is a value.
_VALUE_CLASSES = frozenset(
    [
        "BigDecimal",
        "BigInteger",
        "String",
        "StringBuilder",
        "ArrayList",
        "LinkedList",
        "HashSet",
        "LinkedHashSet",
        "TreeSet",
        "HashMap",
        "LinkedHashMap",
        "TreeMap",
        "Integer",
        "Long",
        "Double",
        "Float",
        "Short",
        "Byte",
        "Character",
        "Boolean",
        "AbstractMap.SimpleEntry",
        "SimpleEntry",
    ]
)
_STRING_METHODS = frozenset(["getBytes", "toCharArray", "chars", "toString", "trim"])
_THROUGH = frozenset(
    [
        "unary_expression",
        "parenthesized_expression",
        "array_creation_expression",
        "array_initializer",
        "argument_list",
        "cast_expression",
        "binary_expression",
    ]
)
_LOGGERS = re.compile(r"^(log|logger|LOG|LOGGER|Log|Logger)$")


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


def _args(call: Any) -> list[Any]:
    args = _field(call, "arguments")
    if args is None:
        return []
    return [a for a in args.named_children if a.type not in ("line_comment", "block_comment")]


def framework(root: Any) -> str:
    """``testng``, ``junit5`` or ``junit4`` (JUnit 3 and 4), by a file's imports."""
    imports = " ".join(_text(n) for n in root.named_children if n.type == "import_declaration")
    if "org.testng" in imports:
        return "testng"
    if "org.junit.jupiter" in imports:
        return "junit5"
    return "junit4"


def _has_string(node: Any) -> bool:
    """Is an argument a message: a string, a concatenation with one, a supplier lambda?"""
    if node.type in ("string_literal", "lambda_expression"):
        return True
    if node.type == "binary_expression":
        return any(n.type == "string_literal" for n in syntax.walk(node))
    return False


def _numeric(node: Any) -> bool:
    if node.type == "unary_expression":
        operand = _field(node, "operand")
        return operand is not None and _numeric(operand)
    return _KINDS.get(node.type) in ("int", "float")


class _Reader:
    """One test method read: expected values and excluded spans."""

    def __init__(self, root: Any, method: Any) -> None:
        self.method = method
        self.style = framework(root)
        self.excluded: list[tuple[int, int]] = []
        self.expected: set[tuple[int, int]] = set()
        self.guards: list[Any] = []  # assertTrue/assertFalse conditions (see the writer's find)
        self._assigned: set[str] | None = None

    def read(self) -> None:
        """Find the expected values and what is no site."""
        body = _field(self.method, "body")
        if body is None:
            return
        for node in syntax.walk(body):
            if node.type == "method_invocation":
                self._call(node)
            elif node.type in ("switch_label", "annotation", "marker_annotation", "modifiers"):
                self.excluded.append(span(node))
            elif node.type == "object_creation_expression":
                kind = _text(_field(node, "type"))
                if kind.endswith(("AssertionError", "AssertionFailedError")):
                    args = _field(node, "arguments")
                    if args is not None:
                        self.excluded.append(span(args))

    def _call(self, call: Any) -> None:
        name = _text(_field(call, "name"))
        obj = _field(call, "object")
        args = _args(call)
        owner = _text(obj)
        if (
            owner in ("System.out", "System.err")
            or _LOGGERS.match(owner.rsplit(".", 1)[-1])
            or name in _CHAIN_MESSAGES
        ):
            self._exclude(args)
            return
        if name == "assertAll" and args and args[0].type == "string_literal":
            self._exclude(args[:1])
            return
        if name in _CHAIN_EXPECTING and obj is not None and self._in_chain(obj):
            count = _CHAIN_EXPECTING[name]
            for arg in args if count is None else args[:count]:
                self._expected(arg)
            return
        if name == "assertThat" and len(args) >= 2:
            if len(args) >= 3:
                self._exclude(args[:1])  # the reason
            self._matcher(args[-1])
            return
        if name not in _ARITY:
            return
        values, messages = self._split(name, args)
        self._exclude(messages)
        if name in _COMPARING and len(values) >= 2:
            first, second = values[0], values[1]
            if self.style == "testng":
                self._pair(second, first)
            else:
                self._pair(first, second)
        elif name == "assertTrue" and values:
            self._condition(values[0])
        if name in ("assertTrue", "assertFalse") and values:
            cond = values[0]
            # A lambda or method reference (JUnit 5's BooleanSupplier) negated does not
            # compile; assertFalse(!x) is a double negative no one writes (red team, s20).
            plain = name == "assertTrue" or negates_plainly(_text(cond))
            if cond.type not in ("lambda_expression", "method_reference") and plain:
                self.guards.append(cond)

    def _split(self, name: str, args: list[Any]) -> tuple[list[Any], list[Any]]:
        """(values, messages) of an assertion's arguments (a delta is neither)."""
        arity = _ARITY[name]
        if len(args) <= arity:
            return args, []
        if self.style == "junit4":
            extra = len(args) - arity
            if name in _DELTA and extra == 1 and not _has_string(args[0]) and _numeric(args[-1]):
                return args[:arity], []  # (expected, actual, delta)
            return args[1 : 1 + arity], args[:1]
        tail = args[arity:]
        if name in _DELTA and tail and not _has_string(tail[0]):
            return args[:arity], tail[1:]  # (expected, actual, delta[, message])
        return args[:arity], tail

    def _in_chain(self, node: Any) -> bool:
        """Does an AssertJ/Truth chain start at ``assertThat(..)`` below ``node``?"""
        while node is not None and node.type == "method_invocation":
            if _text(_field(node, "name")) in _CHAIN_START:
                return True
            node = _field(node, "object")
        return False

    def _matcher(self, node: Any) -> None:
        if node.type != "method_invocation":
            return
        name = _text(_field(node, "name"))
        if name not in _MATCHERS:
            return
        count = _MATCHERS[name]
        args = _args(node)
        obj = _field(node, "object")
        if obj is not None and obj.type == "method_invocation":
            self._matcher(obj)  # both(x).and(y)
        for arg in args if count is None else args[:count]:
            if arg.type == "method_invocation" and _text(_field(arg, "name")) in _MATCHERS:
                self._matcher(arg)
            elif not (arg.type == "method_invocation" and _text(_field(arg, "name")) == "not"):
                self._expected(arg)

    def _condition(self, node: Any) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "lambda_expression":
                continue
            if current.type == "unary_expression" and _text(current).startswith("!"):
                continue
            if current.type == "binary_expression":
                op = _text(_field(current, "operator"))
                if op == "==":
                    self._pair(_field(current, "left"), _field(current, "right"))
                    continue
            if current.type == "method_invocation":
                name = _text(_field(current, "name"))
                obj = _field(current, "object")
                args = _args(current)
                if name == "equals" and obj is not None and len(args) == 1:
                    self._pair(args[0], obj)
                elif name in _EXPECTING and len(args) == 1:
                    self._expected(args[0])
                continue
            stack.extend(current.named_children)

    def _pair(self, preferred: Any, other: Any) -> None:
        """Two compared values: the one that is a value is expected (``preferred`` when
        both are)."""
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
        if node.type == "identifier":
            bound = self._binding(_text(node), node.start_byte)
            return self._resolve(bound, depth + 1) if bound is not None else None
        return node if is_value(node) else None

    def _binding(self, name: str, before: int) -> Any:
        """The value of the nearest local declaration of ``name`` before ``before`` (none
        for a variable assigned or incremented in the method)."""
        if self._assigned is None:
            self._assigned = assigned_names(
                self.method, ("assignment_expression",), ("update_expression",)
            )
        if name in self._assigned:
            return None
        best = None
        for node in syntax.walk(self.method):
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


def _value_call(node: Any) -> bool:
    name = _text(_field(node, "name"))
    obj = _field(node, "object")
    if obj is None:
        return name in _VALUE_FUNCTIONS
    owner = _text(obj)
    if owner in _VALUE_OWNERS or owner.rsplit(".", 1)[-1] in _VALUE_OWNERS:
        return True
    return name in _STRING_METHODS and is_value(obj)


def is_value(node: Any) -> bool:
    """Is an expression a value written in the test (see the module docstring)?"""
    kind = node.type
    if kind in _KINDS or kind in ("array_creation_expression", "array_initializer"):
        return True
    if kind in ("unary_expression", "parenthesized_expression", "cast_expression"):
        inner = node.named_children
        return bool(inner) and is_value(inner[-1])
    if kind == "binary_expression":
        op = _text(_field(node, "operator"))
        left, right = _field(node, "left"), _field(node, "right")
        return op in ("+", "-", "*", "/", "%", "<<", ">>", "|", "&", "^") and all(
            n is not None and is_value(n) for n in (left, right)
        )
    if kind == "method_invocation":
        return _value_call(node)
    if kind == "object_creation_expression":
        created = _text(_field(node, "type")).split("<", 1)[0]
        return created in _VALUE_CLASSES
    return False


def value_literals(root: Any) -> Iterator[tuple[int, int]]:
    """Spans of the literals a value is made of (not those under other calls)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _KINDS:
            yield span(node)
            continue
        if node.type == "method_invocation":
            if _value_call(node):
                obj = _field(node, "object")
                if obj is not None and is_value(obj):
                    stack.append(obj)
                args = _field(node, "arguments")
                if args is not None:
                    stack.append(args)
            continue
        if node.type == "object_creation_expression":
            if is_value(node):
                args = _field(node, "arguments")
                if args is not None:
                    stack.append(args)
            continue
        if node.type in _THROUGH:
            stack.extend(node.named_children)
