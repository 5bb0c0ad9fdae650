"""Classification of the 6 gate runs into FAIL_TO_PASS / PASS_TO_PASS / reasons."""

from __future__ import annotations

from swe_forge.gates.gate import GateSettings, classify
from swe_forge.gates.runner import RunResult

FILES = ["tests/test_a.py"]


def runs(
    before: list[dict[str, str]],
    after: list[dict[str, str]],
    after_errors: dict[str, str] | None = None,
) -> list[RunResult]:
    out = []
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        out.append(RunResult("before", i, 100 + i, "ok", 1, 0.1, tests=b))
        out.append(
            RunResult("after", i, 200 + i, "ok", 0, 0.1, tests=a, collect_errors=after_errors or {})
        )
    return out


A, B, C = "tests/test_a.py::test_fix", "tests/test_a.py::test_old", "tests/test_a.py::test_p[1-2]"


def test_f2p_and_p2p() -> None:
    before = [{A: "failed", B: "passed", C: "passed"}] * 3
    after = [{A: "passed", B: "passed", C: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.admitted and v.fail_to_pass == [A] and v.pass_to_pass == [B, C]


def test_missing_or_error_before_counts_as_failing() -> None:
    before = [{B: "passed"}, {A: "error", B: "passed"}, {B: "passed"}]
    after = [{A: "passed", B: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.admitted and v.fail_to_pass == [A]


def test_no_fail_to_pass() -> None:
    both = [{A: "passed"}] * 3
    v = classify(runs(both, both), GateSettings(), FILES)
    assert not v.admitted and v.reason == "no_fail_to_pass"


def test_flaky_after_rejects() -> None:
    before = [{A: "failed"}] * 3
    after = [{A: "passed"}, {A: "failed"}, {A: "passed"}]
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.reason == "flaky_test" and v.flaky == [A]
    # Even with the lenient policy: a flaky test that would be FAIL_TO_PASS rejects.
    v = classify(runs(before, after), GateSettings(flaky_policy="drop"), FILES)
    assert v.reason == "flaky_test"


def test_flaky_pass_to_pass_dropped_with_lenient_policy() -> None:
    before = [{A: "failed", B: "passed"}, {A: "failed", B: "failed"}, {A: "failed", B: "passed"}]
    after = [{A: "passed", B: "passed"}] * 3
    assert classify(runs(before, after), GateSettings(), FILES).reason == "flaky_test"
    v = classify(runs(before, after), GateSettings(flaky_policy="drop"), FILES)
    assert v.admitted and v.fail_to_pass == [A] and v.pass_to_pass == [] and v.flaky == [B]


def test_pass_to_fail_rejects() -> None:
    before = [{A: "failed", B: "passed"}] * 3
    after = [{A: "passed", B: "failed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.reason == "pass_to_fail" and B in v.detail


def test_collection_error_after_rejects() -> None:
    before = [{}] * 3
    after = [{}] * 3
    v = classify(runs(before, after, {"tests/test_a.py": "error"}), GateSettings(), FILES)
    assert v.reason == "collection_error"


def test_xfail_and_skip_are_not_passes() -> None:
    before = [{A: "failed", B: "skipped"}] * 3
    after = [{A: "passed", B: "xpassed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.fail_to_pass == [A] and B not in v.pass_to_pass
