"""Judge recorded gate runs again under the current gate policy (no test is run).

Reads an admit run's outputs (tasks and rejections carry the 6 runs' per-test outcomes) and
its candidates (for the test patches), and prints, per decision whose runs are on file, what
the gate says now: admitted or the reason, FAIL_TO_PASS before -> now, flaky tests dropped.
Only the gate is judged again: a task it would now admit still has the later checks
(sufficiency, image audit, calibration, gold verification) ahead of it.

    python scripts/regate.py CANDIDATES TASKS REJECTED [--config FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from swe_forge.admission.admitter import Admitter
from swe_forge.config import load_config
from swe_forge.gates.gate import classify
from swe_forge.gates.runner import RunResult
from swe_forge.jsonl import read_jsonl
from swe_forge.records import read_candidates


def main(argv: list[str] | None = None) -> int:
    """Print one line per decision and a JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("candidates", type=Path)
    ap.add_argument("tasks", type=Path)
    ap.add_argument("rejected", type=Path)
    ap.add_argument("--config", type=Path)
    args = ap.parse_args(argv)
    admitter = Admitter(load_config(args.config))
    cands = {c.instance_id: c for c in read_candidates(args.candidates)}
    decisions: list[tuple[str, str, list[dict[str, Any]], int]] = []
    for t in read_jsonl(args.tasks):
        decisions.append((t["instance_id"], "admitted", t["gates"]["runs"], len(t["FAIL_TO_PASS"])))
    for r in read_jsonl(args.rejected):
        runs = (r.get("extra") or {}).get("runs")
        if runs and all(x["status"] == "ok" for x in runs) and len(runs) > 1:
            decisions.append((r["instance_id"], r["reason"], runs, 0))
    moves: Counter[str] = Counter()
    for iid, was, runs, f2p_was in sorted(decisions):
        cand = cands.get(iid)
        if cand is None:
            continue
        results = [RunResult(**{k: v for k, v in x.items() if k != "tampered"}) for x in runs]
        # The adapter of the candidate's repository judges its own test ids.
        eco = admitter.ecosystem(cand)
        files = eco.test_files(cand.test_patch)
        scope = eco.scope(cand.test_patch, admitter.base_reader(cand))
        settle = getattr(eco.runner(""), "settle", None)
        for r in results if settle is not None else ():
            if r.status == "ok":
                settle(r)  # what the runner now tells from outcomes (crashed binaries)
        v = classify(results, admitter.gate, files, scope)
        now = "admitted" if v.admitted else v.reason
        moves[f"{was} -> {now}"] += 1
        print(
            f"{iid}: {was} -> {now}; FAIL_TO_PASS {f2p_was} -> {len(v.fail_to_pass)}; "
            f"dropped flaky {len(v.dropped_flaky)}; left out of FAIL_TO_PASS "
            f"{len(v.not_fail_to_pass)}"
        )
    print(json.dumps(dict(sorted(moves.items())), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
