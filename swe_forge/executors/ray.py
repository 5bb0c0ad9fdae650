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
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from swe_forge.config import Config
from swe_forge.errors import UsageError
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


def grade_one(task: dict[str, Any], patch: str, model: str, config: Config) -> dict[str, Any]:
    """The body of one Ray task: grade ``patch`` against ``task`` on this node's engine.

    Runs in a Ray worker process; returns the result as plain data (no swe-forge classes
    cross the wire back). The verifier (and its Docker client) is made once per worker.
    """
    from swe_forge.api import verify_patch

    return verify_patch(task, patch, model=model, config=config).to_dict()


@dataclass(frozen=True)
class Job:
    """One prediction to grade: the task, the patch and the model that wrote it."""

    task: TaskManifest
    patch: str
    model: str


class RayExecutor:
    """Grades jobs as Ray tasks on the cluster at ``address``.

    ``address`` is what :func:`ray.init` takes (``auto``, ``HOST:PORT``, ``ray://...``);
    None uses ``RAY_ADDRESS`` when set, else starts a Ray instance in this process. A Ray
    connection made here is closed at the end; one the caller made is left alone.
    """

    def __init__(self, config: Config, address: str | None = None) -> None:
        self.config = config
        self.address = address
        self.memory = memory_bytes(config.verify.memory)
        self.infra_retries = max(0, config.verify.infra_retries)
        self.ray = import_ray()

    def grade(self, jobs: Sequence[Job], on_result: Callable[[int, VerifyResult], None]) -> None:
        """Grade every job; call ``on_result(index, result)`` once per job, as each final
        result reaches the driver (in completion order). A job still failing for the
        infrastructure after its retries ends as its ``infra_error`` result."""
        if not jobs:
            return
        ray = self.ray
        # Ray prints its nodes' messages ("task failed, retrying...") to this process's
        # stdout, which is the report's (`verify --json`): send them to stderr meanwhile.
        with contextlib.redirect_stdout(sys.stderr):
            started = not ray.is_initialized()
            if started:
                ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
            try:
                self._grade(jobs, on_result)
            finally:
                if started:
                    ray.shutdown()

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
        tries = [0] * len(jobs)
        pending: dict[Any, int] = {}

        def submit(i: int) -> None:
            tries[i] += 1
            j = jobs[i]
            pending[remote.remote(tasks[id(j.task)], j.patch, j.model, config_ref)] = i

        for i in range(len(jobs)):
            submit(i)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                result = self._result(ref, jobs[i])
                if result.status == "infra_error" and tries[i] <= self.infra_retries:
                    submit(i)  # never the patch's fault: grade it again
                    continue
                result.attempts = max(result.attempts, tries[i])
                on_result(i, result)

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
