#!/usr/bin/env python3
"""The fault matrix: each command under each fault, with the exit code observed.

Usage:
    scripts/fault_matrix.py [--tasks TASKS.jsonl] [--docker] [--out docs/fault-matrix.md]

Faults: an output on a read-only file system, an output on a full disk (a tmpfs of one
page), SIGTERM while it works, SIGKILL while it works and the same command run again, a second
run on the same output while the first holds it, and a wrong kind of input file. Commands:
``mine``, ``run --until mine``, ``report``, ``example create`` and, with ``--tasks`` (an
admitted tasks file, e.g. the quickstart's), ``export``; with ``--docker`` (a Docker engine; a
few minutes) also ``admit`` of two of the example's candidates and ``verify --out`` of their
gold patches, signalled mid-work (after 15 s), with the judge containers left behind counted.
Each cell says the exit code seen and whether anything was lost or done twice (the output
compared with a clean run's: records byte for byte, and for admit and verify the decisions,
since timings differ from run to run). The file systems are real tmpfs mounts: run it as root.
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


#: The pid of the last process :func:`interrupted` signalled (whose containers are counted).
LAST: list[int] = [0]


def interrupted(args: list[str], sig: int, after: float) -> int:
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    LAST[0] = proc.pid
    time.sleep(after)
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(timeout=300)


def same(a: Path, b: Path) -> bool:
    """Same records (the order and bytes of JSON Lines; a folder: its results)."""
    if a.is_dir():
        return all(same(a / n, b / n) for n in ("candidates.jsonl",) if (a / n).exists())
    return a.exists() and b.exists() and a.read_bytes() == b.read_bytes()


def decisions(path: Path) -> list[tuple[str, str]] | None:
    """What a file of tasks, rejections or verify results decided, one entry per record (a
    record written twice shows twice): (id, kind or status and reward)."""
    if not path.exists():
        return None
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        key = str(rec.get("instance_id")) + " " + str(rec.get("model_name_or_path", ""))
        what = rec.get("status") or rec.get("reason") or rec.get("record_type")
        out.append((key.strip(), f"{what} {rec.get('reward', '')}".strip()))
    return sorted(out)


def same_decisions(files: Callable[[Path], list[Path]], a: Path, b: Path) -> bool:
    """The same decisions, each once (nothing lost, nothing done twice)."""
    got = [decisions(f) for f in files(b)]
    return all(x is not None for x in got) and [decisions(f) for f in files(a)] == got


def judges() -> int:
    """Containers the last signalled process made that are still on the engine (what a
    killed run may leave; other runs' containers on the same engine are not counted)."""
    out = sh(
        [
            "docker",
            "ps",
            "-a",
            "--filter",
            "label=org.swe-forge.owner",
            "--format",
            '{{.Label "org.swe-forge.owner"}}',
        ]
    )
    return sum(1 for owner in out.stdout.split() if f":{LAST[0]}:" in owner)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=Path, help="an admitted tasks file (for export)")
    ap.add_argument("--docker", action="store_true", help="admit and verify too (Docker)")
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
        # Commands whose output is a folder; the Docker ones: their signal delay and what of
        # their output holds the decisions.
        folders = {"run --until mine", "example create", "verify --out"}
        slow: dict[str, Callable[[Path], list[Path]]] = {}
        gold_tasks = work / "gold-tasks.jsonl"
        if ns.docker:
            two = work / "two.jsonl"
            wanted = {f"swe-forge__textkit-{n}" for n in (1, 3)}
            two.write_text(
                "".join(
                    line + "\n"
                    for line in cands.read_text().splitlines()
                    if json.loads(line)["instance_id"] in wanted
                )
            )
            sh([*SF, "admit", str(two), "-o", str(gold_tasks)])
            commands["admit"] = (
                lambda o: [*SF, "admit", str(two), "-o", str(o)],
                [*SF, "admit", str(gold_tasks), "-o", str(work / "w2.jsonl")],
            )
            commands["verify --out"] = (
                lambda o: [*SF, "verify", "--tasks", str(gold_tasks), "--gold", "--out", str(o)],
                [*SF, "verify", "--tasks", str(cands), "--gold", "--out", str(work / "w3")],
            )
            slow["admit"] = lambda o: [o, o.with_name(o.name + "-rejected.jsonl")]
            slow["verify --out"] = lambda o: [o / "results.jsonl"]
        tasks = ns.tasks or (gold_tasks if ns.docker else None)
        if tasks:
            commands["export"] = (
                lambda o: [*SF, "export", str(tasks), "-o", str(o)],
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
            # Mid-work: admission of two candidates takes about a minute, grading their gold
            # patches about ten seconds (the first judge starts after 2-3 s).
            delay = {"admit": 15.0, "verify --out": 5.0}.get(name, 0.8)
            target = work / f"term-{len(rows)}"
            code = interrupted(argv(target), signal.SIGTERM, delay)
            cells["SIGTERM"] = f"{code}" + (" (had finished)" if code == ok.returncode else "")
            if name in slow:
                cells["SIGTERM"] += f", {judges()} container(s) left"
            target = work / f"kill-{len(rows)}"
            interrupted(argv(target), signal.SIGKILL, delay)
            left = judges() if name in slow else 0
            again = sh(argv(target))
            if name in slow:
                equal = same_decisions(slow[name], reference, target)
            else:
                equal = ok.returncode != 0 or same(reference, target)
            cells["SIGKILL, run again"] = f"{again.returncode}, " + (
                "same output" if equal else "OUTPUT DIFFERS"
            )
            if name in slow:
                cells["SIGKILL, run again"] += (
                    f" ({left} container(s) after the kill, {judges()} after the rerun)"
                )
            held = work / f"held-{len(rows)}"
            if name in folders:
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
