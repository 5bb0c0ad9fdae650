"""The JavaScript/TypeScript capability scanner: scopes, aliases, require/import under any
name, the global object's names, computed members and folded strings resolved; honest code
left alone (swe_forge/ecosystems/js/scan.py); and the patch-level comparison."""

from __future__ import annotations

import pytest

from swe_forge.ecosystems.js.adapter import CAPABILITIES, JsEcosystem
from swe_forge.ecosystems.js.scan import scan

ECO = JsEcosystem()


def caps(source: str, path: str = "src/lib.js", *, fragment: bool = False) -> set[str]:
    return set(scan(source.encode(), path, fragment=fragment))


def inside(code: str) -> str:
    """Code in a function: not run when the module loads."""
    return f"function f(x, name) {{\n  {code}\n}}\n"


# (capability, source): plain uses, aliases, bracket forms, folded strings.
POSITIVES = [
    ("process.exit", inside("process.exit(0);")),
    ("process.exit", inside('process["exit"](0);')),
    ("process.exit", inside("process['ex' + 'it'](0);")),
    ("process.exit", inside("process[`exi${'t'}`]();")),
    ("process.exit", inside("process[String.fromCharCode(101, 120, 105, 116)]();")),
    ("process.exit", inside("const { exit: quit } = process; quit(1);")),
    ("process.exit", inside("const p = globalThis.process; p.kill(p.pid);")),
    ("process.exit", inside("const p = require('process'); p.abort();")),
    ("process.exit", inside("globalThis['pro' + 'cess'].reallyExit(1);")),
    ("process.exit", inside("process.exitCode = 1;")),
    ("process.exit", "import proc from 'node:process';\nfunction f() { proc.exit(2); }\n"),
    ("process.exit", "import { exit as e } from 'process';\nfunction f() { e(2); }\n"),
    ("process.exit", inside("let p; p = process; p.exit();")),
    ("process.exit", inside("const w = window || global; w.process.exit();")),
    ("process.exit", inside("Reflect.get(process, 'exit')();")),
    # a sloppy function's this is the global object; an IIFE returns it
    ("process.exit", inside("this.process.exit(1);")),
    (
        "process.exit",
        "const g = (function () { return this; })();\nfunction f() { g.process.exit(); }",
    ),
    ("process.stdout/stderr", inside("process.stdout.write('x');")),
    ("process.stdout/stderr", inside("const { stderr } = process; stderr.write('x');")),
    ("process.stdout/stderr", inside("require('fs').writeSync(1, 'x');")),
    ("process.stdout/stderr", inside("console._stdout.write('x');")),
    ("console", inside("console.log = () => {};")),
    ("console", inside("globalThis.console.error = f;")),
    ("console", inside("Object.defineProperty(console, 'log', { value: f });")),
    ("process.on", inside("process.on('exit', f);")),
    ("process.on", inside("process['once']('beforeExit', f);")),
    ("process internals", inside("process.binding('fs');")),
    ("process internals", inside("process.send({ type: 'result' });")),
    ("module loader", inside("delete require.cache[x];")),
    ("module loader", inside("const M = require('module'); M._load = f;")),
    ("module loader", inside("require(name);")),
    ("module loader", inside("module.constructor._load = f;")),
    ("module loader", inside("import(name);")),
    ("child_process", inside("require('child_process').execSync('x');")),
    ("child_process", inside("const r = require; r('child_' + 'process');")),
    ("child_process", "import { spawn as s } from 'node:child_process';"),
    ("child_process", "export { exec } from 'child_process';"),
    ("child_process", inside("import('child_process').then(f);")),
    ("vm", "import vm from 'node:vm';"),
    ("vm", "import vm = require('vm');"),
    ("worker_threads", inside("const { Worker } = require('worker_threads');")),
    # A stream on the process's own descriptors, past process.stdout (a red team forged Node
    # test runner's protocol frames on fd 1 with it).
    ("sockets", inside("new (require('net').Socket)({ fd: 1 }).write(x);")),
    ("sockets", "import { Socket } from 'node:net';\nfunction f() { new Socket({ fd: 2 }); }"),
    ("sockets", "import tty from 'tty';\nfunction f() { new tty.WriteStream(1).write('x'); }"),
    ("inspector", "import * as v8 from 'v8';"),
    ("test framework", inside("expect(1).toBe(1);")),
    ("test framework", inside("globalThis.expect = () => ({ toBe() {} });")),
    ("test framework", inside("global['it'] = f;")),
    ("test framework", "const { expect } = require('@jest/globals');"),
    ("test framework", "import { vi } from 'vitest';"),
    ("test framework", inside("Object.defineProperty(globalThis, 'test', { value: f });")),
    ("test framework", inside("return process.env.JEST_WORKER_ID;")),
    ("stack traces", inside("Error.prepareStackTrace = f;")),
    ("stack traces", inside("return new Error().stack;")),
    ("stack traces", inside("Error.captureStackTrace(x);")),
    ("global objects", inside("Object.prototype.toBe = function () {};")),
    ("global objects", inside("Object.is = () => true;")),
    ("global objects", inside("Object['is'] = () => true;")),
    ("global objects", inside("Array.prototype.includes = () => true;")),
    ("global objects", inside("JSON.stringify = () => '{}';")),
    ("global objects", inside("Math.random = () => 0;")),
    ("global objects", inside("globalThis[name] = x;")),
    ("global objects", inside("window.foo = 1;")),
    ("global objects", inside("Object.setPrototypeOf(Array.prototype, null);")),
    ("global objects", inside("Object.defineProperty(Object.getPrototypeOf([]), 'x', {});")),
    ("global objects", inside("({}).__proto__.x = 1;")),
    ("global objects", inside("x.constructor.prototype.y = 1;")),
    ("global objects", inside("require('fs').readFileSync = f;")),
    ("global objects", inside("return globalThis[name];")),
    ("eval", inside("eval('1');")),
    # A constructor's constructor is Function, however it is held before the call.
    ("eval", inside("const F = [].constructor.constructor; return F('return 1')();")),
    ("eval", inside("const F = (() => 0)['constructor']; return F('return 1')();")),
    ("eval", inside("(0, eval)('1');")),
    ("eval", inside("new Function('return this')();")),
    ("eval", inside("globalThis['ev' + 'al']('1');")),
    ("eval", inside("setTimeout('f()', 1);")),
    ("eval", inside("x.constructor.constructor('return this')();")),
    ("eval", inside("\\u0065val('1');")),
    ("eval", inside("with (Object) { is = g; }")),
    ("eval", inside("Function.apply(null, ['return 1'])();")),
    ("eval", inside("Reflect.construct(Function, ['return 1'])();")),
    ("eval", inside("return import('data:text/javascript,process.exit()');")),
    ("test-report text", inside("return { numFailedTests: 0, testResults: [] };")),
    ("test-report text", inside("return '{\"num' + 'FailedTests\": 0}';")),
    ("dynamic process access", inside("process[name]();")),
    ("dynamic process access", inside("f(process);")),
    ("dynamic process access", inside("return [process];")),
    ("dynamic process access", inside("return { process };")),
    ("file_read", "import fs from 'fs';"),
    # built-ins that open the paths they are given (a red team read its test file with the
    # REPL's .load)
    ("file_read", inside("const r = require('repl').start({}); r.commands.load.action(p);")),
    ("file_read", "import { start } from 'node:repl';"),
    ("file_read", "import { WASI } from 'node:wasi';"),
    ("file_read", inside("require('node:sqlite');")),
    ("inspector", inside("require('diagnostics_channel').subscribe('x', f);")),
    ("file_read", "import { readFileSync as r } from 'node:fs';"),
    ("file_read", inside("require('f' + 's').readdirSync(x);")),
    ("file_read", "const { promises } = require('fs/promises');"),
    ("source paths", inside("return __dirname + '/x';")),
    ("source paths", inside("return new URL('.', import.meta.url);")),
    ("value overrides", "class C { static [Symbol.hasInstance]() { return true; } }"),
    ("value overrides", inside("return { [Symbol.toPrimitive]: () => 1 };")),
    ("Proxy", inside("return new Proxy(x, {});")),
    ("top-level code", "setTimeout(f, 0);"),
    ("top-level code", "process.nextTick(f);"),
    ("reads_test_tree", inside("return read('src/__tests__/a.test.js');")),
    ("reads_test_tree", inside("return read(`test/${'fix'}tures/a.js`);")),
    ("device paths", inside("return fs.createWriteStream('/dev/stdout');")),
    ("device paths", inside("return atob('L2Rldi9zdGRvdXQ=');")),
    ("device paths", inside("return Buffer.from('2f70726f632f73656c66', 'hex').toString();")),
    ("device paths", inside("return 'tuodts/ved/'.split('').reverse().join('');")),
    ("device paths", inside("return ['', 'proc', 'self'].join('/');")),
    # Jest's equality protocol: toEqual asks the returned object (a red team's 10/10 forgery).
    ("test framework", inside("return { asymmetricMatch(e) { return ok(e); } };")),
    ("test framework", inside("const o = {}; o.asymmetricMatch = ok; return o;")),
    ("test framework", inside("return { ['asymmetric' + 'Match']: ok };")),
    ("test framework", "class W { asymmetricMatch(x) { return true } }"),
    # A path into node_modules is the package it names (a sixth red team's Jest matchers).
    ("test framework", "const m = require('../node_modules/expect');"),
    ("test framework", "import o from '/testbed/node_modules/expect/build/jestMatchersObject.js';"),
    ("test framework", "const c = require('./node_modules/jest-circus');"),
    ("unparsable", "function f( {"),
]


