"""Files of the example project ``textkit`` as of its initial commit.

The project is small but realistic: a ``src/`` layout package with four modules, a pytest suite
with a conftest, MIT licence, README, docs and a GitHub Actions workflow. Some functions carry
the bugs that the pull requests in :mod:`swe_forge.example.history` fix, so keep the two modules
in step: a pull request edits this text by exact search and replace.

File contents are raw strings (the generated code has regular expressions with backslashes);
:func:`text` drops the newline that follows the opening quotes.
"""

from __future__ import annotations

from importlib import resources


def text(body: str) -> str:
    """Return ``body`` without its leading newline (lets file texts start on their own line)."""
    return body[1:] if body.startswith("\n") else body


def data_text(name: str) -> str:
    """Return the text of ``swe_forge/example/data/NAME`` (licence texts)."""
    return resources.files("swe_forge.example").joinpath("data", name).read_text("utf-8")


GITIGNORE = text(r"""
__pycache__/
*.py[cod]
*.egg-info/
build/
dist/
.pytest_cache/
.venv/
""")

PYPROJECT = text(r"""
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "textkit"
version = "0.1.0"
description = "Small, dependency-free text utilities: slugs, durations, wrapping, word stats."
readme = "README.md"
requires-python = ">=3.9"
license = {text = "MIT"}
authors = [{name = "The textkit authors", email = "maintainers@textkit.example.org"}]
keywords = ["text", "slug", "duration", "wrap"]
classifiers = [
    "Development Status :: 4 - Beta",
    "Intended Audience :: Developers",
    "License :: OSI Approved :: MIT License",
    "Operating System :: OS Independent",
    "Programming Language :: Python :: 3",
    "Programming Language :: Python :: 3 :: Only",
    "Topic :: Text Processing",
]

[project.optional-dependencies]
test = ["pytest"]

[project.urls]
Homepage = "https://github.com/swe-forge/textkit"
Issues = "https://github.com/swe-forge/textkit/issues"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]

[tool.ruff]
line-length = 100
target-version = "py39"
""")

README = text(r"""
# textkit

Small, dependency-free text utilities for Python 3.9+.

- `slugify()` turns titles into URL slugs;
- `parse_duration()` and `format_duration()` read and write durations such as `1h30m`;
- `wrap()` and `fill()` do greedy word wrapping;
- `word_counts()`, `top_words()` and `reading_time()` compute simple word statistics.

## Installation

```console
pip install textkit
```

## Development

```console
pip install -e ".[test]"
pytest
```

## License

MIT, see [LICENSE](LICENSE).
""")

DOCS_INDEX = text(r"""
# textkit documentation

textkit is a handful of small text helpers with no dependencies.

- [Usage](usage.md)
""")

DOCS_USAGE = text(r"""
# Usage

## Slugs

```python
>>> from textkit import slugify
>>> slugify("Hello, World!")
'hello-world'
>>> slugify("Hello, World!", sep="_")
'hello_world'
```

## Durations

```python
>>> from textkit import parse_duration, format_duration
>>> parse_duration("1h30m")
5400
>>> format_duration(5400)
'1h 30m'
```

## Wrapping

```python
>>> from textkit import wrap
>>> wrap("the quick brown fox", width=10)
['the quick', 'brown fox']
```

## Word statistics

```python
>>> from textkit import top_words
>>> top_words("the cat and the other cat", n=1)
['cat']
```
""")

CI_WORKFLOW = text(r"""
name: CI

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.9", "3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - name: Install
        run: python -m pip install -e ".[test]"
      - name: Test
        run: python -m pytest -q
""")

PKG_INIT = text(r'''
"""textkit: small, dependency-free text utilities."""

from textkit.duration import format_duration, parse_duration
from textkit.slug import slugify
from textkit.stats import reading_time, top_words, word_counts
from textkit.wrap import fill, wrap

__version__ = "0.1.0"

__all__ = [
    "fill",
    "format_duration",
    "parse_duration",
    "reading_time",
    "slugify",
    "top_words",
    "word_counts",
    "wrap",
]
''')

SLUG = text(r'''
"""Turn titles into URL slugs."""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str, sep: str = "-", max_length: int | None = None) -> str:
    """Return a lowercase ASCII slug of ``text``.

    Every run of characters other than ASCII letters and digits becomes one ``sep``, and
    leading and trailing separators are dropped. ``max_length`` caps the result.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    slug = _NON_ALNUM.sub(sep, text.lower()).strip(sep)
    if max_length is not None:
        slug = slug[:max_length]
    return slug
''')

DURATION = text(r'''
"""Parse and format human-friendly durations such as ``"1h30m"``."""

from __future__ import annotations

import re

# Largest unit first: format_duration relies on the order.
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)\s*([dhms])")


def parse_duration(text: str) -> int:
    """Return the number of seconds in ``text``.

    ``text`` is a sequence of ``<number><unit>`` parts, units being ``d``, ``h``, ``m`` and
    ``s`` (case-insensitive), optionally separated by spaces: ``"1h30m"``, ``"2d 4h"``.

    Raises:
        ValueError: ``text`` contains no duration.
    """
    parts = _PART.findall(text.strip().lower())
    if not parts:
        raise ValueError(f"invalid duration: {text!r}")
    return sum(int(value) * _UNITS[unit] for value, unit in parts)


def format_duration(seconds: int) -> str:
    """Format ``seconds`` as ``"1h 30m"``, leaving out zero parts.

    Raises:
        ValueError: ``seconds`` is negative.
    """
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    parts = []
    for unit, size in _UNITS.items():
        value, seconds = divmod(seconds, size)
        if value:
            parts.append(f"{value}{unit}")
    return " ".join(parts)
''')

