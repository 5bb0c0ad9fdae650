"""The example history's first pull requests (#1 to #6, in merge order); the rest, and the
whole history in order, are in :mod:`swe_forge.example.history`."""

from __future__ import annotations

from swe_forge.example.skeleton import text
from swe_forge.example.steps import (
    AMARA,
    JONAS,
    LIN,
    MAINTAINER,
    PIOTR,
    Append,
    Commit,
    PullRequest,
    Replace,
    Write,
)

# ---------------------------------------------------------------------------- pull requests

PR_WRAP_EXACT_WIDTH = PullRequest(
    number=1,
    kind="bugfix",
    title="Fix wrap() breaking lines that exactly fit the width",
    body=text("""
`wrap()` starts a new line one character too early: a line whose length is exactly `width`
is never produced, the last word goes to the next line instead.

```python
>>> textkit.wrap("aaa bbb ccc", width=7)
['aaa', 'bbb', 'ccc']
```

Expected `['aaa bbb', 'ccc']`, since `"aaa bbb"` is 7 characters long and fits. `fill()` has
the same problem: `fill("one two", width=7)` gives `"one\\ntwo"` instead of `"one two"`.
"""),
    branch="fix-wrap-exact-width",
    author=LIN,
    strategy="merge",
    commits=(
        Commit(
            "Allow a line to be exactly `width` characters long",
            (
                Replace(
                    "src/textkit/wrap.py",
                    "if current and len(current) + 1 + len(word) >= width:",
                    "if current and len(current) + 1 + len(word) > width:",
                ),
            ),
        ),
        Commit(
            "Add regression tests for lines of exactly `width` characters",
            (
                Append(
                    "tests/test_wrap.py",
                    text("""


def test_wrap_line_may_fill_the_width_exactly():
    assert wrap("aaa bbb ccc", width=7) == ["aaa bbb", "ccc"]


def test_fill_exact_width():
    assert fill("one two", width=7) == "one two"
"""),
                ),
            ),
        ),
    ),
)

PR_DOCS = PullRequest(
    number=2,
    kind="docs",
    title="Document the duration syntax and add a quick start",
    body=text("""
The README did not show any code, and the usage page did not say which units
`parse_duration()` understands. This adds a short quick start to the README and a table of
duration units to the usage page.
"""),
    branch="docs-quick-start",
    author=AMARA,
    strategy="squash",
    commits=(
        Commit(
            "Add a quick start to the README",
            (
                Replace(
                    "README.md",
                    "## Development\n",
                    text("""
## Quick start

```python
>>> import textkit
>>> textkit.slugify("Release notes: version 2!")
'release-notes-version-2'
>>> textkit.parse_duration("2h15m")
8100
```

## Development
"""),
                ),
            ),
        ),
        Commit(
            "Document duration units",
            (
                Replace(
                    "docs/usage.md",
                    "## Wrapping\n",
                    text("""
A duration is one or more `<number><unit>` parts, optionally separated by spaces. Units are
case-insensitive:

| unit | meaning |
|------|---------|
| `d`  | days    |
| `h`  | hours   |
| `m`  | minutes |
| `s`  | seconds |

`format_duration()` leaves out the parts that are zero.

## Wrapping
"""),
                ),
            ),
        ),
    ),
)

PR_FRACTIONAL_DURATION = PullRequest(
    number=3,
    kind="bugfix",
    title="parse_duration() misreads fractional values",
    body=text("""
`parse_duration()` silently returns wrong results for durations with a decimal point. The
part before the dot is dropped and only the digits after it are used:

```python
>>> textkit.parse_duration("1.5h")
18000
>>> textkit.parse_duration("0.5m")
300
```

Expected 5400 (one and a half hours) and 30 seconds. Fractional values should be accepted
for every unit and the total rounded to whole seconds.
"""),
    branch="fractional-durations",
    author=PIOTR,
    strategy="merge",
    commits=(
        Commit(
            "Accept fractional values in parse_duration()",
            (
                Replace(
                    "src/textkit/duration.py",
                    '_PART = re.compile(r"(\\d+)\\s*([dhms])")',
                    '_PART = re.compile(r"(\\d+(?:\\.\\d+)?)\\s*([dhms])")',
                ),
                Replace(
                    "src/textkit/duration.py",
                    '    ``s`` (case-insensitive), optionally separated by spaces: ``"1h30m"``, '
                    '``"2d 4h"``.\n',
                    '    ``s`` (case-insensitive), optionally separated by spaces: ``"1h30m"``, '
                    '``"2d 4h"``.\n    Numbers may have a fractional part (``"1.5h"``); the total '
                    "is rounded to whole seconds.\n",
                ),
                Replace(
                    "src/textkit/duration.py",
                    "    return sum(int(value) * _UNITS[unit] for value, unit in parts)",
                    "    return round(sum(float(value) * _UNITS[unit] for value, unit in parts))",
                ),
            ),
        ),
        Commit(
            "Test fractional durations",
            (
                Replace(
                    "tests/test_duration.py",
                    "\n\ndef test_parse_duration_allows_spaces():",
                    text("""


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1.5h", 5400), ("0.5m", 30), ("1h0.25m", 3615)],
)
def test_parse_duration_fractional(text, seconds):
    assert parse_duration(text) == seconds


def test_parse_duration_allows_spaces():"""),
                ),
            ),
        ),
    ),
)

