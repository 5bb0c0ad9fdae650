"""``swe-forge/jskit``: the JavaScript example repository (Jest), built deterministically.

The same kinds of pull requests as gokit and textkit: fixes and a feature whose tests fail
before and pass after (admitted), a change whose new test already passed before (rejected:
no_fail_to_pass) and a documentation-only change (not a candidate). Its package-lock.json
(``data/jskit-package-lock.json``: versions and integrity hashes only, no code, generated once
with ``npm install --package-lock-only`` from this package.json) pins Jest's whole tree, so the
image build's ``npm ci`` installs the same packages on every machine.
``EXPECTED_JS`` records what the pipeline must conclude.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from swe_forge.example.polyglot import ExamplePR as _PR
from swe_forge.example.polyglot import build_squash_history
from swe_forge.example.skeleton import data_text
from swe_forge.git.writer import Identity

JS_OWNER = "swe-forge"
JS_NAME = "jskit"
JS_REPO = f"{JS_OWNER}/{JS_NAME}"
JEST_VERSION = "29.7.0"
_START = datetime(2024, 3, 4, 9, 0, 0, tzinfo=UTC)
_STEP = timedelta(hours=6)
_MAINTAINER = Identity("Aiko Tanaka", "aiko.tanaka@jskit.example.org")
_CONTRIBUTOR = Identity("Rafael Osei", "rafael.osei@jskit.example.org")

_PACKAGE_JSON = (
    json.dumps(
        {
            "name": "jskit",
            "version": "0.1.0",
            "description": "Small string helpers for JavaScript",
            "main": "src/strutil.js",
            "license": "MIT",
            "scripts": {"test": "jest"},
            "devDependencies": {"jest": JEST_VERSION},
            "jest": {"testEnvironment": "node"},
        },
        indent=2,
    )
    + "\n"
)
_README = "# jskit\n\nSmall string helpers for JavaScript.\n\nMIT, see LICENSE.\n"
_STRUTIL = """\
'use strict';

/** Shorten s to at most width characters, ending with "..." when something was cut. */
function truncate(s, width) {
  const chars = Array.from(s);
  if (chars.length < width) {
    return s;
  }
  if (width <= 3) {
    return chars.slice(0, width).join('');
  }
  return chars.slice(0, width - 3).join('') + '...';
}

/** s with its characters in reverse order. */
function reverse(s) {
  return Array.from(s).reverse().join('');
}

/** Collapse runs of spaces into one space. */
function squeeze(s) {
  return s.split('  ').join(' ');
}

module.exports = { truncate, reverse, squeeze };
"""
_STRUTIL_TEST = """\
'use strict';

const { truncate, reverse } = require('./strutil');

describe('truncate', () => {
  test('keeps a short string', () => {
    expect(truncate('abc', 10)).toBe('abc');
  });

  test('cuts a long string', () => {
    expect(truncate('abcdefghij', 6)).toBe('abc...');
  });
});

