"""Excerpts of long tool output keep the error line, not only the end."""

from __future__ import annotations

from swe_forge.excerpt import excerpt


def test_short_text_is_kept_whole() -> None:
    assert excerpt("a\nb\n", 100) == "a\nb\n"


def test_error_line_before_pages_of_advice_is_kept() -> None:
    text = "\n".join(
        ["[INFO] Building foo"] * 40
        + ["[ERROR] Failed to execute goal: Could not resolve dependencies for foo:bar:1.0"]
        + ["[ERROR] -> [Help 1] see https://cwiki.apache.org/... " * 3] * 100
    )
    out = excerpt(text, 1000)
    assert len(out) <= 1000
    assert "Could not resolve dependencies for foo:bar:1.0" in out
    assert out.endswith(text[-200:])  # the end is kept too
    assert text[-1000:].find("Could not resolve") == -1  # a plain tail would have lost it


def test_no_error_line_gives_the_plain_tail() -> None:
    text = "progress line\n" * 500
    assert excerpt(text, 300) == text[-300:]


def test_error_already_in_the_end_gives_the_plain_tail() -> None:
    text = "ok\n" * 2000 + "panic: runtime error: index out of range\n"
    assert excerpt(text, 300) == text[-300:]


def test_npm_and_rust_and_python_errors_are_recognised() -> None:
    for line in (
        "npm ERR! code ENOVERSIONS",
        "error[E0425]: cannot find value `x` in this scope",
        "ModuleNotFoundError: No module named 'foo'",
        "E   AssertionError: assert 1 == 2",
    ):
        text = "noise\n" * 1000 + line + "\n" + "more noise\n" * 1000
        assert line in excerpt(text, 800), line
