"""The JavaScript/TypeScript canary writer: sites of Jest/Vitest tests nested in describe
blocks, of Mocha tests by full title, of ``test.each`` rows (named as jest-each names them),
Jest matchers, chai and node's assert; perturbations, copies (and, with node and a small
Jest-like runner, that a perturbed copy fails where the unperturbed one passes)."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems import syntax, writer_for
from swe_forge.ecosystems.canaries import Site, punctuation_only
from swe_forge.ecosystems.js.canary import JsCanaryWriter
from swe_forge.ecosystems.js.canary_locate import each_title
from swe_forge.errors import UsageError

W = writer_for("js")
TS_PATH = "test/parse.test.ts"
TS = b"""import { describe, expect, it, test } from 'vitest';
import { parse, tokens, ratio, kind } from '../src/parse';

type Mode = 'fast' | 'slow';

describe('parse', () => {
  describe('numbers', () => {
    it('parses an integer', () => {
      expect(parse('42')).toBe(42);
      expect(parse('1_000')).toEqual(1_000);
      expect(ratio(1, 3)).toBeCloseTo(0.333, 3);
      expect(tokens('a b')).toEqual(['a', 'b']);
      expect(tokens('a b')).toHaveLength(2);
      expect(parse('x')).not.toBe(0);
      const expected = { kind: 'num', value: 3.5 } as const;
      expect(parse('3.5')).toStrictEqual(expected);
      console.log('done', 1);
    });

    test.each([
      [1, 'one'],
      [2, 'two'],
    ])('names %i', (n, expected) => {
      expect(name(n)).toBe(expected);
      expect(kind(n)).toMatch("num");
    });

    test.each([{ a: 1, b: 2, sum: 3 }])('adds $a and $b', ({ a, b, sum }) => {
      expect(a + b).toBe(sum);
    });
  });

  it(`throws on bad input`, () => {
    const mode: Mode = 'fast';
    expect(() => parse('!', mode)).toThrow('bad input: !');
    expect(parse('0x1F')).toEqual(expect.objectContaining({ value: 0x1f }));
  });

  it.only('twice', () => {});
  it.only('twice', () => {});
});

describe(Parser.name, () => {
  it('is computed', () => {
    expect(parse('q')).toBe('q');
  });
});

describe.each([1, 2])('each %i', (n) => {
  it('is inside each', () => {
    expect(parse(n)).toBe(n);
  });
});

for (const word of ['a', 'b']) {
  it(`loops ${word}`, () => expect(parse(word)).toBe(word));
}

test('top level', () => {
  expect(kind(true)).toBe(`bool`);
});
"""
MOCHA_PATH = "test/mocha.test.js"
MOCHA = b"""const assert = require('assert');
const { expect } = require('chai');
const { parse } = require('../src/parse');