PR_FORMAT_TESTS = PullRequest(
    number=4,
    kind="tests",
    title="Add tests for format_duration()",
    body=text("""
`format_duration()` was only covered by a round-trip test. This pins down its output for
seconds, minutes, hours and days, and the error on negative input.
"""),
    branch="format-duration-tests",
    author=JONAS,
    strategy="squash",
    commits=(
        Commit(
            "Add format_duration() tests",
            (
                Append(
                    "tests/test_duration.py",
                    text("""


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(59, "59s"), (60, "1m"), (3661, "1h 1m 1s"), (90061, "1d 1h 1m 1s"), (172800, "2d")],
    ids=["seconds", "minute", "hms", "dhms", "days"],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_rejects_negative():
    with pytest.raises(ValueError, match="negative"):
        format_duration(-1)
"""),
                ),
            ),
        ),
    ),
)

PR_TRUNCATE = PullRequest(
    number=5,
    kind="feature",
    title="Add truncate() to shorten text at a word boundary",
    body=text("""
There is no way to shorten a long title for display without cutting a word in half.

This adds `textkit.truncate(text, width, placeholder=" ...")`: it collapses whitespace and,
when the text is longer than `width`, keeps as many whole words as fit together with the
placeholder. For example `truncate("The quick brown fox jumps", 15)` returns
`"The quick ..."`. A placeholder longer than `width` is an error.
"""),
    branch="add-truncate",
    author=MAINTAINER,
    strategy="merge",
    commits=(
        Commit(
            "Add truncate()",
            (
                Append(
                    "src/textkit/wrap.py",
                    text('''


def truncate(text: str, width: int, placeholder: str = " ...") -> str:
    """Collapse whitespace in ``text`` and shorten it to at most ``width`` characters.

    When the text does not fit, as many whole words as fit are kept and ``placeholder`` is
    appended.

    Raises:
        ValueError: ``placeholder`` is longer than ``width``.
    """
    words = text.split()
    joined = " ".join(words)
    if len(joined) <= width:
        return joined
    if len(placeholder.strip()) > width:
        raise ValueError("placeholder is longer than width")
    kept = ""
    for word in words:
        candidate = f"{kept} {word}" if kept else word
        if len(candidate) + len(placeholder) > width:
            break
        kept = candidate
    return (kept + placeholder).strip()
'''),
                ),
                Replace(
                    "src/textkit/__init__.py",
                    "from textkit.wrap import fill, wrap\n",
                    "from textkit.wrap import fill, truncate, wrap\n",
                ),
                Replace(
                    "src/textkit/__init__.py",
                    '    "top_words",\n',
                    '    "top_words",\n    "truncate",\n',
                ),
                Replace(
                    "docs/usage.md",
                    "## Word statistics\n",
                    text("""
`truncate()` shortens text at a word boundary:

```python
>>> from textkit import truncate
>>> truncate("The quick brown fox jumps", 15)
'The quick ...'
```

## Word statistics
"""),
                ),
            ),
        ),
        Commit(
            "Test truncate()",
            (
                Write(
                    "tests/test_truncate.py",
                    text("""
import pytest

from textkit.wrap import truncate


def test_truncate_short_text_is_unchanged():
    assert truncate("Hello world", 20) == "Hello world"


def test_truncate_keeps_whole_words():
    assert truncate("The quick brown fox jumps", 15) == "The quick ..."


def test_truncate_collapses_whitespace():
    assert truncate("  lots   of\\n space ", 20) == "lots of space"


def test_truncate_custom_placeholder():
    assert truncate("one two three four", 12, placeholder="~") == "one two~"


def test_truncate_first_word_too_long():
    assert truncate("Supercalifragilistic", 10) == "..."


def test_truncate_rejects_long_placeholder():
    with pytest.raises(ValueError):
        truncate("one two three", 2, placeholder="[more]")
"""),
                ),
            ),
        ),
    ),
)

PR_CI = PullRequest(
    number=6,
    kind="ci",
    title="CI: test on Python 3.12 and cache pip downloads",
    body=text("""
Python 3.12 is out; add it to the test matrix. Also cache pip downloads between runs and
let the other versions finish when one of them fails.
"""),
    branch="ci-python-312",
    author=AMARA,
    strategy="squash",
    # Opened before #5 was merged: the branch starts from an older main.
    based_on=4,
    commits=(
        Commit(
            "Test on Python 3.12; cache pip",
            (
                Replace(
                    ".github/workflows/ci.yml",
                    text("""
    strategy:
      matrix:
        python-version: ["3.9", "3.10", "3.11"]
"""),
                    text("""
    strategy:
      fail-fast: false
      matrix:
        python-version: ["3.9", "3.10", "3.11", "3.12"]
"""),
                ),
                Replace(
                    ".github/workflows/ci.yml",
                    "          python-version: ${{ matrix.python-version }}\n",
                    "          python-version: ${{ matrix.python-version }}\n"
                    "          cache: pip\n",
                ),
            ),
        ),
    ),
)
