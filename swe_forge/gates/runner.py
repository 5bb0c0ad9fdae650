"""Test runners: run chosen test files in a fresh judge's container, read per-test outcomes.

The interface (:class:`TestRunner`) is what each ecosystem's runner implements (pytest's:
:mod:`swe_forge.ecosystems.python.runner`). The pytest runner brings its harness plugin from
outside the image (a read-only mount), so the image needs nothing of ours; outcomes come from
the plugin's events, streamed to the supervisor over a pipe (never from scraping stdout), and
are checked against pytest's exit status as the supervisor sees it. Node ids are pytest's own
(relative to ``/testbed``, parametrized ids in full, never truncated).

Each run is made deterministic where it should be: a fixed ``PYTHONHASHSEED`` per run,
``TZ=UTC``, no cache provider, rerun and random-order plugins disabled (the harness does its
own seeded shuffle), a per-run wall clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from swe_forge.excerpt import excerpt
from swe_forge.gates.sandbox import Sandbox, SandboxError, SandboxTimeout

#: Outcome values; "missing" is ours (the test did not run or was not collected).
PASSED = "passed"
MISSING = "missing"

#: The order of the tests in a run: shuffled by the run's recorded seed (the default: the
#: gates look for tests that depend on order), or the project's own, written order (the
#: fallback for a suite whose tests share state and pass only in it; see
#: :func:`swe_forge.gates.gate.run_gate`).
RANDOM = "random"
DECLARED = "declared"


@dataclass
class RunResult:
    """One test run: outcome per node id, plus what happened to the run itself."""

    phase: str  # "before" | "after"
    hash_seed: int
    order_seed: int
    # "ok" | "test_patch_failed" | "gold_patch_failed" | "timeout" | "resource_limit"
    # | "no_report" | "harness_disagreement"
    status: str
    exit_code: int | None
    seconds: float
    tests: dict[str, str] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)
    tampered: str = ""
    output_tail: str = ""
    #: First failure line per failed test or collection error (the code under test's claim:
    #: informational, never part of a verdict). Kept out of ``to_dict``.
    messages: dict[str, str] = field(default_factory=dict)
    #: Groups of tests (a Go package) whose process died mid-run: their tests that did not
    #: run were not observed in this run (recorded only when there are any).
    crashed: list[str] = field(default_factory=list)
    #: RANDOM (``order_seed`` shuffled the tests) or DECLARED (the written order, no seed).
    order: str = RANDOM

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the manifest (without the output tail)."""
        return {
            "phase": self.phase,
            "hash_seed": self.hash_seed,
            "order_seed": self.order_seed,
            "status": self.status,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "tests": dict(sorted(self.tests.items())),
            "collect_errors": dict(sorted(self.collect_errors.items())),
            "tampered": self.tampered,
            **({"crashed": sorted(self.crashed)} if self.crashed else {}),
            # Recorded only when not the default, so manifests of shuffled runs are unchanged.
            **({"order": self.order} if self.order != RANDOM else {}),
        }


