"""The admission gate: 3 runs before and 3 after the gold patch, then classification.

Every run is a fresh container from the instance image with no network and its own recorded
seeds (a fixed ``PYTHONHASHSEED`` per run index, a random order seed per run):

- FAIL_TO_PASS: failed, errored or missing in all 3 runs before, passed in all 3 after;
- PASS_TO_PASS: passed in all 6 runs;
- flaky: the outcome (passed or not) differs between runs of one phase.

The task is rejected, with one machine-readable reason, when a patch does not apply, a run
times out or hits a resource limit, a run leaves no report, a test file of the test patch
cannot be collected after the fix, a test that passed before fails after, a test in scope is
flaky (strict by default; configurable to drop flaky tests from PASS_TO_PASS only), or there is
no FAIL_TO_PASS test.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from swe_forge.gates.runner import PASSED, RunResult, TestRunner, run_tests
from swe_forge.gates.sandbox import Sandbox


@dataclass(frozen=True)
class GateSettings:
    """How the gate runs and judges."""

    runs_per_phase: int = 3
    hash_seeds: tuple[int, ...] = (0, 1, 2)
    timeout_seconds: float = 600.0
    flaky_policy: str = "reject"  # "reject" | "drop"
    scope: str = "touched"  # "touched" test files of the test patch | "suite"


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


def _passed(run: RunResult, test: str) -> bool:
    return run.tests.get(test) == PASSED


def classify(runs: list[RunResult], settings: GateSettings, test_files: list[str]) -> GateVerdict:
    """Judge finished runs (all with status "ok")."""
    before = [r for r in runs if r.phase == "before"]
    after = [r for r in runs if r.phase == "after"]
    verdict = GateVerdict(admitted=False, runs=runs, test_files=test_files)
    names = sorted({t for r in runs for t in r.tests})
    flaky = [
        t
        for t in names
        if len({_passed(r, t) for r in before}) > 1 or len({_passed(r, t) for r in after}) > 1
    ]
    f2p = [
        t
        for t in names
        if not any(_passed(r, t) for r in before) and all(_passed(r, t) for r in after)
    ]
    p2p = [t for t in names if all(_passed(r, t) for r in runs)]
    broke = [
        t
        for t in names
        if t not in flaky
        and all(_passed(r, t) for r in before)
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
        return verdict
    if broke:
        verdict.reason = "pass_to_fail"
        verdict.detail = f"{len(broke)} test(s) pass before and fail after: {', '.join(broke[:5])}"
        return verdict
    flaky_f2p = [t for t in flaky if not any(_passed(r, t) for r in before) or t in f2p]
    if flaky and (settings.flaky_policy == "reject" or flaky_f2p):
        verdict.reason = "flaky_test"
        verdict.detail = f"{len(flaky)} flaky test(s) in scope: {', '.join(flaky[:5])}"
        return verdict
    if not f2p:
        verdict.reason = "no_fail_to_pass"
        verdict.detail = "no test fails before the fix and passes after it in every run"
        return verdict
    verdict.admitted = True
    verdict.fail_to_pass = f2p
    verdict.pass_to_pass = [t for t in p2p if t not in flaky]
    return verdict


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
) -> GateVerdict:
    """Run the 6 runs (before, after, interleaved) and classify them."""
    start = time.perf_counter()
    rng = rng or random.SystemRandom()
    files = [] if settings.scope == "suite" else test_files
    runs: list[RunResult] = []
    for i in range(settings.runs_per_phase):
        hash_seed = settings.hash_seeds[i % len(settings.hash_seeds)]
        for phase in ("before", "after"):
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
                order_seed=order_seed,
                timeout=settings.timeout_seconds,
                labels=labels,
            )
            runs.append(run)
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
                    f"output: {run.output_tail[-600:]}"
                )
                verdict.seconds = time.perf_counter() - start
                return verdict
    verdict = classify(runs, settings, files)
    verdict.seconds = time.perf_counter() - start
    return verdict
