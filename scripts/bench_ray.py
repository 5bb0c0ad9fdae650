#!/usr/bin/env python3
"""Benchmark: verifications per second with --executor ray vs local --jobs 2, same run.

The example's admitted tasks, their gold patches repeated as distinct models (gold@1, ...)
for N predictions; each run grades them into a fresh --out folder. The Ray run uses a local
cluster started here (a head with no CPU and two one-CPU worker nodes, as separate
processes, stopped at the end); its start-up is reported, not counted. Prints both rates
and the ratio ray / local.

Usage: scripts/bench_ray.py [--tasks tasks.jsonl] [--n 40] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.bench_verify import admit
from swe_forge.commands.verify import read_tasks, run_verify
from swe_forge.config import load_config
from tests.docker.raycluster import LocalRayCluster


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=Path)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--work", type=Path, default=Path("bench-ray"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    # The Python example's admitted tasks, admitted here unless given.
    tasks_path = args.tasks or admit("python", args.work, load_config())
    ids = sorted(read_tasks(tasks_path))
    tasks = {
        json.loads(x)["instance_id"]: json.loads(x) for x in tasks_path.read_text().splitlines()
    }
    rows = [
        {
            "instance_id": ids[k % len(ids)],
            "model_name_or_path": f"gold@{k // len(ids)}",
            "model_patch": tasks[ids[k % len(ids)]]["patch"],
        }
        for k in range(args.n)
    ]
    preds = args.work / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = load_config()

    def timed(name: str, **kw: object) -> float:
        out = args.work / name
        shutil.rmtree(out, ignore_errors=True)
        t = time.perf_counter()
        run, _ = run_verify(
            tasks_path, args.work / "unused.jsonl", config=cfg, predictions=preds, out_dir=out, **kw
        )  # type: ignore[arg-type]
        seconds = time.perf_counter() - t
        statuses = {r.status for r in run.results}
        assert len(run.results) == args.n and statuses == {"resolved"}, statuses
        return args.n / seconds

    local = timed("local", jobs=2)
    cluster = LocalRayCluster()
    try:
        t = time.perf_counter()
        cluster.start(workers=2)
        start = time.perf_counter() - t
        ray = timed("ray", executor="ray", address=cluster.address)
    finally:
        cluster.stop()
    print(f"predictions: {args.n} (gold patches of {len(ids)} tasks)")
    print(f"local --jobs 2:               {local:.2f} verifications/s")
    print(
        f"ray (2 one-CPU worker nodes): {ray:.2f} verifications/s (cluster start {start:.1f}s, not counted)"
    )
    print(f"ratio ray / local: {ray / local:.2f}")


if __name__ == "__main__":
    main()
