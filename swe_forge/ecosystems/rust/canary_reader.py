"""One Rust test function read for the canary writer: its assertion macros' arguments
parsed again as expressions, which literals are expected values and which spans hold no
site (messages, printing and logging macros, ``.expect`` messages, attributes, array
lengths), and which literals are a formatting macro's template.

The rules are those of :mod:`swe_forge.ecosystems.rust.canary`'s docstring (the module
docstring the docstrings below refer to); the writer there builds a :class:`_Reader` per
test. Kept apart from the writer because the reading is most of its length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.canaries import assigned_names, span

_EQ = frozenset(["assert_eq", "debug_assert_eq", "prop_assert_eq", "assert_str_eq"])
_NE = frozenset(["assert_ne", "debug_assert_ne", "prop_assert_ne"])
_ASSERT = frozenset(["assert", "debug_assert", "prop_assert"])
#: Equality assertions and their opposites: a guard decoy of a comparison with no value
#: written out swaps one for the other.
OPPOSITE_MACROS = {
    "assert_eq": "assert_ne",
    "assert_ne": "assert_eq",
    "debug_assert_eq": "debug_assert_ne",
    "debug_assert_ne": "debug_assert_eq",
    "prop_assert_eq": "prop_assert_ne",
    "prop_assert_ne": "prop_assert_eq",
}
#: Macros whose arguments are messages or output, never what a test decides on.
_SILENT = frozenset(
    [
        "panic",
        "println",
        "print",
        "eprintln",
        "eprint",
        "dbg",
        "unreachable",
        "todo",
        "unimplemented",
        "trace",
        "debug",
        "info",
        "warn",
        "error",
        "log",
    ]
)
#: Macros whose argument at this position is a format string: its text is a template the
#: compiler checks (``{:?}`` changed to ``{#?}`` does not build) and no value a test compares.
_FORMAT = {"format": 0, "format_args": 0, "write": 1, "writeln": 1}
#: Methods in an ``assert!`` whose argument is the expected value.
_EXPECTING = frozenset(["contains", "starts_with", "ends_with", "eq", "contains_key"])
#: Methods that keep a literal receiver a value (``"x".to_string()``).
_VALUE_METHODS = frozenset(
    ["to_string", "to_owned", "into", "to_vec", "as_str", "as_bytes", "as_slice", "as_ref"]
)
#: ``T::from(..)``/``T::new(..)`` of these std types is a value.
_VALUE_TYPES = frozenset(
    [
        "String",
        "Vec",
        "Box",
        "Rc",
        "Arc",
        "PathBuf",
        "OsString",
        "Cow",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "VecDeque",
    ]
)
#: Node types through which a literal stays part of the value it is in.
_THROUGH = frozenset(
    [
        "array_expression",
        "tuple_expression",
        "parenthesized_expression",
        "reference_expression",
        "unary_expression",
        "struct_expression",
        "field_initializer_list",
        "field_initializer",
        "base_field_initializer",
        "arguments",
        "call_expression",
        "type_cast_expression",
        "binary_expression",
    ]
)
_LITERALS = frozenset(
    [
        "string_literal",
        "raw_string_literal",
        "char_literal",
        "integer_literal",
        "float_literal",
        "boolean_literal",
    ]
)


def _text(node: Any) -> str:
    return syntax.text(node) if node is not None else ""


def _field(node: Any, name: str) -> Any:
    return node.child_by_field_name(name)


class _View:
    """A node of the file's tree or of a macro's arguments parsed again: ``shift`` maps its
    offsets to the file's."""

    __slots__ = ("node", "shift")

    def __init__(self, node: Any, shift: int = 0) -> None:
        self.node = node
        self.shift = shift

    @property
    def type(self) -> str:
        """The node's type."""
        return str(self.node.type)

    @property
    def span(self) -> tuple[int, int]:
        """The node's span in the file."""
        return self.node.start_byte + self.shift, self.node.end_byte + self.shift

    def field(self, name: str) -> _View | None:
        """A field child, in the same view."""
        child = self.node.child_by_field_name(name)
        return _View(child, self.shift) if child is not None else None

    def named(self) -> list[_View]:
        """The named children (comments aside), in the same view."""
        return [_View(c, self.shift) for c in self.node.named_children if c.type != "line_comment"]

    def text(self) -> str:
        """The node's source text."""
        return _text(self.node)


_CALL_HEAD = b"fn _f(){_g"
_ARRAY_HEAD = b"fn _f(){"


def macro_args(macro: _View) -> list[_View] | None:
    """A macro call's arguments parsed as call arguments (None when they are no
    expressions: patterns, ``=>``...)."""
    tree_node = next((c for c in macro.named() if c.type == "token_tree"), None)
    if tree_node is None:
        return None
    data = bytes(tree_node.node.text or b"")
    if len(data) < 2:
        return None
    wrapped = _CALL_HEAD + b"(" + data[1:-1] + b");}"
    tree = syntax.parse("rust", wrapped)
    if tree.root_node.has_error:
        return None
    shift = tree_node.span[0] - len(_CALL_HEAD)
    for node in syntax.walk(tree.root_node):
        if node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            return [_View(a, shift) for a in args.named_children if a.type != "line_comment"]
    return None


