"""Go's canary writer: sites of table-driven, testify and subtest tests, their roles, their
perturbations, copies (and, with the go command, that a perturbed copy fails where the
unperturbed one passes)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems import syntax, writer_for
from swe_forge.ecosystems.canaries import Site, punctuation_only
from swe_forge.errors import UsageError

W = writer_for("go")
PATH = "parse/parse_test.go"
SOURCE = b"""package parse

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var splitCases = []struct {
	name string
	in   string
	want []string
}{
	{"simple", "a,b", []string{"a", "b"}},
	{name: "with spaces", in: " a , b ", want: []string{"a", "b"}},
}

var shared = map[string]int{"one": 1}

func TestSplit(t *testing.T) {
	for _, tc := range splitCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Split(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseInt(t *testing.T) {
	tests := map[string]struct {
		input   string
		base    int
		want    int64
		wantErr bool
	}{
		"decimal": {input: "42", base: 10, want: 42},
		"hex":     {input: "ff", base: 16, want: 0xFF},
		"bad":     {input: "zz", base: 10, wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseInt(tt.input, tt.base)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTestify(t *testing.T) {
	got := Join([]string{"x", "y"}, "-")
	assert.Equal(t, "x-y", got, "joined %s", "twice")
	require.Len(t, Split("a,b,c"), 3)
	assert.Equalf(t, 2.5, Ratio(5, 2), "ratio of %d", 5)
	assert.Contains(t, got, "-")
	assert.True(t, Count("aaa") == 3, "count")
	assert.NotEqual(t, "zz", got)
	if diff := cmp.Diff([]int{1, 2}, Ints("1,2")); diff != "" {
		t.Errorf("mismatch (-want +got):\\n%s", diff)
	}
	want := `raw\\n`
	if got := Raw(); got != want {
		t.Fatal("raw")
	}
	if shared["one"] != 1 {
		t.Fatal("shared")
	}
	switch Kind("x") {
	case "x":
	default:
		t.Fatal("kind")
	}
}

func TestSubtests(t *testing.T) {
	t.Run("upper", func(t *testing.T) {
		if Upper("ab") != "AB" {
			t.Error("upper")
		}
	})
	t.Run("lower case", func(t *testing.T) {
		if Lower("AB") != "ab" {
			t.Error("lower")
		}
	})
}

func TestPositional(t *testing.T) {
	type tc struct {
		in, out string
		n       int
	}
	for i, c := range []tc{{"a", "A", 1}, {"b", "B", 2}} {
		if got := Upper(c.in); got != c.out || len(got) != c.n {
			t.Errorf("%d: got %q", i, got)
		}
		if 'a' != Rune(c.in) {
			panic("rune")
		}
	}
}

func TestUnguarded(t *testing.T) {
	if Count("b") == 1 {
		t.Fatal("one")
	}
	tags := []struct {
		F [2]int `json:"f"`
	}{}
	_ = tags
	t.Logf("seen %d", 4)
}

func helper() string { return "helper" }
"""


def sites_of(test: str) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.role) for s in W.sites(PATH, SOURCE, [test])]


def test_test_files_are_the_package_s_test_files() -> None:
    files = ["parse/parse_test.go", "parse/parse.go", "parse/x/x_test.go", "a_test.go"]
    assert W.test_files("parse::TestSplit/simple", files) == ["parse/parse_test.go"]
    assert W.test_files(".::TestRoot", files) == ["a_test.go"]


def test_a_package_level_table_used_by_one_test() -> None:
    assert sites_of("parse::TestSplit") == [
        ('"a,b"', "string", "other"),
        ('"a"', "string", "expected"),
        ('"b"', "string", "expected"),
        ('" a , b "', "string", "other"),
        ('"a"', "string", "expected"),
        ('"b"', "string", "expected"),
    ]


def test_a_subtest_keeps_its_own_row_and_never_its_name() -> None:
    assert sites_of("parse::TestSplit/with_spaces") == [
        ('" a , b "', "string", "other"),
        ('"a"', "string", "expected"),
        ('"b"', "string", "expected"),
    ]
    got = W.sites(PATH, SOURCE, ["parse::TestSplit/with_spaces"])
    assert [s.index for s in got] == [0, 1, 2]
    assert all(s.test == "parse::TestSplit/with_spaces" for s in got)


def test_a_map_table_by_subtest_name() -> None:
    assert sites_of("parse::TestParseInt/hex") == [
        ('"ff"', "string", "other"),
        ("16", "int", "other"),
        ("0xFF", "int", "expected"),
    ]
    every = sites_of("parse::TestParseInt")
    assert ("true", "bool", "expected") in every  # wantErr, compared with !=
    assert not any(text in ('"decimal"', '"hex"', '"bad"') for text, _, _ in every)


def test_testify_cmp_and_bindings() -> None:
    got = sites_of("parse::TestTestify")
    roles = {}
    for text, _, role in got:
        roles.setdefault(text, []).append(role)
    assert roles['"x-y"'] == ["expected"]
    assert roles["3"] == ["expected", "expected"]  # require.Len, == in assert.True
    assert roles["2.5"] == ["expected"]
    assert roles['"-"'] == ["other", "expected"]  # Join's input, Contains' element
    assert roles['"zz"'] == ["other"]  # NotEqual decides nothing a twin can use
    assert roles["1"] == ["expected", "expected"]  # cmp.Diff's want, shared["one"] != 1
    assert roles["`raw\\n`"] == ["expected"]  # want := ..., then got != want
    # Messages, their arguments, the empty diff and the case label are no sites.
    for never in ('"joined %s"', '"twice"', '"ratio of %d"', '"count"', '""', '"raw"'):
        assert never not in roles
    assert roles['"x"'] == ["other", "other"]  # Join's input, Kind("x"); not the case "x"


def test_literal_subtests() -> None:
    assert sites_of("parse::TestSubtests/lower_case") == [
        ('"AB"', "string", "other"),
        ('"ab"', "string", "expected"),
    ]
    assert [t for t, _, _ in sites_of("parse::TestSubtests")] == ['"ab"', '"AB"', '"AB"', '"ab"']


def test_positional_rows_named_by_their_struct() -> None:
    assert sites_of("parse::TestPositional") == [
        ('"a"', "string", "other"),
        ('"A"', "string", "expected"),
        ("1", "int", "expected"),
        ('"b"', "string", "other"),
        ('"B"', "string", "expected"),
        ("2", "int", "expected"),
        ("'a'", "char", "expected"),
    ]


def test_unguarded_comparisons_tags_and_logs() -> None:
    # == fails the test when it holds: perturbing its literal proves nothing (other); the
    # struct tag, the array length and the log are no sites. No literal is expected, so the
    # failing branch's condition is the one expected site (a guard: negated in a decoy).
    assert sites_of("parse::TestUnguarded") == [
        ('Count("b") == 1', "guard", "expected"),
        ('"b"', "string", "other"),
        ("1", "int", "other"),
    ]


def test_an_indexed_expectation_is_the_whole_value() -> None:
    source = b"""package p
import "testing"
func TestIdx(t *testing.T) {
	want := []string{"a", "b"}
	got := Split("a b")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d", i)
		}
	}
}
"""
    got = [(s.text, s.role) for s in W.sites("p_test.go", source, [".::TestIdx"])]
    assert got == [('"a"', "expected"), ('"b"', "expected"), ('"a b"', "other")]


def test_method_equality_and_mutated_names() -> None:
    source = b"""package p
import "testing"
var calls = 0
func TestM(t *testing.T) {
	calls = 0
	want := "x"
	want = Prefix() + want
	if got := Parse("1"); !got.Equal(Ratio(3)) || got.String() != want {
		t.Fatal("m")
	}
	if calls != 1 {
		t.Fatal("calls")
	}
}
"""
    # calls and want are assigned in the test: they hold no value written in it.
    got = [(s.text, s.role) for s in W.sites("p_test.go", source, [".::TestM"])]
    assert got == [
        ("0", "other"),
        ('"x"', "other"),
        ('"1"', "other"),
        ("3", "other"),  # Ratio(3) is a call: not a value
        ("1", "expected"),
    ]
    source = source.replace(b"Ratio(3)", b'[]byte("r")')
    got = [(s.text, s.role) for s in W.sites("p_test.go", source, [".::TestM"])]
    assert ('"r"', "expected") in got


def test_what_is_no_test_has_no_sites() -> None:
    assert W.sites(PATH, SOURCE, ["parse::TestMissing", "parse::helper", "other::TestSplit"]) == []
    assert W.sites("other/parse_test.go", SOURCE, ["parse::TestSplit"]) == []
    assert W.sites(PATH, b"package parse\nfunc TestX(t *testing.T) {", ["parse::TestX"]) == []


def test_sites_per_test_in_the_order_given() -> None:
    got = W.sites(PATH, SOURCE, ["parse::TestSubtests/upper", "parse::TestSplit/simple"])
    assert [s.test for s in got] == ["parse::TestSubtests/upper"] * 2 + [
        "parse::TestSplit/simple"
    ] * 3


EVERY = [
    "parse::TestSplit",
    "parse::TestParseInt",
    "parse::TestTestify",
    "parse::TestSubtests",
    "parse::TestPositional",
    "parse::TestUnguarded",
]


def check_perturbation(source: bytes, site: Site, out: bytes) -> str:
    """The new literal; asserts the rest of the file is unchanged and it parses."""
    tail = len(source) - site.end
    assert (
        out[: site.start] == source[: site.start] and out[len(out) - tail :] == source[site.end :]
    )
    new = out[site.start : len(out) - tail].decode()
    assert new != site.text
    assert not syntax.parse("go", out).root_node.has_error
    return new


@pytest.mark.parametrize("seed", range(6))
def test_every_perturbation_parses_differs_and_keeps_the_form(seed: int) -> None:
    for site in W.sites(PATH, SOURCE, EVERY):
        out = W.perturb(SOURCE, site, random.Random(seed))
        if punctuation_only(site.text):
            assert out is None, site  # no change of "-" reads naturally
            continue
        assert out is not None, site
        assert out == W.perturb(SOURCE, site, random.Random(seed))  # deterministic
        new = check_perturbation(SOURCE, site, out)
        if site.kind == "string":
            assert new[0] == site.text[0] and new[-1] == site.text[-1]
            assert len(new) == len(site.text) or site.text == '""'
            if site.text[0] == '"':
                assert ("\\n" in new) == ("\\n" in site.text)  # escapes stay whole
        elif site.kind == "int":
            assert new.startswith("0x") == site.text.startswith("0x")
            assert int(new, 0) != int(site.text, 0) and int(new, 0) >= 0
        elif site.kind == "float":
            assert abs(float(new) - float(site.text)) >= 0.1
        elif site.kind == "bool":
            assert {new, site.text} == {"true", "false"}
        elif site.kind == "char":
            assert new[0] == new[-1] == "'" and len(new) == 3


def test_a_stale_site_is_not_perturbed() -> None:
    site = W.sites(PATH, SOURCE, ["parse::TestSplit/simple"])[0]
    changed = SOURCE.replace(b'"a,b"', b'"a;b"')
    assert W.perturb(changed, site, random.Random(0)) is None


def test_a_map_key_never_becomes_another_key() -> None:
    source = b'package p\nimport "testing"\nfunc TestK(t *testing.T) {\n\tm := map[string]int{"a": 1, "b": 2, "c": 3, "d": 4}\n\t_ = m\n}\n'
    sites = [s for s in W.sites("p_test.go", source, [".::TestK"]) if s.text == '"a"']
    for seed in range(40):
        out = W.perturb(source, sites[0], random.Random(seed))
        assert out is not None
        assert out.count(b'"b"') == out.count(b'"c"') == out.count(b'"d"') == 1


def test_escapes_and_raw_strings_keep_their_style() -> None:
    source = b'package p\nimport "testing"\nfunc TestE(t *testing.T) {\n\tif F() != "\\u00e9\\t" {\n\t\tt.Fail()\n\t}\n\tif G() != `a\\b` {\n\t\tt.Fail()\n\t}\n\tif H() != 1.5e3 {\n\t\tt.Fail()\n\t}\n}\n'
    sites = W.sites("p_test.go", source, [".::TestE"])
    assert [(s.text, s.role) for s in sites] == [
        ('"\\u00e9\\t"', "expected"),
        ("`a\\b`", "expected"),
        ("1.5e3", "expected"),
    ]
    for seed in range(10):
        esc = check_perturbation(
            source, sites[0], W.perturb(source, sites[0], random.Random(seed)) or b""
        )
        # No plain character: one escape changes, to one of its own form.
        assert esc[:4] == '"\\u0' and esc[-3:] in ('\\t"', '\\n"', '\\r"') and len(esc) == 10
        raw = check_perturbation(
            source, sites[1], W.perturb(source, sites[1], random.Random(seed)) or b""
        )
        assert raw[0] == raw[-1] == "`" and "\\" in raw and len(raw) == 5
        flt = check_perturbation(
            source, sites[2], W.perturb(source, sites[2], random.Random(seed)) or b""
        )
        assert flt.endswith("e3") and len(flt) == 5


# ------------------------------------------------------------------------------------ copies


def test_copies_are_renamed_and_placed_after_their_test() -> None:
    sites = W.sites(PATH, SOURCE, ["parse::TestParseInt/hex"])
    want = next(s for s in sites if s.role == "expected")
    out = W.copies(
        PATH,
        SOURCE,
        [("parse::TestParseInt/hex", want, "TestCopyHex"), ("parse::TestSplit", None, "TestCopy")],
    )
    assert out.startswith(SOURCE[: SOURCE.index(b"func TestParseInt")])
    text = out.decode()
    assert (
        text.index("func TestSplit(")
        < text.index("func TestCopy(")
        < text.index("func TestParseInt(")
        < text.index("func TestCopyHex(")
        < text.index("func TestTestify(")
    )
    copy = text[text.index("func TestCopyHex(") : text.index("func TestTestify(")]
    assert "0xFF" not in copy and '"hex":     {input: "ff", base: 16, want: 0x' in copy
    assert text.count("want: 0xFF") == 1  # the original is unchanged
    assert not syntax.parse("go", out).root_node.has_error
    assert W.copy_id("parse::TestParseInt/hex", "TestCopyHex") == "parse::TestCopyHex/hex"
    assert W.copy_id(".::TestX", "TestY") == ".::TestY"


def test_a_copy_of_a_package_level_table_site_copies_the_table() -> None:
    site = W.sites(PATH, SOURCE, ["parse::TestSplit/simple"])[1]  # "a" of want
    out = W.copies(PATH, SOURCE, [("parse::TestSplit/simple", site, "TestSplitCopy")]).decode()
    assert "var splitCasesSplitCopy = []struct {" in out
    assert "for _, tc := range splitCasesSplitCopy {" in out
    assert out.count('{"simple", "a,b", []string{"a", "b"}}') == 1
    assert not syntax.parse("go", out.encode()).root_node.has_error


def test_copies_refuse_what_is_not_there() -> None:
    with pytest.raises(UsageError):
        W.copies(PATH, SOURCE, [("parse::TestMissing", None, "TestX")])
    site = W.sites(PATH, SOURCE, ["parse::TestSplit"])[0]
    with pytest.raises(UsageError):
        W.copies(PATH, SOURCE, [("parse::TestParseInt", site, "TestX")])


def test_new_names() -> None:
    rng = random.Random(3)
    taken = {"TestSplit"}
    for _ in range(20):
        name = W.new_name("parse::TestSplit", rng, taken)
        assert name.startswith("Test") and name[4].isupper() and name.isalnum()
        assert name not in taken
        taken.add(name)
    assert W.new_name("p::TestA", random.Random(1), set()) == W.new_name(
        "p::TestA", random.Random(1), set()
    )


# ------------------------------------------------------------------- with the go command


def _go_test(tree: Path, run: str) -> dict[str, str]:
    env = {
        **os.environ,
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
    }
    proc = subprocess.run(
        ["go", "test", "-json", "-count=1", f"-run={run}", "./strutil"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("Test") and event.get("Action") in ("pass", "fail"):
            out[event["Test"]] = event["Action"]
    return out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("go") is None, reason="no go command")
def test_go_copies_and_twins_of_the_example(tmp_path: Path) -> None:
    from swe_forge.example.catalog import create_language_example

    tree = tmp_path / "gokit"
    create_language_example("go", tree)
    path = "strutil/strutil_test.go"
    source = (tree / path).read_bytes()
    test = "strutil::TestTruncateExactWidth"
    sites = W.sites(path, source, [test])
    expected = [s for s in sites if s.role == "expected"]
    assert [s.text for s in expected] == ['"abcdef"']
    specs = [(test, None, "TestPlainCopy")] + [(test, s, f"TestSiteCopy{s.index}") for s in sites]
    (tree / path).write_bytes(W.copies(path, source, specs))
    got = _go_test(tree, "^Test(PlainCopy|SiteCopy.*|TruncateExactWidth)$")
    assert got["TestPlainCopy"] == got["TestTruncateExactWidth"] == "pass"
    for s in expected:
        assert got[W.copy_id(test, f"TestSiteCopy{s.index}").split("::")[1]] == "fail"
    # The twin run: the perturbed file, the test's own name, and it fails.
    (tree / path).write_bytes(W.perturb(source, expected[0], random.Random(7)) or b"")
    got = _go_test(tree, "^TestTruncate")
    assert got["TestTruncateExactWidth"] == "fail"
    assert got["TestTruncateShort"] == got["TestTruncateLong"] == "pass"


PANICKY = b"""package strutil

import "testing"

func TestIndex(t *testing.T) {
	xs := []int{0, 10, 20, 30}
	t.Run("third", func(t *testing.T) {
		if got := xs[3]; got != 30 {
			t.Errorf("got %d", got)
		}
	})
}

func TestOther(t *testing.T) {}
"""


def test_every_subtest_of_a_copy_turns_a_panic_into_its_failure() -> None:
    # A subtest runs in its own goroutine: only a recover inside it sees its panic.
    site = next(
        s for s in W.sites("strutil/p_test.go", PANICKY, ["strutil::TestIndex"]) if s.text == "3"
    )
    out = W.copies(
        "strutil/p_test.go", PANICKY, [("strutil::TestIndex", site, "TestIndexCopy", "7")]
    )
    copy = out.decode().split("func TestIndexCopy")[1].split("func TestOther")[0]
    assert copy.count("recover()") == 2 and "xs[7]" in copy
    assert out.decode().count("recover()") == 2  # the original is unchanged
    assert not syntax.parse("go", out).root_node.has_error


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("go") is None, reason="no go command")
def test_a_copy_whose_subtest_panics_fails_alone(tmp_path: Path) -> None:
    # copier-70: a perturbed copy's subtest indexed past the end and the binary died, taking
    # every test after it along, so no perturbation of that run could be judged.
    site = next(
        s for s in W.sites("strutil/p_test.go", PANICKY, ["strutil::TestIndex"]) if s.text == "3"
    )
    tree = tmp_path / "p"
    (tree / "strutil").mkdir(parents=True)
    (tree / "go.mod").write_text("module p\n\ngo 1.18\n")
    out = W.copies(
        "strutil/p_test.go", PANICKY, [("strutil::TestIndex", site, "TestIndexCopy", "7")]
    )
    (tree / "strutil" / "p_test.go").write_bytes(out)
    got = _go_test(tree, "^Test(Index|IndexCopy|Other)$")
    assert got["TestIndex"] == got["TestOther"] == "pass"
    assert got["TestIndexCopy"] == got["TestIndexCopy/third"] == "fail"


GUARDED = b"""package color

import (
	"io"
	"os"
	"testing"
)

func TestNilStdout(t *testing.T) {
	os.Stdout = nil
	if stdoutIsTerminal() {
		t.Fatal("stdoutIsTerminal() = true, want false")
	}
	if got := stdOut(); got != io.Discard {
		t.Fatalf("stdOut() = %v, want %v", got, io.Discard)
	}
}

func TestSetup(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if ok() {
		t.Fatal("ok")
	} else {
		t.Log("fine")
	}
}

func TestNilValue(t *testing.T) {
	copyInto(&user, src)
	if user.Address != nil {
		t.Error("Original Address was not overwritten")
	}
	if gotErr := run(); gotErr == nil {
		t.Fatal("no error")
	}
}

func TestLiteral(t *testing.T) {
	if ready() {
		t.Fatal("ready")
	}
	if got := f(); got != 3 {
		t.Fatal("x")
	}
}
"""


def test_failing_branch_conditions_are_guard_sites_where_no_literal_is_expected() -> None:
    # First contact (fatih/color, session 18): `if stdoutIsTerminal() { t.Fatal(...) }` and
    # `got != io.Discard` hold no literal, so the tests had no decoy (no_decoys). Their
    # conditions, negated, are decoys the gold patch fails wherever the branch runs.
    def sites(test: str) -> list[tuple[str, str, str]]:
        return [(s.text, s.kind, s.role) for s in W.sites("color_test.go", GUARDED, [test])]

    assert sites(".::TestNilStdout") == [
        ("stdoutIsTerminal()", "guard", "expected"),
        ("got != io.Discard", "guard", "expected"),
    ]
    # A nil check guards setup (a wrong fix that returns an error fails it honestly), and a
    # branch with an else is no plain failure: neither is a guard.
    assert sites(".::TestSetup") == []
    # A nil check of a value is an expectation (jinzhu/copier-209); of an error, setup.
    assert sites(".::TestNilValue") == [("user.Address != nil", "guard", "expected")]
    # Where a literal is the expectation, it is the site, not the guards.
    assert sites(".::TestLiteral") == [("3", "int", "expected")]
    (site, _) = W.sites("color_test.go", GUARDED, [".::TestNilStdout"])
    out = W.perturb(GUARDED, site, random.Random(0))
    assert out is not None and b"if !stdoutIsTerminal() {" in out
    copied = W.copies("color_test.go", GUARDED, [(".::TestNilStdout", site, "TestCopyOne")])
    copy = copied[copied.index(b"func TestCopyOne") :]
    assert b"if !stdoutIsTerminal() {" in copy and b"got != io.Discard" in copy
    assert GUARDED.count(b"if stdoutIsTerminal() {") == copied.count(b"if stdoutIsTerminal() {")
