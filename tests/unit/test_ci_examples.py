"""The ready-made CI examples parse and call the real CLI with options it has."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml

from swe_forge.config import PROJECT_ROOT


def test_examples_parse_and_use_real_options() -> None:
    gha = yaml.safe_load((PROJECT_ROOT / "configs/ci/github-actions.yml").read_text())
    assert set(gha["jobs"]) == {"shard", "merge"} and gha["jobs"]["merge"]["needs"] == "shard"
    k8s = yaml.safe_load((PROJECT_ROOT / "configs/k8s/indexed-job.yaml").read_text())
    assert k8s["kind"] == "Job" and k8s["spec"]["completionMode"] == "Indexed"
    help_text = subprocess.run(
        [sys.executable, "-m", "swe_forge", "run", "--help"], capture_output=True, text=True
    ).stdout
    for path in ("configs/ci/github-actions.yml", "configs/k8s/indexed-job.yaml"):
        text = (PROJECT_ROOT / path).read_text()
        assert "swe-forge run" in text and "--shard" in text
        for option in set(re.findall(r"swe-forge run [^\n]*", text)[0].split()) | set(
            re.findall(r"(--[a-z-]+)", text)
        ):
            if option.startswith("--") and option not in ("--out",):
                assert option in help_text or option in ("--force",), (
                    f"{path}: {option} is not an option of swe-forge run"
                )
