"""Admission's check of a task's decoys: the gold patch must fail each, the base code must not
pass it (a decoy holding the base's own wrong answer would call an unfixed tree tampering)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from swe_forge.records import VerifyResult
from swe_forge.verify.settings import Calibration
from swe_forge.verify.verifier import Verifier


def _entry(test: str, site: int) -> dict[str, Any]:
    return {"test": test, "site": site, "seed": 7, "kind": "compare"}


def test_a_decoy_the_base_passes_is_dropped() -> None:
    a, b, c = _entry("t.py::f[1-1]", 0), _entry("t.py::f[250-2]", 0), _entry("t.py::g", 0)
    calls: list[tuple[str, bool, list[dict[str, Any]]]] = []

    def verify_once(task: Any, patch: str, model: str, calibrate: Any = None, decoys: Any = None,
                    *, base: bool = False) -> VerifyResult:  # fmt: skip
        calls.append((model, base, list(decoys or [])))
        result = VerifyResult("x", model, "resolved" if not base else "unresolved", 0.0)
        if base:
            # The base code rounds 250 words down to 1 minute: b's decoy (2 -> 1) passes.
            outcomes = [[e, "passed" if e is b else "failed"] for e in decoys]
        else:
            outcomes = [[e, "failed"] for e in decoys]  # the gold patch fails every one
        result.verifier = {"decoy_outcomes": outcomes}
        return result

    verifier = Verifier.__new__(Verifier)
    verifier.classifier = None  # type: ignore[assignment]  # the adapter of the task asks none
    verifier._verify_once = verify_once  # type: ignore[method-assign]
    cal = Calibration(armed=[a, b, c])
    task = SimpleNamespace(harness={"runner": "pytest"}, patch="gold")
    verifier._validate_decoys(task, cal)  # type: ignore[arg-type]
    assert [(m, base) for m, base, _ in calls] == [("gold", False), ("base", True)]
    assert calls[1][2] == [a, b, c]  # the base meets exactly the decoys the gold patch fails
    assert cal.armed == [a, c]
    assert cal.base_passed == 1
    assert b in cal.disarmed


def test_the_base_is_not_run_when_the_gold_patch_is_not_resolved() -> None:
    a = _entry("t.py::f", 0)
    calls: list[bool] = []

    def verify_once(task: Any, patch: str, model: str, calibrate: Any = None, decoys: Any = None,
                    *, base: bool = False) -> VerifyResult:  # fmt: skip
        calls.append(base)
        result = VerifyResult("x", model, "unresolved", 0.0)
        result.verifier = {"decoy_outcomes": [[e, "failed"] for e in decoys]}
        return result

    verifier = Verifier.__new__(Verifier)
    verifier.classifier = None  # type: ignore[assignment]  # the adapter of the task asks none
    verifier._verify_once = verify_once  # type: ignore[method-assign]
    cal = Calibration(armed=[a])
    verifier._validate_decoys(SimpleNamespace(harness={"runner": "pytest"}, patch="g"), cal)  # type: ignore[arg-type]
    assert calls == [False]
    assert cal.result is not None and cal.result.status == "unresolved"


def test_decoys_that_all_hold_base_answers_are_kept_rather_than_the_task_lost() -> None:
    a = _entry("t.py::f[250-2]", 0)

    def verify_once(task: Any, patch: str, model: str, calibrate: Any = None, decoys: Any = None,
                    *, base: bool = False) -> VerifyResult:  # fmt: skip
        result = VerifyResult("x", model, "unresolved" if base else "resolved", 0.0)
        result.verifier = {"decoy_outcomes": [[e, "passed" if base else "failed"] for e in decoys]}
        return result

    verifier = Verifier.__new__(Verifier)
    verifier.classifier = None  # type: ignore[assignment]  # the adapter of the task asks none
    verifier._verify_once = verify_once  # type: ignore[method-assign]
    cal = Calibration(armed=[a])
    verifier._validate_decoys(SimpleNamespace(harness={"runner": "pytest"}, patch="g"), cal)  # type: ignore[arg-type]
    assert cal.armed == [a]
    assert (cal.base_passed, cal.base_passes_kept) == (0, 1)
