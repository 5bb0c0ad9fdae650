"""A pool of remote verifiers for trainers: Ray actors, rewards as they finish, back-pressure.

RL trainers (verl, OpenRLHF, SkyRL) already run on Ray and score rollouts asynchronously.
:class:`VerifierPool` gives them the verifier as ``size`` Ray actors, each holding one
verifier (and Docker client) on its node and grading one patch at a time in a fresh judge's
container, exactly as ``swe-forge verify`` does (:func:`swe_forge.executors.ray.grade_one`:
the task's image made present on the node, pulled by its pinned digest when missing)::

    async with swe_forge.VerifierPool(size=8, address="auto") as pool:
        result = await pool.submit(task, patch)                 # a VerifyResult
        reward = await pool.compute_score("swe", answer, task)  # {"score": 1.0, ...}
        async for i, result in pool.as_completed(pairs):        # in finishing order
            ...

Back-pressure: at most ``size`` gradings are in flight; :meth:`VerifierPool.submit` waits
for an idle actor before sending anything, and :meth:`VerifierPool.as_completed` draws from
its input only when an actor is free (an input of a million rollouts is never queued at
once). Retries are those of the CLI: an actor whose node dies is restarted by Ray and its
call retried (``NODE_RETRIES``); an ``infra_error`` result (never the patch's fault) is
graded again up to ``verify.infra_retries`` times; any other result is final.

The reward function is :func:`swe_forge.compute_score`'s, awaited: the same arguments
(``data_source, solution_str, ground_truth, extra_info``) and the same result
(``{"score", "status", "infra_error"}``); a trainer drops ``infra_error`` samples rather than
learning from them. The pool is for one asyncio event loop; :mod:`ray` is imported when a
pool starts, never before.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from swe_forge.config import Config, load_config
from swe_forge.records import TaskManifest, VerifyResult

#: What :meth:`VerifierPool.submit` accepts as a task (as :func:`swe_forge.verify_patch`).
TaskLike = TaskManifest | dict[str, Any] | str | Path


class Judge:
    """The body of one pool actor: one verifier on its node, one patch at a time."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def grade(self, task: dict[str, Any], patch: str, model: str) -> dict[str, Any]:
        """Grade ``patch`` against ``task`` on this node (a result as plain data)."""
        from swe_forge.executors.ray import grade_one

        return grade_one(task, patch, model, self.config)


class VerifierPool:
    """``size`` Ray actors grading patches, at most ``size`` at once.

    ``address`` is what :func:`ray.init` takes (None: ``RAY_ADDRESS``, else a Ray instance
    started in this process); a connection the pool made is closed by :meth:`close`, one the
    caller made is left alone. Each actor declares ``num_cpus`` CPUs and the configuration's
    ``verify.memory`` (so Ray places no more judges on a node than it can hold).
    """

    def __init__(
        self,
        size: int = 2,
        *,
        address: str | None = None,
        config: Config | None = None,
        num_cpus: float = 1.0,
    ) -> None:
        if size < 1:
            raise ValueError(f"a pool needs at least one actor (size={size})")
        self.size = size
        self.address = address
        self.config = config or load_config()
        self.num_cpus = num_cpus
        self.infra_retries = max(0, self.config.verify.infra_retries)
        self._ray: Any = None
        self._started_ray = False
        self._actor_class: Any = None
        self._actors: list[Any] = []
        self._idle: asyncio.Queue[Any] | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> VerifierPool:
        """Connect to the cluster and create the actors (done by ``async with`` and on first
        use; a second call does nothing).

        Raises:
            UsageError: Ray is not installed (``pip install 'swe-forge[ray]'``).
        """
        if self._ray is not None:
            return self
        from swe_forge.executors.ray import NODE_RETRIES, import_ray, memory_bytes

        ray = import_ray()
        if not ray.is_initialized():
            ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
            self._started_ray = True
        self._ray = ray
        self._actor_class = ray.remote(Judge).options(
            num_cpus=self.num_cpus,
            memory=memory_bytes(self.config.verify.memory),
            max_restarts=NODE_RETRIES,
            max_task_retries=NODE_RETRIES,
        )
        self._actors = [self._new_actor() for _ in range(self.size)]
        self._idle = asyncio.Queue()
        for actor in self._actors:
            self._idle.put_nowait(actor)
        return self

    def _new_actor(self) -> Any:
        return self._actor_class.remote(self.config)

    def close(self) -> None:
        """End the actors (and the Ray connection, when the pool made it)."""
        if self._ray is None:
            return
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor)
        self._actors = []
        self._idle = None
        if self._started_ray:
            self._ray.shutdown()
        self._ray = None
        self._started_ray = False

    async def __aenter__(self) -> VerifierPool:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- grading -----------------------------------------------------------------------------

    async def submit(self, task: TaskLike, patch: str, *, model: str = "policy") -> VerifyResult:
        """Grade ``patch`` against ``task`` on an idle actor (waiting for one: back-pressure).

        Never raises for a bad patch or a lost node: the result's ``status`` says what
        happened, ``infra_error`` (after the retries) being never the patch's fault.
        """
        from swe_forge.api import as_task

        self.start()
        assert self._idle is not None
        manifest = as_task(task)
        data = manifest.to_dict()
        actor = await self._idle.get()
        tries = 0
        try:
            while True:
                tries += 1
                try:
                    result = VerifyResult(**await actor.grade.remote(data, patch, model))
                except Exception as exc:  # the actor died past its restarts: replace it
                    actor = self._replace(actor)
                    result = VerifyResult(
                        manifest.instance_id,
                        model,
                        "infra_error",
                        0.0,
                        detail=f"ray: {type(exc).__name__}: {exc}"[:2000],
                    )
                if result.status != "infra_error" or tries > self.infra_retries:
                    break
        finally:
            if self._idle is not None:
                self._idle.put_nowait(actor)
        result.attempts = max(result.attempts, tries)
        return result

    def _replace(self, actor: Any) -> Any:
        """A new actor in the place of a dead one."""
        fresh = self._new_actor()
        self._actors = [fresh if a is actor else a for a in self._actors]
        return fresh

    async def compute_score(
        self,
        data_source: str,
        solution_str: str,
        ground_truth: TaskLike,
        extra_info: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """:func:`swe_forge.compute_score` on the pool: the diff in the policy's answer graded
        against the task; ``{"score": reward, "status": ..., "infra_error": bool}``."""
        from swe_forge.api import extract_patch, model_of, score_of

        del data_source
        result = await self.submit(
            ground_truth, extract_patch(solution_str), model=model_of(extra_info)
        )
        return score_of(result)

    async def as_completed(
        self, items: Iterable[tuple[TaskLike, str] | tuple[TaskLike, str, str]]
    ) -> AsyncIterator[tuple[int, VerifyResult]]:
        """Grade ``(task, patch)`` or ``(task, patch, model)`` items; yield ``(index,
        result)`` as each finishes. At most ``size`` are in flight: the next item is taken
        from ``items`` only when one finishes (the input may be a lazy generator)."""
        self.start()
        source = iter(enumerate(items))
        running: dict[asyncio.Task[VerifyResult], int] = {}

        def refill() -> None:
            for i, item in itertools.islice(source, self.size - len(running)):
                task, patch, *model = item
                coro = self.submit(task, patch, model=model[0] if model else "policy")
                running[asyncio.ensure_future(coro)] = i

        refill()
        try:
            while running:
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for fut in done:
                    i = running.pop(fut)
                    yield i, fut.result()
                refill()
        finally:
            for fut in running:  # the caller stopped early: nothing left dangling
                fut.cancel()
