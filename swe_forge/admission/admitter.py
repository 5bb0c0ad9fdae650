"""One candidate's admission: a task manifest, or a rejection with one reason.

The checks run cheapest first: the verifier's static guards on the gold patch (no engine
needed), then the images, the 6-run gate, the sufficiency audit, the image audit, calibration,
the gold patch graded through the very verifier that grades agents, and last the test-strength
gate (wrong variants of the gold fix graded the same way).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from swe_forge import __version__
from swe_forge.admission.base_view import BaseView
from swe_forge.admission.strength import StrengthSettings, mutant_settings
from swe_forge.admission.strength import measure as measure_strength
from swe_forge.config import Config, load_repo_overrides
from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems import DEFAULT_ECOSYSTEM, Ecosystem, detect_ecosystem, ecosystem_named
from swe_forge.engine import Engine, Limits
from swe_forge.errors import SweForgeError
from swe_forge.gates.clock import clock_reads
from swe_forge.gates.gate import GateSettings, GateVerdict, run_gate
from swe_forge.gates.runner import TestRunner
from swe_forge.gates.sandbox import Sandbox
from swe_forge.gates.sufficiency import SufficiencySettings, assess
from swe_forge.git.repo import GitRepository
from swe_forge.images.audit import audit_image, file_index
from swe_forge.images.base import ENV_PATH
from swe_forge.images.build import ImageBuilder, cache_root
from swe_forge.images.instance import MATERIALIZE
from swe_forge.images.registry import needs_of_record, provide
from swe_forge.mining.classify import PathClassifier
from swe_forge.mining.sources import RepoSource, materialize
from swe_forge.mining.statement import GENERATED_SOURCE, assess_statement, statement_from_failures
from swe_forge.mutation import Mutant
from swe_forge.progress import NoteReporter, NullReporter, Reporter
from swe_forge.records import (
    HIDDEN_FROM_POLICY,
    Candidate,
    ImageRecord,
    Rejection,
    TaskManifest,
    VerifyResult,
)
from swe_forge.verify.guards import PatchGuard, protected_paths
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier


def sha256(text: str | bytes) -> str:
    """Hex sha256 of text (UTF-8) or bytes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class Admitter:
    """Images, gates, audits and manifests for candidates.

    Cheap to create: the engine connection, the image builder, the sandbox and the verifier
    are made the first time a candidate needs them (a candidate the guards refuse needs
    none). Not thread-safe: a batch makes one per worker thread.
    """

    def __init__(
        self,
        config: Config,
        *,
        audit_images: bool = True,
        reporter: Reporter | None = None,
        build_slots: threading.Semaphore | None = None,
        test_slots: threading.Semaphore | None = None,
        container_labels: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        self.container_labels = dict(container_labels or {})
        self.classifier = PathClassifier(config.classify)
        self.reporter = reporter or NullReporter()
        self.audit_images = audit_images
        # Batch runs bound image builds and test runs separately (they load the machine
        # differently); without slots, nothing is bounded here.
        self.build_slots = build_slots or contextlib.nullcontext()
        self.test_slots = test_slots or contextlib.nullcontext()
        a = config.admit
        self.gate = GateSettings(
            runs_per_phase=a.runs_per_phase,
            hash_seeds=a.hash_seeds,
            timeout_seconds=a.timeout_seconds,
            test_timeout_seconds=a.test_timeout_seconds,
            flaky_policy=a.flaky_policy,
            scope=a.scope,
            fail_to_pass_scope=a.fail_to_pass_scope,
        )
        self.sufficiency = SufficiencySettings(
            min_statement_chars=a.min_statement_chars,
            reject_flags=a.reject_flags,
            judge_command=a.judge_command,
        )
        self.verify_settings = VerifySettings.from_config(config.verify)
        self._mutant_verifiers: dict[VerifySettings, Verifier] = {}
        self._repos: dict[str, GitRepository | None] = {}
        # The base tree of the candidate being admitted (one at a time: see the class doc).
        self._view: tuple[tuple[str, str], BaseView | None] | None = None
        self._base_files: dict[str, dict[str, tuple[int, int]]] = {}
        self._lock = threading.Lock()

    @functools.cached_property
    def engine(self) -> Engine:
        """The engine connection (made on first use; raises DockerError without an engine)."""
        engine = Engine()
        engine.default_labels = dict(self.container_labels)
        return engine

    @functools.cached_property
    def builder(self) -> ImageBuilder:
        """Builds a candidate's images when no image record is given."""
        overrides = load_repo_overrides(Path(self.config.images.repos_file))
        return ImageBuilder(self.config, self.engine, overrides=overrides)

    @functools.cached_property
    def sandbox(self) -> Sandbox:
        """The judge's container the verifier uses (same mounts, same locks), with
        admission's own limits."""
        a = self.config.admit
        return Sandbox(
            self.engine,
            replace(
                self.verify_settings.sandbox(),
                limits=Limits(memory=a.memory, pids=a.pids, cpus=a.cpus),
            ),
            cache_root(self.config),
        )

    @functools.cached_property
    def verifier(self) -> Verifier:
        """The verifier that calibrates and grades the gold patch."""
        return Verifier(
            self.engine, self.classifier, self.verify_settings, cache_dir=cache_root(self.config)
        )

    def mutant_verifier(self, gold_seconds: float | None) -> Verifier:
        """The verifier that grades the gold patch's mutants: the same judge, without decoy
        twins, with a time limit scaled on the gold patch's verification
        (:func:`~swe_forge.admission.strength.mutant_settings`)."""
        settings = mutant_settings(self.verify_settings, gold_seconds)
        if settings not in self._mutant_verifiers:
            self._mutant_verifiers[settings] = Verifier(
                self.engine, self.classifier, settings, cache_dir=cache_root(self.config)
            )
        return self._mutant_verifiers[settings]

    def _reject(
        self, cand: Candidate, reason: str, detail: str, extra: dict[str, Any] | None = None
    ) -> Rejection:
        return Rejection(
            stage="admit",
            repo=cand.repo,
            reason=reason,
            detail=detail,
            instance_id=cand.instance_id,
            pr_number=cand.provenance.pr_number,
            commit=cand.provenance.merge_commit,
            extra=extra or {},
        )

    def admit(
        self,
        cand: Candidate,
        images: ImageRecord | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> tuple[TaskManifest | Rejection, dict[str, float]]:
        """Admit one candidate or say why not; also returns timings (build, gate, audit).

        ``progress`` hears a line at each step that can take minutes (a build, each gate run).
        """
        timings: dict[str, float] = {}
        say = progress or (lambda _line: None)
        # Cheap checks first: a gold patch the verifier would refuse makes a task that can never
        # be graded, and no image or test run is spent on it.
        refused = self.gold_guard(cand)
        if refused:
            return self._reject(cand, "gold_refused", refused), timings
        eco = self.ecosystem(cand)
        t = time.perf_counter()
        if images is not None and images.status == "ok":
            rec = images
            # Built elsewhere and pushed: what is not here is pulled by digest and checked
            # (a DigestError ends the run: a record pointing at other images is not a
            # candidate's failure).
            provide(self.engine, needs_of_record(rec), NoteReporter(say))
        else:
            say(f"building images ({eco.name})")
            with self.build_slots:
                rec = self.builder.build(cand)
        timings["build"] = time.perf_counter() - t
        if rec.status != "ok":
            if rec.reason and not rec.reason.endswith("_failed"):
                # A project refused for what it is (errors.Unsupported): its own code.
                return self._reject(cand, rec.reason, rec.detail[-1500:]), timings
            return self._reject(
                cand, "build_failed", f"{rec.reason}: {rec.detail[-1500:]}"
            ), timings
        refusal = eco.refusal(rec)
        if refusal is not None:
            return self._reject(cand, *refusal), timings
        files = eco.test_files(cand.test_patch)
        if not files and self.gate.scope == "touched":
            return self._reject(
                cand, "no_test_files", "the test patch touches no test file"
            ), timings
        runner = eco.runner_for(rec)
        # A runner that can tell on the host that it would run nothing for these files
        # (Rust: no test target compiles them) says so here: run anyway, its empty output
        # read as the PR's no_test_report.
        unplanned = getattr(runner, "unplanned", None)
        why = unplanned(files) if unplanned is not None and self.gate.scope == "touched" else None
        if why:
            return self._reject(cand, "no_test_target", why), timings
        t = time.perf_counter()
        with self.test_slots:
            verdict = run_gate(
                self.sandbox,
                rec.instance_image_id or rec.instance_image,
                runner,
                test_patch=cand.test_patch,
                gold_patch=cand.patch,
                test_files=files,
                protect=eco.protect(cand.test_patch),
                settings=self.gate,
                labels=self.engine.default_labels,
                scope=eco.scope(cand.test_patch, self.base_reader(cand)),
                progress=say,
            )
        timings["gate"] = time.perf_counter() - t
        return self._after_gate(cand, rec, files, verdict, timings, eco, runner)

    def ecosystem(self, cand: Candidate) -> Ecosystem:
        """The adapter of the candidate's repository at its base commit (the default
        ecosystem's when its source is not at hand)."""
        view = self.base_view(cand)
        if view is None:
            return ecosystem_named(DEFAULT_ECOSYSTEM, self.classifier)
        return ecosystem_named(detect_ecosystem(view.read, view.root_names()), self.classifier)

    def base_view(self, cand: Candidate) -> BaseView | None:
        """The candidate's base tree, read once for all of its admission's questions (None
        when its source is not at hand)."""
        key = (cand.provenance.source, cand.base_commit)
        if self._view is None or self._view[0] != key:
            repo = self._repo(cand)
            self._view = (key, BaseView(repo, cand.base_commit) if repo is not None else None)
        return self._view[1]

    def base_reader(self, cand: Candidate) -> Callable[[str], bytes | None] | None:
        """Files at the candidate's base commit (None when its source is not at hand)."""
        view = self.base_view(cand)
        return view.read if view is not None else None

    def scope(self, cand: Candidate) -> Any:
        """The tests the candidate's test patch adds or changes, as its ecosystem reads them
        (against the base commit of its source repository; without it, only new test files
        are analysed)."""
        return self.ecosystem(cand).scope(cand.test_patch, self.base_reader(cand))

    def clock(self, cand: Candidate) -> dict[str, Any]:
        """Where the test modules the test patch touches read the calendar date (post-patch
        source, see :mod:`swe_forge.gates.clock`); recorded as ``audit.clock``."""
        view = self.base_view(cand)
        sources: dict[str, bytes] = {}
        try:
            patches = parse_diff(cand.test_patch)
        except DiffParseError:
            patches = []
        for fp in patches:
            path = fp.new_path
            if not path or not path.endswith(".py") or not self.classifier.is_test_module(path):
                continue
            base = b""
            if fp.old_path is not None:
                found = view.read(fp.old_path) if view else None
                if found is None:
                    continue
                base = found
            try:
                sources[path] = apply_file_patch(base, fp)
            except PatchApplyError:
                continue
        return clock_reads(sources)

    def _after_gate(
        self,
        cand: Candidate,
        rec: ImageRecord,
        files: list[str],
        verdict: GateVerdict,
        timings: dict[str, float],
        eco: Ecosystem,
        runner: TestRunner,
    ) -> tuple[TaskManifest | Rejection, dict[str, float]]:
        timings["runs"] = sum(r.seconds for r in verdict.runs)
        runs = [r.to_dict() for r in verdict.runs]
        if not verdict.admitted:
            extra = {"runs": runs, "flaky": verdict.flaky, **verdict.evidence()}
            return self._reject(cand, verdict.reason, verdict.detail, extra), timings
        repo = self._repo(cand)
        names = repo.identifiers(cand.base_commit) if repo else set()
        statement, statement_audit = self._statement(cand, verdict)
        suff = assess(
            problem_statement=statement,
            test_patch=cand.test_patch,
            fail_to_pass=verdict.fail_to_pass,
            name_exists=lambda n: n in names,
            settings=self.sufficiency,
            judge_input={
                "instance_id": cand.instance_id,
                "problem_statement": statement,
                "patch": cand.patch,
                "test_patch": cand.test_patch,
                "FAIL_TO_PASS": verdict.fail_to_pass,
            },
        )
        if suff.reject:
            return self._reject(
                cand, suff.reason, "; ".join(f["detail"] for f in suff.flags)
            ), timings
        image_audit: dict[str, Any] | None = None
        if self.audit_images:
            t = time.perf_counter()
            report = audit_image(
                self.engine,
                rec.instance_image,
                instance_id=cand.instance_id,
                test_patch=cand.test_patch,
                project_name=rec.project_name,
                base_tree=repo.commit(cand.base_commit).tree if repo else None,
                base_lines=repo.text_lines(cand.base_commit) if repo else None,
                unchanged=self._base_index(rec.base_image),
            )
            timings["audit"] = time.perf_counter() - t
            image_audit = {"passed": report.passed, "findings": report.findings, "git": report.git}
            if not report.passed:
                detail = "; ".join(f["detail"] for f in report.findings)
                return self._reject(cand, "image_audit_failed", detail), timings
        manifest = self._manifest(
            cand, rec, files, verdict, suff.flags, image_audit, runs, runner=runner
        )
        manifest.problem_statement = statement
        manifest.audit["statement"] = statement_audit
        manifest.audit["clock"] = self.clock(cand)
        view = self.base_view(cand)
        eco.manifest_blocks(
            manifest, rec, view.read if view else None, view.paths if view else list
        )
        # Calibration: the gold patch graded once with every canary its fail-to-pass tests
        # allow (not strict) and the whole base tree scanned for capabilities. Canaries the
        # gold patch fails are armed; the capabilities in use become the gate's allowance.
        t = time.perf_counter()
        with self.test_slots:
            try:
                cal = self.verifier.calibrate(manifest)
            except Exception as exc:  # an infrastructure failure: say so, keep the run going
                return self._reject(
                    cand, "gold_not_verified", f"calibration failed: {exc}"[:1500]
                ), timings
        timings["calibrate"] = time.perf_counter() - t
        assert cal.result is not None
        if cal.result.status != "resolved":
            return self._reject(
                cand,
                "gold_not_verified",
                f"calibration: {cal.result.status}: {cal.result.detail[:1500]}",
                {"violations": cal.result.violations},
            ), timings
        vs = self.verifier.settings
        wanted = self.config.admit.min_decoys if vs.decoys > 0 and vs.canary_limit > 0 else 0
        if len(cal.armed) < wanted:
            return self._reject(
                cand,
                "no_decoys",
                f"{len(cal.armed)} decoy(s) of the {cal.made} perturbations tried (at least "
                f"{wanted} wanted): no assertion of the fail-to-pass tests "
                "compares with a value a wrong one of its type fails"
                + (f"; {cal.leaked}" if cal.leaked else ""),
            ), timings
        manifest.harness["canaries"] = {
            "armed": cal.armed,
            "made": cal.made,
            "disarmed": len(cal.disarmed),
            "base_passed": cal.base_passed,
            "base_passes_kept": cal.base_passes_kept,
            "limit": self.verifier.settings.canary_limit,
        }
        if cal.leaked:
            manifest.harness["canaries"]["leaked"] = cal.leaked
        if eco.scans_in_container:
            manifest.audit["capabilities"] = self.verifier.allowance_of(cal)
        # The task must be gradable as shipped: the gold patch has to score 1.0 through the
        # very verifier (guards, capability gate, sandbox, canaries, checks) that grades agents.
        t = time.perf_counter()
        with self.test_slots:
            graded = self.verifier.verify(manifest, cand.patch, "gold")
        timings["verify_gold"] = time.perf_counter() - t
        if graded.status != "resolved":
            return self._reject(
                cand,
                "gold_not_verified",
                f"{graded.status}: {graded.detail[:1500]}",
                {"violations": graded.violations},
            ), timings
        manifest.audit["gold_verification"] = {
            "status": graded.status,
            "seconds": graded.timings.get("total"),
            "canaries": graded.verifier.get("canaries"),
        }
        return self._test_strength(cand, manifest, eco, timings)

    def _test_strength(
        self, cand: Candidate, manifest: TaskManifest, eco: Ecosystem, timings: dict[str, float]
    ) -> tuple[TaskManifest | Rejection, dict[str, float]]:
        """The test-strength gate (:mod:`swe_forge.admission.strength`): the gold patch's
        mutants graded by the verifier as candidate patches; recorded as
        ``audit.test_strength``, and a score under ``admit.test_strength.min_score`` (when
        above 0) rejects the task as ``weak_tests``."""
        ts = self.config.admit.test_strength
        if not ts.enabled:
            return manifest, timings
        view = self.base_view(cand)
        gold = manifest.audit.get("gold_verification") or {}
        verifier = self.mutant_verifier(gold.get("seconds"))

        def grade(patch: str, m: Mutant) -> VerifyResult:
            with self.test_slots:
                return verifier.verify(manifest, patch, f"mutant:{m.id}")

        t = time.perf_counter()
        measured = measure_strength(
            language=eco.name,
            gold_patch=cand.patch,
            base_read=view.read if view is not None else (lambda _path: None),
            grade=grade,
            settings=StrengthSettings(max_mutants=ts.max_mutants, seconds=ts.seconds, seed=ts.seed),
        )
        timings["test_strength"] = time.perf_counter() - t
        record = measured.to_dict()
        manifest.audit["test_strength"] = record
        score = measured.score
        if ts.min_score > 0 and score is not None and score < ts.min_score:
            return self._reject(
                cand,
                "weak_tests",
                f"test strength {score:.2f} < {ts.min_score:.2f}: {measured.survived} of "
                f"{measured.killed + measured.survived} wrong variants of the gold fix pass "
                "every FAIL_TO_PASS and PASS_TO_PASS test",
                {"test_strength": record},
            ), timings
        return manifest, timings

    def _statement(self, cand: Candidate, verdict: GateVerdict) -> tuple[str, dict[str, Any]]:
        """The task's problem statement and where it came from.

        A statement mining flagged ``thin`` is written from the observed failures (the
        FAIL_TO_PASS tests and the first failure line each showed before the fix) when
        ``admit.thin_statements`` is ``generate``; the PR's text leads it and is kept in the
        audit. The agent then sees what the tests see fail: the names of the held-out tests
        and their messages (an expected value among them), as in SWE-smith's generated issues.
        """
        quality = cand.statement_quality
        audit: dict[str, Any] = {
            "source": "pull_request",
            "quality": dataclasses.asdict(quality) if quality else None,
        }
        thin = quality is not None and "thin" in quality.flags
        if not thin or self.config.admit.thin_statements != "generate":
            return cand.problem_statement, audit
        messages: dict[str, str] = {}
        for run in verdict.runs:
            if run.phase != "before":
                continue
            for test in verdict.fail_to_pass:
                if test not in messages and run.messages.get(test):
                    messages[test] = run.messages[test]
        text = statement_from_failures(verdict.fail_to_pass, messages, title=cand.problem_statement)
        generated = assess_statement(
            text,
            test_patch=cand.test_patch,
            patch=cand.patch,
            thin_words=self.config.mine.thin_statement_words,
            generated=True,
        )
        audit.update(
            source=GENERATED_SOURCE,
            original=cand.problem_statement,
            quality_original=audit["quality"],
            quality=dataclasses.asdict(generated),
            messages=len(messages),
        )
        return text, audit

    def gold_guard(self, cand: Candidate) -> str:
        """Why the verifier's static guards would refuse the gold patch ("" when they accept it)."""
        guard = PatchGuard(
            self.classifier,
            test_patch_paths=protected_paths(cand.test_patch),
            gold_patch=cand.patch,
        )
        report = guard.check(cand.patch)
        return "; ".join(f"{v['code']}: {v['detail']}" for v in report.violations[:5])

    def _base_index(self, base_image: str) -> dict[str, tuple[int, int]]:
        """Files of a base image (scanned once per run): the audit skips them unchanged."""
        if not base_image:
            return {}
        with self._lock:
            if base_image not in self._base_files:
                self._base_files[base_image] = file_index(self.engine, base_image)
            return self._base_files[base_image]

    def _repo(self, cand: Candidate) -> GitRepository | None:
        src = cand.provenance.source
        if src not in self._repos:
            try:
                self._repos[src] = GitRepository(materialize(RepoSource(src), offline=True))
            except SweForgeError:
                # Remembered: an unreachable source is not tried again for every candidate.
                self._repos[src] = None
        return self._repos[src]

    def _manifest(
        self,
        cand: Candidate,
        rec: ImageRecord,
        files: list[str],
        verdict: GateVerdict,
        flags: list[dict[str, str]],
        image_audit: dict[str, Any] | None,
        runs: list[dict[str, Any]],
        runner: TestRunner,
    ) -> TaskManifest:
        prov = dict(cand.to_dict()["provenance"])
        prov["admitted_with"] = __version__
        v = self.verifier.settings
        environment = {
            "version": 1,
            "image": rec.instance_image_id,
            "platform": f"linux/{_platform_arch()}",
            "workdir": "/testbed",
            "user": "1000:1000",
            "home": "/home/swe",
            "path": ENV_PATH,
            # The image's entrypoint checks the work tree out of its one commit; this puts it
            # back as it was between episodes in one container.
            "entrypoint": ["/bin/sh", "-c", f'{MATERIALIZE} && exec "$@"', "swe-forge-entrypoint"],
            "reset": f"{MATERIALIZE} && git -C /testbed clean -qfdx",
            "network": "none",
            "limits": {"cpus": v.limits.cpus, "memory": v.limits.memory, "pids": v.limits.pids},
            "verify_timeout_seconds": v.timeout_seconds,
            "test_timeout_seconds": v.test_timeout_seconds,
            "hidden_from_policy": list(HIDDEN_FROM_POLICY),
        }
        return TaskManifest(
            instance_id=cand.instance_id,
            repo=cand.repo,
            base_commit=cand.base_commit,
            patch=cand.patch,
            test_patch=cand.test_patch,
            problem_statement=cand.problem_statement,
            hints_text=cand.hints_text,
            created_at=cand.created_at,
            version=cand.version,
            environment_setup_commit=cand.environment_setup_commit,
            FAIL_TO_PASS=verdict.fail_to_pass,
            PASS_TO_PASS=verdict.pass_to_pass,
            image={
                "id": rec.instance_image_id,
                "tag": rec.instance_image,
                "env": rec.env_image,
                "env_id": rec.env_image_id,
                "base": rec.base_image,
                "python": rec.python,
                "lock_digest": rec.lock_digest,
                "recipe_digest": rec.recipe_digest,
                "scrubbed_commit": rec.scrubbed_commit,
                "project_name": rec.project_name,
                "registry": rec.registry.to_dict() if rec.registry else None,
            },
            harness={
                "runner": runner.name,
                "test_files": files,
                "test_command": runner.command(files, order_seed=0),
                "test_patch_sha256": sha256(cand.test_patch),
                "gold_patch_sha256": sha256(cand.patch),
                "harness_sha256": self.verifier.harness_sha256,
                "timeout_seconds": self.gate.timeout_seconds,
                "test_timeout_seconds": self.gate.test_timeout_seconds,
            },
            gates={
                "runs_per_phase": self.gate.runs_per_phase,
                "hash_seeds": list(self.gate.hash_seeds),
                "order_seeds": [r["order_seed"] for r in runs],
                "flaky_policy": self.gate.flaky_policy,
                "scope": self.gate.scope,
                "fail_to_pass_scope": self.gate.fail_to_pass_scope,
                **verdict.evidence(),
                "runs": runs,
                "seconds": round(verdict.seconds, 3),
            },
            license=cand.license.to_dict(),
            provenance=prov,
            audit={"sufficiency": flags, "image": image_audit},
            environment=environment,
        )


def _platform_arch() -> str:
    """The Docker platform architecture of this machine (images are built for it)."""
    import platform

    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
