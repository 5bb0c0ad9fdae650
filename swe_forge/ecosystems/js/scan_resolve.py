"""The second layer of the JavaScript/TypeScript scan: what an expression may be.

:class:`_Resolution` resolves every reference to paths (``global.<path>``, ``module:<name>``,
``meta.<x>``, ``proto:``, ``error:new``), following aliases through declarations,
destructuring, assignments, the global object's names, ``require``/``import`` under any name
and ``Reflect.get``, and records the module specifiers a file loads. The rules of
:class:`swe_forge.ecosystems.js.scan._Scan` judge these paths.
"""

from __future__ import annotations

import re
from typing import Any

from swe_forge.ecosystems.js.scan_nodes import (
    _MAX_DEPTH,
    _TRANSPARENT,
    _inner,
    _inner_function,
    _name,
    _returned,
)
from swe_forge.ecosystems.js.scan_rules import (
    _DISTINCTIVE,
    _FRAGMENT_MODULES,
    _FRAMEWORK_GLOBALS,
    _member,
    _module_path,
    _normal,
)
from swe_forge.ecosystems.js.scan_scopes import _Scopes
from swe_forge.ecosystems.scanning import UNPARSABLE


class _Resolution(_Scopes):
    """What references resolve to (see the module docstring)."""

    # ---------------------------------------------------------------------- resolution
    def _is_constructor_of_code(self, obj: Any) -> bool:
        """Is ``obj.constructor`` the Function constructor? It is when ``obj`` is a function
        (its constructor is Function) or itself any value's ``.constructor`` (a constructor's
        constructor is Function: ``[].constructor.constructor``)."""
        if obj is None:
            return False
        while obj.type == "parenthesized_expression" and obj.named_child_count:
            obj = obj.named_children[0]
        if obj.type in ("function_expression", "arrow_function", "function", "class"):
            return True
        if obj.type == "member_expression":
            prop = obj.child_by_field_name("property")
            return prop is not None and _name(prop) == "constructor"
        if obj.type == "subscript_expression":
            index = obj.child_by_field_name("index")
            return index is not None and self._fold_text(index) == "constructor"
        return False

    def _resolve(self, node: Any, depth: int = 0) -> frozenset[str]:
        """What an expression may be: ``global.<path>`` (the global object's), ``module:<name>
        [.path]``, ``meta.<x>`` (import.meta), ``proto:`` (some prototype), ``error:new``."""
        if node is None:
            return frozenset()
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        self._resolve_chain(node, depth)
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH or node.id in self.resolving:
            if depth > _MAX_DEPTH:
                self.add(UNPARSABLE, node, "expression nested too deep")
            return frozenset()
        self.resolving.add(node.id)
        out = frozenset(_normal(p) for p in self._resolve_uncached(node, depth + 1))
        self.resolving.discard(node.id)
        self.memo[node.id] = out
        return out

    def _resolve_chain(self, node: Any, depth: int) -> None:
        """Resolve a chain's links innermost first (``a.b().c()...``, a builder's hundred
        calls): each link then finds its object known, and no chain needs deep recursion."""
        links: list[Any] = []
        link = node
        while (
            link is not None
            and link.type in ("member_expression", "subscript_expression", "call_expression")
            and link.id not in self.memo
        ):
            links.append(link)
            link = link.child_by_field_name(
                "function" if link.type == "call_expression" else "object"
            )
        for inner in reversed(links[1:]):
            self._resolve(inner, depth)

    def _resolve_uncached(self, node: Any, depth: int) -> set[str]:
        kind = node.type
        if kind == "identifier":
            return self._identifier(node, depth)
        if kind in _TRANSPARENT:
            return set(self._resolve(_inner(node), depth))
        if kind == "sequence_expression":
            return (
                set(self._resolve(node.named_children[-1], depth)) if node.named_children else set()
            )
        if kind in ("binary_expression",):
            op = node.child_by_field_name("operator")
            if op is not None and op.type in ("||", "??", "&&"):
                return set(self._resolve(node.child_by_field_name("left"), depth)) | set(
                    self._resolve(node.child_by_field_name("right"), depth)
                )
            return set()
        if kind == "ternary_expression":
            return set(self._resolve(node.child_by_field_name("consequence"), depth)) | set(
                self._resolve(node.child_by_field_name("alternative"), depth)
            )
        if kind in ("assignment_expression", "augmented_assignment_expression"):
            return set(self._resolve(node.child_by_field_name("right"), depth))
        if kind == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            name = _name(prop) if prop is not None else "*"
            if name == "constructor" and self._is_constructor_of_code(obj):
                return {"global.Function"}
            return {_member(p, name) for p in self._resolve(obj, depth)}
        if kind == "subscript_expression":
            obj = node.child_by_field_name("object")
            index = node.child_by_field_name("index")
            key = self._fold_text(index) if index is not None else None
            if key == "constructor" and self._is_constructor_of_code(obj):
                return {"global.Function"}
            return {_member(p, key if key is not None else "*") for p in self._resolve(obj, depth)}
        if kind == "call_expression":
            return self._returns(node, depth)
        if kind == "new_expression":
            made = self._resolve(node.child_by_field_name("constructor"), depth)
            return (
                {"error:new"} if any(re.fullmatch(r"global\.\w*Error", m) for m in made) else set()
            )
        if kind == "this":
            if self.strict:
                return set()
            parent = self.up.parent(node)
            read = (
                parent is not None
                and parent.type in ("member_expression", "subscript_expression")
                and parent.child_by_field_name("object") == node
            )
            out = {"sloppy:this"} if node.id in self.sloppy else set()
            if not read and (node.id in self.sloppy or node.id in self.method_this):
                # this as a value (returned, kept, handed on) may be the global object
                # itself: what is read on it by a computed name, or handed to code that
                # lists it, is the global object's (a fourteenth red team's route to Jest's
                # state: ``{ self() { return this } }`` called plainly).
                out.add("sloppy:self")
            return out
        if kind in ("function_expression", "arrow_function", "function"):
            return set()
        if kind == "meta_property":
            return {"meta"}
        return set()

    def _identifier(self, node: Any, depth: int) -> set[str]:
        name = _name(node)
        binding = self._lookup(node)
        if binding is None:
            if self.fragment and name in _FRAGMENT_MODULES:
                return {_FRAGMENT_MODULES[name]}
            if self._out_of_view(name):
                # Maybe the global object: only the names that matter read on it count.
                return {"sloppy:this"} if name in ("self", "global", "window") else set()
            return {f"global.{name}"}
        out: set[str] = set()
        for value in binding.values:
            if isinstance(value, str):
                out.add(value)
                continue
            expr, path = value
            suffix = "".join(f".{p}" for p in path)
            out |= {p + suffix for p in self._resolve(expr, depth)}
        return out

    def _out_of_view(self, name: str) -> bool:
        """In a hunk, is a free ``it``, ``test`` or ``self`` most likely a local declared out
        of view? (globalThis, expect, process are still read as the real ones.)"""
        if not self.fragment:
            return False
        framework = name in _FRAMEWORK_GLOBALS and name not in _DISTINCTIVE
        return framework or name in ("self", "global", "window")

    def _returns(self, node: Any, depth: int) -> set[str]:
        """What a call returns that matters: a module (require, import), a prototype, a
        bound function, a member read by Reflect.get."""
        fn = node.child_by_field_name("function")
        args = self._args(node)
        if fn is None:
            return set()
        if fn.type == "import":
            return {self._required(args)}
        out: set[str] = set()
        called = _inner_function(fn)
        if called is not None:  # an IIFE: what it returns
            for ret in _returned(called):
                out |= set(self._resolve(ret, depth))
        for callee in self._resolve(fn, depth):
            if callee in (
                "global.require",
                "global.module.require",
                "global.process.getBuiltinModule",
            ):
                out.add(self._required(args))
            elif callee == "module:module.createRequire":
                out.add("global.require")
            elif callee in ("global.Object.getPrototypeOf", "global.Reflect.getPrototypeOf"):
                out.add("proto:")
            elif callee.endswith(".bind"):
                out.add(callee[: -len(".bind")])
            elif callee in ("global.require.call", "global.require.apply") and len(args) > 1:
                out.add(self._required(args[1:]))
            elif re.fullmatch(r"global\.\w*Error", callee):
                out.add("error:new")  # Error() without new
            elif callee == "global.Reflect.get" and len(args) >= 2:
                key = self._fold_text(args[1])
                out |= {f"{t}.{key or '*'}" for t in self._resolve(args[0], depth)}
        return out

    def _required(self, args: list[Any]) -> str:
        spec = self._fold_text(args[0]) if args else None
        if spec is not None:
            self.specifiers.add(spec)
        return _module_path(spec) if spec is not None else "module:*"

    def _args(self, call: Any) -> list[Any]:
        args = call.child_by_field_name("arguments")
        if args is None or args.type != "arguments":
            return []
        return [a for a in args.named_children if a.type != "comment"]
