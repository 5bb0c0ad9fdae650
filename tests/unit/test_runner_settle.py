"""A gate run hands its outcomes to the ecosystem's runner to settle (no Docker: a fake
sandbox answers the way the supervisor does)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from swe_forge.ecosystems.go.adapter import GoRunner
from swe_forge.ecosystems.rust.adapter import RustRunner
from swe_forge.gates.runner import run_tests


class FakeSession:
    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.jobs: list[dict[str, Any]] = []

    def put(self, name: str, text: str) -> str:
        return "/judge/" + name

    def call(self, op: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.jobs.append(job)
        return self.answer

    def oom_killed(self) -> bool:
        return False


class FakeSandbox:
    def __init__(self, answer: dict[str, Any]) -> None:
        self.session = FakeSession(answer)
        self.settings = SimpleNamespace(limits=SimpleNamespace(output_bytes=1 << 20))

    @contextmanager
    def open(self, image: str, labels: dict[str, str] | None = None) -> Iterator[FakeSession]:
        yield self.session


def _answer(tests: dict[str, str], messages: dict[str, str], errors: list[str]) -> dict[str, Any]:
    return {
        "status": "ok",
        "exit_code": 1,
        "events": {
            "connected": True,
            "ended": True,
            "exitstatus": 1,
            "tests": tests,
            "messages": messages,
            "collect_errors": errors,
        },
    }


def _run(runner: Any, answer: dict[str, Any]) -> Any:
    return run_tests(
        FakeSandbox(answer),  # type: ignore[arg-type]
        "img",
        runner,
        ["a/a_test.go"],
        test_patch="",
        gold_patch=None,
        protect={"files": [], "trees": []},
        phase="before",
        hash_seed=0,
        order_seed=7,
        timeout=60,
    )


def test_a_go_panic_marks_its_package_crashed_in_the_gate_run() -> None:
    dump = "panic: unable to redefine 'b' shorthand\ngoroutine 95 [running]:"
    answer = _answer({"a::TestBoolP": "failed", "a::TestA": "passed"}, {"a::TestBoolP": dump}, [])
    result = _run(GoRunner("m"), answer)
    assert result.status == "ok" and result.crashed == ["a"]
    # An ordinary failure is no crash.
    plain = _answer({"a::TestBoolP": "failed"}, {"a::TestBoolP": "a_test.go:3: got 1"}, [])
    assert _run(GoRunner("m"), plain).crashed == []


def test_a_rust_target_that_died_after_reporting_tests_is_crashed_in_the_gate_run() -> None:
    answer = _answer({"tests/t.rs::smoke": "passed"}, {}, ["tests/t.rs", "tests/u.rs"])
    result = _run(RustRunner("m"), answer)
    assert result.crashed == ["tests/t.rs"]
    assert set(result.collect_errors) == {"tests/t.rs", "tests/u.rs"}
