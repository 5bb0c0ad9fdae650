"""The history of the example project: pull requests and direct commits, in order.

Each step edits the files of :mod:`swe_forge.example.skeleton` by exact search and replace
(an edit whose ``old`` text is not found exactly once stops the build, so a drift between the
two modules cannot go unnoticed). ``swe_forge/example/expected.json`` records what the pipeline
must conclude about every pull request; ``tests/integration/test_example_repo.py`` proves it.
"""

from __future__ import annotations

from swe_forge.example.history_early import (
    PR_CI,
    PR_DOCS,
    PR_FORMAT_TESTS,
    PR_FRACTIONAL_DURATION,
    PR_TRUNCATE,
    PR_WRAP_EXACT_WIDTH,
)
from swe_forge.example.skeleton import data_text, text
from swe_forge.example.steps import (
    AMARA,
    JONAS,
    LIN,
    MAINTAINER,
    PIOTR,
    Append,
    Commit,
    DirectCommit,
    PullRequest,
    Replace,
    Step,
    Write,
)

PR_WORD_COUNTS_REFACTOR = PullRequest(
    number=7,
    kind="already_passing",
    title="Simplify word_counts() and precompile the word pattern",
    body=text("""
`word_counts()` built its `Counter` one word at a time in a Python loop and looked the regular
expression up on every call. Passing the matches to `Counter` directly and compiling the
pattern once makes it about twice as fast on large documents. No change in behaviour; the new
tests pin the current handling of apostrophes and of large inputs.
"""),
    branch="faster-word-counts",
    author=JONAS,
    strategy="merge",
    commits=(
        Commit(
            "Build the Counter in one go and precompile the pattern",
            (
                Replace(
                    "src/textkit/stats.py",
                    '"the", "to"})\n',
                    '"the", "to"})\n_WORD = re.compile(r"[a-z0-9\']+")\n',
                ),
                Replace(
                    "src/textkit/stats.py",
                    text("""
    counts: Counter[str] = Counter()
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        counts[word] += 1
    return counts
"""),
                    "    return Counter(_WORD.findall(text.lower()))\n",
                ),
            ),
        ),
        Commit(
            "Pin word_counts() behaviour with tests",
            (
                Replace(
                    "tests/test_stats.py",
                    "\n\ndef test_top_words_skips_stopwords(sample_text):",
                    text("""


def test_word_counts_keeps_apostrophes():
    assert word_counts("Don't stop. don't!") == {"don't": 2, "stop": 1}


def test_word_counts_large_input():
    assert word_counts("spam eggs " * 10_000) == {"spam": 10_000, "eggs": 10_000}


def test_top_words_skips_stopwords(sample_text):"""),
                ),
            ),
        ),
    ),
)

PR_SLUG_ACCENTS = PullRequest(
    number=8,
    kind="bugfix",
    title="slugify() mangles accented letters",
    body=text("""
Accented letters are treated as punctuation, so words get split in the middle:

```python
>>> textkit.slugify("Crème brûlée")
'cr-me-br-l-e'
```

The expected slug is `creme-brulee`: letters with diacritics should be transliterated to
their base ASCII letter (`é` -> `e`, `ü` -> `u`, `ï` -> `i`) before the slug is built.
"""),
    branch="slugify-accents",
    author=LIN,
    strategy="squash",
    commits=(
        Commit(
            "Transliterate accented letters in slugify()",
            (
                Replace(
                    "src/textkit/slug.py",
                    "import re\n",
                    "import re\nimport unicodedata\n",
                ),
                Replace(
                    "src/textkit/slug.py",
                    "    slug = _NON_ALNUM.sub(sep, text.lower()).strip(sep)\n",
                    text("""
    # Decompose accented letters ("é" -> "e" + combining accent), then drop the accents.
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_ALNUM.sub(sep, ascii_text.lower()).strip(sep)
"""),
                ),
            ),
        ),
        Commit(
            "Add tests with accented titles",
            (
                Replace(
                    "tests/test_slug.py",
                    "\n\ndef test_slugify_custom_separator():",
                    text("""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Crème brûlée", "creme-brulee", id="french"),
        pytest.param("naïve café", "naive-cafe", id="diaeresis"),
        pytest.param("Zürich Öffnungszeiten", "zurich-offnungszeiten", id="umlaut"),
    ],
)
def test_slugify_transliterates_accents(text, expected):
    assert slugify(text) == expected


def test_slugify_custom_separator():"""),
                ),
            ),
        ),
    ),
)

