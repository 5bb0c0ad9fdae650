"""Batch runs through admission and verification with the real engine: kill, resume, compare."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from swe_forge.config import Config
from swe_forge.engine import Engine
from tests.docker.conftest import ExampleImages


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swe_forge", *args], capture_output=True, text=True, timeout=900
    )


def essentials(folder: Path) -> dict[str, Any]:
    """What must not differ between runs: ids, F2P/P2P, reasons (not timings or seeds)."""
    tasks = {
        json.loads(x)["instance_id"]: (json.loads(x)["FAIL_TO_PASS"], json.loads(x)["PASS_TO_PASS"])
        for x in (folder / "tasks.jsonl").read_text().splitlines()
    }
    rejected = sorted(
        (r.get("instance_id") or r["repo"], r["stage"], r["reason"])
        for r in map(json.loads, (folder / "rejected.jsonl").read_text().splitlines())
    )
    return {
        "candidates": (folder / "candidates.jsonl").read_text(),
        "tasks": tasks,
        "rejected": rejected,
    }


def test_run_killed_during_admission_resumes(
    example_images: ExampleImages, engine: Engine, tmp_path: Path, without_test_strength: Config
) -> None:
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{example_images.repo}  swe-forge/textkit\n")
    straight = tmp_path / "straight"
    res = cli("run", str(listing), "--out", str(straight), "--jobs", "2", "-q")
    assert res.returncode == 20, res.stderr[-2000:]
    killed = tmp_path / "killed"
    for delay in (3.0, 9.0):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "swe_forge",
                "run",
                str(listing),
                "--out",
                str(killed),
                "--jobs",
                "2",
                "-q",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    res = cli("run", str(listing), "--out", str(killed), "--jobs", "2", "-q")
    assert res.returncode == 20, res.stderr[-2000:]
    assert essentials(killed) == essentials(straight)
    # The killed attempts' containers were cleaned up when the run resumed.
    run_label = [
        c["Id"]
        for c in engine.api.containers(all=True)
        if "org.swe-forge.run" in (c.get("Labels") or {})
    ]
    assert run_label == []


def test_verify_batch_resumes(example_images: ExampleImages, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    res = cli(
        "admit",
        str(example_images.candidates),
        "--images",
        str(example_images.images),
        "-o",
        str(tasks),
        "--instance",
        "swe-forge__textkit-1",
        "--instance",
        "swe-forge__textkit-3",
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = tmp_path / "verify"
    first = cli("verify", "--tasks", str(tasks), "--gold", "--out", str(out), "--json")
    assert first.returncode == 0, first.stderr[-2000:]
    report = json.loads(first.stdout)
    assert report["resolved_instances"] == 2
    results = (out / "results.jsonl").read_text()
    again = cli("verify", "--tasks", str(tasks), "--gold", "--out", str(out), "--json")
    assert json.loads(again.stdout)["resolved_instances"] == 2
    assert (out / "results.jsonl").read_text() == results  # nothing graded twice
    shard = cli(
        "verify",
        "--tasks",
        str(tasks),
        "--gold",
        "--out",
        str(tmp_path / "s1"),
        "--shard",
        "1/2",
        "--json",
    )
    shard2 = cli(
        "verify",
        "--tasks",
        str(tasks),
        "--gold",
        "--out",
        str(tmp_path / "s2"),
        "--shard",
        "2/2",
        "--json",
    )
    assert (
        json.loads(shard.stdout)["submitted_instances"]
        + json.loads(shard2.stdout)["submitted_instances"]
        == 2
    )
