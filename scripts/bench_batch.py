#!/usr/bin/env python3
"""Benchmark: the example repository's full pipeline (mine + admit) with --jobs 1 and 2.

Both runs start from empty output folders and share the machine's image cache (base, env
and instance images already built by a warm-up run), so they compare the pipeline's own
parallelism, not image bootstrapping. Prints both wall times and the ratio.

Usage: scripts/bench_batch.py [--work DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SF = str(ROOT / ".venv" / "bin" / "swe-forge")


def run(listing: Path, out: Path, jobs: int) -> float:
    if out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    proc = subprocess.run(
        [
            SF,
            "run",
            str(listing),
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--test-jobs",
            str(jobs),
            "--build-jobs",
            str(jobs),
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 20):
        sys.exit(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--work", type=Path, default=Path("bench-batch"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [SF, "example", "create", str(args.work / "textkit"), "--force"],
        check=True,
        capture_output=True,
    )
    listing = args.work / "repos.txt"
    listing.write_text(f"{args.work / 'textkit'}  swe-forge/textkit\n")
    run(listing, args.work / "warm", 2)  # builds every image once
    one = run(listing, args.work / "j1", 1)
    two = run(listing, args.work / "j2", 2)
    print("example pipeline (mine + admit of 7 candidates, 5 admitted), images cached")
    print(f"--jobs 1: {one:.1f} s")
    print(f"--jobs 2: {two:.1f} s")
    print(f"speed-up jobs2/jobs1: {one / two:.2f}x")


if __name__ == "__main__":
    main()
