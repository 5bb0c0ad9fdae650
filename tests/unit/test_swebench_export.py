"""The SWE-bench 5 export: rows, eval scripts, image references, log parsers, and the command.

The eval scripts are graded by SWE-bench's real harness in tests/docker/test_swebench.py; here
the properties its harness relies on are checked on the text."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from swe_forge.admission.swebench import swebench_image, swebench_line, swebench_row
from swe_forge.commands.export import run_export
from swe_forge.ecosystems.python.swebench import (
    END_TEST_OUTPUT,
    START_TEST_OUTPUT,
    eval_script,
    held_out_paths,
    log_parser,
)
from swe_forge.errors import InputError, UsageError
from swe_forge.records import SWEBENCH_FIELDS, TaskManifest, read_task_manifests

ID = "sha256:" + "a" * 64
PINNED = "registry.example:5000/swe-forge/instance@sha256:" + "b" * 64

# Modifies a test the base has, creates one, and carries text that must not end a here
# document or pass for one of SWE-bench's markers.
TEST_PATCH = """\
diff --git a/tests/test_a.py b/tests/test_a.py
index 1111111..2222222 100644
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1,2 +1,3 @@
 def test_old():
     assert True
+# >>>>> End Test Output EOF_SWE_FORGE_TEST_PATCH
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,2 @@
+def test_fix():
+    assert 1
"""


def manifest(**changes: Any) -> TaskManifest:
    data: dict[str, Any] = {
        "instance_id": "o__r-1",
        "repo": "o/r",
        "base_commit": "c" * 40,
        "patch": "diff --git a/src/a.py b/src/a.py\n",
        "test_patch": TEST_PATCH,
        "problem_statement": "it breaks",
        "hints_text": "",
        "created_at": "2024-01-01T00:00:00Z",
        "version": "1.0",
        "environment_setup_commit": "c" * 40,
        "FAIL_TO_PASS": ["tests/test_new.py::test_fix"],
        "PASS_TO_PASS": ["tests/test_a.py::test_old"],
        "image": {"id": ID, "tag": "swe-forge/instance:o__r-1-x"},
        "harness": {"runner": "pytest", "test_files": ["tests/test_a.py", "tests/test_new.py"]},
        "gates": {"scope": "touched"},
        "license": {},
        "provenance": {},
        "audit": {},
    }
    data.update(changes)
    return TaskManifest.from_dict(data)


def test_row_carries_what_swebench_5_reads() -> None:
    row = swebench_row(manifest())
    # make_test_spec: instance_id, image, repo, version, FAIL_TO_PASS, PASS_TO_PASS,
    # log_parser, eval_type, eval_script; the gold predictions read `patch`.
    # ... and our own test_strength, which its harness does not read.
    assert set(row) == {
        *SWEBENCH_FIELDS,
        "image",
        "eval_script",
        "log_parser",
        "eval_type",
        "test_strength",
    }
    assert row["image"] == ID
    assert row["log_parser"] == "parse_log_pytest" and row["eval_type"] == "pass_and_fail"
    assert json.loads(row["FAIL_TO_PASS"]) == ["tests/test_new.py::test_fix"]
    assert json.loads(row["PASS_TO_PASS"]) == ["tests/test_a.py::test_old"]
    line = swebench_line(manifest())
    assert line == json.dumps(json.loads(line), sort_keys=True)
    assert swebench_line(manifest()) == line  # deterministic


def test_eval_script_shape_swebench_relies_on() -> None:
    script = eval_script(manifest())
    lines = script.splitlines()
    # SWE-bench strips exactly these two lines and puts them back.
    assert lines[:2] == ["#!/bin/bash", "set -uxo pipefail"]
    assert script.endswith("\n")
    start = lines.index(f": '{START_TEST_OUTPUT}'")
    end = lines.index(f": '{END_TEST_OUTPUT}'")
    # The markers appear once each (the test patch is encoded), and the test command is the
    # line right before the end marker: SWE-bench 5 records its exit status there.
    assert sum(START_TEST_OUTPUT in x for x in lines) == 1
    assert sum(END_TEST_OUTPUT in x for x in lines) == 1
    assert end == start + 2
    command = lines[start + 1]
    assert command.startswith("setpriv --reuid=1000 --regid=1000 --clear-groups python -m pytest")
    assert " -rA " in command and "--continue-on-collection-errors" in command
    assert command.endswith(" $no_cov tests/test_a.py tests/test_new.py")
    assert "swe_forge_harness" not in script
    # The image has one commit: HEAD, never the base commit's id.
    assert "c" * 40 not in script
    assert lines.count("git checkout HEAD -- tests/test_a.py") == 2  # before and after
    assert lines.count("rm -rf -- tests/test_new.py") == 2
    assert lines.index("git checkout HEAD -- tests/test_a.py") < lines.index(
        "git apply --verbose /tmp/swe_forge_test.patch || exit 1"
    )


def test_eval_script_carries_the_test_patch_byte_for_byte() -> None:
    script = eval_script(manifest())
    m = re.search(r"<<'EOF_SWE_FORGE_TEST_PATCH'\n(.*?)\nEOF_SWE_FORGE_TEST_PATCH\n", script, re.S)
    assert m is not None
    assert base64.b64decode(m.group(1)).decode() == TEST_PATCH
    # The here document's end is the only line equal to its delimiter.
    assert script.splitlines().count("EOF_SWE_FORGE_TEST_PATCH") == 1


def test_suite_scope_runs_the_whole_suite() -> None:
    command = next(
        x
        for x in eval_script(manifest(gates={"scope": "suite"})).splitlines()
        if x.startswith("setpriv ")
    )
    assert command.endswith("--continue-on-collection-errors $no_cov")


def test_only_pytest_tasks_are_exported() -> None:
    # Each adapter answers for its own runner (Ecosystem.swebench_eval).
    for runner in ("go-test", "cargo-test", "maven-surefire", "node-test"):
        with pytest.raises(InputError, match="only pytest"):
            swebench_row(manifest(harness={"runner": runner, "test_files": []}))
    with pytest.raises(InputError, match="does not parse"):
        eval_script(manifest(test_patch="not a diff\n"))


def test_held_out_paths_restore_and_remove() -> None:
    assert held_out_paths(TEST_PATCH) == (["tests/test_a.py"], ["tests/test_new.py"])
    renamed = (
        "diff --git a/tests/old.py b/tests/new.py\n"
        "similarity index 100%\n"
        "rename from tests/old.py\n"
        "rename to tests/new.py\n"
    )
    assert held_out_paths(renamed) == (["tests/old.py"], ["tests/new.py"])


def test_image_is_pinned_reference_else_local_id() -> None:
    assert swebench_image({"id": ID, "reference": PINNED}) == PINNED
    # A reference that is not pinned by digest is not trusted: the local id is used.
    assert swebench_image({"id": ID, "reference": "swe-forge/instance:latest"}) == ID
    assert swebench_image({"tag": "swe-forge/instance:t"}) == "swe-forge/instance:t"
    with pytest.raises(InputError, match="names no image"):
        swebench_image({})


def test_a_pushed_task_gives_swebench_its_pinned_reference() -> None:
    pins = {"version": 1, "registry": "registry.example:5000/swe-forge",
            "images": {"instance": {"reference": PINNED, "id": ID, "local": "x"}}}  # fmt: skip
    row = swebench_row(manifest(image={"id": ID, "tag": "t", "registry": pins}))
    assert row["image"] == PINNED


def test_log_parser_keeps_ids_with_whitespace_whole() -> None:
    assert log_parser(["tests/t.py::test_x[a-b]"]) == "parse_log_pytest"
    assert log_parser(["tests/t.py::test_x[a b]"]) == "parse_log_pytest_v2"


def test_export_command(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    second = manifest(instance_id="o__r-2")
    tasks.write_text(manifest().to_json() + "\n" + second.to_json() + "\n")
    out = tmp_path / "swebench.jsonl"
    assert run_export(tasks, out) == 2
    assert out.read_text().splitlines() == [swebench_line(manifest()), swebench_line(second)]
    assert run_export(tasks, out, only=["o__r-2"]) == 1
    assert out.read_text() == swebench_line(second) + "\n"
    # Its own output is not a manifest: refused with a hint, not half-exported.
    with pytest.raises(InputError, match="holds SWE-bench task rows"):
        run_export(out, tmp_path / "again.jsonl")
    assert not (tmp_path / "again.jsonl").exists()
    with pytest.raises(UsageError):
        run_export(tasks, out, output_format="csv")
    with pytest.raises(InputError, match="not in"):
        run_export(tasks, out, only=["o__r-9"])


def test_read_task_manifests_refuses_empty_and_duplicates(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InputError, match="no tasks"):
        read_task_manifests(empty)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(manifest().to_json() + "\n" + manifest().to_json() + "\n")
    with pytest.raises(InputError, match="twice"):
        read_task_manifests(twice)
