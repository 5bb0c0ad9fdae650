"""What the JavaScript/TypeScript scan reports, and what a resolved reference means.

The capability names, the tables they are judged by (the frameworks' globals, the builtins,
the path prefixes of the global object and of modules that are capabilities, the report's
keys and the frameworks' tell-tale strings, Node's own modules) and the functions that turn
a reference into a path and a write into a capability (:func:`_module_path`,
:func:`_member`, :func:`_normal`, :func:`_written`). Data and pure functions only: the
scan's classes (:mod:`swe_forge.ecosystems.js.scan` and its ``scan_*`` parts) read them.
"""

from __future__ import annotations

import re

from swe_forge.ecosystems.js.scan_nodes import _MAX_SEGMENTS

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
#: Streams on a descriptor or a socket (``new net.Socket({fd: 1})``, ``new tty.WriteStream(1)``):
#: the test process's own output written past ``process.stdout`` (a red team forged Node's
#: runner protocol on fd 1 so).
SOCKETS = "sockets"

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
        SOCKETS: ("module:net", "module:tls", "module:tty", "module:dgram", "module:http2"),
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
