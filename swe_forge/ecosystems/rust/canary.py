"""Rust's canary writer: the literals of a ``#[test] fn`` and which are expected.

A test id is ``<target file>::<module path>::<fn>`` (``tests/api.rs::parse_empty``,
``tests/words/main.rs::edge::empty``); the module path goes through inline ``mod x { }``
blocks and ``mod x;`` files (``<target dir>/x.rs`` or ``<target dir>/x/mod.rs``, and on down).
The function is a ``fn`` with a test attribute (``#[test]``, ``#[tokio::test]``...).

Assertion macros are token trees to the parser; their arguments are parsed again as
expressions to tell the compared values from the message. Expected (role ``expected``):

- the side of ``assert_eq!`` / ``debug_assert_eq!`` / ``prop_assert_eq!`` that is a value
  (a literal, ``vec![...]``, an array, tuple or struct of values, ``Some(..)``/``Ok(..)``/a
  variant, ``String::from``, ``.to_string()``..., a ``let`` binding of one), whatever the order;
- the value side of ``==`` in ``assert!``, the argument of ``.contains(..)``/
  ``.starts_with(..)``/``.ends_with(..)``/``.eq(..)`` there (not under ``!``);
- ``#[should_panic(expected = "...")]``.

Every other literal of the function is ``other``, except what never decides the outcome or
would not compile: assertion messages and their format arguments, ``panic!``/``println!``/
``dbg!``/logging macros, ``.expect("...")`` messages, other attributes, array lengths.
``assert_ne!`` compares nothing a twin can use: its operands are ``other``.

Parts: ``canary_reader`` (one test function read: its assertion macros' arguments parsed
again, expected values and excluded spans); this module is the writer: locating a test's
function, its literals' kinds and perturbed forms, and its renamed copies.
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
from swe_forge.ecosystems.rust.canary_reader import (
    OPPOSITE_MACROS,
    _field,
    _Reader,
    _text,
    format_string,
)

_INT_SUFFIX = re.compile(r"_*(u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize)\Z")
_FLOAT_SUFFIX = re.compile(r"_*(f32|f64)\Z")
_MAX = {
    "u8": 2**8 - 1,
    "u16": 2**16 - 1,
    "u32": 2**32 - 1,
    "u64": 2**64 - 1,
    "u128": 2**128 - 1,
    "usize": 2**64 - 1,
    "i8": 2**7 - 1,
    "i16": 2**15 - 1,
    "i32": 2**31 - 1,
    "i64": 2**63 - 1,
    "i128": 2**127 - 1,
    "isize": 2**63 - 1,
}
#: Test attributes: ``#[test]``, ``#[tokio::test]``, ``#[test_log::test]``...
_TEST_ATTR = re.compile(r"(?:\w+::)*test\Z")


def module_prefix(target: str, path: str) -> list[str] | None:
    """The module path of the file ``path`` in the crate whose root is ``target`` ([] for the
    root itself; None when ``path`` cannot be a module of it)."""
    if path == target:
        return []
    root = target.rsplit("/", 1)[0] + "/" if "/" in target else ""
    if not path.startswith(root) or not path.endswith(".rs"):
        return None
    rel = path[len(root) : -3]
    parts = rel.split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if not parts or parts[-1] == "main" or not all(p.isidentifier() for p in parts):
        return None
    return parts


class RustCanaryWriter(TreeWriter):
    """The canary writer of Rust integration tests (see the module docstring)."""

    def grammar(self, path: str) -> str:
        """Rust."""
        return "rust"

    def _negated(self, tree: Any, source: bytes, site: Site) -> bytes | None:
        """A guard that is an equality assertion's name (``assert_eq``) becomes its opposite
        (``assert_ne``); a condition is negated as every language's is."""
        opposite = OPPOSITE_MACROS.get(site.text)
        if opposite is None:
            return super()._negated(tree, source, site)
        return opposite.encode("utf-8")

    def test_files(self, test: str, candidates: list[str]) -> list[str]:
        """The target file, and the module files of the target's directory on the test's
        module path."""
        target, _, name = test.partition("::")
        mods = name.split("::")[:-1]
        out = []
        for path in candidates:
            prefix = module_prefix(target, path)
            if prefix is not None and prefix == mods[: len(prefix)]:
                out.append(path)
        return out

    def literal_kind(self, node: Any) -> str | None:
        """Strings (``b"..."``: bytes), raw strings, chars, integers, floats, bools."""
        kind = node.type
        if kind in ("string_literal", "raw_string_literal"):
            return "bytes" if _text(node).startswith("b") else "string"
        if kind == "char_literal":
            return "char"
        if kind == "integer_literal":
            parent, before = node.parent, node.prev_sibling
            if (parent is not None and parent.type == "field_expression") or (
                before is not None and before.type == "."
            ):
                # A tuple field's index (`pair.1`, `self.0`, in a macro's tokens too): no
                # value, and another index names a field that is not there (the decoy would
                # not build).
                return None
            text = _text(node)
            if not text.lower().startswith("0x") and _FLOAT_SUFFIX.search(text):
                return "float"
            return "int"
        if kind == "float_literal":
            return "float"
        if kind == "boolean_literal":
            return "bool"
        return None

    def literal_text(self, node: Any, text: str, kind: str, rng: random.Random) -> str | None:
        """The same literal form (prefix, raw-string hashes, suffix) with another value."""
        if kind == "bool":
            return "false" if text == "true" else "true"
        if kind == "char":
            return perturbed_quoted_char(text, text.index("'"), rng)
        if node.type == "raw_string_literal":
            content = next((c for c in node.children if c.type == "string_content"), None)
            if content is None:
                return None
            s, e = content.start_byte - node.start_byte, content.end_byte - node.start_byte
            data = bytes(node.text or b"")
            content_text = syntax.perturb_text(data[s:e].decode(), rng)
            return data[:s].decode() + content_text + data[e:].decode()
        if kind in ("string", "bytes"):
            return perturbed_body(node, ("escape_sequence",), rng)
        hexa = text.lower().startswith(("0x", "0o", "0b"))
        m = _INT_SUFFIX.search(text) or (None if hexa else _FLOAT_SUFFIX.search(text))
        body, suffix = (text[: m.start()], text[m.start() :]) if m else (text, "")
        if kind == "float" and not hexa and ("." in body or "e" in body.lower()):
            top = syntax.FLOAT32_MAX if suffix.endswith("f32") else syntax.FLOAT_MAX
            new = syntax.perturb_float_text(body, rng, maximum=top)
        else:
            maximum = _MAX.get(suffix.lstrip("_"))
            new = syntax.perturb_int_text(body, rng, maximum=maximum)
        return None if new is None else new + suffix

    def find(
        self, tree: Any, source: bytes, path: str, test: str, state: Any = None
    ) -> list[Found] | None:
        """The literals of a test function (see the module docstring)."""
        located = self._locate(tree, path, test)
        if located is None:
            macro = self._macro_test(tree, path, test)
            return None if macro is None else self._macro_sites(macro[0])
        func, attributes = located
        reader = _Reader(func, attributes)
        reader.read()
        out = []
        body = _field(func, "body")
        regions = [r for r in [body, *attributes] if r is not None]
        for region in regions:
            for node in self.literals(region):
                s = span(node)
                if region is not body and s not in reader.expected:
                    continue  # of the attributes, only should_panic's expectation
                if region is body and (inside(node, reader.excluded) or format_string(node)):
                    continue
                kind = self.literal_kind(node)
                if kind is not None:
                    role = "expected" if s in reader.expected else "other"
                    out.append(Found(s[0], s[1], kind, role))
        if body is None:
            return out
        # `assert!(parsed.is_err())`: the test's own assert! conditions (guards).
        lo, hi = span(body)
        return with_guards(out, [(s, e) for s, e in reader.guards if lo <= s < e <= hi])

    def _scope(self, tree: Any, path: str, test: str) -> tuple[Any, str] | None:
        """The module body a test's function is declared in, and its name."""
        target, _, name = test.partition("::")
        parts = name.split("::")
        prefix = module_prefix(target, path)
        if prefix is None or parts[: len(prefix)] != prefix or len(parts) <= len(prefix):
            return None
        scope = tree.root_node
        for mod in parts[len(prefix) : -1]:
            found = None
            for node in scope.named_children:
                if node.type == "mod_item" and _text(_field(node, "name")) == mod:
                    found = _field(node, "body")
            if found is None:
                return None
            scope = found
        return scope, parts[-1]

    def _locate(self, tree: Any, path: str, test: str) -> tuple[Any, list[Any]] | None:
        """The test function and its attributes."""
        scoped = self._scope(tree, path, test)
        if scoped is None:
            return None
        scope, name = scoped
        children = list(scope.named_children)
        for i, node in enumerate(children):
            if node.type != "function_item" or _text(_field(node, "name")) != name:
                continue
            attributes: list[Any] = []
            j = i - 1
            while j >= 0 and children[j].type in (
                "attribute_item",
                "line_comment",
                "block_comment",
            ):
                if children[j].type == "attribute_item":
                    attributes.insert(0, children[j])
                j -= 1
            if any(_is_test_attribute(a) for a in attributes):
                return node, attributes
        return None

    def _macro_test(self, tree: Any, path: str, test: str) -> tuple[Any, Any] | None:
        """A test a macro generates: the invocation in the test's module whose first token
        is the test's name (``req! { urltest_174, b"GET ...", |req| { ... } }``), and that
        name's token. None when there is no such invocation."""
        scoped = self._scope(tree, path, test)
        if scoped is None:
            return None
        scope, name = scoped
        for node in scope.named_children:
            if node.type != "macro_invocation":
                continue
            tokens = next((c for c in node.named_children if c.type == "token_tree"), None)
            first = next(iter(tokens.named_children), None) if tokens is not None else None
            if first is not None and first.type == "identifier" and _text(first) == name:
                return node, first
        return None

    def _macro_sites(self, macro: Any) -> list[Found]:
        """The literals of a macro-generated test: the invocation's tokens read as the
        arguments of a call (the test's name, its inputs, a closure with its assertions),
        expected where the assertions compare with them; [] when they are no expressions."""
        tokens = next((c for c in macro.named_children if c.type == "token_tree"), None)
        if tokens is None:
            return []
        data = bytes(tokens.text or b"")
        if len(data) < 2:
            return []
        head = b"fn _f() {\n_g("
        wrapped = syntax.parse("rust", head + data[1:-1] + b");\n}")
        if wrapped.root_node.has_error or not wrapped.root_node.named_children:
            return []
        func = wrapped.root_node.named_children[0]
        body = _field(func, "body")
        if func.type != "function_item" or body is None:
            return []
        shift = tokens.start_byte + 1 - len(head)
        reader = _Reader(func, [])
        reader.read()
        out = []
        for node in self.literals(body):
            if inside(node, reader.excluded) or format_string(node):
                continue
            kind = self.literal_kind(node)
            if kind is not None:
                s, e = span(node)
                role = "expected" if (s, e) in reader.expected else "other"
                out.append(Found(s + shift, e + shift, kind, role))
        return with_guards(out, [(s + shift, e + shift) for s, e in reader.guards])

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
        """The function and its attributes, renamed, after the function (a macro-generated
        test: the invocation, its first token renamed, after the invocation)."""
        located = self._locate(tree, path, test)
        if located is None:
            macro = self._macro_test(tree, path, test)
            if macro is None:
                return []
            node, name = macro
            end = node.end_byte
            after = node.next_sibling
            if after is not None and after.type == "empty_statement":
                end = after.end_byte  # `case!(name, ...);`: the `;` goes with the copy
            return renamed_copy(source, node.start_byte, end, name, new_name, site, literal)
        func, attributes = located
        start = attributes[0].start_byte if attributes else func.start_byte
        end = func.end_byte
        return renamed_copy(source, start, end, _field(func, "name"), new_name, site, literal)

    def copy_id(self, test: str, new_name: str) -> str:
        """The test's id with its function's name replaced."""
        head, sep, _ = test.rpartition("::")
        return f"{head}{sep}{new_name}"

    def new_name(self, test: str, rng: random.Random, taken: set[str]) -> str:
        """``parse_nested_header``: two to four snake_case words."""
        while True:
            name = canary_name(rng, "snake")
            if name not in taken:
                return name


def _is_test_attribute(attr: Any) -> bool:
    inner = next((c for c in attr.named_children if c.type == "attribute"), None)
    if inner is None:
        return False
    path = next(iter(inner.named_children), None)
    return path is not None and bool(_TEST_ATTR.match(_text(path)))


@cache
def writer() -> RustCanaryWriter:
    """The ecosystem's one writer (its adapter's ``canary_writer()``): one instance per
    process, as the writer remembers what it has read."""
    return RustCanaryWriter()
