"""Grade predictions on a Ray cluster: one Ray task per prediction (the ``ray`` extra).

Each task declares its resources (one CPU, and the verify configuration's container memory)
so Ray's scheduler gives back-pressure: no node runs more judges than it has CPUs. A task
calls the same verifier as a local run (:func:`swe_forge.api.verify_patch`) with the task
manifest and the patch, so the grades are the same. Two kinds of failure are retried, and
nothing else:

- a node or worker process that dies mid-task: Ray resubmits the task itself
  (``max_retries``; application exceptions are never retried by Ray);
- a result whose status is ``infra_error`` (never the patch's fault): the driver submits the
  prediction again, up to ``verify.infra_retries`` times (possibly on another node).

A grade that is not an infrastructure error is final and handed to the caller the moment it
reaches the driver (the batch mode saves it as a unit right away, so a rerun grades only
what is missing). Nothing imports :mod:`ray` until :func:`import_ray` is called.

Admission (``swe-forge run --executor ray``) runs the same way, one Ray task per candidate
(:meth:`RayExecutor.admit`, one CPU and ``admit.memory`` each): a decision (a task manifest or
a rejection) is final; an admission that raised a :class:`~swe_forge.errors.SweForgeError`
(the engine, a registry, a repository that cannot be read: what the local run reports as an
infrastructure error and leaves undone) is submitted again up to ``verify.infra_retries``
times, then handed to the caller as an infrastructure error.

Images reach a node the way they reach a local run: a task that runs on a node first makes
the images it needs present on that node's engine with
:func:`~swe_forge.images.registry.provide` (an image already there by id is used as it is; a
missing one is pulled by the digest its manifest or image record pins, and refused unless it
is the pinned image). Admission with image records (``run --images``) does the same inside
:meth:`~swe_forge.admission.admitter.Admitter.admit`; without records, a node builds the
images itself (cached by recipe, as locally).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from swe_forge.config import Config
from swe_forge.errors import SweForgeError, UsageError
from swe_forge.records import TaskManifest, VerifyResult

#: What to install when the extra is missing.
PIP_INSTALL = "pip install 'swe-forge[ray]'"

#: Ray's own retries of a task whose worker process or node died (not of exceptions).
NODE_RETRIES = 3

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def import_ray() -> ModuleType:
    """The :mod:`ray` module, or a usage error naming the pip command when it is missing."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed: {PIP_INSTALL}",
            hint=f"install the extra ({PIP_INSTALL}) or use the default --executor local",
        ) from exc
    return ray


def memory_bytes(size: str) -> int:
    """Bytes of a Docker-style size (``4g``, ``512m``, ``1024``)."""
    m = re.fullmatch(r"\s*(\d+)\s*([bkmgt]?)b?\s*", size.lower())
    if not m:
        raise UsageError(f"not a memory size: {size!r}", hint="e.g. 4g, 512m")
    return int(m.group(1)) * _UNITS[m.group(2)]


def provide_task_images(task: TaskManifest, config: Config | None = None) -> None:
    """Make the task's instance image present on this node's engine: used as it is when the
    engine has it (by id: one inspection), else pulled by the digest the manifest pins
    (``image.registry``) and refused unless it is the pinned image.

    Raises:
        DigestError: the registry has no such digest, or it is not the pinned image.
        RegistryError: the registry cannot be reached.
    """
    from swe_forge.api import verifier_engine
    from swe_forge.images.registry import needs_of_task, provide

    provide(verifier_engine(config), needs_of_task(task))


