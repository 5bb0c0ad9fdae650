"""Twins apart: one job per twin, every job writing the same files, answers merged in order."""

from __future__ import annotations

import time
from typing import Any

from swe_forge.verify.apart import Prepared, Spares, merged, run_apart, twin_jobs


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


class _Box:
    """A judge's container as run_apart sees it: put, call, and a log of what happened."""

    def __init__(self, name: str, log: list[tuple[str, str, float]]) -> None:
        self.name, self.log = name, log

    def __enter__(self) -> _Box:
        self.log.append(("open", self.name, time.monotonic()))
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.append(("close", self.name, time.monotonic()))

    def put(self, name: str, data: str) -> str:
        return name

    def call(self, op: str, job: dict[str, Any], timeout: float = 0) -> dict[str, Any]:
        self.log.append((op, self.name, time.monotonic()))
        return {"status": "ok"}


def test_each_twins_container_opens_just_before_it_and_waits_as_the_first_did() -> None:
    log: list[tuple[str, str, float]] = []
    names = iter(["c2", "c3"])
    spares = Spares(
        lambda: _Box(next(names), log),  # type: ignore[arg-type,return-value]
        Prepared("candidate", "tests", {"op": "prepare"}),
    )
    first = _Box("c1", log)
    spares.adopt(first)  # type: ignore[arg-type]
    first.__enter__()
    first.call("prepare", {})
    spares.ready()
    time.sleep(0.2)  # the host's checks of the candidate, in the first container only
    job = {"run": {"twins": [{"edits": []}, {"edits": []}, {"edits": []}]}}

    def run(here: Any, one: dict[str, Any]) -> dict[str, Any]:
        log.append(("twin", here.name, time.monotonic()))
        return {"twins": [{"status": "ok"}]}

    got = run_apart(first, job, spares, run)  # type: ignore[arg-type]
    assert len(got["twins"]) == 3
    order = [(what, name) for what, name, _ in log]
    assert order == [
        ("open", "c1"), ("prepare", "c1"), ("twin", "c1"),
        ("open", "c2"), ("prepare", "c2"), ("twin", "c2"),
        ("open", "c3"), ("prepare", "c3"), ("twin", "c3"),
    ]  # fmt: skip
    at = {(what, name): when for what, name, when in log}
    for name in ("c1", "c2", "c3"):
        # Each container as old when its twin starts (the first one's checks are the pause).
        waited = at[("twin", name)] - at[("prepare", name)]
        assert 0.18 < waited < 0.5, (name, waited)
    spares.close()
    assert sorted(name for what, name, _ in log if what == "close") == ["c1", "c2", "c3"]