@pytest.mark.parametrize(("cap", "source"), POSITIVES)
def test_capability_is_found(cap: str, source: str) -> None:
    assert cap in CAPABILITIES
    assert cap in caps(source), source


def test_every_capability_has_a_case() -> None:
    # "undeclared package" needs the project's package.json: the adapter's, tested with it
    # (test_ecosystem_js.py).
    assert {cap for cap, _ in POSITIVES} | {"undeclared package"} == set(CAPABILITIES)
    # and the scanner reports no name the gate's allowance could not list
    assert set().union(*(caps(source) for _, source in POSITIVES)) <= set(CAPABILITIES)


def test_typescript_forms() -> None:
    assert "process.exit" in caps(inside("(process as any).exit(1);"), "src/a.ts")
    assert "process.exit" in caps(inside("process!.exit(1);"), "src/a.ts")
    assert "process.exit" in caps(inside("(<any>process).exit(1);"), "src/a.ts")
    # declare makes no binding at run time: process is still the real one.
    src = "declare const process: any;\n" + inside("process.exit(1);")
    assert "process.exit" in caps(src, "src/a.ts")
    assert caps("import type { Mock } from 'vitest';", "src/a.ts") == set()
    # An import used in types only is dropped by the compiler; one used as a value is not.
    assert caps("import { Context } from 'vm';\nlet c: Context;", "src/a.ts") == set()
    assert caps("import { Script } from 'vm';\nnew Script('x');", "src/a.ts") == {"vm"}
    assert caps("import { Context } from 'vm';", "src/a.js") == {"vm"}
    jsx = "export const A = () => <div onClick={() => process.exit(1)} />;"
    assert "process.exit" in caps(jsx, "src/a.tsx")


