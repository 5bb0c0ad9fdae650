"""Go's canary writer: the literals of a ``func TestX(t *testing.T)`` and which are expected.

A test id is ``<package dir>::<TestName>[/<subtest>...]``; a subtest belongs to its top-level
function. Expected (role ``expected``):

- the literal side of a ``!=`` comparison whose ``if`` fails the test (``t.Error``,
  ``t.Fatalf``, ``panic``...), of ``==`` inside an assertion call (``assert.True(t, a == 1)``);
- the literal side of an equality call: ``reflect.DeepEqual``, ``cmp.Diff``,
  ``bytes.Equal``..., testify's and gotest.tools' ``Equal``/``Equalf``/``EqualValues``/
  ``Exactly``/``DeepEqual``/``ElementsMatch``/``JSONEq``/``InDelta`` (the side that is a
  value, whatever the argument order: testify puts the expected value first, gotest.tools
  last), ``Len``'s count, ``Contains``' element, ``EqualError``'s and ``ErrorContains``'
  text, quicktest's ``c.Assert(got, qt.Equals, want)``;
- a local (``want := ...``) or package-level name used there, and the table fields compared
  there (``tc.want``) or named like an expectation (``want``, ``expected``, ``exp``, ``out``,
  ``result``, ``res``...), in the rows of a table the test ranges over (a local one, or one
  declared at package level that no other function of the file uses).

Inside an expected value, literals reached through composite literals, conversions and
arithmetic are expected; under any other call they are ``other``. Every other literal of the
function is ``other``, except what never decides the outcome or would not compile: messages
(``t.Errorf`` and the other ``testing`` reporters, ``panic``, ``fmt``/``log`` printing, an
assertion's message arguments), subtest names (``t.Run``'s first argument and the table
fields or map keys it is made of), ``case`` labels, struct tags and array lengths. A subtest id
keeps only the rows whose name is the subtest's (and the ``t.Run`` literal of that name).

Parts: ``canary_reader`` (one test function read: its tables, expected values and excluded
spans), ``canary_syntax`` (node helpers, literal kinds, what is a value); this module is the
writer: finding a test's literals, and its renamed copies.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import canary_name
from swe_forge.ecosystems.canaries import (
    Copy,
    Found,
    Site,
    TreeWriter,
    line_indent,
    perturbed_body,
    perturbed_quoted_char,
    replace_spans,
    span,
)
from swe_forge.ecosystems.go.canary_reader import _Reader
from swe_forge.ecosystems.go.canary_syntax import _KINDS, _field, _text


class GoCanaryWriter(TreeWriter):
    """The canary writer of Go tests (see the module docstring)."""

    def grammar(self, path: str) -> str:
        """Go."""
        return "go"

    def test_files(self, test: str, candidates: list[str]) -> list[str]:
        """The ``_test.go`` files of the test's package directory."""
        pkg = test.split("::", 1)[0]
        return [c for c in candidates if c.endswith("_test.go") and _package_dir(c) == pkg]

    def literal_kind(self, node: Any) -> str | None:
        """Strings (interpreted and raw), ints, floats, runes, bools."""
        return _KINDS.get(node.type)

    def literal_text(self, node: Any, text: str, kind: str, rng: random.Random) -> str | None:
        """The same literal form with another value."""
        if kind == "bool":
            return "false" if text == "true" else "true"
        if kind == "int":
            return syntax.perturb_int_text(text, rng, legacy_octal=True)
        if kind == "float":
            if text[:2].lower() == "0x":
                return None
            return syntax.perturb_float_text(text, rng)
        if kind == "char":
            return perturbed_quoted_char(text, 0, rng)
        return perturbed_body(node, ("escape_sequence",), rng)

    def conflicts(self, node: Any, new_text: str) -> bool:
        """A map key equal to another key of its literal does not compile."""
        element = node.parent
        keyed = element.parent if element is not None else None
        if keyed is None or keyed.type != "keyed_element" or _field(keyed, "key") != element:
            return False
        body = keyed.parent
        for other in body.named_children if body is not None else []:
            if other.type == "keyed_element" and other != keyed:
                key = _field(other, "key")
                if key is not None and _text(key) == new_text:
                    return True
        return False

    def find(
        self, tree: Any, source: bytes, path: str, test: str, state: Any = None
    ) -> list[Found] | None:
        """The literals of a test function (see the module docstring)."""
        pkg, _, name = test.partition("::")
        if not name or _package_dir(path) != pkg:
            return None
        top, _, sub = name.partition("/")
        func = self._function(tree.root_node, top)
        if func is None:
            return None
        reader = _Reader(self, tree.root_node, func, sub.split("/", 1)[0])
        reader.read()
        return reader.found()

    def _function(self, root: Any, name: str) -> Any:
        """The test function ``name`` (``TestX``/``FuzzX``) at the top of a file."""
        if not name.startswith(("Test", "Fuzz")):
            return None
        for node in root.named_children:
            if node.type == "function_declaration" and _text(_field(node, "name")) == name:
                return node
        return None

    def only_user(self, root: Any, name: str, func: Any) -> bool:
        """Is ``func`` the only function of the file that uses the package-level ``name``?"""
        for node in root.named_children:
            if node.type not in ("function_declaration", "method_declaration") or node == func:
                continue
            if any(n.type == "identifier" and _text(n) == name for n in syntax.walk(node)):
                return False
        return True

    # --------------------------------------------------------------- copies
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
        """A renamed copy of the function after it; when the site is in a package-level
        declaration the test uses, that declaration is copied too (renamed) and the copy
        uses it."""
        pkg, _, name = test.partition("::")
        if _package_dir(path) != pkg:
            return []
        func = self._function(tree.root_node, name.split("/", 1)[0])
        if func is None:
            return []
        fs, fe = span(func)
        name_node = _field(func, "name")
        edits: list[tuple[int, int, bytes]] = [(*span(name_node), new_name.encode())]
        out: list[Copy] = []
        if site is not None and literal is not None:
            if fs <= site.start and site.end <= fe:
                edits.append((site.start, site.end, literal))
            else:
                decl = self._declaration_with(tree.root_node, site)
                if decl is None:
                    return []
                declared = _declared_names(decl)
                taken = _top_names(tree.root_node)
                renames = {}
                for old in declared:
                    new = old + new_name.removeprefix("Test")
                    while new in taken:
                        new += "X"
                    taken.add(new)
                    renames[old] = new
                dedits: list[tuple[int, int, bytes]] = [(site.start, site.end, literal)]
                for node in syntax.walk(decl):
                    if node.type == "identifier" and _text(node) in renames:
                        dedits.append((*span(node), renames[_text(node)].encode()))
                ds, de = span(decl)
                text = replace_spans(source[ds:de], ds, dedits)
                out.append(Copy(de, b"\n\n" + line_indent(source, ds) + text))
                for node in syntax.walk(func):
                    if node.type == "identifier" and _text(node) in renames:
                        edits.append((*span(node), renames[_text(node)].encode()))
        edits += _recover_lines(func)
        text = replace_spans(source[fs:fe], fs, edits)
        out.append(Copy(fe, b"\n\n" + line_indent(source, fs) + text))
        return out

    def _declaration_with(self, root: Any, site: Site) -> Any:
        for node in root.named_children:
            decl = node.type in ("var_declaration", "const_declaration")
            if decl and node.start_byte <= site.start and site.end <= node.end_byte:
                return node
        return None

    def copy_id(self, test: str, new_name: str) -> str:
        """``<package dir>::<new name>``, the subtest path kept."""
        pkg, _, name = test.partition("::")
        _, slash, sub = name.partition("/")
        return f"{pkg}::{new_name}{slash}{sub}"

    def new_name(self, test: str, rng: random.Random, taken: set[str]) -> str:
        """``TestParseNestedHeader``: ``Test`` and two to four capitalised words."""
        while True:
            name = "Test" + canary_name(rng)
            if name not in taken:
                return name


