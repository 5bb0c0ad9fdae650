"""`mine` on the embedded example returns exactly what its expectation file lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.example import create_example, load_expectations
from swe_forge.mining.miner import MineOptions


@pytest.fixture(scope="module")
def mined(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[int, dict[str, object]], dict[int, dict[str, object]], Path]:
    root = tmp_path_factory.mktemp("example")
    info = create_example(root / "textkit")
    out, rej = root / "c.jsonl", root / "r.jsonl"
    run_mine([str(info.path)], out, config=load_config(), options=MineOptions(), rejected=rej)
    cands = {
        json.loads(x)["provenance"]["pr_number"]: json.loads(x)
        for x in out.read_text().splitlines()
    }
    rejs = {json.loads(x)["pr_number"]: json.loads(x) for x in rej.read_text().splitlines()}
    return cands, rejs, out


def test_candidates_are_exactly_the_expected_ones(
    mined: tuple[dict[int, dict[str, object]], dict[int, dict[str, object]], Path],
) -> None:
    cands, rejs, _ = mined
    expected = load_expectations()
    want_cands = {pr["number"] for pr in expected["prs"] if pr["mine"]["candidate"]}
    want_rejs = {
        pr["number"]: pr["mine"]["reason"] for pr in expected["prs"] if not pr["mine"]["candidate"]
    }
    assert set(cands) == want_cands
    assert {n: r["reason"] for n, r in rejs.items()} == want_rejs
    for n, c in cands.items():
        assert c["instance_id"] == f"{expected['instance_prefix']}-{n}"
        assert c["repo"] == expected["repo"]


def test_candidate_fields(
    mined: tuple[dict[int, dict[str, object]], dict[int, dict[str, object]], Path],
) -> None:
    cands, _, _ = mined
    expected = {pr["number"]: pr for pr in load_expectations()["prs"]}
    for n, c in cands.items():
        assert c["schema_version"] == 1 and c["record_type"] == "candidate"
        assert str(c["problem_statement"]).startswith(expected[n]["title"])
        assert c["license"]["allowed"] and c["license"]["expression"] == "MIT"  # type: ignore[index]
        prov = c["provenance"]
        assert prov["problem_statement_source"] == "commit_message"  # type: ignore[index]
        assert prov["tool_version"] and len(prov["config_hash"]) == 64  # type: ignore[index]
        assert all(p.startswith("tests/") for p in c["files"]["test_files"])  # type: ignore[index]
        assert "diff --git a/tests/" not in str(c["patch"])
        assert str(c["test_patch"]).startswith("diff --git a/tests/")
        # Every F2P test named by the expectation file lives in a file of the test patch.
        for test_id in expected[n].get("admit", {}).get("FAIL_TO_PASS", []):
            assert test_id.split("::")[0] in c["files"]["test_files"]  # type: ignore[index]