describe('Parser', function () {
  context('with numbers', function () {
    it('reads an int', function () {
      assert.strictEqual(parse("7"), 7);
      assert.deepEqual(parse("[1]"), [1], 'list of one');
      assert(parse("2") === 2, "two");
      expect(parse("x")).to.equal("x", 'echo');
      expect(parse("1.5")).to.be.closeTo(1.5, 0.01);
      expect(parse("{}")).to.have.property('size', 0);
      expect(parse("y")).to.not.equal("z");
      assert.equal(parse("n"), null);
      parse("w").should.equal('w');
    });
  });
});
"""


def sites_of(path: str, source: bytes, test: str) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.role) for s in W.sites(path, source, [test])]


def test_test_files_are_the_named_file() -> None:
    assert W.test_files("test/parse.test.ts::parse > x", [TS_PATH, "test/other.test.ts"]) == [
        TS_PATH
    ]


def test_jest_matchers_in_nested_describes() -> None:
    assert sites_of(TS_PATH, TS, "test/parse.test.ts::parse > numbers > parses an integer") == [
        ("'42'", "string", "other"),
        ("42", "int", "expected"),
        ("'1_000'", "string", "other"),
        ("1_000", "int", "expected"),
        ("1", "int", "other"),
        ("3", "int", "other"),
        ("0.333", "float", "expected"),
        ("3", "int", "other"),  # toBeCloseTo's precision
        ("'a b'", "string", "other"),
        ("'a'", "string", "expected"),
        ("'b'", "string", "expected"),
        ("'a b'", "string", "other"),
        ("2", "int", "expected"),
        ("'x'", "string", "other"),
        ("0", "int", "other"),  # .not
        ("'num'", "string", "expected"),  # const expected = {...} as const
        ("3.5", "float", "expected"),
        ("'3.5'", "string", "other"),
    ]  # console.log's arguments are no sites


def test_each_rows_by_their_titles() -> None:
    assert sites_of(TS_PATH, TS, "test/parse.test.ts::parse > numbers > names 2") == [
        ("'two'", "string", "expected"),  # the column of the `expected` parameter
        ('"num"', "string", "expected"),
    ]  # 2 makes the title: no site
    assert sites_of(TS_PATH, TS, "test/parse.test.ts::parse > numbers > adds 1 and 2") == [
        ("3", "int", "other")
    ]
    assert W.sites(TS_PATH, TS, ["test/parse.test.ts::parse > numbers > names %i"]) == []


def test_template_titles_typescript_types_and_asymmetric_matchers() -> None:
    assert sites_of(TS_PATH, TS, "test/parse.test.ts::parse > throws on bad input") == [
        ("'!'", "string", "other"),
        ("'bad input: !'", "string", "expected"),
        ("'0x1F'", "string", "other"),
        ("0x1f", "int", "expected"),
    ]  # 'fast' is a Mode: another string would not type-check
    assert sites_of(TS_PATH, TS, "test/parse.test.ts::top level") == [
        ("true", "bool", "other"),
        ("`bool`", "string", "expected"),
    ]


def test_what_cannot_be_located_safely_has_no_sites() -> None:
    ids = [
        "test/parse.test.ts::parse > twice",  # two tests of one name
        "test/parse.test.ts::Parser > is computed",
        "test/parse.test.ts::each 1 > is inside each",
        "test/parse.test.ts::loops a",
        "test/parse.test.ts::parse > missing",
        "test/other.test.ts::top level",
    ]
    assert W.sites(TS_PATH, TS, ids) == []


def test_mocha_full_titles_chai_and_node_assert() -> None:
    assert sites_of(MOCHA_PATH, MOCHA, "test/mocha.test.js::Parser with numbers reads an int") == [
        ('"7"', "string", "other"),
        ("7", "int", "expected"),
        ('"[1]"', "string", "other"),
        ("1", "int", "expected"),  # its message is no site
        ('"2"', "string", "other"),
        ("2", "int", "expected"),
        ('"x"', "string", "other"),
        ('"x"', "string", "expected"),
        ('"1.5"', "string", "other"),
        ("1.5", "float", "expected"),
        ("0.01", "float", "other"),
        # '"{}"' is none: braces are never changed (a format string's would not build)
        ("'size'", "string", "other"),
        ("0", "int", "expected"),
        ('"y"', "string", "other"),
        ('"z"', "string", "other"),  # .not
        ('"n"', "string", "other"),
        ('"w"', "string", "other"),
        ("'w'", "string", "expected"),  # should
    ]
    # The same test in Jest's form is found too (a Jest run names it so).
    assert W.sites(MOCHA_PATH, MOCHA, ["test/mocha.test.js::Parser > with numbers > reads an int"])


def test_an_expected_argument_made_with_a_constant() -> None:
    source = b"test('c', () => {\n  expect(text()).toBe('foo' + SEP);\n  assert.equal(pick(), parse('x'));\n});\n"
    assert sites_of("c.test.js", source, "c.test.js::c") == [
        ("'foo'", "string", "expected"),
        ("'x'", "string", "other"),
    ]


def test_an_assigned_name_is_no_value() -> None:
    source = b"test('m', () => {\n  let count = 0;\n  count = run();\n  expect(total()).toBe(count);\n  expect(total()).toBe(4);\n});\n"
    assert sites_of("m.test.js", source, "m.test.js::m") == [
        ("0", "int", "other"),
        ("4", "int", "expected"),
    ]


def test_supertest_expectations() -> None:
    source = b"""describe('app', function () {
  it('responds', function (done) {
    request(app).get('/user').expect('Content-Type', /json/).expect('X-Id', '42').expect(200, '{"a":1}', done);
  });
});
"""
    assert sites_of("test/app.js", source, "test/app.js::app responds") == [
        ("'/user'", "string", "other"),
        ("'Content-Type'", "string", "other"),
        ("'X-Id'", "string", "other"),  # a header's name is no expectation, its value is
        ("'42'", "string", "expected"),
        ("200", "int", "expected"),
        ("'{\"a\":1}'", "string", "expected"),
    ]


@pytest.mark.parametrize(
    ("title", "row", "want"),
    [
        ("names %i", "[2, 'x']", "names 2"),
        ("%s and %s", "['a', 'b']", "a and b"),
        ("%p is pretty", "['a\"b']", '"a\\"b" is pretty'),
        ("%d%% of %#", "[1.5]", "1.5% of 3"),
        ("%j", '["x"]', '"x"'),
        ("row %$: %s", "[true]", "row 4: true"),
        ("adds $a and $b", "{a: 1, 'b': -2}", "adds 1 and -2"),
        ("n=%i", "7", "n=7"),
        ("%s", "[null]", "null"),
    ],
)
def test_each_titles_as_jest_names_them(title: str, row: str, want: str) -> None:
    tree = syntax.parse("javascript", f"x = {row};".encode())
    node = next(n for n in syntax.walk(tree.root_node) if n.type == "assignment_expression")
    named = each_title(title, node.child_by_field_name("right"), 3)
    assert named is not None and named[0] == want


def check_perturbation(path: str, source: bytes, site: Site, out: bytes) -> str:
    """The new literal; asserts the rest of the file is unchanged and it parses."""
    tail = len(source) - site.end
    assert (
        out[: site.start] == source[: site.start] and out[len(out) - tail :] == source[site.end :]
    )
    new = out[site.start : len(out) - tail].decode()
    assert new != site.text
    assert not syntax.parse(syntax.grammar_for_path(path), out).root_node.has_error
    return new


EVERY_TS = [
    "test/parse.test.ts::parse > numbers > parses an integer",
    "test/parse.test.ts::parse > numbers > names 1",
    "test/parse.test.ts::parse > numbers > adds 1 and 2",
    "test/parse.test.ts::parse > throws on bad input",
    "test/parse.test.ts::top level",
]


@pytest.mark.parametrize("seed", range(6))
def test_every_perturbation_parses_differs_and_keeps_the_form(seed: int) -> None:
    cases = [
        (TS_PATH, TS, EVERY_TS),
        (MOCHA_PATH, MOCHA, ["test/mocha.test.js::Parser with numbers reads an int"]),
    ]
    for path, source, tests in cases:
        for site in W.sites(path, source, tests):
            out = W.perturb(source, site, random.Random(seed))
            if punctuation_only(site.text):
                assert out is None, site  # no change of "-" reads naturally
                continue
            assert out is not None, site
            assert out == W.perturb(source, site, random.Random(seed))
            new = check_perturbation(path, source, site, out)
            if site.kind == "string":
                assert new[0] == site.text[0] and len(new) == len(site.text)
            elif site.kind == "int":
                assert new.startswith("0x") == site.text.startswith("0x")
                assert ("_" in new) == ("_" in site.text)
            elif site.kind == "float":
                assert "." in new


def test_tsx_files_use_their_grammar() -> None:
    source = b"import { render } from './r';\ntest('renders', () => {\n  expect(render(<b className=\"x\">hi</b>)).toBe('<b>hi</b>');\n});\n"
    sites = W.sites("src/App.test.tsx", source, ["src/App.test.tsx::renders"])
    assert [(s.text, s.role) for s in sites] == [('"x"', "other"), ("'<b>hi</b>'", "expected")]
    out = W.perturb(source, sites[1], random.Random(0))
    assert out is not None and not syntax.parse("tsx", out).root_node.has_error


# ------------------------------------------------------------------------------------ copies


def test_copies_and_their_ids_in_both_forms() -> None:
    writer = JsCanaryWriter()
    test = "test/parse.test.ts::parse > numbers > parses an integer"
    site = writer.sites(TS_PATH, TS, [test])[1]
    row = "test/parse.test.ts::parse > numbers > names 2"
    row_site = writer.sites(TS_PATH, TS, [row])[0]
    out = writer.copies(
        TS_PATH, TS, [(test, site, "reads nested field"), (row, row_site, "names copy")]
    ).decode()
    assert not syntax.parse("typescript", out.encode()).root_node.has_error
    assert "    it('reads nested field', () => {\n      expect(parse('42')).toBe(" in out
    assert out.count("expect(parse('42')).toBe(42);") == 1
    assert "    test('names copy', () => ((n, expected) => {" in out
    assert re.search(r"\}\)\(2, '(?!two')[a-z]{3}'\)\);", out)
    assert writer.copy_id(test, "reads nested field") == (
        "test/parse.test.ts::parse > numbers > reads nested field"
    )
    mocha = "test/mocha.test.js::Parser with numbers reads an int"
    writer.copies(MOCHA_PATH, MOCHA, [(mocha, None, "reads a copy")])
    assert writer.copy_id(mocha, "reads a copy") == (
        "test/mocha.test.js::Parser with numbers reads a copy"
    )


def test_copy_id_needs_a_located_test_unless_jest_says_where() -> None:
    writer = JsCanaryWriter()
    assert writer.copy_id("a.test.js::x > y", "z w") == "a.test.js::x > z w"
    with pytest.raises(UsageError):
        writer.copy_id("a.test.js::x y", "z w")


def test_copies_refuse_what_is_not_there() -> None:
    with pytest.raises(UsageError):
        W.copies(TS_PATH, TS, [("test/parse.test.ts::parse > twice", None, "x y")])


def test_new_names() -> None:
    taken = {"parses an integer"}
    rng = random.Random(9)
    for _ in range(10):
        name = W.new_name("test/parse.test.ts::parse > parses an integer", rng, taken)
        assert re.fullmatch(r"[a-z]+( [a-z]+){1,3}", name) and name not in taken
        taken.add(name)


# ------------------------------------------------------------------------------- with node

#: Just enough of Jest to run the example's tests: describe/test/it/test.each, expect's
#: toBe/toEqual/toHaveLength, jest-each's %i/%s/%p titles; prints {id: outcome}.
_RUNNER = r"""
const util = require('util');
const path = require('path');
const stack = [];
const tests = [];
function describe(title, fn) { stack.push(title); fn(); stack.pop(); }
function test(title, fn) { tests.push([[...stack.filter((t) => t !== ''), title].join(' > '), fn]); }
test.each = (rows) => (title, fn) => rows.forEach((row, i) => {
  const args = Array.isArray(row) ? row : [row];
  let name = title.replace(/%#/g, String(i));
  for (const value of args) {
    const m = /%[sdip]/.exec(name);
    if (!m) break;
    const text = m[0] === '%p' ? JSON.stringify(value) : util.format(m[0], value);
    name = name.slice(0, m.index) + text + name.slice(m.index + 2);
  }
  test(name, () => fn(...args));
});
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
function expect(actual) {
  const fail = (why) => { throw new Error(why); };
  return {
    toBe: (want) => Object.is(actual, want) || fail('toBe'),
    toEqual: (want) => eq(actual, want) || fail('toEqual'),
    toHaveLength: (n) => actual.length === n || fail('toHaveLength'),
  };
}
Object.assign(global, { describe, test, it: test, expect });
const file = process.argv[2];
require(path.resolve(file));
const out = {};
for (const [id, fn] of tests) {
  try { fn(); out[file + '::' + id] = 'pass'; } catch (e) { out[file + '::' + id] = 'fail'; }
}
console.log(JSON.stringify(out));
"""


def _run_node(tree: Path, file: str) -> dict[str, str]:
    runner = tree.parent / "runner.js"
    runner.write_text(_RUNNER)
    proc = subprocess.run(
        ["node", str(runner), file],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    got: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return got


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_node_copies_and_twins_of_the_example(tmp_path: Path) -> None:
    from swe_forge.example.catalog import create_language_example

    tree = tmp_path / "jskit"
    create_language_example("js", tree)
    writer = JsCanaryWriter()
    for path, test in [
        ("src/strutil.test.js", "src/strutil.test.js::truncate > keeps a string that exactly fits"),
        ("src/squeeze.test.js", "src/squeeze.test.js::squeeze > collapses a run of 3 spaces"),
        ("src/words.test.js", "src/words.test.js::splits on any white space"),
    ]:
        source = (tree / path).read_bytes()
        sites = writer.sites(path, source, [test])
        expected = [s for s in sites if s.role == "expected"]
        assert expected, test
        specs = [(test, None, "plain copy")] + [(test, s, f"site copy {s.index}") for s in sites]
        (tree / path).write_bytes(writer.copies(path, source, specs))
        got = _run_node(tree, path)
        assert got[test] == got[writer.copy_id(test, "plain copy")] == "pass"
        for s in expected:
            assert got[writer.copy_id(test, f"site copy {s.index}")] == "fail", s
        (tree / path).write_bytes(writer.perturb(source, expected[0], random.Random(4)) or b"")
        got = _run_node(tree, path)
        failing = [t for t, outcome in got.items() if outcome == "fail"]
        # A literal of an .each test's body is every row's: those rows fail with it.
        rows = "src/squeeze.test.js::squeeze > collapses a run of "
        assert test in failing
        assert (
            all(t.startswith(rows) for t in failing) if test.startswith(rows) else failing == [test]
        )


def test_a_value_nested_thousands_deep_is_no_crash() -> None:
    source = ("test('t', () => { expect(f()).toBe(" + " + ".join(["1"] * 20000) + "); });").encode()
    assert W.sites("a.test.js", source, ["a.test.js::t"]) == []


TRUTHY = b"""const assert = require('assert');
test('rejects empty', () => {
  const p = parse('abc');
  assert.ok(p.isEmpty());
  assert(!p.failed(), 'no failure');
  expect(p.valid()).toBeTruthy();
  expect(p.size() > 1).toBeTruthy();
  expect(!p.bad()).toBeFalsy();
  assert.notOk(p.empty());
});
test('counts', () => {
  expect(count('abc')).toBe(3);
  assert.ok(ready());
});
"""


def test_truthiness_assertions_are_guard_sites_where_no_literal_is_expected() -> None:
    # A test whose checks are assert.ok / expect(...).toBeTruthy() on a computed condition had
    # no expected literal, hence no decoy (no_decoys). Its conditions, negated as an author
    # would write them, are decoys the gold patch fails where they run.
    w = writer_for("js")
    path = "test/p.test.js"

    def sites(test: str) -> list[tuple[str, str, str]]:
        return [(s.text, s.kind, s.role) for s in w.sites(path, TRUTHY, [test])]

    assert sites(f"{path}::rejects empty") == [
        ("'abc'", "string", "other"),
        ("p.isEmpty()", "guard", "expected"),
        ("!p.failed()", "guard", "expected"),
        ("p.size() > 1", "guard", "expected"),
        ("1", "int", "other"),
        ("!p.bad()", "guard", "expected"),
    ]
    # expect(!p.valid()).toBeTruthy(), assert.notOk(!p.empty()): double negatives no author
    # writes, a tell to code that reads the test file (red team, session 20): no guard.
    assert [k for _, k, _ in sites(f"{path}::counts")] == ["string", "int"]
    guards = [s for s in w.sites(path, TRUTHY, [f"{path}::rejects empty"]) if s.kind == "guard"]
    copied = w.copies(path, TRUTHY, [(g.test, g, f"copy {n}") for n, g in enumerate(guards)])
    assert b"assert.ok(!p.isEmpty());" in copied and b"assert(p.failed(), 'no failure');" in copied
    assert b"expect(p.size() <= 1).toBeTruthy();" in copied
    assert b"expect(p.bad()).toBeFalsy();" in copied
