"""One Go file's walk for the capability scan: imports and scopes first, then every node
against the rules of :mod:`swe_forge.ecosystems.go.scan_rules`, then the folded strings.

Here names are resolved (an import's alias, a dot import, a local that shadows a package)
and string expressions folded bottom-up (:mod:`swe_forge.ecosystems.go.scan_fold`); the
entry point is :func:`swe_forge.ecosystems.go.scan.scan`.
"""

from __future__ import annotations

import re
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.go.scan_fold import _MAX_TEXT, _fold_function, _literal
from swe_forge.ecosystems.go.scan_rules import (
    _DEFAULT_NAMES,
    _FATAL_METHODS,
    _HIGHER_ORDER,
    _IMPORTS,
    _MEMBERS,
    _PURE_CALLS,
    _PURE_PACKAGES,
    _READING_METHODS,
    _RUNNER_TEXT,
    ASSEMBLY,
    CGO,
    EMBED,
    EXIT,
    FILE_READ,
    GOROUTINES,
    INIT,
    LINKNAME,
    PACKAGE_INIT,
    PRINT,
    RUNNER_TEXT,
)
from swe_forge.ecosystems.scanning import (
    Findings,
    Parents,
    add_finding,
    postorder,
    text_capabilities,
)

#: Nodes that open a scope for the declarations directly under them.
_SCOPES = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "expression_case",
        "type_case",
        "communication_case",
        "default_case",
        "func_literal",
        "function_declaration",
        "method_declaration",
    }
)
_SPEC_LISTS = frozenset(
    {
        "var_spec_list",
        "const_spec_list",
        "var_declaration",
        "const_declaration",
        "type_declaration",
    }
)
_FUNCTIONS = frozenset({"func_literal", "function_declaration", "method_declaration"})
_STRING_LITERALS = frozenset({"interpreted_string_literal", "raw_string_literal"})
#: Scopes a name is looked up through at most (deeper, it is taken for the package).
_MAX_SCOPES = 2000


