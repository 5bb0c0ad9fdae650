#!/usr/bin/env python3
"""Benchmark: `swe-forge mine` against `git log --first-parent --name-status` on one repository.

Both run in this process's run, on the same repository, several times; the medians are
compared. Mining is measured cold (empty licence cache) and warm (cache filled by an earlier
run), as a fresh CI job and a re-run would see it, with one worker per CPU and with one.
Prints commits scanned per second and the ratio mine / git (the target is <= 2.0), next to two
floors measured in the same run: the CLI's start-up alone, and git printing the patch text of
the candidates mine found (what mine must emit on top of what git log prints).

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


def timed(
    cmd: list[str], env: dict[str, str] | None = None, stdin: bytes | None = None
) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, input=stdin, check=False)
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
        base_cmd = [str(SWE_FORGE), "--config", str(cfg), "mine", str(repo), "-o", str(out)]
        base_cmd += ["--json", "-q"]
        if args.branch != "HEAD":
            base_cmd += ["--branch", args.branch]
        runs: dict[str, list[float]] = {"cold": [], "warm": [], "jobs1": []}
        summary: dict[str, object] = {}
        same_output = True
        for i in range(args.runs):
            env = dict(os.environ, SWE_FORGE_CACHE=str(Path(tmp) / f"cache-{i}"))
            t, stdout = timed(base_cmd, env)
            runs["cold"].append(t)
            t, stdout = timed(base_cmd, env)
            runs["warm"].append(t)
            summary = json.loads(stdout)
            parallel_out = out.read_bytes()
            t, _ = timed([*base_cmd, "--jobs", "1"], env)
            runs["jobs1"].append(t)
            # Workers must not change a byte of the output.
            same_output = same_output and out.read_bytes() == parallel_out
        # Floors: what any run of mine pays before it reads a commit (interpreter and CLI
        # start-up), and what git itself needs to print the patch text mine must emit (the
        # candidates' diffs against their first parents).
        startup = [timed([str(SWE_FORGE), "--version"])[0] for _ in range(args.runs)]
        merges = "".join(
            json.loads(line)["provenance"]["merge_commit"] + "\n"
            for line in out.read_text().splitlines()
        ).encode()
        patch_cmd = ["git", f"--git-dir={git_dir}", "diff-tree", "--stdin", "-p", "-M"]
        patch_cmd += ["--no-commit-id", "-m", "--first-parent", "--no-ext-diff", "--no-textconv"]
        patch_times = [timed(patch_cmd, stdin=merges)[0] for _ in range(args.runs)]
    g = statistics.median(git_times)
    scanned = int(summary["commits_scanned"])  # type: ignore[call-overload]
    print(f"repository: {repo}  ({total} commits, {first_parent} on the first-parent chain)")
    print(f"mine found {summary['prs_found']} PRs, {summary['candidates']} candidates")
    print(f"CPUs: {os.cpu_count()}; medians of {args.runs} runs; ratio = time / git log's time")

    def row(label: str, seconds: float, commits: int | None = None) -> None:
        rate = f"  ({commits / seconds:,.0f} commits/s)" if commits else ""
        print(f"  {label:<52} {seconds:7.3f} s  ratio {seconds / g:5.1f}x{rate}")

    row("git log --first-parent --name-status (baseline)", g, first_parent)
    row("floor: swe-forge --version (start-up only)", statistics.median(startup))
    row("floor: git diff-tree -p of the candidates' merges", statistics.median(patch_times))
    row("swe-forge mine --jobs 1, warm licence cache", statistics.median(runs["jobs1"]), scanned)
    row("swe-forge mine (one worker per CPU), cold cache", statistics.median(runs["cold"]), scanned)
    row("swe-forge mine (one worker per CPU), warm cache", statistics.median(runs["warm"]), scanned)
    print(f"output with --jobs 1 identical to the default's: {'yes' if same_output else 'NO'}")
    w = statistics.median(runs["warm"])
    # What git itself needs for the same information: the log plus the candidates' diffs.
    floor = g + statistics.median(patch_times)
    print(f"mine (warm) / (git log + git diff-tree -p of the candidates): {w / floor:.2f}x")
    print(f"target: ratio <= 2.0 -> {'met' if w / g <= 2.0 else 'NOT met'} ({w / g:.1f}x)")


if __name__ == "__main__":
    main()
