"""The twins' plan and the verdict of a decoy (verify/twins.py)."""

from __future__ import annotations

import random

from swe_forge.verify.twins import MAX_DECOYS, TwinPlan, armed_entries, decoy_verdict, plan_twins


def _entry(test: str, site: int, seed: int, unit: str = "") -> dict[str, object]:
    return {"test": test, "site": site, "seed": seed, "unit": unit}


def test_one_honest_twin_among_decoys_in_a_random_order() -> None:
    armed = [_entry("t::a", k, s) for k in range(3) for s in (1, 2)]
    seen = set()
    for seed in range(40):
        plan = plan_twins(armed, 2, random.Random(seed))
        assert len(plan.twins) == 3 and plan.twins.count(None) == 1
        assert len(plan.decoys) == 2 and plan.honest not in plan.decoys
        decoys = [plan.twins[i] for i in plan.decoys]
        assert all(d in armed for d in decoys) and decoys[0] != decoys[1]
        seen.add(plan.honest)
    assert seen == {0, 1, 2}  # the honest twin is anywhere


def test_every_unit_gets_a_decoy_before_any_gets_a_second() -> None:
    armed = [_entry(f"{u}::T{n}", 0, n, unit=u) for u in ("a", "b", "c", "d") for n in range(3)]
    for seed in range(20):
        plan = plan_twins(armed, 2, random.Random(seed))
        decoys = [plan.twins[i] for i in plan.decoys]
        assert len(decoys) == 4  # more units than decoys asked for: one each
        assert {d["unit"] for d in decoys if d} == {"a", "b", "c", "d"}


def test_tests_of_a_unit_are_covered_before_one_gets_two() -> None:
    armed = [_entry("x::A", k, k) for k in range(5)] + [_entry("x::B", 0, 9)]
    for seed in range(20):
        decoys = [
            plan.twins[i]
            for plan in [plan_twins(armed, 2, random.Random(seed))]
            for i in plan.decoys
        ]
        assert {d["test"] for d in decoys if d} == {"x::A", "x::B"}


def test_decoys_are_capped_never_repeated_and_absent_without_armed_entries() -> None:
    armed = [_entry(f"u{n}::T", 0, n, unit=f"u{n}") for n in range(10)]
    assert len(plan_twins(armed, 2, random.Random(1)).decoys) == MAX_DECOYS
    one = plan_twins([_entry("t::a", 0, 1)], 3, random.Random(1))
    assert len(one.decoys) == 1
    assert plan_twins([], 2, random.Random(1)).twins == [None]
    assert plan_twins(armed, 0, random.Random(1)).twins == [None]


def test_armed_entries_of_a_manifest() -> None:
    harness = {"canaries": {"armed": [_entry("t::a", 0, 1), ["old", 0], {"test": "x"}]}}
    assert armed_entries(harness) == [_entry("t::a", 0, 1)]
    assert armed_entries({}) == []


def test_a_decoy_must_fail() -> None:
    ran = {"status": "ran", "integrity": {}, "events": {}}
    assert decoy_verdict({**ran, "exit_code": 1}) == "failed"
    assert decoy_verdict({**ran, "exit_code": 0}) == "passed"
    assert decoy_verdict({"status": "timeout", "exit_code": None}) == "failed"
    assert decoy_verdict({"status": "build_failed", "exit_code": None}) == "failed"
    touched = {**ran, "exit_code": 1, "integrity": {"changed": ["tests/test_x.py"]}}
    assert decoy_verdict(touched) == "tampered"
    forged = {**ran, "exit_code": 1, "events": {"forged": 2}}
    assert decoy_verdict(forged) == "tampered"


def test_a_plan_knows_where_its_honest_twin_is() -> None:
    plan = TwinPlan([{"test": "a"}, None, {"test": "b"}])
    assert plan.honest == 1 and plan.decoys == [0, 2]


def test_every_kind_of_assertion_gets_a_decoy() -> None:
    # A patched pytest.raises fools only the decoys of raises sites: one test with many
    # comparisons and one raises site still gets a raises decoy in every plan.
    armed = [{**_entry("t::a", k, k), "kind": "compare"} for k in range(8)]
    armed += [
        {**_entry("t::a", 8, 1), "kind": "raises"},
        {**_entry("t::b", 0, 2), "kind": "approx"},
    ]
    for seed in range(30):
        plan = plan_twins(armed, 2, random.Random(seed))
        kinds = {plan.twins[i]["kind"] for i in plan.decoys}  # type: ignore[index]
        assert kinds == {"compare", "raises", "approx"}, seed  # three kinds: three decoys


def test_another_languages_literal_kinds_are_covered_within_the_decoys_asked_for() -> None:
    def site(kind: str) -> dict[str, object]:
        return {"kind": kind, "path": "x_test.go"}

    armed = [{"test": f"T{n}", "site": site("string"), "seed": n, "unit": "p"} for n in range(6)]
    armed += [{"test": "T9", "site": site("int"), "seed": 9, "unit": "p"}]
    for seed in range(30):
        plan = plan_twins(armed, 2, random.Random(seed))
        decoys = [plan.twins[i] for i in plan.decoys]
        assert len(decoys) == 2  # literal kinds do not add decoys...
        assert {d["site"]["kind"] for d in decoys if d} == {"string", "int"}  # ...but are covered
