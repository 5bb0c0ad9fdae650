"""The first layer of the JavaScript/TypeScript scan of one file: its state, scopes and
bindings.

:class:`_Scopes` holds what a scan of one file keeps (the findings, the bindings, the memos
of the layers above) and reads where every node is and what each name is declared as
(parameters, ``let``/``const``/``var``, functions, classes, catch clauses, imports,
destructuring paths; TypeScript's ``declare`` creates nothing at run time). Resolution
(:mod:`~swe_forge.ecosystems.js.scan_resolve`), folding
(:mod:`~swe_forge.ecosystems.js.scan_fold`) and the rules
(:class:`swe_forge.ecosystems.js.scan._Scan`) are built on it, one subclass each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.js.scan_nodes import (
    _FUNCTIONS,
    _PLAIN_FUNCTIONS,
    _SCOPES,
    _extend,
    _key,
    _name,
    _strict,
)
from swe_forge.ecosystems.js.scan_rules import _module_path
from swe_forge.ecosystems.scanning import Findings, Parents, add_finding


class _Binding:
    """A declared name: what it was given (nodes with a destructuring path, or paths)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: list[tuple[Any, tuple[str, ...]] | str] = []


class _Scopes:
    """One file's scan state, its scopes and its bindings (see the module docstring)."""

    if TYPE_CHECKING:
        # Defined by the folding layer (scan_fold._Folding, a subclass); ``_import`` and the
        # resolution layer read constant specifiers through it.
        def _fold_text(self, node: Any) -> str | None: ...

    def __init__(
        self, root: Any, found: Findings, fragment: bool, *, typescript: bool = False
    ) -> None:
        self.root = root
        self.up = Parents(root)
        self._places()
        self.found = found
        self.fragment = fragment
        self.typescript = typescript
        self.strict = typescript or _strict(root)
        self.used: set[int] = set()  # ids of bindings some value refers to
        self.bindings: dict[tuple[int, str], _Binding] = {}
        self.declarations: set[int] = set()  # identifier nodes that declare, not refer
        self.memo: dict[int, frozenset[str]] = {}
        self.resolving: set[int] = set()
        self.values: dict[int, Any] = {}
        self.partial: dict[int, str] = {}
        self.folding: set[int] = set()
        #: Every constant module specifier the file loads (what a relative one names may be
        #: a file of any extension: Node and Jest run ``require('./x.txt')`` as JavaScript).
        self.specifiers: set[str] = set()

    def add(self, name: str, node: Any, evidence: str | None = None) -> None:
        text = evidence if evidence is not None else syntax.text(node).split("\n", 1)[0]
        add_finding(self.found, name, syntax.line(node), text)

    # ------------------------------------------------------------------- scopes, bindings
    def _bind(self) -> None:
        assignments: list[Any] = []
        for node in syntax.walk(self.root):
            kind = node.type
            if kind in _FUNCTIONS:
                self._parameters(node)
            if kind == "variable_declarator":
                self._declarator(node)
            elif kind in (
                "function_declaration",
                "generator_function_declaration",
                "class_declaration",
                "abstract_class_declaration",
                "enum_declaration",
                "internal_module",
                "module",
                "function_signature",
            ):
                name = node.child_by_field_name("name")
                if name is not None and name.type == "identifier":
                    self._declare(
                        name,
                        self._scope(node, block=True),
                        None,
                        ambient=node.id in self.ambient,
                    )
            elif kind in ("function_expression", "function", "generator_function", "class"):
                name = node.child_by_field_name("name")
                if name is not None:
                    self._declare(name, node, None)
            elif kind == "catch_clause":
                param = node.child_by_field_name("parameter")
                if param is not None:
                    self._pattern(param, node, None)
            elif kind == "for_in_statement":
                self._loop_variable(node)
            elif kind == "import_statement":
                self._import(node)
            elif kind == "assignment_expression":
                assignments.append(node)
        if self.typescript:
            for node in syntax.walk(self.root):
                if node.type in ("identifier", "shorthand_property_identifier") and (
                    node.type != "identifier" or self._is_reference(node)
                ):
                    binding = self._lookup(node)
                    if binding is not None:
                        self.used.add(id(binding))
        for node in assignments:
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and left.type == "identifier":
                binding = self._lookup(left)
                if binding is not None:
                    binding.values.append((right, ()))

    def _declare(
        self,
        ident: Any,
        scope: Any,
        value: tuple[Any, tuple[str, ...]] | str | None,
        *,
        ambient: bool = False,
    ) -> None:
        self.declarations.add(ident.id)
        if ambient or scope is None:
            return  # TypeScript's declare: a type, nothing at run time
        key = (scope.id, _name(ident))
        binding = self.bindings.get(key)
        if binding is None:
            binding = self.bindings[key] = _Binding()
        if value is not None:
            binding.values.append(value)

    def _scope(self, node: Any, *, block: bool) -> Any:
        """The scope a declaration at ``node`` goes in: the nearest block (let, const, class,
        function declarations) or function (var)."""
        if not block:
            return self.function_of.get(node.id)
        scope = self.scope_of.get(node.id)
        # class bodies and bare class expressions hold no let/const of their own.
        while scope is not None and scope.type in ("class", "class_body"):
            scope = self.scope_of.get(scope.id)
        return scope

    def _declarator(self, node: Any) -> None:
        decl = self.up.parent(node)
        if decl is None:
            return
        is_var = decl.type == "variable_declaration"
        scope = self._scope(node, block=not is_var)
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None:
            self._pattern(name, scope, value, ambient=node.id in self.ambient)

    def _parameters(self, fn: Any) -> None:
        params = fn.child_by_field_name("parameters")
        if params is None:
            single = fn.child_by_field_name("parameter")
            if single is not None:
                self._pattern(single, fn, None)
            return
        for param in params.named_children:
            if param.type in ("required_parameter", "optional_parameter"):
                pattern = param.child_by_field_name("pattern")
                default = param.child_by_field_name("value")
                if pattern is not None:
                    self._pattern(pattern, fn, default)
            else:
                self._pattern(param, fn, None)

    def _loop_variable(self, node: Any) -> None:
        kind = node.child_by_field_name("kind")
        left = node.child_by_field_name("left")
        if kind is None or left is None:
            return
        block = syntax.text(kind) != "var"
        self._pattern(left, node if block else self._scope(node, block=False), None)

    def _pattern(self, pattern: Any, scope: Any, value: Any, *, ambient: bool = False) -> None:
        """Declare every name of a binding pattern, each with the path it takes in ``value``
        (``{ exit: e } = process``: e is process.exit)."""
        stack: list[tuple[Any, tuple[str, ...]]] = [(pattern, ())]
        while stack:
            node, path = stack.pop()
            kind = node.type
            given = (value, path) if value is not None else None
            if kind in ("identifier", "shorthand_property_identifier_pattern"):
                self._declare(node, scope, given, ambient=ambient)
            elif kind == "object_pattern":
                for child in node.named_children:
                    if child.type == "shorthand_property_identifier_pattern":
                        self._declare(child, scope, _extend(given, _name(child)), ambient=ambient)
                    elif child.type == "pair_pattern":
                        key, sub = (
                            child.child_by_field_name("key"),
                            child.child_by_field_name("value"),
                        )
                        if sub is not None:
                            stack.append((sub, (*path, _key(key))))
                    elif child.type == "object_assignment_pattern":
                        left = child.child_by_field_name("left")
                        if (
                            left is not None
                            and left.type == "shorthand_property_identifier_pattern"
                        ):
                            self._declare(left, scope, _extend(given, _name(left)), ambient=ambient)
                        elif left is not None:
                            stack.append((left, path))
                    elif child.type == "rest_pattern":
                        stack.extend((c, path) for c in child.named_children)
            elif kind == "array_pattern":
                stack.extend((c, (*path, "#")) for c in node.named_children)
            elif kind in ("assignment_pattern",):
                left = node.child_by_field_name("left")
                right = node.child_by_field_name("right")
                if left is not None:
                    stack.append((left, path))
                if right is not None and left is not None and left.type == "identifier":
                    self._declare(left, scope, (right, ()), ambient=ambient)
            elif kind == "rest_pattern":
                stack.extend((c, path) for c in node.named_children)

    def _import(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        spec = self._fold_text(source) if source is not None else None
        if any(c.type == "type" for c in node.children):
            return  # import type: nothing at run time
        module = _module_path(spec) if spec is not None else "module:*"
        for child in node.named_children:
            if child.type == "import_require_clause":
                ident = next((c for c in child.named_children if c.type == "identifier"), None)
                src = child.child_by_field_name("source")
                spec = self._fold_text(src) if src is not None else None
                if ident is not None:
                    self._declare(ident, self.root, _module_path(spec) if spec else "module:*")
            if child.type != "import_clause":
                continue
            for part in child.named_children:
                if part.type == "identifier":  # default import: the module
                    self._declare(part, self.root, module)
                elif part.type == "namespace_import":
                    for ident in part.named_children:
                        self._declare(ident, self.root, module)
                elif part.type == "named_imports":
                    for spec_node in part.named_children:
                        if spec_node.type != "import_specifier":
                            continue
                        name = spec_node.child_by_field_name("name")
                        alias = spec_node.child_by_field_name("alias") or name
                        if name is not None and alias is not None:
                            member = (
                                _name(name) if name.type == "identifier" else self._fold_text(name)
                            )
                            self._declare(alias, self.root, f"{module}.{member}")

    def _elided(self, node: Any) -> bool:
        """An import TypeScript drops: it binds names and none is used as a value."""
        names = [
            n
            for n in syntax.walk(node)
            if n.type == "identifier"
            and n.id in self.declarations
            and getattr(self.up.parent(n), "type", "")
            in ("import_clause", "namespace_import", "import_specifier")
        ]
        bound = [self.bindings.get((self.root.id, _name(n))) for n in names]
        return bool(bound) and not any(b is not None and id(b) in self.used for b in bound)

    def _places(self) -> None:
        """Where each node is, read in one walk (asked per node, walking up the tree would
        cost its depth every time): its nearest enclosing scope and function, whether it
        runs when the module loads, what ``this`` is there, whether it is a declare."""
        self.scope_of: dict[int, Any] = {}  # nearest enclosing scope (not the node itself)
        self.function_of: dict[int, Any] = {}  # nearest enclosing function, or the program
        self.in_function: set[int] = set()
        self.sloppy: set[int] = set()  # a plain function's this (not a method's, an arrow's)
        self.ambient: set[int] = set()
        # An object literal's method's this: its receiver, the global object when the method
        # is taken off the object and called plainly in sloppy code.
        self.method_this: set[int] = set()
        self.lookups: dict[tuple[int, str], _Binding | None] = {}
        stack: list[tuple[Any, Any, Any, bool, bool, bool, bool]] = [
            (self.root, None, None, False, False, False, False)
        ]
        while stack:
            node, scope, function, inside, plain, ambient, method = stack.pop()
            key = node.id
            if method:
                self.method_this.add(key)
            self.scope_of[key] = scope
            self.function_of[key] = function
            if inside:
                self.in_function.add(key)
            if plain:
                self.sloppy.add(key)
            if ambient:
                self.ambient.add(key)
            kind = node.type
            child_scope = node if kind in _SCOPES else scope
            child_function = node if kind in _FUNCTIONS or kind == "program" else function
            child_plain = plain
            child_method = method
            if kind in _PLAIN_FUNCTIONS:
                child_plain, child_method = True, False
            elif kind in ("method_definition", "class_body", "class_static_block"):
                child_plain = False
                parent = self.up.parent(node)
                child_method = (
                    kind == "method_definition" and parent is not None and parent.type == "object"
                )
            child_inside = inside or kind in _FUNCTIONS
            child_ambient = ambient or kind == "ambient_declaration"
            for child in node.children:
                stack.append(
                    (
                        child,
                        child_scope,
                        child_function,
                        child_inside,
                        child_plain,
                        child_ambient,
                        child_method,
                    )
                )

    def _lookup(self, ident: Any) -> _Binding | None:
        """The declaration an identifier refers to (None: a global), up the chain of scopes
        (each scope's answer for a name kept: nested scopes ask their parents once)."""
        name = _name(ident)
        chain: list[int] = []
        scope = self.scope_of.get(ident.id)
        found: _Binding | None = None
        while scope is not None:
            key = (scope.id, name)
            if key in self.lookups:
                found = self.lookups[key]
                break
            chain.append(scope.id)
            binding = self.bindings.get(key)
            if binding is not None:
                found = binding
                break
            scope = self.scope_of.get(scope.id)
        for scope_id in chain:
            self.lookups[(scope_id, name)] = found
        return found

    def _is_reference(self, ident: Any) -> bool:
        if ident.id in self.declarations:
            return False
        parent = self.up.parent(ident)
        if parent is None:
            return True
        # export { a as b }: b names the export, a is a reference.
        return not (
            parent.type == "export_specifier" and parent.child_by_field_name("alias") == ident
        )