WRAP = text(r'''
"""Greedy word wrapping."""

from __future__ import annotations


def wrap(text: str, width: int = 70) -> list[str]:
    """Split ``text`` into lines of at most ``width`` characters.

    Runs of whitespace, newlines included, are collapsed. Words are never broken: a word
    longer than ``width`` gets a line of its own.

    Raises:
        ValueError: ``width`` is less than 1.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) >= width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def fill(text: str, width: int = 70) -> str:
    """Return ``text`` wrapped to ``width`` as one string, lines separated by newlines."""
    return "\n".join(wrap(text, width))
''')

STATS = text(r'''
"""Word statistics: counts, most frequent words and reading time."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

STOPWORDS = frozenset({"a", "an", "and", "at", "in", "is", "it", "of", "on", "the", "to"})


def word_counts(text: str) -> Counter[str]:
    """Count the words of ``text``, ignoring case and punctuation (apostrophes are kept)."""
    counts: Counter[str] = Counter()
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        counts[word] += 1
    return counts


def top_words(text: str, n: int = 5, ignore: Iterable[str] = STOPWORDS) -> list[str]:
    """Return the ``n`` most frequent words of ``text``, most frequent first.

    Words in ``ignore`` (by default, common English stopwords) are skipped.
    """
    counts = word_counts(text)
    candidates = set(counts) - ignore
    return sorted(candidates, key=lambda word: counts[word], reverse=True)[:n]


def reading_time(text: str, wpm: int = 200) -> int:
    """Return how many minutes reading ``text`` takes at ``wpm`` words per minute.

    Partial minutes count as a whole minute, so any non-empty text takes at least one.
    """
    words = sum(word_counts(text).values())
    return words // wpm
''')

CONFTEST = text(r'''
"""Shared fixtures for the textkit test suite."""

import pytest


@pytest.fixture
def sample_text() -> str:
    """A paragraph where cat, dog and bird occur 4, 3 and 2 times."""
    return (
        "The cat chased the dog. The dog followed a bird, the cat watched the bird, "
        "and the dog barked at the cat. The cat slept."
    )
''')

TEST_SLUG = text(r"""
import pytest

from textkit import slugify


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello World", "hello-world"),
        ("  Leading and trailing  ", "leading-and-trailing"),
        ("Many   spaces -- and dashes", "many-spaces-and-dashes"),
        ("Python 3.12 released!", "python-3-12-released"),
    ],
    ids=["words", "padding", "runs", "digits"],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_slugify_custom_separator():
    assert slugify("Hello World", sep="_") == "hello_world"


def test_slugify_max_length():
    assert slugify("abcdef", max_length=3) == "abc"


def test_slugify_only_punctuation():
    assert slugify("!!!") == ""
""")

TEST_DURATION = text(r"""
import pytest

from textkit import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45), ("2m", 120), ("1h30m", 5400), ("1d2h", 93600), ("3H5S", 10805)],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


def test_parse_duration_allows_spaces():
    assert parse_duration(" 1h 30m ") == 5400


@pytest.mark.parametrize("text", ["", "soon"], ids=["empty", "word"])
def test_parse_duration_rejects_garbage(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_format_duration_roundtrip():
    assert format_duration(parse_duration("1h30m")) == "1h 30m"
""")

TEST_WRAP = text(r"""
import pytest

from textkit import fill, wrap


def test_wrap_breaks_between_words():
    assert wrap("the quick brown fox", width=10) == ["the quick", "brown fox"]


def test_wrap_long_word_gets_own_line():
    assert wrap("a extraordinarily b", width=5) == ["a", "extraordinarily", "b"]


def test_wrap_collapses_whitespace():
    assert wrap("one\n\n two   three", width=40) == ["one two three"]


def test_wrap_empty():
    assert wrap("") == []


def test_wrap_rejects_bad_width():
    with pytest.raises(ValueError):
        wrap("text", width=0)


def test_fill_joins_lines():
    assert fill("the quick brown fox", width=10) == "the quick\nbrown fox"
""")

TEST_STATS = text(r"""
from textkit import reading_time, top_words, word_counts


def test_word_counts_ignores_case_and_punctuation(sample_text):
    counts = word_counts(sample_text)
    assert counts["cat"] == 4
    assert counts["dog"] == 3
    assert counts["bird"] == 2


def test_top_words_skips_stopwords(sample_text):
    assert top_words(sample_text, n=3) == ["cat", "dog", "bird"]


def test_top_words_custom_ignore_set(sample_text):
    assert top_words(sample_text, n=2, ignore={"the", "cat"}) == ["dog", "bird"]


def test_reading_time_empty():
    assert reading_time("") == 0


def test_reading_time_whole_minutes():
    assert reading_time("word " * 400) == 2
""")


def initial_files() -> dict[str, str]:
    """Return the files of the initial commit, path -> text."""
    return {
        ".gitignore": GITIGNORE,
        ".github/workflows/ci.yml": CI_WORKFLOW,
        "LICENSE": data_text("MIT.txt"),
        "README.md": README,
        "docs/index.md": DOCS_INDEX,
        "docs/usage.md": DOCS_USAGE,
        "pyproject.toml": PYPROJECT,
        "src/textkit/__init__.py": PKG_INIT,
        "src/textkit/duration.py": DURATION,
        "src/textkit/slug.py": SLUG,
        "src/textkit/stats.py": STATS,
        "src/textkit/wrap.py": WRAP,
        "tests/conftest.py": CONFTEST,
        "tests/test_duration.py": TEST_DURATION,
        "tests/test_slug.py": TEST_SLUG,
        "tests/test_stats.py": TEST_STATS,
        "tests/test_wrap.py": TEST_WRAP,
    }