PR_TOP_WORDS_IGNORE = PullRequest(
    number=11,
    kind="flaky",
    title="top_words() crashes when `ignore` is a list",
    body=text("""
`top_words()` documents `ignore` as any iterable of words, but only a set works. Passing a
list or a tuple crashes:

```python
>>> textkit.top_words("red green red green blue blue blue", n=2, ignore=["blue"])
Traceback (most recent call last):
  ...
TypeError: unsupported operand type(s) for -: 'set' and 'list'
```

Expected the two most frequent words other than `blue`. Words in `ignore` should also match
regardless of case, like the counted words do.
"""),
    branch="top-words-ignore-iterable",
    author=PIOTR,
    strategy="merge",
    # Opened before #10 was merged: the branch starts from an older main.
    based_on=9,
    commits=(
        Commit(
            "Accept any iterable for top_words(ignore=...)",
            (
                Replace(
                    "src/textkit/stats.py",
                    "    candidates = set(counts) - ignore\n",
                    "    candidates = set(counts).difference(word.lower() for word in ignore)\n",
                ),
                Append(
                    "tests/test_stats.py",
                    text("""


def test_top_words_accepts_a_list_of_ignored_words():
    text = "red green red green blue blue blue"
    assert top_words(text, n=2, ignore=["blue"]) == ["red", "green"]
"""),
                ),
            ),
        ),
    ),
)

#: Test fixture of PR #10: a made-up binary record format, with NUL and non-UTF-8 bytes.
BINARY_FIXTURE = (
    b"TKBLOB\x00\x01"
    + bytes([0xFF, 0xFE, 0x00, 0x00, 0x80, 0x81, 0xC3, 0x28])
    + bytes(range(256))
    + b"\x00" * 16
)

PR_BINARY_DETECT = PullRequest(
    number=10,
    kind="binary",
    title="Add is_probably_binary() to skip binary files",
    body=text("""
Tools built on textkit feed it whatever files they find and crash on binary content. This adds
`textkit.detect.is_probably_binary(data)`, which uses git's heuristic: a NUL byte in the first
8000 bytes means binary, otherwise the sample must decode as UTF-8. A binary fixture is added
for the tests.
"""),
    branch="detect-binary",
    author=AMARA,
    strategy="squash",
    commits=(
        Commit(
            "Add textkit.detect.is_probably_binary()",
            (
                Write(
                    "src/textkit/detect.py",
                    text('''
"""Guess whether bytes are text or binary data."""

from __future__ import annotations

# Like git, only look at the start of the data.
_SNIFF_BYTES = 8000


def is_probably_binary(data: bytes) -> bool:
    """Return True when ``data`` looks like binary content rather than UTF-8 text.

    A NUL byte in the first 8000 bytes means binary; otherwise those bytes must decode as
    UTF-8 (a multi-byte character cut off at the end of the sample is allowed).
    """
    sample = data[:_SNIFF_BYTES]
    if b"\\0" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason != "unexpected end of data"
    return False
'''),
                ),
            ),
        ),
        Commit(
            "Test is_probably_binary() with a binary fixture",
            (
                Write("tests/data/blob.bin", BINARY_FIXTURE),
                Replace(
                    "tests/conftest.py",
                    '"""Shared fixtures for the textkit test suite."""\n\nimport pytest\n',
                    '"""Shared fixtures for the textkit test suite."""\n\n'
                    "from pathlib import Path\n\nimport pytest\n",
                ),
                Append(
                    "tests/conftest.py",
                    text('''


@pytest.fixture
def data_dir() -> Path:
    """The directory of binary and text fixtures."""
    return Path(__file__).parent / "data"
'''),
                ),
                Write(
                    "tests/test_detect.py",
                    text("""
from textkit.detect import is_probably_binary


def test_binary_fixture_is_binary(data_dir):
    assert is_probably_binary((data_dir / "blob.bin").read_bytes())


def test_utf8_text_is_not_binary():
    assert not is_probably_binary("naïve café\\n".encode())


def test_invalid_utf8_is_binary():
    assert is_probably_binary(b"caf\\xe9 au lait")


def test_multibyte_character_cut_by_the_sample_is_text():
    assert not is_probably_binary(("a" * 7999 + "é").encode())
"""),
                ),
            ),
        ),
    ),
)

