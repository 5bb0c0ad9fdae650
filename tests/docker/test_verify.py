"""The verifier with the real engine: gold patches score 1.0; every attack scores 0.

One attack (at least) per category of ../shared/design/THREATS.md. Each asserts its status,
reward 0 and a named violation or reason; after each, the gold patch of the same task must
still score 1.0, and the host must be unaffected (no leftover containers, no stray files).
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from swe_forge.commands.admit import run_admit
from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.engine import Engine, Limits
from swe_forge.git.repo import GitRepository
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify.verifier import Verifier, VerifySettings
from tests.docker.conftest import ExampleImages

TASK = "swe-forge__textkit-1"


@pytest.fixture(scope="module")
def tasks(example_images: ExampleImages) -> dict[str, TaskManifest]:
    path = example_images.root / "verify-tasks.jsonl"
    run_admit(
        example_images.candidates, path, config=load_config(), images_path=example_images.images
    )
    return {
        t.instance_id: t
        for t in (TaskManifest.from_dict(json.loads(x)) for x in path.read_text().splitlines())
    }


@pytest.fixture(scope="module")
def verifier(engine: Engine) -> Verifier:
    limits = Limits(
        memory="512m", pids=128, cpus=1.0, nofile=512, fsize_bytes=64 << 20, output_bytes=1 << 20
    )
    return Verifier(
        engine,
        PathClassifier(load_config().classify),
        VerifySettings(timeout_seconds=25, limits=limits, tmpfs_size="64m", infra_retries=0),
    )


@pytest.fixture(scope="module")
def base_file(example_images: ExampleImages, tasks: dict[str, TaskManifest]) -> dict[str, str]:
    repo = GitRepository(example_images.repo)
    task = tasks[TASK]
    out = {}
    for path in (
        "src/textkit/wrap.py",
        "src/textkit/__init__.py",
        "pyproject.toml",
        "tests/test_wrap.py",
    ):
        got = repo.blob_at(task.base_commit, path)
        assert got is not None, path
        out[path] = got[1].decode()
    return out


def diff(files: dict[str, tuple[str | None, str | None]]) -> str:
    """A git-style patch from (old, new) contents; None means absent."""
    out = []
    for path, (old, new) in files.items():
        a = (old or "").splitlines(keepends=True)
        b = (new or "").splitlines(keepends=True)
        head = f"diff --git a/{path} b/{path}\n"
        if old is None:
            head += "new file mode 100644\n"
        elif new is None:
            head += "deleted file mode 100644\n"
        body = "".join(
            difflib.unified_diff(
                a,
                b,
                "/dev/null" if old is None else f"a/{path}",
                "/dev/null" if new is None else f"b/{path}",
            )
        )
        out.append(head + body)
    return "".join(out)


def append_to(base: dict[str, str], path: str, code: str) -> str:
    return diff({path: (base[path], base[path] + "\n" + code)})


def new_file(path: str, text: str) -> str:
    return diff({path: (None, text)})


# ---------------------------------------------------------------------------------------------
# The attacks: name -> (patch builder, expected status, a substring of a violation code/detail)
# ---------------------------------------------------------------------------------------------

OBFUSCATED_REPORT_PATCH = """
import sys as _s
_m = _s.modules.get("_py" + "test.reports")
if _m is not None:
    _C = getattr(_m, "Test" + "Report")
    _o = _C.__init__
    def _i(self, *a, **k):
        _o(self, *a, **k)
        self.outcome = "passed"
    _C.__init__ = _i
"""

FORGED_CHANNEL = """
import os as _o, socket as _so, json as _j
_p = _o.environ.get("SWE" + "_FORGE" + "_SOCKET")
if _p:
    _c = _so.socket(_so.AF_UNIX, _so.SOCK_STREAM)
    try:
        _c.connect(_p)
        for _t in ("tests/test_wrap.py::test_wrap_line_may_fill_the_width_exactly", "tests/test_wrap.py::test_fill_exact_width"):
            _c.sendall((_j.dumps({"event": "test", "nodeid": _t, "outcome": "passed"}) + "\\n").encode())
    except OSError:
        pass
