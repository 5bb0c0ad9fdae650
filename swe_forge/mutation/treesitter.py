"""Mutants of Go, Rust, JavaScript/TypeScript and Java source, found on tree-sitter trees.

The same operators as the Python engine, on each grammar's nodes: the operator token of a
``binary_expression``, integer and boolean literals, ``if`` conditions (wrapped in ``!( )``),
``return`` values (the zero value of the function's declared result type where the grammar
says it plainly, else none), the first two arguments of a call, an ``else`` block, the bounds
of a slice. Edits are byte spans of the source; a result the parser has to recover from
(``ERROR`` or missing nodes) is dropped, and so is one whose text (whitespace aside) equals
the original's or an earlier mutant's. Whether a mutant compiles is
finally told by building it; the operators avoid the obviously ill-typed (a string never
becomes a number, ``+`` on a string literal is never swapped, a return is only defaulted
when the result type is known).

The text comes from mined repositories: tree-sitter only parses it, and only the nodes whose
lines meet the wanted lines are visited.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.mutation.select import (
    MAX_SOURCE_BYTES,
    Candidate,
    FileMutations,
    Lines,
    LineSet,
    tiers,
)

_COMPARISON = {"==": "!=", "!=": "==", "===": "!==", "!==": "==="}
_BOUNDARY = {">": ">=", ">=": ">", "<": "<=", "<=": "<"}
_ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*"}
_BOOLEAN = {"&&": "||", "||": "&&"}


@dataclass(frozen=True)
class Grammar:
    """What the operators need to know of one language's tree."""

    ints: frozenset[str]  # integer literal node types
    int_form: re.Pattern[str]  # a plain decimal literal: (digits)(suffix)
    bools: frozenset[str]  # nodes whose text is true/false
    strings: frozenset[str]  # string literal node types (operands that make + concatenation)
    ifs: frozenset[str]
    returns: frozenset[str]
    calls: frozenset[str]
    removable: frozenset[str]  # statements whose removal is a mutant
    functions: frozenset[str]
    skip: frozenset[str]  # subtrees never entered (imports, comments, strings, types, ...)
    atomic: frozenset[str]  # operands that need no parentheses
    slicers: frozenset[str] = frozenset()  # methods whose first argument is a slice bound


_DECIMAL = re.compile(r"(0|[1-9][0-9]*)()")

