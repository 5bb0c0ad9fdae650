"""How much a problem statement tells an agent, and a statement written from test failures.

Mining takes the statement from the PR (its title and cleaned body, or the linked issue with
``--github``). :func:`assess_statement` scores it and flags what an agent, who sees only the
statement and the repository at the base commit, cannot use:

``thin``
    fewer than ``mine.thin_statement_words`` words (after cleaning): little more than a title.
``revert``
    the PR reverts an earlier change ("Revert ...", "This reverts commit ..."): what to undo is
    in history the agent does not have.
``commit_sha``
    a bare commit id (7 to 40 hex digits, at least one a-f letter and one digit).
``cross_reference``
    a pointer to a discussion the agent cannot read: ``#123``, ``GH-123``, ``owner/name#123``,
    an issue/PR/commit URL, "follow-up to", "as discussed". A closing keyword ("Fixes #12")
    names the issue being fixed and is not counted.
``exact_string``
    a string literal asserted in the test patch's added lines (on a line with ``assert``,
    ``match=``, ``==``/``!=``, or an ``expected``/``want`` assignment) that appears nowhere in
    the statement, nor on the lines the base commit already has (the patches' context and
    removed lines, which the agent can read): the agent would have to guess it character for
    character. Only literals of at least 4 characters that are not a bare identifier, dotted
    name or number count (dictionary keys and attribute names are guessable from the code).

The score (0..1, 4 decimals) is::

    score = (0.25 + 0.75 * min(1, words / 50))        # substance: a one-line title ~0.3
            * 0.5 if revert
            * 0.75 if commit_sha
            * 0.8 if cross_reference
            * 0.85 ** min(exact_strings, 4)           # each missing literal, at most 4 counted

and 0 for an empty statement. It is a ranking signal, not a gate: admission decides what to do
with it (``admit.reject_flags`` for its own flags).

When a statement is thin, :func:`statement_from_failures` writes one from what the gates saw
(the failing tests and their assertion messages); a record that uses it says so
(``problem_statement_source`` = :data:`GENERATED_SOURCE`, ``statement_quality.generated``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from swe_forge.diffs import DiffParseError, parse_diff
from swe_forge.records import StatementQuality

#: ``problem_statement_source`` of a statement written by :func:`statement_from_failures`.
GENERATED_SOURCE = "failure_symptoms"

#: Words at which a statement counts as fully substantial (the score's length term).
FULL_WORDS = 50
#: Penalty factors of the score, by flag (``exact_string`` is per literal, at most 4).
PENALTY = {"revert": 0.5, "commit_sha": 0.75, "cross_reference": 0.8, "exact_string": 0.85}
MAX_EXACT_COUNTED = 4
#: Evidence kept per flag (the record stays small).
MAX_EVIDENCE = 5

_WORD = re.compile(r"\w+")
_REVERT = re.compile(
    r"^\W*revert\b|\bthis reverts (?:commit|pr|pull request)\b|\breverts? (?:commit|#\d+)\b"
    r"|\breverts? [0-9a-f]{7,40}\b",
    re.IGNORECASE | re.MULTILINE,
)
# Lower-case hex only: git prints ids that way, and upper-case hex runs are mostly constants.
_SHA = re.compile(r"(?<![\w#/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?#\d+\b",
    re.IGNORECASE,
)
_REFERENCE = re.compile(
    r"(?:(?<![\w&])(?:[\w.-]+/[\w.-]+)?#\d+\b"
    r"|\bGH-\d+\b"
    r"|https?://(?:www\.)?(?:github\.com|gitlab\.com)/\S+/(?:issues|pull|pulls|merge_requests"
    r"|commit|discussions)/\w+"
    r"|\bfollow[- ]?up (?:to|on|of|for)\b"
    r"|\bas discussed\b"
    r"|\b(?:see|cf\.?|as in|same as|like in|continuation of|split (?:out )?(?:of|from)"
    r"|supersedes|replaces|part of|depends on|builds on|extracted from) (?:the )?"
    r"(?:previous|earlier|last|other|original) (?:pr|pull request|commit|change|issue)s?\b)",
    re.IGNORECASE,
)
# A string literal on one line (Python, JS, ...): optional prefix, quote, body without the
# quote or a newline, allowing backslash escapes.
_LITERAL = re.compile(r"""(?<![\w])[rRbBuUfF]{0,2}(['"])((?:\\.|(?!\1)[^\\\n])*)\1""")
_ASSERTING = re.compile(
    r"\bassert\w*|\bmatch\s*=|[=!]=|\b(?:expected|expect|want|wanted)\w*\s*=|\.to(?:Be|Equal)\b",
    re.IGNORECASE,
)
_NAME_LIKE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*$|^[-+]?[\d.eE_xXoObB]+$")


def word_count(text: str) -> int:
    """Words in a statement (runs of letters, digits or underscores)."""
    return len(_WORD.findall(text))


def _patch_lines(patch: str) -> tuple[list[str], list[str]]:
    """(added lines, lines the base has: context and removed) of a unified diff."""
    added: list[str] = []
    base: list[str] = []
    try:
        files = parse_diff(patch)
    except DiffParseError:
        return added, base
    for fp in files:
        for hunk in fp.hunks:
            for tag, body in hunk.lines:
                line = body.decode("utf-8", "replace")
                if tag == 0x2B:  # "+"
                    added.append(line)
                else:
                    base.append(line)
    return added, base


def _decode(text: str) -> str:
    """A literal's text as printed: the common escapes undone (``\\n``, ``\\t``, quotes)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _unregex(text: str) -> str:
    # A ``match=`` pattern escapes punctuation: ``logger\.bind`` means ``logger.bind``.
    return re.sub(r"\\([^\w\s])", r"\1", text)


def _asserted_part(code: str) -> str:
    """The part of an asserting line that states the expected value: an ``assert``'s
    failure message (after its last top-level ``, "``) and ``msg=`` arguments are only
    what the test prints when it fails, not what the code must produce."""
    code = re.sub(r"""\bmsg\s*=\s*[rRbBuUfF]{0,2}(['"])(?:\\.|(?!\1)[^\\\n])*\1""", "", code)
    if code.startswith("assert "):
        cut = None
        for m in re.finditer(r""",\s*[rRbBuUfF]{0,2}['"]""", code):
            cut = m.start()
        if cut is not None and code[:cut].count("(") == code[:cut].count(")"):
            code = code[:cut]
    return code


def _literals(code: str) -> list[tuple[int, str]]:
    """(offset, text as printed) of each one-line string literal in ``code``; for an
    f-string, its longest constant part."""
    out = []
    for m in _LITERAL.finditer(code):
        prefix = m.group(0)[: m.start(2) - m.start(0) - 1].lower()
        text = _decode(m.group(2)) if "r" not in prefix else m.group(2)
        if "f" in prefix:
            text = max(re.split(r"\{[^{}]*\}", text), key=len)
        out.append((m.start(), text))
    return out


def asserted_literals(test_patch: str) -> list[str]:
    """String literals the test patch's added lines expect, in order, once each, as printed
    (escapes undone).

    A literal is expected when it sits on an asserting line, is not an argument of a call
    there (an input), and is not part of a literal the test itself supplies elsewhere (an
    input on another line, like ``err = RuntimeError("boom")`` then ``match="boom"``): an
    echo of the test's own input needs no guessing.
    """
    added, _base = _patch_lines(test_patch)
    given: list[str] = []
    expected: list[str] = []
    for line in added:
        code = line.strip()
        if code.startswith("#"):
            continue
        if not _ASSERTING.search(code):
            given.extend(text for _at, text in _literals(code))
            continue
        part = _asserted_part(code)
        for at, text in _literals(part):
            (given.append if _is_argument(part, at) else expected.append)(text)
    found: list[str] = []
    for text in expected:
        plain = _unregex(text).strip()
        if len(plain) < 4 or _NAME_LIKE.match(plain) or text in found:
            continue
        if any(text in g or plain in g for g in given):
            continue
        found.append(text)
    return found


_CALLEE = re.compile(r"([\w.]*)\s*$")
_EXPECTING_KEYWORD = re.compile(r"\b(?:match|expected\w*|want\w*|message)\s*=\s*$")


def _is_argument(code: str, start: int) -> bool:
    """Is the literal at ``start`` an argument of a call that is not an assertion (an input
    the test gives the code, like ``f("abc")``) rather than an expected value?"""
    before = _LITERAL.sub('""', code[:start])
    if _EXPECTING_KEYWORD.search(before):
        return False
    depth = 0
    for i in range(len(before) - 1, -1, -1):
        ch = before[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return False  # in a list, dict or set display: a value, not an input
                callee = _CALLEE.search(before[:i])
                name = callee.group(1).lower() if callee else ""
                return bool(name) and "assert" not in name and "equal" not in name
            depth -= 1
    return False


def missing_literals(statement: str, test_patch: str, patch: str = "") -> list[str]:
    """Asserted literals (see :func:`asserted_literals`) that the agent cannot read anywhere:
    not in the statement, not on a line the base commit has (context or removed lines of
    either patch)."""
    _added, test_base = _patch_lines(test_patch)
    _gold_added, gold_base = _patch_lines(patch) if patch else ([], [])
    # Base lines are source text: a literal shows there in its escaped spelling too.
    visible = "\n".join([statement, *test_base, *gold_base])
    missing = []
    for text in asserted_literals(test_patch):
        forms = {text, _unregex(text), text.encode("unicode_escape").decode("ascii")}
        if not any(form.strip() and form.strip() in visible for form in forms):
            missing.append(text)
    return missing


def assess_statement(
    statement: str,
    *,
    test_patch: str = "",
    patch: str = "",
    thin_words: int = 12,
    cleaned: bool = False,
    generated: bool = False,
) -> StatementQuality:
    """Score a problem statement and flag what an agent cannot use (see the module doc).

    ``cleaned`` records that cleaning removed tool noise from it; ``generated`` that it was
    written by :func:`statement_from_failures`.
    """
    words = word_count(statement)
    evidence: list[str] = []
    flags: set[str] = set()

    def flag(name: str, items: Sequence[str]) -> None:
        if items:
            flags.add(name)
            evidence.extend(f"{name}: {item[:80]}" for item in items[:MAX_EVIDENCE])

    if words < thin_words:
        flag("thin", [f"{words} words"])
    flag("revert", [m.group(0).strip() for m in _REVERT.finditer(statement)])
    flag("commit_sha", [m.group(0) for m in _SHA.finditer(statement)])
    without_closing = _CLOSING.sub(" ", statement)
    flag("cross_reference", [m.group(0) for m in _REFERENCE.finditer(without_closing)])
    missing = missing_literals(statement, test_patch, patch) if test_patch else []
    flag("exact_string", [repr(text) for text in missing])
    score = 0.0
    if words:
        score = 0.25 + 0.75 * min(1.0, words / FULL_WORDS)
        for name in ("revert", "commit_sha", "cross_reference"):
            if name in flags:
                score *= PENALTY[name]
        score *= PENALTY["exact_string"] ** min(len(missing), MAX_EXACT_COUNTED)
    return StatementQuality(
        score=round(score, 4),
        flags=tuple(sorted(flags)),
        evidence=tuple(evidence),
        words=words,
        cleaned=cleaned,
        generated=generated,
    )


#: Caps of a generated statement: tests listed, characters per assertion message.
MAX_FAILURES = 10
MAX_MESSAGE_CHARS = 600


def statement_from_failures(
    failing: Sequence[str],
    messages: Mapping[str, str] | Sequence[str] = (),
    *,
    title: str = "",
) -> str:
    """A problem statement written from observed failure symptoms (pure, deterministic).

    ``failing`` are the ids of the tests that fail before the fix (FAIL_TO_PASS);
    ``messages`` their assertion messages, by test id or in the order of ``failing``. The
    thin statement the PR gave (its title) leads, when there is one. Test ids are sorted,
    duplicates and blank messages dropped, at most :data:`MAX_FAILURES` tests listed and
    :data:`MAX_MESSAGE_CHARS` characters kept per message, so equal inputs give equal text.

    The caller records that the statement is generated (:data:`GENERATED_SOURCE` as
    ``problem_statement_source``; ``generated=True`` in :func:`assess_statement`).
    """
    by_test: dict[str, str] = {}
    if isinstance(messages, Mapping):
        by_test = {str(k): str(v) for k, v in messages.items()}
    else:
        by_test = {t: str(m) for t, m in zip(failing, messages, strict=False)}
    tests = sorted(dict.fromkeys(str(t) for t in failing if str(t).strip()))
    parts: list[str] = []
    if title.strip():
        parts.append(title.strip())
    if not tests:
        parts.append("The behaviour described above is wrong; no failing test was observed.")
        return "\n\n".join(parts) + "\n"
    count = "a test fails" if len(tests) == 1 else f"{len(tests)} tests fail"
    parts.append(
        f"At the current commit {count} that should pass once the problem is fixed. "
        "Observed symptoms:"
    )
    seen_messages: set[str] = set()
    lines: list[str] = []
    for test in tests[:MAX_FAILURES]:
        lines.append(f"- `{test}`")
        message = by_test.get(test, "").strip()
        if not message or message in seen_messages:
            continue
        seen_messages.add(message)
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS].rstrip() + " ..."
        lines.append("\n".join(f"      {ln}".rstrip() for ln in message.splitlines()))
    if len(tests) > MAX_FAILURES:
        lines.append(f"- ... and {len(tests) - MAX_FAILURES} more")
    parts.append("\n".join(lines))
    parts.append("Change the code (not the tests) so that these tests pass.")
    return "\n\n".join(parts) + "\n"
