"""Parquet datasets: a round trip gives the same records, shards load together with
Hugging Face `datasets` (offline), and the export command and its errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest

from swe_forge.commands.export import run_export_parquet
from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.errors import InputError, RemoteError, UsageError
from swe_forge.example import create_example
from swe_forge.mining.miner import MineOptions
from swe_forge.parquet import arrow_schema, push_to_hub, read_parquet, write_parquet
from swe_forge.records import RECORD_TYPES, Candidate, Record, Rejection, read_records
from tests import record_samples as samples


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The example's candidates and mine rejections (real files of `swe-forge mine`)."""
    root = tmp_path_factory.mktemp("example")
    info = create_example(root / "textkit")
    cands, rejs = root / "candidates.jsonl", root / "rejected.jsonl"
    run_mine([str(info.path)], cands, config=load_config(), options=MineOptions(), rejected=rejs)
    return cands, rejs


def tasks() -> list[Record]:
    """Tasks whose free-form blocks differ in shape from one to the next."""
    first = samples.task()
    second = samples.task(instance_id="o__r-8", PASS_TO_PASS=[], audit={}, gates={"runs": []})
    return [RECORD_TYPES["task"].from_dict(d) for d in (first, second)]


def results() -> list[Record]:
    """Results with and without violations, test maps and timings."""
    resolved = samples.result(
        status="resolved",
        reward=1.0,
        violations=[],
        fail_to_pass={"tests/test_a.py::test_x": "passed"},
        pass_to_pass={"tests/test_a.py::test_old": "passed"},
    )
    infra = samples.result(
        model_name_or_path="m",
        status="infra_error",
        violations=[],
        tests={},
        fail_to_pass={},
        timings={},
        verifier={},
        attempts=3,
    )
    return [RECORD_TYPES["verify_result"].from_dict(d) for d in (samples.result(), resolved, infra)]


def test_round_trip_gives_the_same_records(mined: tuple[Path, Path], tmp_path: Path) -> None:
    kind_c, cands = read_records(mined[0])
    kind_r, rejs = read_records(mined[1])
    assert (kind_c, kind_r) == ("candidate", "rejection") and cands and rejs
    # The example's rejections are per PR; a repository-level one has nulls where they have ids.
    rejs.append(Rejection("mine", "o/r", "blocklisted_repo", "a benchmark's repository"))
    for records in (cands, rejs, tasks(), results()):
        path = tmp_path / f"{records[0].record_type}.parquet"
        assert write_parquet(path, records) == len(records)
        back = read_parquet(path)
        assert back == records
        assert [r.to_json() for r in back] == [r.to_json() for r in records]
        # Deterministic: the same records give the same bytes.
        again = tmp_path / "again.parquet"
        write_parquet(again, records)
        assert again.read_bytes() == path.read_bytes()


def test_the_columns_are_declared_not_inferred(tmp_path: Path) -> None:
    result = RECORD_TYPES["verify_result"].from_dict(samples.result())
    path = tmp_path / "r.parquet"
    write_parquet(path, [result])
    schema = pq.read_schema(path)
    assert schema.equals(arrow_schema("verify_result"))
    assert json.loads(schema.metadata[b"swe_forge"]) == {
        "record_type": "verify_result",
        "schema_version": 3,
    }
    assert str(schema.field("tests").type.value_type) == (
        "struct<test: string not null, outcome: string not null>"
    )
    table = pq.read_table(path)
    assert table.column("tests").to_pylist()[0] == [
        {"test": "tests/test_a.py::test_x", "outcome": "failed"},
        {"test": "tests/test_a.py::test_y[a b-ü]", "outcome": "passed"},
    ]
    assert json.loads(table.column("verifier").to_pylist()[0]) == samples.result()["verifier"]
    # An empty file of a type still has the type's columns.
    empty = tmp_path / "empty.parquet"
    assert write_parquet(empty, [], "candidate") == 0
    assert pq.read_schema(empty).equals(arrow_schema("candidate"))
    assert read_parquet(empty) == []


