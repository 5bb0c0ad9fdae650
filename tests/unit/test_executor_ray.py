"""The Ray executor without a cluster: the missing extra, sizes, and which failures are
retried, for verify and for admission (a fake ``ray`` module stands in for the cluster)."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from swe_forge.config import load_config
from swe_forge.errors import UsageError
from swe_forge.executors import ray as ray_executor
from swe_forge.records import VerifyResult


def test_missing_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(UsageError) as err:
        ray_executor.import_ray()
    assert err.value.exit_code == 2
    assert "pip install 'swe-forge[ray]'" in str(err.value)
    assert "\n" not in str(err.value)


def test_memory_bytes() -> None:
    assert ray_executor.memory_bytes("4g") == 4 << 30
    assert ray_executor.memory_bytes("512m") == 512 << 20
    assert ray_executor.memory_bytes("1024") == 1024
    with pytest.raises(UsageError):
        ray_executor.memory_bytes("lots")


class Ref:
    """An object ref: hashable by identity, like Ray's."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome


class FakeRay:
    """Runs 'tasks' at once; each call returns the next scripted outcome for its model."""

    def __init__(self, script: dict[str, list[Any]]) -> None:
        self.script = script
        self.options: dict[str, Any] = {}
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return True

    def put(self, value: Any) -> Any:
        return value

    def remote(self, fn: Any) -> Any:
        fake = self

        class Remote:
            def options(self, **kw: Any) -> Any:
                fake.options = kw
                return self

            def remote(self, task: dict[str, Any], patch: str, model: str, cfg: Any) -> Any:
                fake.calls.append(model)
                return Ref(fake.script[model].pop(0))

        return Remote()

    def wait(self, refs: list[Any], num_returns: int = 1) -> tuple[list[Any], list[Any]]:
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref: Any) -> Any:
        if isinstance(ref.outcome, Exception):
            raise ref.outcome
        return VerifyResult(
            "t-1", "m", ref.outcome, 1.0 if ref.outcome == "resolved" else 0.0
        ).to_dict()


def test_only_infrastructure_errors_are_resubmitted(monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config()
    retries = config.verify.infra_retries
    fake = FakeRay(
        {
            "flaky": ["infra_error", "resolved"],
            "dead-node": [RuntimeError("NodeDiedError"), "unresolved"],
            "bad": ["invalid_patch"],
            "broken": ["infra_error"] * (retries + 1),
        }
    )
    monkeypatch.setattr(ray_executor, "import_ray", lambda: fake)
    task = SimpleNamespace(instance_id="t-1", to_dict=lambda: {"instance_id": "t-1"})
    jobs = [ray_executor.Job(task, "p", m) for m in ("flaky", "dead-node", "bad", "broken")]  # type: ignore[arg-type]
    got: dict[int, str] = {}
    ray_executor.RayExecutor(config).grade(jobs, lambda i, r: got.setdefault(i, r.status))
    assert got == {0: "resolved", 1: "unresolved", 2: "invalid_patch", 3: "infra_error"}
    assert fake.calls.count("bad") == 1 and fake.calls.count("broken") == retries + 1
    assert fake.options["num_cpus"] == 1 and fake.options["memory"] == 4 << 30
    assert fake.options["retry_exceptions"] is False and fake.options["max_retries"] > 0


def test_no_ray_import_by_default() -> None:
    import subprocess

    code = (
        "import sys, swe_forge, swe_forge.cli._main, swe_forge.commands.verify, swe_forge.executors, "
        "swe_forge.batch.run, swe_forge.executors.pool; swe_forge.VerifierPool(size=1); "
        "sys.exit('ray' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


class FakeAdmitRay(FakeRay):
    """Admission tasks: each candidate's scripted outcomes, in order."""

    seen_images: list[Any]

    def remote(self, fn: Any) -> Any:
        fake = self
        fake.seen_images = []

        class Remote:
            def options(self, **kw: Any) -> Any:
                fake.options = kw
                return self

            def remote(self, cand: dict[str, Any], images: Any, cfg: Any, labels: Any) -> Any:
                fake.calls.append(cand["instance_id"])
                fake.seen_images.append(images)
                return Ref(fake.script[cand["instance_id"]].pop(0))

        return Remote()

    def get(self, ref: Any) -> Any:
        if isinstance(ref.outcome, Exception):
            raise ref.outcome
        return ref.outcome


def test_admission_resubmits_only_infrastructure_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config()
    retries = config.verify.infra_retries
    fake = FakeAdmitRay(
        {
            "task": [{"decision": '{"record_type":"task"}'}],
            "engine-hiccup": [{"infra_error": "DockerError: gone"}, {"decision": "{}"}],
            "dead-node": [RuntimeError("NodeDiedError")],
            "engine-down": [{"infra_error": "DockerError: down"}] * (retries + 1),
        }
    )
    monkeypatch.setattr(ray_executor, "import_ray", lambda: fake)
    cands = [{"instance_id": k} for k in ("task", "engine-hiccup", "dead-node", "engine-down")]
    decided: dict[int, str] = {}
    errors: dict[int, str] = {}
    ray_executor.RayExecutor(config).admit(
        cands,
        [{"record_type": "images"}, None, None, None],
        {"org.swe-forge.run": "x"},
        decided.__setitem__,
        errors.__setitem__,
    )
    assert decided == {0: '{"record_type":"task"}', 1: "{}"}
    assert set(errors) == {2, 3} and "NodeDiedError" in errors[2] and "down" in errors[3]
    # A decision is final and a dead task is Ray's to retry: neither is submitted again.
    assert fake.calls.count("task") == 1 and fake.calls.count("dead-node") == 1
    assert fake.calls.count("engine-down") == retries + 1
    assert fake.seen_images[0] == {"record_type": "images"}
    assert fake.options["num_cpus"] == 1 and fake.options["memory"] == 4 << 30
    assert fake.options["retry_exceptions"] is False and fake.options["max_retries"] > 0


def test_run_refuses_executor_misuse(tmp_path: Any) -> None:
    from swe_forge.batch.run import BatchOptions, run_batch

    repos = tmp_path / "repos.txt"
    repos.write_text("")
    for options in (BatchOptions(executor="spark"), BatchOptions(address="127.0.0.1:1")):
        with pytest.raises(UsageError):
            run_batch(repos, tmp_path / "out", config=load_config(), options=options)
    assert not (tmp_path / "out").exists()  # refused before anything is written
