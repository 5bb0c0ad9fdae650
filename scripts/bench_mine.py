#!/usr/bin/env python3
"""Benchmark: `swe-forge mine` against `git log --first-parent --name-status` on one repository.

Both run in this process's run, on the same repository, several times; the medians are
compared. Mining is measured cold (empty licence cache) and warm (cache filled by an earlier
run), as a fresh CI job and a re-run would see it. Prints commits scanned per second and the
ratio mine / git (the target is <= 2.0).

Usage: scripts/bench_mine.py REPO [--branch B] [--runs N]
       (REPO: a local clone or bare repository with >= 2,000 commits)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWE_FORGE = ROOT / ".venv" / "bin" / "swe-forge"


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()[-2000:]}"
        )
    return elapsed, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("repo", type=Path)
    ap.add_argument("--branch", default="HEAD")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    repo = args.repo.resolve()
    git_dir = repo / ".git" if (repo / ".git").exists() else repo
    total = int(
        subprocess.run(
            ["git", f"--git-dir={git_dir}", "rev-list", "--count", args.branch],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    first_parent = int(
        subprocess.run(
            ["git", f"--git-dir={git_dir}", "rev-list", "--first-parent", "--count", args.branch],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    git_cmd = ["git", f"--git-dir={git_dir}", "log", "--first-parent", "--name-status", args.branch]
    git_times = [timed(git_cmd)[0] for _ in range(args.runs)]

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "c.jsonl"
        # The benchmark measures mining, so the blocklist (which may name the repository and
        # would short-circuit all work) is swapped for an empty one.
        empty = Path(tmp) / "no-blocklists"
        empty.mkdir()
        cfg = Path(tmp) / "bench.yaml"
        cfg.write_text(f"blocklist:\n  dir: {empty}\n")
        mine_cmd = [
            str(SWE_FORGE),
            "--config",
            str(cfg),
            "mine",
            str(repo),
            "-o",
            str(out),
            "--json",
            "-q",
        ]
        if args.branch != "HEAD":
            mine_cmd += ["--branch", args.branch]
        cold, warm = [], []
        summary: dict[str, object] = {}
        for i in range(args.runs):
            env = dict(os.environ, SWE_FORGE_CACHE=str(Path(tmp) / f"cache-{i}"))
            t, stdout = timed(mine_cmd, env)
            cold.append(t)
            t, stdout = timed(mine_cmd, env)
            warm.append(t)
            summary = json.loads(stdout)
    g = statistics.median(git_times)
    c = statistics.median(cold)
    w = statistics.median(warm)
    scanned = int(summary["commits_scanned"])  # type: ignore[call-overload]
    print(f"repository: {repo}  ({total} commits, {first_parent} on the first-parent chain)")
    print(f"mine found {summary['prs_found']} PRs, {summary['candidates']} candidates")
    print(f"git log --first-parent --name-status: {g:.3f} s  ({first_parent / g:,.0f} commits/s)")
    print(
        f"swe-forge mine, cold licence cache:   {c:.3f} s  ({scanned / c:,.0f} commits/s)  ratio {c / g:.1f}x"
    )
    print(
        f"swe-forge mine, warm licence cache:   {w:.3f} s  ({scanned / w:,.0f} commits/s)  ratio {w / g:.1f}x"
    )
    print(f"target: ratio <= 2.0 -> {'met' if w / g <= 2.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
