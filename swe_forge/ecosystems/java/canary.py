"""Java's canary writer: the literals of a JUnit (4 or 5) or TestNG test method.

A test id is ``<class FQN>::<method>``, nested classes joined with ``$``
(``org.x.FooTest$Inner::parses``), a parameterized invocation with Surefire's suffix
(``check(String)[2]``, ``check[0]``); the method is in the outer class's file, the
package's directory under a test root. Which framework a file uses (its imports) says where
an assertion's expected value and message are. Expected (role ``expected``):

- JUnit's ``assertEquals``/``assertArrayEquals``/``assertIterableEquals``/
  ``assertLinesMatch`` (expected first; JUnit 4's message first, JUnit 5's last, a ``double``
  delta after the two), TestNG's ``assertEquals(actual, expected)``: the value side of the
  two, the framework's order when both are values;
- in ``assertTrue``: the value side of ``==``, of ``x.equals(y)``, the argument of
  ``.contains``/``.startsWith``/``.endsWith``/``.equalsIgnoreCase``/``.containsKey``;
- AssertJ and Truth chains on ``assertThat(actual)``: the arguments of ``isEqualTo``,
  ``hasSize``, ``contains``, ``containsExactly``, ``startsWith``, ``hasMessage``,
  ``isCloseTo`` (not its offset)...; Hamcrest's ``assertThat(actual, matcher)``: the values in
  ``is``, ``equalTo``, ``contains``, ``hasItem``, ``hasSize``, ``closeTo``... (not under
  ``not``);
- a local variable (``String expected = ...``) used there.

Inside an expected value, literals reached through arrays, ``List.of``/``Arrays.asList``/
``Map.of``..., ``new BigDecimal("1.5")``-like JDK values, casts and arithmetic are expected;
under any other call they are ``other``. Every other literal of the method is ``other`` (and
the rows of a ``@ValueSource``/``@CsvSource``: the invocation's own row when the id has an
index), except messages (of assertions, ``fail``, ``AssertionError``, AssertJ's ``as``/
``withFailMessage``), printing and logging, annotations and ``case`` labels.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
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
    perturbed_body,
    perturbed_quoted_char,
    renamed_copy,
    span,
)

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
#: Annotations of a test method.
_TEST_ANNOTATIONS = frozenset(
    ["Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate", "Property"]
)
_SOURCES = frozenset(["ValueSource", "CsvSource"])
_LOGGERS = re.compile(r"^(log|logger|LOG|LOGGER|Log|Logger)$")
_INDEX = re.compile(r"\[(\d+)\]")


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


def _args(call: Any) -> list[Any]:
    args = _field(call, "arguments")
    if args is None:
        return []
    return [a for a in args.named_children if a.type not in ("line_comment", "block_comment")]


def method_base(name: str) -> str:
    """``check[2]`` / ``check(String)[1]`` -> ``check``."""
    return re.split(r"[\[(]", name, maxsplit=1)[0]


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


class JavaCanaryWriter(TreeWriter):
    """The canary writer of Java tests (see the module docstring)."""

    def grammar(self, path: str) -> str:
        """Java."""
        return "java"

    def test_files(self, test: str, candidates: list[str]) -> list[str]:
        """The file of the test's outer class: ``<package dirs>/<Outer>.java``."""
        outer = test.split("::", 1)[0].split("$", 1)[0]
        rel = outer.replace(".", "/") + ".java"
        return [c for c in candidates if c == rel or c.endswith("/" + rel)]

    def literal_kind(self, node: Any) -> str | None:
        """Strings (text blocks too), chars, integers, floats (not hex floats), bools."""
        return _KINDS.get(node.type)

    def literal_text(self, node: Any, text: str, kind: str, rng: random.Random) -> str | None:
        """The same literal form (quotes, escapes, base, ``L``/``f``/``d``) with another
        value."""
        if kind == "bool":
            return "false" if text == "true" else "true"
        if kind == "char":
            return perturbed_quoted_char(text, 0, rng)
        if kind == "string":
            return perturbed_body(node, ("escape_sequence",), rng)
        if kind == "int":
            long = text[-1:] in ("l", "L")
            body, suffix = (text[:-1], text[-1:]) if long else (text, "")
            decimal = body[:2].lower() not in ("0x", "0b") and not (
                len(body) > 1 and body[0] == "0"
            )
            bits = 63 if long else 31
            maximum = (1 << bits) - 1 if decimal else (1 << (bits + 1)) - 1
            new = syntax.perturb_int_text(body, rng, maximum=maximum, legacy_octal=True)
            return None if new is None else new + suffix
        suffix = text[-1:] if text[-1:] in ("f", "F", "d", "D") else ""
        body = text[: len(text) - len(suffix)]
        if "." in body or "e" in body.lower():
            single = suffix in ("f", "F")
            top = syntax.FLOAT32_MAX if single else syntax.FLOAT_MAX
            new = syntax.perturb_float_text(body, rng, maximum=top)
        else:
            new = syntax.perturb_int_text(body, rng)
        return None if new is None else new + suffix

    def find(
        self, tree: Any, source: bytes, path: str, test: str, state: Any = None
    ) -> list[Found] | None:
        """The literals of a test method (see the module docstring)."""
        method = self._locate(tree.root_node, path, test)
        if method is None:
            return None
        reader = _Reader(tree.root_node, method)
        reader.read()
        out = []
        body = _field(method, "body")
        if body is not None:
            for node in self.literals(body):
                if inside(node, reader.excluded):
                    continue
                s = span(node)
                kind = self._kind(node)
                role = "expected" if s in reader.expected else "other"
                out.append(Found(s[0], s[1], kind, role))
        out += self._source_rows(method, test)
        return out

    def _kind(self, node: Any) -> str:
        return _KINDS[node.type]

    def _source_rows(self, method: Any, test: str) -> list[Found]:
        """The literals of a ``@ValueSource``/``@CsvSource`` (the invocation's own row when
        the id has an index: ``[k]`` is the k-th row from 1)."""
        m = _INDEX.search(test.split("::", 1)[1])
        row = int(m.group(1)) - 1 if m else None
        out = []
        modifiers = next((c for c in method.named_children if c.type == "modifiers"), None)
        for ann in modifiers.named_children if modifiers is not None else []:
            if ann.type != "annotation" or _text(_field(ann, "name")) not in _SOURCES:
                continue
            arrays = [n for n in syntax.walk(ann) if n.type == "element_value_array_initializer"]
            if len(arrays) != 1:
                continue
            items = [c for c in arrays[0].named_children if c.type in _KINDS]
            if row is not None:
                items = items[row : row + 1]
            for node in items:
                s = span(node)
                out.append(Found(s[0], s[1], self._kind(node), "other"))
        return out

    def _locate(self, root: Any, path: str, test: str) -> Any:
        """The method of a test id in a file (None when it is not there)."""
        cls, _, name = test.partition("::")
        if not name or not self.test_files(test, [path]):
            return None
        outer = cls.split("$", 1)[0]
        package = outer.rsplit(".", 1)[0] if "." in outer else ""
        declared = next((n for n in root.named_children if n.type == "package_declaration"), None)
        got = _text(next(iter(declared.named_children), None)) if declared is not None else ""
        if got != package:
            return None
        scope = root
        for simple in [outer.rsplit(".", 1)[-1], *cls.split("$")[1:]]:
            scope = _type_named(scope, simple)
            if scope is None:
                return None
        base = method_base(name)
        params = re.match(r"[^(\[]*\(([^)]*)\)", name)
        candidates = []
        for body in _bodies(scope):
            for node in body.named_children:
                if node.type == "method_declaration" and _text(_field(node, "name")) == base:
                    candidates.append(node)
        tests = [n for n in candidates if _is_test(n)] or candidates
        if params is not None and len(tests) > 1:
            count = len([p for p in params.group(1).split(",") if p.strip()])
            tests = [n for n in tests if _param_count(n) == count] or tests
        return tests[0] if tests else None

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
        """The method (annotations included), renamed, after it in its class."""
        method = self._locate(tree.root_node, path, test)
        if method is None:
            return []
        start, end = span(method)
        return renamed_copy(source, start, end, _field(method, "name"), new_name, site, literal)

    def copy_id(self, test: str, new_name: str) -> str:
        """``<class>::<new name>``, a parameterized suffix (``(String)[1]``) kept."""
        cls, _, name = test.partition("::")
        return f"{cls}::{new_name}{name[len(method_base(name)) :]}"

    def new_name(self, test: str, rng: random.Random, taken: set[str]) -> str:
        """``parseNestedHeader`` (``testParseNestedHeader`` beside JUnit 3-style names)."""
        base = method_base(test.partition("::")[2])
        while True:
            words = canary_name(rng)
            name = "test" + words if base.startswith("test") else words[0].lower() + words[1:]
            if name not in taken:
                return name


def _type_named(scope: Any, name: str) -> Any:
    kinds = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration")
    for body in [scope] if scope.type == "program" else _bodies(scope):
        for node in body.named_children:
            if node.type in kinds and _text(_field(node, "name")) == name:
                return node
    return None


def _bodies(decl: Any) -> list[Any]:
    """The member lists of a type declaration (an enum's are after its constants)."""
    body = _field(decl, "body")
    if body is None:
        return []
    out = [body]
    out += [c for c in body.named_children if c.type == "enum_body_declarations"]
    return out


def _is_test(method: Any) -> bool:
    modifiers = next((c for c in method.named_children if c.type == "modifiers"), None)
    for ann in modifiers.named_children if modifiers is not None else []:
        kind = ann.type in ("annotation", "marker_annotation")
        if kind and _text(_field(ann, "name")).rsplit(".", 1)[-1] in _TEST_ANNOTATIONS:
            return True
    name = _text(_field(method, "name"))
    return name.startswith("test") and _param_count(method) == 0


def _param_count(method: Any) -> int:
    params = _field(method, "parameters")
    return len(params.named_children) if params is not None else 0
