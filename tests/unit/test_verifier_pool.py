"""VerifierPool without a cluster: a fake ``ray`` whose actors grade by script. In-flight
work never exceeds the pool's size, results come as they finish, only infrastructure errors
are graded again, and a dead actor is replaced."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from swe_forge.config import load_config
from swe_forge.executors import pool as pool_module
from swe_forge.executors import ray as ray_executor
from swe_forge.records import TaskManifest, VerifyResult


class FakeRay:
    """Actors whose ``grade`` sleeps ``delay`` (from the patch text) and answers by script."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.actors: list[Any] = []
        self.options: dict[str, Any] = {}
        self.killed: list[Any] = []
        self.initialized = False
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kw: Any) -> None:
        self.initialized = True

    def shutdown(self) -> None:
        self.initialized = False

    def kill(self, actor: Any) -> None:
        self.killed.append(actor)

    def remote(self, cls: Any) -> Any:
        fake = self

        class Method:
            def __init__(self, actor: Any) -> None:
                self.actor = actor

            def remote(self, task: dict[str, Any], patch: str, model: str) -> Any:
                return fake.call(self.actor, task, patch, model)

        class Actor:
            def __init__(self) -> None:
                self.grade = Method(self)
                self.dead = False

        class Handle:
            def options(self, **kw: Any) -> Any:
                fake.options = kw
                return self

            def remote(self, config: Any) -> Any:
                actor = Actor()
                fake.actors.append(actor)
                return actor

        return Handle()

    async def call(self, actor: Any, task: dict[str, Any], patch: str, model: str) -> Any:
        self.calls.append(model)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            delay, _, outcome = patch.splitlines()[0].partition(":")
            await asyncio.sleep(float(delay))
            if outcome == "die" or actor.dead:
                actor.dead = True
                raise RuntimeError("RayActorError: the actor died")
            if outcome == "infra-once" and self.calls.count(model) == 1:
                outcome = "infra_error"
            elif outcome == "infra-once":
                outcome = "resolved"
            reward = 1.0 if outcome == "resolved" else 0.0
            return VerifyResult(task["instance_id"], model, outcome, reward).to_dict()
        finally:
            self.in_flight -= 1


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRay]:
    fake = FakeRay()
    monkeypatch.setattr(ray_executor, "import_ray", lambda: fake)
    yield fake


def task(n: int) -> TaskManifest:
    return TaskManifest(
        f"t-{n}", "o/r", "0", "", "", "", "", "", "", "", ["t::f"], [], {}, {}, {}, {}, {}, {}
    )


def test_results_as_they_finish_never_more_than_size_in_flight(fake: FakeRay) -> None:
    delays = [0.05, 0.01, 0.03, 0.0, 0.02, 0.04, 0.01, 0.0]

    def items() -> Iterator[tuple[Any, str, str]]:
        for i, d in enumerate(delays):
            # Drawn lazily: never more than `size` ahead of what finished.
            assert fake.in_flight <= 3
            yield task(i), f"{d}:resolved", f"m{i}"

    async def main() -> list[int]:
        async with pool_module.VerifierPool(size=3, config=load_config()) as pool:
            return [i async for i, r in pool.as_completed(items()) if r.reward == 1.0]

    order = asyncio.run(main())
    assert sorted(order) == list(range(len(delays)))
    assert order != list(range(len(delays)))  # finishing order, not input order
    assert fake.peak == 3 and len(fake.actors) == 3
    assert fake.options["num_cpus"] == 1 and fake.options["memory"] == 4 << 30
    assert fake.options["max_restarts"] > 0 and fake.options["max_task_retries"] > 0
    assert len(fake.killed) == 3 and not fake.initialized  # closed what it started


def test_only_infrastructure_errors_are_graded_again(fake: FakeRay) -> None:
    async def main() -> list[VerifyResult]:
        async with pool_module.VerifierPool(size=2, config=load_config()) as pool:
            return list(
                await asyncio.gather(
                    pool.submit(task(1), "0:infra-once", model="flaky"),
                    pool.submit(task(2), "0:unresolved", model="wrong"),
                )
            )

    flaky, wrong = asyncio.run(main())
    assert (flaky.status, flaky.attempts) == ("resolved", 2)
    assert wrong.status == "unresolved" and fake.calls.count("wrong") == 1


def test_a_dead_actor_is_replaced(fake: FakeRay) -> None:
    async def main() -> tuple[VerifyResult, dict[str, Any]]:
        async with pool_module.VerifierPool(size=1, config=load_config()) as pool:
            dead = await pool.submit(task(1), "0:die", model="x")
            score = await pool.compute_score("d", "```diff\n0:resolved\n@@\n```", task(2))
            return dead, score

    dead, score = asyncio.run(main())
    assert dead.status == "infra_error" and "died" in dead.detail
    assert len(fake.actors) > 1  # a fresh actor took the dead one's place
    assert score == {"score": 1.0, "status": "resolved", "infra_error": False}