GRAMMARS = {
    "go": Grammar(
        ints=frozenset({"int_literal"}),
        int_form=_DECIMAL,
        bools=frozenset({"true", "false"}),
        strings=frozenset({"interpreted_string_literal", "raw_string_literal"}),
        ifs=frozenset({"if_statement"}),
        returns=frozenset({"return_statement"}),
        calls=frozenset({"call_expression"}),
        removable=frozenset(
            {"expression_statement", "assignment_statement", "inc_statement", "dec_statement"}
        ),
        functions=frozenset({"function_declaration", "method_declaration", "func_literal"}),
        skip=frozenset(
            {
                "comment",
                "import_declaration",
                "package_clause",
                "type_declaration",
                "array_type",
                "interpreted_string_literal",
                "raw_string_literal",
            }
        ),
        atomic=frozenset(
            {"identifier", "selector_expression", "call_expression", "index_expression"}
        ),
    ),
    "rust": Grammar(
        ints=frozenset({"integer_literal"}),
        int_form=re.compile(r"(0|[1-9][0-9]*)((?:[iu](?:8|16|32|64|128|size))?)"),
        bools=frozenset({"boolean_literal"}),
        strings=frozenset({"string_literal", "raw_string_literal"}),
        ifs=frozenset({"if_expression"}),
        returns=frozenset({"return_expression"}),
        calls=frozenset({"call_expression"}),
        removable=frozenset({"expression_statement"}),
        functions=frozenset({"function_item", "closure_expression"}),
        skip=frozenset(
            {
                "line_comment",
                "block_comment",
                "use_declaration",
                "attribute_item",
                "inner_attribute_item",
                "string_literal",
                "raw_string_literal",
                "array_type",
                "macro_definition",
            }
        ),
        atomic=frozenset({"identifier", "field_expression", "call_expression", "index_expression"}),
    ),
    "js": Grammar(
        ints=frozenset({"number"}),
        int_form=_DECIMAL,
        bools=frozenset({"true", "false"}),
        strings=frozenset({"string", "template_string"}),
        ifs=frozenset({"if_statement"}),
        returns=frozenset({"return_statement"}),
        calls=frozenset({"call_expression", "new_expression"}),
        removable=frozenset({"expression_statement"}),
        functions=frozenset(
            {
                "function_declaration",
                "function_expression",
                "function",
                "arrow_function",
                "method_definition",
                "generator_function_declaration",
            }
        ),
        skip=frozenset(
            {
                "comment",
                "import_statement",
                "string",
                "template_string",
                "regex",
                "decorator",
                "type_annotation",
                "type_arguments",
                "type_parameters",
                "type_alias_declaration",
                "interface_declaration",
                "enum_declaration",
            }
        ),
        atomic=frozenset(
            {"identifier", "member_expression", "call_expression", "subscript_expression"}
        ),
        slicers=frozenset({"slice", "substring", "substr"}),
    ),
    "java": Grammar(
        ints=frozenset({"decimal_integer_literal"}),
        int_form=re.compile(r"(0|[1-9][0-9]*)([lL]?)"),
        bools=frozenset({"true", "false"}),
        strings=frozenset({"string_literal", "text_block"}),
        ifs=frozenset({"if_statement"}),
        returns=frozenset({"return_statement"}),
        calls=frozenset({"method_invocation", "object_creation_expression"}),
        removable=frozenset({"expression_statement"}),
        functions=frozenset({"method_declaration", "constructor_declaration", "lambda_expression"}),
        skip=frozenset(
            {
                "line_comment",
                "block_comment",
                "import_declaration",
                "package_declaration",
                "string_literal",
                "text_block",
                "annotation",
                "marker_annotation",
                "dimensions_expr",
            }
        ),
        atomic=frozenset({"identifier", "field_access", "method_invocation", "array_access"}),
        slicers=frozenset({"substring", "subList"}),
    ),
}

#: Go builtins whose arguments cannot be swapped into anything that type-checks.
_GO_UNSWAPPABLE = frozenset({"make", "new", "append", "delete", "len", "cap", "panic"})

_GO_ZERO = {
    **dict.fromkeys(
        (
            *("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32"),
            *("uint64", "uintptr", "byte", "rune", "float32", "float64"),
        ),
        "0",
    ),
    "bool": "false",
    "string": '""',
    "error": "nil",
}
_GO_NIL_TYPES = frozenset(
    {"pointer_type", "slice_type", "map_type", "channel_type", "function_type", "interface_type"}
)
_RUST_ZERO = {
    **dict.fromkeys(
        (
            *("i8", "i16", "i32", "i64", "i128", "isize"),
            *("u8", "u16", "u32", "u64", "u128", "usize"),
        ),
        "0",
    ),
    "f32": "0.0",
    "f64": "0.0",
    "bool": "false",
    "String": "String::new()",
}
_JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
    }
)
_JAVA_ZERO = {"integral_type": "0", "floating_point_type": "0", "boolean_type": "false"}


def _grammar_name(language: str, path: str) -> str:
    return syntax.grammar_for_path(path) if language == "js" else language


_WHITESPACE = b" \t\r\n\f\v"


def _normal(source: bytes) -> bytes:
    """A source without its whitespace: two mutants that differ only in layout are one (the
    operators never edit comments or strings, where whitespace would matter)."""
    return source.translate(None, _WHITESPACE)


