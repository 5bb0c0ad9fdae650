"""Names and types in the Java capability scan: what a file declares (package, imports,
classes, variables) and what a name or an expression may be (a class, an instance, a member,
a package), with the syntax-tree helpers that read a node's type or callee text.

:class:`_Names` is the base of the scan's walk (``_Scan`` in
:mod:`swe_forge.ecosystems.java.scan_rules`): it holds one file's state, and the string
folding (:mod:`swe_forge.ecosystems.java.scan_strings`) and the rules build on it. Kept apart
because resolution is the part of the walk that everything else asks.
"""

from __future__ import annotations

import re
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.java.scan_tables import (
    _JAVA_LANG,
    _MAX_DEPTH,
    _MAX_SEGMENTS,
    _RETURNS,
    _WELL_KNOWN,
)
from swe_forge.ecosystems.scanning import UNPARSABLE, Findings, Parents, add_finding


class _Names:
    """One file's names and declared types, and what its expressions may be."""

    def __init__(self, root: Any, found: Findings, fragment: bool) -> None:
        self.root = root
        self.up = Parents(root)
        self.found = found
        self.fragment = fragment
        self.imports: dict[str, str] = {}  # simple name -> qualified name
        self.on_demand: list[str] = []  # packages imported with .*
        self.static_members: dict[str, set[str]] = {}  # name -> Class.member
        self.static_on_demand: list[str] = []  # classes imported with static .*
        self.own_classes: set[str] = set()
        self.package = ""
        #: variable or field name -> the type texts and initialisers declared for it.
        self.var_types: dict[str, set[str]] = {}
        self.var_inits: dict[str, list[Any]] = {}
        self.constants: dict[str, Any] = {}
        self.memo: dict[int, frozenset[str]] = {}
        self.resolving: set[str] = set()
        self.values: dict[int, Any] = {}
        self.partial: dict[int, str] = {}

    def add(self, name: str, node: Any, evidence: str | None = None) -> None:
        add_finding(self.found, name, syntax.line(node), evidence or syntax.text(node))

    # --------------------------------------------------------------------- declarations
    def _declarations(self) -> None:
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "package_declaration":
                name = next((c for c in node.named_children if "identifier" in c.type), None)
                self.package = syntax.text(name) if name is not None else ""
            elif kind == "import_declaration":
                self._import_names(node)
            elif kind in (
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            ):
                name = node.child_by_field_name("name")
                if name is not None:
                    self.own_classes.add(syntax.text(name))
            elif kind in (
                "local_variable_declaration",
                "field_declaration",
                "constant_declaration",
            ):
                kind_node = node.child_by_field_name("type")
                for decl in node.children_by_field_name("declarator"):
                    self._variable(decl.child_by_field_name("name"), kind_node, decl)
            elif kind in ("formal_parameter", "catch_formal_parameter", "resource"):
                kind_node = node.child_by_field_name("type")
                if kind_node is None:
                    kind_node = next(
                        (c for c in node.named_children if c.type == "catch_type"), None
                    )
                self._variable(node.child_by_field_name("name"), kind_node, node)
            elif kind == "enhanced_for_statement":
                self._variable(
                    node.child_by_field_name("name"), node.child_by_field_name("type"), None
                )
            elif kind == "lambda_expression":
                # ``(p, q) -> p == q``: parameters whose type only the compiler infers
                # may be Strings (a fourteenth red team's identity test).
                params = node.child_by_field_name("parameters")
                names = (
                    [params]
                    if params is not None and params.type == "identifier"
                    else [
                        c
                        for c in (params.named_children if params else [])
                        if c.type == "identifier"
                    ]
                )
                for ident in names:
                    self.var_types.setdefault(syntax.text(ident), set()).add("?")

    def _import_names(self, node: Any) -> None:
        name = next((c for c in node.named_children if "identifier" in c.type), None)
        if name is None:
            return
        qualified = syntax.text(name).replace(" ", "")
        static = any(c.type == "static" for c in node.children)
        star = any(c.type == "asterisk" for c in node.children)
        if static and star:
            self.static_on_demand.append(qualified)
        elif static:
            owner, _, member = qualified.rpartition(".")
            self.static_members.setdefault(member, set()).add(f"{owner}.{member}")
        elif star:
            self.on_demand.append(qualified)
        else:
            self.imports[qualified.rsplit(".", 1)[-1]] = qualified

    def _variable(self, name: Any, kind: Any, decl: Any) -> None:
        if name is None:
            return
        var = syntax.text(name)
        if kind is not None and syntax.text(kind) != "var":
            self.var_types.setdefault(var, set()).add(_type_text(kind))
        value = decl.child_by_field_name("value") if decl is not None else None
        if value is not None:
            self.var_inits.setdefault(var, []).append(value)

    def _classes(self, simple: str) -> set[str]:
        """The qualified names a simple class name may be."""
        if simple in self.imports:
            return {self.imports[simple]}
        if simple in self.own_classes:
            return {f"{self.package}.{simple}" if self.package else simple}
        out = {f"{pkg}.{simple}" for pkg in self.on_demand}
        if simple in _JAVA_LANG:
            out.add(f"java.lang.{simple}")
        if self.fragment and simple in _WELL_KNOWN:
            out.add(_WELL_KNOWN[simple])
        return out

    def _type_names(self, text: str) -> set[str]:
        """The qualified names a type's text may be (its first segment resolved)."""
        head, dot, rest = text.partition(".")
        if dot and head[:1].islower():
            return {text}  # already qualified
        return {c + (dot + rest if dot else "") for c in self._classes(head)}

    # -------------------------------------------------------------------- resolution
    def _resolve(self, node: Any, depth: int = 0) -> frozenset[str]:
        """What an expression may be: ``C:cls`` a class, ``I:cls`` an instance, ``M:member``
        a member (``cls.name`` or ``cls#name``), ``P:pkg`` a package prefix."""
        if node is None:
            return frozenset()
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        self._resolve_chain(node, depth)
        cached = self.memo.get(node.id)
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH:
            self.add(UNPARSABLE, node, "expression nested too deep")
            return frozenset()
        out = frozenset(self._resolve_uncached(node, depth + 1))
        self.memo[node.id] = out
        return out

    def _resolve_chain(self, node: Any, depth: int) -> None:
        """Resolve a chain's links innermost first (``a.b().c()...``, a builder's hundred
        calls): each link then finds its object known, and no chain needs deep recursion."""
        links: list[Any] = []
        link = node
        while (
            link is not None
            and link.type in ("method_invocation", "field_access")
            and link.id not in self.memo
        ):
            links.append(link)
            link = link.child_by_field_name("object")
        for inner in reversed(links[1:]):
            self._resolve(inner, depth)

    def _resolve_uncached(self, node: Any, depth: int) -> set[str]:
        kind = node.type
        if kind == "identifier":
            return self._identifier(syntax.text(node), depth)
        if kind == "parenthesized_expression" and node.named_children:
            return set(self._resolve(node.named_children[-1], depth))
        if kind == "cast_expression":
            cast = node.child_by_field_name("type")
            return {f"I:{c}" for c in self._type_names(_type_text(cast))} if cast else set()
        if kind == "object_creation_expression":
            made = node.child_by_field_name("type")
            return {f"I:{c}" for c in self._type_names(_type_text(made))} if made else set()
        if kind == "class_literal":
            return {"I:java.lang.Class"}
        if kind == "ternary_expression":
            out: set[str] = set()
            for field in ("consequence", "alternative"):
                out |= self._resolve(node.child_by_field_name(field), depth)
            return out
        if kind == "field_access":
            obj = node.child_by_field_name("object")
            field = node.child_by_field_name("field")
            if obj is None or field is None:
                return set()
            if obj.type == "this":
                return {t for t in self._identifier(syntax.text(field), depth) if t[0] == "I"}
            return self._members(self._resolve(obj, depth), syntax.text(field))
        if kind == "method_invocation":
            return self._called(node, depth)
        if kind == "this":
            return set()
        return set()

    def _identifier(self, name: str, depth: int) -> set[str]:
        out: set[str] = set()
        if name in self.var_types or name in self.var_inits:
            for kind in self.var_types.get(name, ()):
                out |= {f"I:{c}" for c in self._type_names(kind)}
            if name not in self.resolving:
                self.resolving.add(name)
                for init in self.var_inits.get(name, ()):
                    out |= {s for s in self._resolve(init, depth) if s[0] == "I"}
                self.resolving.discard(name)
            return out
        if name[:1].isupper():
            out |= {f"C:{c}" for c in self._classes(name)}
        elif not out:
            out.add(f"P:{name}")
        for member in self.static_members.get(name, ()):
            out.add(f"M:{member}")
        for owner in self.static_on_demand:
            out.add(f"M:{owner}.{name}")
        return out

    def _members(self, owners: frozenset[str] | set[str], name: str) -> set[str]:
        """``owner.name`` for each thing an expression may be, and what that member is."""
        out: set[str] = set()
        for owner in owners:
            tag, value = owner[0], owner[2:]
            if tag == "C":
                member = f"{value}.{name}"
                out.add(f"M:{member}")
                out.add(f"C:{member}")  # a nested class
            elif tag == "I":
                member = f"{value}#{name}"
                out.add(f"M:{member}")
            elif tag == "P":
                if value.count(".") < _MAX_SEGMENTS:  # package names are short
                    out.add(f"C:{value}.{name}" if name[:1].isupper() else f"P:{value}.{name}")
                continue
            else:
                continue
            returned = _RETURNS.get(member)
            if returned is not None:
                out.add(f"I:{returned}")
        return out

    def _called(self, node: Any, depth: int) -> set[str]:
        """What a method invocation calls (members) and returns (instances)."""
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return set()
        name = syntax.text(name_node)
        obj = node.child_by_field_name("object")
        if obj is not None:
            out = self._members(self._resolve(obj, depth), name)
        else:
            out = {f"M:{m}" for m in self.static_members.get(name, ())}
            out |= {f"M:{owner}.{name}" for owner in self.static_on_demand}
            for member in [m[2:] for m in out]:
                if member in _RETURNS:
                    out.add(f"I:{_RETURNS[member]}")
        if name == "getClass":
            out.add("I:java.lang.Class")
        return out


