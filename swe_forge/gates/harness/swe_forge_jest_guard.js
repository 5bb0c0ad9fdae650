'use strict';
// The judge's guard of Jest's equality (a Node preload: NODE_OPTIONS=--require this file).
//
// Standalone on purpose, like the supervisor: Node's core modules only, nothing of the
// project's. Jest runs a test file's code and the code under test in one realm with `expect`,
// and its equality (`equals`, behind toEqual, toStrictEqual, toHaveBeenCalledWith,
// toContainEqual, toMatchObject...) asks any value that has a callable `asymmetricMatch` to
// judge the value on the other side. A value the code under test returns could carry one and
// be a checker of the expected value (accept what the honest twin expects, refuse a decoy's):
// the twins cannot catch that, and no list of spellings can find `asymmetricMatch` set under
// a name computed at run time, or answered by a Proxy.
//
// So only Jest's own matchers are asymmetric here. This preload runs in Node's main realm,
// before Jest, and rewrites three of Jest's modules as Jest's runtime reads them (through
// fs.readFileSync, which graceful-fs copies when Jest loads it; the test realm's `require`
// of these modules gets the same rewritten code, and its own instance of them):
// - `isAsymmetric` (jasmineUtils: @jest/expect-utils, or expect before Jest 28) answers true
//   only for an object registered by Jest's constructors, whose `asymmetricMatch` is still
//   the method it was registered with (a registry private to the module instance Jest's
//   `expect` uses, exported only to Jest's own modules: the test realm's `require` builds
//   other instances);
// - `AsymmetricMatcher`'s constructor registers an instance whose class is one of the
//   matcher classes its own module declares (`expect.any`, `objectContaining`,
//   `stringMatching`...), with that class's method as it was at the first construction;
//   a subclass made by anything else is not registered;
// - `expect.extend`'s `CustomMatcher` registers its own instances the same way.
// A file whose text is not one of these shapes is left as it is (a Jest this does not know
// keeps its own behaviour).

const fs = require('fs');

const PATCHED = Symbol.for('swe-forge.jest-guard');
if (!fs.readFileSync[PATCHED]) {
  const original = fs.readFileSync;
  const JEST_BUILD = /[\\/]node_modules[\\/](?:expect|@jest[\\/]expect-utils)[\\/]build[\\/][^\\/]+\.js$/;

  const IS_ASYMMETRIC =
    /function isAsymmetric\(obj\) \{\s*return !!obj && isA\((['"])Function\1, obj\.asymmetricMatch\);\s*\}/;
  const REGISTRY = `function isAsymmetric(obj) {
  return !!obj && isA('Function', obj.asymmetricMatch) && __sfMatchers.get(obj) === obj.asymmetricMatch;
}
var __sfMatchers = new WeakMap();
function __sfRegister(obj, fn) {
  if (typeof fn === 'function' && !__sfMatchers.has(obj)) __sfMatchers.set(obj, fn);
}
exports.__sfRegister = __sfRegister;`;

  // The package's index re-exports what it names: the registry too (Jest 28 and later).
  const UTILS_IMPORT =
    /(var (\w+) = (?:require|__webpack_require__)\((['"])\.\/(?:src\/)?jasmineUtils(?:\.ts)?\3\);)/;

  const BASE_CTOR =
    /class AsymmetricMatcher \{((?:\s*\$\$typeof = [^;\n]+;)?)(\s*constructor\(([^)]*)\) \{)/;
  const OWN_CLASS = /class (\w+) extends AsymmetricMatcher \{/g;

  const CUSTOM =
    /(class CustomMatcher extends (\w+)\.AsymmetricMatcher \{\s*constructor\(inverse = false, \.\.\.sample\) \{\s*super\(sample(?:, inverse)?\);)/;

  function registryModule(text) {
    return /require\((['"])\.\/jasmineUtils\1\)/.test(text) ? './jasmineUtils' : '@jest/expect-utils';
  }

  function patch(text, path) {
    let out = text;
    if (IS_ASYMMETRIC.test(out)) {
      out = out.replace(IS_ASYMMETRIC, () => REGISTRY);
    }
    if (/[\\/]@jest[\\/]expect-utils[\\/]/.test(path) && UTILS_IMPORT.test(out)) {
      out = out.replace(UTILS_IMPORT, (m, stmt, name) => `${stmt}\nexports.__sfRegister = ${name}.__sfRegister;`);
    }
    if (BASE_CTOR.test(out)) {
      const names = [];
      let m;
      OWN_CLASS.lastIndex = 0;
      while ((m = OWN_CLASS.exec(out)) !== null) names.push(m[1]);
      const from = registryModule(out);
      const helper = `
var __sfOwn;
function __sfOwnRegister(obj, cls) {
  if (!__sfOwn) {
    __sfOwn = new Map();
    for (const c of [${names.join(', ')}]) __sfOwn.set(c, c.prototype.asymmetricMatch);
  }
  if (__sfOwn.has(cls)) require(${JSON.stringify(from)}).__sfRegister(obj, __sfOwn.get(cls));
}
var __sfCustom = new WeakMap();
function __sfRegisterCustom(obj, cls) {
  if (!__sfCustom.has(cls)) __sfCustom.set(cls, cls.prototype.asymmetricMatch);
  require(${JSON.stringify(from)}).__sfRegister(obj, __sfCustom.get(cls));
}
exports.__sfRegisterCustom = __sfRegisterCustom;
`;
      out = out.replace(
        BASE_CTOR,
        (all, field, ctor) => `${helper}class AsymmetricMatcher {${field}${ctor}\n    __sfOwnRegister(this, new.target);`
      );
    }
    if (CUSTOM.test(out)) {
      out = out.replace(
        CUSTOM,
        (all, head, ns) =>
          `${head}\n          if (new.target === CustomMatcher) (0, ${ns}.__sfRegisterCustom)(this, CustomMatcher);`
      );
    }
    return out;
  }

  const cache = new Map();
  function guarded(path, options) {
    const data = original.apply(this, arguments);
    if (typeof path !== 'string' || !JEST_BUILD.test(path)) return data;
    const text = typeof data === 'string' ? data : data.toString('utf8');
    if (!/asymmetricMatch|AsymmetricMatcher|jasmineUtils/.test(text)) return data;
    const key = path + '\0' + text;
    let out = cache.get(key);
    if (out === undefined) {
      out = patch(text, path);
      cache.set(key, out);
    }
    if (out === text) return data;
    return typeof data === 'string' ? out : Buffer.from(out, 'utf8');
  }
  Object.defineProperty(guarded, PATCHED, { value: true });
  fs.readFileSync = guarded;
}
