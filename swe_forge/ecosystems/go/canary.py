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
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
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
    perturbed_quoted_char,
    replace_spans,
    span,
)

_KINDS = {
    "interpreted_string_literal": "string",
    "raw_string_literal": "string",
    "int_literal": "int",
    "float_literal": "float",
    "rune_literal": "char",
    "true": "bool",
    "false": "bool",
}
#: ``testing`` methods (and printing functions) whose arguments are messages.
_REPORTERS = frozenset(
    [
        "Error",
        "Errorf",
        "Fatal",
        "Fatalf",
        "Log",
        "Logf",
        "Skip",
        "Skipf",
        "SkipNow",
        "Helper",
        "Print",
        "Printf",
        "Println",
        "Fatalln",
        "Panic",
        "Panicf",
        "Panicln",
    ]
)
#: Calls in an ``if`` body that fail the test.
_FAILS = frozenset(["Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"])
#: Assertion methods: name -> (count of compared arguments after ``t``, how they compare).
#: "pair": the two are compared (the value side is expected); "last": the last is expected;
#: "cond": a condition (its ``==`` comparisons).
_ASSERTS: dict[str, tuple[int, str]] = {
    **{
        name: (2, "pair")
        for name in (
            ["Equal", "EqualValues", "Exactly", "ElementsMatch", "JSONEq", "YAMLEq", "DeepEqual"]
        )
    },
    **{name: (2, "last") for name in ["Len", "Contains", "EqualError", "ErrorContains", "Subset"]},
    **{name: (3, "pair") for name in ["InDelta", "InEpsilon", "WithinDuration"]},
    **{name: (1, "cond") for name in ["True", "Assert", "Check"]},
    **{
        name: (1, "none")
        for name in ["False", "NoError", "Error", "Nil", "NotNil", "Empty", "NotEmpty", "Zero"]
    },
    **{name: (2, "none") for name in ["NotEqual", "NotContains", "ErrorIs", "ErrorAs", "Regexp"]},
}
#: Plain functions comparing two values (``reflect.DeepEqual``, ``cmp.Diff``, ...).
_EQUALITY = frozenset(["DeepEqual", "Equal", "EqualFold", "Diff", "Compare"])
#: Table fields whose name says they hold the expected value.
_WANT = re.compile(
    r"^(want|wanted|wants|expect|expected|expects|exp|golden|out|output|outputs|res|result"
    r"|results)(?![a-z])",
    re.I,
)
_CONVERSIONS = frozenset(
    [
        "string",
        "byte",
        "rune",
        "bool",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "any",
    ]
)
#: Node types through which a literal stays part of the value it is in.
_VALUE_TYPES = frozenset(
    [
        "composite_literal",
        "literal_value",
        "literal_element",
        "keyed_element",
        "unary_expression",
        "parenthesized_expression",
        "binary_expression",
        "expression_list",
        "type_conversion_expression",
    ]
)


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


