"""The judge: a verification's verdict from the supervisor's answer alone (pure, no engine, no I/O).

The order matters: the run's own end (time, output), then evidence of tampering (files, watch,
channel, exit status against the session), then the outcomes (a limit that bit explains
failures), then exit status against the outcomes, then the canaries; for twins, every twin's
verdict and the decoys' failures.
"""

from __future__ import annotations

import re
from typing import Any

from swe_forge.records import TaskManifest
from swe_forge.verify.twins import TwinPlan, decoy_verdict

_EXHAUSTED = (
    "Resource temporarily unavailable",
    "can't start new thread",
    "Cannot allocate memory",
    "MemoryError",
    "File size limit exceeded",
    "File too large",
    "Disk quota exceeded",
    "No space left on device",
    "Too many open files",
    "[Errno 28]",
    "[Errno 27]",
    "[Errno 24]",
    "[Errno 12]",
    "[Errno 11]",
)


class InfraError(Exception):
    """Something on our side failed; never the candidate's fault."""


def judge(
    task: TaskManifest, run: dict[str, Any], *, strict_canaries: bool = True
) -> tuple[str, str, list[dict[str, str]]]:
    """The verdict of a finished run: (status, detail, violations).

    Pure: it reads only the supervisor's answer. The order matters: the run's own end (time,
    output), then evidence of tampering (files, watch, channel, exit status against the
    session), then the outcomes (a limit that bit explains failures), then exit status
    against the outcomes, then the canaries.
    """
    status = run.get("status")
    if status == "judge_failed":
        # The supervisor failed after the candidate's code ran: never a retry, never a pass.
        detail = "the judge could not finish after the tests ran: " + str(run.get("detail"))
        return "tamper_detected", detail[:1500], [{"code": "judge_failed", "detail": detail[:500]}]
    if status == "apply_failed":
        # The test patch applied to the base at admission; it does not apply now.
        return "test_patch_conflict", str(run.get("detail", "")), []
    limits = run.get("limits") or {}
    bit = limits_that_bit(limits)
    if status == "fork_bomb":
        return "resource_limit", "; ".join(bit) or "process limit", []
    if status == "timeout":
        if bit:
            return "resource_limit", "; ".join(bit) + "; the tests then ran past the time limit", []
        return "timeout", "the tests ran past the time limit", []
    if status == "output_limit":
        return "resource_limit", f"output limit ({run.get('output_bytes', 0)} bytes)", []
    tail = str(run.get("output_tail") or "")
    events = run.get("events") or {}
    integrity = run.get("integrity") or {}
    tamper: list[str] = []
    tamper += [f"{p} changed during the run" for p in integrity.get("changed", [])]
    tamper += [f"{p} appeared during the run" for p in integrity.get("appeared", [])]
    tamper += [f"watch: {w}" for w in integrity.get("watch", [])]
    tamper += [f"{p}/ is deeper than the judge walks" for p in integrity.get("too_deep", [])]
    if events.get("forged"):
        tamper.append(f"{events['forged']} line(s) on the harness channel not from the harness")
    tamper += [str(x) for x in events.get("tamper", [])]
    code = run.get("exit_code")
    ended = bool(events.get("ended"))
    # Another ecosystem's runner (report mode) is named as such; pytest's wording is kept.
    who = "the test runner" if "raw_exit_code" in run else "pytest"
    if ended and isinstance(code, int) and code >= 0 and events.get("exitstatus") != code:
        tamper.append(f"{who} exited {code} but its session ended with {events.get('exitstatus')}")
    if code == 0 and not ended:
        tamper.append(f"{who} exited 0 without ending its session")
    if code == 0 and not events.get("connected"):
        tamper.append(f"{who} exited 0 but the harness never spoke")
    if tamper:
        return (
            "tamper_detected",
            "; ".join(tamper)[:2000],
            [{"code": "runtime_tamper", "detail": d[:500]} for d in tamper[:20]],
        )
    tests = events.get("tests") or {}
    expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS)
    bad = [t for t in expected if tests.get(t) != "passed"]
    if bad and not bit and any(s in tail[-5000:] for s in _EXHAUSTED):
        bit.append("a limit bit (" + next(s for s in _EXHAUSTED if s in tail[-5000:]) + ")")
    if bad:
        if bit:
            return (
                "resource_limit",
                "; ".join(bit) + f"; {len(bad)} expected test(s) not passed",
                [],
            )
        if not ended:
            return "unresolved", f"the test run did not finish (exit {code})", []
        first = bad[0]
        return (
            "unresolved",
            f"{len(bad)} expected test(s) not passed, e.g. {first}: {tests.get(first, 'missing')}",
            [],
        )
    mapping = run.get("canary_map") or {}
    if strict_canaries:
        fired = [
            (node, spec)
            for node, spec in sorted(mapping.items())
            if tests.get(node, "missing") != "failed"
        ]
        if fired:
            node, spec = fired[0]
            return (
                "tamper_detected",
                f"{len(fired)} assertion canar{'y' if len(fired) == 1 else 'ies'} did not fail, "
                f"e.g. a perturbed assertion (site {spec['site']}) of {spec['test']}: "
                f"{tests.get(node, 'missing')}",
                [
                    {
                        "code": "canary_passed",
                        "detail": f"{spec['test']} site {spec['site']}: {tests.get(n, 'missing')}",
                    }
                    for n, spec in fired[:10]
                ],
            )
    if code != 0 and "raw_exit_code" in run and mapping:
        # Another ecosystem's runner: its canaries are tests of their own that fail, so the
        # runner fails; nothing else may have failed, and every package must have built.
        # A copy is a test of its own: its parent, and every subtest or invocation of it, fail
        # with the perturbed one (a shared value, Go's rows numbered #00, #01..., a JUnit
        # parameterized method's summary), and they are the copy's, never a test of the task
        # (copier-70, toml-293, jsoup-2577).
        tops = {_top_level(m) for m in mapping}
        others = [
            k
            for k, v in tests.items()
            if v == "failed" and k not in mapping and _top_level(k) not in tops
        ]
        if not others and not events.get("collect_errors") and code == 1:
            code = 0
    if code != 0:
        # Every expected test passed, yet the runner failed: something failed that the harness
        # did not see (a subtest, a forged report). The exit status is the supervisor's own view.
        runner = "the test runner" if "raw_exit_code" in run else "pytest"
        return (
            "tamper_detected",
            f"every expected test was reported passed but {runner} exited {code}",
            [{"code": "exit_status_disagrees", "detail": f"{runner} exited {code}"}],
        )
    return "resolved", "", []


