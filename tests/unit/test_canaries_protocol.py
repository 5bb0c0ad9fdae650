"""Twin-run canaries, what the languages share: the Site record (stored in task manifests),
the registry of writers, and the language-neutral perturbation of literal texts."""

from __future__ import annotations

import json
import random
import unicodedata

import pytest

from swe_forge.ecosystems import syntax, writer_for
from swe_forge.ecosystems.canaries import KINDS, ROLES, CanaryWriter, Site, negate_condition
from swe_forge.errors import UsageError

SITE = Site(
    path="strutil/strutil_test.go",
    test="strutil::TestTruncate/exact_width",
    index=2,
    start=120,
    end=128,
    kind="string",
    role="expected",
    text='"abc\\tñ"',
)


def test_site_round_trips_through_json() -> None:
    data = json.loads(json.dumps(SITE.to_dict()))
    assert Site.from_dict(data) == SITE
    assert set(data) == {"path", "test", "index", "start", "end", "kind", "role", "text"}


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "regex"},
        {"role": "input"},
        {"start": 9, "end": 9},
        {"start": -1},
        {"index": -1},
        {"index": True},
        {"start": "120"},
        {"text": None},
    ],
)
def test_site_from_dict_refuses_what_is_not_a_site(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Site.from_dict({**SITE.to_dict(), **change})


def test_site_from_dict_refuses_a_missing_field() -> None:
    data = SITE.to_dict()
    del data["text"]
    with pytest.raises(ValueError):
        Site.from_dict(data)


def test_kinds_and_roles() -> None:
    assert KINDS == ("string", "int", "float", "bool", "char", "bytes", "guard")
    assert ROLES == ("expected", "other")


@pytest.mark.parametrize("name", ["go", "rust", "java", "js"])
def test_writer_for_each_ecosystem(name: str) -> None:
    writer = writer_for(name)
    assert writer is writer_for(name)  # one per ecosystem
    assert isinstance(writer, object)
    for method in ("test_files", "sites", "perturb", "copies", "copy_id", "new_name"):
        assert callable(getattr(writer, method))
    _typed: CanaryWriter = writer
    del _typed


def test_writer_for_an_unknown_ecosystem() -> None:
    with pytest.raises(UsageError):
        writer_for("python")


# ------------------------------------------------------------------- literal text helpers


@pytest.mark.parametrize("seed", range(20))
def test_perturb_char_keeps_the_kind(seed: int) -> None:
    rng = random.Random(seed)
    for ch in "aZ7ñ日😀":
        new = syntax.perturb_char(ch, rng)
        assert new != ch
        assert unicodedata.category(new) == unicodedata.category(ch)
        assert len(new.encode()) == len(ch.encode())
    # Punctuation becomes punctuation that neither quotes nor escapes.
    for ch in "-.,":
        new = syntax.perturb_char(ch, rng)
        assert new != ch and not new.isalnum() and new not in "'\"`$\\{}"


def test_perturb_text_prefers_letters_and_digits() -> None:
    for seed in range(30):
        new = syntax.perturb_text("a b-", random.Random(seed))
        assert len(new) == 4 and new[1] == " " and new[3] == "-"
        assert (new[0] == "a") != (new[2] == "b")  # one letter changed, to a letter
        assert new[0].isalpha() and new[2].isalpha()
    assert syntax.perturb_text("", random.Random(0)).isalpha()


@pytest.mark.parametrize(
    ("escape", "pattern"),
    [
        ("\\n", r"\\[tr]"),
        ("\\t", r"\\[nr]"),
        ("\\x41", r"\\x[0-7][0-9a-f]"),
        ("\\u00e9", r"\\u00[0-9a-f]{2}"),
        ("\\u{1F600}", r"\\u\{1F[0-9A-F]{3}\}"),
        ("\\U0001F600", r"\\U0001F[0-9A-F]{3}"),
        ("\\101", r"\\[0-7]{3}"),
        ("\\uD83D", r"\\uD8[0-9A-F]{2}"),
    ],
)
def test_perturb_escape_keeps_the_form(escape: str, pattern: str) -> None:
    import re

    for seed in range(10):
        new = syntax.perturb_escape(escape, random.Random(seed))
        assert new is not None and new != escape
        assert re.fullmatch(pattern, new), new


def test_perturb_escape_of_a_surrogate_stays_in_its_half() -> None:
    for seed in range(20):
        high = syntax.perturb_escape("\\uD83D", random.Random(seed))
        low = syntax.perturb_escape("\\uDE00", random.Random(seed))
        assert high is not None and 0xD800 <= int(high[2:], 16) <= 0xDBFF
        assert low is not None and 0xDC00 <= int(low[2:], 16) <= 0xDFFF


@pytest.mark.parametrize("escape", ["\\\\", '\\"', "\\'", "\\0"])
def test_perturb_escape_without_a_twin(escape: str) -> None:
    assert syntax.perturb_escape(escape, random.Random(0)) is None


def test_perturb_pieces_never_splits_an_escape() -> None:
    pieces = [("ab", False), ("\\n", True), ("c", False)]
    for seed in range(30):
        new = syntax.perturb_pieces(pieces, random.Random(seed))
        assert new is not None and new[1] == "\\n" and new != ["ab", "\\n", "c"]
    only = syntax.perturb_pieces([("\\u00e9", True)], random.Random(1))
    assert only is not None and only[0].startswith("\\u00") and only != ["\\u00e9"]
    assert syntax.perturb_pieces([("\\\\", True)], random.Random(1)) is None
    assert syntax.perturb_pieces([], random.Random(1)) is not None


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("10", r"1[1-3]|[2-4]0"),  # a round number may move by its grain
        ("255", r"25[0-4]|24[05]"),  # never 256: the edge of a byte
        ("0x1F", r"0x[12][0-9A-F]"),
        ("0xff", r"0xf[0-9a-e]"),
        ("0b101", r"0b1[01][01]"),
        ("0755", r"07[5-7][0-7]"),
        ("1_000_000", r"1_000_00[1-3]|999_99[7-9]|[2-4]_000_000"),
        ("0", r"[1-3]"),
        ("007", r"0[01][0-9]"),
    ],
)
def test_perturb_int_text_keeps_the_form(text: str, pattern: str) -> None:
    import re

    for seed in range(20):
        new = syntax.perturb_int_text(text, random.Random(seed), legacy_octal=True)
        assert new is not None and re.fullmatch(pattern, new), (text, new)