def test_shards_load_together_with_datasets(
    mined: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    _, cands = read_records(mined[0])
    cands = [c for c in cands if isinstance(c, Candidate)]
    # Shard a: no statement_quality anywhere (all null); shard b: set; shard c: empty.
    shard_a = [dataclasses.replace(c, statement_quality=None) for c in cands[:2]]
    shard_b = cands[2:]
    files = [tmp_path / "c-a.parquet", tmp_path / "c-empty.parquet", tmp_path / "c-b.parquet"]
    write_parquet(files[0], shard_a)
    write_parquet(files[1], [], "candidate")
    write_parquet(files[2], shard_b)
    cache = str(tmp_path / "cache")
    ds = datasets.load_dataset(
        "parquet", data_files=[str(f) for f in files], split="train", cache_dir=cache
    )
    assert ds.num_rows == len(cands)
    assert ds["instance_id"] == [c.instance_id for c in cands]
    assert ds[0]["statement_quality"] is None
    sq = shard_b[0].statement_quality
    assert sq is not None and ds[2]["statement_quality"]["score"] == sq.score
    assert ds[2]["license"]["evidence"][0]["spdx"] == shard_b[0].license.evidence[0].spdx

    # Results: violations and test maps empty in one shard, full in the other.
    full, resolved, infra = results()
    write_parquet(tmp_path / "r-1.parquet", [infra])
    write_parquet(tmp_path / "r-2.parquet", [full, resolved])
    ds = datasets.load_dataset(
        "parquet",
        data_files=[str(tmp_path / "r-1.parquet"), str(tmp_path / "r-2.parquet")],
        split="train",
        cache_dir=cache,
    )
    assert ds.num_rows == 3
    assert ds["status"] == ["infra_error", "invalid_patch", "resolved"]
    assert ds[0]["violations"] == [] and ds[0]["tests"] == [] and ds[0]["verifier"] == "{}"
    assert ds[1]["violations"][0] == {
        "code": "test_file",
        "detail": samples.result()["violations"][0]["detail"],
    }
    assert ds[2]["fail_to_pass"] == [{"test": "tests/test_a.py::test_x", "outcome": "passed"}]
    assert json.loads(ds[1]["verifier"]) == samples.result()["verifier"]

    # Rejections: ids null in one shard (repository level), set in the other.
    _, rejs = read_records(mined[1])
    write_parquet(tmp_path / "j-1.parquet", [Rejection("mine", "o/r", "blocklisted_repo", "x")])
    write_parquet(tmp_path / "j-2.parquet", rejs)
    ds = datasets.load_dataset(
        "parquet",
        data_files=[str(tmp_path / "j-1.parquet"), str(tmp_path / "j-2.parquet")],
        split="train",
        cache_dir=cache,
    )
    assert ds.num_rows == 1 + len(rejs)
    assert ds["pr_number"] == [None] + [getattr(r, "pr_number", None) for r in rejs]
    assert ds.features["pr_number"].dtype == "int64"


def test_export_command(mined: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "c.parquet"
    result = run_export_parquet(mined[0], out)
    assert (result.count, result.record_type, result.pushed) == (7, "candidate", "")
    assert read_parquet(out) == read_records(mined[0])[1]
    one = run_export_parquet(mined[1], tmp_path / "r.parquet", only=["swe-forge__textkit-6"])
    assert one.count == 1 and one.record_type == "rejection"
    # A value the columns cannot hold is refused, not dropped.
    odd = samples.result(violations=[{"code": "x", "detail": "y", "path": "z"}])
    src = tmp_path / "odd.jsonl"
    src.write_text(json.dumps(odd) + "\n")
    with pytest.raises(InputError, match="cannot be stored"):
        run_export_parquet(src, tmp_path / "odd.parquet")
    assert not (tmp_path / "odd.parquet").exists()
    # Through the command line: the summary, and the hint for a mixed file.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(mined[0].read_text() + mined[1].read_text())
    cli = [sys.executable, "-m", "swe_forge", "export", str(mixed), "-o", str(out)]
    done = subprocess.run([*cli, "--format", "parquet"], capture_output=True, text=True)
    assert done.returncode == 2 and "hint: pick one with --records TYPE" in done.stderr
    done = subprocess.run(
        [*cli, "--format", "parquet", "--records", "rejection", "--json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["record_type"] == "rejection" and summary["records"] == 7


def test_admit_says_how_to_get_parquet(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "swe_forge",
            "admit",
            str(tmp_path / "c.jsonl"),
            "--format",
            "parquet",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--format parquet" in done.stderr and "swe-forge export" in done.stderr


def test_without_pyarrow_the_error_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(samples.rejection()) + "\n")
    with pytest.raises(UsageError, match="needs pyarrow") as info:
        run_export_parquet(src, tmp_path / "r.parquet")
    assert info.value.hint == "install the extra: pip install 'swe-forge[parquet]'"


class FakeApi:
    """Stands in for huggingface_hub.HfApi (no network in tests)."""

    calls: ClassVar[list[tuple[str, Any]]] = []
    fail: ClassVar[Exception | None] = None

    def create_repo(self, repo: str, **kw: Any) -> None:
        if self.fail is not None:
            raise self.fail
        self.calls.append(("create_repo", (repo, kw)))

    def create_commit(self, repo: str, operations: list[Any], **kw: Any) -> Any:
        self.calls.append(("create_commit", (repo, [op.path_in_repo for op in operations], kw)))
        return type("Info", (), {"commit_url": f"https://hub.invalid/{repo}/commit/1"})()


def test_push_to_hub_and_its_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    path = tmp_path / "tasks.parquet"
    write_parquet(path, tasks())
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    FakeApi.calls = []
    assert push_to_hub([path], "me/tasks") == "https://hub.invalid/me/tasks/commit/1"
    (_, (repo, kw)), (_, (repo2, paths, kw2)) = FakeApi.calls
    assert (repo, kw["repo_type"], repo2, paths) == (
        "me/tasks",
        "dataset",
        "me/tasks",
        ["data/tasks.parquet"],
    )
    assert kw2["repo_type"] == "dataset"
    # The Hub refuses or cannot be reached: a remote error that keeps the file.
    monkeypatch.setattr(FakeApi, "fail", ConnectionError("offline\nsecond line"))
    with pytest.raises(
        RemoteError, match=r"could not push .* me/tasks: ConnectionError: offline$"
    ) as info:
        push_to_hub([path], "me/tasks")
    assert "HF_TOKEN" in info.value.hint and path.exists()
    with pytest.raises(UsageError, match="not a repository id"):
        push_to_hub([path], "https://example.invalid/me/tasks")
    # Without the extra: said before anything is written.
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(samples.rejection()) + "\n")
    with pytest.raises(UsageError, match="needs huggingface_hub") as info:
        run_export_parquet(src, tmp_path / "r.parquet", push_to_hub="me/rejections")
    assert "swe-forge[hub]" in info.value.hint
    assert not (tmp_path / "r.parquet").exists()
