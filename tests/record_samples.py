"""Records as the stages write them, as plain JSON data, for the record and parquet tests.

Each function returns one complete record (every field present, as ``to_json`` writes it),
shaped like real output: nested free-form blocks with nulls, floats, empty maps and lists,
non-ASCII text; ``changes`` replaces top-level fields.
"""

from __future__ import annotations

import copy
from typing import Any

SHA = "c" * 40

_CANDIDATE: dict[str, Any] = {
    "instance_id": "o__r-7",
    "repo": "o/r",
    "base_commit": SHA,
    "patch": "diff --git a/src/r/a.py b/src/r/a.py\n--- a/src/r/a.py\n+++ b/src/r/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
    "test_patch": "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1,2 @@\n def test_x():\n+    assert x == 2  # « ünïcode »\n",
    "problem_statement": "x should be 2 — not 1\n\nSee the docs.",
    "hints_text": "",
    "created_at": "2024-03-01T12:30:00Z",
    "version": "1.2",
    "environment_setup_commit": SHA,
    "license": {
        "expression": "MIT",
        "allowed": True,
        "reason": "",
        "detail": "",
        "evidence": [
            {"source": "file", "path": "LICENSE", "spdx": "MIT", "score": 0.9384, "blob": "b" * 40},
            {
                "source": "pyproject",
                "path": "pyproject.toml",
                "spdx": "MIT",
                "score": 1.0,
                "blob": "",
            },
        ],
    },
    "provenance": {
        "source": "/srv/repos/r",
        "pr_number": 7,
        "merge_commit": "d" * 40,
        "merge_kind": "squash",
        "default_branch": "main",
        "problem_statement_source": "commit_message",
        "linked_issues": [3, 5],
        "tool_version": "0.1.0",
        "config_hash": "e" * 64,
        "policy_hash": "f" * 64,
    },
    "files": {
        "patch_files": ["src/r/a.py"],
        "test_files": ["tests/test_a.py"],
        "lines_added": 2,
        "lines_removed": 1,
    },
    "statement_quality": {
        "score": 0.4275,
        "flags": ["cross_reference", "thin"],
        "evidence": ["thin: 9 words", "cross_reference: see #3"],
        "words": 9,
        "cleaned": True,
        "generated": False,
        "version": 1,
    },
    "schema_version": 1,
    "record_type": "candidate",
}

_TASK: dict[str, Any] = {
    **{k: _CANDIDATE[k] for k in list(_CANDIDATE)[:10]},
    "FAIL_TO_PASS": ["tests/test_a.py::test_x", "tests/test_a.py::test_y[a b-ü]"],
    "PASS_TO_PASS": ["tests/test_a.py::test_old"],
    "image": {
        "id": "sha256:" + "a" * 64,
        "tag": "swe-forge/instance:o__r-7-abc",
        "env": "swe-forge/env:py3.11-123",
        "python": "3.11",
        "project_name": "r",
    },
    "harness": {
        "runner": "pytest",
        "test_files": ["tests/test_a.py"],
        "canaries": {"armed": [["tests/test_a.py::test_x", 2]], "disarmed": 0, "made": 3},
        "timeout_seconds": 600.0,
    },
    "gates": {
        "hash_seeds": [0, 1, 2],
        "dropped_flaky": [],
        "not_fail_to_pass": {},
        "runs": [
            {
                "phase": "before",
                "order_seed": 733457984,
                "seconds": 0.487,
                "outcomes": {
                    "tests/test_a.py::test_x": "failed",
                    "tests/test_a.py::test_old": "passed",
                },
                "tampered": "",
            },
            {"phase": "after", "order_seed": 12, "seconds": 0.5, "outcomes": {}, "exit_code": None},
        ],
    },
    "license": {"expression": "MIT", "allowed": True, "reason": "", "detail": "", "evidence": []},
    "provenance": {"pr_number": 7, "linked_issues": [], "admitted_with": "0.1.0"},
    "audit": {
        "sufficiency": [{"code": "weak_assertion", "detail": "test_y asserts nothing"}],
        "image": None,
        "clock": {"controlled": False, "reads": 0},
    },
    "environment": {
        "version": 1,
        "workdir": "/testbed",
        "user": "1000:1000",
        "network": "none",
        "limits": {"cpus": 1.0, "memory": "4g", "pids": 256},
        "hidden_from_policy": ["patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS"],
    },
    "schema_version": 2,
    "record_type": "task",
}

_REJECTION: dict[str, Any] = {
    "stage": "admit",
    "repo": "o/r",
    "reason": "no_fail_to_pass",
    "detail": "no test fails before the fix in every run",
    "instance_id": "o__r-8",
    "pr_number": 8,
    "commit": "d" * 40,
    "extra": {"runs": [{"phase": "before", "seconds": 1.25}], "flaky": None},
    "schema_version": 1,
    "record_type": "rejection",
}

_RESULT: dict[str, Any] = {
    "instance_id": "o__r-7",
    "model_name_or_path": "gold",
    "status": "invalid_patch",
    "reward": 0.0,
    "violations": [
        {"code": "test_file", "detail": "the patch changes tests/test_a.py"},
        {
            "code": "capability_frame_access",
            "detail": "src/r/a.py introduces frame_access (line 3: sys._getframe)",
        },
    ],
    "tests": {"tests/test_a.py::test_x": "failed", "tests/test_a.py::test_y[a b-ü]": "passed"},
    "fail_to_pass": {"tests/test_a.py::test_x": "failed"},
    "pass_to_pass": {},
    "timings": {"guards": 0.0123, "container_start": 1.5},
    "verifier": {"harness_sha256": "9" * 64, "version": "0.1.0", "canaries": {"armed": 2}},
    "detail": "test_file: the patch changes tests/test_a.py",
    "attempts": 1,
    "provenance": {
        "task_sha256": "1" * 64,
        "image_id": "sha256:" + "2" * 64,
        "image_reference": "sha256:" + "2" * 64,
        "patch_sha256": "3" * 64,
        "tool_version": "0.1.0",
        "config_hash": "4" * 64,
        "run_id": "0123456789abcdef",
    },
    "log_excerpt": "tests/test_a.py::test_x FAILED\nE   assert 1 == 2\n",
    "schema_version": 3,
    "record_type": "verify_result",
}


def candidate(**changes: Any) -> dict[str, Any]:
    """A candidate as ``mine`` writes it."""
    return {**copy.deepcopy(_CANDIDATE), **changes}


def task(**changes: Any) -> dict[str, Any]:
    """A full task manifest as ``admit`` writes it."""
    return {**copy.deepcopy(_TASK), **changes}


def rejection(**changes: Any) -> dict[str, Any]:
    """A rejection as ``admit`` writes it."""
    return {**copy.deepcopy(_REJECTION), **changes}


def result(**changes: Any) -> dict[str, Any]:
    """A verify result as ``verify`` writes it."""
    return {**copy.deepcopy(_RESULT), **changes}
