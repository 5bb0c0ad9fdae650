"""The admission gate: 3 runs before and 3 after the gold patch, then classification.

Every run is a fresh container from the instance image with no network and its own recorded
seeds (a fixed ``PYTHONHASHSEED`` per run index, a random order seed per run):

- FAIL_TO_PASS: failed, errored or missing in all 3 runs before, passed in all 3 after, and
  (by default, ``fail_to_pass_scope: patched``) defined or changed by the test patch: a test
  that fails before only because its module cannot be imported yet is not what the task is
  about (see :mod:`swe_forge.ecosystems.python.scope`); the tests left out and the collection errors
  before the fix are kept as evidence;
- PASS_TO_PASS: passed in all 6 runs;
- flaky: the outcome (passed or not) differs between runs of one phase.

The task is rejected, with one machine-readable reason, when a patch does not apply, a run
times out or hits a resource limit, a run leaves no report, a test file of the test patch
cannot be collected after the fix, a test that passed before fails after, a flaky test could
be FAIL_TO_PASS (the test patch defines or changes it), or there is no FAIL_TO_PASS test. A
test flaky only in PASS_TO_PASS's scope is dropped from PASS_TO_PASS with its per-run outcomes
as evidence (``flaky_policy: drop``, the default; ``reject`` rejects the task instead).

A test a run did not reach because its test process died first (a Go test binary stops at a
panic; the runner's ``settle`` names the crashed groups) was not run: it is neither a pass nor
a failure in that run, for flakiness, FAIL_TO_PASS and pass-to-fail alike, and a rejection
whose runs crashed says so in its detail.

Runs are shuffled by default. When the shuffled runs are rejected for order dependence and
the runner can run its tests in the order they are written, the gate runs them again in that
order; a task admitted so records ``order: declared`` and is graded in that order
(:func:`run_gate`). A task admitted shuffled whose runs after the fix crashed is tried in
declared order too: a grading in another order could die before reaching its tests.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from swe_forge.excerpt import excerpt
from swe_forge.gates.runner import (
    DECLARED,
    MISSING,
    PASSED,
    RANDOM,
    RunResult,
    TestRunner,
    run_tests,
    runs_in_declared_order,
)
from swe_forge.gates.sandbox import Sandbox


class Scope(Protocol):
    """The tests a test patch defines or changes (:class:`PatchScope` for pytest; each
    ecosystem adapter has its own)."""

    def covers(self, test: str) -> bool:
        """Is ``test`` defined or changed by the test patch?"""


@dataclass(frozen=True)
class GateSettings:
    """How the gate runs and judges."""

    runs_per_phase: int = 3
    hash_seeds: tuple[int, ...] = (0, 1, 2)
    timeout_seconds: float = 600.0
    #: Per test (0: none): a test past it fails alone instead of timing out the whole run.
    test_timeout_seconds: float = 120.0
    flaky_policy: str = "drop"  # "drop" (flaky PASS_TO_PASS tests only) | "reject"
    scope: str = "touched"  # "touched" test files of the test patch | "suite"
    #: "patched": FAIL_TO_PASS only from tests the test patch defines or changes | "all"
    fail_to_pass_scope: str = "patched"


@dataclass
class GateVerdict:
    """The outcome of the gate for one candidate."""

    admitted: bool
    reason: str = ""
    detail: str = ""
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    runs: list[RunResult] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Flaky tests left out of PASS_TO_PASS: {"test", "before", "after"} (outcome per run).
    dropped_flaky: list[dict[str, Any]] = field(default_factory=list)
    #: Tests that fail before and pass after but that the test patch neither defines nor
    #: changes, each with why it failed before ("collection_error", "missing", "failed"...).
    not_fail_to_pass: dict[str, str] = field(default_factory=dict)
    #: Collectors (modules) that could not be collected before the fix -> runs (1-based).
    collection_errors_before: dict[str, list[int]] = field(default_factory=dict)
    #: The order the runs judged here ran their tests in (RANDOM, or DECLARED: the fallback,
    #: which grading must then follow).
    order: str = RANDOM
    #: With the DECLARED fallback: why the shuffled runs were not admitted
    #: ({"reason", "detail", "order_seeds"}).
    shuffled: dict[str, Any] = field(default_factory=dict)

    def evidence(self) -> dict[str, Any]:
        """What the gate left out of FAIL_TO_PASS/PASS_TO_PASS and why (for the manifest),
        and the order of the runs when it is not the default (graders read ``order``)."""
        out: dict[str, Any] = {
            "dropped_flaky": self.dropped_flaky,
            "not_fail_to_pass": dict(sorted(self.not_fail_to_pass.items())),
            "collection_errors_before": dict(sorted(self.collection_errors_before.items())),
        }
        if self.order != RANDOM:
            out["order"] = self.order
            out["shuffled"] = self.shuffled
        return out


def _passed(run: RunResult, test: str) -> bool:
    return run.tests.get(test) == PASSED


def _observed(run: RunResult, test: str) -> bool:
    """Did ``run`` see ``test`` at all? Not when its group's process died before reaching
    it (a Go test binary stops at the first panic, wherever the shuffle put the test)."""
    return test in run.tests or test.split("::", 1)[0] not in run.crashed


def _seen(runs: list[RunResult], test: str) -> list[RunResult]:
    """The runs of ``runs`` that observed ``test``: one that crashed before reaching it did
    not run it, which is neither a pass nor a failure."""
    return [r for r in runs if _observed(r, test)]


def _collateral(runs: list[RunResult], test: str) -> bool:
    """Did ``test`` fail only in runs whose process died (and pass in another)? Then it was
    in flight when another test's panic ended the binary (Go runs `t.Parallel()` subtests side
    by side, and reports each one running then as failed): which ones depends on scheduling,
    not on them. It passed before the fix, so it is not FAIL_TO_PASS, and it is not flaky
    (first contact, spf13/cast-273: 116 such subtests made a deterministic panic `flaky`)."""
    unit = test.split("::", 1)[0]
    failed = [r for r in runs if _observed(r, test) and not _passed(r, test)]
    passed = any(_passed(r, test) for r in runs)
    return passed and bool(failed) and all(unit in r.crashed for r in failed)


def _outcomes(runs: list[RunResult], test: str) -> list[str]:
    return [r.tests.get(test, MISSING) for r in runs]


def _why_failed_before(before: list[RunResult], test: str) -> str:
    module = test.split("::", 1)[0]
    if any(module in r.collect_errors for r in before):
        return "collection_error"
    return "/".join(sorted(set(_outcomes(before, test))))


def classify(
    runs: list[RunResult],
    settings: GateSettings,
    test_files: list[str],
    scope: Scope | None = None,
) -> GateVerdict:
    """Judge finished runs (all with status "ok").

    ``scope``: the tests the test patch defines or changes; with ``fail_to_pass_scope:
    patched`` only they can be FAIL_TO_PASS (without a scope, nothing is filtered).
    """
    before = [r for r in runs if r.phase == "before"]
    after = [r for r in runs if r.phase == "after"]
    baseline = [r for r in runs if r.phase == "base"]
    runs = [r for r in runs if r.phase != "base"]
    verdict = GateVerdict(admitted=False, runs=runs + baseline, test_files=test_files)
    names = sorted({t for r in runs for t in r.tests})
    flaky = [
        t
        for t in names
        if (
            len({_passed(r, t) for r in before if _observed(r, t)}) > 1
            and not _collateral(before, t)
        )
        or len({_passed(r, t) for r in after if _observed(r, t)}) > 1
    ]
    filtering = scope is not None and settings.fail_to_pass_scope == "patched"

    def patched(test: str) -> bool:
        return scope.covers(test) if filtering and scope is not None else True

    # Failing before is what a run observed: a run whose process died before reaching the
    # test is no evidence either way (at least one before run must have seen it). Passing
    # after must hold in every run.
    fails_then_passes = [
        t
        for t in names
        if _seen(before, t)
        and not any(_passed(r, t) for r in before)
        and all(_passed(r, t) for r in after)
    ]
    f2p = [t for t in fails_then_passes if patched(t)]
    verdict.not_fail_to_pass = {
        t: _why_failed_before(before, t) for t in fails_then_passes if not patched(t)
    }
    direct = getattr(scope, "covers_directly", None) if filtering else None
    if baseline and direct is not None:
        # The package did not build before the fix, so "failed before" says nothing of a test
        # the patch reaches only through a changed table or helper: one that exists at the
        # base and passes there is not what the task is about (its new cases, which do not
        # exist at the base, still are).
        indirect = [t for t in f2p if not direct(t) and all(_passed(r, t) for r in baseline)]
        for t in indirect:
            verdict.not_fail_to_pass[t] = "passes_at_base"
        f2p = [t for t in f2p if t not in indirect]
    for n, r in enumerate(before, 1):
        for key in r.collect_errors:
            verdict.collection_errors_before.setdefault(key, []).append(n)
    p2p = [t for t in names if all(_passed(r, t) for r in runs)]
    # Passed in every before run that ran it, failed in every after run that ran it: a test
    # no after run reached (its binary crashed first) did not fail, it did not run.
    broke = [
        t
        for t in names
        if t not in flaky
        and _seen(before, t)
        and all(_passed(r, t) for r in _seen(before, t))
        and _seen(after, t)
        and not any(_passed(r, t) for r in after)
    ]
    verdict.flaky = flaky
    tampered = sorted({r.tampered for r in runs if r.tampered})
    if tampered:
        # The harness saw the framework change under it: the repository's own code (or tests)
        # tamper with pytest, and no verification on this task could be trusted.
        verdict.reason = "harness_tamper"
        verdict.detail = "; ".join(tampered)
        return verdict
    # A test file of the test patch that cannot even be collected after the fix means the
    # environment (or the patch) is broken: no task can be judged fairly on it.
    broken_files = sorted(
        {
            k
            for r in after
            for k in r.collect_errors
            if any(k == f or k.startswith(f + "::") for f in test_files) or (not test_files)
        }
    )
    if broken_files:
        verdict.reason = "collection_error"
        verdict.detail = f"cannot collect after the fix: {', '.join(broken_files[:5])}"
        why = next(
            (_error_line(r.messages[k]) for r in after for k in broken_files if k in r.messages), ""
        )
        if why:
            verdict.detail += f" ({why})"
        return verdict
    if broke:
        verdict.reason = "pass_to_fail"
        verdict.detail = f"{len(broke)} test(s) pass before and fail after: {', '.join(broke[:5])}"
        verdict.detail += _crash_note(runs)
        return verdict
    # Flakiness where FAIL_TO_PASS could come from rejects: a test the patch defines or
    # changes (its own tests), or, without a scope, any test that never passed before.
    flaky_f2p = [
        t
        for t in flaky
        if (patched(t) if filtering else not any(_passed(r, t) for r in before)) or t in f2p
    ]
    if flaky_f2p or (flaky and settings.flaky_policy == "reject"):
        shown = flaky_f2p or flaky
        verdict.reason = "flaky_test"
        verdict.detail = (
            f"{len(flaky)} flaky test(s) in scope"
            + (f", {len(flaky_f2p)} of them FAIL_TO_PASS candidates" if flaky_f2p else "")
            + f": {', '.join(shown[:5])}"
        )
        verdict.detail += _crash_note(runs)
        return verdict
    if not names and not any(r.collect_errors for r in runs):
        # Not one run reported a test, nor a file it could not collect: the runner ran
        # nothing (a usage error, a runner that is not the project's), which says nothing of
        # the PR (tj/commander.js, first contact: pytest's exit 4 on JavaScript files, filed
        # as no_fail_to_pass).
        codes = sorted({str(r.exit_code) for r in runs})
        verdict.reason = "no_test_report"
        verdict.detail = (
            f"no run reported a test (exit codes {', '.join(codes)}): the runner ran "
            "nothing of the test patch's files"
        )
        return verdict
    if not f2p:
        verdict.reason = "no_fail_to_pass"
        verdict.detail = "no test fails before the fix and passes after it in every run"
        if verdict.not_fail_to_pass:
            verdict.detail += (
                f" among the tests the test patch defines or changes "
                f"({len(verdict.not_fail_to_pass)} other test(s) do, e.g. "
                f"{next(iter(sorted(verdict.not_fail_to_pass)))})"
            )
        verdict.detail += _crash_note(runs)
        return verdict
    verdict.admitted = True
    verdict.fail_to_pass = f2p
    verdict.pass_to_pass = [t for t in p2p if t not in flaky]
    if baseline:
        # Tests that could not even be built before the fix (a compiled language builds a
        # package whole, and the test patch uses what the fix adds) but that pass at the base
        # without the test patch and after the fix, every time: they guard the rest of the
        # package against a patch that breaks it.
        kept = set(verdict.pass_to_pass) | set(f2p)
        own = direct if direct is not None else patched
        extra = [
            t
            for t in names
            if t not in kept
            and t not in flaky
            and not own(t)
            and all(_passed(r, t) for r in after)
            and all(_passed(r, t) for r in baseline)
        ]
        verdict.pass_to_pass = sorted(set(verdict.pass_to_pass) | set(extra))
    verdict.dropped_flaky = [
        {"test": t, "before": _outcomes(before, t), "after": _outcomes(after, t)} for t in flaky
    ]
    return verdict


def _crash_note(runs: list[RunResult]) -> str:
    """The rejection detail's note of runs whose test process died mid-run ("" for none):
    the tests after the crash did not run, and the reader must know the outcomes are partial."""
    crashed = [
        f"{r.phase} {n}: {', '.join(r.crashed[:3])}"
        for phase in ("before", "after")
        for n, r in enumerate((x for x in runs if x.phase == phase), 1)
        if r.crashed
    ]
    if not crashed:
        return ""
    return (
        f"; {len(crashed)} run(s) crashed, tests after the crash not run ({'; '.join(crashed[:6])})"
    )


def order_dependent(verdict: GateVerdict) -> bool:
    """Do the shuffled runs show that outcomes depend on order?

    For a rejected verdict: a test whose outcome differs between runs of one phase (each run
    has its own order), a test that passes before and fails after (one phase's orders can
    break it every time), or a run whose test process died (where the shuffle put the crash
    decides what ran). A rejection for anything else (a patch, a tamper, a build) is not
    about order. For an admitted one: a run after the fix that crashed (the fixed code still
    kills its test process, and a grading in another order can die before its tests: the 3
    runs were lucky, not deterministic)."""
    if verdict.admitted:
        return any(r.crashed for r in verdict.runs if r.phase == "after")
    if verdict.reason not in ("flaky_test", "pass_to_fail", "no_fail_to_pass"):
        return False
    return bool(
        verdict.flaky or verdict.reason == "pass_to_fail" or any(r.crashed for r in verdict.runs)
    )


def run_gate(
    sandbox: Sandbox,
    image: str,
    runner: TestRunner,
    *,
    test_patch: str,
    gold_patch: str,
    test_files: list[str],
    protect: dict[str, list[str]],
    settings: GateSettings,
    rng: random.Random | None = None,
    labels: dict[str, str] | None = None,
    scope: Scope | None = None,
    progress: Callable[[str], None] | None = None,
) -> GateVerdict:
    """Run the 6 runs (before, after, interleaved) in random orders and classify them.

    When they are rejected for order dependence (:func:`order_dependent`) and the runner can
    run its tests in the project's written order (:func:`runs_in_declared_order`), the 6 runs
    are made again in that order: a suite whose tests share state passes in the order its
    authors run it. If those are admitted, the verdict says ``order: declared`` (the manifest
    records it and grading runs in the same order), with the shuffled runs' reason as
    evidence. Otherwise the declared order's rejection stands when it shows no order
    dependence itself (the shuffled reason in its detail), else the shuffled one (the declared
    reason in its detail). Random order stays the default.

    ``progress`` hears one line per finished run (a run can take minutes on a real project).
    """
    start = time.perf_counter()
    rng = rng or random.SystemRandom()

    def gate(order: str) -> GateVerdict:
        return _gate_runs(
            sandbox,
            image,
            runner,
            test_patch=test_patch,
            gold_patch=gold_patch,
            test_files=test_files,
            protect=protect,
            settings=settings,
            rng=rng,
            labels=labels,
            scope=scope,
            progress=progress,
            order=order,
        )

    verdict = gate(RANDOM)
    if order_dependent(verdict) and runs_in_declared_order(runner):
        if progress is not None:
            why = verdict.reason or "admitted, but a run after the fix crashed"
            progress(f"shuffled runs: {why}; running again in declared order")
        declared = gate(DECLARED)
        if declared.admitted:
            declared.order = DECLARED
            declared.shuffled = {
                "reason": verdict.reason or "after_run_crashed",
                "detail": verdict.detail or _crash_note(verdict.runs).removeprefix("; "),
                "order_seeds": [r.order_seed for r in verdict.runs if r.phase != "base"],
            }
            verdict = declared
        elif not verdict.admitted and not order_dependent(declared):
            # The written order gives a verdict that does not depend on order (no flaky
            # test, no crash): its reason is the task's, not the shuffle's artefact (a test
            # "broken" by the fix only because a shuffle put it after one that shares state).
            declared.detail += f"; shuffled: {verdict.reason} ({verdict.detail[:300]})"
            verdict = declared
        elif not verdict.admitted:
            verdict.detail += f"; in declared order too: {declared.reason or 'not admitted'}" + (
                f" ({declared.detail[:300]})" if declared.detail else ""
            )
    verdict.seconds = time.perf_counter() - start
    return verdict


def _gate_runs(
    sandbox: Sandbox,
    image: str,
    runner: TestRunner,
    *,
    test_patch: str,
    gold_patch: str,
    test_files: list[str],
    protect: dict[str, list[str]],
    settings: GateSettings,
    rng: random.Random,
    labels: dict[str, str] | None,
    scope: Scope | None,
    progress: Callable[[str], None] | None,
    order: str,
) -> GateVerdict:
    """The 6 runs (and the baseline runs a runner asks for) in ``order``, classified."""
    declared = order == DECLARED
    files = [] if settings.scope == "suite" else test_files
    runs: list[RunResult] = []
    for i in range(settings.runs_per_phase):
        hash_seed = settings.hash_seeds[i % len(settings.hash_seeds)]
        for phase in ("before", "after"):
            # A declared order has no seed (0 recorded); one is still drawn, so the seeds of
            # the runs that do shuffle are the same whichever order runs first.
            order_seed = rng.randrange(2**31)
            run = run_tests(
                sandbox,
                image,
                runner,
                files,
                test_patch=test_patch,
                gold_patch=gold_patch if phase == "after" else None,
                protect=protect,
                phase=phase,
                hash_seed=hash_seed,
                order_seed=0 if declared else order_seed,
                timeout=settings.timeout_seconds,
                test_timeout=settings.test_timeout_seconds,
                labels=labels,
                order=order,
            )
            runs.append(run)
            if progress is not None:
                progress(
                    f"gate run {len(runs)}/{2 * settings.runs_per_phase} ({phase}"
                    + (", declared order" if declared else "")
                    + f"): {run.status}, {len(run.tests)} tests, {run.seconds:.0f}s"
                )
            if run.status != "ok":
                verdict = GateVerdict(admitted=False, runs=runs, test_files=files)
                verdict.reason = {
                    "test_patch_failed": "patch_apply_failed",
                    "gold_patch_failed": "patch_apply_failed",
                    "timeout": "timeout",
                    "resource_limit": "resource_limit",
                    "no_report": "no_test_report",
                    "harness_disagreement": "harness_disagreement",
                    "judge_failed": "judge_failed",
                }.get(run.status, run.status)
                which = "test patch" if run.status == "test_patch_failed" else "gold patch"
                verdict.detail = (
                    f"the {which} does not apply"
                    if "patch" in run.status
                    else f"{phase} run {i + 1}: {run.status} (exit {run.exit_code}); "
                    f"output: {excerpt(run.output_tail, 600)}"
                )
                return verdict
    uncollectable = any(r.collect_errors for r in runs if r.phase == "before")
    if uncollectable and getattr(runner, "baseline_runs", False):
        # The test patch's package(s) did not build before the fix: the base's own tests are
        # run without it, to find the tests that guard the rest (see classify).
        for i in range(settings.runs_per_phase):
            hash_seed = settings.hash_seeds[i % len(settings.hash_seeds)]
            order_seed = rng.randrange(2**31)
            run = run_tests(
                sandbox,
                image,
                runner,
                files,
                test_patch="",
                gold_patch=None,
                protect=protect,
                phase="base",
                hash_seed=hash_seed,
                order_seed=0 if declared else order_seed,
                timeout=settings.timeout_seconds,
                test_timeout=settings.test_timeout_seconds,
                labels=labels,
                order=order,
            )
            runs.append(run)
            if progress is not None:
                progress(
                    f"baseline run {i + 1}/{settings.runs_per_phase}: "
                    f"{run.status}, {len(run.tests)} tests, {run.seconds:.0f}s"
                )
            if run.status != "ok":
                # No baseline: no extra PASS_TO_PASS, and nothing else changes.
                runs = [r for r in runs if r.phase != "base"]
                break
    return classify(runs, settings, files, scope)


def _error_line(message: str) -> str:
    """The line of a collection error's report that names the error (``E   ModuleNotFound...``)."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    named = [ln for ln in lines if ln.startswith("E ")] or lines[-1:]
    return named[-1].removeprefix("E").strip()[:300] if named else ""
