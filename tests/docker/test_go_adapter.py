"""The Go adapter end to end on the gokit example: mine, admit, verify gold and attacks.

Attacks of each kind the issue names score 0 with a named reason: runner configuration
(go.mod replace, go.work, vendor/), forged output (test2json frames printed by the code under
test, an exit from init) and a shadowed framework (the testing package pulled into the code
under test). The forgeries are refused statically by the capability gate, and again at run
time when the task's allowance is opened to every capability (the runtime defences alone:
a test reported twice, a run that exits 0 without its packages' results, the canaries).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.ecosystems.go import CAPABILITIES
from swe_forge.engine import Engine
from swe_forge.example.polyglot import EXPECTED_GO, GO_REPO, create_go_example
from swe_forge.records import TaskManifest
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import (
    AdmittedExample,
    Edit,
    both,
    mine_and_admit,
    patch_of,
    sub,
    write,
)


@pytest.fixture(scope="module")
def gokit(tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "gokit", create_go_example)


def _id(number: int) -> str:
    return f"{GO_REPO.replace('/', '__')}-{number}"


def test_admissions_match_the_expectations(gokit: AdmittedExample) -> None:
    for number, want in EXPECTED_GO.items():
        iid = _id(number)
        if not want["candidate"]:
            assert iid not in gokit.tasks and iid not in gokit.rejected
        elif want["admitted"]:
            assert iid in gokit.tasks, gokit.rejected.get(iid)
            assert want["FAIL_TO_PASS"] == gokit.tasks[iid].FAIL_TO_PASS
        else:
            assert gokit.rejected[iid]["reason"] == want["reason"]


def test_manifest_records_the_toolchain_and_the_runner(gokit: AdmittedExample) -> None:
    task = gokit.tasks[_id(1)]
    assert task.harness["runner"] == "go-test"
    assert task.harness["module"] == "github.com/swe-forge/gokit"
    assert task.image["ecosystem"] == "go"
    # gokit's commits are of March 2024: Go 1.22 was the newest release then.
    assert task.image["toolchain"] == "go1.22.12"
    assert task.image["toolchain_source"].startswith("golang.org/toolchain@v0.0.1-go1.22.12")
    assert task.environment["env"]["GOPROXY"] == "off"
    assert task.environment["network"] == "none"
    image = task.audit["image"]
    assert image["passed"] and image["git"]["commits_reachable"] == 1
    assert task.PASS_TO_PASS  # the package's other tests
    assert all(len(r["tests"]) >= 2 for r in task.gates["runs"])


def test_no_network_and_go_env_in_the_image(gokit: AdmittedExample, engine: Engine) -> None:
    task = gokit.tasks[_id(1)]
    code, out = engine.run(
        str(task.image["id"]),
        [
            "/bin/sh",
            "-c",
            "go env GOPROXY GOFLAGS GOTOOLCHAIN && go version && git -C /testbed "
            "rev-list --all --count",
        ],
        network_disabled=True,
    )
    assert code == 0, out
    lines = out.strip().splitlines()
    assert lines[:3] == ["off", "-mod=readonly", "local"]
    assert "go1.22.12" in lines[3] and lines[4] == "1"


_IMPORTS = 'import "strings"'
_FRAME = '"\\x16--- PASS: TestTruncateExactWidth (0.00s)\\n"'
ATTACKS: dict[str, tuple[Edit, str]] = {
    # Runner configuration.
    "go_mod_replace": (
        sub("go.mod", "go 1.21\n", "go 1.21\n\nreplace golang.org/x/text => ./text\n"),
        "runner_config",
    ),
    "go_work": (write("go.work", "go 1.21\n\nuse .\n"), "runner_config"),
    "edit_test": (
        sub("strutil/strutil_test.go", 't.Fatalf("got %q", got)', "_ = got"),
        "test_patch_path",
    ),
    # Forged output.
    "frame_and_exit": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"fmt"\n\t"os"\n\t"strings"\n)'),
            sub(
                "strutil/strutil.go",
                "// Reverse returns",
                f"func init() {{\n\tfmt.Print({_FRAME})\n\tos.Exit(0)\n}}\n\n// Reverse returns",
            ),
        ),
        "capability",
    ),
    "frame_in_the_function": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"fmt"\n\t"strings"\n)'),
            sub(
                "strutil/strutil.go",
                "\tr := []rune(s)\n",
                f"\tfmt.Print({_FRAME})\n\tr := []rune(s)\n",
            ),
        ),
        "capability",
    ),
    # The framework shadowed: a vendored module, and the testing package in the code.
    "vendored_module": (
        both(
            write("vendor/modules.txt", "# golang.org/x/text v0.1.0\n## explicit\n"),
            write("vendor/golang.org/x/text/text.go", "package text\n"),
        ),
        "runner_config",
    ),
    "testing_in_the_code": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"strings"\n\t"testing"\n)'),
            sub(
                "strutil/strutil.go",
                "// Reverse returns",
                "var _ = testing.Short\n\n// Reverse returns",
            ),
        ),
        "capability",
    ),
}


def test_gold_patches_verify(gokit: AdmittedExample, verifier: Verifier) -> None:
    for task in gokit.tasks.values():
        result = verifier.verify(task, task.patch, "gold")
        assert (result.status, result.reward) == ("resolved", 1.0), result.detail
        assert result.verifier["canaries"]["run"] == 1
        assert result.verifier["canaries"]["outcomes"] == {"failed": 1}


def test_a_no_op_is_unresolved(gokit: AdmittedExample, verifier: Verifier, tmp_path: Path) -> None:
    task = gokit.tasks[_id(1)]
    noop = patch_of(gokit.repo, task.base_commit, sub("README.md", "# gokit", "# gokit!"), tmp_path)
    result = verifier.verify(task, noop, "noop")
    assert (result.status, result.reward) == ("unresolved", 0.0)
    assert result.fail_to_pass == {"strutil::TestTruncateExactWidth": "failed"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attacks_score_zero(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = gokit.tasks[_id(1)]
    edit, code = ATTACKS[name]
    patch = patch_of(gokit.repo, task.base_commit, edit, tmp_path)
    result = verifier.verify(task, patch, name)
    assert result.reward == 0.0 and result.status == "invalid_patch", result.detail
    assert code in {v["code"] for v in result.violations}, result.violations


@pytest.mark.parametrize("name", ["frame_and_exit", "frame_in_the_function", "testing_in_the_code"])
def test_runtime_defences_without_the_capability_gate(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = gokit.tasks[_id(1)]
    data = task.to_dict()
    data["audit"]["capabilities"]["base"] = sorted(CAPABILITIES)  # every capability allowed
    opened = TaskManifest.from_dict(data)
    patch = patch_of(gokit.repo, task.base_commit, ATTACKS[name][0], tmp_path)
    result = verifier.verify(opened, patch, name)
    assert result.reward == 0.0, result.detail
    assert result.status in ("tamper_detected", "unresolved"), result.detail
    if name != "testing_in_the_code":
        # The forged frames were seen for what they are.
        assert result.status == "tamper_detected", result.detail
