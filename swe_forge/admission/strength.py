"""The test-strength gate: how many wrong variants of the gold fix the task's tests reject.

A task pays 1.0 for any patch its FAIL_TO_PASS and PASS_TO_PASS tests accept; when those tests
do not look at what the fix changed, a wrong fix is paid as well. Admission measures that once
per task: :mod:`swe_forge.mutation` makes small wrong variants (mutants) of the lines the gold
patch adds, each becomes a candidate patch against the base commit (the gold patch with the
mutant's change folded in) and is graded by the verifier that grades agents, in the same
locked-down judge. Each mutant is then

- ``killed``: graded ``unresolved`` with at least one expected test ``failed``;
- ``survived``: graded ``resolved`` (1.0): a wrong fix the task would reward;
- ``invalid``: anything else (the patch did not apply, nothing ran to a verdict because the
  mutant did not build or load, a timeout, a limit, an infrastructure error). It says nothing
  about the tests and is left out of the score.

The score is killed / (killed + survived), ``None`` when both are 0. The record is
``audit.test_strength`` of the manifest (:meth:`StrengthRecord.to_dict`).
"""

from __future__ import annotations

import difflib
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from swe_forge import mutation
from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.records import VerifyResult
from swe_forge.verify.settings import VerifySettings

#: Verdicts of one mutant.
KILLED, SURVIVED, INVALID = "killed", "survived", "invalid"


@dataclass(frozen=True)
class StrengthSettings:
    """The budget of one task's measurement (``admit.test_strength``)."""

    max_mutants: int = 8
    seconds: float = 600.0
    seed: int = 0


#: A mutant's verification may take this many times the gold patch's (plus a minute) before
#: it is ended as a timeout (invalid): a mutant can loop forever (a swapped loop condition),
#: and the verifier's own limit is sized for an agent's patch on a slow suite.
MUTANT_TIME_FACTOR = 4.0


def mutant_settings(settings: VerifySettings, gold_seconds: float | None) -> VerifySettings:
    """The verifier settings a mutant is graded with: no decoy twins (a mutant is made here
    and cannot recognise the held-out tests: the honest run decides it), and a time limit
    scaled on the gold patch's verification (when known) instead of the verifier's own."""
    timeout = settings.timeout_seconds
    if gold_seconds and gold_seconds > 0:
        timeout = min(timeout, MUTANT_TIME_FACTOR * gold_seconds + 60.0)
    return replace(
        settings,
        decoys=0,
        timeout_seconds=timeout,
        test_timeout_seconds=min(settings.test_timeout_seconds, timeout),
    )


@dataclass
class StrengthRecord:
    """What the gate measured on one task (``audit.test_strength``)."""

    settings: StrengthSettings
    generated: int = 0
    killed: int = 0
    survived: int = 0
    invalid: int = 0
    survivors: list[dict[str, object]] = field(default_factory=list)
    #: How many mutants of each operator were generated.
    operators: Counter[str] = field(default_factory=Counter)
    #: One row per mutant graded: id, path, line, operator, verdict, status, seconds.
    mutants: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    budget_exhausted: bool = False
    #: Files of the gold patch left unmutated: benchmarks, examples, docs, scripts.
    skipped: list[str] = field(default_factory=list)
    #: Why no mutant could be made ("" when the engine answered).
    error: str = ""

    @property
    def score(self) -> float | None:
        """killed / (killed + survived); None when no mutant was judged either way."""
        judged = self.killed + self.survived
        return round(self.killed / judged, 4) if judged else None

    def to_dict(self) -> dict[str, Any]:
        """The ``audit.test_strength`` block."""
        return {
            "generated": self.generated,
            "killed": self.killed,
            "survived": self.survived,
            "invalid": self.invalid,
            "score": self.score,
            "survivors": self.survivors,
            "operators": dict(sorted(self.operators.items())),
            "mutants": self.mutants,
            "seconds": round(self.seconds, 3),
            "budget": {
                "max_mutants": self.settings.max_mutants,
                "seconds": self.settings.seconds,
            },
            "budget_exhausted": self.budget_exhausted,
            "seed": self.settings.seed,
            "engine_version": engine_version(),
            "error": self.error or None,
            "skipped": self.skipped,
        }


def engine_version() -> str:
    """The mutation engine's version (``swe_forge.mutation.ENGINE_VERSION`` when it names
    one, else the package's)."""
    from swe_forge import __version__

    return str(getattr(mutation, "ENGINE_VERSION", "") or __version__)


