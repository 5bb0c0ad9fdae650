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

The writer is this module's :class:`JsCanaryWriter`; where the tests are and how they are
named is :mod:`~swe_forge.ecosystems.js.canary_locate`, which literals are expected
:mod:`~swe_forge.ecosystems.js.canary_expected`.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
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
    line_indent,
    perturbed_body,
    replace_spans,
    span,
    with_guards,
)
from swe_forge.ecosystems.js.canary_expected import (
    _KINDS,
    _plain_template,
    _Reader,
    value_literals,
)
from swe_forge.ecosystems.js.canary_locate import (
    _field,
    _Test,
    _text,
    js_string_value,
    locate_tests,
)
from swe_forge.ecosystems.js.canary_locate import each_title as each_title
from swe_forge.errors import UsageError

_WANT = re.compile(
    r"^(want|wanted|expect|expected|exp|expectation|output|out|result|res|golden)(?![a-z])",
    re.I,
)
_CACHE_SIZE = 20000


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
        if body is None:
            return out
        # `assert.ok(p.isEmpty())`, `expect(p.size() > 1).toBeTruthy()`: the conditions.
        return with_guards(out, [span(g) for g in reader.guards if not inside(g, reader.excluded)])

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


@cache
def writer() -> JsCanaryWriter:
    """The ecosystem's one writer (its adapter's ``canary_writer()``): one instance per
    process, as the writer remembers what it has read."""
    return JsCanaryWriter()
