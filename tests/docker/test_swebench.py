"""SWE-bench 5's own harness grades our tasks with our images (issue 12's acceptance test).

``swebench==5.0.2``, in its own venv (``scripts/swebench-venv.sh``: installed from the package
index once, then cached), loads the rows ``swe-forge export`` writes with
``load_swebench_dataset``; its ``run_evaluation`` (through ``scripts/swebench_eval.py``, which
only takes its containers off the network) grades the example's gold patches 5/5 resolved and
an empty and a no-op patch unresolved, starting our instance images as they are: nothing
built, nothing pulled, no network. And why rewards come from ``swe-forge verify``: a patch that
adds a ``conftest.py`` making every test pass is resolved by SWE-bench and scores 0 with us.

Nothing here skips: without the package index (first run) or the engine, it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from swe_forge.commands.export import run_export
from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.engine import Engine
from swe_forge.records import TaskManifest
from tests.docker.conftest import ExampleTasks

ROOT = Path(__file__).resolve().parents[2]

NO_OP = "swe-forge__textkit-3"
EMPTY = "swe-forge__textkit-1"
FORGED = "swe-forge__textkit-9"


def new_file(path: str, text: str) -> str:
    lines = text.splitlines(keepends=True)
    body = "".join("+" + x for x in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


# Applies, changes nothing the tests see: the F2P tests still fail.
NO_OP_PATCH = new_file("NOTES.md", "Nothing to see here.\n")
# A pytest hook that reports every test as passed, whatever happened (exit status 0 too).
CONFTEST_PATCH = new_file(
    "conftest.py",
    "import pytest\n"
    "\n"
    "\n"
    "@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    '    outcome.get_result().outcome = "passed"\n',
)

# Runs in SWE-bench's venv: what its loader and make_test_spec make of our rows, and what the
# wrapper does to a container it creates.
INSPECT = """
import json, runpy, sys
from swebench.harness.log_parsers import PARSER_REGISTRY
from swebench.harness.utils import load_swebench_dataset, make_test_spec
rows = load_swebench_dataset(sys.argv[1])
specs = [make_test_spec(r) for r in rows]
runpy.run_path(sys.argv[2], run_name="swebench_eval")
import docker
client = docker.from_env()
box = client.containers.create(image=specs[0].image, command="true")
try:
    network = box.attrs["HostConfig"]["NetworkMode"]
finally:
    box.remove(force=True)
