"""Classification of the 6 gate runs into FAIL_TO_PASS / PASS_TO_PASS / reasons."""

from __future__ import annotations

from swe_forge.ecosystems.python.scope import PatchScope
from swe_forge.gates.gate import GateSettings, classify
from swe_forge.gates.runner import RunResult

FILES = ["tests/test_a.py"]


def runs(
    before: list[dict[str, str]],
    after: list[dict[str, str]],
    after_errors: dict[str, str] | None = None,
    before_errors: dict[str, str] | None = None,
) -> list[RunResult]:
    out = []
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        out.append(
            RunResult(
                "before", i, 100 + i, "ok", 1, 0.1, tests=b, collect_errors=before_errors or {}
            )
        )
        out.append(
            RunResult("after", i, 200 + i, "ok", 0, 0.1, tests=a, collect_errors=after_errors or {})
        )
    return out


A, B, C = "tests/test_a.py::test_fix", "tests/test_a.py::test_old", "tests/test_a.py::test_p[1-2]"


def test_f2p_and_p2p() -> None:
    before = [{A: "failed", B: "passed", C: "passed"}] * 3
    after = [{A: "passed", B: "passed", C: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.admitted and v.fail_to_pass == [A] and v.pass_to_pass == [B, C]


def test_missing_or_error_before_counts_as_failing() -> None:
    before = [{B: "passed"}, {A: "error", B: "passed"}, {B: "passed"}]
    after = [{A: "passed", B: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.admitted and v.fail_to_pass == [A]


def test_no_fail_to_pass() -> None:
    both = [{A: "passed"}] * 3
    v = classify(runs(both, both), GateSettings(), FILES)
    assert not v.admitted and v.reason == "no_fail_to_pass"


def test_runs_that_report_no_test_are_no_test_report() -> None:
    """pytest given JavaScript files (exit 4, nothing collected) in every run: the runner ran
    nothing, which is not the PR's no_fail_to_pass (tj/commander.js, first contact)."""
    empty: list[dict[str, str]] = [{}] * 3
    made = runs(empty, empty)
    for r in made:
        r.exit_code = 4
    v = classify(made, GateSettings(), FILES)
    assert not v.admitted and v.reason == "no_test_report"
    assert "exit codes 4" in v.detail
    # A file that cannot be collected is a report: that stays the collection error it is.
    v = classify(runs(empty, empty, after_errors={FILES[0]: "error"}), GateSettings(), FILES)
    assert v.reason == "collection_error"


def test_flaky_after_rejects() -> None:
    before = [{A: "failed"}] * 3
    after = [{A: "passed"}, {A: "failed"}, {A: "passed"}]
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.reason == "flaky_test" and v.flaky == [A]
    # Even with the lenient policy: a flaky test that would be FAIL_TO_PASS rejects.
    v = classify(runs(before, after), GateSettings(flaky_policy="drop"), FILES)
    assert v.reason == "flaky_test"


def test_flaky_pass_to_pass_dropped_by_default_with_evidence() -> None:
    before = [{A: "failed", B: "passed"}, {A: "failed", B: "failed"}, {A: "failed", B: "passed"}]
    after = [{A: "passed", B: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.admitted and v.fail_to_pass == [A] and v.pass_to_pass == [] and v.flaky == [B]
    assert v.dropped_flaky == [
        {"test": B, "before": ["passed", "failed", "passed"], "after": ["passed"] * 3}
    ]
    assert v.evidence()["dropped_flaky"] == v.dropped_flaky
    # The strict policy rejects the task for it.
    strict = classify(runs(before, after), GateSettings(flaky_policy="reject"), FILES)
    assert strict.reason == "flaky_test" and not strict.dropped_flaky


# The test patch added an import of a new name at the top of tests/test_a.py (so the module
# cannot be collected before the fix) and one new test, A.
ADDS_A = PatchScope(modules=frozenset({"tests/test_a.py"}), changed=frozenset({A}))
COLLECT = {"tests/test_a.py": "error"}


def test_collection_error_before_does_not_make_every_test_fail_to_pass() -> None:
    before: list[dict[str, str]] = [{}] * 3  # nothing of the module ran
    after = [{A: "passed", B: "passed", C: "passed"}] * 3
    v = classify(runs(before, after, before_errors=COLLECT), GateSettings(), FILES, ADDS_A)
    assert v.admitted and v.fail_to_pass == [A] and v.pass_to_pass == []
    assert v.not_fail_to_pass == {B: "collection_error", C: "collection_error"}
    assert v.collection_errors_before == {"tests/test_a.py": [1, 2, 3]}
    # Without the filter (or without a scope) every test of the module is FAIL_TO_PASS.
    everything = GateSettings(fail_to_pass_scope="all")
    v = classify(runs(before, after, before_errors=COLLECT), everything, FILES, ADDS_A)
    assert v.fail_to_pass == [A, B, C] and not v.not_fail_to_pass
    assert classify(
        runs(before, after, before_errors=COLLECT), GateSettings(), FILES
    ).fail_to_pass == [A, B, C]


def test_a_test_the_patch_does_not_touch_is_left_out_even_without_collection_error() -> None:
    before = [{A: "failed", B: "failed"}] * 3
    after = [{A: "passed", B: "passed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES, ADDS_A)
    assert v.fail_to_pass == [A] and v.not_fail_to_pass == {B: "failed"}


def test_nothing_left_after_filtering_is_no_fail_to_pass() -> None:
    before: list[dict[str, str]] = [{}] * 3
    after = [{B: "passed", C: "passed"}] * 3
    v = classify(runs(before, after, before_errors=COLLECT), GateSettings(), FILES, ADDS_A)
    assert not v.admitted and v.reason == "no_fail_to_pass"
    assert v.not_fail_to_pass == {B: "collection_error", C: "collection_error"}
    assert "test patch" in v.detail


def test_flaky_outside_the_patch_in_an_uncollectable_module_is_dropped() -> None:
    # As seen on a real project: the module cannot be imported before the fix, and an
    # order-dependent test the patch does not touch is flaky after it.
    before: list[dict[str, str]] = [{}] * 3
    after = [{A: "passed", B: "failed"}, {A: "passed", B: "passed"}, {A: "passed", B: "passed"}]
    v = classify(runs(before, after, before_errors=COLLECT), GateSettings(), FILES, ADDS_A)
    assert v.admitted and v.fail_to_pass == [A]
    assert v.dropped_flaky == [
        {"test": B, "before": ["missing"] * 3, "after": ["failed", "passed", "passed"]}
    ]
    # A flaky test the patch adds is the task's own: rejected, whatever the policy.
    before = [{A: "failed"}] * 3
    after = [{A: "passed"}, {A: "passed"}, {A: "failed"}]
    v = classify(runs(before, after), GateSettings(), FILES, ADDS_A)
    assert v.reason == "flaky_test" and "FAIL_TO_PASS candidates" in v.detail


def test_pass_to_fail_rejects() -> None:
    before = [{A: "failed", B: "passed"}] * 3
    after = [{A: "passed", B: "failed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.reason == "pass_to_fail" and B in v.detail


def test_collection_error_after_rejects() -> None:
    before = [{}] * 3
    after = [{}] * 3
    v = classify(runs(before, after, {"tests/test_a.py": "error"}), GateSettings(), FILES)
    assert v.reason == "collection_error"


def test_xfail_and_skip_are_not_passes() -> None:
    before = [{A: "failed", B: "skipped"}] * 3
    after = [{A: "passed", B: "xpassed"}] * 3
    v = classify(runs(before, after), GateSettings(), FILES)
    assert v.fail_to_pass == [A] and B not in v.pass_to_pass


def test_a_collection_error_after_the_fix_says_which_error() -> None:
    both = [{B: "passed"}] * 3
    out = runs(both, both, after_errors={"tests/test_a.py": "error"})
    for r in out:
        if r.phase == "after":
            r.messages = {
                "tests/test_a.py": "Traceback:\ntests/test_a.py:13: in <module>\n"
                "    import marshmallow as ma\n"
                "E   ModuleNotFoundError: No module named 'marshmallow'"
            }
    v = classify(out, GateSettings(), FILES)
    assert v.reason == "collection_error"
    assert v.detail == (
        "cannot collect after the fix: tests/test_a.py "
        "(ModuleNotFoundError: No module named 'marshmallow')"
    )


def test_baseline_runs_add_pass_to_pass_of_a_package_that_did_not_build_before() -> None:
    from swe_forge.ecosystems.go.adapter import GoScope

    before = [
        RunResult("before", i, i, "ok", 1, 0.1, tests={}, collect_errors={"pkg": "error"})
        for i in range(3)
    ]
    after = [
        RunResult(
            "after",
            i,
            10 + i,
            "ok",
            0,
            0.1,
            tests={"pkg::TestNew": "passed", "pkg::TestOld": "passed", "pkg::TestFlip": "passed"},
        )
        for i in range(3)
    ]
    base = [
        RunResult(
            "base",
            i,
            20 + i,
            "ok",
            1 if i == 2 else 0,
            0.1,
            tests={"pkg::TestOld": "passed", "pkg::TestFlip": "failed" if i == 2 else "passed"},
        )
        for i in range(3)
    ]
    scope = GoScope(frozenset({("pkg", "TestNew")}), frozenset())
    verdict = classify(before + after + base, GateSettings(), ["pkg/a_test.go"], scope)
    assert verdict.admitted and verdict.fail_to_pass == ["pkg::TestNew"]
    # TestOld passes at the base (no test patch) and after the fix every time; TestFlip does
    # not pass in every baseline run; TestNew is the test patch's own.
    assert verdict.pass_to_pass == ["pkg::TestOld"]
    assert [r.phase for r in verdict.runs].count("base") == 3
    # Without baseline runs, nothing of the package is PASS_TO_PASS.
    assert classify(before + after, GateSettings(), ["pkg/a_test.go"], scope).pass_to_pass == []


def test_baseline_keeps_tests_reached_only_through_a_changed_helper_out_of_fail_to_pass() -> None:
    from swe_forge.ecosystems.go.adapter import GoScope

    before = [
        RunResult("before", i, i, "ok", 1, 0.1, tests={}, collect_errors={"pkg": "error"})
        for i in range(3)
    ]
    after_tests = {
        "pkg::TestNew": "passed",
        "pkg::TestTable": "passed",
        "pkg::TestTable/#00": "passed",
        "pkg::TestTable/#01": "passed",  # a case the patch adds to the table
    }
    after = [RunResult("after", i, 10 + i, "ok", 0, 0.1, tests=after_tests) for i in range(3)]
    base_tests = {"pkg::TestTable": "passed", "pkg::TestTable/#00": "passed"}
    base = [RunResult("base", i, 20 + i, "ok", 0, 0.1, tests=base_tests) for i in range(3)]
    scope = GoScope(
        frozenset({("pkg", "TestNew"), ("pkg", "TestTable")}),
        frozenset(),
        frozenset({("pkg", "TestNew")}),  # TestTable only through its changed table
    )
    verdict = classify(before + after + base, GateSettings(), ["pkg/a_test.go"], scope)
    assert verdict.fail_to_pass == ["pkg::TestNew", "pkg::TestTable/#01"]
    assert verdict.pass_to_pass == ["pkg::TestTable", "pkg::TestTable/#00"]
    assert verdict.not_fail_to_pass["pkg::TestTable/#00"] == "passes_at_base"


def test_index_named_subtests_of_a_changed_test_that_pass_at_base_are_not_fail_to_pass() -> None:
    # First contact (spf13/cast-271): the package did not build before the fix, and the test
    # patch inserted rows into a table test whose cases have no names (`TestBool/#05`). The
    # test's own function changed, so every case was "directly" covered: 1,180 of its 1,666
    # FAIL_TO_PASS passed at the base under the same (renumbered) ids.
    from swe_forge.ecosystems.go.adapter import GoScope

    before = [
        RunResult("before", i, i, "ok", 1, 0.1, tests={}, collect_errors={"pkg": "error"})
        for i in range(3)
    ]
    after_tests = {
        "pkg::TestBool": "passed",
        "pkg::TestBool/#00": "passed",
        "pkg::TestBool/#01": "passed",  # the row the patch inserts
        "pkg::TestBool/#02": "passed",  # the old #01, renumbered
        "pkg::TestBool/named": "passed",
    }
    after = [RunResult("after", i, 10 + i, "ok", 0, 0.1, tests=after_tests) for i in range(3)]
    base_tests = {
        "pkg::TestBool": "passed",
        "pkg::TestBool/#00": "passed",
        "pkg::TestBool/#01": "passed",
        "pkg::TestBool/named": "passed",
    }
    base = [RunResult("base", i, 20 + i, "ok", 0, 0.1, tests=base_tests) for i in range(3)]
    scope = GoScope(frozenset({("pkg", "TestBool")}), frozenset())
    verdict = classify(before + after + base, GateSettings(), ["pkg/a_test.go"], scope)
    # The named case and the test itself are the changed function's own; of the cases named
    # by their index, only the one the base does not have is new.
    assert verdict.fail_to_pass == ["pkg::TestBool", "pkg::TestBool/#02", "pkg::TestBool/named"]
    assert verdict.not_fail_to_pass["pkg::TestBool/#01"] == "passes_at_base"
    assert scope.covers_directly("pkg::TestBool/named")
    assert not scope.covers_directly("pkg::TestBool/#01")
    assert not scope.covers_directly("pkg::TestBool/case#01/x")


def test_subtests_in_flight_at_a_crash_are_not_flaky() -> None:
    # First contact (spf13/cast-273): every before run panics (the bug), and the parallel
    # subtests running at that moment are reported failed, a different set each run. They
    # passed in another before run: not FAIL_TO_PASS, and not flaky either; the panicking
    # test, failed in every run, is the task.
    def before(i: int, tests: dict[str, str]) -> RunResult:
        return RunResult("before", i, i, "ok", 1, 0.1, tests=tests, crashed=["."])

    runs = [
        before(0, {".::TestNil": "failed", ".::TestString/#00": "passed"}),
        before(1, {".::TestNil": "failed", ".::TestString/#00": "failed"}),
        before(2, {".::TestNil": "failed", ".::TestString/#00": "failed"}),
        *[
            RunResult(
                "after",
                i,
                9,
                "ok",
                0,
                0.1,
                tests={".::TestNil": "passed", ".::TestString/#00": "passed"},
            )
            for i in range(3)
        ],
    ]
    verdict = classify(runs, GateSettings(), ["cast_test.go"])
    assert verdict.admitted, verdict.detail
    assert verdict.fail_to_pass == [".::TestNil"] and verdict.flaky == []
    # Without the crash the same outcomes are flaky (a scope that owns the subtest: rejected).
    for r in runs:
        r.crashed = []
    assert classify(runs, GateSettings(), ["cast_test.go"]).flaky == [".::TestString/#00"]


def test_tests_a_crashed_run_did_not_reach_are_not_flaky() -> None:
    # Before the fix a test panics and the Go test binary stops there: where the shuffle put
    # the other tests decides whether they ran. They are not flaky for it.
    def before(i: int, tests: dict[str, str]) -> RunResult:
        return RunResult("before", i, i, "ok", 1, 0.1, tests=tests, crashed=["pkg"])

    runs = [
        before(0, {"pkg::TestFix": "failed", "pkg::TestOther": "passed"}),
        before(1, {"pkg::TestFix": "failed"}),  # TestOther never ran
        before(2, {"pkg::TestOther": "passed", "pkg::TestFix": "failed"}),
        *[
            RunResult(
                "after",
                i,
                9,
                "ok",
                0,
                0.1,
                tests={"pkg::TestFix": "passed", "pkg::TestOther": "passed"},
            )
            for i in range(3)
        ],
    ]
    verdict = classify(runs, GateSettings(), ["pkg/a_test.go"])
    assert verdict.flaky == [] and verdict.admitted
    assert verdict.fail_to_pass == ["pkg::TestFix"]
    assert runs[0].to_dict()["crashed"] == ["pkg"]
    assert "crashed" not in RunResult("after", 0, 0, "ok", 0, 0.1).to_dict()


def test_a_test_that_crashed_its_binary_before_the_fix_is_fail_to_pass() -> None:
    """hyperium/http-838: the new test aborts its binary in every run before the fix (the
    parser names it failed: the one test in flight); after the fix it passes. It is
    FAIL_TO_PASS; the tests the crash kept from running are neither pass nor fail."""
    crasher, other, later = "tests/h.rs::double_drop", "tests/h.rs::x", "tests/h.rs::y"
    out = []
    for i in range(3):
        out.append(
            RunResult(
                "before",
                i,
                i,
                "ok",
                1,
                0.1,
                tests={other: "passed", crasher: "failed"},
                collect_errors={"tests/h.rs": "error"},
                crashed=["tests/h.rs"],
            )
        )
        out.append(
            RunResult(
                "after",
                i,
                10 + i,
                "ok",
                0,
                0.1,
                tests={other: "passed", crasher: "passed", later: "passed"},
            )
        )
    v = classify(out, GateSettings(), ["tests/h.rs"])
    assert v.admitted and v.fail_to_pass == [crasher], (v.reason, v.detail)
    assert later not in v.flaky
