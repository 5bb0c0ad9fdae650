"""Example repositories of the other ecosystems, built deterministically like textkit.

``swe-forge/gokit`` (Go, standard library only) has the same kinds of pull requests as the
Python example: bug fixes and a feature whose tests fail before and pass after (admitted), a
fix whose tests already passed before (rejected: no_fail_to_pass) and a documentation-only
change (not a candidate). ``EXPECTED_GO`` records what the pipeline must conclude.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from swe_forge.example.skeleton import data_text
from swe_forge.git.writer import GITHUB_IDENTITY, Identity, RepoWriter

GO_OWNER = "swe-forge"
GO_NAME = "gokit"
GO_REPO = f"{GO_OWNER}/{GO_NAME}"
GO_MODULE = "github.com/swe-forge/gokit"
_START = datetime(2024, 3, 4, 9, 0, 0, tzinfo=UTC)
_STEP = timedelta(hours=6)
_MAINTAINER = Identity("Ines Duarte", "ines.duarte@gokit.example.org")
_CONTRIBUTOR = Identity("Tomasz Wrona", "tomasz.wrona@gokit.example.org")

_GO_MOD = f"module {GO_MODULE}\n\ngo 1.21\n"
_README = "# gokit\n\nSmall string helpers for Go.\n\nMIT, see LICENSE.\n"
_STRUTIL = """\
// Package strutil holds small string helpers.
package strutil

import "strings"

// Truncate shortens s to at most width runes, ending with "..." when it cut something.
func Truncate(s string, width int) string {
\tr := []rune(s)
\tif len(r) < width {
\t\treturn s
\t}
\tif width <= 3 {
\t\treturn string(r[:width])
\t}
\treturn string(r[:width-3]) + "..."
}

// Reverse returns s with its runes in reverse order.
func Reverse(s string) string {
\tr := []rune(s)
\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
\t\tr[i], r[j] = r[j], r[i]
\t}
\treturn string(r)
}

// Squeeze collapses runs of spaces into one space.
func Squeeze(s string) string {
\treturn strings.Join(strings.Split(s, "  "), " ")
}
"""
_STRUTIL_TEST = """\
package strutil

import "testing"

func TestTruncateShort(t *testing.T) {
\tif got := Truncate("abc", 10); got != "abc" {
\t\tt.Fatalf("got %q", got)
\t}
}

func TestTruncateLong(t *testing.T) {
\tif got := Truncate("abcdefghij", 6); got != "abc..." {
\t\tt.Fatalf("got %q", got)
\t}
}

func TestReverse(t *testing.T) {
\tif got := Reverse("héllo"); got != "olléh" {
\t\tt.Fatalf("got %q", got)
\t}
}
"""


@dataclass(frozen=True)
class ExamplePR:
    """A pull request of an example repository: its edits are made on a branch, committed by
    the contributor and squash-merged into main."""

    number: int
    branch: str
    title: str
    body: str
    edits: tuple[tuple[str, str, str], ...]  # (path, old text or "" to create, new text)


_PR = ExamplePR


def build_squash_history(
    dest: Path,
    *,
    name: str,
    repo: str,
    files: dict[str, str],
    prs: tuple[ExamplePR, ...],
    start: datetime,
    step: timedelta,
    maintainer: Identity,
    contributor: Identity,
) -> str:
    """Build an example repository at ``dest`` (new or empty): ``files`` in an initial commit
    by the maintainer, then each of ``prs`` on its branch, squash-merged into main (commits
    ``step`` apart from ``start``), and ``origin`` set to GitHub's ``repo``; returns the head
    commit. The same arguments give the same commits."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    writer = RepoWriter.init(dest, "main", author=maintainer)
    when = start
    for path, content in files.items():
        writer.write_text(path, content)
    writer.commit(f"Initial commit: {name} 0.1.0\n", when, author=maintainer, committer=maintainer)
    for pr in prs:
        writer.create_branch(pr.branch, "main", checkout=True)
        for path, old, new in pr.edits:
            if not old:
                writer.write_text(path, new)
                continue
            current = writer.read_text(path)
            if current.count(old) != 1:
                raise ValueError(f"{name} PR {pr.number}: {old!r} is not once in {path}")
            writer.write_text(path, current.replace(old, new))
        when += step
        writer.commit(pr.title + "\n", when, author=contributor, committer=contributor)
        when += step
        writer.squash_pr(
            pr.number,
            pr.branch,
            pr.title,
            pr.body,
            when=when,
            into="main",
            author=contributor,
            committer=GITHUB_IDENTITY,
            delete_branch=True,
        )
    writer.add_remote("origin", f"https://github.com/{repo}.git")
    return writer.head()


