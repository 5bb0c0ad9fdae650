#!/usr/bin/env python3
"""Benchmark: the verifier's overhead per patch, and its throughput with --jobs 1 and 2.

Overhead = wall time of a verification minus the time the tests themselves ran (the pytest
process, from start to exit, canaries included: they are tests). Measured on the example's
admitted tasks with their gold patches, at least 20 verifications; then the same batch with
--jobs 1 and --jobs 2, printed as a ratio. Target: median overhead under 1.0 s on a 2-core
machine. The parts: container start, prepare (seed, checkout, candidate applied, capability
scan), and the run's own overhead (test patch, canaries, lock-down, watch, kill, checks).

Usage: scripts/bench_verify.py [--tasks tasks.jsonl] [--n 20] [--work DIR]
       (without --tasks, the example is created, mined, built and admitted in DIR first)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swe_forge.commands.admit import run_admit
from swe_forge.commands.images import run_build
from swe_forge.commands.mine import run_mine
from swe_forge.commands.verify import read_tasks, run_verify
from swe_forge.config import load_config
from swe_forge.example import create_example
from swe_forge.mining.miner import MineOptions


def prepare(work: Path) -> Path:
    tasks = work / "tasks.jsonl"
    if tasks.exists():
        return tasks
    cfg = load_config()
    info = create_example(work / "textkit", force=True)
    run_mine([str(info.path)], work / "candidates.jsonl", config=cfg, options=MineOptions())
    run_build(work / "candidates.jsonl", work / "images.jsonl", config=cfg)
    run_admit(work / "candidates.jsonl", tasks, config=cfg, images_path=work / "images.jsonl")
    return tasks


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=Path)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--work", type=Path, default=Path("bench-verify"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    tasks_path = args.tasks or prepare(args.work)
    tasks = read_tasks(tasks_path)
    ids = sorted(tasks)
    cfg = load_config()
    # A predictions file holding each gold patch enough times for n verifications. Each
    # (instance, model) is graded once, so every repetition is its own model: gold-1, gold-2...
    import json

    preds = args.work / "preds.jsonl"
    rows = [
        {
            "instance_id": ids[i % len(ids)],
            "model_name_or_path": f"gold-{i // len(ids) + 1}",
            "model_patch": tasks[ids[i % len(ids)]].patch,
        }
        for i in range(args.n)
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # Warm-up (page cache, image layers), not measured.
    run_verify(tasks_path, args.work / "warm.jsonl", config=cfg, predictions=preds, jobs=1)
    timings = {}
    for jobs in (1, 2):
        start = time.perf_counter()
        run, report = run_verify(
            tasks_path,
            args.work / f"results-j{jobs}.jsonl",
            config=cfg,
            predictions=preds,
            jobs=jobs,
        )
        timings[jobs] = (time.perf_counter() - start, run)
        # The report counts instances; the n results are what was graded.
        resolved = sum(r.status == "resolved" for r in run.results)
        assert len(run.results) == args.n and resolved == args.n, report["statuses"]
    wall1, run1 = timings[1]
    # Baseline in the same run: what grading costs with none of the defences, i.e. a plain
    # `docker run` of the instance image that applies the test patch and gold patch and runs
    # pytest on the test files (no supervisor, no locks, no canaries, no scan).
    from swe_forge.engine import Engine

    engine = Engine()
    bare = []
    for i in range(args.n):
        task = tasks[ids[i % len(ids)]]
        files = " ".join(task.harness["test_files"])
        script = (
            "cd /testbed && printf '%s' \"$TP\" | git apply - && printf '%s' \"$GP\" | git apply - "
            f"&& python -m pytest -q -p no:cacheprovider {files}"
        )
        start = time.perf_counter()
        code, out = engine.run(
            str(task.image["id"]),
            ["/bin/sh", "-c", script],
            environment={"TP": task.test_patch, "GP": task.patch},
            network_disabled=True,
        )
        bare.append(time.perf_counter() - start)
        assert code == 0, out[-500:]
    totals = [r.timings["total"] for r in run1.results]
    tests = [r.timings.get("tests", 0.0) for r in run1.results]
    overhead = [t - x for t, x in zip(totals, tests, strict=True)]
    print(f"verifications: {args.n} gold patches over {len(ids)} tasks (all resolved)")
    print(f"wall per verification: median {statistics.median(totals):.3f} s")
    print(f"tests' own time (pytest process): median {statistics.median(tests):.3f} s")
    print(
        f"verifier overhead: median {statistics.median(overhead):.3f} s, p90 {sorted(overhead)[int(0.9 * len(overhead)) - 1]:.3f} s  (target < 1.0 s: {'met' if statistics.median(overhead) < 1.0 else 'NOT met'})"
    )
    parts = {}
    for key in ("guards", "container_start", "prepare", "lock"):
        parts[key] = statistics.median(r.timings.get(key, 0.0) for r in run1.results)
    parts["run minus tests"] = statistics.median(
        r.timings.get("run", 0.0) - r.timings.get("tests", 0.0) for r in run1.results
    )
    print("  median parts: " + ", ".join(f"{k} {v:.3f} s" for k, v in parts.items()))
    print(
        f"baseline (plain docker run + pytest, no defences): median {statistics.median(bare):.3f} s; "
        f"verifier/baseline wall ratio {statistics.median(totals) / statistics.median(bare):.2f}x"
    )
    wall2 = timings[2][0]
    print(f"throughput --jobs 1: {args.n / wall1:.2f} verifications/s ({wall1:.1f} s)")
    print(f"throughput --jobs 2: {args.n / wall2:.2f} verifications/s ({wall2:.1f} s)")
    print(f"ratio jobs2/jobs1 throughput: {wall1 / wall2:.2f}x")


if __name__ == "__main__":
    main()