def judge_twins(
    task: TaskManifest, run: dict[str, Any], plan: TwinPlan, *, strict: bool = True
) -> tuple[str, str, list[dict[str, str]], dict[str, Any]]:
    """The verdict of a verification's twins: (status, detail, violations, twin block).

    The honest twin is judged as one run is (:func:`judge`). Every decoy must fail: a decoy
    that passed, or whose own run shows tampering, means something faked the verdict from
    inside (it cannot tell the twins apart), whatever the honest twin says. ``strict`` off
    (admission checking its decoys) reports the decoys' outcomes without judging them."""
    records = run.get("twins") or []
    if len(records) != len(plan.twins):
        status = str(run.get("status") or "")
        if status in ("apply_failed", "judge_failed"):
            verdict = judge(task, run, strict_canaries=False)
            return (*verdict, {"summary": {}, "outcomes": []})
        raise InfraError(f"the supervisor ran {len(records)} twins of {len(plan.twins)}")
    honest = records[plan.honest]
    status, detail, violations = judge(task, honest, strict_canaries=False)
    outcomes = [decoy_verdict(records[i]) for i in plan.decoys]
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
    block = {
        "summary": {"decoys": len(outcomes), "outcomes": dict(sorted(counts.items()))},
        # [entry, outcome] per decoy, in the order they ran (admission keeps the failed ones).
        "outcomes": [[plan.twins[i], o] for i, o in zip(plan.decoys, outcomes, strict=True)],
    }
    if not strict or status == "tamper_detected":
        return status, detail, violations, block
    fired = [
        (plan.twins[i], outcome)
        for i, outcome in zip(plan.decoys, outcomes, strict=True)
        if outcome != "failed"
    ]
    if fired:
        found = []
        for entry, outcome in fired[:10]:
            assert entry is not None
            what = "passed" if outcome == "passed" else "showed tampering"
            found.append(
                {
                    "code": "decoy_passed" if outcome == "passed" else "runtime_tamper",
                    "detail": f"a decoy of {entry['test']} (one assertion's expected value "
                    f"changed) {what}",
                }
            )
        detail = (
            f"{len(fired)} of {len(outcomes)} decoy run(s) did not fail: the tests' verdict "
            "was made from inside the test process, e.g. " + found[0]["detail"]
        )
        return "tamper_detected", detail[:2000], found, block
    return status, detail, violations, block


def limits_that_bit(limits: dict[str, Any]) -> list[str]:
    """What the supervisor's counters say about the container's limits (empty: none bit)."""
    bit = []
    if limits.get("oom_kills"):
        bit.append(f"memory limit ({limits['oom_kills']} OOM kill(s))")
    if limits.get("pids_max_hits"):
        bit.append(f"process limit ({limits['pids_max_hits']} refused fork(s))")
    if limits.get("full_mounts"):
        bit.append(f"disk limit ({', '.join(limits['full_mounts'])} full)")
    sig = limits.get("signal")
    # SIGXFSZ is the file-size limit; SIGKILL counts only when the memory counter is missing
    # (the tests may kill their own process, which is no limit of ours).
    if sig == 25 or (sig == 9 and limits.get("oom_kills") is None):
        bit.append(f"pytest killed by signal {sig}")
    return bit


def _top_level(test: str) -> str:
    """The id of the test ``test`` is a part of: ``pkg::TestX`` for Go's ``pkg::TestX/row``,
    ``C::m(String)`` for JUnit's invocation ``C::m(String)[2]``."""
    where, sep, name = test.rpartition("::") if "::" in test else ("", "", test)
    return where + sep + re.split(r"/|\[", name, maxsplit=1)[0]
