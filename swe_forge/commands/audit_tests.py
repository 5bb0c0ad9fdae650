"""``swe-forge audit-tests``: the test-strength gate on tasks already admitted.

The gate admission runs (:mod:`swe_forge.admission.strength`), on manifests and their
images alone: nothing is admitted again, no repository is needed. The files the gold patch
changes are read as the base has them from the task's own image (``/testbed`` is the
scrubbed base tree), each mutant of the gold fix is graded by the verifier's judge (no decoy
twins: a mutant is made here and cannot recognise the held-out tests), and the task is
written again with ``audit.test_strength`` set, in the input's order, so ``report`` and
``export`` read the scores as they read an admission's.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge.admission.strength import StrengthSettings, measure, mutant_settings
from swe_forge.config import Config
from swe_forge.ecosystems.base import touched_paths
from swe_forge.engine import Engine
from swe_forge.errors import InputError
from swe_forge.jsonl import AtomicWriter
from swe_forge.mining.classify import PathClassifier
from swe_forge.mutation import Mutant
from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import TaskManifest, VerifyResult
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier

#: Where an instance image holds the base tree.
TESTBED = "/testbed"


@dataclass
class AuditTestsRun:
    """What ``audit-tests`` measured."""

    tasks: int = 0
    measured: int = 0
    with_survivors: int = 0
    scores: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Counts and the score distribution (what ``report`` shows for admitted tasks)."""
        bins = Counter(
            "1.0" if s >= 1.0 else "[0.5,1)" if s >= 0.5 else "<0.5" for s in self.scores
        )
        return {
            "tasks": self.tasks,
            "measured": self.measured,
            "unmeasured": self.tasks - self.measured,
            "with_survivors": self.with_survivors,
            "scores": {k: bins.get(k, 0) for k in ("1.0", "[0.5,1)", "<0.5")},
            "errors": self.errors[:50],
            "seconds": round(self.seconds, 2),
        }


def image_reader(engine: Engine, image: str, paths: list[str], scratch: Path) -> dict[str, bytes]:
    """The base bytes of ``paths`` in ``image`` (a path the base does not have is absent).

    An instance image keeps the base tree in ``/testbed/.git`` only (its files are written
    from it when a container starts): the repository is copied out and read with the git
    module, never run.
    """
    from swe_forge.git.repo import GitRepository

    engine.copy_out(image, f"{TESTBED}/.git", scratch)
    repo = GitRepository(scratch / ".git")
    head = repo.head()
    found: dict[str, bytes] = {}
    for path in paths:
        blob = repo.blob_at(head, path)
        if blob is not None:
            found[path] = blob[1]
    return found


def run_audit_tests(
    tasks_path: Path,
    output: Path,
    *,
    config: Config,
    instances: list[str] | None = None,
    settings: StrengthSettings | None = None,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
) -> AuditTestsRun:
    """Measure the test strength of every task of ``tasks_path`` and write the tasks with
    ``audit.test_strength`` to ``output``.

    Raises:
        InputError: the file holds no tasks, or an ``--instance`` is not among them.
        DigestError: a task's image is absent and no registry pins it.
    """
    from swe_forge.commands.verify import provide_tasks, read_tasks

    reporter = reporter or NullReporter()
    start = time.perf_counter()
    tasks = read_tasks(tasks_path)
    if instances:
        missing = sorted(set(instances) - set(tasks))
        if missing:
            raise InputError(
                f"not in {tasks_path}: {', '.join(missing[:5])}", hint="check the instance ids"
            )
    todo = [t for t in tasks.values() if not instances or t.instance_id in instances]
    ts = config.admit.test_strength
    settings = settings or StrengthSettings(
        max_mutants=ts.max_mutants, seconds=ts.seconds, seed=ts.seed
    )
    engine = engine or Engine()
    classifier = PathClassifier(config.classify)
    verify_settings = VerifySettings.from_config(config.verify)
    # One verifier per time limit (its judge's digest is hashed once, not once per task).
    verifiers: dict[VerifySettings, Verifier] = {}
    out = AtomicWriter(output)
    run = AuditTestsRun(tasks=len(todo))
    try:
        provide_tasks(engine, todo, reporter)
        reporter.start("audit-tests", len(todo))
        for task in todo:
            gold = task.audit.get("gold_verification") or {}
            limits = mutant_settings(verify_settings, gold.get("seconds"))
            if limits not in verifiers:
                verifiers[limits] = Verifier(engine, classifier, limits)
            verifier = verifiers[limits]
            record = _measure_one(engine, verifier, task, settings)
            task.audit["test_strength"] = record
            score = record.get("score")
            if record.get("error"):
                run.errors.append(f"{task.instance_id}: {record['error']}")
            if isinstance(score, int | float):
                run.measured += 1
                run.scores.append(float(score))
            if record.get("survived"):
                run.with_survivors += 1
            out.write(json.dumps(task.to_dict(), sort_keys=True, ensure_ascii=False))
            reporter.note(
                f"{task.instance_id}: "
                + (
                    f"score {score:g} ({record['killed']} killed, {record['survived']} "
                    f"survived, {record['invalid']} invalid of {record['generated']})"
                    if isinstance(score, int | float)
                    else f"unmeasured ({record.get('error') or 'no mutant judged'})"
                )
            )
            reporter.advance()
        reporter.finish()
        out.commit()
    except BaseException:
        out.abort()
        raise
    run.seconds = time.perf_counter() - start
    return run


def _measure_one(
    engine: Engine, verifier: Verifier, task: TaskManifest, settings: StrengthSettings
) -> dict[str, Any]:
    image = str(task.image.get("id") or "")
    language = verifier.ecosystem_of(task).name
    with tempfile.TemporaryDirectory(prefix="swe-forge-audit-") as scratch:
        base = image_reader(engine, image, touched_paths(task.patch), Path(scratch))

    def grade(patch: str, m: Mutant) -> VerifyResult:
        return verifier.verify(task, patch, f"mutant:{m.id}")

    measured = measure(
        language=language,
        gold_patch=task.patch,
        base_read=base.get,
        grade=grade,
        settings=settings,
    )
    return measured.to_dict()
