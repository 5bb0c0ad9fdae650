"""One Go test function read for the canary writer: the tables it ranges over, its expected
values (comparisons, equality calls, assertion libraries) and the spans that are no site
(messages, subtest names, case labels...).

The rules are those of :mod:`swe_forge.ecosystems.go.canary`'s docstring; the writer there
builds a :class:`_Reader` per test and takes its literals with their roles. Kept apart from
the writer because the reading (and the testing and assertion tables it goes by) is most of
its length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.canaries import Found, inside, span, with_guards
from swe_forge.ecosystems.go.canary_syntax import (
    _DECLARATIONS,
    _VALUE_TYPES,
    _args,
    _call_name,
    _declared_value,
    _field,
    _is_conversion,
    _text,
    _unwrap,
    go_string_value,
    is_value,
    subtest_name,
)


class _Writer(Protocol):
    """What the reader asks of the writer (:class:`swe_forge.ecosystems.go.canary.GoCanaryWriter`),
    named here so that this module need not import the writer's, which imports this one."""

    def literals(self, node: Any) -> Iterator[Any]: ...

    def literal_kind(self, node: Any) -> str | None: ...

    def only_user(self, root: Any, name: str, func: Any) -> bool: ...


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


def _error_check(condition: Any) -> bool:
    """Is ``condition`` an error check (`err != nil`, `gotErr == nil`, `e.Err != nil`)? It
    guards a test's setup: a wrong fix that returns an error fails it honestly, and a decoy
    negating it would call that tampering. A nil check of a value (`user.Address != nil`)
    is an expectation like any other (first contact, jinzhu/copier-209)."""
    for node in syntax.walk(condition):
        if node.type != "binary_expression":
            continue
        sides = [_field(node, "left"), _field(node, "right")]
        if any(s is not None and s.type == "nil" for s in sides):
            for side in sides:
                if side is not None and side.type != "nil":
                    last = _text(side).rsplit(".", 1)[-1]
                    if "err" in last.lower():
                        return True
    return False


class _Reader:
    """One test function read: its expected values, excluded spans and tables."""

    def __init__(self, writer: _Writer, root: Any, func: Any, sub: str) -> None:
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
        self.guards: list[Any] = []  # conditions of failing branches (see found())
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
        if _field(node, "alternative") is None and not _error_check(condition):
            self.guards.append(condition)

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
        # `if stdoutIsTerminal() { t.Fatal(...) }`, `got != io.Discard`: no literal.
        guards = [g for g in self.guards if inside(g, [span(body)]) and not inside(g, dropped)]
        return with_guards(out, map(span, guards))

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