def _recover_lines(func: Any) -> list[tuple[int, int, bytes]]:
    """Insertions at the top of a copy's body, and of every function literal in it that takes a
    ``*testing.T`` (a ``t.Run`` subtest), that turn a panic into the copy's failure: a test that
    panics takes its whole test binary down, every other test of the run with it (a perturbed
    length that indexes past the end, say). A subtest runs in its own goroutine, where the
    recover of the function around it never sees its panic (copier-70: a perturbed copy's
    subtest panicked and took 37 tests with it). Functions whose ``*testing.T`` has no usable
    name get none."""
    out = []
    for node in [func, *(n for n in syntax.walk(func) if n.type == "func_literal")]:
        line = _recover_line(node)
        if line is not None:
            out.append(line)
    return out


def _recover_line(func: Any) -> tuple[int, int, bytes] | None:
    """The insertion for one function (declaration or literal); None when it takes no
    ``*testing.T`` with a usable name."""
    body = _field(func, "body")
    params = _field(func, "parameters")
    if body is None or params is None:
        return None
    name = ""
    for node in params.named_children:
        if node.type == "parameter_declaration":
            names = node.children_by_field_name("name")
            if names and "testing.T" in _text(node):
                name = _text(names[0])
    if not name or name == "_":
        return None
    at = body.start_byte + 1
    fail = f'{name}.Fatalf("panic: %v", r)'
    line = f"\n\tdefer func() {{ if r := recover(); r != nil {{ {fail} }} }}()"
    return (at, at, line.encode())


def _declared_names(decl: Any) -> list[str]:
    names = []
    for node in syntax.walk(decl):
        if node.type in ("var_spec", "const_spec"):
            names += [_text(c) for c in node.children_by_field_name("name")]
    return names


def _top_names(root: Any) -> set[str]:
    names = set()
    for node in root.named_children:
        if node.type in ("function_declaration", "method_declaration"):
            names.add(_text(_field(node, "name")))
        elif node.type in ("var_declaration", "const_declaration", "type_declaration"):
            names |= set(_declared_names(node))
            for spec in syntax.walk(node):
                if spec.type == "type_spec":
                    names.add(_text(_field(spec, "name")))
    return names


def _package_dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


@cache
def writer() -> GoCanaryWriter:
    """The ecosystem's one writer (its adapter's ``canary_writer()``): one instance per
    process, as the writer remembers what it has read."""
    return GoCanaryWriter()
