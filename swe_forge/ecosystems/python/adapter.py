"""The adapter, :class:`PythonEcosystem`: what the package's modules answer, behind the protocol
(the package's docstring says how; :mod:`swe_forge.ecosystems.python`)."""

from __future__ import annotations

import importlib
import os
import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from swe_forge import pyast
from swe_forge.config import ClassifyConfig
from swe_forge.diffs import DiffParseError, parse_diff
from swe_forge.ecosystems.base import CandidateCheck, JobRequest, Reader
from swe_forge.ecosystems.python.detect import PYTHON_MARKERS
from swe_forge.ecosystems.python.runner import PytestRunner, protect_spec
from swe_forge.ecosystems.python.scope import PatchScope, data_test_dirs, patch_scope
from swe_forge.ecosystems.scanning import (
    UNPARSABLE,
    Findings,
    source_capabilities,
    tree_source_capabilities,
)
from swe_forge.mining.classify import FileKind, PathClassifier

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate, ImageRecord, TaskManifest


def scan(source: bytes, path: str, fragment: bool = False) -> Findings:
    """The judge's Python scanner (the one the container runs) on the host: capability ->
    [(line, evidence)]; a whole file it cannot parse is :data:`UNPARSABLE` (a fragment's
    syntax errors are expected)."""
    # Imported by name: the harness is plain, untyped Python that must run on old Pythons.
    harness = importlib.import_module("swe_forge.gates.harness.swe_forge_capabilities")
    with pyast.parsing():
        got = harness.scan(source, path)
    found: Findings = {
        str(cap): [(int(line), str(detail)) for line, detail in evidence]
        for cap, evidence in got["caps"].items()
    }
    if got["error"] and not fragment:
        found.setdefault(UNPARSABLE, [(0, str(got["error"])[:80])])
    return found