class TestRunner(Protocol):
    """What a test framework adapter provides."""

    name: str

    def argv(self, test_files: list[str]) -> list[str]:
        """The command (run by the supervisor as uid 1000 in /testbed) for ``test_files``
        (all tests when empty), loading the harness that streams per-test events."""

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The same command as one shell line (recorded in manifests)."""


def task_order(task: Any) -> str:
    """The order a task's manifest says its gate runs were in (``gates.order``; RANDOM when
    absent): grading runs the tests in the same order, so a suite admitted only in its
    declared order is not graded shuffled."""
    gates = getattr(task, "gates", None) or {}
    return DECLARED if gates.get("order") == DECLARED else RANDOM


def runs_in_declared_order(runner: object) -> bool:
    """Can ``runner`` run its tests in the project's written order?

    pytest's (a runner without ``run_spec``) can: the judge's harness orders the collected
    items itself (``order: natural``, the order its grading always uses). Another ecosystem's
    runner says so with ``declared_order = True`` and then takes ``order=DECLARED`` in its
    ``run_spec``."""
    return getattr(runner, "run_spec", None) is None or bool(
        getattr(runner, "declared_order", False)
    )


def run_tests(
    sandbox: Sandbox,
    image: str,
    runner: TestRunner,
    test_files: list[str],
    *,
    test_patch: str,
    gold_patch: str | None,
    protect: dict[str, list[str]],
    phase: str,
    hash_seed: int,
    order_seed: int,
    timeout: float,
    test_timeout: float = 0.0,
    labels: dict[str, str] | None = None,
    order: str = RANDOM,
) -> RunResult:
    """One gate run in a fresh judge's container from ``image``: the test patch (and, after,
    the gold patch) applied as uid 1000, the judge's files locked, the tests run by the
    supervisor as uid 1000, outcomes from the harness checked against pytest's exit status.

    ``order``: RANDOM shuffles the tests by ``order_seed``; DECLARED runs them in the
    project's written order (only for a runner :func:`runs_in_declared_order` accepts)."""
    if order == DECLARED and not runs_in_declared_order(runner):
        raise ValueError(f"runner {runner.name} cannot run tests in declared order")
    result = RunResult(
        phase=phase,
        hash_seed=hash_seed,
        order_seed=order_seed,
        status="ok",
        exit_code=None,
        seconds=0.0,
        order=order,
    )
    start = time.perf_counter()
    try:
        with sandbox.open(image, labels=labels) as session:
            # A baseline run (phase "base") runs the base code's own tests, no patch at all.
            patches = (
                [{"name": "test", "path": session.put("test.patch", test_patch)}]
                if test_patch
                else []
            )
            if gold_patch is not None:
                patches.append({"name": "gold", "path": session.put("gold.patch", gold_patch)})
            job: dict[str, Any] = {
                "patches": patches,
                "protect": protect,
                "run": {
                    "argv": runner.argv(test_files),
                    "env": {
                        "PYTHONHASHSEED": str(hash_seed),
                        "SWE_FORGE_ORDER_SEED": str(order_seed),
                    },
                    "timeout": timeout,
                    "test_timeout": test_timeout,
                    "output_limit": sandbox.settings.limits.output_bytes,
                    "select": None,
                    "canaries": None,
                },
            }
            run_spec = getattr(runner, "run_spec", None)
            if run_spec is None:
                # Out of the tests' reach once collected, as in every verification: a test
                # that reads its own file at run time fails here too, so it is in neither
                # FAIL_TO_PASS nor PASS_TO_PASS instead of failing every grading.
                job["run"]["hide_collected"] = sorted(test_files)
                if order == DECLARED:
                    job["run"]["order"] = "natural"
            else:
                # Another ecosystem's runner: its command, environment and report format
                # (``order`` only to a runner that runs in declared order: the others'
                # run_spec has no such parameter).
                extra = {"order": order} if order != RANDOM else {}
                job["run"].update(
                    run_spec(
                        test_files,
                        order_seed=order_seed,
                        hash_seed=hash_seed,
                        test_timeout=test_timeout,
                        **extra,
                    )
                )
            try:
                answer = session.call("all", job, timeout=timeout + 300)
            except SandboxTimeout:
                result.status = "timeout"
                return result
            except SandboxError as exc:
                if session.oom_killed():
                    result.status = "resource_limit"
                    result.output_tail = excerpt(str(exc))
                    return result
                raise
    finally:
        result.seconds = time.perf_counter() - start
    read_answer(result, answer)
    settle = getattr(runner, "settle", None)
    if settle is not None and result.status == "ok":
        # What only the ecosystem can tell from the outcomes (a Go test that panicked
        # took its test binary down: the tests after it were never run).
        settle(result)
    return result


def read_answer(result: RunResult, answer: dict[str, Any]) -> RunResult:
    """Fill a gate run's result from the supervisor's answer."""
    result.output_tail = excerpt(str(answer.get("output_tail") or ""))
    result.exit_code = answer.get("exit_code")
    if answer.get("status") == "apply_failed":
        result.status = (
            "test_patch_failed" if answer.get("failed_patch") == "test" else "gold_patch_failed"
        )
        return result
    if answer.get("status") == "timeout":
        result.status = "timeout"
        return result
    if answer.get("status") == "judge_failed":
        result.status = "judge_failed"
        result.output_tail = excerpt(str(answer.get("detail") or ""))
        return result
    if answer.get("status") in ("output_limit", "fork_bomb"):
        result.status = "resource_limit"
        return result
    events = answer.get("events") or {}
    limits = answer.get("limits") or {}
    result.tests = {str(k): str(v) for k, v in (events.get("tests") or {}).items()}
    result.collect_errors = {str(k): "error" for k in events.get("collect_errors") or ()}
    result.crashed = sorted({str(k) for k in events.get("crashed") or ()})
    result.messages = {
        str(k): str(v)[:1000] for k, v in sorted((events.get("messages") or {}).items())
    }
    integrity = answer.get("integrity") or {}
    tamper = [str(x) for x in events.get("tamper") or ()]
    tamper += [f"{p} changed during the run" for p in integrity.get("changed", [])]
    tamper += [f"{p} appeared during the run" for p in integrity.get("appeared", [])]
    tamper += [f"watch: {w}" for w in integrity.get("watch", [])]
    if events.get("forged"):
        tamper.append(f"{events['forged']} line(s) on the harness channel not from the harness")
    result.tampered = "; ".join(tamper)[:2000]
    if limits.get("oom_kills") or limits.get("pids_max_hits") or limits.get("full_mounts"):
        result.status = "resource_limit"
        return result
    if not events.get("connected") or not events.get("ended"):
        result.status = "no_report"
        return result
    code = result.exit_code
    bad = any(v in ("failed", "error") for v in result.tests.values())
    if (
        events.get("exitstatus") != code
        or (code == 0 and (bad or result.collect_errors))
        or (code == 1 and not bad and not result.collect_errors)
    ):
        # pytest's own verdict and the per-test outcomes disagree: the harness missed
        # something (a subtest, a report it could not see); nothing here can be trusted.
        result.status = "harness_disagreement"
    return result