def mutations(language: str, path: str, source: bytes, lines: set[int]) -> FileMutations | None:
    """The candidates of one file restricted to ``lines`` (tier 1) and the functions that
    enclose them (tier 2); None when the file does not parse cleanly or is too large."""
    if len(source) > MAX_SOURCE_BYTES or not lines:
        return None
    grammar = GRAMMARS[language]
    name = _grammar_name(language, path)
    tree = syntax.parse(name, source)
    if syntax.has_errors(tree):
        return None

    def accept(mutated: bytes, candidate: Candidate) -> object | None:
        if syntax.has_errors(syntax.parse(name, mutated)):
            return None
        return _normal(mutated)

    changed = LineSet(lines)
    finder = _Finder(grammar, source, typescript=name in ("typescript", "tsx"), go=language == "go")
    first = [c for c in finder.visit(tree.root_node, changed) if c.line in changed]

    def find(wider: LineSet) -> Iterable[Candidate]:
        again = _Finder(grammar, source, typescript=finder.typescript, go=finder.go)
        return again.visit(tree.root_node, wider)

    found = tiers(changed, finder.functions, first, find)
    return FileMutations(
        path=path,
        source=source,
        tiers=found,
        accept=accept,
        original=_normal(source),
    )


def _named(node: Any) -> list[Any]:
    return [c for c in node.named_children if "comment" not in c.type]


