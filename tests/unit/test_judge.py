"""The verdict from a supervisor's answer, the capability policy, and the gate's reading of a
run: pure functions, judged on answers shaped like the supervisor's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems.python.runner import protect_spec
from swe_forge.gates.runner import RunResult, read_answer
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify import capabilities
from swe_forge.verify.judge import judge

F2P = ["tests/test_a.py::test_fix"]
P2P = ["tests/test_a.py::test_old"]
CANARY = "tests/test_a.py::test_fix_k3q0"


def task() -> TaskManifest:
    return TaskManifest.from_dict(
        {
            "instance_id": "o__r-1",
            "repo": "o/r",
            "base_commit": "0" * 40,
            "patch": "",
            "test_patch": "",
            "problem_statement": "",
            "hints_text": "",
            "created_at": "2024-01-01T00:00:00Z",
            "version": "1.0",
            "environment_setup_commit": "0" * 40,
            "FAIL_TO_PASS": F2P,
            "PASS_TO_PASS": P2P,
            "image": {},
            "harness": {},
            "gates": {},
            "license": {},
            "provenance": {},
            "audit": {},
        }
    )


def answer(**changes: Any) -> dict[str, Any]:
    """A clean run: everything passed, the canary failed, exit 0 seen and claimed."""
    base: dict[str, Any] = {
        "status": "ran",
        "exit_code": 0,
        "events": {
            "connected": True,
            "ended": True,
            "exitstatus": 0,
            "tests": {F2P[0]: "passed", P2P[0]: "passed", CANARY: "failed"},
            "collect_errors": [],
            "tamper": [],
        },
        "canary_map": {CANARY: {"test": F2P[0], "site": 0}},
        "integrity": {"changed": [], "appeared": [], "watch": []},
        "limits": {"pids_max_hits": 0, "oom_kills": 0, "full_mounts": [], "signal": None},
        "output_tail": "",
    }
    out = copy.deepcopy(base)
    if "exit_code" in changes and "events.exitstatus" not in changes:
        out["events"]["exitstatus"] = changes["exit_code"]
    for key, value in changes.items():
        if key.startswith("events."):
            out["events"][key.split(".", 1)[1]] = value
        elif key.startswith("limits."):
            out["limits"][key.split(".", 1)[1]] = value
        elif key.startswith("integrity."):
            out["integrity"][key.split(".", 1)[1]] = value
        else:
            out[key] = value
    return out


def outcomes_with(**outcomes: str) -> dict[str, str]:
    base = {F2P[0]: "passed", P2P[0]: "passed", CANARY: "failed"}
    names = {"fix": F2P[0], "old": P2P[0], "canary": CANARY}
    for short, outcome in outcomes.items():
        if outcome == "missing":
            base.pop(names[short])
        else:
            base[names[short]] = outcome
    return base


def test_a_clean_run_resolves() -> None:
    assert judge(task(), answer())[0] == "resolved"


@pytest.mark.parametrize(
    ("changes", "status", "needle"),
    [
        # outcomes
        ({"events.tests": outcomes_with(fix="failed"), "exit_code": 1}, "unresolved", "not passed"),
        ({"events.tests": outcomes_with(fix="missing")}, "unresolved", "missing"),
        ({"events.tests": outcomes_with(old="skipped")}, "unresolved", "skipped"),
        # a passing canary: an assertion that accepts anything
        (
            {"events.tests": outcomes_with(canary="passed"), "exit_code": 1},
            "tamper_detected",
            "canar",
        ),
        ({"events.tests": outcomes_with(canary="missing")}, "tamper_detected", "canar"),
        # exit status against the outcomes and the session
        ({"exit_code": 1, "events.exitstatus": 1}, "tamper_detected", "exited 1"),
        ({"exit_code": 0, "events.exitstatus": 1}, "tamper_detected", "session ended with 1"),
        ({"events.ended": False}, "tamper_detected", "without ending its session"),
        ({"events.connected": False}, "tamper_detected", "never spoke"),
        # forged events, files, watch
        ({"events.tamper": ["x was reported twice"]}, "tamper_detected", "reported twice"),
        ({"integrity.changed": ["tests/test_a.py"]}, "tamper_detected", "changed during"),
        ({"integrity.appeared": ["conftest.py"]}, "tamper_detected", "appeared"),
        ({"integrity.watch": ["conftest.py created"]}, "tamper_detected", "watch"),
        ({"integrity.too_deep": ["d/d/d"]}, "tamper_detected", "deeper"),
        ({"events.forged": 3}, "tamper_detected", "not from the harness"),
        ({"status": "judge_failed", "detail": "boom"}, "tamper_detected", "boom"),
        # the run's own end
        ({"status": "timeout"}, "timeout", "time limit"),
        ({"status": "timeout", "limits.pids_max_hits": 5}, "resource_limit", "process limit"),
        ({"status": "fork_bomb", "limits.pids_max_hits": 2000}, "resource_limit", "process"),
        ({"status": "output_limit", "output_bytes": 9}, "resource_limit", "output limit"),
        ({"status": "apply_failed"}, "test_patch_conflict", ""),
        # limits explain failures, and only failures
        (
            {"events.tests": outcomes_with(fix="failed"), "exit_code": 1, "limits.oom_kills": 1},
            "resource_limit",
            "memory limit",
        ),
        (
            {
                "events.tests": outcomes_with(fix="error"),
                "exit_code": 1,
                "limits.full_mounts": ["/tmp"],
            },
            "resource_limit",
            "/tmp full",
        ),
        ({"limits.oom_kills": 1}, "resolved", ""),
        # the tests killing their own process is no limit of ours
        (
            {"events.tests": {}, "events.ended": False, "exit_code": -9, "limits.signal": 9},
            "unresolved",
            "did not finish",
        ),
    ],
)
def test_verdicts(changes: dict[str, Any], status: str, needle: str) -> None:
    got, detail, violations = judge(task(), answer(**changes))
    assert got == status, detail
    assert needle in detail + str(violations)


def test_missing_expected_test_is_a_failure_not_a_pass() -> None:
    run = answer(**{"events.tests": outcomes_with(fix="missing"), "exit_code": 1})
    run["events"]["exitstatus"] = 1
    status, detail, _ = judge(task(), run)
    assert status == "unresolved" and "missing" in detail


def test_calibration_does_not_judge_canaries() -> None:
    run = answer(**{"events.tests": outcomes_with(canary="passed")})
    assert judge(task(), run, strict_canaries=False)[0] == "resolved"


# ---------------------------------------------------------------------------------------------
# capability policy
# ---------------------------------------------------------------------------------------------

SCAN = {
    "pkg/a.py": {
        "pre": ["threads"],
        "post": {"threads": [[3, "threading.Thread"]], "gc_access": [[9, "gc.get_objects"]]},
        "error": "",
    },
    "pkg/b.py": {"pre": [], "post": {"sockets": [[1, "socket.socket"]]}, "error": ""},
    "pkg/c.py": {"pre": [], "post": {}, "error": "SyntaxError: invalid syntax (line 2)"},
    "pkg/d.py": {"pre": [], "post": {}, "error": "RecursionError: maximum recursion depth"},
}


def test_introduced_is_post_minus_pre_and_unreadable_files_count() -> None:
    got = capabilities.introduced(SCAN)
    assert sorted(got) == ["pkg/a.py", "pkg/b.py", "pkg/d.py"]
    assert list(got["pkg/a.py"]) == ["gc_access"] and list(got["pkg/d.py"]) == ["unscannable"]
    assert capabilities.introduced_names(SCAN) == ["gc_access", "sockets", "unscannable"]


def test_violations_by_scope() -> None:
    codes = {v["code"] for v in capabilities.violations(SCAN, base=set(), gold=set(), scope="file")}
    assert codes == {"capability_gc_access", "capability_sockets", "capability_unscannable"}
    repo = capabilities.violations(SCAN, base={"sockets"}, gold={"gc_access"}, scope="repository")
    assert [v["code"] for v in repo] == ["capability_unscannable"]
    # The base excuses nothing at file scope; the gold patch always does; nothing excuses an
    # unscannable file.
    file_scope = capabilities.violations(
        SCAN, base={"sockets", "gc_access"}, gold={"unscannable"}, scope="file"
    )
    assert {v["code"] for v in file_scope} == {
        "capability_gc_access",
        "capability_sockets",
        "capability_unscannable",
    }


def test_base_capabilities_count_source_files_only() -> None:
    per_file = {"pkg/a.py": ["threads"], "docs/conf.py": ["dynamic_code"], "noxfile.py": ["x"]}
    classifier = PathClassifier(load_config().classify)

    def is_source(path: str) -> bool:
        return classifier.classify(path).value == "source"

    assert capabilities.base_capabilities(per_file, is_source) == ["threads"]


# ---------------------------------------------------------------------------------------------
# what the supervisor locks; how a gate run is read
# ---------------------------------------------------------------------------------------------


def test_protect_spec_locks_test_paths_and_their_trees() -> None:
    patch = (
        "diff --git a/pkg/tests/unit/test_x.py b/pkg/tests/unit/test_x.py\n"
        "--- a/pkg/tests/unit/test_x.py\n+++ b/pkg/tests/unit/test_x.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/test_top.py b/test_top.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/test_top.py\n@@ -0,0 +1 @@\n+x = 1\n"
    )
    spec = protect_spec(patch, PathClassifier(load_config().classify))
    assert spec == {"files": ["pkg/tests/unit/test_x.py", "test_top.py"], "trees": ["pkg/tests"]}


def gate_answer(**changes: Any) -> dict[str, Any]:
    out = answer(**changes)
    out.pop("canary_map")
    if "events.tests" not in changes:
        out["events"]["tests"].pop(CANARY)  # gates run no canaries
    return out


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({}, "ok"),
        ({"exit_code": 1, "events.exitstatus": 1, "events.tests": {F2P[0]: "failed"}}, "ok"),
        ({"exit_code": 1, "events.exitstatus": 1}, "harness_disagreement"),
        ({"exit_code": 0, "events.exitstatus": 1}, "harness_disagreement"),
        ({"events.tests": {F2P[0]: "failed"}}, "harness_disagreement"),
        ({"events.ended": False}, "no_report"),
        ({"limits.oom_kills": 1}, "resource_limit"),
        ({"status": "fork_bomb"}, "resource_limit"),
        ({"status": "timeout"}, "timeout"),
        ({"status": "apply_failed", "failed_patch": "gold"}, "gold_patch_failed"),
        ({"status": "apply_failed", "failed_patch": "test"}, "test_patch_failed"),
    ],
)
def test_gate_run_reading(changes: dict[str, Any], status: str) -> None:
    result = read_answer(RunResult("after", 0, 1, "ok", None, 0.0), gate_answer(**changes))
    assert result.status == status


def test_gate_run_keeps_tamper_evidence() -> None:
    run = read_answer(
        RunResult("after", 0, 1, "ok", None, 0.0),
        gate_answer(**{"integrity.appeared": ["conftest.py"], "events.tamper": ["fingerprint"]}),
    )
    assert "fingerprint" in run.tampered and "conftest.py appeared" in run.tampered


def test_gate_run_keeps_failure_messages_bounded_and_out_of_the_manifest() -> None:
    answer = gate_answer(**{"events.messages": {F2P[0]: "assert 1 == 2" + "x" * 5000}})
    run = read_answer(RunResult("after", 0, 1, "ok", None, 0.0), answer)
    assert run.messages[F2P[0]].startswith("assert 1 == 2") and len(run.messages[F2P[0]]) == 1000
    assert "messages" not in run.to_dict()


# ---------------------------------------------------------------------------------------------
# pytest settings, parsed before and after
# ---------------------------------------------------------------------------------------------

PYPROJECT = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


@pytest.mark.parametrize(
    ("path", "before", "after", "refused"),
    [
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"x"', '"y"'), False),
        ("pyproject.toml", PYPROJECT, PYPROJECT + '"\\u0061ddopts" = "-p evil"\n', True),
        ("pyproject.toml", PYPROJECT, PYPROJECT + 'pythonpath = ["src"]\n', True),
        ("pyproject.toml", PYPROJECT, PYPROJECT + '\n[tool."pytest"]\nx = 1\n', True),
        ("src/pyproject.toml", None, '[tool."pytest".ini_options]\naddopts = "-x"\n', True),
        ("pyproject.toml", PYPROJECT, PYPROJECT + "[[[broken\n", True),
        ("setup.cfg", "[metadata]\nname = x\n", "[metadata]\nname = y\n", False),
        ("setup.cfg", "[tool:pytest]\naddopts = -x\n", "[tool:pytest]\naddopts = -p evil\n", True),
        # an indented bracket is a continuation line to pytest's parser, not a new section
        (
            "setup.cfg",
            "[tool:pytest]\ntestpaths = t\n",
            "[tool:pytest]\ntestpaths = t\n  [x]\naddopts = -p e\n",
            True,
        ),
        ("tox.ini", "[tox]\nenv = a\n", "[tox]\nenv = b\n", False),
        (
            "setup.cfg",
            "[options]\ntests_require = pytest\n",
            "[options]\ntests_require = pytest>=7\n",
            False,
        ),
    ],
)
def test_runner_settings_changes(path: str, before: str | None, after: str, refused: bool) -> None:
    from swe_forge.ecosystems.python.pytest_settings import runner_settings_changes

    found = runner_settings_changes({path: {"before": before, "after": after}})
    assert bool(found) is refused, found


@pytest.mark.parametrize(
    ("failed", "status"),
    [
        # the copy's subtest (copier-70: a copy of a t.Run test), or the parent of a copied one
        ("p::TestCopy/should_work", "resolved"),
        ("p::TestSub", "resolved"),
        ("p::TestSub/y", "resolved"),
        # a JUnit parameterized copy: the method's summary fails with its invocation
        ("o.CTest::m(String)", "resolved"),
        # a failure that is no canary's, even one whose name starts like a canary's
        ("p::TestCopyX", "tamper_detected"),
        ("p::TestOther", "tamper_detected"),
        ("o.CTest::n(String)", "tamper_detected"),
    ],
)
def test_another_runner_s_exit_status_allows_the_canaries_own_subtests(
    failed: str, status: str
) -> None:
    canaries = {
        "p::TestCopy": {"test": F2P[0], "site": 0},
        "p::TestSub/x": {"test": F2P[0], "site": 1},
        "o.CTest::m(String)[2]": {"test": F2P[0], "site": 2},
    }
    tests = {F2P[0]: "passed", P2P[0]: "passed", failed: "failed"} | dict.fromkeys(
        canaries, "failed"
    )
    run = answer(
        **{"events.tests": tests, "exit_code": 1, "canary_map": canaries, "raw_exit_code": 1}
    )
    assert judge(task(), run)[0] == status


@pytest.mark.parametrize(("other_runner", "named"), [(True, "the test runner"), (False, "pytest")])
def test_the_exit_status_verdict_names_the_runner_that_exited(
    other_runner: bool, named: str
) -> None:
    # A Go, Rust, JS or Java verdict said "pytest exited 2", which sent readers to the wrong tool.
    tests = {F2P[0]: "passed", P2P[0]: "passed", CANARY: "failed"}
    extra = {"raw_exit_code": 2} if other_runner else {}
    run = answer(**{"events.tests": tests, "exit_code": 2, **extra})
    status, detail, violations = judge(task(), run)
    assert status == "tamper_detected"
    assert detail.endswith(f"but {named} exited 2"), detail
    assert violations == [{"code": "exit_status_disagrees", "detail": f"{named} exited 2"}]
