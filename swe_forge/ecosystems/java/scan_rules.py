"""The rules of the Java capability scan: one file's walk, each node judged against the
tables (:mod:`swe_forge.ecosystems.java.scan_tables`) with its names resolved
(:mod:`swe_forge.ecosystems.java.scan_names`) and its strings folded
(:mod:`swe_forge.ecosystems.java.scan_strings`): imports, calls, field accesses, method
references, creations, type mentions, static initialisers, native and agent methods, string
identity tests, the Runtime handed where its type is lost.

:func:`swe_forge.ecosystems.java.scan.scan` runs :class:`_Scan` on a file. Kept apart from
the entry point because the walk is long.
"""

from __future__ import annotations

from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.java.scan_names import _callee, _head, _member_name, _type_text
from swe_forge.ecosystems.java.scan_strings import _Strings
from swe_forge.ecosystems.java.scan_tables import (
    _ELEMENT_METHODS,
    _JAVA_COMMAND,
    _MEMBERS,
    _METHOD_NAMES,
    _PURE_INITS,
    _STRING_METHODS,
    _STRING_TYPES,
    _STRINGISH_DEPTH,
    _TYPES,
    EXIT,
    FILE_WRITES,
    INSTRUMENTATION,
    NATIVE,
    PROCESSES,
    PROPERTIES,
    STATIC_FIELD_INIT,
    STATIC_INIT,
    STRING_IDENTITY,
    UNSAFE,
)