def classify(result: VerifyResult) -> tuple[str, str]:
    """(verdict, why) of one mutant graded by the verifier.

    Only ``unresolved`` with an expected test that ran and ``failed`` is a kill: an
    ``unresolved`` where no expected test failed means nothing ran to a verdict (the mutant
    did not compile or its module did not load), which says nothing about the tests.
    """
    if result.status == "resolved" and result.reward >= 1.0:
        return SURVIVED, "resolved"
    if result.status == "unresolved":
        outcomes = [*result.fail_to_pass.values(), *result.pass_to_pass.values()]
        if "failed" in outcomes:
            return KILLED, "tests failed"
        return INVALID, "no expected test failed: nothing ran to a verdict (build or load error)"
    return INVALID, result.status


def _split_sections(patch: str) -> list[str]:
    """The ``diff --git`` sections of a git patch, in order, each with its own lines."""
    sections: list[str] = []
    for line in patch.splitlines(keepends=True):
        if line.startswith("diff --git ") or not sections:
            sections.append("")
        sections[-1] += line
    return sections


def _lines(text: str) -> list[str]:
    """Lines as git counts them: ended by ``\n`` only (``str.splitlines`` also ends a line
    at a form feed or U+2028, which a source file may hold inside a line)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _hunks(old: str, new: str) -> str:
    """Unified-diff hunks (3 lines of context) of ``old`` -> ``new``, with git's marker for a
    last line that has no newline."""
    a, b = _lines(old), _lines(new)
    out: list[str] = []

    def emit(tag: str, line: str) -> None:
        out.append(tag + line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")

    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        old_len, new_len = i2 - i1, j2 - j1
        old_start = i1 + 1 if old_len else i1
        new_start = j1 + 1 if new_len else j1
        out.append(f"@@ -{old_start},{old_len} +{new_start},{new_len} @@\n")
        for tag, k1, k2, l1, l2 in group:
            if tag == "equal":
                for line in a[k1:k2]:
                    emit(" ", line)
                continue
            for line in a[k1:k2]:
                emit("-", line)
            for line in b[l1:l2]:
                emit("+", line)
    return "".join(out)


class ComposeError(ValueError):
    """A mutant cannot be folded into the gold patch."""


def candidate_patch(
    gold_patch: str, base_read: Callable[[str], bytes | None], m: mutation.Mutant
) -> str:
    """The gold patch with the mutant's change folded in: one git patch against the base
    commit that gives the mutated file where the gold patch gives the gold-patched one (every
    other file as the gold patch has it).

    The mutated file's section keeps the gold section's header (modes, a new file, a rename)
    without its ``index`` line (its blob ids are the gold file's), and gets hunks from the
    base file to the mutant's text; a mutant that undoes the gold patch's change to its file
    leaves that file out. The result is checked by applying it here.

    Raises:
        ComposeError: the gold patch does not touch the mutant's file, the folded patch
            does not give the mutant's text, or the mutant undoes the whole gold patch.
    """
    try:
        patches = parse_diff(gold_patch)
    except DiffParseError as exc:
        raise ComposeError(f"the gold patch does not parse: {exc}") from exc
    sections = _split_sections(gold_patch)
    if len(sections) != len(patches):
        raise ComposeError("the gold patch is not one git section per file")
    out: list[str] = []
    found = False
    for fp, section in zip(patches, sections, strict=True):
        if fp.new_path != m.path:
            out.append(section)
            continue
        found = True
        base = b"" if fp.old_path is None else base_read(fp.old_path)
        if base is None:
            raise ComposeError(f"{fp.old_path} is not in the base tree")
        try:
            old_text = base.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ComposeError(f"{fp.old_path} is not UTF-8 text") from exc
        header: list[str] = []
        for line in section.splitlines(keepends=True):
            if line.startswith(("--- ", "+++ ", "@@", "GIT binary patch")):
                break
            if not line.startswith("index "):
                header.append(line)
        old_name = "/dev/null" if fp.old_path is None else f"a/{fp.old_path}"
        body = _hunks(old_text, m.new_text)
        if not body:
            # The mutant undoes the gold patch's change to this file (`>=` back where the
            # fix made it `>`): the candidate leaves the file as the base has it.
            continue
        out.append("".join(header) + f"--- {old_name}\n+++ b/{m.path}\n" + body)
        try:
            (mine,) = [p for p in parse_diff(out[-1]) if p.new_path == m.path]
            got = apply_file_patch(base, mine)
        except (DiffParseError, PatchApplyError, ValueError) as exc:
            raise ComposeError(f"the folded section of {m.path} does not apply: {exc}") from exc
        if got != m.new_text.encode("utf-8"):
            raise ComposeError(f"the folded section of {m.path} does not give the mutant")
    if not found:
        raise ComposeError(f"the gold patch does not change {m.path}")
    if not out:
        # The base tree itself, which the gate saw fail: nothing to learn about the tests.
        raise ComposeError("the mutant undoes the whole gold patch")
    return "".join(out)


def gold_files(gold_patch: str, base_read: Callable[[str], bytes | None]) -> dict[str, str]:
    """The gold-patched text of every text file the gold patch leaves in the tree (path ->
    text); files that are binary, not UTF-8 or do not apply are left out."""
    files: dict[str, str] = {}
    try:
        patches = parse_diff(gold_patch)
    except DiffParseError:
        return files
    for fp in patches:
        if fp.new_path is None or fp.is_binary:
            continue
        base = b"" if fp.old_path is None else base_read(fp.old_path)
        if base is None:
            continue
        try:
            files[fp.new_path] = apply_file_patch(base, fp).decode("utf-8")
        except (PatchApplyError, UnicodeDecodeError):
            continue
    return files


#: Code the gold patch may change that no task test runs by design: benchmarks, examples,
#: documentation and scripts (top-level folders; benchmark files anywhere). A mutant there
#: survives whatever the tests are (cookie's benchmark suites gave 9 of its 12 survivors),
#: so it says nothing about them.
_OUTSIDE_LIBRARY = re.compile(
    r"^(benches|bench|benchmarks?|examples?|docs?|scripts|tools)/"
    r"|[._-]bench(mark)?s?\.[A-Za-z]+$|(^|/)bench(mark)?_[^/]*$"
)


def outside_library(path: str) -> bool:
    """Is ``path`` a benchmark, an example, documentation or a script (never mutated)?"""
    return _OUTSIDE_LIBRARY.search(path) is not None


def measure(
    *,
    language: str,
    gold_patch: str,
    base_read: Callable[[str], bytes | None],
    grade: Callable[[str, mutation.Mutant], VerifyResult],
    settings: StrengthSettings,
    clock: Callable[[], float] = time.monotonic,
) -> StrengthRecord:
    """Make the gold patch's mutants and grade each as a candidate patch (``grade(patch,
    mutant)``: the verifier's own path) until they are all graded or ``settings.seconds``
    are spent (the mutant being graded finishes; the rest are not started:
    ``budget_exhausted``).

    Never raises for the engine: a failure to make mutants is recorded as ``error`` with
    nothing generated (the task is then unmeasured, not rejected).
    """
    out = StrengthRecord(settings)
    start = clock()
    try:
        lines = mutation.changed_lines(gold_patch)
        files = gold_files(gold_patch, base_read)
        out.skipped = sorted(p for p in lines if p in files and outside_library(p))
        wanted = {p: ls for p, ls in lines.items() if p in files and ls and not outside_library(p)}
        mutants = mutation.generate(
            language,
            {p: files[p] for p in wanted},
            wanted,
            seed=settings.seed,
            limit=settings.max_mutants,
        )[: settings.max_mutants]
    except Exception as exc:  # the engine's failure is recorded, never the task's
        out.error = f"{type(exc).__name__}: {exc}"[:500]
        out.seconds = clock() - start
        return out
    out.generated = len(mutants)
    out.operators = Counter(m.operator for m in mutants)
    for m in mutants:
        if clock() - start >= settings.seconds:
            out.budget_exhausted = True
            break
        began = clock()
        status = ""
        try:
            patch = candidate_patch(gold_patch, base_read, m)
        except ComposeError as exc:
            verdict, why = INVALID, f"compose: {exc}"
        else:
            result = grade(patch, m)
            status = result.status
            verdict, why = classify(result)
        if verdict == KILLED:
            out.killed += 1
        elif verdict == SURVIVED:
            out.survived += 1
            out.survivors.append(m.to_dict())
        else:
            out.invalid += 1
        out.mutants.append(
            {
                "id": m.id,
                "path": m.path,
                "line": m.line,
                "operator": m.operator,
                "verdict": verdict,
                "status": status,
                "why": why,
                "seconds": round(clock() - began, 3),
            }
        )
    out.seconds = clock() - start
    return out
