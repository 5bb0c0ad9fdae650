#!/usr/bin/env python3
"""Measure the funnel on real projects: mine, sample, build images, admit, verify the gold patches.

Usage:
    scripts/funnel.py OUT_DIR SOURCE [SOURCE ...] [--newest 4] [--older 2] [--instance ID ...]

Each SOURCE is ``PATH[=owner/name]``: a local clone or bare mirror of a project, with the
``owner/name`` to record for it. Per project, in ``OUT_DIR/<name>/``: ``candidates.jsonl`` and
``rejected.jsonl`` (mine), ``sample.jsonl`` (the sampled candidates), ``images.jsonl``,
``tasks.jsonl`` and ``admit-rejected.jsonl`` (admit), ``results.jsonl`` (``verify --gold``). At the
end, ``OUT_DIR/funnel.md`` is ``swe-forge report --by-repo --markdown`` over every project.

The sample is deterministic: candidates ordered by merge date (then PR number); the ``--newest``
last ones, plus ``--older`` ones spread evenly through the rest (for 2: a third and two thirds of
the way through the history). Every step resumes: a project whose output exists is not redone,
so the script can be killed and started again. ``--images-only`` stops after the images;
``--readmit`` admits and verifies again from scratch on the images already built (after a
change to the judge, whose tasks must be admitted again). ``--instance`` limits images/admit/verify to the
given instance ids (to look again at a few rejections).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SF = str(ROOT / ".venv" / "bin" / "swe-forge")


def _run(args: list[str], log: Path) -> int:
    """Run one swe-forge step, its output appended to ``log``; return its exit status."""
    start = time.monotonic()
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(args)}\n")
        fh.flush()
        rc = subprocess.run(args, stdout=fh, stderr=subprocess.STDOUT, check=False).returncode
    print(f"    {' '.join(args[1:3])}: exit {rc} in {time.monotonic() - start:.0f} s", flush=True)
    return rc


def sample(candidates: list[dict], newest: int, older: int) -> list[dict]:
    """The ``newest`` most recent candidates plus ``older`` ones evenly spread through the rest."""
    ordered = sorted(candidates, key=lambda c: (c["created_at"], c["provenance"]["pr_number"]))
    head, tail = ordered[: max(0, len(ordered) - newest)], ordered[-newest:] if newest else []
    picks = []
    for i in range(1, older + 1):
        if not head:
            break
        idx = min(len(head) - 1, (len(head) * i) // (older + 1))
        if head[idx] not in picks:
            picks.append(head[idx])
    return picks + tail


def main() -> int:
    """Run the funnel for every source and print the per-project table."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--newest", type=int, default=4)
    ap.add_argument("--older", type=int, default=2)
    ap.add_argument("--instance", action="append", default=[])
    ap.add_argument(
        "--images-only", action="store_true", help="stop after the images (admit at another commit)"
    )
    ap.add_argument(
        "--readmit",
        action="store_true",
        help="admit again from scratch (admit --restart) and verify again, reusing the images",
    )
    ns = ap.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    for spec in ns.sources:
        path, _, name = spec.partition("=")
        name = name or Path(path).resolve().name
        proj = ns.out / name.replace("/", "__")
        proj.mkdir(parents=True, exist_ok=True)
        log = proj / "log.txt"
        print(f"==> {name}", flush=True)
        cands, sample_file = proj / "candidates.jsonl", proj / "sample.jsonl"
        if not cands.exists():
            listing = proj / "source.txt"
            listing.write_text(
                f"{Path(path).resolve()} {name}\n" if "=" in spec else f"{Path(path).resolve()}\n"
            )
            if _run(
                [
                    SF,
                    "mine",
                    str(listing),
                    "-o",
                    str(cands),
                    "--rejected",
                    str(proj / "rejected.jsonl"),
                    "-q",
                ],
                log,
            ):
                continue
        if not sample_file.exists():
            rows = [json.loads(line) for line in cands.read_text().splitlines() if line.strip()]
            picked = sample(rows, ns.newest, ns.older)
            sample_file.write_text("".join(json.dumps(c, sort_keys=True) + "\n" for c in picked))
        only = [a for i in ns.instance for a in ("--instance", i)]
        images = proj / "images.jsonl"
        if only or not images.exists():
            _run([SF, "images", "build", str(sample_file), "-o", str(images), *only], log)
        if ns.images_only:
            continue
        tasks, rejected = proj / "tasks.jsonl", proj / "admit-rejected.jsonl"
        _run(
            [
                SF,
                "admit",
                str(sample_file),
                "--images",
                str(images),
                "-o",
                str(tasks),
                "--rejected",
                str(rejected),
                "-q",
                *only,
                *(["--restart"] if ns.readmit else []),
            ],
            log,
        )
        results = proj / "results.jsonl"
        if tasks.exists() and tasks.read_text().strip():
            _run(
                [
                    SF,
                    "verify",
                    "--tasks",
                    str(tasks),
                    "--gold",
                    "-o",
                    str(results),
                    "--report",
                    str(proj / "report.json"),
                ],
                log,
            )
        files += [str(sample_file), str(tasks), str(rejected)] + (
            [str(results)] if results.exists() else []
        )
    table = subprocess.run(
        [SF, "report", *[f for f in files if Path(f).exists()], "--by-repo", "--markdown"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    (ns.out / "funnel.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
