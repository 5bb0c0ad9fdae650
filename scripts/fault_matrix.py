#!/usr/bin/env python3
"""The fault matrix: each command under each fault, with the exit code observed.

Usage:
    scripts/fault_matrix.py [--tasks TASKS.jsonl] [--out docs/fault-matrix.md]

Faults: an output on a read-only file system, an output on a full disk (a tmpfs of one
page), SIGTERM while it works, SIGKILL while it works and the same command run again, a second
run on the same output while the first holds it, and a wrong kind of input file. Commands:
``mine``, ``run --until mine``, ``report``, ``example create`` and, with ``--tasks`` (an
admitted tasks file, e.g. the quickstart's), ``export``. Each cell says the exit code seen and
whether anything was lost or done twice (the output compared with a clean run's). The file
systems are real tmpfs mounts: run it as root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SF = [str(ROOT / ".venv" / "bin" / "python"), "-m", "swe_forge"]
EXPECTED = {"read-only": 17, "full disk": 17, "SIGTERM": 143, "concurrent": 18, "wrong input": 4}


def sh(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload, no-any-return]


def mount(where: Path, options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    sh(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)]).check_returncode()


def interrupted(args: list[str], sig: int, after: float) -> int:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(after)
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(timeout=300)


def same(a: Path, b: Path) -> bool:
    """Same records (the order and bytes of JSON Lines; a folder: its results)."""
    if a.is_dir():
        return all(same(a / n, b / n) for n in ("candidates.jsonl",) if (a / n).exists())
    return a.exists() and b.exists() and a.read_bytes() == b.read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=Path, help="an admitted tasks file (for export)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "fault-matrix.md")
    ns = ap.parse_args()
    if os.geteuid() != 0:
        print("run as root: the faults are real tmpfs mounts", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="swe-forge-faults-"))
    mounts: list[Path] = []
    try:
        repo = work / "repo"
        sh([*SF, "example", "create", str(repo)]).check_returncode()
        cands = work / "candidates.jsonl"
        sh([*SF, "mine", str(repo), "-o", str(cands), "-q"]).check_returncode()
        listing = work / "repos.txt"
        listing.write_text(f"{repo} swe-forge/textkit\n")
        wrong = work / "wrong.jsonl"
        wrong.write_text(json.dumps({"instance_id": "x", "model_patch": ""}) + "\n")
        # name -> (argv for an output path, the input it reads, a wrong input in its place)
        commands: dict[str, tuple[Callable[[Path], list[str]], list[str] | None]] = {
            "mine": (lambda o: [*SF, "mine", str(repo), "-o", str(o), "-q"], None),
            "run --until mine": (
                lambda o: [*SF, "run", str(listing), "--out", str(o), "--until", "mine", "-q"],
                None,
            ),
            "report --html": (
                lambda o: [*SF, "report", str(cands), "--html", str(o)],
                [*SF, "report", str(wrong)],
            ),
            "example create": (lambda o: [*SF, "example", "create", str(o)], None),
        }
        if ns.tasks:
            commands["export"] = (
                lambda o: [*SF, "export", str(ns.tasks), "-o", str(o)],
                [*SF, "export", str(cands), "-o", str(work / "w.jsonl")],
            )
        rows = []
        for name, (argv, wrong_argv) in commands.items():
            cells: dict[str, str] = {}
            clean = work / f"clean-{len(rows)}"
            ok = sh(
                argv(clean / "out" if name in ("run --until mine", "example create") else clean)
            )
            reference = clean / "out" if name in ("run --until mine", "example create") else clean
            ro = work / f"ro-{len(rows)}"
            mount(ro, "ro,size=1m")
            mounts.append(ro)
            got = sh(argv(ro / "out"))
            cells["read-only"] = f"{got.returncode}"
            full = work / f"full-{len(rows)}"
            mount(full, "size=4k")
            mounts.append(full)
            got = sh(argv(full / "out"))
            leftovers = [p.name for p in full.rglob("*.tmp")]
            cells["full disk"] = f"{got.returncode}" + (f" (left {leftovers})" if leftovers else "")
            target = work / f"term-{len(rows)}"
            code = interrupted(argv(target), signal.SIGTERM, 0.8)
            cells["SIGTERM"] = f"{code}" + (" (had finished)" if code == 0 else "")
            target = work / f"kill-{len(rows)}"
            interrupted(argv(target), signal.SIGKILL, 0.8)
            again = sh(argv(target))
            equal = ok.returncode != 0 or same(reference, target)
            cells["SIGKILL, run again"] = f"{again.returncode}, " + (
                "same output" if equal else "OUTPUT DIFFERS"
            )
            held = work / f"held-{len(rows)}"
            if name in ("run --until mine", "example create"):
                held.mkdir()
            holder = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys,time; from pathlib import Path; from swe_forge.locks import "
                    "hold_output; hold_output(Path(sys.argv[1])); print('held', flush=True); "
                    "time.sleep(60)",
                    str(held),
                ],
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            assert holder.stdout is not None
            holder.stdout.readline()
            got = sh(argv(held))
            holder.kill()
            holder.wait()
            cells["concurrent"] = f"{got.returncode}"
            cells["wrong input"] = f"{sh(wrong_argv).returncode}" if wrong_argv else "n/a"
            rows.append((name, ok.returncode, cells))
            print(name, ok.returncode, cells, flush=True)
        faults = [
            "read-only",
            "full disk",
            "SIGTERM",
            "SIGKILL, run again",
            "concurrent",
            "wrong input",
        ]
        lines = [
            "# Fault matrix",
            "",
            "Made by `scripts/fault_matrix.py` (each command under each fault, real tmpfs mounts;",
            "expected: read-only and full disk 17, SIGTERM 143, concurrent run 18, wrong input 4;",
            "after SIGKILL the same command run again finishes with the same output as a clean run).",
            "",
            "| command | clean run | " + " | ".join(faults) + " |",
            "|---|---:|" + "---|" * len(faults),
        ]
        for name, clean_rc, cells in rows:
            lines.append(
                f"| `{name}` | {clean_rc} | " + " | ".join(cells[f] for f in faults) + " |"
            )
        ns.out.write_text("\n".join(lines) + "\n")
        print(f"-> {ns.out}")
        return 0
    finally:
        for m in reversed(mounts):
            subprocess.run(["umount", str(m)], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
