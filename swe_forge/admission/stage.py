"""Admit a list of candidates, one after the other, each decision written as it is made."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import Candidate, Rejection, TaskManifest

if TYPE_CHECKING:
    from swe_forge.records import ImageRecord


class Decider(Protocol):
    """What decides one candidate (:class:`~swe_forge.admission.admitter.Admitter`)."""

    def admit(
        self,
        cand: Candidate,
        images: ImageRecord | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> tuple[TaskManifest | Rejection, dict[str, float]]:
        """A manifest or a rejection, and timings by step."""


class DecisionSink(Protocol):
    """Where decisions go (:class:`~swe_forge.admission.output.DecisionLog`)."""

    decided: dict[str, str]

    def task(self, manifest: TaskManifest) -> None:
        """Keep an admitted task."""

    def rejection(self, rejection: Rejection) -> None:
        """Keep a rejection."""


@dataclass
class AdmitResult:
    """What an admission run decided, with what an earlier run of it had decided."""

    admitted: list[TaskManifest] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    #: Decisions already on file when the run started ("admitted" or reason -> count).
    resumed: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    timings: list[dict[str, float]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Totals (this run and the one it resumed), rejection reasons, time per candidate."""
        reasons = Counter(r.reason for r in self.rejected)
        reasons.update({k: v for k, v in self.resumed.items() if k != "admitted"})
        now = len(self.admitted) + len(self.rejected)
        stages: dict[str, float] = {}
        for t in self.timings:
            for key, value in t.items():
                stages[key] = stages.get(key, 0.0) + value
        return {
            "seconds_by_stage": {k: round(v, 2) for k, v in sorted(stages.items())},
            "candidates": now + sum(self.resumed.values()),
            "admitted": len(self.admitted) + self.resumed["admitted"],
            "rejected": dict(sorted(reasons.items())),
            "resumed": sum(self.resumed.values()),
            "seconds": round(self.seconds, 2),
            "seconds_per_candidate": round(self.seconds / now, 2) if now else 0.0,
        }


def _describe(made: TaskManifest | Rejection) -> str:
    if isinstance(made, TaskManifest):
        dropped = len(made.gates.get("dropped_flaky") or ())
        left_out = len(made.gates.get("not_fail_to_pass") or ())
        extra = "".join(
            (
                f", {dropped} flaky test(s) dropped from pass-to-pass" if dropped else "",
                f", {left_out} test(s) not in the test patch left out" if left_out else "",
            )
        )
        return f"admitted, {len(made.FAIL_TO_PASS)} fail-to-pass{extra}"
    return f"rejected ({made.reason}): {made.detail[:100]}"


def admit_candidates(
    candidates: list[Candidate],
    decider: Decider,
    sink: DecisionSink,
    *,
    images: dict[str, ImageRecord] | None = None,
    reporter: Reporter | None = None,
    jobs: int = 1,
) -> AdmitResult:
    """Decide every candidate not yet decided in ``sink``, in order (``jobs`` at once); hand
    over each decision as soon as it is made.

    An exception (Ctrl-C included) ends the run with every finished decision kept by the
    sink: the same call again does only the rest. With several jobs, decisions reach the sink
    in the order they finish; ``result.admitted`` and ``result.rejected`` are in candidate
    order whatever the jobs.
    """
    start = time.perf_counter()
    reporter = reporter or NullReporter()
    images = images or {}
    result = AdmitResult()
    ids = {c.instance_id for c in candidates}
    result.resumed = Counter(v for k, v in sink.decided.items() if k in ids)
    todo = [c for c in candidates if c.instance_id not in sink.decided]
    skipped = len(candidates) - len(todo)
    reporter.start("admit", len(todo))
    reporter.note(
        f"admit: {len(candidates)} candidate(s)"
        + (
            f", {skipped} already decided on file (skipped; --restart starts over)"
            if skipped
            else ""
        )
        + f", {len(todo)} to do"
    )
    lock = threading.Lock()

    def one(i: int, cand: Candidate) -> None:
        prefix = f"[{i}/{len(todo)}] {cand.instance_id}"
        began = time.perf_counter()
        reporter.note(f"{prefix}: started")

        def say(line: str) -> None:
            reporter.note(f"{prefix}: {line}")

        made, timings = decider.admit(cand, images.get(cand.instance_id), progress=say)
        with lock:
            result.timings.append(timings)
            if isinstance(made, TaskManifest):
                sink.task(made)
                result.admitted.append(made)
            else:
                sink.rejection(made)
                result.rejected.append(made)
            reporter.note(f"{prefix}: {_describe(made)} ({time.perf_counter() - began:.0f}s)")
            reporter.advance()

    try:
        if jobs <= 1:
            for i, cand in enumerate(todo, 1):
                one(i, cand)
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(one, i, c) for i, c in enumerate(todo, 1)]
                try:
                    for fut in futures:
                        fut.result()
                except BaseException:
                    for fut in futures:
                        fut.cancel()
                    raise
    finally:
        reporter.finish()
        result.seconds = time.perf_counter() - start
        rank = {c.instance_id: n for n, c in enumerate(candidates)}
        result.admitted.sort(key=lambda m: rank.get(m.instance_id, len(rank)))
        result.rejected.sort(key=lambda r: rank.get(r.instance_id or "", len(rank)))
    return result
