"""``swe-forge report``: the funnel from mined PRs to admitted tasks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swe_forge.errors import InputError
from swe_forge.jsonl import read_jsonl
from swe_forge.records.read import KINDS, kind_of

#: The rows a funnel is made of.
_FUNNEL_KINDS = ("candidate", "rejection", "task", "verify_result", "images")


def unique_records(files: list[Path]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record kind, record) of every record in ``files``, each (kind, stage, instance id)
    once."""
    seen: set[tuple[str, str, str]] = set()
    for path in files:
        for lineno, data in enumerate(read_jsonl(path), 1):
            kind = kind_of(data)
            if kind not in _FUNNEL_KINDS:
                raise InputError(
                    f"{path} holds {KINDS[kind]} (line {lineno}): the funnel counts "
                    "candidates, rejections, tasks, verification results and image records",
                    hint="give the files mine, admit and verify wrote (and their --rejected)",
                )
            key = (
                kind,
                # Results of several models for one instance are all kept.
                str(data.get("stage") or data.get("model_name_or_path") or ""),
                str(data.get("instance_id") or data.get("repo")),
            )
            if key not in seen:
                seen.add(key)
                yield kind, data


def funnel(files: list[Path]) -> dict[str, Any]:
    """Count records of every kind across files, and rejection reasons per stage.

    Stages: PRs mined (candidates + PR-level mining rejections), candidates, tasks admitted.
    A record seen twice (same kind and instance id) is counted once. ``test_strength``: the
    distribution of the admitted tasks' scores (:class:`StrengthTally`).
    """
    candidates = 0
    tasks = 0
    rejected: dict[str, Counter[str]] = {"mine": Counter(), "admit": Counter()}
    repos_blocked = 0
    strength = StrengthTally()
    for kind, data in unique_records(files):
        if kind == "candidate":
            candidates += 1
        elif kind == "task":
            tasks += 1
            strength.add(data)
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
        "test_strength": strength.to_dict(),
    }


#: The bins of the test-strength line, in order.
STRENGTH_BINS = ("1.0", "[0.5,1)", "<0.5", "unmeasured")


class StrengthTally:
    """The distribution of admitted tasks' test-strength scores (``audit.test_strength``):
    how many score 1.0, at least 0.5, under 0.5, or were not measured (no block, or no
    mutant killed or survived), and how many have at least one surviving mutant."""

    def __init__(self) -> None:
        self.bins: Counter[str] = Counter({b: 0 for b in STRENGTH_BINS})
        self.with_survivors = 0

    def add(self, task: dict[str, Any]) -> None:
        """Count one task record (plain data)."""
        audit = task.get("audit")
        block = audit.get("test_strength") if isinstance(audit, dict) else None
        block = block if isinstance(block, dict) else {}
        score = block.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            self.bins["unmeasured"] += 1
        elif score >= 1.0:
            self.bins["1.0"] += 1
        elif score >= 0.5:
            self.bins["[0.5,1)"] += 1
        else:
            self.bins["<0.5"] += 1
        survived = block.get("survived")
        if isinstance(survived, int) and not isinstance(survived, bool) and survived > 0:
            self.with_survivors += 1

    def to_dict(self) -> dict[str, Any]:
        """``{"scores": {bin: tasks}, "with_survivors": tasks}``."""
        return {
            "scores": {b: self.bins[b] for b in STRENGTH_BINS},
            "with_survivors": self.with_survivors,
        }


def strength_line(tally: dict[str, Any]) -> str:
    """The one-line histogram of :meth:`StrengthTally.to_dict`."""
    scores = tally["scores"]
    bins = ", ".join(f"{b}: {scores[b]}" for b in STRENGTH_BINS)
    return f"test strength of admitted tasks: {bins}; >=1 survivor: {tally['with_survivors']}"


#: Admission rejections that mean the candidate got no environment.
NO_ENVIRONMENT = frozenset({"build_failed"})


def funnel_by_repo(files: list[Path]) -> dict[str, Any]:
    """The funnel per repository: PRs, candidates, environments, admitted, gold verified.

    Environments are the candidates admission judged minus those whose images failed to build
    (``build_failed``); gold verified counts ``verify_result`` records of model ``gold`` that
    resolved (files from ``verify --gold``), matched to repositories through the tasks.
    Rows are sorted by repository; a ``total`` row sums them.
    """
    rows: dict[str, dict[str, Any]] = {}
    task_repo: dict[str, str] = {}
    results: list[dict[str, Any]] = []

    def row(repo: str) -> dict[str, Any]:
        return rows.setdefault(
            repo,
            {
                "repo": repo,
                "prs": 0,
                "candidates": 0,
                "judged": 0,
                "environments": 0,
                "admitted": 0,
                "gold_verified": 0,
                "gold_run": 0,
                "rejected": Counter(),
            },
        )

    for kind, data in unique_records(files):
        repo = str(data.get("repo") or "")
        if kind == "verify_result":
            results.append(data)
            continue
        if kind == "candidate":
            row(repo)["candidates"] += 1
            row(repo)["prs"] += 1
        elif kind == "task":
            task_repo[str(data.get("instance_id"))] = repo
            r = row(repo)
            r["admitted"] += 1
            r["judged"] += 1
            r["environments"] += 1
        elif kind == "rejection":
            stage = str(data.get("stage", "mine"))
            reason = str(data.get("reason"))
            r = row(repo)
            if stage == "mine":
                if data.get("pr_number") is not None:
                    r["prs"] += 1
                continue
            r["judged"] += 1
            r["rejected"][reason] += 1
            if reason not in NO_ENVIRONMENT:
                r["environments"] += 1
    for res in results:
        if str(res.get("model_name_or_path")) != "gold":
            continue
        owner = task_repo.get(str(res.get("instance_id")))
        if owner is None:
            continue
        rows[owner]["gold_run"] += 1
        rows[owner]["gold_verified"] += int(res.get("status") == "resolved")
    out = [rows[k] for k in sorted(rows)]
    total = row_total(out)
    for r in [*out, total]:
        r["rejected"] = dict(sorted(r["rejected"].items(), key=lambda kv: (-kv[1], kv[0])))
        judged = r["judged"]
        r["environment_rate"] = round(r["environments"] / judged, 4) if judged else 0.0
        r["yield"] = round(r["admitted"] / judged, 4) if judged else 0.0
    return {"schema_version": 1, "repos": out, "total": total}


def row_total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The sum of per-repository rows."""
    total: dict[str, Any] = {"repo": "total", "rejected": Counter()}
    for key in (
        "prs",
        "candidates",
        "judged",
        "environments",
        "admitted",
        "gold_verified",
        "gold_run",
    ):
        total[key] = sum(int(r[key]) for r in rows)
    for r in rows:
        total["rejected"].update(r["rejected"])
    return total


def funnel_markdown(data: dict[str, Any]) -> str:
    """``funnel_by_repo``'s table as GitHub Markdown (what README's funnel table is made of)."""
    lines = [
        "| repository | PRs | candidates | judged | environment | admitted (yield) "
        "| gold 1.0 | rejections |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in [*data["repos"], data["total"]]:
        name = f"**{r['repo']}**" if r["repo"] == "total" else r["repo"]
        reasons = ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "-"
        gold = f"{r['gold_verified']}/{r['gold_run']}" if r["gold_run"] else "-"
        lines.append(
            f"| {name} | {r['prs']} | {r['candidates']} | {r['judged']} "
            f"| {r['environments']} ({r['environment_rate']:.0%}) "
            f"| {r['admitted']} ({r['yield']:.0%}) | {gold} | {reasons} |"
        )
    return "\n".join(lines) + "\n"
