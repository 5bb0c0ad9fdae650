"""`admit` on the embedded example with the real engine: exactly the expected tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swe_forge.admission.swebench import swebench_line
from swe_forge.commands.admit import run_admit
from swe_forge.commands.report import funnel
from swe_forge.config import Config, load_config
from swe_forge.example import load_expectations
from swe_forge.progress import RecordingReporter
from swe_forge.records import SWEBENCH_FIELDS, TaskManifest
from tests.docker.conftest import ExampleImages, ExampleTasks


@pytest.fixture(scope="module")
def admitted(
    example_tasks: ExampleTasks,
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path]:
    tasks, rejected = example_tasks.tasks, example_tasks.rejected
    t = {
        json.loads(x)["provenance"]["pr_number"]: json.loads(x)
        for x in tasks.read_text().splitlines()
    }
    r = {json.loads(x)["pr_number"]: json.loads(x) for x in rejected.read_text().splitlines()}
    return t, r, tasks, rejected


def test_exactly_the_expected_tasks(
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
) -> None:
    tasks, rejected, _, _ = admitted
    expected = [pr for pr in load_expectations()["prs"] if pr["mine"]["candidate"]]
    want_tasks = {
        pr["number"]: sorted(pr["admit"]["FAIL_TO_PASS"])
        for pr in expected
        if pr["admit"]["admitted"]
    }
    want_rej = {
        pr["number"]: pr["admit"]["reason"] for pr in expected if not pr["admit"]["admitted"]
    }
    assert {n: sorted(t["FAIL_TO_PASS"]) for n, t in tasks.items()} == want_tasks
    assert {n: r["reason"] for n, r in rejected.items()} == want_rej
    kinds = {pr["number"]: pr["kind"] for pr in expected}
    assert {kinds[n] for n, r in rejected.items() if r["reason"] == "flaky_test"} == {"flaky"}
    assert {kinds[n] for n, r in rejected.items() if r["reason"] == "no_fail_to_pass"} == {
        "already_passing"
    }


def test_manifest_contents(
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
) -> None:
    tasks, _, _, _ = admitted
    import hashlib

    for t in tasks.values():
        assert t["schema_version"] == 2 and t["record_type"] == "task"
        assert t["environment"]["image"] == t["image"]["id"]
        assert t["image"]["id"].startswith("sha256:") and t["image"]["python"] == "3.11"
        h = t["harness"]
        assert h["runner"] == "pytest" and h["test_files"]
        assert h["test_patch_sha256"] == hashlib.sha256(t["test_patch"].encode()).hexdigest()
        assert h["gold_patch_sha256"] == hashlib.sha256(t["patch"].encode()).hexdigest()
        g = t["gates"]
        assert len(g["runs"]) == 6 and [r["phase"] for r in g["runs"]].count("before") == 3
        assert [r["hash_seed"] for r in g["runs"]] == [0, 0, 1, 1, 2, 2]
        assert all(r["status"] == "ok" for r in g["runs"])
        for test in t["FAIL_TO_PASS"]:
            assert all(
                r["tests"].get(test) != "passed" for r in g["runs"] if r["phase"] == "before"
            )
            assert all(r["tests"].get(test) == "passed" for r in g["runs"] if r["phase"] == "after")
        assert set(t["PASS_TO_PASS"]).isdisjoint(t["FAIL_TO_PASS"])
        assert t["audit"]["image"]["passed"]
        # Nothing flaky and nothing left out on the example; the evidence blocks are there.
        assert g["flaky_policy"] == "drop" and g["fail_to_pass_scope"] == "patched"
        assert g["dropped_flaky"] == [] and g["not_fail_to_pass"] == {}
    # The feature PR's new test module cannot be imported before the fix: recorded, and its
    # tests (all new) are FAIL_TO_PASS all the same.
    feature = next(t for t in tasks.values() if "test_truncate" in t["FAIL_TO_PASS"][0])
    assert feature["gates"]["collection_errors_before"] == {"tests/test_truncate.py": [1, 2, 3]}


def test_swebench_format_and_rerun_is_stable(
    example_images: ExampleImages,
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
) -> None:
    tasks, _, _, _ = admitted
    out = example_images.root / "tasks-swebench.jsonl"
    only = ["swe-forge__textkit-1", "swe-forge__textkit-3"]
    run_admit(
        example_images.candidates,
        out,
        config=load_config(),
        images_path=example_images.images,
        only=only,
        swebench_format=True,
    )
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["instance_id"] for r in rows] == only
    for row in rows:
        assert set(row) == {
            *SWEBENCH_FIELDS,
            "image",
            "eval_script",
            "log_parser",
            "eval_type",
            "test_strength",
        }
        assert isinstance(row["FAIL_TO_PASS"], str)
        first = tasks[int(row["instance_id"].rsplit("-", 1)[1])]
        assert json.loads(row["FAIL_TO_PASS"]) == first["FAIL_TO_PASS"]
        assert json.loads(row["PASS_TO_PASS"]) == first["PASS_TO_PASS"]
        # Nothing in a row depends on the run (seeds, timings): the rows of this admission
        # are the export of the first one's manifests, byte for byte.
        assert json.dumps(row, sort_keys=True) == swebench_line(TaskManifest.from_dict(first))
        assert row["image"] == first["image"]["id"]
    # Full manifests again: equal apart from timings and seeds.
    again = example_images.root / "tasks-again.jsonl"
    run_admit(
        example_images.candidates,
        again,
        config=load_config(),
        images_path=example_images.images,
        only=only,
    )

    def strip(t: dict[str, Any]) -> dict[str, Any]:
        t = json.loads(json.dumps(t))
        t["gates"].pop("seconds")
        t["gates"].pop("order_seeds")
        t["audit"]["gold_verification"].pop("seconds")
        strength = t["audit"]["test_strength"]
        strength.pop("seconds")
        for m in strength["mutants"]:
            m.pop("seconds")
        # The decoys' values are random by design (drawn at each admission, recorded in the
        # manifest: a task's decoys are not predictable from its inputs), and so is which of
        # them the gold patch fails.
        for key in ("armed", "disarmed", "made"):
            t["harness"]["canaries"].pop(key, None)
        for r in t["gates"]["runs"]:
            r.pop("seconds")
            r.pop("order_seed")
        return t

    for line in again.read_text().splitlines():
        t2 = json.loads(line)
        assert strip(t2) == strip(tasks[t2["provenance"]["pr_number"]])


class _CtrlC(RecordingReporter):
    """Presses Ctrl-C when the second candidate starts."""

    def note(self, message: str) -> None:
        super().note(message)
        if message.startswith("[2/") and message.endswith(": started"):
            raise KeyboardInterrupt


def test_interrupted_admit_resumes(
    example_images: ExampleImages,
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
    tmp_path: Path,
    without_test_strength: Config,
) -> None:
    tasks, rejected, _, _ = admitted
    only = ["swe-forge__textkit-1", "swe-forge__textkit-7", "swe-forge__textkit-3"]
    out, rej = tmp_path / "tasks.jsonl", tmp_path / "rejected.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_admit(
            example_images.candidates,
            out,
            config=without_test_strength,
            rejected=rej,
            images_path=example_images.images,
            only=only,
            reporter=_CtrlC(),
        )
    assert [json.loads(x)["instance_id"] for x in out.read_text().splitlines()] == only[:1]
    assert rej.read_text() == ""
    again = RecordingReporter()
    result = run_admit(
        example_images.candidates,
        out,
        config=without_test_strength,
        rejected=rej,
        images_path=example_images.images,
        only=only,
        reporter=again,
    )
    assert result.summary()["resumed"] == 1 and len(result.admitted) + len(result.rejected) == 2
    # Candidates are done in the file's order: 1, then (after the restart) 3 and 7.
    started = [n.split(" ")[1].rstrip(":") for n in again.notes if n.endswith(": started")]
    assert started == ["swe-forge__textkit-3", "swe-forge__textkit-7"]
    made = [json.loads(x) for x in out.read_text().splitlines()]
    assert [t["instance_id"] for t in made] == ["swe-forge__textkit-1", "swe-forge__textkit-3"]
    for t in made:
        want = tasks[t["provenance"]["pr_number"]]
        assert t["FAIL_TO_PASS"] == want["FAIL_TO_PASS"]
        assert t["PASS_TO_PASS"] == want["PASS_TO_PASS"]
    (r,) = [json.loads(x) for x in rej.read_text().splitlines()]
    assert r["instance_id"] == "swe-forge__textkit-7" and r["reason"] == rejected[7]["reason"]


def test_report_funnel(
    example_images: ExampleImages,
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
    tmp_path: Path,
) -> None:
    from swe_forge.commands.mine import run_mine
    from swe_forge.mining.miner import MineOptions

    mine_rej = tmp_path / "mine-rejected.jsonl"
    run_mine(
        [str(example_images.repo)],
        tmp_path / "c.jsonl",
        config=load_config(),
        options=MineOptions(),
        rejected=mine_rej,
    )
    _, _, tasks, rejected = admitted
    data = funnel([tmp_path / "c.jsonl", mine_rej, tasks, rejected])
    assert [s["count"] for s in data["stages"]] == [14, 7, 5]
    assert data["stages"][1]["rejected"] == {"flaky_test": 1, "no_fail_to_pass": 1}


def test_admitted_tasks_carry_their_test_strength(
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
) -> None:
    """Every admitted task's gold fix was mutated and each mutant graded by the verifier
    (issue 25): audit.test_strength with mutants generated and every graded one classified."""
    tasks, _, _, _ = admitted
    assert tasks
    for n, task in tasks.items():
        ts = task["audit"]["test_strength"]
        assert ts["error"] is None, (n, ts["error"])
        assert ts["generated"] > 0, n
        graded = ts["killed"] + ts["survived"] + ts["invalid"]
        assert graded == len(ts["mutants"]) and 0 < graded <= ts["generated"]
        assert len(ts["survivors"]) == ts["survived"]
        judged = ts["killed"] + ts["survived"]
        assert ts["score"] == (round(ts["killed"] / judged, 4) if judged else None)
        assert ts["budget"] == {"max_mutants": 8, "seconds": 600.0} and ts["seed"] == 0
    # The wrong fix of wrap (`> width + 1`: lines one character too long pass) is a
    # survivor of the wrap task: its tests never look at an overlong line.
    wrap = tasks[1]["audit"]["test_strength"]
    assert any(
        s["path"] == "src/textkit/wrap.py" and s["description"] == "`width` -> `width + 1`"
        for s in wrap["survivors"]
    ), wrap["survivors"]
    assert wrap["score"] is not None and wrap["score"] < 1.0
    # A task with strong tests: every mutant killed.
    assert max(t["audit"]["test_strength"]["score"] for t in tasks.values()) == 1.0


def test_audit_tests_scores_admitted_tasks_again(
    admitted: tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]], Path, Path],
    tmp_path: Path,
) -> None:
    """`audit-tests` on admitted manifests alone (base files from the image's git, no
    repository): the same mutants as admission's for the same seed and budget, the same
    verdicts, the task otherwise unchanged."""
    from swe_forge.commands.audit_tests import run_audit_tests

    tasks, _, path, _ = admitted
    out = tmp_path / "scored.jsonl"
    run = run_audit_tests(path, out, config=load_config(), instances=["swe-forge__textkit-1"])
    (again,) = [json.loads(x) for x in out.read_text().splitlines()]
    first, second = tasks[1]["audit"]["test_strength"], again["audit"]["test_strength"]

    def verdicts(block: dict[str, Any]) -> list[tuple[str, str]]:
        return [(m["id"], m["verdict"]) for m in block["mutants"]]

    assert verdicts(second) == verdicts(first) and second["score"] == first["score"]
    assert run.measured == 1 and run.with_survivors == 1
    for key in set(again) - {"audit"}:
        assert again[key] == tasks[1][key], key