def _type_text(node: Any) -> str:
    """A type's name without type arguments, annotations or array dimensions."""
    if node is None:
        return ""
    if node.type == "generic_type" and node.named_children:
        node = node.named_children[0]
    if node.type == "catch_type" and node.named_children:
        node = node.named_children[0]
    text = re.sub(r"<.*", "", syntax.text(node)).replace(" ", "")
    text = re.sub(r"@\w+(\([^)]*\))?", "", text)
    return text.split("[", 1)[0]


def _callee(call: Any) -> str:
    """``Owner.name`` of a method invocation (its object's text and its name)."""
    obj = call.child_by_field_name("object")
    name = call.child_by_field_name("name")
    head = re.sub(r"\s+", "", syntax.text(obj)) + "." if obj is not None else ""
    head = re.sub(r"<[^>]*>", "", head)
    head = re.sub(r"^(?:[a-z_]\w*\.)+(?=[A-Z])", "", head)  # the package of a qualified name
    return head + (syntax.text(name) if name is not None else "")


def _member_name(up: Parents, node: Any) -> bool:
    """Is an identifier the name of a field or method after a dot (not a variable)?"""
    parent = up.parent(node)
    return (
        parent is not None
        and parent.type in ("field_access", "method_invocation")
        and parent.child_by_field_name("object") != node
    )


def _head(node: Any) -> str:
    return syntax.text(node).split("\n", 1)[0]