class _Scan(_Strings):
    """One file's walk: names and declared types first, then every node against the rules."""

    def run(self) -> None:
        self._declarations()
        self._strings()
        for node in syntax.walk(self.root):
            kind = node.type
            if kind == "import_declaration":
                self._import(node)
            elif kind == "method_invocation":
                self._invocation(node)
            elif kind == "field_access":
                self._field_access(node)
            elif kind == "method_reference":
                self._reference(node)
            elif kind == "object_creation_expression":
                self._creation(node)
            elif kind in ("type_identifier", "scoped_type_identifier"):
                self._type_mention(node)
            elif kind == "static_initializer":
                self.add(STATIC_INIT, node, "static { ... }")
            elif kind in ("field_declaration", "constant_declaration"):
                self._static_field(node)
            elif kind == "method_declaration":
                self._method(node)
            elif kind == "identifier" and (self.static_members or self.static_on_demand):
                self._static_name(node)
            elif kind == "binary_expression":
                self._identity(node)
            if kind in ("method_invocation", "identifier", "cast_expression"):
                self._escaping_runtime(node)

    # ---------------------------------------------------------------------------- rules
    def _identity(self, node: Any) -> None:
        """``a == b`` or ``a != b`` of two strings (or values that may be strings) is an
        identity test, and identity tells whether the JVM's pool of interned strings held a
        string already: ``new Locale(fresh).getLanguage() != fresh`` asks whether a loaded
        class uses ``fresh`` as a literal (an eleventh red team's oracle of a test's expected
        value, after ``intern`` was gated). A comparison with ``null`` or of primitives is
        none."""
        op = node.child_by_field_name("operator")
        if op is None or syntax.text(op) not in ("==", "!="):
            return
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or {"null_literal", "this"} & {left.type, right.type}:
            return  # ``o == this``: equals' own first question, not the pool's
        if self._stringish(left) or self._stringish(right):
            self.add(STRING_IDENTITY, node, syntax.text(node)[:120])

    def _stringish(self, node: Any, depth: int = 0) -> bool:
        """The expression may be a String by what the file says of it (variables followed to
        what they were given, a few steps: ``a = a[0]`` must not loop)."""
        if depth > _STRINGISH_DEPTH:
            return False
        while node.type in ("parenthesized_expression", "cast_expression"):
            if node.type == "cast_expression":
                kind = node.child_by_field_name("type")
                if kind is not None and syntax.text(kind) in _STRING_TYPES:
                    return True
                node = node.child_by_field_name("value") or node
                if node.type == "cast_expression":
                    continue
            if node.type == "parenthesized_expression":
                if not node.named_children:
                    return False
                node = node.named_children[0]
        kind = node.type
        if kind in ("string_literal", "text_block"):
            return True
        if kind in ("array_access", "field_access"):
            # An element of an array of them (``pair[0]``), a field declared as one.
            inner = node.child_by_field_name("array" if kind == "array_access" else "field")
            return inner is not None and self._stringish(inner, depth + 1)
        if kind == "identifier":
            name = syntax.text(node)
            declared = {t.rsplit(".", 1)[-1] for t in self.var_types.get(name, ())}
            if declared & _STRING_TYPES or (declared and all(len(t) == 1 for t in declared)):
                return True  # a type parameter, or a lambda's inferred "?"
            # ``var x = <a String>``: judged by what it was given.
            return any(self._stringish(v, depth + 1) for v in self.var_inits.get(name, ())[:4])
        if kind == "method_invocation":
            name = node.child_by_field_name("name")
            return name is not None and (
                syntax.text(name) in _STRING_METHODS or syntax.text(name) in _ELEMENT_METHODS
            )
        if kind == "object_creation_expression":
            made = node.child_by_field_name("type")
            return made is not None and syntax.text(made).rsplit(".", 1)[-1] in _STRING_TYPES
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            return (
                op is not None
                and syntax.text(op) == "+"
                and (
                    self._stringish(node.child_by_field_name("left") or node, depth + 1)
                    if node.child_by_field_name("left") is not node
                    else False
                )
            )
        return False

    def _import(self, node: Any) -> None:
        name = next((c for c in node.named_children if "identifier" in c.type), None)
        if name is None:
            return
        qualified = syntax.text(name).replace(" ", "")
        star = any(c.type == "asterisk" for c in node.children)
        self._qualified(qualified + ("." if star else ""), node)
        self._member(qualified, node)

    def _qualified(self, qualified: str, node: Any) -> None:
        """A class or package by its qualified name: the capabilities of its package."""
        for prefix, cap in _TYPES:
            if prefix.endswith("."):
                hit = qualified.startswith(prefix) or qualified + "." == prefix
            else:
                hit = qualified == prefix or qualified.startswith(prefix + ".")
            if hit:
                self.add(cap, node)
        if qualified.rsplit(".", 1)[-1] == "Unsafe":
            self.add(UNSAFE, node)

    def _member(self, member: str, node: Any) -> None:
        cap = _MEMBERS.get(member)
        if cap is not None:
            self.add(cap, node)

    def _judge_all(self, things: frozenset[str] | set[str], node: Any) -> None:
        for thing in things:
            tag, value = thing[0], thing[2:]
            if tag == "M":
                self._member(value, node)
            elif tag == "C":
                self._qualified(value, node)

    def _invocation(self, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        name = syntax.text(name_node) if name_node is not None else ""
        cap = _METHOD_NAMES.get(name)
        if cap is not None:
            self.add(cap, node, _head(node))
        called = self._called(node, 0)
        self._judge_all({t for t in called if t[0] == "M"}, node)
        obj = node.child_by_field_name("object")
        if obj is not None and obj.type == "identifier":
            self._judge_all(self._resolve(obj), obj)
        if "M:java.lang.System.getProperty" in called:
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and _JAVA_COMMAND in (self._text_of(first) or ""):
                self.add(PROPERTIES, node)

    def _static_name(self, node: Any) -> None:
        """A bare name a static import brings in (``out`` of ``System.*``)."""
        if _member_name(self.up, node):
            return  # a member's own name, judged with its owner
        things = self._identifier(syntax.text(node), 0)
        self._judge_all({t for t in things if t[0] == "M"}, node)

    def _escaping_runtime(self, node: Any) -> None:
        """The Runtime handed where its type is lost (an argument, a collection, a return
        value, an Object): whatever then calls ``exit``/``halt``/``exec`` on it is unseen."""
        parent = self.up.parent(node)
        if parent is None or "I:java.lang.Runtime" not in self._resolve(node):
            return
        kind = parent.type
        lost = kind in (
            "argument_list",
            "array_initializer",
            "return_statement",
            "lambda_expression",
        )
        if kind == "variable_declarator" and parent.child_by_field_name("value") == node:
            holder = self.up.parent(parent)
            declared = holder.child_by_field_name("type") if holder is not None else None
            lost = _type_text(declared) not in ("Runtime", "java.lang.Runtime", "var")
        if kind == "assignment_expression" and parent.child_by_field_name("right") == node:
            left = parent.child_by_field_name("left")
            types = self.var_types.get(syntax.text(left), set()) if left is not None else set()
            lost = not types & {"Runtime", "java.lang.Runtime"}
        if lost:
            self.add(EXIT, node)
            self.add(PROCESSES, node)

    def _field_access(self, node: Any) -> None:
        things = self._resolve(node)
        self._judge_all(things, node)

    def _reference(self, node: Any) -> None:
        """``X::m``: the member ``m`` of what ``X`` is (a class's ``m`` as a static member
        and, unbound, as an instance method)."""
        children = node.named_children
        if len(children) < 2:
            return
        target, name = children[0], syntax.text(children[-1])
        owners = set(self._resolve(target))
        if target.type in ("type_identifier", "scoped_type_identifier", "generic_type"):
            owners |= {f"C:{c}" for c in self._type_names(_type_text(target))}
        owners |= {f"I:{o[2:]}" for o in owners if o[0] == "C"}
        members = self._members(owners, name)
        self._judge_all(members, node)
        if "I:java.lang.Runtime" in members:  # Runtime::getRuntime as a Supplier
            self.add(EXIT, node)
            self.add(PROCESSES, node)
        cap = _METHOD_NAMES.get(name)
        if cap is not None:
            self.add(cap, node)

    def _creation(self, node: Any) -> None:
        made = node.child_by_field_name("type")
        if made is None:
            return
        names = self._type_names(_type_text(made))
        simple = _type_text(made).rsplit(".", 1)[-1]
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if simple in ("PrintStream", "PrintWriter") and first is not None:
            # A stream on a file name or a File opens a file for writing.
            opened = self._resolve(first)
            if first.type == "string_literal" or any(
                t in ("I:java.io.File", "I:java.nio.file.Path") for t in opened
            ):
                self.add(FILE_WRITES, node)
        for name in names:
            self._qualified(name, node)

    def _type_mention(self, node: Any) -> None:
        parent = self.up.parent(node)
        if parent is not None and parent.type == "scoped_type_identifier":
            return  # judged with the whole name
        for name in self._type_names(_type_text(node)):
            self._qualified(name, node)

    def _static_field(self, node: Any) -> None:
        """A static field's initialiser runs when the class loads (an interface's fields are
        static): a call there, unless it only builds a value, is load-time code."""
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        static = modifiers is not None and any(c.type == "static" for c in modifiers.children)
        in_interface = getattr(self.up.parent(node), "type", "") == "interface_body"
        if not (static or in_interface):
            return
        for decl in node.children_by_field_name("declarator"):
            value = decl.child_by_field_name("value")
            if value is None:
                continue
            stack = [value]
            while stack:
                call = stack.pop()
                if call.type in ("lambda_expression", "class_body", "method_reference"):
                    continue  # code that runs later, when called
                if call.type == "method_invocation" and not _PURE_INITS.match(_callee(call)):
                    self.add(STATIC_FIELD_INIT, call, _head(call))
                stack.extend(call.children)

    def _method(self, node: Any) -> None:
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is not None and any(c.type == "native" for c in modifiers.children):
            self.add(NATIVE, node, _head(node))
        name = node.child_by_field_name("name")
        if name is not None and syntax.text(name) in ("premain", "agentmain"):
            self.add(INSTRUMENTATION, node, _head(node))
