"""Every registered adapter answers the whole Ecosystem protocol: no optional methods."""

from __future__ import annotations

import inspect

import pytest

from swe_forge.ecosystems import ECOSYSTEM_NAMES, RUNNERS, Ecosystem, ecosystem_named, for_runner
from swe_forge.records import ImageRecord

ADAPTERS = list(ECOSYSTEM_NAMES)

PROTOCOL_METHODS = sorted(
    name
    for name, member in inspect.getmembers(Ecosystem, inspect.isfunction)
    if not name.startswith("_")
)


def test_the_protocol_has_the_methods_stages_call() -> None:
    # A guard on the guard: the lists below are read from the protocol itself.
    assert {
        "runner",
        "runner_for",
        "build",
        "grading_job",
        "scope",
        "capabilities",
        "refusal",
        "manifest_blocks",
        "check_candidate",
        "check_scanned",
        "kept_decoys",
    } <= set(PROTOCOL_METHODS)


def test_python_is_one_of_the_adapters() -> None:
    # Python is a peer behind the seam, not a None that stages branch on.
    assert "python" in ADAPTERS
    eco = ecosystem_named("python")
    assert eco.name == "python" and eco.runner_name == "pytest"
    assert eco.scans_in_container and not ecosystem_named("go").scans_in_container


@pytest.mark.parametrize("name", ADAPTERS)
def test_each_adapter_defines_every_protocol_method(name: str) -> None:
    eco = ecosystem_named(name)
    missing = [m for m in PROTOCOL_METHODS if not callable(getattr(type(eco), m, None))]
    assert missing == []
    for m in PROTOCOL_METHODS:
        # Defined by the adapter, not inherited from the protocol's empty body.
        assert getattr(type(eco), m) is not getattr(Ecosystem, m), (name, m)
    for attr in (
        "name",
        "runner_name",
        "scans_in_container",
        "redraws_calibration",
        "validated_decoys",
    ):
        assert hasattr(eco, attr), (name, attr)


@pytest.mark.parametrize("name", ADAPTERS)
def test_runner_for_an_image_record_runs_its_project(name: str) -> None:
    eco = ecosystem_named(name)
    rec = ImageRecord("o__p-1", "o/p", "0" * 40)
    rec.project_name = "example.com/p"
    runner = eco.runner_for(rec)
    assert type(runner) is type(eco.runner("example.com/p"))


@pytest.mark.parametrize("name", ADAPTERS)
def test_each_adapters_runner_finds_it(name: str) -> None:
    # for_runner looks the runner up (no adapter imported but the task's own).
    eco = ecosystem_named(name)
    assert RUNNERS[eco.runner_name] == name
    assert type(for_runner(eco.runner_name)) is type(eco)


def test_python_reads_a_patchs_capabilities_on_the_host_as_the_container_does() -> None:
    # The protocol's host-side scan, for Python the judge's own scanner: what a source file
    # newly uses, never what a test file or the base already did.
    eco = ecosystem_named("python")
    base = {"pkg/mod.py": b"import os\n\n\ndef f():\n    return os.sep\n"}
    patch = (
        "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
        "@@ -1,4 +1,5 @@\n import os\n+import ctypes\n \n \n def f():\n"
    )
    found = eco.capabilities(patch, base.get)
    assert found and all(isinstance(c, str) for c in found)
    assert eco.capabilities(patch.replace("import ctypes", "import json"), base.get) == []
    assert eco.base_capabilities(["pkg/mod.py"], base.get) == []
    assert eco.capabilities(patch.replace("pkg/mod.py", "tests/test_mod.py"), {}.get) == []


def test_the_candidate_checks_are_each_adapters_own() -> None:
    # pytest's settings are Python's to compare (the verifier no longer asks every task);
    # a host-scanned adapter reads what the candidate newly uses and reports it.
    from swe_forge.records import TaskManifest
    from tests.record_samples import task as task_sample

    task = TaskManifest.from_dict(task_sample())
    changed = {
        "pyproject.toml": {
            "before": '[tool.pytest.ini_options]\naddopts = "-q"\n',
            "after": '[tool.pytest.ini_options]\naddopts = "-q -p evil"\n',
        }
    }
    py = ecosystem_named("python").check_candidate("", task, {"config_texts": changed})
    assert [v["code"] for v in py.violations] == ["runner_config"] and py.capabilities is None
    assert py.detail == "pyproject.toml: the patch changes pytest's settings"
    quiet = ecosystem_named("python").check_candidate("", task, {"config_texts": {}})
    assert quiet.violations == [] and quiet.detail == ""
    go = ecosystem_named("go")
    assert go.check_candidate("", task, {"config_texts": changed}).violations == []
    assert go.check_candidate("", task, {}).capabilities == []
    assert go.check_scanned("", task, {}) == []


def test_a_host_adapter_arms_the_copies_the_gold_patch_failed() -> None:
    copies = {
        "b::copy": {"test": "b", "site": {"line": 2}},
        "a::copy": {"test": "a", "site": {"line": 1}},
        "c::copy": {"test": "c", "site": {"line": 3}},
    }
    outcomes = {"a::copy": "failed", "b::copy": "passed", "c::copy": "failed"}
    armed, disarmed = ecosystem_named("rust").kept_decoys(copies, outcomes, "", {})
    assert [e["test"] for e in armed] == ["a", "c"] and [e["test"] for e in disarmed] == ["b"]


def test_the_registry_makes_every_named_adapter_and_no_other() -> None:
    from swe_forge.ecosystems import _FACTORIES
    from swe_forge.errors import UsageError

    assert list(_FACTORIES) == list(ECOSYSTEM_NAMES)
    assert [ecosystem_named(n).name for n in ECOSYSTEM_NAMES] == list(ECOSYSTEM_NAMES)
    with pytest.raises(UsageError, match="unknown ecosystem 'cobol'"):
        ecosystem_named("cobol")


def test_the_classifier_asks_each_adapter_how_its_tests_are_named() -> None:
    # mine's classifier builds its rules from each package's detect.NAMING, without loading
    # any adapter (a fresh interpreter: this one has loaded them all).
    import subprocess
    import sys

    from swe_forge.ecosystems.naming import namings

    assert len(namings()) == len(ECOSYSTEM_NAMES)
    probe = (
        "import sys\n"
        "from swe_forge.config import ClassifyConfig\n"
        "from swe_forge.mining.classify import PathClassifier\n"
        "c = PathClassifier(ClassifyConfig())\n"
        "print(c.is_test_module('pkg/a_test.go'), c.is_test_module('tests/it.rs'),\n"
        "      c.is_test_module('test/clock-test.js'), c.is_test('src/FooTest.java'))\n"
        "print(sorted(m for m in sys.modules if m.endswith('.adapter')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["True True True False", "[]"]
