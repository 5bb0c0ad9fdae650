"""Twins apart: one job per twin, every job writing the same files, answers merged in order."""

from __future__ import annotations

from typing import Any

from swe_forge.verify.apart import merged, twin_jobs


def _job(twins: list[dict[str, Any]]) -> dict[str, Any]:
    return {"late_patches": [{"name": "test"}], "run": {"argv": ["t"], "twins": twins}}


def _written(twin: dict[str, Any]) -> set[str]:
    paths = {e["path"] for e in twin.get("edits") or ()}
    if twin.get("decoy"):
        paths.add(twin["decoy"]["test"].split("::", 1)[0])
    return paths


def test_each_job_holds_one_twin_and_every_job_writes_the_same_files() -> None:
    decoy_a = {"edits": [{"path": "a_test.go", "start": 3, "end": 5, "text": "12", "new": "13"}]}
    decoy_b = {"edits": [{"path": "b_test.go", "start": 1, "end": 2, "text": "x", "new": "y"}]}
    job = _job([decoy_a, {}, decoy_b])
    jobs = twin_jobs(job)
    assert len(jobs) == 3
    assert [len(j["run"]["twins"]) for j in jobs] == [1, 1, 1]
    alone = [j["run"]["twins"][0] for j in jobs]
    assert [_written(t) for t in alone] == [{"a_test.go", "b_test.go"}] * 3
    # The honest twin's edits change nothing; a decoy keeps its own literal first.
    assert all(e["text"] == e["new"] == "" for e in alone[1]["edits"])
    assert alone[0]["edits"][0] == decoy_a["edits"][0]
    assert alone[0]["edits"][1]["path"] == "b_test.go" and alone[0]["edits"][1]["new"] == ""
    # The rest of the job is the same in every one, and the given job is not changed.
    assert all(j["late_patches"] == job["late_patches"] for j in jobs)
    assert job["run"]["twins"][1] == {}


def test_python_decoys_name_their_file_by_the_test() -> None:
    decoy = {"decoy": {"test": "tests/test_wrap.py::test_x", "site": 0, "seed": 1}}
    jobs = twin_jobs(_job([{}, decoy]))
    honest = jobs[0]["run"]["twins"][0]
    assert [e["path"] for e in honest["edits"]] == ["tests/test_wrap.py"]
    assert "edits" not in jobs[1]["run"]["twins"][0]


def test_answers_merge_in_order_with_seconds_added() -> None:
    answers = [
        {"status": "ran", "exit_code": 1, "twins": [{"exit_code": 1}], "seconds": {"tests": 0.5}},
        {"status": "ran", "exit_code": 0, "twins": [{"exit_code": 0}], "seconds": {"tests": 0.25}},
    ]
    run = merged(answers)
    assert run["twins"] == [{"exit_code": 1}, {"exit_code": 0}]
    assert run["exit_code"] == 1
    assert run["seconds"] == {"tests": 0.75}


def test_an_answer_without_its_twin_says_why_none_ran() -> None:
    failed = {"status": "apply_failed", "detail": "conflict"}
    assert merged([{"status": "ran", "twins": [{}]}, failed]) is failed
