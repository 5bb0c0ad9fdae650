"""verify --executor ray on a real local Ray cluster: a worker node killed mid-run changes
nothing. The head (no CPU) and two one-CPU worker nodes are separate processes on this
machine; the results must equal a local --out run's, nothing graded twice, and no container
of ours left. Ray and Docker are required here: without them this fails, it never skips."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ray  # noqa: F401  (the extra is part of dev: a missing one fails this module)

from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.engine import LABEL_PREFIX, Engine, process_identity
from tests.docker.conftest import ExampleTasks
from tests.docker.raycluster import LocalRayCluster

TASK = "swe-forge__textkit-1"
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


def judges_of(engine: Engine, pids: list[int]) -> list[str]:
    """Containers made by one of these processes."""
    found = []
    for ctr in engine.api.containers(all=True, filters={"label": OWNER}):
        owner = str((ctr.get("Labels") or {}).get(OWNER, ""))
        pid = owner.partition(":")[2].partition(":")[0]
        if pid.isdigit() and int(pid) in pids:
            found.append(ctr["Id"][:12])
    return found


def test_verify_on_ray_survives_a_dead_node(
    example_tasks: ExampleTasks, engine: Engine, tmp_path: Path
) -> None:
    timings: dict[str, float] = {}
    rows = predictions(example_tasks.tasks)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))

    t = time.perf_counter()
    local_dir = tmp_path / "local"
    run_verify(
        example_tasks.tasks,
        tmp_path / "unused.jsonl",
        config=load_config(),
        predictions=preds,
        jobs=2,
        out_dir=local_dir,
    )
    local = [json.loads(x) for x in (local_dir / "results.jsonl").read_text().splitlines()]
    timings["local --jobs 2"] = time.perf_counter() - t
    assert len(local) == len(rows)

    cluster = LocalRayCluster()
    driver: subprocess.Popen[str] | None = None
    out = tmp_path / "ray"
    try:
        t = time.perf_counter()
        cluster.start(workers=2)
        timings["cluster start"] = time.perf_counter() - t
        t = time.perf_counter()
        driver = subprocess.Popen(
            [
                sys.executable, "-m", "swe_forge", "verify", "--tasks", str(example_tasks.tasks),
                "--predictions", str(preds), "--out", str(out), "--executor", "ray",
                "--address", cluster.address, "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        # Kill worker node 1 while one of its judges has a container (mid-verification).
        victim = cluster.worker(1)
        deadline = time.monotonic() + 300
        while not judges_of(engine, victim.alive()):
            assert driver.poll() is None, driver.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "worker 1 never started a judge"
            time.sleep(0.2)
        victim.kill()
        timings["until the kill"] = time.perf_counter() - t
        assert victim.alive() == []
        stdout, stderr = driver.communicate(timeout=900)
        timings["ray run"] = time.perf_counter() - t
        assert driver.returncode == 0, f"{stderr[-3000:]}\n{cluster.logs()}"
        report = json.loads(stdout)
    finally:
        if driver is not None and driver.poll() is None:
            driver.kill()
            driver.wait()
        cluster.stop()
    assert cluster.leftovers() == []  # no raylet, GCS or worker of ours left

    ray_rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    # Nothing graded twice: one result and one unit per prediction.
    keys = [(r["instance_id"], r["model_name_or_path"]) for r in ray_rows]
    assert len(keys) == len(set(keys)) == len(rows)
    assert len(list((out / "units" / "verify").glob("*.jsonl"))) == len(rows)
    assert essentials(ray_rows) == essentials(local)
    assert report["resolved_instances"] == len(rows) - 4 and report["not_graded"] == 0
    # The killed node's judge's container was reaped by the driver.
    assert orphans(engine) == []
    # A rerun grades nothing (the folder is complete) and needs no cluster.
    again = run_verify(
        example_tasks.tasks,
        tmp_path / "unused.jsonl",
        config=load_config(),
        predictions=preds,
        out_dir=out,
        executor="ray",
        address="127.0.0.1:1",  # nothing to grade: never contacted
    )
    assert essentials([r.to_dict() for r in again[0].results]) == essentials(local)
    print("timings (s):", {k: round(v, 1) for k, v in timings.items()}, file=sys.stderr)