_PRS: tuple[_PR, ...] = (
    _PR(
        1,
        "fix-truncate-exact",
        "Truncate cuts strings that exactly fit the width",
        'Truncate("abcdef", 6) returns "abc..." although the string fits in 6 runes; '
        "a string exactly as long as the width must come back unchanged.",
        (
            ("strutil/strutil.go", "\tif len(r) < width {", "\tif len(r) <= width {"),
            (
                "strutil/strutil_test.go",
                "func TestReverse(",
                "func TestTruncateExactWidth(t *testing.T) {\n"
                '\tif got := Truncate("abcdef", 6); got != "abcdef" {\n'
                '\t\tt.Fatalf("got %q", got)\n\t}\n}\n\nfunc TestReverse(',
            ),
        ),
    ),
    _PR(
        2,
        "squeeze-runs",
        "Squeeze leaves double spaces behind runs of three or more",
        'Squeeze("a    b") gives "a  b": runs longer than two spaces are only halved. '
        "Every run of spaces should become exactly one space.",
        (
            (
                "strutil/strutil.go",
                '\treturn strings.Join(strings.Split(s, "  "), " ")',
                '\tfor strings.Contains(s, "  ") {\n'
                '\t\ts = strings.ReplaceAll(s, "  ", " ")\n\t}\n\treturn s',
            ),
            (
                "strutil/squeeze_test.go",
                "",
                'package strutil\n\nimport "testing"\n\n'
                "func TestSqueezeLongRuns(t *testing.T) {\n"
                "\tfor _, n := range []int{2, 3, 4, 7} {\n"
                '\t\tin := "a" + spaces(n) + "b"\n'
                '\t\tif got := Squeeze(in); got != "a b" {\n'
                '\t\t\tt.Errorf("Squeeze(%q) = %q", in, got)\n\t\t}\n\t}\n}\n\n'
                "func TestSqueezeNoSpaces(t *testing.T) {\n"
                '\tif got := Squeeze("ab"); got != "ab" {\n\t\tt.Fatalf("got %q", got)\n\t}\n}\n\n'
                'func spaces(n int) string {\n\ts := ""\n\tfor i := 0; i < n; i++ {\n'
                '\t\ts += " "\n\t}\n\treturn s\n}\n',
            ),
        ),
    ),
    _PR(
        3,
        "words",
        "Add Words, which splits on any run of white space",
        "Callers split on single spaces and get empty words for tabs and runs. Add "
        "strutil.Words(s) returning the words of s separated by any white space.",
        (
            (
                "strutil/strutil.go",
                "// Squeeze collapses",
                "// Words returns the words of s, separated by any run of white space.\n"
                "func Words(s string) []string {\n\treturn strings.Fields(s)\n}\n\n"
                "// Squeeze collapses",
            ),
            (
                "strutil/words_test.go",
                "",
                'package strutil\n\nimport "testing"\n\n'
                "func TestWords(t *testing.T) {\n"
                '\tgot := Words(" go\\tis  fun ")\n'
                '\tif len(got) != 3 || got[0] != "go" || got[2] != "fun" {\n'
                '\t\tt.Fatalf("got %q", got)\n\t}\n}\n',
            ),
        ),
    ),
    _PR(
        4,
        "reverse-doc",
        "Reverse: say that it works on runes",
        "The doc comment should say Reverse keeps multi-byte characters whole; a test "
        "pins that down.",
        (
            (
                "strutil/strutil.go",
                "// Reverse returns s with its runes in reverse order.",
                "// Reverse returns s with its runes (not bytes) in reverse order.",
            ),
            (
                "strutil/strutil_test.go",
                "func TestReverse(",
                "func TestReverseKeepsRunes(t *testing.T) {\n"
                '\tif got := Reverse("ñ"); got != "ñ" {\n\t\tt.Fatalf("got %q", got)\n\t}\n}\n\n'
                "func TestReverse(",
            ),
        ),
    ),
    _PR(
        5,
        "readme",
        "README: add an example",
        "Show Truncate in the README.",
        (
            (
                "README.md",
                "Small string helpers for Go.\n",
                'Small string helpers for Go:\n`strutil.Truncate("hello", 4)` gives `"h..."`.\n',
            ),
        ),
    ),
)

#: What the pipeline must conclude about each pull request of gokit.
EXPECTED_GO: dict[int, dict[str, object]] = {
    1: {"candidate": True, "admitted": True, "FAIL_TO_PASS": ["strutil::TestTruncateExactWidth"]},
    2: {"candidate": True, "admitted": True, "FAIL_TO_PASS": ["strutil::TestSqueezeLongRuns"]},
    3: {"candidate": True, "admitted": True, "FAIL_TO_PASS": ["strutil::TestWords"]},
    4: {"candidate": True, "admitted": False, "reason": "no_fail_to_pass"},
    5: {"candidate": False},
}


def create_go_example(dest: Path) -> str:
    """Build ``swe-forge/gokit`` at ``dest`` (new or empty); returns the head commit."""
    files = {
        "go.mod": _GO_MOD,
        "README.md": _README,
        "LICENSE": data_text("MIT.txt"),
        "strutil/strutil.go": _STRUTIL,
        "strutil/strutil_test.go": _STRUTIL_TEST,
    }
    return build_squash_history(
        dest,
        name=GO_NAME,
        repo=GO_REPO,
        files=files,
        prs=_PRS,
        start=_START,
        step=_STEP,
        maintainer=_MAINTAINER,
        contributor=_CONTRIBUTOR,
    )