class _Scan:
    """One file's walk: imports and scopes first, then every node against the rules."""

    def __init__(self, root: Any, found: Findings, fragment: bool) -> None:
        self.root = root
        self.up = Parents(root)
        #: node id -> its nearest enclosing scope, read in one walk.
        self.scope_of: dict[int, Any] = {}
        stack: list[tuple[Any, Any]] = [(root, None)]
        while stack:
            node, scope = stack.pop()
            self.scope_of[node.id] = scope
            inner = node if node.type in _SCOPES else scope
            stack.extend((child, inner) for child in node.children)
        self.found = found
        self.fragment = fragment
        #: local package name -> import path; dot imports are listed apart.
        self.packages: dict[str, str] = {}
        self.dot_imports: list[str] = []
        #: name -> [(scope node id, start byte)] of function-local declarations.
        self.locals: dict[str, list[tuple[int, int]]] = {}
        #: names declared at the top of the file (functions, types, vars, consts).
        self.top_level: set[str] = set()
        #: name -> constant string of const and var declarations with a foldable value.
        self.constants: dict[str, str] = {}
        #: node id -> folded value: str, int, or list[int] (a byte/rune slice literal);
        #: partial: the text of a concatenation with the non-constant parts left out.
        self.values: dict[int, Any] = {}
        self.partial: dict[int, str] = {}

    def add(self, name: str, node: Any, evidence: str | None = None) -> None:
        add_finding(self.found, name, syntax.line(node), evidence or syntax.text(node))

    def run(self) -> None:
        self._declarations()
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "import_spec":
                self._import(node)
            elif kind == "comment":
                self._comment(node)
            elif kind == "selector_expression":
                self._selector(node)
            elif kind == "call_expression":
                self._call(node)
            elif kind == "qualified_type" and self.fragment:
                self._qualified_type(node)
            elif kind == "identifier" and self.dot_imports:
                self._dot_member(node)
            elif kind == "go_statement":
                # A second goroutine is what a data race needs, and a race on an interface
                # or slice variable is a type confusion: a sixth red team read its test
                # binary's memory that way without ``unsafe`` (4 of 4 on gokit-2).
                self.add(GOROUTINES, node)
            elif kind == "function_declaration":
                self._function(node)
            elif kind == "var_declaration" and self._at_top(node):
                self._package_var(node)
        self._strings()

    # ---------------------------------------------------------------- names and scopes
    def _declarations(self) -> None:
        """Imports, top-level names, local declarations (for shadowing) and constants."""
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "import_spec":
                path = _import_path(node)
                name = node.child_by_field_name("name")
                if name is None:
                    self.packages[_default_name(path)] = path
                elif name.type == "dot":
                    self.dot_imports.append(path)
                elif name.type == "package_identifier":
                    self.packages[syntax.text(name)] = path
            elif kind in ("function_declaration", "type_spec", "type_alias") and self._at_top(node):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.top_level.add(syntax.text(name))
            elif kind in ("var_spec", "const_spec"):
                self._spec(node)
            elif kind in ("parameter_declaration", "variadic_parameter_declaration"):
                # Only a function's own parameters declare names (not a func type's).
                holder = self.up.parent(node)
                owner = self.up.parent(holder) if holder is not None else None
                if owner is not None and owner.type in _FUNCTIONS:
                    for name in node.children_by_field_name("name"):
                        self._local(syntax.text(name), owner, node)
            elif kind == "short_var_declaration" or kind == "range_clause":
                left = node.child_by_field_name("left")
                scope = self._nearest(node)
                for ident in left.named_children if left is not None else ():
                    if ident.type == "identifier":
                        self._local(syntax.text(ident), scope, ident)
            elif kind == "type_switch_statement":
                alias = node.child_by_field_name("alias")
                for ident in alias.named_children if alias is not None else ():
                    self._local(syntax.text(ident), node, ident)
            elif kind == "type_spec" or kind == "type_alias":
                name = node.child_by_field_name("name")
                if name is not None:
                    self._local(syntax.text(name), self._nearest(node), name)

    def _spec(self, node: Any) -> None:
        names = node.children_by_field_name("name")
        top = self._at_top(node)
        scope = None if top else self._nearest(node)
        for name in names:
            if top:
                self.top_level.add(syntax.text(name))
            else:
                self._local(syntax.text(name), scope, name)
        value = node.child_by_field_name("value")
        if value is None or len(value.named_children) != len(names):
            return
        for name, expr in zip(names, value.named_children, strict=True):
            folded = _literal(expr)
            if isinstance(folded, str):
                self.constants[syntax.text(name)] = folded

    def _nearest(self, node: Any) -> Any:
        """The scope a declaration at ``node`` goes in."""
        return self.scope_of.get(node.id)

    def _local(self, name: str, scope: Any, node: Any) -> None:
        if scope is not None:
            self.locals.setdefault(name, []).append((scope.id, node.start_byte))

    def _shadowed(self, name: str, node: Any) -> bool:
        """Is ``name`` at ``node`` a local declaration, not the package or builtin?"""
        decls = self.locals.get(name)
        if not decls:
            return False
        around: set[int] = set()
        scope = self.scope_of.get(node.id)
        while scope is not None and len(around) < _MAX_SCOPES:
            around.add(scope.id)
            scope = self.scope_of.get(scope.id)
        return any(scope in around and start < node.start_byte for scope, start in decls)

    def _at_top(self, node: Any) -> bool:
        """Is a declaration (or its spec) at the top of the file?"""
        parent = self.up.parent(node)
        while parent is not None and parent.type in _SPEC_LISTS:
            parent = self.up.parent(parent)
        return parent is not None and parent.type == "source_file"

    def _package_of(self, ident: Any) -> str | None:
        """The import path an identifier (a selector's operand) names, if it is a package."""
        name = syntax.text(ident)
        path = self.packages.get(name)
        if path is None and self.fragment and name not in self.top_level:
            path = _DEFAULT_NAMES.get(name)
        if path is None or self._shadowed(name, ident):
            return None
        return path

    # ---------------------------------------------------------------------------- rules
    def _import(self, node: Any) -> None:
        path = _import_path(node)
        for rx, cap in _IMPORTS:
            if rx.search(path):
                self.add(cap, node)

    def _comment(self, node: Any) -> None:
        body = syntax.text(node)
        if body.startswith("//go:linkname"):
            self.add(LINKNAME, node)
        elif body.startswith("//go:embed"):
            self.add(EMBED, node)
            for pattern in body.split()[1:]:
                for cap in text_capabilities(pattern.strip('"`')):
                    self.add(cap, node)
        elif re.search(r"^\s*#\s*cgo\b", body.lstrip("/*"), re.M):
            self.add(CGO, node)

    def _selector(self, node: Any) -> None:
        operand = node.child_by_field_name("operand")
        field = node.child_by_field_name("field")
        if operand is None or field is None:
            return
        member = syntax.text(field)
        if operand.type == "identifier":
            path = self._package_of(operand)
            if path is not None:
                self._member(path, member, node)
        if member in _FATAL_METHODS:
            self.add(EXIT, node)
        if member in _READING_METHODS:
            self.add(FILE_READ, node)

    def _member(self, path: str, member: str, node: Any) -> None:
        cap = _MEMBERS.get((path, member))
        if cap is not None:
            self.add(cap, node)
        if self.fragment:
            # The hunk uses a package whose import is out of view: the import's capability.
            for rx, imported in _IMPORTS:
                if rx.search(path):
                    self.add(imported, node)

    def _qualified_type(self, node: Any) -> None:
        """A hunk's ``unsafe.Pointer`` or ``exec.Cmd``: the package's import capability."""
        package = node.child_by_field_name("package")
        if package is not None:
            path = self._package_of(package)
            if path is not None:
                self._member(path, "", node)

    def _dot_member(self, node: Any) -> None:
        """A bare identifier that a dot import brings in (``. "os"`` makes ``Exit`` os.Exit)."""
        name = syntax.text(node)
        if name in self.top_level or self._shadowed(name, node):
            return
        for path in self.dot_imports:
            cap = _MEMBERS.get((path, name))
            if cap is not None:
                self.add(cap, node)

    def _call(self, node: Any) -> None:
        fn = node.child_by_field_name("function")
        if fn is None or fn.type != "identifier":
            return
        name = syntax.text(fn)
        if (
            name in ("print", "println")
            and name not in self.top_level
            and not self._shadowed(name, fn)
        ):
            self.add(PRINT, node)

    def _function(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        if node.child_by_field_name("body") is None and not self.fragment:
            # A declaration without a body: implemented in assembly or pulled in by linkname
            # (not read in a hunk, which may cut a function off after its first line).
            self.add(ASSEMBLY, node, syntax.text(node).split("\n", 1)[0])
        if name is not None and syntax.text(name) == "init" and self._at_top(node):
            self.add(INIT, node, "func init()")

    def _package_var(self, node: Any) -> None:
        """Package-level initialisers run before any test: a blank ``var _ = f()`` or a
        function literal called there is init code; other calls are flagged apart."""
        for spec in syntax.walk(node):
            if spec.type != "var_spec":
                continue
            value = spec.child_by_field_name("value")
            if value is None:
                continue
            names = [syntax.text(n) for n in spec.children_by_field_name("name")]
            for call in syntax.walk(value):
                if call.type != "call_expression":
                    continue
                fn = call.child_by_field_name("function")
                if fn is None or _is_conversion(fn):
                    continue
                if "_" in names or fn.type == "func_literal":
                    self.add(INIT, call)
                elif syntax.text(fn) not in _PURE_CALLS and not self._pure_std(fn):
                    self.add(PACKAGE_INIT, call)

    def _pure_std(self, fn: Any) -> bool:
        """Is a called function one of a standard package's that only computes a value? (The
        package is resolved from the file's imports: a project package imported as
        ``strings`` is not the standard one.)"""
        if fn.type != "selector_expression":
            return False
        operand = fn.child_by_field_name("operand")
        field = fn.child_by_field_name("field")
        if operand is None or field is None or operand.type != "identifier":
            return False
        path = self._package_of(operand)
        if path is None or path not in _PURE_PACKAGES:
            return False
        member = syntax.text(field)
        allowed = _PURE_PACKAGES[path]
        if allowed is None:
            return not _HIGHER_ORDER.search(member)
        return member in allowed

    # -------------------------------------------------------------------------- strings
    def _strings(self) -> None:
        """Fold every string expression bottom-up and judge the outermost ones."""
        for node in postorder(self.root):
            value = self._fold(node)
            if value is not None:
                self.values[node.id] = value
        for node in syntax.walk(self.root):
            text = self._text_of(node)
            if not text or node.type == "identifier":
                continue
            parent = self.up.parent(node)
            if parent is not None and self._text_of(parent) is not None:
                continue  # judged with the whole expression
            if getattr(self.up.parent(node), "type", "") == "import_spec":
                continue
            if _RUNNER_TEXT.search(text):
                self.add(RUNNER_TEXT, node)
            for cap in text_capabilities(text):
                self.add(cap, node)

    def _text_of(self, node: Any) -> str | None:
        """A node's folded text: its constant string, or what is known of a concatenation."""
        value = self.values.get(node.id)
        return value if isinstance(value, str) else self.partial.get(node.id)

    def _fold(self, node: Any) -> Any:
        kind = node.type
        if kind in _STRING_LITERALS or kind in ("rune_literal", "int_literal"):
            return _literal(node)
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.values.get(node.named_children[0].id)
        if kind == "identifier":
            parent = self.up.parent(node)
            if parent is not None and parent.type == "selector_expression":
                return None
            return self.constants.get(syntax.text(node))
        if kind == "binary_expression":
            return self._concat(node)
        if kind == "composite_literal":
            return self._slice(node)
        if kind in ("call_expression", "type_conversion_expression"):
            return self._fold_call(node)
        return None

    def _concat(self, node: Any) -> Any:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or syntax.text(op) != "+" or left is None or right is None:
            return None
        a, b = self.values.get(left.id), self.values.get(right.id)
        if isinstance(a, str) and isinstance(b, str):
            return (a + b)[:_MAX_TEXT]
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        parts = [
            self.partial.get(n.id, v if isinstance(v, str) else "")
            for n, v in ((left, a), (right, b))
        ]
        if any(parts):
            self.partial[node.id] = "".join(parts)[:_MAX_TEXT]
        return None

    def _slice(self, node: Any) -> Any:
        """``[]byte{...}`` / ``[]rune{...}`` of constants: the code points (a list);
        ``[]string{...}``: the strings (a tuple)."""
        kind = node.child_by_field_name("type")
        body = node.child_by_field_name("body")
        if kind is None or body is None or kind.type not in ("slice_type", "array_type"):
            return None
        element = kind.child_by_field_name("element")
        element_type = syntax.text(element) if element is not None else ""
        want: type = int if element_type in ("byte", "rune", "uint8", "int32") else str
        if element_type != "string" and want is str:
            return None
        items: list[Any] = []
        for item in body.named_children:
            expr = item.named_children[0] if item.named_children else None
            value = self.values.get(expr.id) if expr is not None else None
            if not isinstance(value, want):
                return None
            items.append(value)
        return items if want is int else tuple(items)

    def _fold_call(self, node: Any) -> Any:
        if node.type == "type_conversion_expression":
            fn = node.child_by_field_name("type")
            args = [node.child_by_field_name("operand")]
        else:
            fn = node.child_by_field_name("function")
            arglist = node.child_by_field_name("arguments")
            args = list(arglist.named_children) if arglist is not None else []
        if fn is None or None in args:
            return None
        values = [self.values.get(a.id) for a in args]
        name = syntax.text(fn).replace(" ", "")
        if fn.type == "selector_expression":
            operand = fn.child_by_field_name("operand")
            field = fn.child_by_field_name("field")
            path = self._package_of(operand) if operand is not None else None
            if path is None or field is None:
                return None
            name = f"{path}.{syntax.text(field)}"
        return _fold_function(name, values)


def _import_path(spec: Any) -> str:
    path = spec.child_by_field_name("path")
    if path is None:
        return ""
    value = _literal(path)
    return value if isinstance(value, str) else ""


def _default_name(path: str) -> str:
    """The name a package is known by without an alias: its last element (a major-version
    suffix ``/v2`` and a ``gopkg.in`` ``.v2`` left out)."""
    parts = path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    return re.sub(r"\.v\d+$", "", last).replace("-", "_")


def _is_conversion(fn: Any) -> bool:
    """``(*T)(nil)``, ``T(x)`` of a parenthesised or composite type: a conversion."""
    if fn.type == "parenthesized_expression":
        return True
    return fn.type in ("slice_type", "array_type", "map_type", "pointer_type", "qualified_type")
