"""The gate's order fallback (shuffled runs that show order dependence are run again in the
project's declared order) and crash handling in classification: a test a crashed run never
reached was not run, neither passed nor failed. No Docker: a fake sandbox answers the way the
supervisor does, from what the job asks for."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from swe_forge.ecosystems.go.adapter import GoEcosystem, GoRunner
from swe_forge.gates.gate import GateSettings, classify, order_dependent, run_gate
from swe_forge.gates.runner import DECLARED, RANDOM, RunResult, runs_in_declared_order, task_order

Answer = Callable[[dict[str, Any]], dict[str, str]]


class FakeSession:
    def __init__(self, answer: Answer, jobs: list[dict[str, Any]]) -> None:
        self.answer = answer
        self.jobs = jobs

    def put(self, name: str, text: str) -> str:
        return "/judge/" + name

    def call(self, op: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.jobs.append(job)
        tests = self.answer(job)
        bad = any(v == "failed" for v in tests.values())
        return {
            "status": "ok",
            "exit_code": int(bad),
            "events": {
                "connected": True,
                "ended": True,
                "exitstatus": int(bad),
                "tests": tests,
                "messages": {},
                "collect_errors": [],
            },
        }

    def oom_killed(self) -> bool:
        return False


class FakeSandbox:
    def __init__(self, answer: Answer) -> None:
        self.jobs: list[dict[str, Any]] = []
        self.answer = answer
        self.settings = SimpleNamespace(limits=SimpleNamespace(output_bytes=1 << 20))

    @contextmanager
    def open(self, image: str, labels: dict[str, str] | None = None) -> Iterator[FakeSession]:
        yield FakeSession(self.answer, self.jobs)


def _gold(job: dict[str, Any]) -> bool:
    return any(p["name"] == "gold" for p in job["patches"])


def _shuffle(job: dict[str, Any]) -> str:
    m = re.search(r"-shuffle=(\S+)", job["run"]["argv"][-1])
    assert m is not None
    return m.group(1)


def _shared_state_suite(job: dict[str, Any]) -> dict[str, str]:
    """A Go package whose TestSetRand leaves a global behind: in the written order it runs
    last and everything passes; shuffled, the tests that follow it fail (which ones depends
    on the seed). TestFix fails before the fix."""
    fixed = "passed" if _gold(job) else "failed"
    if _shuffle(job) == "off":
        return {".::TestA": "passed", ".::TestB": "passed", ".::TestFix": fixed}
    seed = int(_shuffle(job))
    return {
        ".::TestA": "failed" if seed % 2 else "passed",
        ".::TestB": "passed" if seed % 2 else "failed",
        ".::TestFix": fixed if seed % 3 else "failed",
    }


def _gate(sandbox: FakeSandbox, runner: Any) -> Any:
    return run_gate(
        sandbox,  # type: ignore[arg-type]
        "img",
        runner,
        test_patch="diff",
        gold_patch="diff",
        test_files=["x_test.go"],
        protect={"files": [], "trees": []},
        settings=GateSettings(),
        rng=random.Random(5),
    )


def test_order_dependent_suite_is_admitted_in_declared_order_and_says_so() -> None:
    sandbox = FakeSandbox(_shared_state_suite)
    verdict = _gate(sandbox, GoRunner("m"))
    # 6 shuffled runs, then 6 in the written order.
    assert [_shuffle(j) for j in sandbox.jobs][6:] == ["off"] * 6
    assert all(s != "off" for s in [_shuffle(j) for j in sandbox.jobs][:6])
    assert verdict.admitted and verdict.order == DECLARED
    assert verdict.fail_to_pass == [".::TestFix"]
    assert verdict.pass_to_pass == [".::TestA", ".::TestB"]
    evidence = verdict.evidence()
    assert evidence["order"] == DECLARED
    assert evidence["shuffled"]["reason"] == "flaky_test"
    assert len(evidence["shuffled"]["order_seeds"]) == 6
    assert all(r.to_dict()["order"] == DECLARED and r.order_seed == 0 for r in verdict.runs)


def test_a_suite_that_passes_shuffled_is_not_run_again() -> None:
    def calm(job: dict[str, Any]) -> dict[str, str]:
        return {".::TestA": "passed", ".::TestFix": "passed" if _gold(job) else "failed"}

    sandbox = FakeSandbox(calm)
    verdict = _gate(sandbox, GoRunner("m"))
    assert verdict.admitted and verdict.order == RANDOM and len(sandbox.jobs) == 6
    assert "order" not in verdict.evidence()
    assert "order" not in verdict.runs[0].to_dict()


def test_a_declared_order_rejection_without_order_dependence_is_the_tasks_reason() -> None:
    def broken(job: dict[str, Any]) -> dict[str, str]:
        out = _shared_state_suite(job)
        if _shuffle(job) == "off":
            out[".::TestFix"] = "failed"  # the fix does not make it pass in any order
        return out

    sandbox = FakeSandbox(broken)
    verdict = _gate(sandbox, GoRunner("m"))
    assert len(sandbox.jobs) == 12
    # The written order is deterministic: its reason is the task's, the shuffle's is evidence.
    assert not verdict.admitted and verdict.reason == "no_fail_to_pass"
    assert "shuffled: flaky_test" in verdict.detail
    assert verdict.order == RANDOM and "order" not in verdict.evidence()
    assert all(r.to_dict()["order"] == DECLARED for r in verdict.runs)


def test_order_dependence_in_declared_order_too_keeps_the_shuffled_reason() -> None:
    calls = {"n": 0}

    def unstable(job: dict[str, Any]) -> dict[str, str]:
        out = _shared_state_suite(job)
        if _shuffle(job) == "off":
            calls["n"] += 1
            out[".::TestA"] = "passed" if calls["n"] % 3 else "failed"  # flaky in any order
            out[".::TestFix"] = "failed"
        return out

    sandbox = FakeSandbox(unstable)
    verdict = _gate(sandbox, GoRunner("m"))
    assert not verdict.admitted and verdict.reason == "flaky_test" and len(sandbox.jobs) == 12
    assert "in declared order too: no_fail_to_pass" in verdict.detail


def test_a_runner_that_cannot_run_in_declared_order_gets_no_fallback() -> None:
    class ShuffleOnly:
        name = "shuffle-only"

        def argv(self, test_files: list[str]) -> list[str]:
            return []

        def command(self, test_files: list[str], *, order_seed: int) -> str:
            return ""

        def run_spec(
            self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float
        ) -> dict[str, Any]:
            return {"argv": ["sh", "-c", f"run -shuffle={order_seed}"], "report": {}}

    assert not runs_in_declared_order(ShuffleOnly())
    sandbox = FakeSandbox(_shared_state_suite)
    verdict = _gate(sandbox, ShuffleOnly())
    assert verdict.reason == "flaky_test" and len(sandbox.jobs) == 6


def test_pytest_runs_in_declared_order_through_the_harness_natural_order() -> None:
    from swe_forge.ecosystems.python.runner import PytestRunner

    assert runs_in_declared_order(PytestRunner()) and runs_in_declared_order(GoRunner("m"))

    def suite(job: dict[str, Any]) -> dict[str, str]:
        natural = job["run"].get("order") == "natural"
        seed = int(job["run"]["env"]["SWE_FORGE_ORDER_SEED"])
        fixed = "passed" if _gold(job) and (natural or seed % 2) else "failed"
        return {"t.py::test_a": "passed", "t.py::test_fix": fixed}

    sandbox = FakeSandbox(suite)
    verdict = _gate(sandbox, PytestRunner())
    assert verdict.admitted and verdict.order == DECLARED
    assert [j["run"].get("order") for j in sandbox.jobs] == [None] * 6 + ["natural"] * 6


def test_go_grading_follows_the_order_the_task_was_admitted_in() -> None:
    def task(gates: dict[str, Any]) -> Any:
        return SimpleNamespace(
            FAIL_TO_PASS=["pkg::TestA"],
            PASS_TO_PASS=[],
            harness={"module": "m"},
            image={"toolchain": "go1.22.12"},
            gates=gates,
            test_patch=(
                "diff --git a/pkg/a_test.go b/pkg/a_test.go\n--- a/pkg/a_test.go\n"
                "+++ b/pkg/a_test.go\n@@ -1 +1,2 @@\n package pkg\n+// x\n"
            ),
        )

    eco = GoEcosystem()
    declared = task({"order": "declared"})
    assert task_order(declared) == DECLARED and task_order(task({})) == RANDOM
    one = eco.run_job(declared, "/t", timeout=10, output_limit=1)["run"]["argv"][-1]
    assert "-shuffle=off" in one
    twins = eco.run_job(declared, "/t", timeout=10, output_limit=1, twins=[{}])["run"]["argv"]
    assert "-test.shuffle=off" in twins[-1]
    shuffled = eco.run_job(task({}), "/t", timeout=10, output_limit=1, twins=[{}])["run"]
    assert re.search(r"-test\.shuffle=\d+", shuffled["argv"][-1])
    spec = GoRunner("m").run_spec(["a_test.go"], order_seed=7, hash_seed=0, order=DECLARED)
    assert "-shuffle=off" in spec["argv"][-1] and "-shuffle=7" not in spec["argv"][-1]


# ------------------------------------------------------------------ crashes in classification


def _run(phase: str, i: int, tests: dict[str, str], crashed: list[str] | None = None) -> Any:
    return RunResult(phase, i, i, "ok", 1, 0.1, tests=tests, crashed=crashed or [])


def test_tests_no_after_run_reached_are_not_pass_to_fail() -> None:
    # After the fix TestBoom (failing before too) panics and the test binary stops there in
    # every run: the tests the shuffle put after it did not run. They did not fail.
    names = [f"pkg::Test{n}" for n in range(5)]
    every = dict.fromkeys(names, "passed")
    runs = [
        _run("before", i, {**every, "pkg::TestFix": "failed", "pkg::TestBoom": "failed"})
        for i in range(3)
    ]
    reached = [["pkg::Test0", "pkg::Test1"], ["pkg::Test0"], ["pkg::Test0", "pkg::Test2"]]
    runs += [
        _run(
            "after",
            i,
            {**dict.fromkeys(seen, "passed"), "pkg::TestFix": "passed", "pkg::TestBoom": "failed"},
            ["pkg"],
        )
        for i, seen in enumerate(reached)
    ]
    verdict = classify(runs, GateSettings(), ["pkg/a_test.go"])
    assert verdict.reason != "pass_to_fail"
    assert verdict.admitted and verdict.fail_to_pass == ["pkg::TestFix"]
    # Not run in every after run: not PASS_TO_PASS either (it did not pass every time).
    assert verdict.pass_to_pass == ["pkg::Test0"]


def test_a_test_every_after_run_fails_is_still_pass_to_fail_and_the_crash_is_named() -> None:
    runs = [_run("before", i, {"pkg::TestA": "passed", "pkg::TestB": "passed"}) for i in range(3)]
    runs += [_run("after", i, {"pkg::TestA": "failed"}, ["pkg"]) for i in range(3)]
    verdict = classify(runs, GateSettings(), ["pkg/a_test.go"])
    assert verdict.reason == "pass_to_fail"
    assert "1 test(s) pass before and fail after: pkg::TestA" in verdict.detail
    assert "3 run(s) crashed" in verdict.detail and "after 2: pkg" in verdict.detail


def test_a_test_no_before_run_reached_is_not_fail_to_pass() -> None:
    # Every before run crashed before TestLate: nothing says it fails before the fix.
    runs = [_run("before", i, {"pkg::TestBoom": "failed"}, ["pkg"]) for i in range(3)]
    runs += [
        _run("after", i, {"pkg::TestBoom": "passed", "pkg::TestLate": "passed"}) for i in range(3)
    ]
    verdict = classify(runs, GateSettings(), ["pkg/a_test.go"])
    assert verdict.fail_to_pass == ["pkg::TestBoom"]
    # A test missing from a run that did not crash still fails before (it did not exist).
    runs[0] = _run("before", 0, {"pkg::TestBoom": "failed"})
    assert classify(runs, GateSettings(), ["pkg/a_test.go"]).fail_to_pass == [
        "pkg::TestBoom",
        "pkg::TestLate",
    ]


def test_only_order_signals_trigger_the_fallback() -> None:
    runs = [_run("before", 0, {"a": "failed"}), _run("after", 0, {"a": "passed"})]
    flaky = classify(runs, GateSettings(), [])
    flaky.admitted, flaky.reason, flaky.flaky = False, "flaky_test", ["a"]
    assert order_dependent(flaky)
    flaky.reason = "harness_tamper"
    assert not order_dependent(flaky)
    plain = classify(
        [_run("before", 0, {"a": "passed"}), _run("after", 0, {"a": "passed"})], GateSettings(), []
    )
    assert plain.reason == "no_fail_to_pass" and not order_dependent(plain)


def test_admitted_shuffled_with_a_crash_after_the_fix_prefers_the_declared_order() -> None:
    # Shuffled, a test the fix leaves panicking kills the binary in some orders: the 3 after
    # runs happened to reach TestFix, a grading in another order may not.
    def suite(job: dict[str, Any]) -> dict[str, str]:
        fixed = "passed" if _gold(job) else "failed"
        if _shuffle(job) == "off":
            return {".::TestFix": fixed, ".::TestA": "passed"}
        return {".::TestFix": fixed, ".::TestBoom": "failed"}

    class Crashing(GoRunner):
        def settle(self, result: RunResult) -> None:
            if ".::TestBoom" in result.tests:
                result.crashed = ["."]

    sandbox = FakeSandbox(suite)
    verdict = _gate(sandbox, Crashing("m"))
    assert len(sandbox.jobs) == 12
    assert verdict.admitted and verdict.order == DECLARED
    assert verdict.shuffled["reason"] == "after_run_crashed"
    assert "crashed" in verdict.shuffled["detail"]
    assert verdict.pass_to_pass == [".::TestA"]