PR_WEEKS = PullRequest(
    number=12,
    kind="no_tests",
    title="Support weeks in durations",
    body=text("""
Durations of several weeks (sprint lengths, retention periods) have to be written in days.
This adds a `w` unit to `parse_duration()`, and `format_duration()` uses it too.
"""),
    branch="duration-weeks",
    author=JONAS,
    strategy="squash",
    commits=(
        Commit(
            "Add the w (weeks) unit",
            (
                Replace(
                    "src/textkit/duration.py",
                    '_UNITS = {"d": 86400,',
                    '_UNITS = {"w": 604800, "d": 86400,',
                ),
                Replace(
                    "src/textkit/duration.py",
                    '\\s*([dhms])")',
                    '\\s*([wdhms])")',
                ),
                Replace(
                    "src/textkit/duration.py",
                    "units being ``d``, ``h``,",
                    "units being ``w``, ``d``, ``h``,",
                ),
                Replace(
                    "docs/usage.md",
                    "| `d`  | days    |\n",
                    "| `w`  | weeks   |\n| `d`  | days    |\n",
                ),
            ),
        ),
    ),
)

PR_READING_TIME = PullRequest(
    number=9,
    kind="bugfix",
    title="reading_time() rounds down instead of up",
    body=text("""
`reading_time()` is documented to count a partial minute as a whole one, so that any
non-empty text takes at least a minute. It rounds down instead:

```python
>>> textkit.reading_time("a short note")
0
>>> textkit.reading_time("word " * 250)   # 1.25 minutes at 200 wpm
1
```

Expected 1 and 2. Empty text should still take 0 minutes.
"""),
    branch="reading-time-round-up",
    author=LIN,
    strategy="merge",
    commits=(
        Commit(
            "Round reading_time() up",
            (
                Replace("src/textkit/stats.py", "import re\n", "import math\nimport re\n"),
                Replace(
                    "src/textkit/stats.py",
                    "    return words // wpm\n",
                    "    return math.ceil(words / wpm)\n",
                ),
                Replace(
                    "tests/test_stats.py",
                    "from textkit import reading_time, top_words, word_counts\n",
                    "import pytest\n\nfrom textkit import reading_time, top_words, word_counts\n",
                ),
                Replace(
                    "tests/test_stats.py",
                    '    assert reading_time("word " * 400) == 2\n',
                    text("""
    assert reading_time("word " * 400) == 2


@pytest.mark.parametrize(("words", "minutes"), [(1, 1), (250, 2), (401, 3)])
def test_reading_time_rounds_up(words, minutes):
    assert reading_time("word " * words) == minutes
"""),
                ),
            ),
        ),
    ),
)

