"""Mutants of Python source, found on its ``ast`` and written into its text.

The tree says *what* to change (a comparison, a literal, a statement) and where, by
(line, byte column) spans; the change is an edit of the source bytes at that span, so
formatting and comments elsewhere in the file survive. Each result must parse, and a result
whose ``ast.dump`` equals the original's (or an earlier mutant's) is an equivalent mutant and
is dropped. The source comes from a mined repository: it is parsed, never compiled or run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from swe_forge.mutation.select import (
    MAX_SOURCE_BYTES,
    Candidate,
    FileMutations,
    Lines,
    LineSet,
    tiers,
)

# Comparison operators: (token pattern in the gap between operands, replacement, operator).
_COMPARE: dict[type[ast.cmpop], tuple[str, str, str]] = {
    ast.Gt: (r">", ">=", "boundary"),
    ast.GtE: (r">=", ">", "boundary"),
    ast.Lt: (r"<", "<=", "boundary"),
    ast.LtE: (r"<=", "<", "boundary"),
    ast.Eq: (r"==", "!=", "comparison"),
    ast.NotEq: (r"!=", "==", "comparison"),
    ast.Is: (r"\bis\b(?!\s+not\b)", "is not", "comparison"),
    ast.IsNot: (r"\bis\s+not\b", "is", "comparison"),
    ast.In: (r"(?<!not )\bin\b", "not in", "comparison"),
    ast.NotIn: (r"\bnot\s+in\b", "in", "comparison"),
}
_ORDERING = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)

_ARITHMETIC: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: (r"\+", "-"),
    ast.Sub: (r"-", "+"),
    ast.Mult: (r"\*(?!\*)", "/"),
    ast.Div: (r"(?<!/)/(?!/)", "*"),
    ast.FloorDiv: (r"//", "*"),
}

#: Expressions whose text needs no parentheses as an operand.
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)

#: Statements whose removal is a mutant (declarations, imports and control flow are not).
_REMOVABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Break,
    ast.Continue,
)

#: Nodes never entered: imports, f-strings (their parts carry no usable spans), scope
#: declarations.
_SKIP_NODES = (ast.Import, ast.ImportFrom, ast.JoinedStr, ast.Global, ast.Nonlocal)
#: Fields never entered: type annotations and decorators (changing them changes no behaviour
#: the tests see, or only at import).
_SKIP_FIELDS = frozenset({"annotation", "returns", "decorator_list", "type_comment", "type_params"})

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMMENT = re.compile(rb"#[^\n]*")


_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


class _Normaliser:
    """The normal form of a mutated source, None when it does not parse or equals the
    original after normalisation (an equivalent mutant).

    The edit lies inside one top-level statement (its decorators included), and the text
    around it is the original's: the lines of that statement are parsed on their own and
    their ``ast.dump`` is the form. A statement sequence followed and preceded by the same
    whole statements parses as a module when it parses alone, so this is the whole file's
    answer at the cost of one statement (a large module costs its changed function only).
    """

    def __init__(self, source: bytes, tree: ast.Module) -> None:
        self.source = source
        lines = Lines(source)
        self.spans: list[tuple[int, int]] = []
        for stmt in tree.body:
            first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
            self.spans.append((lines.span(first)[0], lines.span(stmt.end_lineno or first)[1]))
        self.originals: dict[tuple[int, int], str | None] = {}

    def __call__(self, mutated: bytes, candidate: Candidate) -> object | None:
        inside = [
            i
            for i, (lo, hi) in enumerate(self.spans)
            if lo <= candidate.start < hi or lo < candidate.end <= hi
        ]
        if not inside:
            return None  # not within a statement: nothing the operators propose
        lo, hi = self.spans[inside[0]][0], self.spans[inside[-1]][1]
        key = (lo, hi)
        if key not in self.originals:
            self.originals[key] = _dump(self.source[lo:hi])
        delta = len(candidate.replacement) - (candidate.end - candidate.start)
        form = _dump(mutated[lo : hi + delta])
        if form is None or form == self.originals[key]:
            return None
        return key, form


def _dump(source: bytes) -> str | None:
    """The ``ast.dump`` of a source, None when it does not parse."""
    try:
        return ast.dump(ast.parse(_decoded(source)))
    except _PARSE_ERRORS:
        return None


def _decoded(source: bytes) -> str:
    # Parsed as text, not bytes: a coding cookie (``latin-1``) must not re-decode the UTF-8
    # the caller gave, and the AST's columns are then UTF-8 byte offsets of that text.
    return source.decode("utf-8", "surrogateescape")


def mutations(path: str, source: bytes, lines: set[int]) -> FileMutations | None:
    """The candidates of one file restricted to ``lines`` (tier 1) and to the functions that
    enclose them (tier 2); None when the file does not parse or is too large."""
    if len(source) > MAX_SOURCE_BYTES or not lines:
        return None
    try:
        tree = ast.parse(_decoded(source))
    except _PARSE_ERRORS:
        return None
    finder = _Finder(source)
    changed = LineSet(lines)
    first = [c for c in finder.visit(tree, changed) if c.line in changed]
    # The innermost function around each changed line: its other lines are tier 2.
    found = tiers(
        changed, finder.functions, first, lambda wider: _Finder(source).visit(tree, wider)
    )
    return FileMutations(
        path=path,
        source=source,
        tiers=found,
        accept=_Normaliser(source, tree),
        original=None,
    )


class _Finder:
    """Walks the nodes of a tree whose line span meets a set of lines (and no others: a huge
    file costs only its changed regions) and proposes candidates at them."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.lines = Lines(source)
        self.functions: list[tuple[int, int]] = []
        #: Constants inside error and log messages (their strings are not mutated).
        self.messages: set[int] = set()

    # ------------------------------------------------------------------ spans and text
    def start(self, node: ast.AST) -> int:
        return self.lines.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.lines.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def text(self, node: ast.AST) -> bytes:
        return self.source[self.start(node) : self.end(node)]

    def operand(self, node: ast.AST) -> bytes:
        """A node's text, parenthesised unless it is atomic."""
        body = self.text(node)
        return body if isinstance(node, _ATOMIC) else b"(" + body + b")"

    def candidate(
        self, start: int, end: int, replacement: bytes, operator: str, description: str
    ) -> Candidate:
        line = self.lines.line_of(start)
        col = start - self.lines.offset(line, 0)
        return Candidate(line, col, operator, description, start, end, replacement)

    def token(self, left: ast.AST, right: ast.AST, pattern: str) -> tuple[int, int] | None:
        """The (start, end) of an operator token between two operands: the gap between them
        holds only it, parentheses, whitespace and comments (no strings), so a pattern
        matched outside comments finds it."""
        lo, hi = self.end(left), self.start(right)
        gap = _COMMENT.sub(lambda m: b" " * len(m.group()), self.source[lo:hi])
        found = re.search(pattern.encode(), gap)
        return (lo + found.start(), lo + found.end()) if found else None

    # ------------------------------------------------------------------ the walk
    def visit(self, tree: ast.AST, wanted: LineSet) -> Iterator[Candidate]:
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, _SKIP_NODES) or _exports(node):
                continue
            lineno = getattr(node, "lineno", None)
            if lineno is not None:
                last = getattr(node, "end_lineno", None) or lineno
                if not wanted.meets(lineno, last):
                    continue
                if isinstance(node, _FUNCTIONS):
                    self.functions.append((lineno, last))
            if _is_message(node):
                self.messages.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Constant))
            yield from self.propose(node)
            children: list[ast.AST] = []
            for name, value in ast.iter_fields(node):
                if name in _SKIP_FIELDS:
                    continue
                items = value if isinstance(value, list) else [value]
                if name == "body" and _docstring(items):
                    items = items[1:]
                children.extend(v for v in items if isinstance(v, ast.AST))
            stack.extend(reversed(children))

    def propose(self, node: ast.AST) -> Iterator[Candidate]:
        if isinstance(node, ast.Compare):
            yield from self.compare(node)
        elif isinstance(node, ast.BinOp):
            yield from self.binop(node)
        elif isinstance(node, ast.AugAssign):
            yield from self.augassign(node)
        elif isinstance(node, ast.BoolOp):
            yield from self.boolop(node)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            start = self.start(node)
            gap = re.match(rb"not\s*", self.source[start : self.start(node.operand)])
            if gap:
                yield self.candidate(start, start + gap.end(), b"", "negate", "`not c` -> `c`")
        elif isinstance(node, ast.Constant):
            yield from self.constant(node)
        elif isinstance(node, ast.Call):
            yield from self.swap(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            yield from self.slice(node.slice)
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            test = node.test
            # `while True` is a loop, not a condition; a `not c` or `a == b` condition is
            # negated already by removing its `not` or flipping its operator.
            constant_loop = isinstance(test, ast.Constant) and isinstance(node, ast.While)
            if not constant_loop and not _negated_already(test):
                yield self.candidate(
                    self.start(test),
                    self.end(test),
                    b"not " + self.operand(test),
                    "negate",
                    "`if c` -> `if not c`",
                )
        if isinstance(node, ast.If):
            yield from self.drop_else(node)
        value = node.value if isinstance(node, ast.Return) else None
        if value is not None and not _is_none(value):
            yield self.candidate(
                self.start(value),
                self.end(value),
                b"None",
                "return_default",
                "`return x` -> `return None`",
            )
        if _removable(node):
            yield self.candidate(
                self.start(node),
                self.end(node),
                b"pass",
                "remove_statement",
                "statement -> `pass`",
            )

    # ------------------------------------------------------------------ operators
    def compare(self, node: ast.Compare) -> Iterator[Candidate]:
        left: ast.AST = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            pattern, new, operator = _COMPARE[type(op)]
            span = self.token(left, right, pattern)
            if span:
                old = self.source[span[0] : span[1]].decode()
                yield self.candidate(*span, new.encode(), operator, f"`{old}` -> `{new}`")
            if isinstance(op, _ORDERING) and not _int_literal(right):
                for sign in ("+", "-"):
                    moved = self.operand(right) + f" {sign} 1".encode()
                    yield self.candidate(
                        self.start(right),
                        self.end(right),
                        moved,
                        "boundary",
                        f"`{_short(self.text(right))}` -> `{_short(moved)}`",
                    )
            left = right

    def binop(self, node: ast.BinOp) -> Iterator[Candidate]:
        swap = _ARITHMETIC.get(type(node.op))
        if swap is None or _stringish(node.left) or _stringish(node.right):
            return
        span = self.token(node.left, node.right, swap[0])
        if span:
            old = self.source[span[0] : span[1]].decode()
            yield self.candidate(*span, swap[1].encode(), "arithmetic", f"`{old}` -> `{swap[1]}`")

    def augassign(self, node: ast.AugAssign) -> Iterator[Candidate]:
        swap = _ARITHMETIC.get(type(node.op))
        if swap is None or _stringish(node.value):
            return
        span = self.token(node.target, node.value, swap[0] + "=")
        if span:
            old = self.source[span[0] : span[1]].decode()
            new = swap[1] + "="
            yield self.candidate(*span, new.encode(), "arithmetic", f"`{old}` -> `{new}`")

    def boolop(self, node: ast.BoolOp) -> Iterator[Candidate]:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for left, right in zip(node.values, node.values[1:], strict=False):
            span = self.token(left, right, rf"\b{old}\b")
            if span:
                yield self.candidate(*span, new.encode(), "boolean", f"`{old}` -> `{new}`")

    def constant(self, node: ast.Constant) -> Iterator[Candidate]:
        value = node.value
        start, end = self.start(node), self.end(node)
        if isinstance(value, bool):
            new = "False" if value else "True"
            yield self.candidate(start, end, new.encode(), "constant", f"`{value}` -> `{new}`")
        elif isinstance(value, int):
            for other in (value + 1, value - 1):
                text = str(other) if other >= 0 else f"({other})"
                yield self.candidate(
                    start, end, text.encode(), "boundary", f"`{value}` -> `{other}`"
                )
        elif isinstance(value, (str, bytes)) and id(node) not in self.messages:
            prefix = b"b" if isinstance(value, bytes) else b""
            empty = prefix + (b'"x"' if not value else b'""')
            yield self.candidate(
                start,
                end,
                empty,
                "constant",
                f"`{_short(self.text(node))}` -> `{empty.decode()}`",
            )

    def swap(self, node: ast.Call) -> Iterator[Candidate]:
        args = node.args
        if len(args) < 2 or any(isinstance(a, ast.Starred) for a in args[:2]):
            return
        first, second = self.text(args[0]), self.text(args[1])
        if first == second:
            return
        between = self.source[self.end(args[0]) : self.start(args[1])]
        yield self.candidate(
            self.start(args[0]),
            self.end(args[1]),
            second + between + first,
            "swap_arguments",
            "first two arguments swapped",
        )

    def slice(self, node: ast.Slice) -> Iterator[Candidate]:
        for bound, name in ((node.lower, "lower"), (node.upper, "upper")):
            if bound is not None:
                yield self.candidate(
                    self.start(bound),
                    self.end(bound),
                    self.operand(bound) + b" + 1",
                    "slice",
                    f"{name} slice bound + 1",
                )

    def drop_else(self, node: ast.If) -> Iterator[Candidate]:
        if not node.orelse or not node.body:
            return
        head = node.orelse[0]
        if self.source[self.start(head) :].startswith(b"elif"):
            return  # an elif chain, not an else block
        body_end = node.body[-1].end_lineno or node.body[-1].lineno
        indent = node.col_offset
        for line in range(body_end + 1, head.lineno + 1):
            lo, hi = self.lines.span(line)
            text = self.source[lo:hi]
            if re.match(rb"[ \t]*else[ \t]*:", text) and len(text) - len(text.lstrip()) == indent:
                last = node.orelse[-1].end_lineno or node.orelse[-1].lineno
                # A line-continued or same-line else ends where its last statement ends.
                end = self.lines.span(last)[1]
                yield self.candidate(lo, end, b"", "drop_else", "`else` block dropped")
                return


def _docstring(body: list[object]) -> bool:
    first = body[0] if body else None
    return isinstance(first, ast.Expr) and _is_docstring_like(first)


def _is_docstring_like(node: ast.AST) -> bool:
    """A bare string or ``...`` statement: removing it changes nothing."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and (isinstance(node.value.value, str) or node.value.value is Ellipsis)
    )


def _int_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _stringish(node: ast.AST) -> bool:
    """Operands of ``+``/``*`` that make it concatenation or repetition, not arithmetic."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    return isinstance(node, (ast.JoinedStr, ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.Set))


def _short(text: bytes) -> str:
    """A span's text for a description (one line, at most 60 characters)."""
    line = " ".join(text.decode("utf-8", "replace").split())
    return line if len(line) <= 60 else line[:57] + "..."


def _is_none(node: ast.AST | None) -> bool:
    """No value, or the literal ``None``: nothing to default."""
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _removable(node: ast.AST) -> bool:
    """A statement whose removal changes behaviour: not a docstring or ``...``, and not a
    bare annotation (``x: int`` declares, a dataclass reads it)."""
    if isinstance(node, ast.AnnAssign):
        return node.value is not None
    return isinstance(node, _REMOVABLE) and not _is_docstring_like(node)


def _negated_already(test: ast.AST) -> bool:
    """A condition another operator negates exactly: ``not c``, ``a == b``, ``a is b``..."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and not isinstance(test.ops[0], _ORDERING)
    )


def _exports(node: ast.AST) -> bool:
    """``__all__ = [...]``: only star-imports read it, tests almost never."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


#: Calls whose string arguments are messages for people (logs, warnings, output).
_MESSAGE_CALLS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"}
)


def _is_message(node: ast.AST) -> bool:
    """A ``raise`` or a logging/warning/print call: changing its message text is a mutant
    hardly any test (or reviewer) would call a wrong fix, and it would spend the budget."""
    if isinstance(node, ast.Raise):
        return True
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _MESSAGE_CALLS
