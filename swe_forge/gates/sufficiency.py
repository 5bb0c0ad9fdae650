"""Is the problem statement enough to write a fix that passes the hidden tests?

Heuristics that record flags (and reject only the flags configured to reject):

- ``exact_string``: a FAIL_TO_PASS test asserts an exact string (``match=``, ``== "..."``,
  ``in str(...)``) that the problem statement does not contain;
- ``undefined_name``: the tests import or call a name that does not exist at the base commit
  and that the problem statement does not mention (the agent would have to guess an API);
- ``short_statement``: the statement is empty or shorter than a threshold.

An optional external judge (a command reading one JSON object on stdin and writing one on
stdout) can add flags or reject, so an LLM judge can be plugged in.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swe_forge.diffs import DiffParseError, parse_diff

_MATCH = re.compile(r"""match\s*=\s*r?(['"])(.{4,}?)\1""")
_EQ_STR = re.compile(r"""(?:==|!=)\s*r?(['"])(.{6,}?)\1|r?(['"])(.{6,}?)\3\s*(?:==|in\s)""")
_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n]+))", re.MULTILINE
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class SufficiencySettings:
    """Thresholds, the judge command and which flags reject."""

    min_statement_chars: int = 40
    reject_flags: tuple[str, ...] = ()
    judge_command: str = ""
    judge_timeout: float = 120.0


@dataclass
class SufficiencyReport:
    """Flags with evidence, and whether they reject the task."""

    flags: list[dict[str, str]] = field(default_factory=list)
    reject: bool = False
    reason: str = ""
    judge: dict[str, Any] | None = None

    def add(self, flag: str, detail: str) -> None:
        """Record a flag once per detail."""
        entry = {"flag": flag, "detail": detail}
        if entry not in self.flags:
            self.flags.append(entry)


def _added_lines_by_test(test_patch: str, f2p: list[str]) -> str:
    """The added lines of the test patch in files holding FAIL_TO_PASS tests."""
    files = {t.split("::", 1)[0] for t in f2p}
    out: list[str] = []
    try:
        parsed = parse_diff(test_patch)
    except DiffParseError:
        return ""
    for fp in parsed:
        if fp.path not in files:
            continue
        for hunk in fp.hunks:
            out.extend(body.decode("utf-8", "replace") for tag, body in hunk.lines if tag == 0x2B)
    return "".join(out)


def assess(
    *,
    problem_statement: str,
    test_patch: str,
    fail_to_pass: list[str],
    name_exists: Callable[[str], bool],
    settings: SufficiencySettings,
    judge_input: dict[str, Any] | None = None,
) -> SufficiencyReport:
    """Flag a task whose statement may not be enough to pass its tests.

    ``name_exists(name)`` says whether an identifier is defined anywhere at the base commit.
    """
    report = SufficiencyReport()
    statement = problem_statement or ""
    if len(statement.strip()) < settings.min_statement_chars:
        report.add("short_statement", f"{len(statement.strip())} characters")
    added = _added_lines_by_test(test_patch, fail_to_pass)
    for m in _MATCH.finditer(added):
        text = m.group(2)
        if text not in statement:
            report.add("exact_string", f"match={text[:80]!r} is not in the statement")
    for m in _EQ_STR.finditer(added):
        text = m.group(2) or m.group(4) or ""
        if text and text not in statement and not text.isidentifier():
            report.add("exact_string", f"{text[:80]!r} is not in the statement")
    for m in _IMPORT.finditer(added):
        for name in _IDENT.findall((m.group(2) or m.group(3) or "").split("#", 1)[0]):
            if name in ("import", "as"):
                continue
            if not name_exists(name) and name not in statement:
                report.add(
                    "undefined_name", f"{m.group(1)}.{name} does not exist at the base commit"
                )
    if settings.judge_command and judge_input is not None:
        report.judge = run_judge(settings, judge_input)
        for flag in report.judge.get("flags", []) or []:
            report.add(str(flag), "external judge")
        if report.judge.get("reject"):
            report.reject = True
            report.reason = "judge_rejected"
    found = {f["flag"] for f in report.flags}
    rejecting = sorted(found & set(settings.reject_flags))
    if rejecting and not report.reject:
        report.reject = True
        report.reason = f"insufficient_{rejecting[0]}"
    return report


def run_judge(settings: SufficiencySettings, payload: dict[str, Any]) -> dict[str, Any]:
    """Call the external judge: JSON in on stdin, JSON out on stdout."""
    try:
        proc = subprocess.run(
            shlex.split(settings.judge_command),
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=settings.judge_timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"judge failed: {exc}"}
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")[-500:]
        return {"error": f"judge exited {proc.returncode}: {err}"}
    try:
        out = json.loads(proc.stdout.decode("utf-8"))
    except ValueError:
        return {"error": "judge did not print JSON"}
    return out if isinstance(out, dict) else {"error": "judge printed JSON that is not an object"}