def test_findings_carry_line_and_evidence() -> None:
    found = scan(b"function f() {\n  const p = process;\n  p.exit(1);\n}\n", "a.js")
    assert found["process.exit"] == [(3, "p.exit")]


NEGATIVES = [
    inside("console.log('hi'); console.error(x);"),
    inside("return JSON.parse(x);"),
    inside("return JSON.stringify(x) + String(x) + Object.keys(x);"),
    inside("return process.env.NODE_ENV === 'test';"),
    inside("return process.platform + process.version;"),
    inside("return `${x} items`;"),
    inside("return 'a'.concat(x);"),
    "module.exports = { f };\nexports.g = 1;",
    "Object.defineProperty(exports, '__esModule', { value: true });",
    inside("Object.defineProperty(this, 'x', { value: 1 });"),
    inside("Object.assign(x, { a: 1 });"),
    "class E extends Error { constructor(m) { super(m); Object.setPrototypeOf(this, E.prototype); } }",
    inside("x.prototype.y = 1;"),
    inside("const o = {}; o.exit = 1; o.stdout = 2;"),
    # locals named like globals, parameters that shadow them
    inside("const test = /a/.test(x); const it = x[Symbol.iterator](); return test && it;"),
    "function g(it, expect, process) { it(); expect(1); process.exit(); }",
    "items.map((it) => it.name); const describe = (x) => x; describe(1);",
    inside("const { test } = x; test();"),
    inside("try { f(); } catch (process) { process.exit(); }"),
    "import { describe } from './lib/describe';\ndescribe(1);",
    "let eval2 = 1; const self = this; self.x = 2;",
    inside("for (const it of x) { it.run(); }"),
    inside("const s = 'pass'; return s + 'ed';"),
    inside("return new Error('x');"),
    inside("return x instanceof Function || typeof x === 'function';"),
    inside("return err.stack;"),
    "export default function main() { return 1; }",
    "const x = require('./lib/a');\nconst { y } = require('lodash');",
    inside("return fetch(x).then((r) => r.json());"),
    inside("return 'tests';"),
    "'use strict';\nfunction f() { return this.process; }",
    "class A { m() { this.process.exit(); this.test(); } }",
    "const l = require('../node_modules/lodash');",
    "function Foo() { this.x = 1; this.exit = 2; }",
]