def test_perturb_int_text_respects_a_maximum_and_refuses_nonsense() -> None:
    for seed in range(20):
        new = syntax.perturb_int_text("255", random.Random(seed), maximum=255)
        assert new is not None and int(new) < 255
    assert syntax.perturb_int_text("12z", random.Random(0)) is None
    assert syntax.perturb_int_text("0x", random.Random(0)) is None


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("0.5", r"\d\.\d"),
        ("1.5e-3", r"\d\.\de-3"),
        ("3.0", r"\d\.0"),
        (".5", r"\.\d"),
        ("5.", r"\d+\."),
        ("1e3", r"\de3"),
        ("2.25", r"\d\.\d\d"),
        ("12.75E+10", r"\d+\.\d\dE\+10"),
    ],
)
def test_perturb_float_text_keeps_the_form_and_goes_far(text: str, pattern: str) -> None:
    import re

    old = float(text)
    for seed in range(20):
        new = syntax.perturb_float_text(text, random.Random(seed))
        assert new is not None and re.fullmatch(pattern, new), (text, new)
        assert abs(float(new) - old) >= 0.09 * max(abs(old), 1e-300)


def test_perturb_float_text_stays_finite_and_nonzero() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        big = syntax.perturb_float_text("1.7976931348623157e308", rng)
        assert big is not None and float(big) < float("inf")
        single = syntax.perturb_float_text("3.4e38", rng, maximum=syntax.FLOAT32_MAX)
        assert single is not None and float(single) <= syntax.FLOAT32_MAX
        assert syntax.perturb_float_text("1e3", rng) == "2e3"
        long = syntax.perturb_float_text("123456789012345678901234567890.5", rng)
        assert long is not None and len(long) == 32 and long.count(".") == 1
        assert abs(float(long) - 123456789012345678901234567890.5) > 1e28


def test_perturb_float_text_refuses_hex_floats_and_ints() -> None:
    assert syntax.perturb_float_text("0x1p-2", random.Random(0)) is None
    assert syntax.perturb_float_text("12", random.Random(0)) is None


@pytest.mark.parametrize(
    ("condition", "negated"),
    [
        ("stdoutIsTerminal()", "!stdoutIsTerminal()"),
        ("got != io.Discard", "got == io.Discard"),
        ("a + b > c", "a + b <= c"),
        ('s == "a == b"', 's != "a == b"'),
        ("x.len() as u8 == 3", "x.len() as u8 != 3"),
        ("!p.failed()", "p.failed()"),
        ("!(a && b)", "a && b"),
        ("matches!(r, Err(_))", "!matches!(r, Err(_))"),
        ("Vec::<u8>::new().is_empty()", "!Vec::<u8>::new().is_empty()"),
        # Where no one form is sure to negate in every language: parentheses.
        ("a && b", "!(a && b)"),
        ("a & b == c", "!(a & b == c)"),
        ("a == b == c", "!(a == b == c)"),
        ("a + f(x)", "!(a + f(x))"),
        ("-x", "!(-x)"),
        ("f(", "!(f()"),
    ],
)
def test_a_guard_is_negated_as_an_author_would_write_it(condition: str, negated: str) -> None:
    # A decoy must read like a test: `!(x.isEmpty())` around a plain call is a form no one
    # writes, and code that can read the test file (JS, Python) could pick the decoy out by it.
    assert negate_condition(condition) == negated
