"""The JavaScript adapter without Docker: report parsing (incl. forged reports), guards,
capabilities, scope, toolchain choice, detection, runner commands and canaries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from swe_forge.ecosystems import detect_ecosystem, ecosystem_named, for_runner
from swe_forge.ecosystems.base import Reader
from swe_forge.ecosystems.js.adapter import JsEcosystem, JsRunner, choose_node, detect_framework
from swe_forge.ecosystems.js.toolchain import (
    NODE_BINARIES,
    engines_floor,
    node_for_date,
    official_node,
)
from swe_forge.ecosystems.scanning import capability_violations
from swe_forge.errors import BuildError

HARNESS = Path(__file__).resolve().parents[2] / "swe_forge" / "gates" / "harness"
sys.path.insert(0, str(HARNESS))
import swe_forge_polyglot as polyglot  # noqa: E402

ECO = JsEcosystem()


def jest_report(*suites: tuple[str, str, list[tuple[list[str], str, str]]]) -> dict:
    return {
        "numFailedTests": 0,
        "numTotalTests": sum(len(s[2]) for s in suites),
        "success": True,
        "testResults": [
            {
                "name": "/testbed/" + name,
                "status": status,
                "message": "Cannot find module './nope'" if not tests else "",
                "assertionResults": [
                    {
                        "ancestorTitles": anc,
                        "title": title,
                        "fullName": " ".join([*anc, title]),
                        "status": outcome,
                        "failureMessages": ["boom"] if outcome == "failed" else [],
                    }
                    for anc, title, outcome in tests
                ],
            }
            for name, status, tests in suites
        ],
    }


SPEC = {"format": "jest-json", "files": ["src/a.test.js", "src/b.test.js"], "root": "/testbed/"}


def test_jest_report_with_noise_around_it() -> None:
    doc = jest_report(
        (
            "src/a.test.js",
            "failed",
            [(["outer", "inner"], "works", "passed"), ([], "breaks", "failed")],
        ),
        ("src/b.test.js", "passed", [(["b"], "skipped one", "pending")]),
    )
    data = b"some log line {not json}\n" + json.dumps(doc).encode() + b"\ntrailing text"
    ev = polyglot.parse(SPEC, data)
    assert ev["tests"] == {
        "src/a.test.js::outer > inner > works": "passed",
        "src/a.test.js::breaks": "failed",
        "src/b.test.js::b > skipped one": "skipped",
    }
    assert ev["connected"] and ev["ended"] and not ev["tamper"]
    assert ev["exitstatus"] == 1 and ev["collect_errors"] == []
    assert ev["messages"]["src/a.test.js::breaks"] == "boom"


def test_jest_file_that_does_not_load_is_a_collection_error() -> None:
    doc = jest_report(("src/a.test.js", "failed", []), ("src/b.test.js", "passed", []))
    ev = polyglot.parse(SPEC, json.dumps(doc).encode())
    assert ev["collect_errors"] == ["src/a.test.js"] and ev["exitstatus"] == 1


def test_expected_file_missing_from_report() -> None:
    doc = jest_report(("src/a.test.js", "passed", [([], "ok", "passed")]))
    ev = polyglot.parse(SPEC, json.dumps(doc).encode())
    assert ev["collect_errors"] == ["src/b.test.js"] and not ev["ended"]


def test_forged_report_beside_the_real_one_is_tamper() -> None:
    real = jest_report(
        ("src/a.test.js", "failed", [([], "fix", "failed")]),
        ("src/b.test.js", "passed", [([], "ok", "passed")]),
    )
    forged = jest_report(("src/a.test.js", "passed", [([], "fix", "passed")]))
    data = json.dumps(forged).encode() + b"\n" + json.dumps(real).encode()
    ev = polyglot.parse(SPEC, data)
    assert any("reported twice" in t for t in ev["tamper"])
    assert any("2 test reports" in t for t in ev["tamper"])
    assert not ev["ended"]


def test_two_tests_of_one_name_in_one_report_are_numbered() -> None:
    doc = jest_report(
        ("src/a.test.js", "passed", [([], "same", "passed"), ([], "same", "passed")]),
        ("src/b.test.js", "passed", []),
    )
    ev = polyglot.parse(SPEC, json.dumps(doc).encode())
    assert set(ev["tests"]) == {"src/a.test.js::same", "src/a.test.js::same [2]"}
    assert not ev["tamper"]


def test_no_report_at_all() -> None:
    ev = polyglot.parse(SPEC, b"SyntaxError: Unexpected token\n")
    assert not ev["connected"] and not ev["ended"] and ev["tests"] == {}


FAKE_MOCHA = r"""
const { EventEmitter } = require("events");
const Reporter = require(process.argv[2]);
const runner = new EventEmitter();
new Reporter(runner);
const root = { root: true, title: "", file: undefined };
const suite = { title: "clock", parent: root, file: "/testbed/test/clock-test.js" };
const other = { title: "other", parent: root, file: "/testbed/test/other-test.js" };
function test(title, parent, state) {
  return { title, parent, state, duration: 1, currentRetry: () => 0,
           fullTitle: () => parent.title + " " + title };
}
const a = test("ticks", suite, "passed");
const b = test("breaks", suite, "failed");
const c = test("later", other, undefined);
c.pending = true;
const hook = test('"before all" hook', other, "failed");
runner.emit("start");
runner.emit("suite", root);
runner.emit("suite", suite);
runner.emit("pass", a); runner.emit("test end", a);
runner.emit("fail", b, new Error("expected 1 to equal 2")); runner.emit("test end", b);
runner.emit("suite", other);
runner.emit("fail", hook, new Error("setup failed"));
runner.emit("pending", c); runner.emit("test end", c);
delete global.Date;  // a fake-timer suite that leaves no usable Date behind
JSON.stringify = () => "{}";
runner.emit("end");
"""


def test_mocha_reporter_gives_every_test_its_file(tmp_path: Path) -> None:
    # Mocha's own JSON reporter names no file before Mocha 8: sinonjs/fake-timers at Mocha 5
    # and 7 reported every test as "::<title>" and each test file as not collected.
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    script = tmp_path / "fake-mocha.js"
    script.write_text(FAKE_MOCHA)
    reporter = str(HARNESS / "swe_forge_mocha_reporter.js")
    out = subprocess.run(
        [node, str(script), reporter], capture_output=True, check=True, timeout=60
    ).stdout
    spec = {"format": "mocha-json", "files": ["test/clock-test.js", "test/other-test.js"]}
    ev = polyglot.parse(spec, out)
    assert ev["tests"] == {
        "test/clock-test.js::clock ticks": "passed",
        "test/clock-test.js::clock breaks": "failed",
        "test/other-test.js::other later": "skipped",
    }
    assert ev["collect_errors"] == ["test/other-test.js"]  # its "before all" hook failed
    assert ev["messages"]["test/clock-test.js::clock breaks"] == "expected 1 to equal 2"
    assert ev["tamper"] == [] and ev["ended"]
    argv = JsRunner("mocha@5.1.0").argv(["test/clock-test.js"], order_seed=1)
    assert argv[argv.index("--reporter") + 1] == "/swe-forge/bin/swe_forge_mocha_reporter.js"


def test_mocha_report() -> None:
    doc = {
        "stats": {"tests": 3, "passes": 1, "failures": 1, "pending": 1},
        "tests": [
            {"title": "a", "fullTitle": "suite a", "file": "/testbed/test/x.spec.js", "err": {}},
            {
                "title": "b",
                "fullTitle": "suite b",
                "file": "/testbed/test/x.spec.js",
                "err": {"message": "expected 1 to equal 2"},
            },
            {"title": "c", "fullTitle": "suite c", "file": "/testbed/test/x.spec.js", "err": {}},
        ],
        "pending": [{"title": "c", "fullTitle": "suite c", "file": "/testbed/test/x.spec.js"}],
        "failures": [],
        "passes": [],
    }
    spec = {"format": "mocha-json", "files": ["test/x.spec.js"]}
    ev = polyglot.parse(spec, b"console output\n" + json.dumps(doc, indent=2).encode())
    assert ev["tests"] == {
        "test/x.spec.js::suite a": "passed",
        "test/x.spec.js::suite b": "failed",
        "test/x.spec.js::suite c": "skipped",
    }
    assert ev["messages"]["test/x.spec.js::suite b"] == "expected 1 to equal 2"
    assert ev["ended"] and ev["exitstatus"] == 1


def test_vitest_uses_the_jest_shape() -> None:
    doc = jest_report(("src/a.test.ts", "passed", [(["d"], "t", "passed")]))
    spec = {"format": "vitest-json", "files": ["src/a.test.ts"]}
    assert polyglot.parse(spec, json.dumps(doc).encode())["tests"] == {
        "src/a.test.ts::d > t": "passed"
    }


# ---------------------------------------------------------------------------------- canaries


def test_run_job_selects_the_tests_and_the_calibration_copies() -> None:
    import random
    import re
    from types import SimpleNamespace
    from typing import Any

    task: Any = SimpleNamespace(
        test_patch="",
        FAIL_TO_PASS=["src/a.test.js::t > fixed"],
        PASS_TO_PASS=["src/b.test.js::ok"],
        harness={"runner": "node-test", "module": "jest@29.7.0"},
    )
    extra = {"src/a.test.js::t > parse nested value": {"test": "src/a.test.js::t > fixed"}}
    job = ECO.run_job(
        task,
        "/p/test.patch",
        timeout=60,
        output_limit=1 << 20,
        extra=extra,
        rng=random.Random(1),
        test_timeout=5,
    )
    run = job["run"]
    assert run["canary_map"] == extra and run["report"]["files"] == [
        "src/a.test.js",
        "src/b.test.js",
    ]
    grep = run["argv"][run["argv"].index("-t") + 1]
    assert re.match(grep, "t fixed") and re.match(grep, "t parse nested value")
    assert re.match(grep, "ok") and not re.match(grep, "t fixed too")
    assert "--testTimeout=5000" in run["argv"]
    mocha = SimpleNamespace(**{**vars(task), "harness": {"module": "mocha@10.2.0"}})
    argv = ECO.run_job(mocha, "/p", timeout=60, output_limit=1, twins=[{}], test_timeout=2)["run"]
    assert argv["twins"] == [{}] and argv["argv"][argv["argv"].index("--timeout") + 1] == "2000"


# -------------------------------------------------------------------------------- guards


def _new(path: str, body: str = "x") -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1 @@\n+{body}\n"
    )


def _pkg(old: str, new: str) -> str:
    return (
        "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
        f"@@ -1,3 +1,3 @@\n {{\n-{old}\n+{new}\n }}\n"
    )


@pytest.mark.parametrize(
    "path",
    [
        "jest.config.js",
        "vitest.config.ts",
        "vite.config.mjs",
        ".mocharc.yml",
        "babel.config.js",
        ".babelrc",
        "tsconfig.json",
        "packages/x/tsconfig.build.json",
        "package-lock.json",
        "yarn.lock",
        ".npmrc",
        "node_modules/jest/index.js",
        "src/__mocks__/fs.js",
        "jest.setup.ts",
        "setupTests.js",
    ],
)
def test_runner_configuration_is_refused(path: str) -> None:
    found = ECO.patch_violations(_new(path), gold_patch="", read_base=None)
    assert [v["code"] for v in found] == ["runner_config"], path


def test_source_is_not_runner_configuration() -> None:
    assert ECO.patch_violations(_new("src/index.js"), gold_patch="", read_base=None) == []


def test_config_the_gold_patch_changes_is_allowed() -> None:
    patch = _new("tsconfig.json")
    assert ECO.patch_violations(patch, gold_patch=patch, read_base=None) == []


def test_package_json_lines_only_as_the_gold_patch_changes_them() -> None:
    script = _pkg('  "scripts": { "test": "jest" },', '  "scripts": { "test": "jest -t x" },')
    found = ECO.patch_violations(script, gold_patch="", read_base=None)
    assert found and "package.json" in found[0]["detail"]
    exports = _pkg('  "exports": "./a.js",', '  "exports": { ".": "./a.js", "./b": "./b.js" },')
    assert ECO.patch_violations(exports, gold_patch=exports, read_base=None) == []
    assert ECO.patch_violations(exports, gold_patch=script, read_base=None)


def _src(path: str, *lines: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,1 +1,{len(lines) + 1} @@\n x\n" + "".join(f"+{ln}\n" for ln in lines)
    )


@pytest.mark.parametrize(
    ("line", "cap"),
    [
        ("process.exit(0);", "process.exit"),
        ("process.stdout.write(x);", "process.stdout/stderr"),
        ("require('fs').writeSync(1, s);", "process.stdout/stderr"),
        ("console.log = () => {};", "console"),
        ("process.on('exit', f);", "process.on"),
        ("delete require.cache[k];", "module loader"),
        ("const M = require('module'); M._load = f;", "module loader"),
        ("require('child_process').execSync('x');", "child_process"),
        ("import vm from 'node:vm'; vm.runInThisContext(x);", "vm"),
        ("globalThis.expect = () => ({ toBe() {} });", "test framework"),
        ("global['it'] = f;", "test framework"),
        ("const { expect } = require('@jest/globals');", "test framework"),
        ("Error.prepareStackTrace = f;", "stack traces"),
        ("Object.prototype.toBe = function () {};", "global objects"),
        ("const r = { numFailedTests: 0, testResults: [] };", "test-report text"),
        ("new Function('return this')();", "eval"),
    ],
)
def test_capabilities(line: str, cap: str) -> None:
    assert cap in ECO.capabilities(_src("src/lib.ts", line))


def test_capabilities_ignore_tests_and_plain_code() -> None:
    assert "process.exit" in ECO.capabilities(_src("src/lib.test.js", "process.exit(1);"))
    assert ECO.capabilities(_src("src/lib.js", "return a + b;")) == []


def test_capabilities_the_base_uses_are_allowed() -> None:
    base = ECO.base_capabilities(
        ["src/a.js", "src/a.test.js", "node_modules/x/i.js"],
        lambda p: {
            "src/a.js": b"function f() { console.warn = g; }",
            "src/a.test.js": b"process.exit(1)",
        }.get(p, b"process.stdout"),
    )
    assert base == ["console"]
    candidate = _src("src/b.js", "function h() { console.log = f; process.exit(0); }")
    found = capability_violations(ECO.capabilities(candidate), base=base, gold=[])
    assert [v["code"] for v in found] == ["capability"] and "process.exit" in found[0]["detail"]
    # Calling console's methods is no capability at all; replacing them is.
    assert ECO.capabilities(_src("src/b.js", "console.log(1);")) == []


PACKAGE = (
    b'{"name": "strutil", "dependencies": {"lodash": "4"}, "peerDependencies": {"@x/y": "1"},'
    b' "devDependencies": {"@babel/core": "7", "jest": "29"}}'
)


def _tree(files: dict[str, bytes]) -> Reader:
    return lambda path: files.get(path)


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        # The seventeenth red team's oracle: the tooling's packages read and list the tests.
        ("const babel = require('@babel/core');", True),
        ("const glob = require('glob');", True),
        ("import g from 'glob/sync';", True),
        ("const _ = require('lodash');", False),
        ("const f = require('lodash/fp');", False),
        ("import { z } from '@x/y';", False),
        ("const own = require('strutil/package.json');", False),
        ("const p = require('path'); const u = require('node:util');", False),
        ("const a = require('./a');", False),
    ],
)
def test_a_package_the_project_does_not_declare_is_a_capability(line: str, flagged: bool) -> None:
    read = _tree({"package.json": PACKAGE, "src/lib.js": b"x\n"})
    caps = ECO.capabilities(_src("src/lib.js", line), read)
    assert ("undeclared package" in caps) is flagged, caps
    # Without the base's package.json nothing can be said.
    assert "undeclared package" not in ECO.capabilities(_src("src/lib.js", line), _tree({}))


def test_an_undeclared_package_the_base_already_requires_is_allowed() -> None:
    files = {"package.json": PACKAGE, "src/a.js": b"const g = require('glob');\n"}
    base = ECO.base_capabilities(sorted(files), _tree(files))
    assert "undeclared package" in base
    clean = {"package.json": PACKAGE, "src/a.js": b"const _ = require('lodash');\n"}
    assert "undeclared package" not in ECO.base_capabilities(sorted(clean), _tree(clean))
    # The nearest package.json decides (a workspace's own).
    nested = {
        "package.json": PACKAGE,
        "packages/p/package.json": b'{"name": "p", "dependencies": {"glob": "8"}}',
        "packages/p/index.js": b"const g = require('glob');\n",
    }
    assert "undeclared package" not in ECO.base_capabilities(sorted(nested), _tree(nested))


# -------------------------------------------------------------- scope, toolchain, detection


def test_scope_is_the_touched_test_files() -> None:
    scope = ECO.scope(_new("src/a.test.js") + _new("src/lib.js"))
    assert scope.covers("src/a.test.js::d > t") and not scope.covers("src/b.test.js::t")
    assert ECO.test_files(_new("src/__tests__/x.ts") + _new("src/x.d.ts")) == ["src/__tests__/x.ts"]


def test_node_by_date_and_engines() -> None:
    assert node_for_date("2023-05-01") == ("bookworm", "18.19")
    assert node_for_date("2025-09-01") == ("trixie", "20.19")
    assert choose_node("2024-01-01", ">=14") == ("bookworm", "18.19")
    assert choose_node("2024-01-01", ">=20.0.0") == ("trixie", "20.19")
    assert choose_node("2024-01-01", "^18.18.0 || ^20.9.0 || >=21.1.0")[0] == "bookworm"
    # Beyond Debian's Node: nodejs.org's build of the lowest pinned line that is enough
    # (commander.js asks for >=22.12.0), on the newest Debian release.
    assert choose_node("2024-01-01", ">=22.12.0") == ("trixie", "22.23.5")
    assert choose_node("2026-01-01", "^18 || >=23") == ("trixie", "20.19")
    assert choose_node("2026-01-01", ">=23") == ("trixie", "24.22.3")
    assert official_node("22.23.5") == NODE_BINARIES[22]
    assert official_node("20.19") is None
    with pytest.raises(BuildError, match="Node 27"):
        choose_node("2024-01-01", ">=27")
    assert engines_floor(">16") == 17 and engines_floor("<20") == 0 and engines_floor("") == 0


def _reader(files: dict[str, str]):
    return lambda p: files[p].encode() if p in files else None


def test_detection() -> None:
    jest = json.dumps({"devDependencies": {"jest": "^29"}})
    assert detect_ecosystem(_reader({"package.json": jest})) == "js"
    assert detect_ecosystem(_reader({"package.json": jest, "pyproject.toml": ""})) == "python"
    # A runner no adapter runs (ava here) is still JavaScript's: its build names what is
    # missing (tj/commander.js's node --test was read as Python and run with pytest).
    ava = json.dumps({"scripts": {"test": "ava"}, "devDependencies": {"ava": "^6"}})
    assert detect_ecosystem(_reader({"package.json": ava})) == "js"
    assert detect_ecosystem(_reader({"package.json": ava, "requirements.txt": ""})) == "python"
    node_test = json.dumps({"scripts": {"test": "node --test"}})
    assert detect_ecosystem(_reader({"package.json": node_test})) == "js"
    assert ecosystem_named("js").detect(_reader({"package.json": node_test}))
    assert detect_ecosystem(_reader({"package.json": jest, "go.mod": "module x\n"})) == "go"
    both = {"scripts": {"test": "vitest run"}, "devDependencies": {"jest": "1", "vitest": "1"}}
    assert detect_framework(both) == "vitest"
    assert detect_framework({"scripts": {"test": "mocha 'test/**/*.js'"}}) == "mocha"
    assert for_runner("node-test") is not None and ecosystem_named("js").name == "js"


def test_runner_commands() -> None:
    jest = JsRunner("jest@29.7.0").argv(["a.test.js"], order_seed=7)
    assert (
        "--json" in jest and "--seed=7" in jest and jest[-2:] == ["--runTestsByPath", "a.test.js"]
    )
    assert "--randomize" not in JsRunner("jest@27.5.1").argv(["a.test.js"], order_seed=7)
    # A project's coverage thresholds must not fail a run whose tests all passed.
    assert "--coverage=false" in jest
    vitest = JsRunner("vitest@1.6.0").argv(["a.test.ts"], order_seed=3)
    assert "--reporter=json" in vitest and "--sequence.seed=3" in vitest
    files = [f"t/{i}.spec.js" for i in range(8)]
    one = JsRunner("mocha@10.2.0").argv(files, order_seed=1)
    two = JsRunner("mocha@10.2.0").argv(files, order_seed=2)
    assert sorted(one[-8:]) == files and one[-8:] != two[-8:]
    # Mocha's in-process CLI is bin/_mocha in every release (sinonjs/fake-timers at mocha 5
    # and 7 has no bin/mocha.js), and mocha 5 refuses options it does not know (--no-color).
    for version in ("5.1.0", "7.0.1", "11.7.5"):
        argv = JsRunner(f"mocha@{version}").argv(files, order_seed=1)
        assert argv[:2] == ["node", "node_modules/mocha/bin/_mocha"]
        assert "--no-color" not in argv and "--exit" in argv
    spec = JsRunner("mocha@10.2.0").run_spec(files, order_seed=1, hash_seed=0)
    assert spec["report"]["format"] == "mocha-json" and spec["env"]["CI"] == "true"


# ------------------------------------------------------------ test directories, --config


def test_files_under_test_directories_are_test_modules() -> None:
    """A suite that names its files plainly under ``test/``/``tests/`` (Jest ``testMatch``
    ``**/tests/**``, Vitest ``include``, Mocha's ``test/``) is mined, its helpers never run."""
    from swe_forge.config import load_config
    from swe_forge.ecosystems.js.detect import is_js_test_file
    from swe_forge.git.repo import FileChange
    from swe_forge.mining.classify import PathClassifier
    from swe_forge.mining.split import SplitRejection, check_kinds

    for path in ("tests/doc/parse.ts", "packages/x/test/foo.ts", "test/lib/router.js"):
        assert is_js_test_file(path), path
    for path in (
        "tests/fixtures/a.js",
        "tests/_utils.ts",
        "test/setup.js",
        "test/helpers/server.js",
        "tests/index.ts",
        "test/jest.config.js",
        "tests/types.d.ts",
        "src/test.ts.txt",
        "src/parse.ts",
    ):
        assert not is_js_test_file(path), path

    def change(path: str) -> FileChange:
        return FileChange(
            status="M",
            old_path=path,
            new_path=path,
            old_mode=0o100644,
            new_mode=0o100644,
            old_blob="1" * 40,
            new_blob="2" * 40,
            is_binary=False,
            additions=1,
            deletions=1,
            patch=b"",
        )

    classifier = PathClassifier(load_config().classify)
    kinds = check_kinds([change("src/parse/parser.ts"), change("tests/doc/parse.ts")], classifier)
    assert not isinstance(kinds, SplitRejection)
    helper_only = check_kinds([change("src/a.ts"), change("tests/fixtures/x.js")], classifier)
    assert isinstance(helper_only, SplitRejection) and helper_only.reason.value == "no_test_module"
    patch = _new("tests/doc/parse.ts") + _new("tests/_helpers.ts") + _new("tests/fixtures/y.js")
    assert ECO.test_files(patch) == ["tests/doc/parse.ts"]


def test_runner_config_from_the_test_script() -> None:
    """The runner's ``--config``/``-c`` in the test script, through the scripts it runs; a
    path that is not a file of the repository is never taken."""
    from swe_forge.ecosystems.js.toolchain import runner_config

    read = _reader({"config/jest.config.js": "x", "vitest.config.ts": "x", ".mocharc.yml": "x"})

    def config(test: str, framework: str = "jest", **more: str) -> str:
        return runner_config({"scripts": {"test": test, **more}}, framework, read)

    assert config("jest --config config/jest.config.js") == "config/jest.config.js"
    assert config("jest --ci --config=./config/jest.config.js") == "config/jest.config.js"
    assert (
        config(
            "npm run lint && npm run unit", unit="cross-env TZ=UTC jest -c config/jest.config.js"
        )
        == "config/jest.config.js"
    )
    assert config("node --expose-gc node_modules/.bin/jest -c config/jest.config.js") == (
        "config/jest.config.js"
    )
    assert config("vitest run --config vitest.config.ts", "vitest") == "vitest.config.ts"
    assert config("mocha --config .mocharc.yml", "mocha") == ".mocharc.yml"
    for hostile in (
        "jest --config ../outside/jest.config.js",
        "jest --config /etc/jest.config.js",
        "jest --config $(touch /tmp/x)",
        "jest --config '{\"testMatch\": []}'",
        "jest --config missing.config.js",
        "jest --config",
        "mocha -c .mocharc.yml",
        "npm run test",
        "jest --config 'config/jest.config.js",
    ):
        assert config(hostile, "mocha" if "mocha" in hostile else "jest") == "", hostile


def test_jest_config_and_randomize_follow_the_cli() -> None:
    """``--config`` reaches every framework's command; ``--randomize`` only a jest-cli that
    takes it (29.5: 29.3.1 and 29.4.3 refuse it)."""
    import random
    from types import SimpleNamespace
    from typing import Any

    from swe_forge.records import ImageRecord

    for version, randomized in (("29.3.1", False), ("29.4.3", False), ("29.5.0", True)):
        argv = JsRunner(f"jest@{version}").argv(["a.test.js"], order_seed=7)
        assert ("--randomize" in argv) is randomized and ("--seed=7" in argv) is randomized
    rec = ImageRecord("x__y-1", "x/y", "0" * 40)
    rec.project_name = "jest@29.3.1"
    rec.recipe = {"harness": {"config": "config/jest.config.js"}}
    argv = ECO.runner_for(rec).argv(["tests/a.ts"], order_seed=1)
    assert argv[2:4] == ["--config", "config/jest.config.js"] and "--randomize" not in argv
    assert "--config" not in JsRunner("jest@29.7.0").argv(["a.test.js"], order_seed=1)
    vitest = JsRunner("vitest@1.6.0", None, "vitest.config.ts").argv(["a.ts"], order_seed=1)
    assert vitest[vitest.index("--config") + 1] == "vitest.config.ts"
    assert "--config" not in JsRunner("mocha@5.2.0", None, ".mocharc.yml").argv([], order_seed=1)
    task: Any = SimpleNamespace(
        test_patch="",
        FAIL_TO_PASS=["tests/a.ts::t"],
        PASS_TO_PASS=[],
        harness={"module": "jest@29.5.0", "config": "config/jest.config.js"},
    )
    job = ECO.run_job(task, "/p", timeout=60, output_limit=1, rng=random.Random(1))
    assert "config/jest.config.js" in job["protect"]["files"]
    assert job["run"]["argv"][2:4] == ["--config", "config/jest.config.js"]


def test_jest_cli_version_is_the_one_jest_runs(tmp_path: Path) -> None:
    from swe_forge.ecosystems.js.image import jest_cli_version

    assert jest_cli_version(tmp_path) == ""
    (tmp_path / "jest-cli").mkdir()
    (tmp_path / "jest-cli" / "package.json").write_text('{"version": "29.5.0"}')
    assert jest_cli_version(tmp_path) == "29.5.0"
    nested = tmp_path / "jest" / "node_modules" / "jest-cli"
    nested.mkdir(parents=True)
    nested.joinpath("package.json").write_text('{"version": "29.3.1"}')
    assert jest_cli_version(tmp_path) == "29.3.1"


def test_a_test_name_no_argument_can_carry_is_escaped_in_the_filter() -> None:
    """Test names with NUL, control characters or a lone surrogate (cookie values with
    "\\0", a YAML "\\udead") reach the name filter as ``\\uXXXX``: as they are, the
    supervisor could not start the runner (embedded null byte)."""
    import random
    import re
    from types import SimpleNamespace
    from typing import Any

    names = ["t > a\x00b", "t > x\udead y", "t > tab\there"]
    task: Any = SimpleNamespace(
        test_patch="",
        FAIL_TO_PASS=[f"src/a.test.js::{n}" for n in names],
        PASS_TO_PASS=[],
        harness={"module": "jest@29.7.0"},
    )
    argv = ECO.run_job(task, "/p", timeout=60, output_limit=1, rng=random.Random(1))["run"]["argv"]
    grep = argv[argv.index("-t") + 1]
    assert all(a.encode("utf-8") and "\x00" not in a for a in argv)
    assert "\\u0000" in grep and "\\udead" in grep and "\\u0009" in grep
    for name in ("t a\x00b", "t x\udead y", "t tab\there"):
        assert re.fullmatch(grep, name), name
    assert not re.fullmatch(grep, "t ab")


def test_the_named_runner_config_and_the_files_it_loads_are_the_judges() -> None:
    # Red team, session 19: a test script naming `jest --config jest.unit.config.js` made
    # that file editable (no name rule knew it), and a `transform` added there rewrote the
    # held-out test as Jest loaded it (1.0 without a fix). The named file, whatever its name,
    # and the repository files it and the root configurations name are refused.
    base = {
        "package.json": b'{"scripts": {"test": "jest --config config/unit.js"}}',
        "config/unit.js": (
            b"module.exports = { setupFiles: ['<rootDir>/config/setup-env.js'],"
            b" transform: {'\\\\.js$': './tools/loader'} };"
        ),
        "config/setup-env.js": b"process.env.TZ = 'UTC';\n",
        "config/tools/loader.js": b"module.exports = { process: (s) => ({ code: s }) };\n",
        "jest.config.js": b"module.exports = { preset: './jest-preset.js' };\n",
        "jest-preset.js": b"module.exports = {};\n",
        "src/index.js": b"module.exports = 1;\n",
    }
    read = base.get
    for path in (
        "config/unit.js",
        "config/setup-env.js",
        "config/tools/loader.js",
        "jest-preset.js",
        "jest.unit.config.js",
        "vitest.e2e.config.ts",
    ):
        found = ECO.patch_violations(_new(path), gold_patch="", read_base=read)
        assert found and found[0]["code"] == "runner_config", path
    assert ECO.patch_violations(_new("src/index.js"), gold_patch="", read_base=read) == []
    assert ECO.patch_violations(_new("src/loader.js"), gold_patch="", read_base=read) == []