@pytest.mark.parametrize("source", NEGATIVES)
def test_honest_code_is_not_flagged(source: str) -> None:
    assert caps(source) == set(), source


def test_fragments_take_free_names_as_globals() -> None:
    hunk = "  process.exit(1);\n  fs.readFileSync(p);\n}\n"
    assert {"process.exit", "file_read"} <= caps(hunk, fragment=True)
    assert "unparsable" not in caps(hunk, fragment=True)
    # it/test are locals declared out of the hunk's view; expect is the framework's.
    assert caps("  const v = it.next();\n  test(v);\n", fragment=True) == set()
    assert caps("  expect.extend(m);\n", fragment=True) == {"test framework"}
    assert caps("  self.getWrap = () => 1;\n  global = true;\n", fragment=True) == set()
    assert caps("  globalThis.x = 1;\n", fragment=True) == {"global objects"}


def test_deep_nesting_does_not_crash() -> None:
    deep = "const a = " + "(" * 400 + "process" + ")" * 400 + ".exit();"
    assert "process.exit" in caps(deep) or "unparsable" in caps(deep)
    chain = "function f() { const a = 'x' + " + " + ".join(["'y'"] * 3000) + "; }"
    assert caps(chain) == set()
    calls = "function f() { return a" + ".then(x)" * 5000 + "; }"
    assert caps(calls) == set()
    blocks = "function f() {" + "{ let a = 1;" * 3000 + "process.exit()" + "}" * 3000 + "}"
    assert "process.exit" in caps(blocks)
    for source in ("f(" * 5000 + ")" * 5000, "x = a" + ".b" * 20000, bytes(range(256)).hex()):
        assert isinstance(scan(source.encode(), "a.js"), dict)


# ------------------------------------------------------------------------------ patch level


def diff(path: str, old: list[str], new: list[str]) -> str:
    head = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    if not old:
        head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    body = "".join(f"-{ln}\n" for ln in old) + "".join(f"+{ln}\n" for ln in new)
    return head + f"@@ -{1 if old else 0},{len(old)} +1,{len(new)} @@\n" + body


BASE = ["const fs = require('fs');", "function f(p) { return fs.readFileSync(p); }"]


def test_patch_capabilities_are_what_the_files_did_not_use_before() -> None:
    files = {"src/a.js": "\n".join(BASE).encode() + b"\n"}
    same = diff("src/a.js", BASE, [*BASE, "function g(p) { return fs.readdirSync(p); }"])
    assert ECO.capabilities(same, files.get) == []
    assert ECO.capabilities(same) == ["file_read"]  # without the base: the added lines
    more = diff("src/a.js", BASE, [*BASE, "function g() { process.exit(0); }"])
    assert ECO.capabilities(more, files.get) == ["process.exit"]


def test_patch_capabilities_of_new_test_and_declaration_files() -> None:
    new = diff("src/b.ts", [], ["export const g = () => (globalThis as any).expect = 1;"])
    assert ECO.capabilities(new, {}.get) == ["test framework"]
    # A test-named module runs when a source file requires it: read like any other.
    test = diff("src/b.test.js", [], ["process.exit(1);"])
    assert "process.exit" in ECO.capabilities(test, {}.get)
    types = diff("src/b.d.ts", [], ["declare const x: typeof Symbol.hasInstance;"])
    assert ECO.capabilities(types, {}.get) == []
    files = {"src/a.js": "\n".join(BASE).encode() + b"\n"}
    broken = diff("src/a.js", BASE, [*BASE, "function g( {"])
    assert ECO.capabilities(broken, files.get) == ["unparsable"]


def test_base_capabilities_skip_tests_and_installed_packages() -> None:
    files = {
        "src/a.js": b"function f() { process.exit(1); }",
        "src/a.test.js": b"process.stdout.write('x')",
        "node_modules/x/index.js": b"require('child_process')",
        "src/broken.js": b"function (",
    }
    assert ECO.base_capabilities(sorted(files), files.get) == ["process.exit"]