describe('reverse', () => {
  test('reverses characters', () => {
    expect(reverse('h\\u00e9llo')).toBe('oll\\u00e9h');
  });
});
"""


_PRS: tuple[_PR, ...] = (
    _PR(
        1,
        "fix-truncate-exact",
        "truncate cuts strings that exactly fit the width",
        "truncate('abcdef', 6) returns 'abc...' although the string fits in 6 characters; "
        "a string exactly as long as the width must come back unchanged.",
        (
            ("src/strutil.js", "  if (chars.length < width) {", "  if (chars.length <= width) {"),
            (
                "src/strutil.test.js",
                "  test('cuts a long string', () => {",
                "  test('keeps a string that exactly fits', () => {\n"
                "    expect(truncate('abcdef', 6)).toBe('abcdef');\n  });\n\n"
                "  test('cuts a long string', () => {",
            ),
        ),
    ),
    _PR(
        2,
        "squeeze-runs",
        "squeeze leaves double spaces behind runs of three or more",
        "squeeze('a    b') gives 'a  b': runs longer than two spaces are only halved. "
        "Every run of spaces should become exactly one space.",
        (
            (
                "src/strutil.js",
                "  return s.split('  ').join(' ');",
                "  return s.replace(/ {2,}/g, ' ');",
            ),
            (
                "src/squeeze.test.js",
                "",
                "'use strict';\n\nconst { squeeze } = require('./strutil');\n\n"
                "describe('squeeze', () => {\n"
                "  test.each([2, 3, 4, 7])('collapses a run of %i spaces', (n) => {\n"
                "    expect(squeeze('a' + ' '.repeat(n) + 'b')).toBe('a b');\n  });\n\n"
                "  test('leaves a string without spaces alone', () => {\n"
                "    expect(squeeze('ab')).toBe('ab');\n  });\n});\n",
            ),
        ),
    ),
    _PR(
        3,
        "words",
        "Add words(), which splits on any run of white space",
        "Callers split on single spaces and get empty words for tabs and runs. Add "
        "words(s) returning the words of s separated by any white space.",
        (
            (
                "src/strutil.js",
                "/** Collapse runs",
                "/** The words of s, separated by any run of white space. */\n"
                "function words(s) {\n  return s.split(/\\s+/).filter(Boolean);\n}\n\n"
                "/** Collapse runs",
            ),
            (
                "src/strutil.js",
                "module.exports = { truncate, reverse, squeeze };",
                "module.exports = { truncate, reverse, squeeze, words };",
            ),
            (
                "src/words.test.js",
                "",
                "'use strict';\n\nconst { words } = require('./strutil');\n\n"
                "test('splits on any white space', () => {\n"
                "  expect(words(' js\\tis  fun ')).toEqual(['js', 'is', 'fun']);\n});\n",
            ),
        ),
    ),
    _PR(
        4,
        "reverse-doc",
        "reverse: say that it works on characters",
        "The doc comment should say reverse keeps multi-byte characters whole; a test pins "
        "that down.",
        (
            (
                "src/strutil.js",
                "/** s with its characters in reverse order. */",
                "/** s with its characters (code points, not UTF-16 units) in reverse order. */",
            ),
            (
                "src/strutil.test.js",
                "  test('reverses characters', () => {",
                "  test('keeps a single character', () => {\n"
                "    expect(reverse('\\u00f1')).toBe('\\u00f1');\n  });\n\n"
                "  test('reverses characters', () => {",
            ),
        ),
    ),
    _PR(
        5,
        "readme",
        "README: add an example",
        "Show truncate in the README.",
        (
            (
                "README.md",
                "Small string helpers for JavaScript.\n",
                "Small string helpers for JavaScript:\n`truncate('hello', 4)` gives `'h...'`.\n",
            ),
        ),
    ),
)

#: What the pipeline must conclude about each pull request of jskit.
EXPECTED_JS: dict[int, dict[str, object]] = {
    1: {
        "candidate": True,
        "admitted": True,
        "FAIL_TO_PASS": ["src/strutil.test.js::truncate > keeps a string that exactly fits"],
    },
    2: {
        "candidate": True,
        "admitted": True,
        "FAIL_TO_PASS": [
            "src/squeeze.test.js::squeeze > collapses a run of 3 spaces",
            "src/squeeze.test.js::squeeze > collapses a run of 4 spaces",
            "src/squeeze.test.js::squeeze > collapses a run of 7 spaces",
        ],
    },
    3: {
        "candidate": True,
        "admitted": True,
        "FAIL_TO_PASS": ["src/words.test.js::splits on any white space"],
    },
    4: {"candidate": True, "admitted": False, "reason": "no_fail_to_pass"},
    5: {"candidate": False},
}


def create_js_example(dest: Path) -> str:
    """Build ``swe-forge/jskit`` at ``dest`` (new or empty); returns the head commit."""
    files = {
        "package.json": _PACKAGE_JSON,
        "package-lock.json": data_text("jskit-package-lock.json"),
        ".gitignore": "node_modules/\n",
        "README.md": _README,
        "LICENSE": data_text("MIT.txt"),
        "src/strutil.js": _STRUTIL,
        "src/strutil.test.js": _STRUTIL_TEST,
    }
    return build_squash_history(
        dest,
        name=JS_NAME,
        repo=JS_REPO,
        files=files,
        prs=_PRS,
        start=_START,
        step=_STEP,
        maintainer=_MAINTAINER,
        contributor=_CONTRIBUTOR,
    )
