"""The records: one definition each, JSON byte for byte as before, old files still read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from swe_forge.errors import InputError, UsageError
from swe_forge.records import (
    Candidate,
    LicenseEvidence,
    Rejection,
    TaskManifest,
    VerifyResult,
    read_candidates,
    read_records,
)
from tests import record_samples as samples


def dump(data: dict[str, Any]) -> str:
    """How records have always been written: sorted keys, compact, UTF-8."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        (Candidate, samples.candidate()),
        (Candidate, samples.candidate(statement_quality=None)),
        (TaskManifest, samples.task()),
        (Rejection, samples.rejection()),
        (Rejection, samples.rejection(instance_id=None, pr_number=None, commit=None, extra={})),
        (VerifyResult, samples.result()),
    ],
)
def test_a_record_reads_and_writes_the_same_bytes(cls: Any, data: dict[str, Any]) -> None:
    record = cls.from_dict(json.loads(dump(data)))
    assert record.to_json() == dump(data)
    assert json.dumps(record.to_dict(), sort_keys=True) == json.dumps(data, sort_keys=True)


def test_the_json_format_is_pinned() -> None:
    # Separators, key order, non-ASCII and nulls exactly as the files have always had them.
    rej = Rejection("mine", "o/r", "test_only", "only test files changed", "o__r-1", 1, "ab")
    assert rej.to_json() == (
        '{"commit":"ab","detail":"only test files changed","extra":{},"instance_id":"o__r-1",'
        '"pr_number":1,"reason":"test_only","record_type":"rejection","repo":"o/r",'
        '"schema_version":1,"stage":"mine"}'
    )
    assert Rejection("mine", "o/r", "blocklisted_repo", "é").to_json() == (
        '{"commit":null,"detail":"é","extra":{},"instance_id":null,"pr_number":null,'
        '"reason":"blocklisted_repo","record_type":"rejection","repo":"o/r",'
        '"schema_version":1,"stage":"mine"}'
    )


def test_a_lone_surrogate_is_written_escaped_and_read_back(tmp_path: Path) -> None:
    # A Jest report's test titled "\udead" (eemeli/yaml) reaches a rejection's detail as a
    # lone surrogate, which no UTF-8 file can hold: admit crashed writing the line.
    rej = Rejection("admit", "o/r", "collection_error", "x \udead é", "o__r-1")
    line = rej.to_json()
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert "\\udead" in line and "\\u00e9" in line
    assert Rejection.from_dict(json.loads(path.read_text(encoding="utf-8"))).detail == rej.detail
    # Without one, the bytes stay as they have always been (non-ASCII as is).
    assert "é" in Rejection("admit", "o/r", "collection_error", "é").to_json()


def test_old_files_still_read() -> None:
    # A candidate from before statement_quality existed reads as None (and is written with
    # a null, as it always was).
    old = samples.candidate()
    del old["statement_quality"]
    cand = Candidate.from_dict(old)
    assert cand.statement_quality is None and '"statement_quality":null' in cand.to_json()
    # SWE-bench's encoding of the test lists is accepted.
    task = samples.task()
    swebench = {**task, "FAIL_TO_PASS": json.dumps(task["FAIL_TO_PASS"])}
    want = task["FAIL_TO_PASS"]
    assert want == TaskManifest.from_dict(swebench).FAIL_TO_PASS
    # Results of schemas 1 and 2 read as they are; keys of a newer writer are ignored.
    v1 = {**samples.result(), "schema_version": 1, "from_the_future": True}
    assert VerifyResult(**samples.result()).to_dict() == samples.result()
    assert VerifyResult.from_dict(v1).schema_version == 1
    v2 = samples.result(schema_version=2)
    del v2["provenance"], v2["log_excerpt"]
    back = VerifyResult.from_dict(v2)
    assert back.schema_version == 2 and back.provenance == {} and back.log_excerpt == ""
    # A task of version 1 (before the environment block) reads with an empty one.
    t1 = samples.task(schema_version=1)
    del t1["environment"]
    assert TaskManifest.from_dict(t1).environment == {}
    # A rejection's version and type are its own (they were never read).
    assert Rejection.from_dict({**samples.rejection(), "schema_version": 9}).schema_version == 1


def test_the_classes_are_still_dataclasses() -> None:
    # Positional construction, replace (which validates again) and asdict, as the stages use.
    ev = LicenseEvidence("file", "LICENSE", "MIT", 1.0, "b")
    assert dataclasses.asdict(ev)["spdx"] == "MIT"
    cand = Candidate.from_dict(samples.candidate())
    assert dataclasses.replace(cand, version="2.0").version == "2.0"
    with pytest.raises(ValueError):
        dataclasses.replace(cand, version=None)
    # Tuples in, tuples kept (frozen records stay hashable where they were).
    assert cand.files.patch_files == ("src/r/a.py",)
    assert hash(ev) == hash(LicenseEvidence("file", "LICENSE", "MIT", 1.0, "b"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (samples.candidate(schema_version=2), "unsupported candidate schema_version 2"),
        (samples.candidate(record_type="task"), "not a candidate record"),
        (
            samples.candidate(
                statement_quality={**samples.candidate()["statement_quality"], "version": 2}
            ),
            "unsupported statement_quality version 2",
        ),
        (
            samples.candidate(
                provenance={**samples.candidate()["provenance"], "pr_number": "seven"}
            ),
            "provenance.pr_number",
        ),
        ({k: v for k, v in samples.candidate().items() if k != "patch"}, "patch: Field required"),
    ],
)
def test_malformed_records_are_refused_in_one_line(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        Candidate.from_dict(data)
    assert "\n" not in str(info.value)


def test_readers_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    bad = samples.candidate(files={"patch_files": "src/r/a.py"})
    path.write_text(dump(samples.candidate()) + "\n" + dump(bad) + "\n")
    with pytest.raises(InputError, match=r"c\.jsonl:2: not a candidate record \(files"):
        read_candidates(path)


def test_read_records_takes_one_type(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            dump(d)
            for d in (
                samples.candidate(),
                samples.rejection(),
                samples.candidate(instance_id="o__r-9"),
            )
        )
        + "\n"
    )
    with pytest.raises(UsageError, match="several types: candidate, rejection"):
        read_records(path)
    kind, cands = read_records(path, "candidate")
    assert kind == "candidate" and [c.instance_id for c in cands] == ["o__r-7", "o__r-9"]
    assert read_records(path, "candidate", only=["o__r-9"])[1] == cands[1:]
    with pytest.raises(InputError, match="not in"):
        read_records(path, "rejection", only=["o__r-9"])
    with pytest.raises(UsageError, match="unknown record type"):
        read_records(path, "image")
    swebench = tmp_path / "swebench.jsonl"
    swebench.write_text(dump({"instance_id": "o__r-7", "FAIL_TO_PASS": "[]"}) + "\n")
    with pytest.raises(InputError, match="SWE-bench task rows"):
        read_records(swebench)
