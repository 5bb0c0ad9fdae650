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
from functools import cache
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import canary_name
from swe_forge.ecosystems.canaries import (
    Copy,
    Found,
    Site,
    TreeWriter,
    inside,
    perturbed_body,
    perturbed_quoted_char,
    renamed_copy,
    span,
    with_guards,
)
from swe_forge.ecosystems.java.canary_reader import _KINDS, _field, _Reader, _text

#: Annotations of a test method.
_TEST_ANNOTATIONS = frozenset(
    ["Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate", "Property"]
)
_SOURCES = frozenset(["ValueSource", "CsvSource"])
_INDEX = re.compile(r"\[(\d+)\]")


def method_base(name: str) -> str:
    """``check[2]`` / ``check(String)[1]`` -> ``check``."""
    return re.split(r"[\[(]", name, maxsplit=1)[0]


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
        if body is None:
            return out
        # `assertTrue(parsed.isEmpty())`: the assertTrue/assertFalse conditions (guards).
        return with_guards(out, [span(g) for g in reader.guards])

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


@cache
def writer() -> JavaCanaryWriter:
    """The ecosystem's one writer (its adapter's ``canary_writer()``): one instance per
    process, as the writer remembers what it has read."""
    return JavaCanaryWriter()
