"""Statement quality: flags, score, and statements written from test failures."""

from __future__ import annotations

import json

import pytest

from swe_forge.mining.statement import (
    asserted_literals,
    assess_statement,
    missing_literals,
    statement_from_failures,
)
from swe_forge.records import StatementQuality

LONG = (
    "Parsing an empty configuration file raised a KeyError from deep inside the loader "
    "instead of returning the defaults. The loader now treats an empty document like an "
    "empty mapping, so every caller gets the documented defaults, and a file that holds "
    "only comments behaves the same way as an empty one.\n"
)


def _test_patch(*added: str, context: str = "import pytest") -> str:
    body = "".join(f"+{line}\n" for line in added)
    return (
        "diff --git a/tests/test_cfg.py b/tests/test_cfg.py\n"
        "--- a/tests/test_cfg.py\n+++ b/tests/test_cfg.py\n"
        f"@@ -1,1 +1,{1 + len(added)} @@\n {context}\n{body}"
    )


def test_a_clear_statement_scores_high_and_has_no_flags() -> None:
    q = assess_statement(LONG)
    assert q.flags == () and q.score == 1.0 and q.words >= 50


def test_thin_statement() -> None:
    q = assess_statement("Fix the loader\n", thin_words=12)
    assert q.flags == ("thin",) and q.words == 3
    # Documented formula: 0.25 + 0.75 * 3 / 50.
    assert q.score == 0.295
    assert assess_statement("").score == 0.0


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        ('Revert "Use the fast parser"\n\nThis reverts commit 1a2b3c4d5e6f.\n', "revert"),
        ("Undo the cache change\n\nIt reverts #88 which broke imports.\n", "revert"),
        ("Fix the loader\n\nThe regression came in with 9f8e7d6c.\n", "commit_sha"),
        ("Fix the loader\n\nSee #123 for the discussion.\n", "cross_reference"),
        ("Fix the loader\n\nFollow-up to the cache rework.\n", "cross_reference"),
        ("Fix the loader\n\nAs in acme/other#5, same cause.\n", "cross_reference"),
        ("Fix it\n\nhttps://github.com/acme/app/pull/12/files\n", "cross_reference"),
    ],
)
def test_history_the_agent_cannot_see_is_flagged(text: str, flag: str) -> None:
    q = assess_statement(text, thin_words=0)
    assert flag in q.flags, q
    assert any(e.startswith(f"{flag}: ") for e in q.evidence)
    assert q.score < assess_statement("x " * q.words, thin_words=0).score


@pytest.mark.parametrize(
    "text",
    [
        "Fix the loader\n\nFixes #123.\n",  # a closing keyword names the issue being fixed
        "Use colour #ff00ff and 0x1a2b3c4d in the theme\n",  # not commit ids
        "Bump the id 123e4567-e89b-12d3-a456-426614174000 in the fixture\n",  # a UUID
        "Remove the deadbeef constant and the facade module\n",  # hex-looking words
    ],
)
def test_look_alikes_are_not_flagged(text: str) -> None:
    assert assess_statement(text, thin_words=0).flags == ()


def test_exact_strings_absent_from_the_statement() -> None:
    patch = _test_patch(
        "def test_empty():",
        "    with pytest.raises(ValueError, match='configuration is empty'):",
        "        load('')",
        '    assert render(load("a: 1")) == "a = 1 (from file)"',
        '    assert describe() == "already in the statement"',
        '    assert data["some_key"] == 1',  # a key: guessable from the code
        '    err = RuntimeError("disk full, retry later")',
        '    with pytest.raises(RuntimeError, match="disk full, retry later"):',
        '    assert ok, "the message printed when the assert fails"',
        '    assert load("left as input") is None',
    )
    assert asserted_literals(patch) == [
        "configuration is empty",
        "a = 1 (from file)",
        "already in the statement",
    ]
    statement = "Loader fails\n\nThe text already in the statement is fine.\n"
    assert missing_literals(statement, patch) == ["configuration is empty", "a = 1 (from file)"]
    q = assess_statement(statement, test_patch=patch, thin_words=0)
    assert "exact_string" in q.flags
    assert "exact_string: 'configuration is empty'" in q.evidence
    assert q.score == round((0.25 + 0.75 * q.words / 50) * 0.85**2, 4)


def test_literal_visible_at_the_base_is_not_missing() -> None:
    # The base already prints the message (a context line of the gold patch): readable.
    patch = _test_patch('    assert fmt(3) == "three items"')
    gold = (
        "diff --git a/pkg/fmt.py b/pkg/fmt.py\n--- a/pkg/fmt.py\n+++ b/pkg/fmt.py\n"
        '@@ -1,2 +1,2 @@\n MSG = "three items"\n-X = 1\n+X = 2\n'
    )
    assert missing_literals("Fix fmt", patch) == ["three items"]
    assert missing_literals("Fix fmt", patch, gold) == []


def test_escaped_and_regex_literals_compare_as_printed() -> None:
    patch = _test_patch(
        r"    assert out == 'line one\nline two'",
        r"    with pytest.raises(KeyError, match=r'no key named x\.y'):",
    )
    assert asserted_literals(patch) == ["line one\nline two", r"no key named x\.y"]
    statement = "Keys\n\nIt should say: no key named x.y\n"
    assert missing_literals(statement, patch) == ["line one\nline two"]


def test_record_block_round_trips_and_is_versioned() -> None:
    q = assess_statement("See #4\n", thin_words=12, cleaned=True)
    data = json.loads(json.dumps(q.__dict__))
    assert StatementQuality.from_dict(data) == q
    assert data["version"] == 1 and data["cleaned"] is True and data["generated"] is False
    with pytest.raises(ValueError, match="version 2"):
        StatementQuality.from_dict({**data, "version": 2})


def test_statement_from_failures_is_deterministic_and_generated() -> None:
    failing = [
        "tests/test_b.py::test_two",
        "tests/test_a.py::test_one",
        "tests/test_b.py::test_two",
    ]
    messages = {
        "tests/test_a.py::test_one": "AssertionError: assert 'a,b' == 'a, b'",
        "tests/test_b.py::test_two": "KeyError: 'name'",
    }
    text = statement_from_failures(failing, messages, title="Fix join")
    assert text == statement_from_failures(list(reversed(failing)), messages, title="Fix join")
    assert text.startswith("Fix join\n\nAt the current commit 2 tests fail")
    assert text.index("test_a.py::test_one") < text.index("test_b.py::test_two")
    assert "assert 'a,b' == 'a, b'" in text and "KeyError: 'name'" in text
    assert "Change the code (not the tests)" in text
    # Messages may come in the order of the failing tests instead.
    same = statement_from_failures(["t::x"], ["boom"])
    assert "- `t::x`\n      boom" in same
    # A generated statement is marked as such in its record block.
    q = assess_statement(text, generated=True)
    assert q.generated and "thin" not in q.flags


def test_statement_from_failures_caps_its_size() -> None:
    failing = [f"tests/t.py::test_{i:02d}" for i in range(15)]
    text = statement_from_failures(failing, {failing[0]: "x" * 2000})
    assert "... and 5 more" in text and "test_09" in text and "test_10" not in text
    assert "x" * 600 + " ..." in text and "x" * 601 not in text
    assert "no failing test" in statement_from_failures([], title="Thin")