def _args(call: Any) -> list[Any]:
    args = _field(call, "arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _call_name(call: Any) -> tuple[str, str]:
    """(operand text, function name) of a call: ``("t", "Errorf")``, ``("", "panic")``."""
    fn = _field(call, "function")
    if fn is None:
        return "", ""
    if fn.type == "selector_expression":
        return _text(_field(fn, "operand")), _text(_field(fn, "field"))
    if fn.type == "identifier":
        return "", _text(fn)
    return "", ""


def go_string_value(node: Any) -> str | None:
    """The value of a Go string literal node (None when it cannot be read)."""
    raw = syntax.text(node)
    if node.type == "raw_string_literal":
        return raw[1:-1].replace("\r", "")
    if node.type != "interpreted_string_literal":
        return None
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def subtest_name(name: str) -> str:
    """A subtest name as ``testing`` reports it (white space becomes ``_``)."""
    return "".join("_" if ch.isspace() else ch for ch in name)


@dataclass
class _Table:
    """A table the test ranges over: its rows, loop variables and what the loop compares."""

    body: Any  # the literal_value of the rows
    value_var: str
    key_var: str
    fields: list[str]  # struct fields in declaration order ([] when unknown)
    loop: Any  # the for statement
    is_map: bool
    range_name: str = ""  # the table's name, when the loop ranges over a name
    expected_fields: set[str] = field(default_factory=set)
    name_fields: set[str] = field(default_factory=set)
    key_is_name: bool = False


class _Reader:
    """One test function read: its expected values, excluded spans and tables."""

    def __init__(self, writer: GoCanaryWriter, root: Any, func: Any, sub: str) -> None:
        self.writer = writer
        self.root = root
        self.func = func
        self.sub = sub
        self.tnames = self._testing_params()
        self.excluded: list[tuple[int, int]] = []
        self.expected: list[Any] = []  # roots of expected values
        self.tables: list[_Table] = []
        self.outside: list[Any] = []  # package-level declarations read with the test
        self.subtest_bodies: list[tuple[str, Any]] = []  # (name, func literal) of t.Run("x")
        self._types: dict[str, Any] | None = None
        self._decls: list[Any] | None = None
        self._assigned: set[str] | None = None

    # --------------------------------------------------------------- reading
    def _testing_params(self) -> set[str]:
        names = set()
        for node in syntax.walk(self.func):
            if node.type == "parameter_declaration" and _text(_field(node, "type")).replace(
                " ", ""
            ) in ("*testing.T", "*testing.F", "*testing.B"):
                names |= {_text(c) for c in node.children_by_field_name("name")}
        return names or {"t"}

    def read(self) -> None:
        """Find the tables, the expected values and what is no site."""
        body = _field(self.func, "body")
        if body is None:
            return
        for node in syntax.walk(body):
            if node.type == "for_statement":
                self._table_loop(node)
        for node in syntax.walk(body):
            if node.type == "call_expression":
                self._call(node)
            elif node.type == "if_statement":
                self._if(node)
            elif node.type in ("expression_case", "type_case"):
                value = _field(node, "value") or _field(node, "type")
                if value is not None:
                    self.excluded.append(span(value))
            elif node.type in ("field_declaration", "array_type"):
                # Struct tags, array lengths: changing them does not compile or means nothing.
                self.excluded.append(span(node))
        for table in self.tables:
            table.expected_fields |= {f for f in table.fields if _WANT.match(f)}

    def _table_loop(self, loop: Any) -> None:
        clause = next((c for c in loop.named_children if c.type == "range_clause"), None)
        if clause is None:
            return
        right = _field(clause, "right")
        left = _field(clause, "left")
        names = [_text(c) for c in left.named_children] if left is not None else []
        literal = self._composite(right)
        if literal is None:
            return
        body = _field(literal, "body")
        ctype = _field(literal, "type")
        if body is None or ctype is None:
            return
        is_map = ctype.type == "map_type"
        elem = _field(ctype, "value" if is_map else "element")
        # for _, tc := range tests / for name, tc := range m / for i := range tests (rows
        # reached as tests[i]).
        key_var = names[0] if names else ""
        value_var = names[1] if len(names) > 1 else ""
        range_name = _text(right) if right is not None and right.type == "identifier" else ""
        table = _Table(
            body, value_var, key_var, self._struct_fields(elem), loop, is_map, range_name
        )
        self.tables.append(table)
        loop_body = _field(loop, "body")
        if loop_body is None:
            return
        for node in syntax.walk(loop_body):
            if node.type != "call_expression":
                continue
            operand, name = _call_name(node)
            if name == "Run" and operand in self.tnames and _args(node):
                first = _args(node)[0]
                for ref in syntax.walk(first):
                    got = self._field_ref(ref)
                    if got is not None and got[0] is table:
                        table.name_fields.add(got[1])
                    if ref.type == "identifier" and _text(ref) == key_var and table.is_map:
                        table.key_is_name = True

    def _composite(self, node: Any) -> Any:
        """The composite literal an expression is or names (a local or package-level one)."""
        if node is None:
            return None
        if node.type == "unary_expression":
            node = _field(node, "operand")
        if node is not None and node.type == "composite_literal":
            return node
        if node is not None and node.type == "identifier":
            bound = self._binding(_text(node), node.start_byte)
            if bound is not None and bound.type == "composite_literal":
                return bound
        return None

    def _struct_fields(self, elem: Any) -> list[str]:
        if elem is None:
            return []
        if elem.type == "pointer_type":
            elem = next(iter(elem.named_children), None)
        if elem is not None and elem.type == "type_identifier":
            elem = self._named_type(_text(elem))
        if elem is None or elem.type != "struct_type":
            return []
        names: list[str] = []
        fields = next((c for c in elem.named_children if c.type == "field_declaration_list"), None)
        for decl in fields.named_children if fields is not None else []:
            if decl.type != "field_declaration":
                continue
            declared = [_text(c) for c in decl.children_by_field_name("name")]
            if not declared:  # an embedded type: the field is named after it
                declared = [_text(_field(decl, "type")).lstrip("*").rsplit(".", 1)[-1]]
            names += declared
        return names

    def _named_type(self, name: str) -> Any:
        """The type a name declares in the test function or at the top of the file."""
        if self._types is None:
            self._types = {}
            specs = [n for n in syntax.walk(self.func) if n.type == "type_spec"]
            for decl in self.root.named_children:
                if decl.type == "type_declaration":
                    specs += [n for n in decl.named_children if n.type == "type_spec"]
            for spec in reversed(specs):  # the function's own first
                self._types[_text(_field(spec, "name"))] = _field(spec, "type")
        return self._types.get(name)

    def _binding(self, name: str, before: int) -> Any:
        """The value a name is bound to: the nearest declaration before ``before`` in the
        test function, else a package-level ``var``/``const`` no other function uses; none
        for a name the test assigns, increments or takes the address of (its value is then
        not the one declared)."""
        if self._mutated(name):
            return None
        best = None
        if self._decls is None:
            self._decls = [n for n in syntax.walk(self.func) if n.type in _DECLARATIONS]
        for node in self._decls:
            if node.start_byte >= before:
                break
            value = _declared_value(node, name)
            if value is not None:
                best = value
        if best is not None:
            return best
        for decl in self.root.named_children:
            if decl.type not in ("var_declaration", "const_declaration"):
                continue
            for node in syntax.walk(decl):
                value = _declared_value(node, name)
                if value is not None and self.writer.only_user(self.root, name, self.func):
                    if decl not in self.outside:
                        self.outside.append(decl)
                    return value
        return None

    def _mutated(self, name: str) -> bool:
        if self._assigned is None:
            self._assigned = set()
            for node in syntax.walk(self.func):
                targets: list[Any] = []
                if node.type == "assignment_statement":
                    left = _field(node, "left")
                    targets = list(left.named_children) if left is not None else []
                elif node.type in ("inc_statement", "dec_statement"):
                    targets = list(node.named_children[:1])
                elif node.type == "unary_expression" and _text(_field(node, "operator")) == "&":
                    targets = [_field(node, "operand")]
                self._assigned |= {_text(t) for t in targets if t is not None}
        return name in self._assigned

    def _field_ref(self, node: Any) -> tuple[_Table, str] | None:
        """(table, field) of ``tc.want`` or ``tests[i].want`` in a loop over a table."""
        if node.type != "selector_expression":
            return None
        operand, name = _field(node, "operand"), _text(_field(node, "field"))
        for table in self.tables:
            if not inside(node, [span(table.loop)]):
                continue
            if operand.type == "identifier" and _text(operand) == table.value_var:
                return table, name
            if operand.type == "index_expression":
                base = _field(operand, "operand")
                if table.range_name and base is not None and _text(base) == table.range_name:
                    return table, name
        return None

    def _call(self, call: Any) -> None:
        operand, name = _call_name(call)
        args = _args(call)
        if not name:
            return
        if (name == "panic" and not operand) or (
            name in _REPORTERS and (operand in self.tnames or operand in ("fmt", "log"))
        ):
            self._exclude_args(call)
            return
        if name == "Run" and operand in self.tnames and args:
            self.excluded.append(span(args[0]))
            lit = args[0]
            if lit.type in ("interpreted_string_literal", "raw_string_literal") and len(args) > 1:
                value = go_string_value(lit)
                if value is not None:
                    self.subtest_bodies.append((subtest_name(value), args[1]))
            return
        if name in ("Assert", "Check") and len(args) >= 3 and _text(args[1]).startswith("qt."):
            self._pair(args[0], args[2])  # quicktest: c.Assert(got, qt.Equals, want)
            self._exclude(args[3:])
            return
        base = name[:-1] if name.endswith("f") and name[:-1] in _ASSERTS else name
        with_t = self._is_t(args[:1])
        # An assertion: testify's and gotest.tools' functions take t first; an assertion
        # object (assert.New(t), a suite, s.Require()) is the operand of a method call.
        if base in _ASSERTS and (with_t or operand):
            count, how = _ASSERTS[base]
            rest = args[1:] if with_t else args
            if len(rest) >= count:
                compared, messages = rest[:count], rest[count:]
                if how == "pair":
                    self._pair(compared[0], compared[1])
                elif how == "last":
                    self._expected(compared[-1])
                elif how == "cond":
                    self._conditions(compared[0], ("==",))
                self._exclude(messages)
                return
        if name in _EQUALITY and len(args) >= 2:
            self._pair(args[0], args[1])
        elif name in ("Equal", "Equals", "EqualFold") and operand and len(args) == 1:
            # got.Equal(want) (time.Time, big numbers, net.IP...).
            fn = _field(call, "function")
            self._pair(_field(fn, "operand"), args[0])

    def _is_t(self, args: list[Any]) -> bool:
        if not args:
            return False
        first = args[0]
        return (first.type == "identifier" and _text(first) in self.tnames) or _text(
            first
        ).endswith(".T()")

    def _if(self, node: Any) -> None:
        consequence = _field(node, "consequence")
        condition = _field(node, "condition")
        if consequence is None or condition is None or not self._fails(consequence):
            return
        self._conditions(condition, ("!=",))

    def _fails(self, block: Any) -> bool:
        for node in syntax.walk(block):
            if node.type == "func_literal":
                continue
            if node.type == "call_expression":
                operand, name = _call_name(node)
                if name in _FAILS or (name == "panic" and not operand):
                    return True
        return False

    def _conditions(self, node: Any, operators: tuple[str, ...]) -> None:
        """The comparisons of a condition (not those inside calls or function literals)."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("call_expression", "func_literal"):
                continue
            if current.type == "binary_expression":
                op = _text(_field(current, "operator"))
                if op in operators:
                    self._pair(_field(current, "left"), _field(current, "right"))
                    continue
            stack.extend(current.named_children)

    def _pair(self, a: Any, b: Any) -> None:
        """Two compared values: the one that is a value (or names one) is expected."""
        if a is None or b is None:
            return
        for name, lit in ((a, b), (b, a)):
            if self._diff_empty(name, lit):
                self.excluded.append(span(lit))
                return
        ra, rb = self._resolve(a), self._resolve(b)
        if ra is not None and rb is not None:
            # shared["one"] != 1: the literal is the expectation, the indexed value data.
            if a.type == "index_expression" and b.type != "index_expression":
                ra = None
            elif b.type == "index_expression" and a.type != "index_expression":
                rb = None
        if ra is not None and rb is None:
            self._mark(ra)
        elif rb is not None and ra is None:
            self._mark(rb)

    def _diff_empty(self, name: Any, lit: Any) -> bool:
        """``diff != ""`` after ``diff := cmp.Diff(...)``: the empty string is no expectation."""
        if lit.type not in ("interpreted_string_literal", "raw_string_literal"):
            return False
        if name.type != "identifier":
            return False
        if "diff" in _text(name).lower():
            return True
        bound = self._binding(_text(name), name.start_byte)
        return (
            bound is not None
            and bound.type == "call_expression"
            and (_call_name(bound)[1] in ("Diff", "Compare"))
        )

    def _expected(self, node: Any) -> None:
        got = self._resolve(node)
        if got is not None:
            self._mark(got)

    def _mark(self, got: Any) -> None:
        if isinstance(got, tuple):
            got[0].expected_fields.add(got[1])
        else:
            self.expected.append(got)

    def _resolve(self, node: Any, depth: int = 0) -> Any:
        """A value node, (table, field) for a table field, or None (not a value)."""
        if node is None or depth > 4:
            return None
        if node.type == "parenthesized_expression":
            return self._resolve(next(iter(node.named_children), None), depth + 1)
        ref = self._field_ref(node)
        if ref is not None:
            return ref
        if node.type == "identifier":
            bound = self._binding(_text(node), node.start_byte)
            if bound is not None:
                return self._resolve(bound, depth + 1)
            return None
        if node.type == "index_expression":
            # want[i] of want := []string{...}: the whole table of expected values.
            operand = _field(node, "operand")
            if operand is not None and operand.type == "identifier":
                got = self._resolve(operand, depth + 1)
                return got if got is not None and not isinstance(got, tuple) else None
            return None
        if is_value(node):
            return node
        return None

    def _exclude(self, nodes: list[Any]) -> None:
        self.excluded += [span(n) for n in nodes]

    def _exclude_args(self, call: Any) -> None:
        args = _field(call, "arguments")
        if args is not None:
            self.excluded.append(span(args))

    # --------------------------------------------------------------- the literals
    def found(self) -> list[Found]:
        """The test's literals with their roles (after :meth:`read`)."""
        body = _field(self.func, "body")
        if body is None:
            return []
        keep_rows = self._rows_of_subtest()
        dropped = [span(lit) for name, lit in self.subtest_bodies if self.sub and name != self.sub]
        roles: dict[tuple[int, int], str] = {}
        for root in self.expected:
            for node, role in self._value_literals(root):
                if role == "expected":
                    roles[span(node)] = role
        for table in self.tables:
            self._table_roles(table, roles, keep_rows, dropped)
        # The function, and what of the package-level declarations it uses is the test's:
        # the rows of a table, an expected value (not the rest of a var block).
        regions = [body] + [
            n
            for n in [*(t.body for t in self.tables), *self.expected]
            if not inside(n, [span(body)])
        ]
        out: list[Found] = []
        for region in regions:
            for node in self.writer.literals(region):
                if inside(node, self.excluded) or inside(node, dropped):
                    continue
                kind = self.writer.literal_kind(node)
                if kind is not None:
                    s, e = span(node)
                    out.append(Found(s, e, kind, roles.get((s, e), "other")))
        return out

    def _rows_of_subtest(self) -> set[tuple[int, int]] | None:
        """Spans of the table rows named like the subtest (None: no row is, keep all)."""
        if not self.sub:
            return None
        keep: set[tuple[int, int]] = set()
        for table in self.tables:
            for element, key, row in self._rows(table):
                names = [key] if table.is_map and table.key_is_name and key is not None else []
                names += [v for f, v in self._row_fields(table, row) if f in table.name_fields]
                for n in names:
                    value = go_string_value(n) if n is not None else None
                    if value is not None and subtest_name(value) == self.sub:
                        keep.add(span(element))
        return keep or None

    def _rows(self, table: _Table) -> Iterator[tuple[Any, Any, Any]]:
        """(element, map key literal or None, row value) of each row of a table."""
        for element in table.body.named_children:
            if element.type == "keyed_element":
                key, value = _field(element, "key"), _field(element, "value")
                key_lit = next(iter(key.named_children), None) if key is not None else None
                yield element, key_lit, _unwrap(value)
            elif element.type == "literal_element":
                yield element, None, _unwrap(element)

    def _row_fields(self, table: _Table, row: Any) -> Iterator[tuple[str, Any]]:
        """(field name, value node) of a struct row (positional fields named by the struct's
        declaration when the file has it)."""
        if row is not None and row.type == "unary_expression":
            row = _field(row, "operand")
        if row is not None and row.type == "composite_literal":
            row = _field(row, "body")
        if row is None or row.type != "literal_value":
            return
        position = 0
        for element in row.named_children:
            if element.type == "keyed_element":
                key, value = _field(element, "key"), _field(element, "value")
                yield _text(key), _unwrap(value)
            elif element.type == "literal_element":
                if position < len(table.fields):
                    yield table.fields[position], _unwrap(element)
                position += 1

    def _table_roles(
        self,
        table: _Table,
        roles: dict[tuple[int, int], str],
        keep_rows: set[tuple[int, int]] | None,
        dropped: list[tuple[int, int]],
    ) -> None:
        """Roles of a table's rows: expected fields' values expected, names excluded, rows of
        other subtests dropped."""
        for element, key, row in self._rows(table):
            if keep_rows is not None and span(element) not in keep_rows:
                dropped.append(span(element))
                continue
            if key is not None and table.key_is_name:
                self.excluded.append(span(key))
            for fname, value in self._row_fields(table, row):
                if value is None:
                    continue
                if fname in table.name_fields:
                    self.excluded.append(span(value))
                elif fname in table.expected_fields:
                    for node, role in self._value_literals(value):
                        if role == "expected":
                            roles[span(node)] = role

    def _value_literals(self, root: Any) -> Iterator[tuple[Any, str]]:
        """Literals of a value: expected when reached through values only."""
        stack: list[tuple[Any, bool]] = [(root, True)]
        while stack:
            node, through = stack.pop()
            if self.writer.literal_kind(node) is not None:
                yield node, "expected" if through else "other"
                continue
            keep = through and (node.type in _VALUE_TYPES or _is_conversion(node))
            if node.type == "keyed_element":
                key = _field(node, "key")
                if (
                    key is not None
                    and key.named_children
                    and key.named_children[0].type != ("identifier")
                ):
                    stack.append((key, False))  # a map key: not what is compared
                value = _field(node, "value")
                if value is not None:
                    stack.append((value, keep))
                continue
            stack.extend((c, keep) for c in reversed(node.named_children))


def _unwrap(element: Any) -> Any:
    """The expression of a ``literal_element`` (its only child)."""
    if element is not None and element.type == "literal_element":
        return next(iter(element.named_children), None)
    return element


_DECLARATIONS = frozenset(["short_var_declaration", "var_spec", "const_spec"])


def _declared_value(node: Any, name: str) -> Any:
    """The value ``node`` (a declaration) gives ``name``, or None."""
    if node.type == "short_var_declaration":
        left, right = _field(node, "left"), _field(node, "right")
    elif node.type in ("var_spec", "const_spec"):
        left, right = node, _field(node, "value")
        names = [_text(c) for c in node.children_by_field_name("name")]
        if name in names and right is not None:
            values = list(right.named_children)
            i = names.index(name)
            return values[i] if i < len(values) else None
        return None
    else:
        return None
    if left is None or right is None:
        return None
    names = [_text(c) for c in left.named_children]
    values = list(right.named_children)
    if name in names and len(values) == len(names):
        return values[names.index(name)]
    return None


def _is_conversion(node: Any) -> bool:
    """``[]byte("x")``, ``int64(3)``: a conversion keeps a literal part of a value."""
    if node.type == "argument_list":
        parent = node.parent
        return parent is not None and _is_conversion(parent)
    if node.type != "call_expression":
        return False
    fn = _field(node, "function")
    if fn is None:
        return False
    if fn.type in ("slice_type", "array_type", "map_type", "parenthesized_type"):
        return True
    return fn.type == "identifier" and _text(fn) in _CONVERSIONS


def is_value(node: Any) -> bool:
    """Is an expression a value written in the test (a literal, a composite literal, a
    conversion or arithmetic of values)?"""
    if node.type in _KINDS or node.type in ("composite_literal", "imaginary_literal"):
        return True
    if node.type == "unary_expression":
        operand = _field(node, "operand")
        return operand is not None and is_value(operand)
    if node.type == "parenthesized_expression":
        return all(is_value(c) for c in node.named_children)
    if node.type == "binary_expression":
        op = _text(_field(node, "operator"))
        left, right = _field(node, "left"), _field(node, "right")
        return op in ("+", "-", "*", "/", "%", "<<", ">>", "|", "&", "^") and all(
            n is not None and is_value(n) for n in (left, right)
        )
    if node.type == "type_conversion_expression":  # []byte("x")
        operand = _field(node, "operand")
        return operand is not None and is_value(operand)
    if _is_conversion(node):
        args = _args(node)
        return len(args) == 1 and is_value(args[0])
    return False


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