class PythonEcosystem:
    """pytest projects: the adapter (see :class:`swe_forge.ecosystems.base.Ecosystem`)."""

    name = "python"
    runner_name = "pytest"
    #: The scanner and the canary writer run in the container, with the task's own Python.
    scans_in_container = True
    #: One pytest process: a copy that fails to import fails alone.
    redraws_calibration = False
    #: Each decoy checked is one more pytest process.
    validated_decoys = 12

    def __init__(self, classifier: PathClassifier | None = None) -> None:
        self.classifier = classifier or PathClassifier(ClassifyConfig())

    def detect(self, read: Reader) -> bool:
        """A packaging or test-runner file of Python's at the top."""
        return any(read(name) is not None for name in PYTHON_MARKERS)

    def is_test_file(self, path: str) -> bool:
        """A test module by its path and name (``tests/test_*.py``...)."""
        return self.classifier.is_test_module(path)

    def test_files(self, test_patch: str) -> list[str]:
        """Test modules the test patch adds or modifies (deleted ones cannot be run); for a
        patch that changes only the case files of data-driven tests, their test directories
        (pytest runs the modules under them; the supervisor closes those modules, not the
        directory, once collected)."""
        try:
            parsed = parse_diff(test_patch)
        except DiffParseError:
            return []
        modules = {fp.new_path for fp in parsed if fp.new_path and self.is_test_file(fp.new_path)}
        if modules:
            return sorted(modules)
        return data_test_dirs([fp.new_path for fp in parsed if fp.new_path], self.classifier)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> PatchScope:
        """The tests the test patch adds or changes, read with ``ast`` (every test of the
        test directories whose data-driven cases alone it changes)."""
        try:
            paths = [fp.new_path for fp in parse_diff(test_patch) if fp.new_path]
        except DiffParseError:
            paths = []
        return patch_scope(
            test_patch, read_base, self.is_test_file, data_test_dirs(paths, self.classifier)
        )

    def runner(self, module: str, packages: list[str] | None = None) -> PytestRunner:
        """pytest with the judge's plugin (the same for every project)."""
        return PytestRunner()

    def runner_for(self, rec: ImageRecord) -> PytestRunner:
        """pytest with the judge's plugin."""
        return PytestRunner()

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """The test patch's paths and the test trees they live in (runner configuration
        anywhere is found and locked by the supervisor itself)."""
        return protect_spec(test_patch, self.classifier)

    def refusal(self, rec: ImageRecord) -> tuple[str, str] | None:
        """A project whose tasks cannot be judged: one the test runner imports itself."""
        from swe_forge.verify.guards import FRAMEWORK_PROJECTS

        norm = (rec.project_name or "").lower().replace("_", "-")
        if norm in FRAMEWORK_PROJECTS:
            return (
                "framework_project",
                f"{rec.project_name} is imported by the test runner itself; its tasks cannot "
                "be judged without trusting the code under test",
            )
        return None

    def manifest_blocks(
        self,
        manifest: TaskManifest,
        rec: ImageRecord,
        read: Reader | None,
        paths: Callable[[], list[str]],
    ) -> None:
        """Nothing before calibration: Python's capability allowance is what calibration reads
        in the container with the task's own Python (the verifier's ``allowance_of``)."""

    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """None from the patch's text: pytest's settings are compared parsed, before and
        after, from what the container reads (``config_texts``: :meth:`check_candidate`)."""
        return []

    def check_candidate(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> CandidateCheck:
        """pytest's settings compared parsed, before and after (a hunk's text can hide a
        key); what the candidate uses is read in the container (``check_scanned`` follows)."""
        from swe_forge.ecosystems.python.pytest_settings import runner_settings_changes

        changed = runner_settings_changes(prepared.get("config_texts") or {})
        return CandidateCheck(
            [{"code": "runner_config", "detail": d} for d in changed], "; ".join(changed)[:1500]
        )

    def check_scanned(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> list[dict[str, str]]:
        """The comparison hooks the candidate adds that the gold patch does not, read on the
        host from the files the container showed and the project modules they import (after
        the container's scan: a hook in a builtin's subclass is named as that)."""
        from swe_forge.ecosystems.python import comparison_hooks

        shown = prepared.get("shown") or {}
        base = {k: v.encode("utf-8") for k, v in shown.items()}
        modules = {
            k: v.encode("utf-8")
            for k, v in (prepared.get("shown_imports") or {}).items()
            if k not in base
        }
        return comparison_hooks.violations(
            comparison_hooks.added_hooks(patch, base.get, modules),
            comparison_hooks.added_hooks(task.patch, base.get, modules),
        )

    def kept_decoys(
        self,
        copies: dict[str, dict[str, Any]],
        outcomes: dict[str, str],
        test_patch: str,
        shown: dict[str, str],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The copies the gold patch failed, on lines the test patch wrote and as natural as
        the tests (:mod:`swe_forge.ecosystems.python.canary`)."""
        from swe_forge.ecosystems.python.canary import kept_decoys

        return kept_decoys(copies, outcomes, test_patch, shown)

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the patch's Python source files use after it that they did not use
        before (the judge's scanner on the host's Python)."""
        return source_capabilities(patch, read_base, self._source, scan)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's Python source files use."""
        return tree_source_capabilities(list(paths), read, self._source, scan)

    def _source(self, path: str) -> bool:
        return path.endswith(".py") and self.classifier.classify(path) is FileKind.SOURCE

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """No base file besides the changed ones."""
        return []

    def swebench_eval(self, task: TaskManifest) -> tuple[str, str]:
        """The eval script that runs the gates' tests with their pytest settings, and the log
        parser that reads its ``-rA`` lines (:mod:`swe_forge.ecosystems.python.swebench`)."""
        from swe_forge.ecosystems.python.swebench import eval_script, log_parser

        return eval_script(task), log_parser([*task.FAIL_TO_PASS, *task.PASS_TO_PASS])

    def unit_of(self, test: str) -> str:
        """One pytest process runs every test."""
        return ""

    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """Base, env and instance images from the candidate's recipe."""
        from swe_forge.ecosystems.python.image import build_python

        return build_python(builder, candidate)

    def grading_job(self, task: TaskManifest, request: JobRequest) -> dict[str, Any]:
        """pytest with the judge's plugin on FAIL_TO_PASS and PASS_TO_PASS in the project's
        order: a calibration run whose copies the container's canary writer makes, or the
        twins, each naming the armed entry its decoy applies (written in the container)."""
        files = [str(f) for f in task.harness.get("test_files", [])]
        f2p = list(task.FAIL_TO_PASS)
        canaries: dict[str, Any] | None = None
        if request.plan is None and request.canary_limit > 0 and f2p:
            canaries = {"tests": f2p, "sites": None, "strict": False, "first": True}
            canaries["limit"] = request.canary_limit
        spec: dict[str, Any] = {
            "argv": PytestRunner().argv(files),
            "env": {
                "PYTHONHASHSEED": "0",
                "SWE_FORGE_ORDER_SEED": str(int.from_bytes(os.urandom(4), "big")),
            },
            "timeout": request.timeout,
            "test_timeout": request.test_timeout,
            # The tests in the project's own order: the gates shuffle to find
            # order-dependent tests, grading must not trip on them.
            "order": "natural",
            "output_limit": request.output_limit,
            "select": sorted(set(f2p) | set(task.PASS_TO_PASS)),
            "canaries": canaries,
            # Code that appears during the run is held to what the patch was held to.
            "imports": {"allowance": sorted(request.allowance)},
        }
        if request.plan is not None:
            rng = random.SystemRandom()
            spec["twins"] = [
                {}
                if t is None
                else {"decoy": {"test": t["test"], "site": t["site"], "seed": t["seed"]}}
                for t in request.plan.twins
            ]
            spec["token"] = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(6))
            # Every twin's test files end with the decoys' helpers, the honest twin's too.
            spec["appendix"] = sorted({t.split("::", 1)[0] for t in f2p})
            # Once pytest has collected them, the test files are out of the tests' reach.
            spec["hide_collected"] = sorted(
                {t.split("::", 1)[0] for t in spec["select"]} | set(files)
            )
        return {
            "late_patches": [{"name": "test", "path": request.test_patch_path}],
            "protect": self.protect(task.test_patch),
            "run": spec,
        }
