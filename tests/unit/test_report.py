"""The funnel per repository, from the records each stage writes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from swe_forge.cli import app
from swe_forge.commands.report import funnel_by_repo, funnel_markdown


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _files(tmp_path: Path) -> list[Path]:
    cands = [
        {"record_type": "candidate", "repo": repo, "instance_id": f"{repo}-{i}"}
        for repo, n in (("a/x", 4), ("b/y", 2))
        for i in range(n)
    ]
    mine_rej = [
        {
            "record_type": "rejection",
            "stage": "mine",
            "repo": "a/x",
            "pr_number": 9,
            "reason": "test_only",
            "instance_id": "a/x-9",
        },
        {
            "record_type": "rejection",
            "stage": "mine",
            "repo": "c/z",
            "pr_number": None,
            "reason": "blocklisted_repo",
        },
    ]
    tasks = [
        {"record_type": "task", "repo": "a/x", "instance_id": "a/x-0"},
        {"record_type": "task", "repo": "a/x", "instance_id": "a/x-1"},
        {"record_type": "task", "repo": "b/y", "instance_id": "b/y-0"},
    ]
    admit_rej = [
        {
            "record_type": "rejection",
            "stage": "admit",
            "repo": "a/x",
            "instance_id": "a/x-2",
            "reason": "build_failed",
        },
        {
            "record_type": "rejection",
            "stage": "admit",
            "repo": "a/x",
            "instance_id": "a/x-3",
            "reason": "no_fail_to_pass",
        },
        {
            "record_type": "rejection",
            "stage": "admit",
            "repo": "b/y",
            "instance_id": "b/y-1",
            "reason": "flaky_test",
        },
    ]
    results = [
        {
            "record_type": "verify_result",
            "instance_id": "a/x-0",
            "model_name_or_path": "gold",
            "status": "resolved",
        },
        {
            "record_type": "verify_result",
            "instance_id": "a/x-1",
            "model_name_or_path": "gold",
            "status": "unresolved",
        },
        {
            "record_type": "verify_result",
            "instance_id": "b/y-0",
            "model_name_or_path": "m",
            "status": "resolved",
        },
    ]
    return [
        _write(tmp_path / name, recs)
        for name, recs in (
            ("candidates.jsonl", cands),
            ("mine-rejected.jsonl", mine_rej),
            ("tasks.jsonl", tasks),
            ("admit-rejected.jsonl", admit_rej),
            ("results.jsonl", results),
        )
    ]


def test_rows_per_repository_and_total(tmp_path: Path) -> None:
    data = funnel_by_repo(_files(tmp_path))
    rows = {r["repo"]: r for r in data["repos"]}
    a = rows["a/x"]
    assert (a["prs"], a["candidates"], a["judged"], a["environments"], a["admitted"]) == (
        5,
        4,
        4,
        3,
        2,
    )
    assert (a["gold_verified"], a["gold_run"]) == (1, 1 + 1)
    assert a["rejected"] == {"build_failed": 1, "no_fail_to_pass": 1}
    assert a["environment_rate"] == 0.75 and a["yield"] == 0.5
    # A model's result is not a gold verification; a blocked repository has no PR row counts.
    assert rows["b/y"]["gold_run"] == 0 and rows["c/z"]["prs"] == 0
    total = data["total"]
    assert (total["candidates"], total["judged"], total["admitted"]) == (6, 6, 3)
    assert total["yield"] == 0.5


def test_markdown_table_and_cli(tmp_path: Path) -> None:
    files = _files(tmp_path)
    text = funnel_markdown(funnel_by_repo(files))
    assert text.splitlines()[0].startswith("| repository |")
    assert (
        "| a/x | 5 | 4 | 4 | 3 (75%) | 2 (50%) | 1/2 | build_failed 1, no_fail_to_pass 1 |" in text
    )
    out = CliRunner().invoke(app, ["report", *map(str, files), "--by-repo", "--markdown"])
    assert out.exit_code == 0 and out.stdout == text
    bad = CliRunner().invoke(app, ["report", *map(str, files), "--markdown"])
    assert bad.exit_code != 0