RELICENSE = DirectCommit(
    message=text("""
Relicense textkit under GPL-3.0-or-later

All contributors agreed to the change; see the discussion in the project's mailing list.
"""),
    edits=(
        Write("LICENSE", data_text("GPL-3.0.txt")),
        Replace(
            "pyproject.toml", 'license = {text = "MIT"}', 'license = {text = "GPL-3.0-or-later"}'
        ),
        Replace(
            "pyproject.toml",
            '    "License :: OSI Approved :: MIT License",\n',
            '    "License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)",\n',
        ),
        Replace(
            "README.md", "MIT, see [LICENSE](LICENSE).", "GPL-3.0-or-later, see [LICENSE](LICENSE)."
        ),
    ),
    author=MAINTAINER,
)

PR_SLUG_MAX_LENGTH = PullRequest(
    number=13,
    kind="after_license_change",
    title="slugify() can end with a separator when max_length cuts it",
    body=text("""
When `max_length` cuts the slug right after a separator, the separator is kept:

```python
>>> textkit.slugify("Hello World", max_length=6)
'hello-'
```

Expected `'hello'`: a slug should never end with the separator, whatever its length limit.
"""),
    branch="slug-max-length-separator",
    author=PIOTR,
    strategy="merge",
    commits=(
        Commit(
            "Strip a trailing separator after cutting the slug",
            (
                Replace(
                    "src/textkit/slug.py",
                    "        slug = slug[:max_length]\n",
                    "        slug = slug[:max_length].rstrip(sep)\n",
                ),
                Append(
                    "tests/test_slug.py",
                    text("""


@pytest.mark.parametrize(
    ("text", "max_length", "expected"),
    [("Hello World", 6, "hello"), ("a b c", 4, "a-b")],
    ids=["word", "letters"],
)
def test_slugify_max_length_never_ends_with_separator(text, max_length, expected):
    assert slugify(text, max_length=max_length) == expected
"""),
                ),
            ),
        ),
    ),
)

PR_FORMAT_ZERO = PullRequest(
    number=14,
    kind="after_license_change",
    title="format_duration(0) returns an empty string",
    body=text("""
`format_duration(0)` returns `""`, which shows up as a blank in reports and cannot be parsed
back with `parse_duration()`. Expected `"0s"`.
"""),
    branch="format-zero-duration",
    author=JONAS,
    strategy="squash",
    commits=(
        Commit(
            "Format a zero duration as 0s",
            (
                Replace(
                    "src/textkit/duration.py",
                    '    return " ".join(parts)\n',
                    '    return " ".join(parts) or "0s"\n',
                ),
                Replace(
                    "src/textkit/duration.py",
                    '    """Format ``seconds`` as ``"1h 30m"``, leaving out zero parts.\n',
                    '    """Format ``seconds`` as ``"1h 30m"``, leaving out zero parts '
                    '(``0`` is ``"0s"``).\n',
                ),
                Append(
                    "tests/test_duration.py",
                    text("""


def test_format_duration_zero():
    assert format_duration(0) == "0s"
    assert parse_duration(format_duration(0)) == 0
"""),
                ),
            ),
        ),
    ),
)

#: The whole history after the initial commit, oldest first.
HISTORY: tuple[Step, ...] = (
    PR_WRAP_EXACT_WIDTH,
    PR_DOCS,
    PR_FRACTIONAL_DURATION,
    PR_FORMAT_TESTS,
    PR_TRUNCATE,
    PR_CI,
    PR_WORD_COUNTS_REFACTOR,
    PR_SLUG_ACCENTS,
    PR_READING_TIME,
    PR_BINARY_DETECT,
    PR_TOP_WORDS_IGNORE,
    PR_WEEKS,
    RELICENSE,
    PR_SLUG_MAX_LENGTH,
    PR_FORMAT_ZERO,
)


def pull_requests() -> tuple[PullRequest, ...]:
    """Return the pull requests of :data:`HISTORY`, in merge order."""
    return tuple(step for step in HISTORY if isinstance(step, PullRequest))
