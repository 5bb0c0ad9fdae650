"""Node's own test runner (``node --test``): detected from the test script, run with the
judge's reporter, and read as Mocha's reports are."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems.js.runner import NODE_REPORTER, JsRunner
from swe_forge.ecosystems.js.toolchain import NODE_TEST, detect_framework
from swe_forge.gates.harness import swe_forge_polyglot as polyglot

HARNESS = Path(polyglot.__file__).parent


@pytest.mark.parametrize(
    ("scripts", "deps", "want"),
    [
        ({"test": "node --test && npm run check:type:ts"}, {}, NODE_TEST),  # commander.js
        ({"test": "node --experimental-strip-types --test tests/"}, {}, NODE_TEST),
        ({"test": "cross-env TZ=UTC node --test-reporter=spec --test"}, {}, NODE_TEST),
        ({"test": "npm run unit", "unit": "node --test"}, {}, NODE_TEST),
        # A framework the script names comes first; a dependency before another script's.
        ({"test": "mocha && node --test"}, {}, "mocha"),
        ({"test": "npm run unit", "unit": "node --test"}, {"jest": "^29"}, "jest"),
        # Not Node's runner: a script of the project given --test, or no runner at all.
        ({"test": "node bin/run.js --test"}, {}, ""),
        ({"test": "node --testing"}, {}, ""),
    ],
)
def test_node_test_is_detected_from_the_scripts(
    scripts: dict[str, str], deps: dict[str, str], want: str
) -> None:
    assert detect_framework({"scripts": scripts, "devDependencies": deps}) == want


def test_node_test_command_by_node_version() -> None:
    files = ["tests/a.test.js", "tests/b.test.js", "tests/c.test.js"]
    new = JsRunner("node:test@22.23.5").argv(files, order_seed=7, timeout=2.5, grep="^(x)$")
    assert new[:4] == [
        "node",
        "--test",
        f"--test-reporter={NODE_REPORTER}",
        "--test-reporter-destination=stdout",
    ]
    assert "--test-concurrency=1" in new and "--test-timeout=2500" in new
    # The files run whole (no name filter: see the runner), in an order the seed decides.
    assert not any(a.startswith("--test-name-pattern") for a in new)
    assert sorted(new[-3:]) == files
    assert new == JsRunner("node:test@22.23.5").argv(files, order_seed=7, timeout=2.5)
    orders = {tuple(JsRunner("node:test@20.19").argv(files, order_seed=s)[-3:]) for s in range(9)}
    assert len(orders) > 1
    # Debian's Node 18 knows neither option.
    old = JsRunner("node:test@18.19").argv(files, order_seed=7, timeout=2.5)
    assert not any(a.startswith(("--test-concurrency", "--test-timeout")) for a in old)
    assert JsRunner("node:test@20.19").report(files)["format"] == "node-test-json"


TESTS_A = """\
const { test, describe, it, before } = require('node:test');
const assert = require('node:assert/strict');
describe('Suite one', () => {
  test('adds small', () => { assert.equal(1 + 1, 2); });
  it('fails here', () => { assert.equal(1 + 1, 3); });
  describe('inner', () => { it('deep test', () => {}); });
});
test('top level', async (t) => {
  await t.test('sub a', () => {});
  await t.test('sub b', () => { assert.ok(false); });
});
test('skipped one', { skip: true }, () => {});
test.todo('todo one');
console.log('{"stats": {}, "tests": []}');
"""

TESTS_B = """\
require('node:test');
throw new Error('load failure: what only the fix adds');
"""

TESTS_C = """\
const { test, describe, before } = require('node:test');
describe('hooked', () => {
  before(() => { throw new Error('hook boom'); });
  test('never', () => {});
});
test('after', () => {});
"""


def test_the_node_reporter_as_the_judge_reads_it(tmp_path: Path) -> None:
    """Node's runner with the judge's reporter, read by the judge's parser: leaf tests by
    their full titles, skipped and todo tests skipped, a file that does not load a
    collection error, and what a test prints never taken for a report."""
    node = shutil.which("node")
    assert node is not None, "Node.js is part of every machine this project runs on"
    (tmp_path / "tests").mkdir()
    for name, text in (("a", TESTS_A), ("b", TESTS_B), ("c", TESTS_C)):
        (tmp_path / "tests" / f"{name}.test.js").write_text(text)
    files = ["tests/a.test.js", "tests/b.test.js", "tests/c.test.js"]
    argv = JsRunner("node:test@20.19").argv(files, order_seed=3)
    argv = [node, *argv[1:]]
    argv[2] = f"--test-reporter={HARNESS / 'swe_forge_node_reporter.mjs'}"
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=120, check=False)
    assert out.returncode == 1
    spec = {"format": "node-test-json", "files": files, "root": f"{tmp_path}/"}
    ev = polyglot.parse(spec, out.stdout)
    assert ev["tests"] == {
        "tests/a.test.js::Suite one adds small": "passed",
        "tests/a.test.js::Suite one fails here": "failed",
        "tests/a.test.js::Suite one inner deep test": "passed",
        "tests/a.test.js::top level sub a": "passed",
        "tests/a.test.js::top level sub b": "failed",
        "tests/a.test.js::skipped one": "skipped",
        "tests/a.test.js::todo one": "skipped",
        "tests/c.test.js::hooked never": "failed",
        "tests/c.test.js::after": "passed",
    }
    assert ev["collect_errors"] == ["tests/b.test.js"]
    assert "2 !== 3" in ev["messages"]["tests/a.test.js::Suite one fails here"]
    assert ev["tamper"] == [] and ev["ended"] and ev["exitstatus"] == 1


FEED = """
import reporter from %s;
const file = '/testbed/tests/a.test.js';
const events = [
  { type: 'test:start', data: { name: 'adds', nesting: 0, file } },
  { type: 'test:pass', data: { name: 'adds', nesting: 0, file, details: {} } },
  // what code under test forged on its output: a todo failure and a pass of a test that
  // never started (a red team's frames of the runner's protocol, Node 20)
  { type: 'test:fail', data: { name: 'zz', nesting: 0, file: '', todo: true, details: {} } },
  { type: 'test:pass', data: { name: 'adds big', nesting: 0, file, details: {} } },
  // and a second result of a test that already has one
  { type: 'test:pass', data: { name: 'adds', nesting: 0, file, details: {} } },
];
async function* source() { for (const e of events) yield e; }
for await (const chunk of reporter(source())) process.stdout.write(chunk);
"""


def test_results_of_tests_that_never_started_are_tamper(tmp_path: Path) -> None:
    """Node's runner starts every test before it reports it: a result without a start of its
    own was written by someone else (the red team's forged frames on the test process's fd 1),
    and the judge calls the run tampered instead of counting it."""
    node = shutil.which("node")
    assert node is not None
    import json as _json

    script = FEED % _json.dumps(str(HARNESS / "swe_forge_node_reporter.mjs"))
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, timeout=60, check=True
    ).stdout
    doc = _json.loads(out)
    assert doc["swefForged"] == 3
    assert [t["fullTitle"] for t in doc["tests"]] == ["adds"]
    ev = polyglot.parse({"format": "node-test-json", "files": ["tests/a.test.js"]}, out)
    assert ev["tamper"] == ["3 result(s) of tests that never started"]
