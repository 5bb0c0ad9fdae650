"""``swe-forge report``: the funnel from mined PRs to admitted tasks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from swe_forge.jsonl import read_jsonl


def funnel(files: list[Path]) -> dict[str, Any]:
    """Count records of every kind across files, and rejection reasons per stage.

    Stages: PRs mined (candidates + PR-level mining rejections), candidates, tasks admitted.
    A record seen twice (same kind and instance id) is counted once.
    """
    seen: set[tuple[str, str, str]] = set()
    candidates = 0
    tasks = 0
    rejected: dict[str, Counter[str]] = {"mine": Counter(), "admit": Counter()}
    repos_blocked = 0
    for path in files:
        for data in read_jsonl(path):
            kind = str(data.get("record_type", "candidate"))
            key = (
                kind,
                str(data.get("stage", "")),
                str(data.get("instance_id") or data.get("repo")),
            )
            if key in seen:
                continue
            seen.add(key)
            if kind == "candidate":
                candidates += 1
            elif kind == "task":
                tasks += 1
            elif kind == "rejection":
                stage = str(data.get("stage", "mine"))
                if data.get("pr_number") is None and stage == "mine":
                    repos_blocked += 1
                rejected.setdefault(stage, Counter())[str(data.get("reason"))] += 1
    mine_pr_rejections = sum(rejected["mine"].values()) - repos_blocked
    admit_seen = tasks + sum(rejected["admit"].values())
    stages = [
        {
            "stage": "PRs mined",
            "count": candidates + mine_pr_rejections,
            "rejected": dict(sorted(rejected["mine"].items())),
        },
        {
            "stage": "candidates",
            "count": candidates,
            "rejected": dict(sorted(rejected["admit"].items())),
        },
        {"stage": "admitted", "count": tasks, "rejected": {}},
    ]
    return {
        "schema_version": 1,
        "stages": stages,
        "prs": candidates + mine_pr_rejections,
        "candidates": candidates,
        "candidates_judged": admit_seen,
        "admitted": tasks,
        "yield": round(tasks / admit_seen, 4) if admit_seen else 0.0,
        "repos_blocklisted": repos_blocked,
    }
