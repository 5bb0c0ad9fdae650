"""The judge's guard of Jest's equality (``swe_forge_jest_guard.js``) on modules of Jest's shape.

The modules here are written for the test, in the shapes of Jest's own builds (a separate
``@jest/expect-utils`` with an index that re-exports, as since Jest 28; ``expect``'s
``jasmineUtils`` as before it). Node's CommonJS loader reads a module with
``fs.readFileSync``, as Jest's runtime does, so a plain ``require`` sees what the guard
makes of them. The real Jest is exercised by tests/docker/test_js_adapter.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[2] / "swe_forge/gates/harness/swe_forge_jest_guard.js"

JASMINE_UTILS = """'use strict';
function isA(typeName, value) {
  return Object.prototype.toString.apply(value) === `[object ${typeName}]`;
}
function isAsymmetric(obj) {
  return !!obj && isA('Function', obj.asymmetricMatch);
}
function equals(a, b) {
  if (isAsymmetric(a)) return a.asymmetricMatch(b);
  if (isAsymmetric(b)) return b.asymmetricMatch(a);
  return JSON.stringify(a) === JSON.stringify(b);
}
exports.equals = equals;
exports.isA = isA;
"""

UTILS_INDEX = """'use strict';
Object.defineProperty(exports, 'equals', {
  enumerable: true,
  get: function () {
    return _jasmineUtils.equals;
  }
});
var _jasmineUtils = require('./jasmineUtils');
"""

MATCHERS = """'use strict';
var _expectUtils = require('{utils}');
class AsymmetricMatcher {
  $$typeof = Symbol.for('jest.asymmetricMatcher');
  constructor(sample, inverse = false) {
    this.sample = sample;
    this.inverse = inverse;
  }
}
class StringContaining extends AsymmetricMatcher {
  asymmetricMatch(other) {
    return typeof other === 'string' && other.includes(this.sample);
  }
}
exports.AsymmetricMatcher = AsymmetricMatcher;
exports.stringContaining = (s) => new StringContaining(s);
"""

CUSTOM = """'use strict';
var _asymmetricMatchers = require('./asymmetricMatchers');
exports.makeCustom = function (fn) {
      class CustomMatcher extends _asymmetricMatchers.AsymmetricMatcher {
        constructor(inverse = false, ...sample) {
          super(sample, inverse);
        }
        asymmetricMatch(other) {
          return fn(other, ...this.sample);
        }
      }
      return (...sample) => new CustomMatcher(false, ...sample);
};
"""

# Each value is what ``equals(received, expected)`` answers; only the first two are Jest's
# own matchers (an asymmetric matcher and an ``expect.extend`` one).
PROBE = """
const { equals } = require('{utils}');
const am = require('expect/build/asymmetricMatchers');
const custom = require('expect/build/jestMatchersObject');
const checker = (o) => typeof o === 'string';
const computed = {};
computed[['asym', 'metricMatch'].join('')] = checker;
const Base = Object.getPrototypeOf(am.stringContaining('x')).constructor;
class Evil extends Base { asymmetricMatch(o) { return checker(o); } }
const mutated = am.stringContaining('a');
const out = {
  genuine: equals('xyz', am.stringContaining('y')),
  genuine_refuses: equals('abc', am.stringContaining('y')),
  custom: equals(5, custom.makeCustom((r, lo, hi) => r >= lo && r <= hi)(1, 10)),
  computed: equals(computed, 'hello'),
  proxy: equals(new Proxy({}, { get: () => checker }), 'hello'),
  subclass: equals(new Evil('q'), 'hello'),
  own_property: equals(Object.assign(am.stringContaining('zzz'), { asymmetricMatch: checker }), 'hello'),
};
Object.getPrototypeOf(mutated).asymmetricMatch = checker;
out.mutated_prototype = equals(am.stringContaining('zzz'), 'hello');
console.log(JSON.stringify(out));
"""


def _tree(root: Path, *, split: bool) -> str:
    """Jest-shaped modules under ``root``: ``split`` puts jasmineUtils in @jest/expect-utils
    with a re-exporting index (Jest 28 and later); else in expect itself. Returns the module
    name ``equals`` comes from."""
    build = root / "node_modules/expect/build"
    build.mkdir(parents=True)
    if split:
        utils = root / "node_modules/@jest/expect-utils/build"
        utils.mkdir(parents=True)
        (utils / "jasmineUtils.js").write_text(JASMINE_UTILS)
        (utils / "index.js").write_text(UTILS_INDEX)
        (utils.parent / "package.json").write_text(
            '{"name": "@jest/expect-utils", "main": "build/index.js"}'
        )
        name = "@jest/expect-utils"
    else:
        (build / "jasmineUtils.js").write_text(JASMINE_UTILS)
        name = "./jasmineUtils"
    (build / "asymmetricMatchers.js").write_text(MATCHERS.replace("{utils}", name))
    (build / "jestMatchersObject.js").write_text(CUSTOM)
    return "@jest/expect-utils" if split else "expect/build/jasmineUtils"


def _probe(root: Path, utils: str, *, guard: bool) -> dict[str, bool]:
    node = shutil.which("node")
    assert node is not None, "node is part of this machine (the JS adapter needs it)"
    script = root / "probe.js"
    script.write_text(PROBE.replace("{utils}", utils))
    argv = [node, *(["--require", str(GUARD)] if guard else []), str(script)]
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=60, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("split", [True, False], ids=["expect-utils", "jasmineUtils-in-expect"])
def test_only_jests_own_matchers_are_asymmetric(tmp_path: Path, split: bool) -> None:
    utils = _tree(tmp_path, split=split)
    bare = _probe(tmp_path, utils, guard=False)
    # Without the guard every forged value is asked, and accepts.
    assert bare == {
        "genuine": True,
        "genuine_refuses": False,
        "custom": True,
        "computed": True,
        "proxy": True,
        "subclass": True,
        "own_property": True,
        "mutated_prototype": True,
    }
    guarded = _probe(tmp_path, utils, guard=True)
    assert guarded == {
        "genuine": True,
        "genuine_refuses": False,
        "custom": True,
        "computed": False,
        "proxy": False,
        "subclass": False,
        "own_property": False,
        "mutated_prototype": False,
    }


def test_a_file_of_another_shape_is_left_as_it_is(tmp_path: Path) -> None:
    # Outside Jest's build folders nothing is rewritten, whatever the text says.
    lib = tmp_path / "node_modules/mylib"
    lib.mkdir(parents=True)
    (lib / "index.js").write_text(JASMINE_UTILS)
    script = tmp_path / "probe.js"
    script.write_text(
        "const { equals } = require('mylib');\n"
        "console.log(JSON.stringify(equals({ asymmetricMatch: () => true }, 'x')));\n"
    )
    node = shutil.which("node")
    assert node is not None
    out = subprocess.run(
        [node, "--require", str(GUARD), str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "true"