def vec_items(macro: _View) -> _View | None:
    """``vec![...]`` parsed as the array it makes."""
    tree_node = next((c for c in macro.named() if c.type == "token_tree"), None)
    if tree_node is None:
        return None
    data = bytes(tree_node.node.text or b"")
    if len(data) < 2:
        return None
    tree = syntax.parse("rust", _ARRAY_HEAD + b"[" + data[1:-1] + b"];}")
    if tree.root_node.has_error:
        return None
    shift = tree_node.span[0] - len(_ARRAY_HEAD)
    for node in syntax.walk(tree.root_node):
        if node.type == "array_expression":
            return _View(node, shift)
    return None


def macro_name(node: _View) -> str:
    """The last segment of a macro's path (``assert_eq``, ``vec``)."""
    name = node.field("macro")
    return name.text().rsplit("::", 1)[-1] if name is not None else ""


def top_level_commas(macro: Any) -> list[int]:
    """Byte offsets of the commas between a macro's arguments (its token tree's own)."""
    tree = next((c for c in macro.named_children if c.type == "token_tree"), None)
    if tree is None:
        return []
    out = []
    angles = 0  # inside a turbofish's `::<...>` (`cast::<f64, u8>(x)`): its commas are not
    previous = ""
    for c in tree.children:
        if c.type == "<" and (previous == "::" or angles):
            angles += 1
        elif c.type in (">", ">>") and angles:
            angles = max(0, angles - len(c.type))
        elif c.type == "," and not c.is_named and not angles:
            out.append(c.start_byte)
        previous = c.type
    return out


def format_string(node: Any) -> bool:
    """Is a literal the template of a formatting macro (``format!("{:?}", x)``,
    ``write!(f, "{}", x)``), at the top or nested in another macro's tokens?"""
    tree = node.parent
    if tree is None or tree.type != "token_tree":
        return False
    owner = tree.parent
    if owner is not None and owner.type == "macro_invocation":
        name = macro_name(_View(owner))
    else:
        bang = tree.prev_sibling
        ident = bang.prev_sibling if bang is not None and bang.type == "!" else None
        if ident is None or ident.type != "identifier":
            return False
        name = _text(ident)
    before = [c for c in tree.children if c.end_byte <= node.start_byte]
    commas = sum(1 for c in before if not c.is_named and c.type == ",")
    if name in _FORMAT:
        return commas == _FORMAT[name]
    # Any other macro's first argument with a placeholder is a template too (``anyhow!``,
    # ``bail!``, ``format_err!``, a project's own): the compiler checks it against the rest.
    compares = name in _EQ or name in _NE or name in _ASSERT or name == "vec"
    return (
        not compares and commas == 0 and re.search(r"\{[\w:?#<>^.+-]*\}", _text(node)) is not None
    )


