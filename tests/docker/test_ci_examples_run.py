"""The ready-made GitHub Actions and Kubernetes examples, run as written on this machine.

Each example's own shell script is taken out of its YAML and run with bash: every shard of the
GitHub Actions matrix (then the merge job's script), and every index of the Kubernetes Indexed
Job (then the merge its header prescribes). Only what stands for the platform is provided: the
`${{ ... }}` expressions GitHub fills in, the JOB_COMPLETION_INDEX Kubernetes sets, the shared
volume (/data, here a temporary folder), the installed swe-forge (.venv/bin or PATH) and the
set-up lines that install it (this checkout is installed already). The merged tasks must be
those of one unsharded run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from swe_forge.config import PROJECT_ROOT, Config
from tests.docker.conftest import ExampleImages

BIN = Path(sys.executable).parent


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **env},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def _tasks(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {r["instance_id"]: (r["FAIL_TO_PASS"], r["PASS_TO_PASS"]) for r in rows}


def test_the_examples_run_as_written(
    example_images: ExampleImages, tmp_path: Path, without_test_strength: Config
) -> None:
    repos = f"{example_images.repo}  swe-forge/textkit\n"
    straight = tmp_path / "straight"
    (tmp_path / "repos.txt").write_text(repos)
    done = _bash(f"swe-forge run repos.txt --out {straight} -q", tmp_path, {})
    assert done.returncode == 20, done.stderr[-2000:]
    expected = _tasks(straight / "tasks.jsonl")
    assert len(expected) == 5

    # GitHub Actions: the shard job's script for every matrix value, then the merge job's.
    gha = yaml.safe_load((PROJECT_ROOT / "configs/ci/github-actions.yml").read_text())
    shard_job = gha["jobs"]["shard"]
    step = next(s for s in shard_job["steps"] if s.get("name") == "Mine and admit this shard")
    work = tmp_path / "gha"
    work.mkdir()
    (work / "repos.txt").write_text(repos)
    (work / ".venv").mkdir()
    (work / ".venv" / "bin").symlink_to(BIN)
    env = {"SHARDS": str(shard_job["env"]["SHARDS"])}
    for shard in shard_job["strategy"]["matrix"]["shard"]:
        script = step["run"].replace("${{ matrix.shard }}", str(shard))
        assert "${{" not in script
        done = _bash(script, work, env)
        assert done.returncode == 0, (shard, done.stderr[-2000:])
        # What upload-artifact/download-artifact carry between the jobs.
        (work / "shards").mkdir(exist_ok=True)
        (work / "shards" / f"shard-{shard}").symlink_to(work / "out" / f"shard-{shard}")
    merge = next(s["run"] for s in gha["jobs"]["merge"]["steps"] if "run" in s)
    merge = "\n".join(ln for ln in merge.splitlines() if "pip install" not in ln)
    done = _bash(merge, work, {})
    assert done.returncode == 0, done.stderr[-2000:]
    assert _tasks(work / "merged" / "tasks.jsonl") == expected
    assert "admitted" in done.stdout or "tasks" in done.stdout

    # Kubernetes: the container's script for every completion index, /data on a folder.
    job = yaml.safe_load((PROJECT_ROOT / "configs/k8s/indexed-job.yaml").read_text())
    container = job["spec"]["template"]["spec"]["containers"][0]
    data = tmp_path / "data"
    data.mkdir()
    (data / "repos.txt").write_text(repos)
    script = container["args"][0].replace("/data", str(data))
    script = script.replace("/opt/swe-forge/scripts/", f"{PROJECT_ROOT}/scripts/")
    env = {e["name"]: e["value"] for e in container["env"] if e["name"] != "SWE_FORGE_CACHE"}
    for index in range(int(job["spec"]["completions"])):
        done = _bash(script, tmp_path, {**env, "JOB_COMPLETION_INDEX": str(index)})
        assert done.returncode == 0, (index, done.stderr[-2000:])
    header = (PROJECT_ROOT / "configs/k8s/indexed-job.yaml").read_text()
    merge_k8s = re.search(r"`(swe-forge merge [^`]+)`", header)
    assert merge_k8s is not None
    done = _bash(merge_k8s.group(1).replace("/data", str(data)), tmp_path, {})
    assert done.returncode == 0, done.stderr[-2000:]
    assert _tasks(data / "out" / "merged" / "tasks.jsonl") == expected
