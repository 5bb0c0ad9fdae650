"""verify's run report: a superset of SWE-bench 5's, with its per-instance reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.commands.verify import Prediction, VerifyRun, deduplicate
from swe_forge.errors import InputError
from swe_forge.records import TaskManifest
from swe_forge.verify.verifier import VerifyResult

# The keys of the run report SWE-bench 5.0.2 writes (harness/reporting.py, schema_version 2).
SWEBENCH_KEYS = {
    "total_instances", "submitted_instances", "completed_instances", "resolved_instances",
    "unresolved_instances", "infra_failure_instances", "ambiguous_failure_instances",
    "empty_patch_instances", "error_instances", "completed_ids", "incomplete_ids",
    "empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids", "infra_failure_ids",
    "ambiguous_failure_ids", "failure_reasons", "error_ids", "schema_version",
}  # fmt: skip


def task(i: str) -> TaskManifest:
    return TaskManifest(
        i, "o/r", "0", "", "", "", "", "", "", "", ["t::f"], ["t::p"], {}, {}, {}, {}, {}, {}
    )


def test_report_is_a_superset_of_swebench_with_tests_status() -> None:
    tasks = {i: task(i) for i in ("a", "b", "c", "d", "e")}
    run = VerifyRun(
        results=[
            VerifyResult(
                "a",
                "m",
                "resolved",
                1.0,
                fail_to_pass={"t::f": "passed"},
                pass_to_pass={"t::p": "passed"},
            ),
            VerifyResult(
                "b",
                "m",
                "unresolved",
                0.0,
                fail_to_pass={"t::f": "failed"},
                pass_to_pass={"t::p": "passed"},
            ),
            VerifyResult("c", "m", "invalid_patch", 0.0, violations=[{"code": "empty_patch"}]),
            VerifyResult("d", "m", "infra_error", 0.0, detail="engine gone"),
        ]
    )
    report = run.report(tasks)
    assert set(report) >= SWEBENCH_KEYS and report["schema_version"] == 2
    assert report["submitted_ids"] == ["a", "b", "c", "d"]
    assert report["incomplete_ids"] == ["e"]
    assert report["completed_ids"] == ["a", "b"] and report["resolved_ids"] == ["a"]
    assert report["empty_patch_ids"] == ["c"] and report["error_ids"] == ["d"]
    assert report["failure_reasons"] == {"d": "engine gone"}
    per = report["reports"]["m"]
    assert set(per) == {"a", "b"} and per["a"]["resolved"] is True
    assert per["b"]["tests_status"]["FAIL_TO_PASS"] == {"success": [], "failure": ["t::f"]}
    assert per["b"]["tests_status"]["PASS_TO_PASS"] == {"success": ["t::p"], "failure": []}


def test_duplicate_predictions() -> None:
    p = Prediction("a", "m", "x")
    assert deduplicate([p, p, Prediction("a", "n", "y")], Path("p.jsonl")) == [
        p,
        Prediction("a", "n", "y"),
    ]
    with pytest.raises(InputError, match="two different predictions for a from m"):
        deduplicate([p, Prediction("a", "m", "y")], Path("p.jsonl"))


def test_an_instance_resolved_by_one_of_several_predictions_counts_as_resolved() -> None:
    tasks = {"a": task("a")}
    run = VerifyRun(
        results=[
            VerifyResult("a", "gold", "resolved", 1.0),
            VerifyResult("a", "attack", "tamper_detected", 0.0),
        ]
    )
    report = run.report(tasks)
    assert report["resolved_ids"] == ["a"] and report["unresolved_ids"] == []
    assert report["reports"]["gold"]["a"]["resolved"] is True
    assert report["reports"]["attack"]["a"]["resolved"] is False
    assert report["predictions"] == 2 and report["submitted_instances"] == 1


def test_the_log_excerpt_is_bounded_and_names_no_canary() -> None:
    from swe_forge.verify.verifier import LOG_EXCERPT_CHARS, log_excerpt

    canary = "tests/test_a.py::TestX::test_fix_qwert0[1-2]"
    tail = (
        "x" * 10_000
        + "\nFAILED tests/test_a.py::TestX::test_fix_qwert0[1-2] - assert 1 == <object>\n"
        + "FAILED tests/test_a.py::test_fix - assert 1 == 2\n"
    )
    text = log_excerpt({"output_tail": tail, "canary_map": {canary: {"test": "t", "site": 0}}})
    assert len(text) <= LOG_EXCERPT_CHARS and "qwert0" not in text
    assert "TestX::<canary>[1-2]" in text and "test_a.py::test_fix - assert 1 == 2" in text


def test_per_model_table() -> None:
    """Each model's own resolve rate (top-level ids mean "some model resolved it")."""
    tasks = {i: task(i) for i in ("a", "b")}
    run = VerifyRun(
        results=[
            VerifyResult("a", "m1", "resolved", 1.0),
            VerifyResult("b", "m1", "unresolved", 0.0),
            VerifyResult("a", "m2", "unresolved", 0.0),
            VerifyResult("b", "m2", "infra_error", 0.0),
        ]
    )
    models = run.report(tasks)["models"]
    assert models["m1"] == {
        "predictions": 2,
        "resolved": 1,
        "resolve_rate": 0.5,
        "statuses": {"resolved": 1, "unresolved": 1},
    }
    # An infrastructure error is not the model's: out of its rate.
    assert models["m2"]["resolve_rate"] == 0.0 and models["m2"]["predictions"] == 2
