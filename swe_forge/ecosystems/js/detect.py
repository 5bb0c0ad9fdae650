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
_TEST_FILES = tuple(
    f"*.{kind}.{ext}"
    for kind in ("test", "spec")
    for ext in ("js", "ts", "jsx", "tsx", "mjs", "cjs")
)


@lru_cache(maxsize=64)
def is_js_test_file(path: str) -> bool:
    """A JavaScript/TypeScript test file: named as one (:data:`JS_TEST_NAME`), or any JS/TS
    file under ``__tests__`` (Jest's default); never in ``node_modules`` nor a ``.d.ts``."""
    parts = path.split("/")
    name = parts[-1]
    if "node_modules" in parts[:-1] or not name.lower().endswith(JS_EXTS):
        return False
    if name.lower().endswith(".d.ts"):
        return False
    return bool(JS_TEST_NAME.search(name)) or "__tests__" in parts[:-1]


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