class _Reader:
    """One test function read: expected values and excluded spans."""

    def __init__(self, func: Any, attributes: list[Any]) -> None:
        self.func = func
        self.attributes = attributes
        self.excluded: list[tuple[int, int]] = []
        self.expected: set[tuple[int, int]] = set()
        self.guards: list[tuple[int, int]] = []  # assert!'s conditions (see RustCanaryWriter.find)
        self._assigned: set[str] | None = None

    def read(self) -> None:
        """Find the expected values and what is no site."""
        for attr in self.attributes:
            inner = next((c for c in attr.named_children if c.type == "attribute"), None)
            if inner is not None and _text(inner).startswith("should_panic"):
                for node in syntax.walk(inner):
                    if node.type in ("string_literal", "raw_string_literal"):
                        self.expected.add(span(node))
        body = _field(self.func, "body")
        if body is None:
            return
        for node in syntax.walk(body):
            if node.type == "macro_invocation":
                self._macro(_View(node))
            elif node.type == "call_expression":
                fn = _field(node, "function")
                expect = fn is not None and fn.type == "field_expression"
                if expect and _text(_field(fn, "field")) == "expect":
                    args = _field(node, "arguments")
                    if args is not None:
                        self.excluded.append(span(args))
            elif node.type in ("array_type", "type_arguments", "attribute_item"):
                self.excluded.append(span(node))
            elif node.type == "array_expression":
                length = _field(node, "length")
                if length is not None:
                    self.excluded.append(span(length))

    def _macro(self, macro: _View) -> None:
        name = macro_name(macro)
        if name in _SILENT:
            self.excluded.append(macro.span)
            return
        keep = 2 if name in _EQ | _NE else 1 if name in _ASSERT else -1
        if keep < 0:
            return
        commas = top_level_commas(macro.node)
        if len(commas) >= keep:
            self.excluded.append((commas[keep - 1], macro.span[1]))
        args = macro_args(macro)
        if args is None or len(args) < keep:
            return
        if name in OPPOSITE_MACROS:
            # `assert_eq!(None, cast::<f64, NonZeroI8>(big))` (num-traits-334): where no value
            # of the test is written out, the comparison itself is a guard: its decoy asks
            # the opposite (`assert_ne!`), which the gold patch fails.
            path = macro.field("macro")
            if path is not None and path.type == "identifier":
                self.guards.append(path.span)
        if name in _EQ:
            self._pair(args[0], args[1])
        elif name in _ASSERT:
            self._condition(args[0])
            self.guards.append(args[0].span)

    def _condition(self, node: _View) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("closure_expression", "macro_invocation"):
                continue
            if current.type == "unary_expression" and current.text().startswith("!"):
                continue
            if current.type == "binary_expression":
                op = current.field("operator")
                if op is not None and op.text() == "==":
                    left, right = current.field("left"), current.field("right")
                    if left is not None and right is not None:
                        self._pair(left, right)
                    continue
            if current.type == "call_expression":
                fn = current.field("function")
                args = current.field("arguments")
                if fn is not None and fn.type == "field_expression" and args is not None:
                    method = fn.field("field")
                    items = args.named()
                    if method is not None and method.text() in _EXPECTING and len(items) == 1:
                        got = self._resolve(items[0])
                        if got is not None:
                            self._mark(got)
                continue
            stack.extend(current.named())

    def _pair(self, a: _View, b: _View) -> None:
        ra, rb = self._resolve(a), self._resolve(b)
        if ra is not None and rb is None:
            self._mark(ra)
        elif rb is not None and ra is None:
            self._mark(rb)

    def _resolve(self, node: _View, depth: int = 0) -> _View | None:
        """The value an expression is or names (None: not a value)."""
        if depth > 4:
            return None
        if node.type == "identifier":
            bound = self._binding(node.text(), node.span[0])
            return self._resolve(bound, depth + 1) if bound is not None else None
        return node if is_value(node) else None

    def _binding(self, name: str, before: int) -> _View | None:
        """The value of the nearest ``let name = ...`` before ``before`` (none for a
        ``let mut`` or a name assigned later)."""
        if self._assigned is None:
            self._assigned = assigned_names(
                self.func, ("assignment_expression", "compound_assignment_expr"), ()
            )
        if name in self._assigned:
            return None
        best = None
        for node in syntax.walk(self.func):
            if node.start_byte >= before:
                break
            if node.type == "let_declaration":
                pattern, value = _field(node, "pattern"), _field(node, "value")
                if pattern is not None and value is not None and _text(pattern) == name:
                    mutable = any(c.type == "mutable_specifier" for c in node.children)
                    best = None if mutable else _View(value)
        return best

    def _mark(self, root: _View) -> None:
        for s in value_literals(root):
            self.expected.add(s)


def is_value(node: _View) -> bool:
    """Is an expression a value written in the test (see the module docstring)?"""
    kind = node.type
    if kind in _LITERALS:
        return True
    if kind in ("array_expression", "tuple_expression", "struct_expression"):
        return True
    if kind in ("unary_expression", "reference_expression", "parenthesized_expression"):
        inner = node.named()
        return bool(inner) and is_value(inner[-1])
    if kind == "type_cast_expression":
        value = node.field("value")
        return value is not None and is_value(value)
    if kind == "macro_invocation":
        return macro_name(node) == "vec"
    if kind == "binary_expression":
        op = node.field("operator")
        left, right = node.field("left"), node.field("right")
        return (
            op is not None
            and op.text() in ("+", "-", "*", "/", "%", "<<", ">>", "|", "&", "^")
            and left is not None
            and right is not None
            and is_value(left)
            and is_value(right)
        )
    if kind == "call_expression":
        return _value_call(node)
    return False


def _value_call(node: _View) -> bool:
    fn = node.field("function")
    if fn is None:
        return False
    if fn.type == "field_expression":  # "x".to_string()
        method, receiver = fn.field("field"), fn.field("value")
        return (
            method is not None
            and method.text() in _VALUE_METHODS
            and receiver is not None
            and is_value(receiver)
        )
    if fn.type == "generic_function":
        inner = fn.field("function")
        if inner is None:
            return False
        fn = inner
    path = fn.text().split("::")
    last = path[-1]
    if last[:1].isupper():
        return True  # Some(..), Ok(..), Foo::Bar(..), Point(..)
    return len(path) >= 2 and last in ("from", "new") and path[-2] in _VALUE_TYPES


def value_literals(root: _View) -> Iterator[tuple[int, int]]:
    """Spans of the literals a value is made of (not those under other calls)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _LITERALS:
            yield node.span
            continue
        if node.type == "macro_invocation" and macro_name(node) == "vec":
            items = vec_items(node)
            if items is not None:
                stack.append(items)
            continue
        if node.type == "call_expression" and not _value_call(node):
            continue
        if node.type == "call_expression":
            fn = node.field("function")
            if fn is not None and fn.type == "field_expression":
                receiver = fn.field("value")
                if receiver is not None:
                    stack.append(receiver)
            args = node.field("arguments")
            if args is not None:
                stack.append(args)
            continue
        if node.type in _THROUGH or node is root:
            stack.extend(node.named())