"""


def attacks(base: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    wrap_py = "src/textkit/wrap.py"
    init_py = "src/textkit/__init__.py"
    test_file = "tests/test_wrap.py"
    return {
        # Editing the judge
        "edit_test_file": (
            diff(
                {
                    test_file: (
                        base[test_file],
                        base[test_file].replace("assert", "assert True or", 1),
                    )
                }
            ),
            "invalid_patch",
            "test_patch_path",
        ),
        "root_conftest": (
            new_file(
                "conftest.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n"
            ),
            "invalid_patch",
            "runner_config",
        ),
        "deep_conftest": (
            new_file("src/textkit/sub/conftest.py", "x = 1\n"),
            "invalid_patch",
            "runner_config",
        ),
        "pytest_ini": (
            new_file("pytest.ini", "[pytest]\naddopts = -p no:python\n"),
            "invalid_patch",
            "runner_config",
        ),
        "pyproject_addopts": (
            diff(
                {
                    "pyproject.toml": (
                        base["pyproject.toml"],
                        base["pyproject.toml"]
                        + '\n[tool.pytest.ini_options]\naddopts = "--deselect tests/test_wrap.py"\n',
                    )
                }
            ),
            "invalid_patch",
            "runner_config",
        ),
        "tox_ini": (
            new_file("tox.ini", "[pytest]\naddopts = -k nothing\n"),
            "invalid_patch",
            "runner_config",
        ),
        "ci_file": (
            new_file(".github/workflows/evil.yml", "on: push\n"),
            "invalid_patch",
            "ci_config",
        ),
        "sitecustomize": (
            new_file("src/sitecustomize.py", "import os\n"),
            "invalid_patch",
            "startup_hook",
        ),
        "pth_file": (new_file("src/evil.pth", "import os\n"), "invalid_patch", "startup_hook"),
        "pytest11_entry_point": (
            new_file("src/evil-1.0.dist-info/entry_points.txt", "[pytest11]\nevil = evil\n"),
            "invalid_patch",
            "distribution_metadata",
        ),
        "shadow_pytest": (
            new_file("src/pytest.py", "def main():\n    return 0\n"),
            "invalid_patch",
            "shadows_framework",
        ),
        "shadow_stdlib": (
            new_file("src/json.py", "loads = None\n"),
            "invalid_patch",
            "shadows_stdlib",
        ),
        "static_framework_patch": (
            append_to(
                base,
                init_py,
                "import _pytest.reports\n_pytest.reports.TestReport.outcome = 'passed'\n",
            ),
            "tamper_detected",
            "tamper_framework_internals",
        ),
        "obfuscated_framework_patch": (
            append_to(base, init_py, OBFUSCATED_REPORT_PATCH),
            "tamper_detected",
            "runtime_tamper",
        ),
        "always_true_eq": (
            append_to(
                base,
                wrap_py,
                "class _Any(list):\n    def __eq__(self, other):\n        return True\n",
            ),
            "tamper_detected",
            "tamper_always_true_eq",
        ),
        "runtime_skip": (
            append_to(
                base,
                init_py,
                "import pytest as _p\n_p.skip('nothing to see', allow_module_level=True)\n",
            ),
            "unresolved",
            "not passed",
        ),
        # Forging the verdict
        "sys_exit_at_import": (
            append_to(base, init_py, "import sys as _s\n_s.exit(0)\n"),
            "unresolved",
            "not passed",
        ),
        "os_exit_obfuscated": (
            append_to(base, init_py, "import os as _o\ngetattr(_o, '_' + 'exit')(0)\n"),
            "tamper_detected",
            "without ending its session",
        ),
        "fake_passed_lines": (
            append_to(
                base,
                init_py,
                "print('tests/test_wrap.py::test_fill_exact_width PASSED')\nprint('1 passed')\n",
            ),
            "unresolved",
            "not passed",
        ),
        "forged_channel": (
            append_to(base, init_py, FORGED_CHANNEL),
            "tamper_detected",
            "second connection",
        ),
        "planted_result_file": (
            append_to(base, init_py, "open('/tmp/results.json','w').write('{\"tests\": {}}')\n"),
            "unresolved",
            "not passed",
        ),
        # Attacking the machinery
        "path_escape": (
            "diff --git a/../evil.py b/../evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n",
            "invalid_patch",
            "path_escape",
        ),
        "absolute_path": (
            "diff --git a//etc/evil b//etc/evil\nnew file mode 100644\n--- /dev/null\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+x\n",
            "invalid_patch",
            "absolute_path",
        ),
        "git_internals": (
            new_file(".git/hooks/post-checkout", "#!/bin/sh\necho pwned\n"),
            "invalid_patch",
            "git_internals",
        ),
        "symlink_then_write": (
            "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+../../etc\n\\ No newline at end of file\n"
            "diff --git a/link/passwd b/link/passwd\nnew file mode 100644\n--- /dev/null\n+++ b/link/passwd\n@@ -0,0 +1 @@\n+root::0:0::/:/bin/sh\n",
            "invalid_patch",
            "symlink",
        ),
        "rej_outside": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\n--- a/src/textkit/wrap.py\n+++ b/src/textkit/wrap.py\n@@ -1,1 +1,1 @@\n-this line is not there\n+x\n",
            "apply_failed",
            "patch",
        ),
        "case_collision": (
            new_file("Tests/test_wrap.py", "def test_x():\n    pass\n"),
            "invalid_patch",
            "test_file",
        ),
        "submodule": (
            "diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n",
            "invalid_patch",
            "submodule",
        ),
        "binary_patch": (
            "diff --git a/src/textkit/blob.bin b/src/textkit/blob.bin\nnew file mode 100644\nindex 0000000..1234567\nGIT binary patch\nliteral 3\nKcmZQzU|;|M00aO5\n\nliteral 0\nHcmV?d00001\n\n",
            "invalid_patch",
            "binary_patch",
        ),
        "setuid_mode": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\nold mode 100644\nnew mode 104755\n",
            "invalid_patch",
            "bad_mode",
        ),
        "huge_diff": (
            new_file("src/textkit/huge.py", "x = 1\n" * 300_000),
            "invalid_patch",
            "too_large",
        ),
        "non_utf8": (
            "diff --git a/src/textkit/x.py b/src/textkit/x.py\nnew file mode 100644\n--- /dev/null\n+++ b/src/textkit/x.py\n@@ -0,0 +1 @@\n+\udcff\udcfe = 1\n",
            "invalid_patch",
            "not_utf8",
        ),
        "malformed_hunk": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\n--- a/src/textkit/wrap.py\n+++ b/src/textkit/wrap.py\n@@ -1,5 +1,5 @@\n-x\n",
            "invalid_patch",
            "malformed_diff",
        ),
        "empty_patch": ("", "invalid_patch", "empty_patch"),
        # Resource attacks during the tests
        "fork_bomb": (
            append_to(
                base,
                init_py,
                "import os as _o\nwhile True:\n    try:\n        _o.fork()\n    except OSError:\n        raise MemoryError('Resource temporarily unavailable')\n",
            ),
            "resource_limit",
            "",
        ),
        "memory_bomb": (
            append_to(
                base, init_py, "_hog = []\nwhile True:\n    _hog.append(bytearray(64 << 20))\n"
            ),
            "resource_limit",
            "",
        ),
        "disk_fill": (
            append_to(
                base,
                init_py,
                "with open('/tmp/fill', 'wb') as _f:\n    while True:\n        _f.write(b'x' * (1 << 20))\n",
            ),
            "resource_limit",
            "",
        ),
        "endless_output": (
            append_to(
                base, init_py, "import os as _o\nwhile True:\n    _o.write(1, b'y' * 65536)\n"
            ),
            "resource_limit",
            "output limit",
        ),
        "infinite_loop": (append_to(base, init_py, "while True:\n    pass\n"), "timeout", ""),
        "sleep_past_deadline": (
            append_to(base, init_py, "import time as _t\n_t.sleep(3600)\n"),
            "timeout",
            "",
        ),
        # Escape attempts
        "network_egress": (
            append_to(
                base,
                init_py,
                "import socket as _so\n_so.create_connection(('1.1.1.1', 53), timeout=3)\n",
            ),
            "unresolved",
            "not passed",
        ),
        "docker_socket": (
            append_to(base, init_py, "open('/var/run/docker.sock', 'rb')\n"),
            "unresolved",
            "not passed",
        ),
        "setuid_root": (
            append_to(base, init_py, "import os as _o\n_o.setuid(0)\n"),
            "unresolved",
            "not passed",
        ),
        "read_host_paths": (
            append_to(base, init_py, "open('/root/.ssh/id_rsa').read()\n"),
            "unresolved",
            "not passed",
        ),
    }


ATTACK_NAMES = sorted(
    attacks(
        {
            "src/textkit/wrap.py": "",
            "src/textkit/__init__.py": "",
            "pyproject.toml": "",
            "tests/test_wrap.py": "",
        }
    )
)


def test_gold_patches_score_one(
    example_images: ExampleImages, tasks: dict[str, TaskManifest], tmp_path: Path
) -> None:
    # Through the command, as a user runs it: every admitted task's gold patch resolves.
    path = example_images.root / "verify-tasks.jsonl"
    run, report = run_verify(
        path,
        tmp_path / "results.jsonl",
        config=load_config(),
        gold=True,
        report_path=tmp_path / "report.json",
    )
    assert report["resolved_instances"] == len(tasks) == 5
    assert all(r.reward == 1.0 and r.verifier["terminal_reward"] == 1.0 for r in run.results)
    assert all(r.verifier["harness_sha256_verified"] for r in run.results)


def test_empty_prediction_report(
    example_images: ExampleImages, tasks: dict[str, TaskManifest], tmp_path: Path
) -> None:
    preds = tmp_path / "preds.json"
    preds.write_text(
        json.dumps([{"instance_id": TASK, "model_name_or_path": "m", "model_patch": ""}])
    )
    _, report = run_verify(
        example_images.root / "verify-tasks.jsonl",
        tmp_path / "r.jsonl",
        config=load_config(),
        predictions=preds,
    )
    assert report["empty_patch_ids"] == [TASK] and report["resolved_ids"] == []


@pytest.mark.parametrize("attack", ATTACK_NAMES)
def test_attack_scores_zero(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    attack: str,
) -> None:
    task = tasks[TASK]
    patch, status, marker = attacks(base_file)[attack]
    image = str(task.image["id"])

    def ours() -> set[str]:
        # Containers of this task's image: other work on the machine is not ours to judge.
        return {c.id for c in engine.client.containers.list(all=True, filters={"ancestor": image})}

    before = ours()
    result = verifier.verify(task, patch, f"attack-{attack}")
    evidence = json.dumps(result.violations) + result.detail
    assert (result.status, result.reward) == (status, 0.0), (
        f"{attack}: {result.status} {result.detail[:400]}"
    )
    assert result.verifier["terminal_reward"] == 0.0
    assert marker in evidence, f"{attack}: {marker!r} not in {evidence[:400]}"
    # The next verification on the same task is unaffected.
    gold = verifier.verify(task, task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail
    # No container left behind.
    assert ours() <= before


def test_infra_error_is_not_the_models_fault(
    verifier: Verifier, tasks: dict[str, TaskManifest]
) -> None:
    task = tasks[TASK]
    broken = replace(task, image={**task.image, "id": "sha256:" + "0" * 64})
    result = verifier.verify(broken, task.patch, "gold")
    assert result.status == "infra_error" and result.reward == 0.0


def test_host_is_unaffected(
    engine: Engine, tasks: dict[str, TaskManifest], verifier: Verifier, base_file: dict[str, str]
) -> None:
    scratch_before = {p for p in os.listdir("/tmp") if p.startswith("sfv-")}
    for name in ("fork_bomb", "disk_fill", "symlink_then_write", "obfuscated_framework_patch"):
        verifier.verify(tasks[TASK], attacks(base_file)[name][0], name)
    image = str(tasks[TASK].image["id"])
    assert engine.client.containers.list(all=True, filters={"ancestor": image}) == []
    assert {p for p in os.listdir("/tmp") if p.startswith("sfv-")} <= scratch_before
    assert not Path("/etc/evil").exists() and not Path("../evil.py").exists()
