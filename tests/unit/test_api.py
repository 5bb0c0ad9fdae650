"""The trainer API's parsing: what a policy's answer and a ground truth become."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import swe_forge
from swe_forge.api import as_task, extract_patch
from tests import record_samples as samples

DIFF = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_the_patch_is_found_in_an_answer() -> None:
    assert extract_patch(DIFF) == DIFF
    assert extract_patch("Here is the fix:\n" + DIFF) == DIFF
    fenced = f"I think\n```diff\n{DIFF}```\nand then\n```python\nprint(1)\n```\n"
    assert extract_patch(fenced) == DIFF
    # The last fenced diff wins (a policy may show a draft first).
    draft = DIFF.replace("x = 2", "x = 3")
    assert extract_patch(f"```diff\n{draft}```\n```diff\n{DIFF}```") == DIFF
    assert extract_patch("no diff here") == ""


def test_the_task_comes_as_a_manifest_a_dict_json_or_a_file(tmp_path: Path) -> None:
    data = samples.task()
    task = as_task(data)
    assert as_task(task) is task
    assert as_task(json.dumps(data)) == task
    one = tmp_path / "task.jsonl"
    one.write_text(json.dumps(data) + "\n")
    assert as_task(one) == task and as_task(str(one)) == task
    one.write_text(json.dumps(data) + "\n" + json.dumps(data) + "\n")
    with pytest.raises(ValueError, match="expected one task manifest"):
        as_task(one)


def test_the_package_exports_the_api_lazily() -> None:
    assert callable(swe_forge.verify_patch) and callable(swe_forge.compute_score)
    with pytest.raises(AttributeError):
        _ = swe_forge.nothing_here  # type: ignore[attr-defined]


def test_a_ground_truth_that_is_no_manifest_says_so() -> None:
    from swe_forge.api import compute_score

    with pytest.raises(ValueError, match="neither JSON text nor a file"):
        compute_score("swe-forge", DIFF, "not json")


def test_a_patch_that_is_not_text_is_graded_as_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify_patch never raises for a bad patch: None is the empty patch, bytes are text."""
    import swe_forge.api as api

    seen: list[object] = []

    class Judge:
        def verify(self, task: object, patch: object, model: str) -> object:
            seen.append(patch)
            return "graded"

    monkeypatch.setattr(api, "_verifier", lambda config=None: Judge())
    task = samples.task()
    assert api.verify_patch(task, None) == "graded"  # type: ignore[arg-type]
    assert api.verify_patch(task, DIFF.encode()) == "graded"  # type: ignore[arg-type]
    assert seen == ["", DIFF]


def test_an_edited_environment_image_is_refused() -> None:
    data = samples.task()
    data["environment"] = {**data.get("environment", {}), "image": "sha256:" + "f" * 64}
    with pytest.raises(ValueError, match=r"is not the pinned image\.id"):
        as_task(data)
