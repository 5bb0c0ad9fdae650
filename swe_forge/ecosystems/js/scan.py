"""Which capabilities a JavaScript or TypeScript file uses, read on its syntax tree.

A candidate's module runs in the test runner's own process (Jest's, Vitest's or Mocha's
workers): it can end the process, write the JSON report's text itself, replace the
framework's globals (``expect``) or the builtins its matchers rely on (``Object.is``,
``Array.prototype.includes``), reach the module loader, or read the held-out tests. The gate
refuses a patch that newly uses such a capability
(:func:`swe_forge.ecosystems.base.source_capabilities`); this module only says which ones a
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
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import (
    UNPARSABLE,
    Findings,
    Parents,
    add_finding,
    decode_escapes,
    text_capabilities,
)

EXIT = "process.exit"
STDOUT = "process.stdout/stderr"
CONSOLE = "console"
PROCESS_ON = "process.on"
INTERNALS = "process internals"
LOADER = "module loader"
CHILD = "child_process"
VM = "vm"
WORKERS = "worker_threads"
INSPECTOR = "inspector"
FRAMEWORK = "test framework"
STACK = "stack traces"
GLOBALS = "global objects"
EVAL = "eval"
REPORT_TEXT = "test-report text"
DYNAMIC_PROCESS = "dynamic process access"
FILE_READ = "file_read"
SOURCE_PATHS = "source paths"
VALUE_OVERRIDES = "value overrides"
PROXY = "Proxy"
TOP_LEVEL = "top-level code"
TEST_TREE = "reads_test_tree"
DEVICE = "device paths"
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

#: The test frameworks' globals (Jest, Vitest, Mocha, Jasmine).
_FRAMEWORK_GLOBALS = frozenset(
    {
        "expect",
        "jest",
        "vi",
        "vitest",
        "describe",
        "it",
        "test",
        "beforeAll",
        "afterAll",
        "beforeEach",
        "afterEach",
        "before",
        "after",
        "suite",
        "jasmine",
        "fail",
        "pending",
        "xit",
        "xdescribe",
        "xtest",
        "fit",
        "fdescribe",
        "spyOn",
        "__coverage__",
        "__vitest_worker__",
        "__vitest_environment__",
        "__vitest_index__",
    }
)
#: Framework globals no code names a local after (read as globals even in a hunk).
_DISTINCTIVE = frozenset({"expect", "jest", "vi", "jasmine", "vitest"})
#: Builtin globals whose members every test and matcher relies on.
_BUILTINS = frozenset(
    {
        "Object",
        "Function",
        "Array",
        "String",
        "Number",
        "Boolean",
        "Symbol",
        "BigInt",
        "Promise",
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "ReferenceError",
        "EvalError",
        "URIError",
        "AggregateError",
        "JSON",
        "Math",
        "Reflect",
        "Date",
        "RegExp",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "WeakRef",
        "ArrayBuffer",
        "SharedArrayBuffer",
        "DataView",
        "Int8Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "Int16Array",
        "Uint16Array",
        "Int32Array",
        "Uint32Array",
        "Float32Array",
        "Float64Array",
        "BigInt64Array",
        "BigUint64Array",
        "Intl",
        "Atomics",
        "Buffer",
        "URL",
        "URLSearchParams",
        "TextEncoder",
        "TextDecoder",
        "Iterator",
        "Proxy",
        "setTimeout",
        "setInterval",
        "setImmediate",
        "clearTimeout",
        "clearInterval",
        "queueMicrotask",
        "structuredClone",
        "performance",
        "eval",
        "isNaN",
        "isFinite",
        "parseInt",
        "parseFloat",
        "require",
        "module",
    }
)
#: Globals that, read on a sloppy function's ``this``, are taken for the real ones.
_SENSITIVE = (
    frozenset(
        {"process", "eval", "Function", "require", "module", "console", "Error", "Object", "Array"}
    )
    | _FRAMEWORK_GLOBALS
)
#: Names of the global object itself.
_GLOBAL_NAMES = frozenset({"globalThis", "global", "window", "self"})
_TIMERS = frozenset({"setTimeout", "setInterval", "setImmediate", "queueMicrotask"})
_TIMER_PATHS = frozenset(f"global.{t}" for t in _TIMERS)
#: Calls that, made when a module loads, act around the tests (later, or on the process).
_AROUND = frozenset(
    {
        *_TIMER_PATHS,
        "global.process.nextTick",
        *(f"global.process.{m}" for m in ("exit", "abort", "kill", "reallyExit", "on", "once")),
        *(f"global.process.{m}" for m in ("addListener", "prependListener", "emit", "send")),
        "global.process.stdout.write",
        "global.process.stderr.write",
    }
)
_FD_WRITES = frozenset({"module:fs.writeSync", "module:fs.write", "module:fs.writeFileSync"})

#: Path prefixes (``global.`` for what the global object holds, ``module:`` for a module)
#: -> capability. A prefix matches itself and anything below it.
_REFERENCES: tuple[tuple[str, str], ...] = tuple(
    (prefix, cap)
    for cap, prefixes in {
        EXIT: tuple(
            f"global.process.{m}" for m in ("exit", "abort", "kill", "reallyExit", "_kill")
        ),
        STDOUT: (
            *(f"global.process.{m}" for m in ("stdout", "stderr", "_rawDebug")),
            "global.console._stdout",
            "global.console._stderr",
        ),
        PROCESS_ON: tuple(
            f"global.process.{m}"
            for m in (
                "on",
                "once",
                "addListener",
                "prependListener",
                "prependOnceListener",
                "emit",
                "off",
                "removeListener",
                "removeAllListeners",
                "setUncaughtExceptionCaptureCallback",
            )
        ),
        INTERNALS: tuple(
            f"global.process.{m}"
            for m in (
                "binding",
                "_linkedBinding",
                "dlopen",
                "mainModule",
                "_getActiveHandles",
                "_getActiveRequests",
                "_events",
                "_eventsCount",
                "send",
                "channel",
                "disconnect",
                "report",
                "moduleLoadList",
                "_tickCallback",
                "getBuiltinModule",
            )
        ),
        LOADER: (
            "global.require.cache",
            "global.require.extensions",
            "global.module.constructor",
            "global.module.parent",
            "global.module.children",
            "global.module.paths",
            "module:module",
            "module:*",
        ),
        CHILD: ("module:child_process", "module:cluster"),
        VM: ("module:vm",),
        WORKERS: ("module:worker_threads",),
        INSPECTOR: (
            "module:inspector",
            "module:v8",
            "module:async_hooks",
            "module:trace_events",
            "module:diagnostics_channel",
        ),
        FRAMEWORK: (
            *(f"global.{name}" for name in _FRAMEWORK_GLOBALS),
            "module:jest",
            "module:@jest",
            "module:vitest",
            "module:@vitest",
            "module:mocha",
            "module:chai",
            "module:expect",
            "module:node:test",
        ),
        STACK: (
            "global.Error.prepareStackTrace",
            "global.Error.stackTraceLimit",
            "global.Error.captureStackTrace",
            "error:new.stack",
        ),
        EVAL: (
            "global.eval",
            "global.execScript",
            "global.Function.apply",
            "global.Function.call",
            "global.Function.bind",
        ),
        FILE_READ: (
            "module:fs",
            "module:graceful-fs",
            "module:fs-extra",
            # Built-ins that open the paths they are given: the REPL's .load and .save (a red
            # team's file reader and writer), WASI's preopened directories, SQLite files.
            "module:repl",
            "module:wasi",
            "module:sqlite",
        ),
        SOURCE_PATHS: (
            "global.__dirname",
            "global.__filename",
            "meta.url",
            "meta.dirname",
            "meta.filename",
            "meta.resolve",
            "global.require.main",
            "global.module.filename",
            "global.module.path",
        ),
        VALUE_OVERRIDES: ("global.Symbol.hasInstance", "global.Symbol.toPrimitive"),
        PROXY: ("global.Proxy",),
        DYNAMIC_PROCESS: ("global.process.*",),
        GLOBALS: (
            "global.*",
            # Symbol-keyed properties: where frameworks keep their state on the global object
            # (``Symbol.for('$$jest-matchers-object')``), found without naming it.
            "global.Object.getOwnPropertySymbols",
            "global.Reflect.ownKeys",
        ),
    }.items()
    for prefix in prefixes
)
#: Modules whose names start like a framework's (``jest-circus``, ``@jest/globals``).
_FRAMEWORK_MODULE = re.compile(r"^(?:jest|vitest|mocha|chai)(?:[-/]|$)|^@(?:jest|vitest)/")
#: Calls that set properties or prototypes of their first argument.
_DEFINERS = frozenset(
    {
        "global.Object.defineProperty",
        "global.Object.defineProperties",
        "global.Object.setPrototypeOf",
        "global.Object.assign",
        "global.Reflect.defineProperty",
        "global.Reflect.set",
        "global.Reflect.setPrototypeOf",
        "global.Reflect.deleteProperty",
    }
)
#: Keys of Jest's and Vitest's JSON report.
_REPORT_KEYS = frozenset(
    {
        "numFailedTests",
        "numPassedTests",
        "numTotalTests",
        "numPendingTests",
        "numTodoTests",
        "numFailedTestSuites",
        "numPassedTestSuites",
        "numTotalTestSuites",
        "numPendingTestSuites",
        "numRuntimeErrorTestSuites",
        "testResults",
        "assertionResults",
        "ancestorTitles",
        "failureMessages",
        "fullTitle",
    }
)
_REPORT_TEXT = re.compile(r"\b(?:" + "|".join(sorted(_REPORT_KEYS)) + r")\b")
#: What the frameworks' workers are recognised by.
_FRAMEWORK_TEXT = re.compile(
    r"^(?:JEST_WORKER_ID|VITEST(?:_\w+)?|__vitest_\w+__|\$\$jest[-\w]*|jest-circus[-\w]*"
    r"|jest-matchers[-\w]*|mocha"
    # Jest's and Vitest's equality protocol: an object with an ``asymmetricMatch`` method is
    # asked by ``toEqual`` whether it equals the expected value (a red team's forged 10/10:
    # a return value that accepts what the honest twin expects and rejects the decoys').
    r"|asymmetricMatch|jest\.asymmetricMatcher"
    # expect's and jest-circus's state, found by walking the global object's symbols (a
    # thirteenth red team added an equality tester through ``customEqualityTesters``).
    r"|customEqualityTesters|currentlyRunningTest|currentTestName|snapshotState"
    r"|assertionCalls|expectedAssertionsNumber|isExpectingAssertions|suppressedErrors"
    r"|currentDescribeBlock|rootDescribeBlock|unhandledErrors)$"
)

_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function_declaration",
        "generator_function",
        "arrow_function",
        "method_definition",
        "function_signature",
        "method_signature",
        "abstract_method_signature",
    }
)
_BLOCKS = frozenset(
    {
        "program",
        "statement_block",
        "for_statement",
        "for_in_statement",
        "switch_body",
        "catch_clause",
        "class_body",
        "class_static_block",
    }
)
#: Nodes names are declared in (a lookup walks these only).
_SCOPES = _BLOCKS | _FUNCTIONS | {"class"}
#: Functions whose ``this`` is the caller's (the global object when called plainly).
_PLAIN_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function_declaration",
        "generator_function",
    }
)
_TRANSPARENT = frozenset(
    {
        "parenthesized_expression",
        "await_expression",
        "as_expression",
        "type_assertion",
        "non_null_expression",
        "satisfies_expression",
    }
)
_MAX_DEPTH = 100
_MAX_SEGMENTS = 12
_MAX_TEXT = 1 << 16


class _Binding:
    """A declared name: what it was given (nodes with a destructuring path, or paths)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: list[tuple[Any, tuple[str, ...]] | str] = []


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