print(json.dumps({
    "network": network,
    "specs": [
        {
            "instance_id": s.instance_id,
            "image": s.image,
            "FAIL_TO_PASS": s.FAIL_TO_PASS,
            "PASS_TO_PASS": s.PASS_TO_PASS,
            "log_parser": s.log_parser,
            "known_parser": s.log_parser in PARSER_REGISTRY,
            "eval_type": s.eval_type,
            "eval_script": s.eval_script,
        }
        for s in specs
    ],
}))
"""


@pytest.fixture(scope="module")
def swebench_python() -> Path:
    # Made once per machine (about 30 s with the index reachable), then reused.
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "swebench-venv.sh")],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, f"scripts/swebench-venv.sh failed:\n{done.stderr[-3000:]}"
    python = Path(done.stdout.strip().splitlines()[-1])
    assert python.is_file(), done.stdout
    return python


@pytest.fixture(scope="module")
def rows(example_tasks: ExampleTasks, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("swebench") / "tasks-swebench.jsonl"
    assert run_export(example_tasks.tasks, path) == 5
    return path


@pytest.fixture(scope="module")
def tasks(example_tasks: ExampleTasks) -> dict[str, TaskManifest]:
    out = {}
    for line in example_tasks.tasks.read_text().splitlines():
        task = TaskManifest.from_dict(json.loads(line))
        out[task.instance_id] = task
    return out


def offline_env() -> dict[str, str]:
    # Nothing may come from Hugging Face: the dataset is our file.
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def run_evaluation(
    engine: Engine, python: Path, rows: Path, predictions: str, workdir: Path, max_workers: int
) -> tuple[dict[str, Any], str]:
    """SWE-bench's run_evaluation (through our wrapper) in ``workdir``: its report, its logs.

    Its containers are named ``sweb.eval.<instance>.<run id>``; the run id is ours alone, so
    whatever is left with it is ours to remove (and a leftover fails the test).
    """
    run_id = f"swe-forge-{uuid.uuid4().hex[:10]}"
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [
        str(python),
        str(ROOT / "scripts" / "swebench_eval.py"),
        "--dataset_name",
        str(rows),
        "--predictions_path",
        predictions,
        "--run_id",
        run_id,
        "--max_workers",
        str(max_workers),
        "--timeout",
        "600",
        "--report_dir",
        str(workdir),
    ]
    try:
        done = subprocess.run(
            argv, cwd=workdir, env=offline_env(), capture_output=True, text=True, timeout=1800
        )
    finally:
        # One listing request (the SDK's list() fails when another run removes a container).
        left = [
            "/".join(c.get("Names") or [])
            for c in engine.api.containers(all=True)
            if any(run_id in n for n in c.get("Names") or [])
        ]
        for name in left:
            engine.api.remove_container(name.split("/")[-1], force=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not left, f"SWE-bench left containers behind: {left}"
    (report_path,) = workdir.glob(f"*.{run_id}.json")
    logs = "\n".join(
        p.read_text(errors="replace")
        for p in sorted((workdir / "logs" / "run_evaluation" / run_id).rglob("*"))
        if p.is_file() and p.suffix in (".log", ".txt")
    )
    return json.loads(report_path.read_text()), logs


def test_swebench_loads_our_rows(
    swebench_python: Path, rows: Path, tasks: dict[str, TaskManifest]
) -> None:
    done = subprocess.run(
        [str(swebench_python), "-c", INSPECT, str(rows), str(ROOT / "scripts/swebench_eval.py")],
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # The wrapper's containers have no network.
    assert seen["network"] == "none"
    specs = {s["instance_id"]: s for s in seen["specs"]}
    assert sorted(specs) == sorted(tasks)
    for iid, spec in specs.items():
        task = tasks[iid]
        assert spec["image"] == task.image["id"] and spec["image"].startswith("sha256:")
        assert spec["FAIL_TO_PASS"] == task.FAIL_TO_PASS
        assert spec["PASS_TO_PASS"] == task.PASS_TO_PASS
        assert spec["known_parser"] and spec["eval_type"] == "pass_and_fail"
        # SWE-bench found our end marker and records the test command's exit status there.
        assert "SWEBENCH_TEST_EXIT_CODE=$?" in spec["eval_script"]
        assert task.base_commit not in spec["eval_script"]


def test_swebench_grades_gold_resolved_and_others_not(
    engine: Engine,
    swebench_python: Path,
    rows: Path,
    tasks: dict[str, TaskManifest],
    example_tasks: ExampleTasks,
    tmp_path: Path,
) -> None:
    # 1. The gold patches: every task resolved, with our images, nothing pulled or built.
    report, logs = run_evaluation(
        engine, swebench_python, rows, "gold", tmp_path / "gold", max_workers=5
    )
    assert report["resolved_ids"] == sorted(tasks), report
    assert report["resolved_instances"] == report["submitted_instances"] == 5
    assert report["error_ids"] == [] and report["unresolved_ids"] == []
    assert "attempting to pull" not in logs and "Image not found" not in logs
    assert ">>>>> Test Exit Code: 0" in logs

    # 2. An empty patch, a patch that changes nothing, and a forged result.
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": iid, "model_name_or_path": "m", "model_patch": patch}) + "\n"
            for iid, patch in ((EMPTY, ""), (NO_OP, NO_OP_PATCH), (FORGED, CONFTEST_PATCH))
        )
    )
    report, logs = run_evaluation(
        engine, swebench_python, rows, str(preds), tmp_path / "others", max_workers=3
    )
    assert report["empty_patch_ids"] == [EMPTY]
    assert report["unresolved_ids"] == [NO_OP]  # graded: the tests ran and failed
    assert report["error_ids"] == []
    # SWE-bench believes the hook: every FAIL_TO_PASS test "passed", exit status 0.
    assert report["resolved_ids"] == [FORGED]

    # 3. The same forged patch through swe-forge verify: refused before anything runs.
    ours = tmp_path / "forged.jsonl"
    ours.write_text(
        json.dumps(
            {"instance_id": FORGED, "model_name_or_path": "m", "model_patch": CONFTEST_PATCH}
        )
        + "\n"
    )
    run, _ = run_verify(
        example_tasks.tasks, tmp_path / "results.jsonl", config=load_config(), predictions=ours
    )
    (result,) = run.results
    assert (result.status, result.reward) == ("invalid_patch", 0.0), result.detail
