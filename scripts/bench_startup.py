#!/usr/bin/env python3
"""Benchmark: the command line's start-up, against the bare interpreter of the same venv.

Each command runs N times in turn (interleaved, so load hits them alike) and the medians are
compared with `python -c pass` run the same way: the floor any Python command pays. The target
(issue 22) is `--version` and `--help` under 80 ms on a quiet 2-core machine; the ratio to the
floor is what stays comparable on a loaded one.

Usage: scripts/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"

COMMANDS = {
    "python -c pass (floor)": [str(BIN / "python"), "-c", "pass"],
    "swe-forge --version": [str(BIN / "swe-forge"), "--version"],
    "swe-forge --help": [str(BIN / "swe-forge"), "--help"],
    "swe-forge verify --help": [str(BIN / "swe-forge"), "verify", "--help"],
}
TARGET_MS = 80.0


def once(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    ns = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for cmd in COMMANDS.values():  # warm the page cache once
        once(cmd)
    for _ in range(ns.runs):
        for label, cmd in COMMANDS.items():
            times[label].append(once(cmd))
    floor = statistics.median(times["python -c pass (floor)"])
    load = os.getloadavg()[0]
    print(f"CPUs: {os.cpu_count()}; load average {load:.2f}; medians of {ns.runs} interleaved runs")
    for label, ts in times.items():
        med = statistics.median(ts) * 1000
        p90 = sorted(ts)[int(0.9 * (len(ts) - 1))] * 1000
        extra = ""
        if label.startswith("swe-forge") and label.endswith(("--version", "swe-forge --help")):
            extra = f"  target < {TARGET_MS:.0f} ms: {'met' if med < TARGET_MS else 'NOT met'}"
        print(
            f"  {label:<26} {med:7.1f} ms (p90 {p90:6.1f})  {med / 1000 / floor:4.2f}x floor{extra}"
        )


if __name__ == "__main__":
    main()
