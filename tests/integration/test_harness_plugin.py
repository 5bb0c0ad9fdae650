"""The pytest harness plugin, run by the host's pytest on a project made here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

PROJECT = {
    "tests/test_one.py": (
        "import pytest\n\n"
        "def test_pass():\n    pass\n\n"
        "def test_fail():\n    assert 1 == 2\n\n"
        "@pytest.mark.parametrize('x,y', [(1, 2), ('a b', 'c::d')])\n"
        "def test_param(x, y):\n    assert x != y\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n"
        "def test_setup_error(broken):\n    pass\n\n"
        "@pytest.fixture\ndef bad_teardown():\n    yield\n    raise RuntimeError('teardown')\n\n"
        "def test_teardown_error(bad_teardown):\n    pass\n\n"
        "@pytest.mark.skip\ndef test_skipped():\n    pass\n\n"
        "@pytest.mark.xfail\ndef test_xfail():\n    assert False\n\n"
        "class TestGroup:\n    def test_method(self):\n        pass\n"
    ),
    "tests/test_broken_import.py": "from nowhere import nothing\n\ndef test_never():\n    pass\n",
}


def run(tmp_path: Path, seed: int) -> dict[str, object]:
    for rel, text in PROJECT.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    plugin_dir = Path(str(resources.files("swe_forge.gates.harness")))
    results = tmp_path / f"results-{seed}.json"
    env = dict(
        os.environ,
        PYTHONPATH=str(plugin_dir),
        SWE_FORGE_ORDER_SEED=str(seed),
        SWE_FORGE_RESULTS=str(results),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "swe_forge_harness",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            f"--rootdir={tmp_path}",
            "--continue-on-collection-errors",
            "-q",
            "tests",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return json.loads(results.read_text())


def test_outcomes_and_ids(tmp_path: Path) -> None:
    data = run(tmp_path, 1)
    tests = data["tests"]
    assert tests == {
        "tests/test_one.py::TestGroup::test_method": "passed",
        "tests/test_one.py::test_fail": "failed",
        "tests/test_one.py::test_param[1-2]": "passed",
        "tests/test_one.py::test_param[a b-c::d]": "passed",
        "tests/test_one.py::test_pass": "passed",
        "tests/test_one.py::test_setup_error": "error",
        "tests/test_one.py::test_skipped": "skipped",
        "tests/test_one.py::test_teardown_error": "error",
        "tests/test_one.py::test_xfail": "xfailed",
    }
    assert data["collect_errors"] == {"tests/test_broken_import.py": "error"}


def test_order_follows_the_seed(tmp_path: Path) -> None:
    a, b, a2 = run(tmp_path, 1), run(tmp_path, 2), run(tmp_path, 1)
    assert a["order"] == a2["order"]
    assert a["order"] != b["order"]
    assert sorted(a["order"]) == sorted(b["order"])  # type: ignore[type-var]
