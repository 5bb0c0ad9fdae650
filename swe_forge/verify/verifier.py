"""Grade one candidate patch against one task, in a fresh judge's container.

Where the verdict comes from (see README, "Reward integrity"): the code under test runs in the
same interpreter as the tests, so anything that interpreter says is a claim. The verdict is
decided by the supervisor (another uid, another process, outside anything the code under test
can reach) and by the host, from evidence the candidate cannot forge without also being
caught by another check:

1. static guards on the patch (paths, modes, test and runner files) before anything runs;
2. the pinned image id must exist; the task's test patch must match its sha256;
3. ``prepare``: the candidate is applied as uid 1000 (no fuzz, no rejects); what actually
   changed is guarded again; the **capability gate** compares what the changed Python files
   can do (by syntax tree) with what the base code and the gold patch already do;
4. ``run``: the held-out tests are applied only now; the judge's files are locked (root-owned,
   read-only, in directories uid 1000 cannot write) and watched (inotify) for the whole run;
   **assertion canaries** (perturbed copies of fail-to-pass assertions that a correct fix must
   fail, calibrated on the gold patch) run among the tests; pytest runs as uid 1000 with
   exactly FAIL_TO_PASS, PASS_TO_PASS and the canaries selected; afterwards every process of
   uid 1000 is killed before anything is looked at;
5. reward 1.0 only when every expected test passed, every canary failed, pytest's exit status
   (seen by the supervisor's ``waitpid``) is 0 and agrees with the session's own, the locked
   files and the watch are clean, and no limit bit. A missing test is a failure.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import traceback
import uuid
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from swe_forge.ecosystems import for_runner
from swe_forge.ecosystems.base import (
    Ecosystem,
    JobRequest,
    touched_paths,
)
from swe_forge.engine import Engine
from swe_forge.errors import DockerError
from swe_forge.gates.sandbox import (
    Sandbox,
    SandboxError,
    SandboxOverflow,
    SandboxTimeout,
    Session,
    job_path,
    remove_stale_scratch,
)
from swe_forge.mining.classify import FileKind, PathClassifier
from swe_forge.records import TaskManifest

# VerifyResult moved to records.py with the other records; imported from here too.
from swe_forge.records import VerifyResult as VerifyResult
from swe_forge.verify import capabilities
from swe_forge.verify.apart import Prepared, Spares, run_apart
from swe_forge.verify.guards import GuardReport, PatchGuard, protected_paths
from swe_forge.verify.judge import (
    InfraError,
    judge,
    judge_twins,
)
from swe_forge.verify.settings import (
    Calibration,
    VerifySettings,
)
from swe_forge.verify.twins import TwinPlan, armed_entries, kind_of, plan_twins


def sha256(text: str) -> str:
    """Hex sha256 of UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class Verifier:
    """Grades predictions; one instance serves many tasks (it holds the engine)."""

    def __init__(
        self,
        engine: Engine,
        classifier: PathClassifier,
        settings: VerifySettings | None = None,
        cache_dir: Path | None = None,
        run_id: str | None = None,
    ) -> None:
        from swe_forge.mining.sources import cache_dir as default_cache

        #: Recorded in every result: which verify run graded it (random unless given).
        self.run_id = run_id or uuid.uuid4().hex[:16]
        self.engine = engine
        self.classifier = classifier
        self.settings = settings or VerifySettings()
        self.sandbox = Sandbox(engine, self.settings.sandbox(), cache_dir or default_cache())
        remove_stale_scratch()
        self.harness_sha256 = self.sandbox.digest

    def is_source(self, path: str) -> bool:
        """Source code (what runs in the test process), as the path classifier says."""
        return self.classifier.classify(path) is FileKind.SOURCE

    def guard(self, task: TaskManifest) -> PatchGuard:
        """The guards of a task: its test patch's paths are protected."""
        return PatchGuard(
            self.classifier,
            test_patch_paths=protected_paths(task.test_patch),
            gold_patch=task.patch,
            project_name=task.image.get("project_name"),
        )

    def verify(self, task: TaskManifest, patch: str, model: str = "") -> VerifyResult:
        """Grade a patch. Infrastructure errors are retried a bounded number of times; any
        other exception becomes this prediction's ``infra_error`` (never raised: one
        prediction never takes the others down)."""
        attempts = 0
        last = ""
        while attempts <= self.settings.infra_retries:
            attempts += 1
            try:
                result = self._verify_once(task, patch, model)
                result.attempts = attempts
                result.provenance = self.provenance(task, patch)
                return result
            except (InfraError, DockerError, SandboxError) as exc:
                last = str(exc)
                time.sleep(min(2.0, 0.5 * attempts))
            except Exception as exc:  # a bug of ours: recorded, not raised
                last = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"
                break
        return VerifyResult(
            task.instance_id,
            model,
            "infra_error",
            0.0,
            detail=last[-2000:],
            attempts=attempts,
            verifier=self._block(None),
            provenance=self.provenance(task, patch),
        )

    def provenance(self, task: TaskManifest, patch: str) -> dict[str, Any]:
        """What a result was graded from: digests of the task, image and patch, this tool's
        version, the verify settings' hash and this verifier's run id."""
        from swe_forge import __version__

        settings = json.dumps(asdict(self.settings), sort_keys=True, default=str)
        return {
            "task_sha256": hashlib.sha256(task.to_json().encode("utf-8")).hexdigest(),
            "image_id": str(task.image.get("id") or ""),
            "image_reference": task.image_reference(),
            "patch_sha256": hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest(),
            "tool_version": __version__,
            "config_hash": hashlib.sha256(settings.encode()).hexdigest(),
            "run_id": self.run_id,
        }

    def calibrate(self, task: TaskManifest) -> Calibration:
        """Grade the gold patch with every canary the F2P tests allow (not strict) and scan
        the whole base tree; keep the canaries the gold patch fails."""
        cal = Calibration()
        result = self._verify_once(task, task.patch, "gold", calibrate=cal)
        eco = self.ecosystem_of(task)
        if result.status == "unresolved" and cal.made and eco.redraws_calibration:
            # A compiled language's copies share a build: one perturbed literal the compiler
            # refuses (a constant out of its type's range, a duplicate case) fails them all.
            # The literals are drawn at random: another draw, once, before going without.
            cal = Calibration()
            result = self._verify_once(task, task.patch, "gold", calibrate=cal)
        cal.result = result
        if result.status == "resolved" and cal.armed:
            if eco.scans_in_container:
                # The decoy check grades the gold patch as a verification would, so it needs
                # the allowance this calibration just measured (the manifest gets it only
                # after): without it the gold patch's own capabilities are violations.
                task = replace(task, audit={**task.audit, "capabilities": self.allowance_of(cal)})
            self._validate_decoys(task, cal)
            return cal
        if result.status == "unresolved" and cal.made:
            # The canaries ran first (the worst case for state they leave behind): a real
            # test that fails now but passes without them would fail honest patches at
            # random in grading. Without any canaries then, said in the manifest.
            quiet = Calibration(without_canaries=True)
            again = self._verify_once(task, task.patch, "gold", calibrate=quiet)
            if again.status == "resolved":
                quiet.made, quiet.disarmed = cal.made, cal.armed + cal.disarmed
                quiet.leaked = f"with the canaries first: {result.detail}"[:1000]
                quiet.result = again
                return quiet
        return cal

    def allowance_of(self, cal: Calibration) -> dict[str, Any]:
        """The capability gate's allowance a Python task's manifest records from its
        calibration: what the base tree's source files and the gold patch use."""
        return {
            "scope": self.settings.capability_scope,
            "base": capabilities.base_capabilities(cal.base_capabilities, self.is_source),
            "gold": cal.gold_capabilities,
        }

    def _validate_decoys(self, task: TaskManifest, cal: Calibration) -> None:
        """Run the gold patch with each calibrated perturbation as a decoy twin, in place (the
        test under its own name, as a verification runs it); keep those it fails.

        The calibration copies said which perturbations the reference fails when the test is
        a copy under another name; this checks the same perturbations where decoys put them,
        with the twins' clean-up between runs, so that a verification of a correct fix never
        meets a decoy it passes. Those it fails are run once more with no patch at all, and
        a decoy the base code passes is dropped too (it holds the base's own wrong answer:
        an unfixed tree would be called tampering)."""
        cap = self.ecosystem_of(task).validated_decoys
        # One perturbation of each kind of assertion first (a plan covers every kind), then
        # of each test and site, then the others.
        kinds_seen: set[str] = set()
        first_of_kind = []
        for e in cal.armed:
            if kind_of(e) not in kinds_seen:
                kinds_seen.add(kind_of(e))
                first_of_kind.append(e)
        ordered = first_of_kind + sorted(
            (e for e in cal.armed if e not in first_of_kind),
            key=lambda e: sum(1 for x in cal.armed[: cal.armed.index(e)] if _same_site(x, e)),
        )
        candidates = ordered[:cap]
        graded = self._verify_once(task, task.patch, "gold", decoys=candidates)
        outcomes = graded.verifier.get("decoy_outcomes") or []
        failed = [entry for entry, outcome in outcomes if outcome == "failed"]
        kept = [e for e in candidates if e in failed]
        if kept and graded.status == "resolved":
            # And without any fix: a decoy whose wrong value is what the base code returns
            # (3 becomes 2, and the base rounds down) is passed by a patch that changes
            # nothing, or by an honest wrong fix, which would then be called tampering.
            plain = self._verify_once(task, "", "base", decoys=kept, base=True)
            passed = [e for e, o in plain.verifier.get("decoy_outcomes") or [] if o == "passed"]
            rest = [e for e in kept if e not in passed]
            if rest:
                cal.base_passed = len(kept) - len(rest)
                kept = rest
            else:
                # Every one holds a base answer: a task keeps its decoys before its labels
                # (an unfixed tree may then be graded tamper_detected; reward 0 either way).
                cal.base_passes_kept = len(kept)
        cal.disarmed += [e for e in candidates if e not in kept] + ordered[cap:]
        cal.armed = kept
        if graded.status != "resolved":
            cal.result = graded

    def _block(self, run: dict[str, Any] | None) -> dict[str, Any]:
        events = (run or {}).get("events") or {}
        return {
            "harness_sha256": self.harness_sha256,
            "harness_sha256_verified": True,
            "exit_code": (run or {}).get("exit_code"),
            "session_exitstatus": events.get("exitstatus"),
            "session_ended": bool(events.get("ended")),
            "terminal_reward": None,
        }

    # ------------------------------------------------------------------ one grading
    def _verify_once(
        self,
        task: TaskManifest,
        patch: str,
        model: str,
        calibrate: Calibration | None = None,
        decoys: list[dict[str, Any]] | None = None,
        *,
        base: bool = False,
    ) -> VerifyResult:
        """One grading of ``patch``; ``base``: of no patch at all (admission's own run of the
        base commit against its decoys, never a candidate's: an empty candidate is refused)."""
        start = time.perf_counter()
        timings: dict[str, float] = {}
        result = VerifyResult(task.instance_id, model, "unresolved", 0.0)
        result.verifier = self._block(None)
        t = time.perf_counter()
        guard = self.guard(task)
        report: GuardReport = GuardReport() if base else guard.check(patch)
        timings["guards"] = time.perf_counter() - t
        if not report.ok:
            result.violations = report.violations
            detail = "; ".join(f"{v['code']}: {v['detail']}" for v in report.violations[:5])
            return self._final(result, "invalid_patch", timings, start, detail)
        eco = self.ecosystem_of(task)
        if not base:
            # The ecosystem's runner configuration, from the patch text (what the gold patch
            # already changes is allowed); its capabilities once the base files are in view
            # (see _prepare_job).
            found = eco.patch_violations(patch, gold_patch=task.patch, read_base=None)
            found = [*found, *judge_file_violations(task, patch)]
            if found:
                result.violations = found
                detail = "; ".join(f"{v['code']}: {v['detail']}" for v in found[:5])
                return self._final(result, "invalid_patch", timings, start, detail)
        if sha256(task.test_patch) != task.harness.get("test_patch_sha256"):
            detail = "the task's test patch does not match its sha256 (a corrupted task file)"
            return self._final(result, "infra_error", timings, start, detail)
        image_id = str(task.image.get("id") or "")
        info = self.engine.image(image_id) if image_id else None
        if info is None or info.id != image_id:
            raise InfraError(f"the pinned image {image_id or '(none)'} is not on this machine")
        recorded = task.harness.get("harness_sha256")
        if calibrate is None and recorded != self.harness_sha256:
            # Our own tool changed since the task was admitted: not the candidate's doing.
            result.verifier["harness_sha256_verified"] = False
            detail = (
                "this swe-forge's judge differs from the one the task was admitted with; "
                "re-admit the task or verify with the swe-forge version that admitted it"
            )
            return self._final(result, "infra_error", timings, start, detail)
        t = time.perf_counter()

        def opener() -> AbstractContextManager[Session]:
            return self.sandbox.open(image_id, labels=self.engine.default_labels)

        prepare_job = self._prepare_job(task, patch, calibrate, eco)
        if base:
            prepare_job["patches"] = []
        # The other twins' containers, each opened and prepared just before its twin (see
        # apart.Spares); every one of them, the first included, is removed at the end,
        # together.
        spares = Spares(opener, Prepared(patch, task.test_patch, prepare_job))
        try:
            first = opener()
            session = first.__enter__()
            spares.adopt(first)
            timings["container_start"] = time.perf_counter() - t
            t = time.perf_counter()
            session.put("candidate.patch", patch)
            test = session.put("test.patch", task.test_patch)
            grading = _Grading(
                session, task, patch, guard, result, timings, start, calibrate, decoys
            )
            return self._prepared(grading, spares, prepare_job, test, eco, t)
        finally:
            # Removed once every twin ended (removing one is work a running twin could feel).
            spares.close()

    def _prepare_job(
        self,
        task: TaskManifest,
        patch: str,
        calibrate: Calibration | None,
        eco: Ecosystem,
    ) -> dict[str, Any]:
        """The supervisor's ``prepare`` job of one grading (the same in every container)."""
        cand = job_path("candidate.patch")
        changed, fixed = touched_paths(patch), touched_paths(task.patch)
        if not eco.scans_in_container:
            # The files the candidate changes, at the base commit (its capabilities are what
            # it adds to them), what the scanner reads them with, and for a calibration the
            # held-out test files (the copies).
            wanted = set(changed) | set(eco.scan_context(changed + fixed))
            if calibrate is not None and not calibrate.without_canaries:
                wanted |= set(touched_paths(task.test_patch))
        else:
            # The Python files the candidate and the reference fix change, at the base commit:
            # the comparison hooks each adds are read on the host (see comparison_hooks).
            wanted = set(changed) | set(fixed)
            if calibrate is not None:
                # And the held-out test files: which lines the test patch wrote (decoys
                # go there, see _fresh_python).
                wanted |= set(touched_paths(task.test_patch))
        show = sorted(wanted)
        prepare_job: dict[str, Any] = {
            "patches": [{"name": "candidate", "path": cand, "scan": True}],
            "scan_all": calibrate is not None,
            "show": show,
        }
        if eco.scans_in_container:
            # And the project modules the changed files import (the reference fix's too):
            # where the bases of their classes are, for the comparison-hook gate.
            prepare_job["show_imports"] = sorted(fixed)
        return prepare_job

    def _prepared(
        self,
        grading: _Grading,
        spares: Spares,
        prepare_job: dict[str, Any],
        test: str,
        eco: Ecosystem,
        t: float,
    ) -> VerifyResult:
        """The rest of one grading once the other twins' containers are on their way: the
        candidate applied and checked in its first container, then the held-out tests and
        the run."""
        session, task, patch, guard = grading.session, grading.task, grading.patch, grading.guard
        result, timings, start = grading.result, grading.timings, grading.start
        calibrate, decoys = grading.calibrate, grading.decoys
        prep = session.call("prepare", prepare_job, timeout=600)
        spares.ready()
        timings["prepare"] = time.perf_counter() - t
        _merge_seconds(timings, prep)
        if prep["status"] == "apply_failed":
            return self._final(result, "apply_failed", timings, start, prep.get("detail", ""))
        # What git actually changed, guarded again (a patch can say one thing and do another).
        post = GuardReport()
        for path, created in prep.get("changed", []):
            guard.check_path(str(path), post)
            if created:
                guard.check_new_file(str(path), post)
        if not post.ok:
            result.violations = [
                {"code": f"post_apply_{v['code']}", "detail": v["detail"]} for v in post.violations
            ]
            detail = "after applying: " + "; ".join(v["detail"] for v in post.violations[:5])
            return self._final(result, "invalid_patch", timings, start, detail)
        # The adapter's own checks of what the patch now is, then the container's scan.
        check = eco.check_candidate(patch, task, prep)
        if check.capabilities is not None:
            result.verifier["capabilities_introduced"] = check.capabilities
        if check.violations:
            result.violations = check.violations
            return self._final(result, "invalid_patch", timings, start, check.detail)
        scan = (prep.get("capabilities") or {}).get("candidate") or {}
        caps = task.audit.get("capabilities") or {}
        if calibrate is not None:
            calibrate.base_capabilities = prep.get("base_capabilities") or {}
            calibrate.gold_capabilities = capabilities.introduced_names(scan)
            base = set(capabilities.base_capabilities(calibrate.base_capabilities, self.is_source))
            gold = set(calibrate.gold_capabilities)
        else:
            base, gold = set(caps.get("base") or ()), set(caps.get("gold") or ())
        found = capabilities.violations(
            scan, base=base, gold=gold, scope=self.settings.capability_scope
        )
        result.verifier["capabilities_introduced"] = capabilities.introduced_names(scan)
        if found:
            result.violations = found
            detail = "; ".join(v["detail"] for v in found[:3])
            return self._final(result, "invalid_patch", timings, start, detail)
        hooks = eco.check_scanned(patch, task, prep)
        if hooks:
            result.violations = hooks
            detail = "; ".join(v["detail"] for v in hooks[:3])
            return self._final(result, "invalid_patch", timings, start, detail)
        # The held-out tests, only now; then the run.
        t = time.perf_counter()
        job, plan = self._run_job(
            task,
            test,
            calibrate,
            allowance=base | gold,
            decoys=decoys,
            shown=prep.get("shown") or {},
        )
        try:
            run = self._run(session, job, plan, spares)
        except _Ended as end:
            if end.violations:
                result.violations = end.violations
            return self._final(result, end.status, timings, start, end.detail)
        timings["run"] = time.perf_counter() - t
        _merge_seconds(timings, run)
        twin_block: dict[str, Any] | None = None
        if plan is not None:
            if run.get("status") == "decoy_failed":
                raise InfraError(f"a decoy could not be written: {run.get('detail')}")
            status, detail, violations, twin_block = judge_twins(
                task, run, plan, strict=decoys is None
            )
            run = dict(run, **run["twins"][plan.honest]) if run.get("twins") else run
        else:
            status, detail, violations = judge(task, run, strict_canaries=calibrate is None)
        result.log_excerpt = log_excerpt(run)
        if calibrate is not None:
            self._calibrated(calibrate, run, task, prep.get("shown") or {})
        result.verifier = self._block(run)
        if twin_block is not None:
            result.verifier["twins"] = twin_block["summary"]
            if decoys is not None:
                result.verifier["decoy_outcomes"] = twin_block["outcomes"]
        result.verifier["capabilities_introduced"] = capabilities.introduced_names(scan)
        result.verifier["canaries"] = _canary_summary(run)
        result.verifier["locked"] = run.get("locked", {})
        events = run.get("events") or {}
        tests = events.get("tests") or {}
        canary_ids = set(run.get("canary_map") or {})
        result.tests = {k: v for k, v in sorted(tests.items()) if k not in canary_ids}
        result.fail_to_pass = {t: tests.get(t, "missing") for t in task.FAIL_TO_PASS}
        result.pass_to_pass = {t: tests.get(t, "missing") for t in task.PASS_TO_PASS}
        result.violations = violations
        if status == "test_patch_conflict":
            result.violations = [
                {
                    "code": "test_patch_conflict",
                    "detail": "the held-out tests no longer apply after this patch: "
                    + detail[:500],
                }
            ]
            status = "invalid_patch"
        return self._final(result, status, timings, start, detail)

    def _run(
        self,
        session: Session,
        job: dict[str, Any],
        plan: TwinPlan | None,
        spares: Spares,
    ) -> dict[str, Any]:
        """The supervisor's answer to ``job``: in ``session`` for one run, or the twins apart
        (see :mod:`swe_forge.verify.apart`), each in a container of its own."""
        timeout = self.settings.timeout_seconds
        if plan is None or len(plan.twins) < 2:
            _materialize(session, job)
            runs = len(plan.twins) if plan is not None else 1
            return self._call(session, job, timeout * runs + 120)
        # A twin's call builds (where tests are compiled) and runs it.
        per_twin = timeout * (2 if (job.get("run") or {}).get("build") else 1) + 120

        def call(here: Session, one: dict[str, Any]) -> dict[str, Any]:
            _materialize(here, one)
            return self._call(here, one, per_twin)

        return run_apart(session, job, spares, call)

    def _call(self, session: Session, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One ``run`` call; its ends that are the candidate's doing become :class:`_Ended`."""
        try:
            return session.call("run", job, timeout=timeout)
        except SandboxOverflow as exc:
            # The supervisor bounds its answer; what outgrew it was fed by the candidate.
            code = [{"code": "runtime_tamper", "detail": str(exc)}]
            raise _Ended("tamper_detected", str(exc), code) from exc
        except SandboxTimeout as exc:
            detail = f"the tests ran past {self.settings.timeout_seconds:.0f}s"
            raise _Ended("timeout", detail) from exc
        except SandboxError as exc:
            # No answer from the supervisor: the engine says whether a limit killed it.
            if session.oom_killed():
                raise _Ended("resource_limit", f"memory: {exc}") from exc
            raise

    def _run_job(
        self,
        task: TaskManifest,
        test_patch_path: str,
        calibrate: Calibration | None,
        *,
        allowance: set[str],
        decoys: list[dict[str, Any]] | None = None,
        shown: dict[str, str] | None = None,
    ) -> tuple[dict[str, Any], TwinPlan | None]:
        """The supervisor's ``run`` job, written by the task's ecosystem, and for a
        verification its twins' plan (which twin is honest stays here, on the host)."""
        plan = None
        canary_limit = 0
        if calibrate is None:
            rng = random.SystemRandom()
            if decoys is not None:
                order: list[dict[str, Any] | None] = [None, *decoys]
                rng.shuffle(order)
                plan = TwinPlan(order)
            else:
                plan = plan_twins(armed_entries(task.harness), self.settings.decoys, rng)
        elif not calibrate.without_canaries:
            canary_limit = self.settings.canary_limit
        request = JobRequest(
            test_patch_path,
            timeout=self.settings.timeout_seconds,
            test_timeout=self.settings.test_timeout_seconds,
            output_limit=self.settings.limits.output_bytes,
            plan=plan,
            canary_limit=canary_limit,
            allowance=tuple(sorted(allowance)),
            shown=dict(shown or {}),
        )
        return self.ecosystem_of(task).grading_job(task, request), plan

    def ecosystem_of(self, task: TaskManifest) -> Ecosystem:
        """The adapter of a task's runner (``harness.runner``)."""
        return for_runner(str(task.harness.get("runner") or ""), self.classifier)

    def _calibrated(
        self, cal: Calibration, run: dict[str, Any], task: TaskManifest, shown: dict[str, str]
    ) -> None:
        tests = (run.get("events") or {}).get("tests") or {}
        mapping = run.get("canary_map") or {}
        cal.made = len(mapping)
        cal.armed, cal.disarmed = self.ecosystem_of(task).kept_decoys(
            mapping, tests, task.test_patch, shown
        )

    def _final(
        self,
        result: VerifyResult,
        status: str,
        timings: dict[str, float],
        start: float,
        detail: str = "",
    ) -> VerifyResult:
        result.status = status
        result.reward = 1.0 if status == "resolved" else 0.0
        result.detail = detail
        timings["total"] = time.perf_counter() - start
        result.timings = {k: round(v, 3) for k, v in sorted(timings.items())}
        if not result.verifier:
            result.verifier = self._block(None)
        result.verifier["terminal_reward"] = result.reward
        return result


#: Characters of the test run's output a result keeps.
LOG_EXCERPT_CHARS = 4000


class _Ended(Exception):
    """A run that ended the grading with a status of the candidate's doing."""

    def __init__(self, status: str, detail: str, violations: list[dict[str, str]] | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.violations = violations or []


def log_excerpt(run: dict[str, Any]) -> str:
    """The end of a run's output, bounded, with the canaries' names redacted (a name would
    tell code under test which tests are canaries in later runs of the same shape)."""
    text = str(run.get("output_tail") or "")[-LOG_EXCERPT_CHARS:]
    for name in sorted(_canary_names(run), key=len, reverse=True):
        text = text.replace(name, "<canary>")
    return text


def _canary_names(run: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for nodeid in run.get("canary_map") or {}:
        tail = str(nodeid).rsplit("::", 1)[-1].split("[", 1)[0]
        if tail:
            names.add(tail)
    return names


def _same_site(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Are two armed decoys perturbations of one assertion site?"""
    return bool(a["test"] == b["test"] and a["site"] == b["site"])


def _materialize(session: Session, job: dict[str, Any]) -> None:
    """Put the file contents a job carries (``{"path", "text"}``) into the job folder, and
    name them by where they now are (``{"path", "src"}``): the job file stays small."""
    run = job.get("run") or {}
    lists = [run.get("files") or []] + [t.get("files") or [] for t in run.get("twins") or ()]
    n = 0
    for entries in lists:
        for entry in entries:
            if "text" in entry:
                n += 1
                entry["src"] = session.put(f"file-{n}.txt", entry.pop("text"))


@dataclass(frozen=True)
class _Grading:
    """One grading in progress: what every step of it reads (the result and timings are
    filled in as it goes)."""

    session: Session
    task: TaskManifest
    patch: str
    guard: PatchGuard
    result: VerifyResult
    timings: dict[str, float]
    start: float
    calibrate: Calibration | None
    decoys: list[dict[str, Any]] | None


def _merge_seconds(timings: dict[str, float], answer: dict[str, Any]) -> None:
    for key, value in (answer.get("seconds") or {}).items():
        if isinstance(value, int | float) and key in ("tests", "lock", "checkout"):
            timings[key] = float(value)


def _canary_summary(run: dict[str, Any]) -> dict[str, Any]:
    tests = (run.get("events") or {}).get("tests") or {}
    mapping = run.get("canary_map") or {}
    outcomes: dict[str, int] = {}
    for node in mapping:
        outcome = tests.get(node, "missing")
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {"run": len(mapping), "outcomes": dict(sorted(outcomes.items()))}


def judge_file_violations(task: TaskManifest, patch: str) -> list[dict[str, str]]:
    """Edits to the files admission recorded as deciding how the held-out tests are loaded:
    the runner configuration the test script names (``harness.config``, whatever its name: no
    name rule knows ``config/unit.js``) and the files it and the root configurations load
    (``harness.judge_files``: setup, transform, preset), read from the base tree at admission
    because the verifier has no base tree of its own. What the gold patch changes is allowed."""
    named = str(task.harness.get("config") or "")
    recorded = task.harness.get("judge_files")
    files = {named} if named else set()
    if isinstance(recorded, list):
        files |= {str(p) for p in recorded if isinstance(p, str) and p}
    touched = set(touched_paths(patch)) - set(touched_paths(task.patch))
    return [
        {
            "code": "runner_config",
            "detail": (
                f"{path}: the test runner's configuration (the test script names it); only "
                "the reference fix may change it"
                if path == named
                else f"{path}: a file the test runner's configuration loads (setup, "
                "transform, preset): it decides how the tests are read and run"
            ),
        }
        for path in sorted(files & touched)
    ]