class _Finder:
    """Walks the nodes whose lines meet a set of lines and proposes candidates at them."""

    def __init__(self, grammar: Grammar, source: bytes, *, typescript: bool, go: bool) -> None:
        self.g = grammar
        self.source = source
        self.lines = Lines(source)
        self.typescript = typescript
        self.go = go
        self.functions: list[tuple[int, int]] = []

    def candidate(
        self, start: int, end: int, replacement: bytes, operator: str, description: str
    ) -> Candidate:
        line = self.lines.line_of(start)
        col = start - self.lines.offset(line, 0)
        return Candidate(line, col, operator, description, start, end, replacement)

    def replace(self, node: Any, replacement: bytes, operator: str, description: str) -> Candidate:
        return self.candidate(node.start_byte, node.end_byte, replacement, operator, description)

    def remove(self, node: Any) -> Candidate:
        """A statement removed: its whole line when nothing else is on it, so that no
        blank-but-indented line is left behind."""
        start, end = node.start_byte, node.end_byte
        line_start = self.source.rfind(b"\n", 0, start) + 1
        line_end = self.source.find(b"\n", end)
        line_end = len(self.source) if line_end == -1 else line_end + 1
        before, after = self.source[line_start:start], self.source[end:line_end]
        if not before.strip() and not after.strip():
            cand = self.candidate(
                line_start, line_end, b"", "remove_statement", "statement removed"
            )
            return Candidate(
                cand.line,
                node.start_point[1],
                cand.operator,
                cand.description,
                cand.start,
                cand.end,
                cand.replacement,
            )
        return self.replace(node, b"", "remove_statement", "statement removed")

    def operand(self, node: Any) -> bytes:
        body = bytes(node.text or b"")
        return body if node.type in self.g.atomic else b"(" + body + b")"

    def visit(self, root: Any, wanted: LineSet) -> Iterator[Candidate]:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in self.g.skip:
                continue
            first, last = node.start_point[0] + 1, node.end_point[0] + 1
            if not wanted.meets(first, last):
                continue
            if node.type in self.g.functions:
                self.functions.append((first, last))
            yield from self.propose(node)
            stack.extend(reversed(node.children))

    # ------------------------------------------------------------------ operators
    def propose(self, node: Any) -> Iterator[Candidate]:
        kind = node.type
        if kind == "binary_expression":
            yield from self.binary(node)
        elif kind in self.g.ints:
            yield from self.integer(node)
        elif kind in self.g.bools:
            text = syntax.text(node)
            if text in ("true", "false"):
                new = "false" if text == "true" else "true"
                yield self.replace(node, new.encode(), "constant", f"`{text}` -> `{new}`")
        elif kind in self.g.ifs:
            yield from self.negate(node)
            yield from self.drop_else(node)
        elif kind in self.g.returns:
            yield from self.default_return(node)
        elif kind in self.g.calls:
            yield from self.swap(node)
            yield from self.slicer(node)
        elif kind == "ternary_expression":
            yield from self.negate(node)
        elif kind == "block" and node.parent is not None and node.parent.type == "function_item":
            yield from self.default_tail(node)
        elif kind == "arrow_function" and not self.typescript:
            body = node.child_by_field_name("body")
            if body is not None and body.type != "statement_block":
                yield self.replace(body, b"undefined", "return_default", "`=> x` -> `=> undefined`")
        elif _negation(node):
            bang = node.children[0]
            yield self.candidate(bang.start_byte, bang.end_byte, b"", "negate", "`!c` -> `c`")
        elif kind in ("slice_expression", "range_expression"):
            yield from self.slice(node)
        if kind in self.g.removable and self.removable(node):
            yield self.remove(node)

    def binary(self, node: Any) -> Iterator[Candidate]:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None:
            return
        token = syntax.text(op)
        if token in _BOUNDARY or token in _COMPARISON:
            new = _BOUNDARY.get(token) or _COMPARISON[token]
            operator = "boundary" if token in _BOUNDARY else "comparison"
            yield self.replace(op, new.encode(), operator, f"`{token}` -> `{new}`")
            if token in _BOUNDARY and not _literal(right):
                for sign in ("+", "-"):
                    text = self.operand(right) + f" {sign} 1".encode()
                    yield self.replace(
                        right,
                        text,
                        "boundary",
                        _describe(syntax.text(right), text),
                    )
        elif token in _ARITHMETIC:
            if token == "+" and (self.stringish(left) or self.stringish(right)):
                return  # concatenation
            new = _ARITHMETIC[token]
            yield self.replace(op, new.encode(), "arithmetic", f"`{token}` -> `{new}`")
        elif token in _BOOLEAN:
            new = _BOOLEAN[token]
            yield self.replace(op, new.encode(), "boolean", f"`{token}` -> `{new}`")

    def stringish(self, node: Any) -> bool:
        """A string literal, or a ``+`` chain holding one (``name + ": " + cause``): ``+``
        is concatenation there. Parenthesised operands are looked through."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in self.g.strings:
                return True
            if current.type == "parenthesized_expression":
                stack.extend(_named(current))
            elif current.type == "binary_expression":
                op = current.child_by_field_name("operator")
                if op is not None and syntax.text(op) == "+":
                    stack.extend(_named(current))
        return False

    def integer(self, node: Any) -> Iterator[Candidate]:
        if node.parent is not None and node.parent.type == "field_expression":
            return  # Rust's tuple field `self.0`: a name, not a number
        text = syntax.text(node)
        form = self.g.int_form.fullmatch(text)
        if form is None:
            return
        value = int(form.group(1))
        for other in (value + 1, value - 1):
            if other >= 0:  # an unsigned type may not hold a negative
                new = f"{other}{form.group(2)}"
                yield self.replace(node, new.encode(), "boundary", f"`{text}` -> `{new}`")

    def negate(self, node: Any) -> Iterator[Candidate]:
        cond = node.child_by_field_name("condition")
        if cond is None or cond.type in ("let_condition", "let_chain"):
            return
        if cond.type == "parenthesized_expression":
            inner = _named(cond)
            if len(inner) != 1:
                return
            cond = inner[0]
        if _negation(cond) or _equality(cond):
            return  # removing its `!`, flipping its `==`, is the same mutant
        text = b"!(" + bytes(cond.text or b"") + b")"
        yield self.replace(cond, text, "negate", "`if c` -> `if !(c)`")

    def drop_else(self, node: Any) -> Iterator[Candidate]:
        alt = node.child_by_field_name("alternative")
        body = node.child_by_field_name("consequence")
        if alt is None or body is None:
            return
        block = alt
        if alt.type == "else_clause":
            inner = _named(alt)
            if len(inner) != 1:
                return
            block = inner[0]
        if block.type in self.g.ifs:
            return  # an else-if chain
        if node.type == "if_expression" and (
            node.parent is None or node.parent.type != "expression_statement"
        ):
            return  # a Rust `if` whose value is used needs its else to type-check
        else_token = next((c for c in node.children if c.type == "else"), None)
        if else_token is None and alt.type == "else_clause":
            else_token = alt
        if else_token is None:
            return
        start = body.end_byte
        cand = self.candidate(start, alt.end_byte, b"", "drop_else", "`else` block dropped")
        # The line of the change is the else keyword's (the gap before it may hold a newline).
        yield Candidate(
            else_token.start_point[0] + 1,
            else_token.start_point[1],
            cand.operator,
            cand.description,
            cand.start,
            cand.end,
            cand.replacement,
        )

    def default_return(self, node: Any) -> Iterator[Candidate]:
        values = _named(node)
        if not values:
            return
        zero = self.zero_value(node)
        if zero is None:
            return
        start, end = values[0].start_byte, values[-1].end_byte
        yield self.candidate(
            start, end, zero.encode(), "return_default", f"`return x` -> `return {zero}`"
        )

    def default_tail(self, block: Any) -> Iterator[Candidate]:
        """A Rust function's value is its block's last expression (no ``;``): the implicit
        return, defaulted like an explicit one."""
        items = _named(block)
        if not items:
            return
        tail = items[-1]
        if tail.type.endswith(("statement", "declaration", "item")) or tail.type in (
            "if_expression",
            "match_expression",
            "loop_expression",
            "while_expression",
            "for_expression",
            "block",
            "unsafe_block",
            "return_expression",
        ):
            return  # not a value, or a branch whose arms are mutated instead
        zero = self.zero_value(block)
        if zero is not None and syntax.text(tail) != zero:
            yield self.replace(tail, zero.encode(), "return_default", f"tail `x` -> `{zero}`")

    def zero_value(self, node: Any) -> str | None:
        """The zero value of the enclosing function's result, None when not plain."""
        func = next((a for a in syntax.ancestors(node) if a.type in self.g.functions), None)
        if func is None:
            return None
        kind = func.type
        if kind in ("function_declaration", "method_declaration", "func_literal") and self.go:
            result = func.child_by_field_name("result")
            if result is None:
                return None
            if result.type != "parameter_list":
                return _go_zero(result)
            zeros = []
            for decl in _named(result):
                typ = decl.child_by_field_name("type")
                zero = _go_zero(typ) if typ is not None else None
                if zero is None:
                    return None
                names = [c for c in decl.named_children if c.type == "identifier"]
                zeros.extend([zero] * max(1, len(names)))
            return ", ".join(zeros) if zeros else None
        if kind == "function_item":
            result = func.child_by_field_name("return_type")
            if result is None:
                return None
            text = syntax.text(result)
            if text in _RUST_ZERO:
                return _RUST_ZERO[text]
            if text.startswith("Option<"):
                return "None"
            if text.startswith("Vec<"):
                return "Vec::new()"
            return None
        if kind in ("method_declaration",):  # Java
            result = func.child_by_field_name("type")
            if result is None or result.type == "void_type":
                return None
            return _JAVA_ZERO.get(result.type, "null")
        # JavaScript is untyped: ``undefined`` is every function's default; TypeScript would
        # refuse it where the declared type does not allow it, so it gets none.
        javascript = not self.go and not self.typescript and kind in _JS_FUNCTIONS
        return "undefined" if javascript else None

    def swap(self, node: Any) -> Iterator[Candidate]:
        args = node.child_by_field_name("arguments")
        if args is None:
            return
        items = _named(args)
        if len(items) < 2 or any(
            "spread" in a.type or "variadic" in a.type or a.type.startswith("type")
            for a in items[:2]
        ):
            return
        if self.go:
            func = node.child_by_field_name("function")
            if func is not None and syntax.text(func) in _GO_UNSWAPPABLE:
                return
        first, second = bytes(items[0].text or b""), bytes(items[1].text or b"")
        if first == second:
            return
        if _literal(items[0]) and _literal(items[1]) and items[0].type != items[1].type:
            return  # `f("abc", 10)` -> `f(10, "abc")` cannot type-check
        between = self.source[items[0].end_byte : items[1].start_byte]
        yield self.candidate(
            items[0].start_byte,
            items[1].end_byte,
            second + between + first,
            "swap_arguments",
            "first two arguments swapped",
        )

    def slicer(self, node: Any) -> Iterator[Candidate]:
        """``s.slice(i)``, ``s.substring(i)``: the first argument is a slice bound."""
        if not self.g.slicers:
            return
        name = node.child_by_field_name("name")  # Java
        func = node.child_by_field_name("function")  # JS
        if name is None and func is not None and func.type == "member_expression":
            name = func.child_by_field_name("property")
        args = node.child_by_field_name("arguments")
        if name is None or args is None or syntax.text(name) not in self.g.slicers:
            return
        items = _named(args)
        if items and "spread" not in items[0].type:
            bound = items[0]
            yield self.replace(bound, self.operand(bound) + b" + 1", "slice", "slice bound + 1")

    def slice(self, node: Any) -> Iterator[Candidate]:
        if node.type == "slice_expression":  # Go: a[start:end]
            bounds = [node.child_by_field_name(f) for f in ("start", "end")]
        else:  # Rust: a[start..end], only inside an index
            if node.parent is None or node.parent.type != "index_expression":
                return
            bounds = _named(node)
        for bound in bounds:
            if bound is not None:
                yield self.replace(bound, self.operand(bound) + b" + 1", "slice", "slice bound + 1")

    def removable(self, node: Any) -> bool:
        inner = _named(node)
        if not inner:
            return False
        # A Rust macro call outside a function defines items: not a statement to drop.
        if inner[0].type == "macro_invocation" and not any(
            a.type in self.g.functions for a in syntax.ancestors(node)
        ):
            return False
        head = inner[0]
        # A return is defaulted, not removed; a block-like expression statement (Rust's
        # `if`/`match`/loops) is a branch, not a statement; a Go/JS `x := ...` is a
        # declaration.
        return head.type not in (
            "return_expression",
            "if_expression",
            "match_expression",
            "loop_expression",
            "while_expression",
            "for_expression",
            "block",
            "unsafe_block",
            "string",
        )


def _go_zero(node: Any) -> str | None:
    if node.type in _GO_NIL_TYPES:
        return "nil"
    return _GO_ZERO.get(syntax.text(node))


def _short(text: str) -> str:
    """A span's text for a description (one line, at most 60 characters)."""
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:57] + "..."


def _describe(old: str, new: bytes) -> str:
    return f"`{_short(old)}` -> `{_short(new.decode('utf-8', 'replace'))}`"


_LITERAL_WORDS = frozenset(
    {"true", "false", "nil", "null", "undefined", "none", "number", "string"}
)


def _literal(node: Any) -> bool:
    """A literal of any kind (a number, string, char, boolean, nil...)."""
    kind = str(node.type)
    return kind.endswith("literal") or kind in _LITERAL_WORDS or kind == "template_string"


def _negation(node: Any) -> bool:
    """``!c``."""
    return bool(node.type == "unary_expression" and node.children and node.children[0].type == "!")


def _equality(node: Any) -> bool:
    """``a == b`` and the like, whose operator flip is the condition's negation."""
    if node.type != "binary_expression":
        return False
    op = node.child_by_field_name("operator")
    return op is not None and syntax.text(op) in _COMPARISON
