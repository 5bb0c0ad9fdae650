"""verify and run (admission) with --executor ray on a real local Ray cluster: a worker node
killed mid-run changes nothing. The head (no CPU) and two worker nodes are separate processes
on this machine; the results must equal local runs', nothing graded or admitted twice, and no
container of ours left. The VerifierPool grades through the real verifier on Ray actors. Ray
and Docker are required here: without them this fails, it never skips."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import ray  # the extra is part of dev: a missing one fails this module

import swe_forge
from swe_forge.commands.verify import run_verify
from swe_forge.config import Config
from swe_forge.engine import LABEL_PREFIX, Engine, process_identity
from tests.docker.conftest import ExampleImages, ExampleTasks
from tests.docker.raycluster import LocalRayCluster, Node
from tests.docker.test_batch_docker import essentials as run_essentials

TASK = "swe-forge__textkit-1"


@pytest.fixture(autouse=True)
def no_ray_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray instances started here (and the drivers) run without token authentication: a
    local ray.init would otherwise write ~/.ray/auth_token, which later heads pick up."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


OWNER = LABEL_PREFIX + ".owner"


def predictions(tasks_path: Path) -> list[dict[str, str]]:
    """Every gold patch, and attacks and wrong answers on one task."""
    tasks = [json.loads(x) for x in tasks_path.read_text().splitlines()]
    rows = [
        {"instance_id": t["instance_id"], "model_name_or_path": "gold", "model_patch": t["patch"]}
        for t in tasks
    ]
    other = next(t for t in tasks if t["instance_id"] != TASK)
    edit_tests = (
        "diff --git a/tests/test_wrap.py b/tests/test_wrap.py\n"
        "--- a/tests/test_wrap.py\n+++ b/tests/test_wrap.py\n"
        "@@ -1 +1,2 @@\n+import os\n"
    )
    attacks = {
        "empty": "",
        "garbage": "x",
        "edit-tests": edit_tests,
        "wrong-fix": other["patch"],  # applies, fixes another task: unresolved here
    }
    rows += [
        {"instance_id": TASK, "model_name_or_path": name, "model_patch": patch}
        for name, patch in attacks.items()
    ]
    return rows


def essentials(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, float]]:
    return sorted(
        (r["instance_id"], r["model_name_or_path"], r["status"], r["reward"]) for r in rows
    )


def orphans(engine: Engine) -> list[str]:
    """Our containers whose owner process (on this machine) is dead."""
    here = process_identity(None)
    left = []
    for ctr in engine.api.containers(all=True, filters={"label": OWNER}):
        owner = str((ctr.get("Labels") or {}).get(OWNER, ""))
        boot, _, rest = owner.partition(":")
        pid = rest.partition(":")[0]
        if boot == here and pid.isdigit() and process_identity(int(pid)) != owner:
            left.append(ctr["Id"][:12])
    return left


def judges_of(engine: Engine, pids: list[int], admission: bool | None = None) -> list[str]:
    """Containers made by one of these processes: all, or only admission's (its gates,
    calibration and gold grading carry the run's label) or only verify's judges."""
    found = []
    for ctr in engine.api.containers(all=True, filters={"label": OWNER}):
        labels = ctr.get("Labels") or {}
        owner = str(labels.get(OWNER, ""))
        pid = owner.partition(":")[2].partition(":")[0]
        if admission is not None and ("org.swe-forge.run" in labels) != admission:
            continue
        if pid.isdigit() and int(pid) in pids:
            found.append(ctr["Id"][:12])
    return found


def driver(*args: str) -> subprocess.Popen[str]:
    """A swe-forge command in its own process (the Ray driver)."""
    return subprocess.Popen(
        [sys.executable, "-m", "swe_forge", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_mid_run(engine: Engine, victim: Node, run: subprocess.Popen[str], admission: bool) -> None:
    """Kill the node while one of its tasks has a container (a gate's, for admission; a
    judge's, for verify): mid-task, with the run still going."""
    deadline = time.monotonic() + 600
    while not judges_of(engine, victim.alive(), admission=admission):
        assert run.poll() is None, run.communicate()[1][-3000:]
        assert time.monotonic() < deadline, f"{victim.name} never started a container"
        time.sleep(0.1)
    victim.kill()
    assert victim.alive() == []
    assert run.poll() is None  # the run was cut mid-way, not after


def test_run_and_verify_on_ray_survive_a_dead_node(
    example_images: ExampleImages,
    example_tasks: ExampleTasks,
    engine: Engine,
    tmp_path: Path,
    without_test_strength: Config,
) -> None:
    timings: dict[str, float] = {}
    rows = predictions(example_tasks.tasks)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{example_images.repo}  swe-forge/textkit\n")

    # The local runs the Ray runs must equal.
    t = time.perf_counter()
    local_dir = tmp_path / "local"
    run_verify(
        example_tasks.tasks,
        tmp_path / "unused.jsonl",
        config=without_test_strength,
        predictions=preds,
        jobs=2,
        out_dir=local_dir,
    )
    local = [json.loads(x) for x in (local_dir / "results.jsonl").read_text().splitlines()]
    timings["local verify --jobs 2"] = time.perf_counter() - t
    assert len(local) == len(rows)
    t = time.perf_counter()
    local_run = tmp_path / "local-run"
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge", "run", str(listing), "--out", str(local_run),
         "--jobs", "2", "-q"],
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 20, done.stderr[-3000:]
    timings["local run --jobs 2"] = time.perf_counter() - t

    # One node is killed mid-admission; a fresh node joins; another is killed mid-verify.
    cluster = LocalRayCluster()
    drivers: list[subprocess.Popen[str]] = []
    out = tmp_path / "ray"
    ray_run = tmp_path / "ray-run"
    try:
        t = time.perf_counter()
        cluster.start(workers=2)
        timings["cluster start"] = time.perf_counter() - t
        t = time.perf_counter()
        admit = driver(
            "run", str(listing), "--out", str(ray_run), "-q", "--executor", "ray",
            "--address", cluster.address,
        )  # fmt: skip
        drivers.append(admit)
        kill_mid_run(engine, cluster.worker(1), admit, admission=True)
        run_out, run_err = admit.communicate(timeout=1800)
        assert admit.returncode == 20, f"{run_err[-3000:]}\n{cluster.logs()}"
        summary = json.loads(run_out)
        timings["ray run"] = time.perf_counter() - t
        cluster.add_worker()
        t = time.perf_counter()
        verify = driver(
            "verify", "--tasks", str(example_tasks.tasks), "--predictions", str(preds),
            "--out", str(out), "--executor", "ray", "--address", cluster.address, "--json",
        )  # fmt: skip
        drivers.append(verify)
        kill_mid_run(engine, cluster.worker(2), verify, admission=False)
        stdout, stderr = verify.communicate(timeout=1800)
        assert verify.returncode == 0, f"{stderr[-3000:]}\n{cluster.logs()}"
        report = json.loads(stdout)
        timings["ray verify"] = time.perf_counter() - t
    finally:
        for d in drivers:
            if d.poll() is None:
                d.kill()
                d.wait()
        cluster.stop()
    assert cluster.leftovers() == []  # no raylet, GCS or worker of ours left

    # verify: one result and one unit per prediction, the local run's grades.
    ray_rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    keys = [(r["instance_id"], r["model_name_or_path"]) for r in ray_rows]
    assert len(keys) == len(set(keys)) == len(rows)
    assert len(list((out / "units" / "verify").glob("*.jsonl"))) == len(rows)
    assert essentials(ray_rows) == essentials(local)
    assert report["resolved_instances"] == len(rows) - 4 and report["not_graded"] == 0

    # run: one decision per candidate, the local run's decisions.
    tasks = [json.loads(x) for x in (ray_run / "tasks.jsonl").read_text().splitlines()]
    rejected = [json.loads(x) for x in (ray_run / "rejected.jsonl").read_text().splitlines()]
    candidates = (ray_run / "candidates.jsonl").read_text().splitlines()
    assert len(list((ray_run / "units" / "admit").glob("*.jsonl"))) == len(candidates)
    assert summary["infra_errors"] == [] and summary["candidates"] == len(candidates)
    ids = [t["instance_id"] for t in tasks] + [
        r["instance_id"] for r in rejected if r["stage"] == "admit"
    ]
    assert sorted(ids) == sorted({json.loads(c)["instance_id"] for c in candidates})
    assert run_essentials(ray_run) == run_essentials(local_run)

    # No container left: the killed node's judge and gate containers were reaped.
    assert orphans(engine) == []
    assert engine.api.containers(all=True, filters={"label": "org.swe-forge.run"}) == []
    # Reruns do nothing (the folders are complete) and need no cluster.
    again = run_verify(
        example_tasks.tasks,
        tmp_path / "unused.jsonl",
        config=without_test_strength,
        predictions=preds,
        out_dir=out,
        executor="ray",
        address="127.0.0.1:1",  # nothing to grade: never contacted
    )
    assert essentials([r.to_dict() for r in again[0].results]) == essentials(local)
    before = (ray_run / "tasks.jsonl").read_text()
    rerun = subprocess.run(
        [sys.executable, "-m", "swe_forge", "run", str(listing), "--out", str(ray_run), "-q",
         "--executor", "ray", "--address", "127.0.0.1:1"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert rerun.returncode == 20, rerun.stderr[-3000:]
    assert (ray_run / "tasks.jsonl").read_text() == before
    print("timings (s):", {k: round(v, 1) for k, v in timings.items()}, file=sys.stderr)


def test_verifier_pool_grades_with_the_real_verifier(example_tasks: ExampleTasks) -> None:
    """Two example tasks on a pool of two actors (a Ray instance started by the pool): gold
    1.0, another task's fix 0.0, rewards in compute_score's shape, as they finish."""
    rows = [json.loads(x) for x in example_tasks.tasks.read_text().splitlines()]
    a = next(t for t in rows if t["instance_id"] == TASK)
    b = next(t for t in rows if t["instance_id"] != TASK)  # its fix applies to a, fixes nothing

    async def main() -> tuple[dict[int, Any], dict[str, Any], dict[str, Any]]:
        async with swe_forge.VerifierPool(size=2) as pool:
            items = [(a, a["patch"]), (b, b["patch"], "gold-b"), (a, b["patch"], "wrong")]
            got = {i: r async for i, r in pool.as_completed(items)}
            answer = f"Here is the fix:\n```diff\n{b['patch']}```\n"
            gold = await pool.compute_score("swe-forge", answer, b, {"model": "m"})
            none = await pool.compute_score("swe-forge", "no idea", json.dumps(a))
            return got, gold, none

    t = time.perf_counter()
    got, gold, none = asyncio.run(main())
    assert {i: (r.instance_id, r.status, r.reward) for i, r in got.items()} == {
        0: (a["instance_id"], "resolved", 1.0),
        1: (b["instance_id"], "resolved", 1.0),
        2: (a["instance_id"], "unresolved", 0.0),
    }
    assert got[1].model_name_or_path == "gold-b"
    assert gold == {"score": 1.0, "status": "resolved", "infra_error": False}
    assert none == {"score": 0.0, "status": "invalid_patch", "infra_error": False}
    assert not ray.is_initialized()  # the pool closed the Ray instance it started
    print(f"pool: {time.perf_counter() - t:.1f}s", file=sys.stderr)


def test_run_on_ray_admits_on_image_records(
    example_images: ExampleImages,
    example_tasks: ExampleTasks,
    tmp_path: Path,
    without_test_strength: Config,
) -> None:
    """run --executor ray --images: each Ray task admits on its candidate's image record (made
    present on its node's engine, pulled by pinned digest where missing) instead of building;
    the decisions are those of `admit --images` over the same candidates."""
    from swe_forge.batch.run import BatchOptions, run_batch

    listing = tmp_path / "repos.txt"
    listing.write_text(f"{example_images.repo}  swe-forge/textkit\n")
    t = time.perf_counter()
    result = run_batch(
        listing,
        tmp_path / "out",
        config=without_test_strength,
        options=BatchOptions(executor="ray", images=example_images.images),
    )
    assert result.exit_code == 20 and result.infra_errors == []
    assert not ray.is_initialized()  # the executor closed the Ray instance it started

    def decisions(tasks: Path, rejected: Path) -> dict[str, Any]:
        admitted = {
            r["instance_id"]: (r["FAIL_TO_PASS"], r["PASS_TO_PASS"], r["image"]["id"])
            for r in map(json.loads, tasks.read_text().splitlines())
        }
        refused = {
            r["instance_id"]: r["reason"]
            for r in map(json.loads, rejected.read_text().splitlines())
            if r["stage"] == "admit"
        }
        return {"admitted": admitted, "rejected": refused}

    out = tmp_path / "out"
    assert decisions(out / "tasks.jsonl", out / "rejected.jsonl") == decisions(
        example_tasks.tasks, example_tasks.rejected
    )
    print(f"run --executor ray --images: {time.perf_counter() - t:.1f}s", file=sys.stderr)