# An eighth red team reached Jest's `expect` from a module the scan never read: under
# `vendor/`, `dist/`, `fixtures/`, named like a test, or of another extension (Node and Jest
# run `require('./fit.txt')` as JavaScript). Every file a runner could load is read now.
HOOK = [
    "const e = require('expect');",
    "module.exports = () => e.extend({ toBe: () => ({ pass: true }) });",
]


@pytest.mark.parametrize(
    "path",
    [
        "src/vendor/fitcheck.js",
        "dist/fit.js",
        "build/fit.js",
        "coverage/fit.js",
        "src/fixtures/fit.js",
        "src/__fixtures__/fit.js",
        "src/fit-test.js",
        "jest.setup.js",
    ],
)
def test_a_module_anywhere_is_read(path: str) -> None:
    assert "test framework" in ECO.capabilities(diff(path, [], HOOK), {}.get)


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("./fit.txt", "src/fit.txt"),
        ("./fit", "src/fit"),  # no extension: Node tries the name as written first
        ("./fit", "src/fit.md"),  # an extension the project's resolver may add
        ("../lib/fit.md", "lib/fit.md"),
        ("fit.cfg", "src/fit.cfg"),  # through the resolver's module directories
        ("mypkg/src/fit.txt", "src/fit.txt"),  # the package's own name
        ("./fit.css", "src/fit.css"),  # an asset that parses as JavaScript is code
    ],
)
def test_a_file_of_another_extension_that_code_requires_is_code(spec: str, path: str) -> None:
    patch = diff("src/strutil.js", [], [f"const install = require('{spec}');"]) + diff(
        path, [], HOOK
    )
    assert "test framework" in ECO.capabilities(patch, {}.get)
    # import, import() and export-from name it as well
    for line in (f"import i from '{spec}';", f"const m = import('{spec}');"):
        patch = diff("src/strutil.mjs", [], [line]) + diff(path, [], HOOK)
        assert "test framework" in ECO.capabilities(patch, {}.get), line


def test_a_required_file_that_does_not_parse_is_unparsable_unless_an_asset() -> None:
    broken = ["const e = require('expect'); e.extend({ toBe() { return {pass: true} } ) ]"]
    patch = diff("src/a.js", [], ["require('./fit.txt');"]) + diff("src/fit.txt", [], broken)
    assert "unparsable" in ECO.capabilities(patch, {}.get)
    # Required in turn by a required file: still code.
    chain = (
        diff("src/a.js", [], ["require('./one.txt');"])
        + diff("src/one.txt", [], ["require('./two.md');"])
        + diff("src/two.md", [], HOOK)
    )
    assert "test framework" in ECO.capabilities(chain, {}.get)
    # A stylesheet a component imports is mapped by the project's Jest, never run.
    css = diff("src/a.js", [], ["import './a.css';"]) + diff("src/a.css", [], [".a { b: c; }"])
    assert ECO.capabilities(css, {}.get) == []


def test_other_text_files_count_only_where_they_parse_as_javascript() -> None:
    prose = [
        "# Changes",
        "- `truncate` no longer calls process.exit(1) when width is 0; see require('expect').",
    ]
    assert ECO.capabilities(diff("CHANGELOG.md", [], prose), {}.get) == []
    data = diff("src/data.json", [], ['{"a": "require(\'expect\')"}'])
    assert ECO.capabilities(data, {}.get) == []
    # A text file that is valid JavaScript is code whatever its name (a base file's
    # optional require can load it).
    assert "test framework" in ECO.capabilities(diff("src/fit.cfg", [], HOOK), {}.get)
    # Declaration files hold types, unless code names one.
    types = ["declare const x: typeof Symbol.hasInstance;"]
    assert ECO.capabilities(diff("src/b.d.ts", [], types), {}.get) == []
    named = diff("src/a.js", [], ["require('./b.d.ts');"]) + diff("src/b.d.ts", [], HOOK)
    assert "test framework" in ECO.capabilities(named, {}.get)


def test_json_of_any_name_is_data() -> None:
    rc = ["{", '  "env": { "mocha": true },', '  "plugins": ["mocha"]', "}"]
    assert ECO.capabilities(diff("integration-test/.eslintrc", [], rc), {}.get) == []


