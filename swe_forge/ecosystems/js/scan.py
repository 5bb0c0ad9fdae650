"""Which capabilities a JavaScript or TypeScript file uses, read on its syntax tree.

A candidate's module runs in the test runner's own process (Jest's, Vitest's or Mocha's
workers): it can end the process, write the JSON report's text itself, replace the
framework's globals (``expect``) or the builtins its matchers rely on (``Object.is``,
``Array.prototype.includes``), reach the module loader, or read the held-out tests. The gate
refuses a patch that newly uses such a capability
(:func:`swe_forge.ecosystems.scanning.source_capabilities`); this module only says which ones a
file uses, with the line and the code as evidence.

Nothing is matched as text. Every reference is resolved to what it is:

- scopes are followed (parameters, ``let``/``const``/``var``, functions, classes, catch
  clauses, imports; TypeScript's ``declare`` creates nothing at run time), so a local
  ``test`` or ``it`` is not the framework's and a free ``expect`` is;
- aliases are followed through declarations, destructuring (``const { exit: e } =
  process``), assignments, ``globalThis``/``global``/``window``, ``require`` and ``import``
  under any name and ``Reflect.get``; a computed member of ``process`` or of the global
  object, and ``process`` itself passed around, are capabilities of their own;
- strings are folded: concatenation, template literals, ``String.fromCharCode``, ``atob``,
  ``Buffer.from(.., 'base64')``, ``split/reverse/join``, ``concat``, case changes, constants.

The scan is one class in layers, each in its module: ``scan_scopes`` (the state, scopes
and bindings), ``scan_resolve`` (what an expression may be), ``scan_fold`` (constants
folded, strings judged) and this module's :class:`_Scan` (the rules: every reference,
call and assignment judged); ``scan_rules`` holds the capability names and the tables
they are judged by, ``scan_nodes`` the syntax-tree vocabulary they share.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.js.scan_fold import _Folding
from swe_forge.ecosystems.js.scan_nodes import _PLAIN_FUNCTIONS, _escapes, _name
from swe_forge.ecosystems.js.scan_rules import (
    _AROUND,
    _BUILTINS,
    _DEFINERS,
    _FD_WRITES,
    _FRAMEWORK_GLOBALS,
    _FRAMEWORK_MODULE,
    _FRAMEWORK_TEXT,
    _GLOBAL_NAMES,
    _NODE_MODULES,
    _REFERENCES,
    _REPORT_KEYS,
    _TIMER_PATHS,
    CHILD,
    CONSOLE,
    DEVICE,
    DYNAMIC_PROCESS,
    EVAL,
    EXIT,
    FILE_READ,
    FRAMEWORK,
    GLOBALS,
    INSPECTOR,
    INTERNALS,
    LOADER,
    PROCESS_ON,
    PROXY,
    REPORT_TEXT,
    SOCKETS,
    SOURCE_PATHS,
    STACK,
    STDOUT,
    TEST_TREE,
    TOP_LEVEL,
    VALUE_OVERRIDES,
    VM,
    WORKERS,
    _module_path,
    _normal,
    _written,
)
from swe_forge.ecosystems.scanning import UNPARSABLE, Findings, add_finding

#: A package the file's package.json does not declare (a devDependency, or one installed only
#: for the tooling: ``@babel/core``, ``glob``), which code shipped to users never needs.
UNDECLARED = "undeclared package"

#: Every capability this scanner reports.
CAPABILITIES = (
    PROXY,
    CHILD,
    CONSOLE,
    DEVICE,
    DYNAMIC_PROCESS,
    EVAL,
    FILE_READ,
    GLOBALS,
    INSPECTOR,
    LOADER,
    EXIT,
    INTERNALS,
    PROCESS_ON,
    SOCKETS,
    STDOUT,
    TEST_TREE,
    SOURCE_PATHS,
    STACK,
    FRAMEWORK,
    REPORT_TEXT,
    TOP_LEVEL,
    UNDECLARED,
    UNPARSABLE,
    VALUE_OVERRIDES,
    VM,
    WORKERS,
)


def scan(source: bytes, path: str, *, fragment: bool = False) -> Findings:
    """Capability -> [(line, evidence)] of one JS/TS file, by its extension's grammar
    (``fragment``: the hunks of a patch, read without their file's imports). A file of
    another extension is read as JavaScript: that is how Node and Jest load it."""
    return scan_with_specifiers(source, path, fragment=fragment)[0]


def module_specifiers(source: bytes, path: str, *, fragment: bool = False) -> set[str]:
    """Every constant specifier a JS/TS file (or fragment) hands to ``require``, ``import``
    or ``export ... from``."""
    return scan_with_specifiers(source, path, fragment=fragment)[1]


def scan_with_specifiers(
    source: bytes, path: str, *, fragment: bool = False
) -> tuple[Findings, set[str]]:
    """:func:`scan` and :func:`module_specifiers` of one file, from one reading of it.

    The gate asks both of the same file (what it may do, which packages it names); a file is
    parsed once however often it is asked about (the last few files are remembered)."""
    found, specs = _scan(source, path, fragment)
    # Copies: a caller may add to what it is given, and the remembered answer must not change.
    return {k: list(v) for k, v in found.items()}, set(specs)


@functools.lru_cache(maxsize=32)
def _scan(source: bytes, path: str, fragment: bool) -> tuple[Findings, frozenset[str]]:
    found: Findings = {}
    if len(source) > syntax.MAX_PARSE_BYTES:
        add_finding(found, UNPARSABLE, 1, f"{len(source)} bytes")
        return found, frozenset()
    tree = syntax.parse(syntax.grammar_for_path(path), _newer_syntax(source))
    root = tree.root_node
    if root.has_error and not fragment:
        line = next((syntax.line(n) for n in syntax.walk(root) if n.is_error or n.is_missing), 1)
        add_finding(found, UNPARSABLE, line, "syntax error")
    typescript = path.endswith((".ts", ".tsx", ".mts", ".cts"))
    run = _Scan(root, found, fragment, typescript=typescript)
    run.run()
    return found, frozenset(run.specifiers)


#: TypeScript 5 forms the grammar does not know yet, that have no run-time meaning.
_EXPORT_TYPE_STAR = re.compile(rb"(?m)^([ \t]*export[ \t]+)type([ \t]+\*)")


def is_builtin_module(spec: str) -> bool:
    """Is ``spec`` one of Node's own modules (``fs``, ``node:fs/promises``)?"""
    return spec.startswith("node:") or spec.split("/", 1)[0] in _NODE_MODULES


def _newer_syntax(source: bytes) -> bytes:
    """``export type * from`` read as ``export * from`` (same length, lines kept)."""
    if b"export" not in source:
        return source
    return _EXPORT_TYPE_STAR.sub(rb"\1    \2", source)


class _Scan(_Folding):
    """One file: scopes and bindings first, then every reference, call and assignment."""

    def run(self) -> None:
        self._bind()
        for node in syntax.walk(self.root):
            kind = node.type
            if kind in ("identifier", "member_expression", "subscript_expression"):
                if kind != "identifier" or self._is_reference(node):
                    self._reference(node)
                if kind == "identifier" and self._wrapper_arguments(node):
                    # CommonJS runs a module as a function of (exports, require, module,
                    # __filename, __dirname): its ``arguments`` hand over ``require`` and
                    # ``module`` under no name the gate can follow (``arguments[2]('glob')``).
                    self.add(LOADER, node, "arguments of the module wrapper")
            elif kind in ("call_expression", "new_expression"):
                self._call(node)
            elif kind in ("assignment_expression", "augmented_assignment_expression"):
                self._assignment(node.child_by_field_name("left"), node)
            elif kind == "update_expression":
                self._assignment(node.child_by_field_name("argument"), node)
            elif kind == "unary_expression":
                op = node.child_by_field_name("operator")
                if op is not None and op.type == "delete":
                    self._assignment(node.child_by_field_name("argument"), node)
            elif kind in ("import_statement", "export_statement"):
                self._module_source(node)
            elif kind == "with_statement":
                self.add(EVAL, node, "with (...)")  # names resolved at run time
            elif kind in ("property_identifier", "shorthand_property_identifier"):
                if kind == "shorthand_property_identifier":
                    self._escape(node)  # { process }: the value put in an object
                if syntax.text(node) in _REPORT_KEYS:
                    self.add(REPORT_TEXT, node)
                if _FRAMEWORK_TEXT.match(syntax.text(node)):
                    self.add(FRAMEWORK, node)  # state.customEqualityTesters
                if _FRAMEWORK_TEXT.match(syntax.text(node)):
                    self.add(FRAMEWORK, node)
            if _escapes(self.up, node):
                self._escape(node)
        self._strings()

    def _wrapper_arguments(self, node: Any) -> bool:
        """Is ``node`` an ``arguments`` that no function of the file's own binds (at the
        top level, or in arrow functions there): the module wrapper's? A fragment (hunks
        without their file) cannot say which function encloses it; its whole file can."""
        if self.fragment or syntax.text(node) != "arguments" or not self._is_reference(node):
            return False
        up = self.up.parent(node)
        while up is not None:
            if up.type in _PLAIN_FUNCTIONS or up.type == "method_definition":
                return False
            up = self.up.parent(up)
        return True

    # ---------------------------------------------------------------------------- rules
    def _judge(self, paths: frozenset[str] | set[str], node: Any) -> None:
        for path in paths:
            for prefix, cap in _REFERENCES:
                if path == prefix or path.startswith(prefix + "."):
                    self.add(cap, node)
            if path.startswith("module:") and _FRAMEWORK_MODULE.match(path[7:]):
                self.add(FRAMEWORK, node)

    def _reference(self, node: Any) -> None:
        paths = self._resolve(node)
        parent = self.up.parent(node)
        # An object of a member chain is judged with the whole chain (one finding a use).
        if (
            parent is not None
            and parent.type in ("member_expression", "subscript_expression")
            and parent.child_by_field_name("object") == node
            and self._resolve(parent)
        ):
            return
        self._judge(paths, node)

    def _call(self, node: Any) -> None:
        fn = node.child_by_field_name(
            "function" if node.type == "call_expression" else "constructor"
        )
        if fn is None:
            return
        args = self._args(node)
        if fn.type == "import":
            self._judge({self._required(args)}, node)
            return
        callees = self._resolve(fn)
        if fn.type not in ("identifier", "member_expression", "subscript_expression"):
            self._judge(callees, node)  # a callee computed by a call or an expression
        if "global.Function" in callees:
            self.add(EVAL, node)
        if fn.type == "member_expression":
            prop = fn.child_by_field_name("property")
            if prop is not None and _name(prop) == "constructor" and node.type == "call_expression":
                self.add(EVAL, node)  # x.constructor(...): the Function constructor
            if prop is not None and _name(prop) in ("__defineGetter__", "__defineSetter__"):
                self._target(fn.child_by_field_name("object"), node)
        for callee in callees:
            if callee in ("global.require", "global.module.require") or callee.endswith(".require"):
                self._judge({self._required(args)}, node)
            if callee in _DEFINERS and args:
                self._target(args[0], node)
                key = self._fold_text(args[1]) if len(args) > 1 else None
                if key in _FRAMEWORK_GLOBALS and "global" in self._resolve(args[0]):
                    self.add(FRAMEWORK, node)
            if callee in _TIMER_PATHS and args and self._fold_text(args[0]) is not None:
                self.add(EVAL, node)  # a timer given code as a string
            if callee in _FD_WRITES and args and self._fold_value(args[0]) in (1, 2):
                self.add(STDOUT, node)  # file descriptors 1 and 2
        top = node.id not in self.in_function
        if node.type == "call_expression" and top and callees & _AROUND:
            self.add(TOP_LEVEL, node)  # runs when the module is loaded, around the tests

    def _target(self, target: Any, node: Any) -> None:
        """The target of defineProperty/setPrototypeOf/assign: a builtin, the global object,
        a prototype or a module's exports is a global change."""
        if target is None:
            return
        for path in self._resolve(target):
            if path.startswith("module:") and "." not in path[7:]:
                # The module object itself is the target: its members are what is written
                # (Object.assign(require("assert"), {strictEqual() {}}), Reflect.set(assert,
                # "ok", f)): as assert.strictEqual = ... is (a twenty-seventh red team).
                path += ".*"
            cap = _written(path, explicit=False)
            if cap is not None:
                self.add(cap, node)
        if re.search(r"__proto__|\.constructor\.prototype\b", syntax.text(target)):
            self.add(GLOBALS, node)

    def _assignment(self, left: Any, node: Any) -> None:
        if left is None:
            return
        if left.type == "identifier":
            if self._lookup(left) is not None or self._out_of_view(_name(left)):
                return
            name = _name(left)
            if name in _BUILTINS or name in _GLOBAL_NAMES or name in ("process", "console"):
                self.add(CONSOLE if name == "console" else GLOBALS, node)
            elif name in _FRAMEWORK_GLOBALS:
                self.add(FRAMEWORK, node)
            return
        if left.type not in ("member_expression", "subscript_expression"):
            return
        obj = left.child_by_field_name("object")
        explicit = obj is not None and "global" in self._resolve(obj)
        for path in self._resolve(left):
            cap = _written(path, explicit=explicit)
            if cap is not None:
                self.add(cap, node)
        if re.search(r"__proto__\s*(?:\.|\[)|\.constructor\.prototype\b", syntax.text(left)):
            self.add(GLOBALS, node)

    def _module_source(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        if source is None or any(c.type == "type" for c in node.children):
            return  # import type / export type: nothing at run time
        if self.typescript and node.type == "import_statement" and self._elided(node):
            return
        spec = self._fold_text(source)
        if spec is not None:
            self.specifiers.add(spec)
        self._judge({_module_path(spec) if spec is not None else "module:*"}, node)

    def _escape(self, node: Any) -> None:
        """``process``, ``require`` or the global object handed to code the scan does not
        follow (an argument, an element, a property, a return value)."""
        if node.type == "shorthand_property_identifier":
            paths = frozenset(_normal(p) for p in self._identifier(node, 0))
        else:
            paths = self._resolve(node)
        if "global.process" in paths:
            self.add(DYNAMIC_PROCESS, node)
        if "global.Function" in paths:
            self.add(EVAL, node)  # the Function constructor handed on (Reflect.construct)
        if "global.require" in paths:
            self.add(LOADER, node)
        if "global" in paths or ("sloppy:self" in paths and not self._defined_on(node)):
            self.add(GLOBALS, node)

    def _defined_on(self, node: Any) -> bool:
        """Is ``node`` the target of ``Object.defineProperty`` and kin (judged as a write
        by :meth:`_target`: a constructor's ``defineProperty(this, ...)`` is no use of the
        global object)?"""
        args = self.up.parent(node)
        call = self.up.parent(args) if args is not None else None
        if args is None or call is None or args.type != "arguments" or not args.named_children:
            return False
        if args.named_children[0] != node:
            return False
        callee = call.child_by_field_name("function")
        return callee is not None and bool(self._resolve(callee) & _DEFINERS)
