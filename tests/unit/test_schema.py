"""The published schemas: derived from the record classes, and current in the repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic.dataclasses import dataclass

from swe_forge.commands.schema import run_schema
from swe_forge.errors import InputError
from swe_forge.records import RECORD_TYPES, adapter
from swe_forge.schema import columns, json_schema, schema_files, stale_schemas, table_layout
from tests import record_samples as samples

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_schemas_are_what_the_classes_give() -> None:
    stale = stale_schemas(ROOT / "schemas")
    assert stale == [], f"regenerate them: swe-forge schema -o schemas (stale: {stale})"
    published = {p.name for p in (ROOT / "schemas").iterdir()}
    assert published == set(schema_files()), "a schema file there is not made by the code"


def test_a_changed_class_makes_the_check_fail(tmp_path: Path) -> None:
    run_schema(tmp_path)
    assert run_schema(tmp_path, check=True) == []
    path = tmp_path / "task.schema.json"
    schema = json.loads(path.read_text())
    del schema["properties"]["FAIL_TO_PASS"]
    path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
    (tmp_path / "verify_result.columns.txt").unlink()
    with pytest.raises(
        InputError, match=r"task\.schema\.json, verify_result\.columns\.txt"
    ) as info:
        run_schema(tmp_path, check=True)
    assert "swe-forge schema -o" in info.value.hint


@pytest.mark.parametrize(
    ("record_type", "data"),
    [
        ("candidate", samples.candidate()),
        ("task", samples.task()),
        ("rejection", samples.rejection(instance_id=None, pr_number=None, commit=None)),
        ("verify_result", samples.result()),
    ],
)
def test_every_written_field_is_in_the_json_schema(record_type: str, data: dict[str, Any]) -> None:
    schema = json_schema(record_type)
    assert schema["$schema"].endswith("/draft/2020-12/schema")
    record = RECORD_TYPES[record_type].from_dict(data)
    written = json.loads(record.to_json())
    # Every field is written, so every field is required; nothing else is written.
    assert set(schema["required"]) == set(schema["properties"]) == set(written)
    assert schema["properties"]["record_type"]["const"] == record_type
    # What is written validates against the model it came from.
    assert adapter(RECORD_TYPES[record_type]).validate_python(written) == record


def layout(record_type: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in table_layout(record_type).splitlines())


def test_columns_follow_the_declared_rules() -> None:
    result = layout("verify_result")
    pairs = "list<struct<test: string not null, outcome: string not null>> not null"
    assert result["tests"] == result["fail_to_pass"] == result["pass_to_pass"] == pairs
    assert result["violations"] == (
        "list<struct<code: string not null, detail: string not null>> not null"
    )
    assert result["timings"].startswith("list<struct<step: string not null, seconds: double")
    assert result["verifier"] == "string (json) not null"
    rejection = layout("rejection")
    assert (rejection["instance_id"], rejection["pr_number"]) == ("string", "int64")  # nullable
    candidate = layout("candidate")
    assert candidate["statement_quality"].startswith("struct<score: double not null")
    assert not candidate["statement_quality"].endswith("not null")  # a nullable struct
    assert candidate["provenance"].endswith("> not null")
    task = layout("task")
    assert task["FAIL_TO_PASS"] == "list<string> not null"
    assert task["gates"] == task["audit"] == "string (json) not null"
    assert task["created_at"] == "string not null"  # timestamps: the records' ISO strings


def test_a_map_without_a_declared_layout_is_refused() -> None:
    @dataclass
    class Loose:
        counts: dict[str, int]

    with pytest.raises(TypeError, match="say how"):
        columns(Loose)