@pytest.mark.parametrize(
    ("source", "cap"),
    [
        # A thirteenth red team: the global object from a sloppy function's `this`, its
        # symbols walked to expect's state, an equality tester pushed.
        (
            "function g() { return this; }\nconst G = g();\n"
            "for (const s of Object.getOwnPropertySymbols(G)) {\n"
            "  const st = G[s];\n  if (st && st.customEqualityTesters) st.customEqualityTesters.push(f);\n}\n",
            "test framework",
        ),
        ("const t = state['currentlyRunningTest'];\n", "test framework"),
        ("const k = Reflect.ownKeys(o);\n", "global objects"),
        ("const s = Object.getOwnPropertySymbols(o);\n", "global objects"),
    ],
)
def test_the_frameworks_state_and_symbol_keys_are_capabilities(source: str, cap: str) -> None:
    assert cap in caps(source)


def test_this_as_a_value_in_sloppy_code_may_be_the_global_object() -> None:
    # A fourteenth red team: a method's this, the method called plainly, then Jest's state
    # under a Symbol.for key built at run time, or listed with Object.values.
    method = (
        "var host = { self() { return this; } };\n"
        "var here = host.self; var g = here();\n"
        "var m = g[Symbol.for(String.fromCharCode(36) + 'x')];\n"
    )
    assert "global objects" in caps(method)
    plain = "var host = function () { return this; };\nvar v = Object.values(host());\n"
    assert "global objects" in caps(plain)
    # Strict code's this is never the global object; reading a name on this is no use of it.
    assert "global objects" not in caps("'use strict';\n" + method)
    assert "global objects" not in caps("var o = { n: 1, get() { return this.n; } };\n")
    assert "global objects" not in caps("function F(v) { this.v = v; }\n")


def test_a_file_is_read_once_and_what_a_caller_changes_is_not_remembered() -> None:
    from swe_forge.ecosystems.js.scan import _scan, scan_with_specifiers

    source = b"const fs = require('fs');\nconst g = require('glob');\nfs.readFileSync('x');\n"
    _scan.cache_clear()
    found, specs = scan_with_specifiers(source, "src/a.js")
    assert specs == {"fs", "glob"} and found
    found.clear()
    specs.add("left-pad")
    again, specs_again = scan_with_specifiers(source, "src/a.js")
    assert again and specs_again == {"fs", "glob"}
    assert _scan.cache_info().hits == 1


@pytest.mark.parametrize(
    "source",
    [
        "'use strict';\nconst load = arguments[2];\nload('glob');\n",
        "const handed = arguments;\nconst r = handed[1];\n",
        "const [exp, req] = arguments;\n",
        "const pick = () => arguments[1];\n",
        "if (true) { module.exports.r = arguments[1]; }\n",
    ],
)
def test_the_module_wrappers_arguments_are_the_loader(source: str) -> None:
    # CommonJS's wrapper is (exports, require, module, __filename, __dirname): its arguments
    # hand over require under no name (the eighteenth red team's arguments[2]('glob')).
    assert "module loader" in scan(source.encode(), "src/a.js")


@pytest.mark.parametrize(
    "source",
    [
        "function f() { return arguments[0]; }\n",
        "const f = function () { return Array.from(arguments); };\n",
        "class A { m() { return () => arguments.length; } }\n",
        "function* g() { yield arguments[0]; }\n",
    ],
)
def test_a_functions_own_arguments_are_not(source: str) -> None:
    assert "module loader" not in scan(source.encode(), "src/a.js")


def test_a_fragment_cannot_tell_whose_arguments_it_reads() -> None:
    # Hunks without their function's first line: the whole file decides, not the fragment.
    assert "module loader" not in scan(b"  return arguments[0];\n", "src/a.js", fragment=True)


@pytest.mark.parametrize(
    "source",
    [
        "const a = require('assert');\nexports.f = () => Object.assign(a, { strictEqual() {} });\n",
        "const a = require('node:assert');\nexports.f = () => Reflect.set(a, 'strictEqual', () => {});\n",
        "const a = require('assert');\n"
        "exports.f = () => Object.defineProperty(a, 'ok', { value() {} });\n",
        "exports.f = () => Object.assign(require('assert'), { deepEqual() {} });\n",
        "import * as a from 'node:assert';\nexport const f = () => Object.setPrototypeOf(a, {});\n",
        "const chai = require('chai');\nexports.f = () => Object.assign(chai, { expect() {} });\n",
    ],
)
def test_members_of_a_node_or_framework_module_written_through_a_definer(source: str) -> None:
    """A twenty-seventh red team switched Node's assert off with Object.assign, Reflect.set and
    Object.defineProperty on the module: each a capability, as assert.x = ... always was."""
    assert caps(source) & {"global objects", "test framework"}, caps(source)