class _Scan:
    """One file: scopes and bindings first, then every reference, call and assignment."""

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

    # -------------------------------------------------------------------------- strings
    def _strings(self) -> None:
        """Judge the folded text of every outermost string expression."""
        for node in syntax.walk(self.root):
            if node.type not in _STRINGY:
                continue
            parent = self.up.parent(node)
            if parent is not None and parent.type in _STRINGY and self._text_of(parent):
                continue
            text = self._text_of(node)
            if not text:
                continue
            if _REPORT_TEXT.search(text):
                self.add(REPORT_TEXT, node)
            if _FRAMEWORK_TEXT.match(text):
                self.add(FRAMEWORK, node)
            for cap in text_capabilities(text):
                self.add(cap, node)

    def _text_of(self, node: Any) -> str | None:
        value = self._fold_value(node)
        if isinstance(value, str):
            return value
        return self.partial.get(node.id)

    def _fold_text(self, node: Any) -> str | None:
        """A node's constant string (None when it is not one)."""
        value = self._fold_value(node)
        return value if isinstance(value, str) else None

    def _fold_value(self, node: Any) -> Any:
        """A node's constant value (str, number, list), folded bottom-up without recursion
        on the nesting of the expression."""
        if node is None:
            return None
        if node.id in self.values:
            return self.values[node.id]
        if node.id in self.folding or len(self.folding) > _MAX_DEPTH:
            if len(self.folding) > _MAX_DEPTH:
                self.add(UNPARSABLE, node, "constants chained too deep")
            return None
        self.folding.add(node.id)
        stack: list[tuple[Any, bool]] = [(node, False)]
        while stack:
            current, done = stack.pop()
            if current.id in self.values:
                continue
            if not done:
                stack.append((current, True))
                if current.type in _FOLDABLE:
                    stack.extend(
                        (c, False) for c in current.named_children if c.id not in self.values
                    )
                continue
            self.values[current.id] = self._fold(current)
        self.folding.discard(node.id)
        return self.values.get(node.id)

    def _fold(self, node: Any) -> Any:
        kind = node.type
        if kind == "string":
            return decode_escapes(syntax.text(node)[1:-1])
        if kind == "number":
            return _number(syntax.text(node))
        if kind == "template_string":
            return self._template(node)
        if kind in _TRANSPARENT:
            inner = _inner(node)
            return self.values.get(inner.id) if inner is not None else None
        if kind == "identifier":
            return self._constant(node)
        if kind == "binary_expression":
            return self._concat(node)
        if kind == "array":
            items = [self.values.get(c.id) for c in node.named_children]
            return items if all(i is not None for i in items) else None
        if kind == "call_expression":
            return self._fold_call(node)
        return None

    def _constant(self, ident: Any) -> Any:
        """The value of a name declared once with a constant and never reassigned."""
        binding = self._lookup(ident)
        if binding is None or len(binding.values) != 1 or isinstance(binding.values[0], str):
            return None
        expr, path = binding.values[0]
        if path:
            return None
        return self._fold_value(expr)

    def _template(self, node: Any) -> Any:
        parts: list[str] = []
        known = True
        for child in node.named_children:
            if child.type == "string_fragment":
                parts.append(syntax.text(child))
            elif child.type == "escape_sequence":
                parts.append(decode_escapes(syntax.text(child)))
            elif child.type == "template_substitution":
                expr = child.named_children[0] if child.named_children else None
                value = self._fold_value(expr) if expr is not None else None
                if value is None:
                    known = False
                else:
                    parts.append(_show(value))
        text = "".join(parts)[:_MAX_TEXT]
        if known:
            return text
        self.partial[node.id] = text
        return None

    def _concat(self, node: Any) -> Any:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or op.type != "+" or left is None or right is None:
            return None
        a, b = self.values.get(left.id), self.values.get(right.id)
        if a is not None and b is not None:
            if isinstance(a, int | float) and isinstance(b, int | float):
                return a + b
            return (_show(a) + _show(b))[:_MAX_TEXT]
        parts = [
            self.partial.get(n.id, _show(v) if v is not None else "")
            for n, v in ((left, a), (right, b))
        ]
        if any(parts):
            self.partial[node.id] = "".join(parts)[:_MAX_TEXT]
        return None

    def _fold_call(self, node: Any) -> Any:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        if fn is None or args_node is None or args_node.type != "arguments":
            return None
        args = [self._fold_value(a) for a in args_node.named_children]
        if fn.type == "member_expression":
            obj = fn.child_by_field_name("object")
            prop = fn.child_by_field_name("property")
            method = _name(prop) if prop is not None else ""
            receiver = self._fold_value(obj)
            if receiver is not None:
                return _method(receiver, method, args)
            owner = self._resolve(obj)
            if (
                method in ("fromCharCode", "fromCodePoint")
                and "global.String" in owner
                and all(isinstance(a, int | float) for a in args)
            ):
                return "".join(chr(int(a)) for a in args if 0 <= a < 0x110000)[:_MAX_TEXT]
            if method == "toString" and obj is not None and obj.type == "call_expression":
                return self._buffer(obj, args)
            return None
        callee = self._resolve(fn)
        if args and isinstance(args[0], str):
            if "global.atob" in callee:
                return _base64(args[0])
            if callee & {"global.decodeURIComponent", "global.decodeURI", "global.unescape"}:
                return unquote(args[0])
            if "global.String" in callee:
                return args[0]
        return None

    def _buffer(self, made: Any, args: list[Any]) -> Any:
        """``Buffer.from(s, 'base64'|'hex').toString()``."""
        fn = made.child_by_field_name("function")
        if fn is None or "global.Buffer.from" not in self._resolve(fn):
            return None
        inner = [self._fold_value(a) for a in self._args(made)]
        if not inner or not isinstance(inner[0], str):
            return None
        encoding = inner[1] if len(inner) > 1 and isinstance(inner[1], str) else "utf8"
        if encoding == "base64":
            return _base64(inner[0])
        if encoding == "hex":
            try:
                return bytes.fromhex(inner[0]).decode("utf-8", "replace")
            except ValueError:
                return None
        return inner[0]