def grade_one(task: dict[str, Any], patch: str, model: str, config: Config) -> dict[str, Any]:
    """The body of one Ray task: grade ``patch`` against ``task`` on this node's engine.

    Runs in a Ray worker process; returns the result as plain data (no swe-forge classes
    cross the wire back). The task's image is made present first (pulled by its pinned
    digest when this node's engine does not have it); the verifier (and its Docker client)
    is made once per worker.
    """
    from swe_forge.api import as_task, verify_patch

    manifest = as_task(task)
    try:
        provide_task_images(manifest, config)
    except SweForgeError as exc:
        # Never the patch's fault: an infrastructure error, submitted again by the driver.
        return VerifyResult(
            manifest.instance_id, model, "infra_error", 0.0, detail=f"images: {exc}"[:2000]
        ).to_dict()
    return verify_patch(manifest, patch, model=model, config=config).to_dict()


#: One admitter per worker process, configuration and container labels (made on first use).
_ADMITTERS: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
#: Clone URLs this worker process has fetched.
_FETCHED: set[str] = set()


def admit_one(
    candidate: dict[str, Any],
    images: dict[str, Any] | None,
    config: Config,
    labels: dict[str, str],
) -> dict[str, Any]:
    """The body of one Ray admission task: decide ``candidate`` on this node.

    Returns ``{"decision": <one JSON line>}`` (a task manifest or a rejection, the very line a
    local run writes), or ``{"infra_error": <message>}`` when the admission raised a
    :class:`~swe_forge.errors.SweForgeError` (the local run's infrastructure error: nothing
    decided). With an image record, the admitter pulls what is missing by its pinned digests;
    without one, it builds the images on this node. A clone URL source is fetched once per
    worker process (a local path must be reachable from the node, e.g. shared storage).
    """
    from swe_forge.admission.admitter import Admitter
    from swe_forge.mining.sources import RepoSource, materialize
    from swe_forge.records import Candidate, ImageRecord

    cand = Candidate.from_dict(candidate)
    try:
        source = RepoSource(cand.provenance.source)
        if source.is_url and source.spec not in _FETCHED:
            materialize(source)  # the node's own mirror, brought up to date once
            _FETCHED.add(source.spec)
        key = (config.digest(), tuple(sorted(labels.items())))
        if key not in _ADMITTERS:
            _ADMITTERS[key] = Admitter(config, container_labels=labels)
        record = ImageRecord.from_dict(images) if images else None
        made, _timings = _ADMITTERS[key].admit(cand, record)
    except SweForgeError as exc:
        return {"infra_error": f"{type(exc).__name__}: {exc}"[:2000]}
    return {"decision": made.to_json()}


@dataclass(frozen=True)
class Job:
    """One prediction to grade: the task, the patch and the model that wrote it."""

    task: TaskManifest
    patch: str
    model: str


