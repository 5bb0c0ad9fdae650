"""What JavaScript's and TypeScript's test files are called, as the adapter and its test
frameworks name them (read by the miner's classifier without loading the adapter)."""

from __future__ import annotations

import re
from functools import lru_cache

from swe_forge.ecosystems.naming import Naming

#: JavaScript/TypeScript test modules by file name, as the JS adapter and its frameworks name
#: them: ``x.test.ts``, ``x.spec.js``, and Mocha's and Jasmine's ``x-test.js``, ``x_spec.mjs``,
#: ``x.tests.js``, ``test.js`` (``.d.ts`` declarations are not tests).
JS_TEST_NAME = re.compile(r"(^|[./_-])(test|spec)s?\.[cm]?[jt]sx?$", re.IGNORECASE)
#: JavaScript/TypeScript file extensions (any file of these under ``__tests__`` is a test module).
JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
#: Directories whose JS/TS files are test modules at any depth: Jest's ``__tests__``, and the
#: ``test/``/``tests/`` trees Mocha's default spec, and many Jest ``testMatch`` and Vitest
#: ``include`` settings, run (``tests/doc/parse.ts``, ``packages/x/test/foo.ts``).
JS_TEST_DIRS = ("__tests__", "test", "tests")
#: Directories under a test directory that hold what tests load, not tests: their files are
#: held out with the tests but never run as test modules (a runner given a file without tests
#: reports a broken suite). Not ``lib/`` nor ``utils/``: suites mirror the source tree
#: (``test/lib/router.js`` tests ``lib/router.js``).
JS_SUPPORT_DIRS = frozenset(
    {
        "fixtures", "fixture", "__fixtures__", "helpers", "helper", "support", "mocks",
        "__mocks__", "__snapshots__", "snapshots", "data", "resources", "setup", "stubs",
        "testdata", "test-data", "test-utils", "test-helpers",
    }
)  # fmt: skip
#: File names of helpers and runner setup beside the tests (``tests/_utils.ts``,
#: ``test/setup.js``, ``test/jest.config.js``, ``test/common.mjs``, ``tests/index.ts``).
_SUPPORT_NAME = re.compile(
    r"^(_|\.)|^(setup|teardown|global[-_]?(setup|teardown)|helpers?|utils?|common|shared|"
    r"fixtures?|mocks?|stubs?|support|bootstrap|env(ironment)?|polyfills?|shims?|index|"
    r"(test|spec)[-_]?(utils?|helpers?|setup|env|common))\.[^/]*$|"
    r"\.(config|conf|setup|d)\.[cm]?[jt]sx?$|^\.?(mocharc|babelrc)",
    re.IGNORECASE,
)
_TEST_FILES = tuple(
    f"*.{kind}.{ext}"
    for kind in ("test", "spec")
    for ext in ("js", "ts", "jsx", "tsx", "mjs", "cjs")
)


@lru_cache(maxsize=64)
def is_js_test_file(path: str) -> bool:
    """A JavaScript/TypeScript test file: named as one (:data:`JS_TEST_NAME`), or a JS/TS
    file under a test directory (:data:`JS_TEST_DIRS`, any depth) that is not a helper
    (:data:`JS_SUPPORT_DIRS`, :data:`_SUPPORT_NAME`); never in ``node_modules`` nor a
    ``.d.ts``."""
    parts = path.split("/")
    name = parts[-1]
    if "node_modules" in parts[:-1] or not name.lower().endswith(JS_EXTS):
        return False
    if name.lower().endswith((".d.ts", ".d.mts", ".d.cts")):
        return False
    if JS_TEST_NAME.search(name):
        return True
    dirs = [d.lower() for d in parts[:-1]]
    tops = [i for i, d in enumerate(dirs) if d in JS_TEST_DIRS]
    if not tops:
        return False
    # Only what lies under the outermost test directory says whether this is a helper.
    below = dirs[tops[0] + 1 :]
    return not any(d in JS_SUPPORT_DIRS for d in below) and not _SUPPORT_NAME.search(name)


def is_test_name(name: str) -> bool:
    """A file name the frameworks take for a test module (``clock-test.js``)."""
    return bool(JS_TEST_NAME.search(name))


NAMING = Naming(
    test_files=_TEST_FILES,
    test_modules=_TEST_FILES,
    code_extensions=(".js", ".ts"),
    is_test_name=is_test_name,
    is_test_module=is_js_test_file,
)