_STRINGY = frozenset({"string", "template_string", "binary_expression", "call_expression"})
_FOLDABLE = frozenset(
    {
        "binary_expression",
        "template_string",
        "template_substitution",
        "array",
        "call_expression",
        "arguments",
        "member_expression",
        *_TRANSPARENT,
    }
)
#: Node's builtin modules (what a test runner itself is built on).
_NODE_MODULES = frozenset(
    {
        "assert",
        "async_hooks",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "crypto",
        "dgram",
        "dns",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "inspector",
        "module",
        "net",
        "os",
        "path",
        "perf_hooks",
        "querystring",
        "readline",
        "stream",
        "string_decoder",
        "timers",
        "tty",
        "url",
        "util",
        "v8",
        "vm",
        "worker_threads",
        "zlib",
    }
)
_FRAGMENT_MODULES = {
    "fs": "module:fs",
    "child_process": "module:child_process",
    "vm": "module:vm",
}


def _method(receiver: Any, method: str, args: list[Any]) -> Any:
    """A string or array method of constants."""
    if isinstance(receiver, list):
        if method == "join":
            sep = args[0] if args and isinstance(args[0], str) else ","
            return sep.join(_show(v) for v in receiver)[:_MAX_TEXT]
        if method == "reverse":
            return list(reversed(receiver))
        if method == "concat":
            return receiver + [a for arg in args for a in (arg if isinstance(arg, list) else [arg])]
        return None
    if not isinstance(receiver, str):
        return None
    change = _CHANGES.get(method)
    if change is not None:
        return change(receiver)
    if method == "concat" and all(a is not None for a in args):
        return (receiver + "".join(_show(a) for a in args))[:_MAX_TEXT]
    if method == "split" and args and isinstance(args[0], str):
        return list(receiver) if args[0] == "" else receiver.split(args[0])
    if (
        method in ("replace", "replaceAll")
        and len(args) == 2
        and all(isinstance(a, str) for a in args)
    ):
        count = -1 if method == "replaceAll" else 1
        return receiver.replace(args[0], args[1], count)[:_MAX_TEXT]
    if method == "repeat" and args and isinstance(args[0], int | float):
        count = max(0, min(int(args[0]), _MAX_TEXT // max(1, len(receiver)) + 1))
        return (receiver * count)[:_MAX_TEXT]
    if method in ("slice", "substring") and all(isinstance(a, int | float) for a in args):
        bounds = [int(a) for a in args[:2]]
        return receiver[slice(*bounds)] if bounds else receiver
    return None


_CHANGES: dict[str, Callable[[str], str]] = {
    "toString": str,
    "valueOf": str,
    "toLowerCase": str.lower,
    "toUpperCase": str.upper,
    "trim": str.strip,
    "trimStart": str.lstrip,
    "trimEnd": str.rstrip,
    "normalize": str,
}


def _show(value: Any) -> str:
    """A constant as string concatenation shows it."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_show(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(text: str) -> int | float | None:
    digits = text.replace("_", "").rstrip("n")
    try:
        return int(digits, 0)
    except ValueError:
        try:
            return float(digits)
        except ValueError:
            return None


def _base64(text: str) -> str | None:
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


def _name(node: Any) -> str:
    """An identifier's name, with its Unicode escapes decoded (``\\u0065val`` is eval)."""
    text = syntax.text(node)
    return decode_escapes(text) if "\\" in text else text


def _key(node: Any) -> str:
    if node is None:
        return "*"
    if node.type in ("property_identifier", "identifier"):
        return _name(node)
    if node.type == "string":
        return decode_escapes(syntax.text(node)[1:-1])
    return "*"


def _extend(
    given: tuple[Any, tuple[str, ...]] | None, key: str
) -> tuple[Any, tuple[str, ...]] | None:
    return (given[0], (*given[1], key)) if given is not None else None


def _strict(root: Any) -> bool:
    """Is a script strict (a "use strict" directive, or an ES module)?"""
    for child in root.named_children:
        if child.type in ("import_statement", "export_statement"):
            return True
    first = next((c for c in root.named_children if c.type != "comment"), None)
    return (
        first is not None
        and first.type == "expression_statement"
        and bool(re.match(r"""^['"]use strict['"]""", syntax.text(first)))
    )


def _inner_function(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression":
        node = _inner(node)
    if node is not None and node.type in ("function_expression", "function", "arrow_function"):
        return node
    return None


def _returned(fn: Any) -> list[Any]:
    """The expressions a function returns (an arrow's body; its own return statements)."""
    body = fn.child_by_field_name("body")
    if body is None:
        return []
    if body.type != "statement_block":
        return [body]
    out = []
    stack = list(body.named_children)
    while stack:
        node = stack.pop()
        if node.type in _FUNCTIONS or node.type in ("class", "class_declaration"):
            continue
        if node.type == "return_statement" and node.named_children:
            out.append(node.named_children[0])
        stack.extend(node.named_children)
    return out


def _module_path(spec: str) -> str:
    """``module:<name>[.<subpath>]`` of a module specifier (``node:`` dropped, except for
    ``node:test``, whose bare name is a package of the registry)."""
    if spec == "node:test":
        return "module:node:test"
    if re.match(r"(?i)^(?:data|https?|blob):", spec):
        return "global.eval"  # code given inline or fetched: evaluated
    if re.match(r"(?i)^file:", spec):
        return "module:*"
    spec = spec.removeprefix("node:")
    if spec == "process":
        return "global.process"
    parts = spec.split("/")
    if "node_modules" in parts:
        # A path into an installed package is that package (a sixth red team reached Jest's
        # matchers through ``require('../node_modules/expect')``, which named no module).
        last = len(parts) - 1 - parts[::-1].index("node_modules")
        parts = [p for p in parts[last + 1 :] if p not in ("", ".")] or ["*"]
        spec = "/".join(parts)
    head = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
    rest = parts[2:] if spec.startswith("@") else parts[1:]
    return "module:" + ".".join([head, *rest])


def _member(path: str, name: str) -> str:
    """``path.name``; a path is kept to its first segments (no rule looks deeper, and a
    chain of thousands of members must not build strings as long)."""
    return path if path.count(".") >= _MAX_SEGMENTS else f"{path}.{name[:200]}"


def _normal(path: str) -> str:
    """The global object's own names collapsed (``globalThis.window.process`` is
    ``global.process``); a free ``globalThis`` is the global object itself; a sloppy
    function's ``this`` may be the global object, so the globals that matter read on it are."""
    if path.startswith("sloppy:this."):
        name = path.split(".", 2)[1]
        if name in _SENSITIVE or name in _GLOBAL_NAMES:
            path = "global." + path[len("sloppy:this.") :]
    elif path.startswith("sloppy:self."):
        name = path.split(".", 2)[1]
        if name == "*" or name in _SENSITIVE or name in _GLOBAL_NAMES:
            path = "global." + path[len("sloppy:self.") :]
    parts = path.split(".")
    if parts[0] != "global":
        return path
    out = ["global"]
    for part in parts[1:]:
        if part in _GLOBAL_NAMES and len(out) == 1:
            continue
        out.append(part)
    return ".".join(out)


def _written(path: str, *, explicit: bool) -> str | None:
    """The capability of writing to ``path`` (an assignment, a delete, defineProperty)."""
    if path.startswith("proto:") or ".__proto__." in path + ".":
        return GLOBALS
    if path.startswith("module:"):
        # A member of Node's own modules or of a framework's: what the runner itself uses.
        name, _, member = path[7:].partition(".")
        if not member:
            return None
        if _FRAMEWORK_MODULE.match(name):
            return FRAMEWORK
        return GLOBALS if name in _NODE_MODULES else None
    if not path.startswith("global"):
        return None
    parts = path.split(".")
    if len(parts) == 1:
        return GLOBALS  # the global object itself
    root = parts[1]
    if root in ("module", "require"):
        return None if parts[2:3] == ["exports"] else LOADER  # module.exports is CommonJS's
    if root == "process":
        if len(parts) > 2 and parts[2] == "env":
            return None
        return EXIT if parts[2:3] == ["exitCode"] else INTERNALS
    if root == "console":
        return CONSOLE
    if root in _FRAMEWORK_GLOBALS:
        return FRAMEWORK
    if root in _BUILTINS or explicit:
        return GLOBALS
    return None


def _inner(node: Any) -> Any:
    """The expression inside a parenthesis, an await or a TypeScript assertion."""
    children = [c for c in node.named_children if c.type != "comment"]
    if not children:
        return None
    return children[-1] if node.type == "type_assertion" else children[0]


def _escapes(up: Parents, node: Any) -> bool:
    """Is an expression handed on where the scan no longer follows it?"""
    parent = up.parent(node)
    if parent is None or not node.is_named:
        return False
    kind = parent.type
    if kind in ("arguments", "array", "spread_element", "return_statement", "yield_expression"):
        return True
    if kind in ("pair", "export_statement"):
        return bool(parent.child_by_field_name("value") == node)
    if kind in ("assignment_expression",):
        left = parent.child_by_field_name("left")
        return (
            parent.child_by_field_name("right") == node
            and left is not None
            and left.type != "identifier"
        )
    return False