class RayExecutor:
    """Grades predictions and admits candidates as Ray tasks on the cluster at ``address``.

    ``address`` is what :func:`ray.init` takes (``auto``, ``HOST:PORT``, ``ray://...``);
    None uses ``RAY_ADDRESS`` when set, else starts a Ray instance in this process. A Ray
    connection made here is closed at the end; one the caller made is left alone.
    """

    def __init__(self, config: Config, address: str | None = None) -> None:
        self.config = config
        self.address = address
        self.memory = memory_bytes(config.verify.memory)
        self.admit_memory = memory_bytes(config.admit.memory)
        self.infra_retries = max(0, config.verify.infra_retries)
        self.ray = import_ray()

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """Connected to the cluster for the block (the :mod:`ray` module)."""
        ray = self.ray
        # Ray prints its nodes' messages ("task failed, retrying...") to this process's
        # stdout, which is the report's (`verify --json`): send them to stderr meanwhile.
        with contextlib.redirect_stdout(sys.stderr):
            started = not ray.is_initialized()
            if started:
                ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
            try:
                yield ray
            finally:
                if started:
                    ray.shutdown()

    def grade(self, jobs: Sequence[Job], on_result: Callable[[int, VerifyResult], None]) -> None:
        """Grade every job; call ``on_result(index, result)`` once per job, as each final
        result reaches the driver (in completion order). A job still failing for the
        infrastructure after its retries ends as its ``infra_error`` result."""
        if not jobs:
            return
        with self.session():
            self._grade(jobs, on_result)

    def _grade(self, jobs: Sequence[Job], on_result: Callable[[int, VerifyResult], None]) -> None:
        ray = self.ray
        remote = ray.remote(grade_one).options(
            num_cpus=1,
            memory=self.memory,
            max_retries=NODE_RETRIES,
            retry_exceptions=False,
            name="swe-forge-verify",
        )
        config_ref = ray.put(self.config)
        tasks = {id(j.task): ray.put(j.task.to_dict()) for j in jobs}

        def submit(i: int) -> Any:
            j = jobs[i]
            return remote.remote(tasks[id(j.task)], j.patch, j.model, config_ref)

        def finish(i: int, ref: Any, tries: int) -> bool:
            result = self._result(ref, jobs[i])
            if result.status == "infra_error" and tries <= self.infra_retries:
                return False  # never the patch's fault: grade it again
            result.attempts = max(result.attempts, tries)
            on_result(i, result)
            return True

        self._drive(len(jobs), submit, finish)

    def admit(
        self,
        candidates: Sequence[dict[str, Any]],
        images: Sequence[dict[str, Any] | None],
        labels: dict[str, str],
        on_decision: Callable[[int, str], None],
        on_error: Callable[[int, str], None],
    ) -> None:
        """Admit every candidate (one Ray task each, one CPU and ``admit.memory``).

        ``images[i]`` is candidate i's image record (as a dict) or None (the node builds).
        ``on_decision(i, line)`` hears each decision (the JSON line of a task manifest or a
        rejection) the moment it reaches the driver; ``on_error(i, message)`` hears a
        candidate that still failed for the infrastructure after its retries (or whose task
        died past Ray's own retries): nothing was decided for it.
        """
        if not candidates:
            return
        with self.session():
            ray = self.ray
            remote = ray.remote(admit_one).options(
                num_cpus=1,
                memory=self.admit_memory,
                max_retries=NODE_RETRIES,
                retry_exceptions=False,
                name="swe-forge-admit",
            )
            config_ref = ray.put(self.config)

            def submit(i: int) -> Any:
                return remote.remote(candidates[i], images[i], config_ref, labels)

            def finish(i: int, ref: Any, tries: int) -> bool:
                try:
                    out = ray.get(ref)
                except Exception as exc:  # the task died past Ray's retries, or a bug of ours
                    on_error(i, f"ray: {type(exc).__name__}: {exc}"[:2000])
                    return True
                if "decision" in out:
                    on_decision(i, str(out["decision"]))
                    return True
                if tries <= self.infra_retries:
                    return False
                on_error(i, str(out.get("infra_error")))
                return True

            self._drive(len(candidates), submit, finish)

    def _drive(
        self,
        n: int,
        submit: Callable[[int], Any],
        finish: Callable[[int, Any, int], bool],
    ) -> None:
        """Submit units 0..n-1 at once (Ray's scheduler holds them until a node has the
        resources); as each completes, ``finish(i, ref, tries)`` says whether it is final
        (True) or is to be submitted again (False)."""
        ray = self.ray
        tries = [0] * n
        pending: dict[Any, int] = {}

        def send(i: int) -> None:
            tries[i] += 1
            pending[submit(i)] = i

        for i in range(n):
            send(i)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                if not finish(i, ref, tries[i]):
                    send(i)

    def _result(self, ref: Any, job: Job) -> VerifyResult:
        """The task's result; a task that failed (its node died past Ray's retries, or an
        exception escaped the verifier) becomes this prediction's infrastructure error."""
        try:
            return VerifyResult(**self.ray.get(ref))
        except Exception as exc:
            return VerifyResult(
                job.task.instance_id,
                job.model,
                "infra_error",
                0.0,
                detail=f"ray: {type(exc).__name__}: {exc}"[:2000],
            )
