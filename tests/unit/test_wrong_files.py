"""Every reader knows each kind of row the pipeline writes, and refuses the wrong kind with
exit 4 and a line naming what the file holds (the wrong file used to be read as nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_forge.commands.report import funnel
from swe_forge.commands.verify import read_predictions, read_tasks
from swe_forge.errors import InputError
from swe_forge.records.read import kind_of, read_candidates, read_image_records

SWEBENCH_ROW = {
    "instance_id": "o__r-1",
    "repo": "o/r",
    "base_commit": "a" * 40,
    "patch": "diff --git a/x b/x\n",
    "test_patch": "diff --git a/t b/t\n",
    "FAIL_TO_PASS": '["t::a"]',
    "PASS_TO_PASS": "[]",
}
PREDICTION = {"instance_id": "o__r-1", "model_name_or_path": "m", "model_patch": "diff"}
TASK = {"record_type": "task", "instance_id": "o__r-1"}


def _file(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_kinds() -> None:
    assert kind_of(SWEBENCH_ROW) == "swebench_row"
    assert kind_of(PREDICTION) == "prediction"
    assert kind_of({"instance_id": "x", "model_patch": None}) == "prediction"
    assert kind_of(TASK) == "task"
    assert kind_of({"record_type": "images"}) == "images"
    assert kind_of({"record_type": "bogus"}) == "unknown"
    assert kind_of({"hello": 1}) == "unknown"


def test_swebench_rows_are_not_predictions(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds SWE-bench task rows.*not predictions") as err:
        read_predictions(_file(tmp_path, [SWEBENCH_ROW] * 5))
    assert err.value.exit_code == 4 and "model_patch" in err.value.hint


def test_tasks_are_not_candidates(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds task manifests.*not candidates"):
        read_candidates(_file(tmp_path, [TASK]))


def test_candidates_are_not_image_records(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds SWE-bench task rows.*not image records"):
        read_image_records(_file(tmp_path, [SWEBENCH_ROW]))


def test_predictions_are_not_a_funnel(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="holds predictions"):
        funnel([_file(tmp_path, [PREDICTION, PREDICTION])])


def test_swebench_rows_are_not_tasks(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds SWE-bench task rows.*not task manifests") as err:
        read_tasks(_file(tmp_path, [SWEBENCH_ROW]))
    assert "--format swebench" in err.value.hint


def test_model_name_must_be_a_string_and_a_missing_one_is_said(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="model_name_or_path is a list"):
        read_predictions(_file(tmp_path, [{**PREDICTION, "model_name_or_path": ["x"]}]))
    notes: list[str] = []
    (pred,) = read_predictions(
        _file(tmp_path, [{"instance_id": "o__r-1", "model_patch": "d"}]), notes
    )
    assert pred.model_name_or_path == "unknown"
    assert notes and "1 prediction(s) name no model_name_or_path" in notes[0]


def test_a_prediction_needs_model_patch(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="has no model_patch"):
        read_predictions(_file(tmp_path, [{"instance_id": "o__r-1", "model_name_or_path": "m"}]))
