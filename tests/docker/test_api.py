"""The trainer API grades through the real verifier: gold 1.0, an empty or wrong answer 0."""

from __future__ import annotations

import json

import swe_forge
from tests.docker.conftest import ExampleTasks


def test_verify_patch_and_compute_score(example_tasks: ExampleTasks) -> None:
    rows = [json.loads(x) for x in example_tasks.tasks.read_text().splitlines()]
    task = rows[0]
    result = swe_forge.verify_patch(task, task["patch"])
    assert result.status == "resolved" and result.reward == 1.0
    answer = f"The fix:\n```diff\n{task['patch']}```\n"
    score = swe_forge.compute_score("swe-forge", answer, json.dumps(task), {"model": "m"})
    assert score == {"score": 1.0, "status": "resolved", "infra_error": False}
    nothing = swe_forge.compute_score("swe-forge", "I could not fix it.", task)
    assert nothing["score"] == 0.0 and nothing["status"] == "invalid_patch"
