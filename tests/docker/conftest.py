"""Fixtures for tests that need the real Docker engine (marker: docker).

They never skip: without an engine they fail, so a CI run without Docker is red. Locally,
deselect them with ``-m "not docker"``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

from swe_forge.commands.admit import run_admit
from swe_forge.commands.images import run_build
from swe_forge.commands.mine import run_mine
from swe_forge.config import Config, load_config
from swe_forge.engine import Engine
from swe_forge.errors import DockerError
from swe_forge.example import create_example
from swe_forge.git.cli import checkout_clean, staged_diff
from swe_forge.mining.classify import PathClassifier
from swe_forge.mining.miner import MineOptions
from swe_forge.records import TaskManifest
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)


@pytest.fixture
def without_test_strength(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Config:
    """Admission without the test-strength gate, for docker tests about something else (batch
    runs, Ray, resumption): its mutants are about a third of an admission's time, and CI's
    budget is 50 minutes. The gate itself is tested on the shared fixtures' admissions (every
    example's tasks carry ``audit.test_strength``). Applies in this process (the returned
    configuration) and in the swe-forge processes the test starts (``SWE_FORGE_CONFIG``)."""
    path = tmp_path_factory.mktemp("config") / "no-test-strength.yaml"
    path.write_text("admit:\n  test_strength:\n    enabled: false\n")
    monkeypatch.setenv("SWE_FORGE_CONFIG", str(path))
    config = load_config(path)
    assert not config.admit.test_strength.enabled
    return config


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()  # raises DockerError (a failure, not a skip) without an engine


@dataclass
class ExampleImages:
    root: Path
    repo: Path
    candidates: Path
    images: Path
    records: dict[str, dict[str, object]]


@pytest.fixture(scope="session")
def example_images(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExampleImages]:
    root = tmp_path_factory.mktemp("docker-example")
    info = create_example(root / "textkit")
    cands = root / "candidates.jsonl"
    run_mine([str(info.path)], cands, config=load_config(), options=MineOptions())
    images = root / "images.jsonl"
    run_build(cands, images, config=load_config())
    records = {json.loads(x)["instance_id"]: json.loads(x) for x in images.read_text().splitlines()}
    yield ExampleImages(root, info.path, cands, images, records)


@dataclass
class ExampleTasks:
    tasks: Path
    rejected: Path


@pytest.fixture(scope="session")
def example_tasks(example_images: ExampleImages) -> ExampleTasks:
    """The example's candidates admitted once (full manifests), for every module that reads
    tasks without admitting them itself."""
    tasks = example_images.root / "tasks.jsonl"
    rejected = example_images.root / "admit-rejected.jsonl"
    run_admit(
        example_images.candidates,
        tasks,
        config=load_config(),
        rejected=rejected,
        images_path=example_images.images,
    )
    return ExampleTasks(tasks, rejected)


def records_by_id(path: Path) -> dict[str, dict[str, Any]]:
    """The JSON records of a JSONL file by instance id."""
    return {json.loads(x)["instance_id"]: json.loads(x) for x in path.read_text().splitlines()}


@dataclass
class AdmittedExample:
    """An example repository of another ecosystem, mined and admitted (its images built by
    the admission)."""

    root: Path
    repo: Path
    candidates_path: Path
    tasks_path: Path
    rejected_path: Path

    @cached_property
    def tasks(self) -> dict[str, TaskManifest]:
        """The admitted tasks by instance id (read once)."""
        lines = self.tasks_path.read_text().splitlines()
        return {t.instance_id: t for t in (TaskManifest.from_dict(json.loads(x)) for x in lines)}

    @cached_property
    def rejected(self) -> dict[str, dict[str, Any]]:
        """The rejection records by instance id (read once)."""
        return records_by_id(self.rejected_path)

    @cached_property
    def candidates(self) -> list[dict[str, Any]]:
        """The mined candidate records (read once)."""
        return [json.loads(x) for x in self.candidates_path.read_text().splitlines()]


def mine_and_admit(
    tmp_path_factory: pytest.TempPathFactory, name: str, create: Callable[[Path], object]
) -> AdmittedExample:
    """Create the example ``name`` with ``create`` in a new temporary directory, mine it and
    admit its candidates with the default configuration."""
    root = tmp_path_factory.mktemp(name)
    repo = root / name
    create(repo)
    cands = root / "candidates.jsonl"
    run_mine([str(repo)], cands, config=load_config(), options=MineOptions())
    tasks, rejected = root / "tasks.jsonl", root / "rejected.jsonl"
    run_admit(cands, tasks, config=load_config(), rejected=rejected)
    made = AdmittedExample(root, repo, cands, tasks, rejected)
    # Every admitted task of every example was measured by the test-strength gate (issue
    # 25): mutants of its gold fix made and each graded to a verdict the score counts.
    for task in made.tasks.values():
        ts = task.audit["test_strength"]
        assert ts["error"] is None and ts["generated"] > 0, (task.instance_id, ts)
        assert ts["killed"] + ts["survived"] > 0 and ts["score"] is not None, task.instance_id
    return made


@pytest.fixture(scope="module")
def verifier(engine: Engine) -> Verifier:
    """A verifier with the default settings (a module may define its own)."""
    return Verifier(engine, PathClassifier(load_config().classify), VerifySettings())


Edit = Callable[[Path], None]


def patch_of(repo: Path, base: str, edit: Edit, tmp: Path) -> str:
    """The diff that ``edit`` makes to a clone of ``repo`` at ``base`` (kept in ``tmp``)."""
    work = checkout_clean(repo, tmp / f"w-{base[:8]}", base)
    edit(work)
    return staged_diff(work)


def sub(path: str, old: str, new: str) -> Edit:
    """An edit replacing the first ``old`` in ``path`` (which must hold it) with ``new``."""

    def edit(root: Path) -> None:
        text = (root / path).read_text()
        assert old in text, (path, old)
        (root / path).write_text(text.replace(old, new, 1))

    return edit


def write(path: str, text: str) -> Edit:
    """An edit writing ``path`` (and its directories)."""

    def edit(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)

    return edit


def both(*edits: Edit) -> Edit:
    """The edits one after the other."""

    def edit(root: Path) -> None:
        for e in edits:
            e(root)

    return edit


def open_gate(task: TaskManifest, names: Iterable[str]) -> TaskManifest:
    """The task as if its base code used every capability ``names`` lists (the capability
    gate then allows them all): what the run-time defences alone make of an attack."""
    data = task.to_dict()
    data["audit"]["capabilities"]["base"] = sorted(set(names) | {"unparsable"})
    return TaskManifest.from_dict(data)


def attack_from_inside(
    verifier: Verifier,
    task: TaskManifest,
    patch: str,
    name: str,
    *,
    caught: set[str],
    fools_the_tests: bool,
) -> None:
    """An attack run from inside the test process, the capability gate opened: it scores 0
    with one of the ``caught`` statuses; when it ``fools_the_tests`` (it makes the honest run
    itself pass), a verifier without decoys gives it 1.0, so the decoys are what caught it;
    and the task's gold patch still scores 1.0 afterwards."""
    result = verifier.verify(task, patch, name)
    assert result.reward == 0.0 and result.status in caught, (name, result.status, result.detail)
    if fools_the_tests:
        assert result.status == "tamper_detected", result.detail
        assert "decoy_passed" in {v["code"] for v in result.violations}, result.violations
        blind = Verifier(verifier.engine, verifier.classifier, replace(verifier.settings, decoys=0))
        fooled = blind.verify(task, patch, f"blind-{name}")
        assert (fooled.status, fooled.reward) == ("resolved", 1.0), (name, fooled.detail)
    gold = verifier.verify(task, task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail


ROOT = Path(__file__).resolve().parents[2]
#: Where the registry tests push (scripts/ensure-registry.sh's default address).
REGISTRY_ADDR = os.environ.get("SWE_FORGE_REGISTRY_ADDR", "127.0.0.1:5000")


@pytest.fixture(scope="session")
def registry() -> str:
    """A registry serving on loopback, started by the project's script when none is (a test
    that needs it fails, never skips, when it cannot be started)."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "ensure-registry.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"scripts/ensure-registry.sh failed:\n{proc.stdout}{proc.stderr}"
    with urllib.request.urlopen(f"http://{REGISTRY_ADDR}/v2/", timeout=10) as res:
        assert res.headers["Docker-Distribution-Api-Version"] == "registry/2.0"
    return REGISTRY_ADDR


@dataclass
class SecondEngine:
    """A second Docker engine on this machine: its own data root (so none of the shared
    engine's images), exec root, pid file and socket; ``host`` is its DOCKER_HOST."""

    root: Path
    host: str
    process: subprocess.Popen[bytes]

    @property
    def env(self) -> dict[str, str]:
        """The environment of a command that talks to this engine."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def engine(self) -> Engine:
        """An adapter connected to this engine."""
        return Engine(self.host)


def start_second_engine() -> SecondEngine:
    """Start a dockerd that shares nothing with the running one but the kernel.

    No bridge network, no iptables rules (its containers run with --network=none; pulls are
    the daemon's own connections), its own containerd (managed under its exec root, in
    namespaces of its own), its own cgroup parent, and an empty configuration file so the
    host's /etc/docker/daemon.json (sockets, data root) is not read.
    """
    # A short path: the containerd socket under the exec root must fit a unix socket path.
    root = Path(tempfile.mkdtemp(prefix="sfe2-", dir="/tmp"))
    (root / "daemon.json").write_text("{}\n")
    host = f"unix://{root}/docker.sock"
    cmd = [
        "dockerd",
        "--config-file", f"{root}/daemon.json",
        "--data-root", f"{root}/data",
        "--exec-root", f"{root}/x",
        "--pidfile", f"{root}/docker.pid",
        "--host", host,
        "--bridge=none",
        "--iptables=false",
        "--ip6tables=false",
        "--ip-masq=false",
        "--containerd-namespace", "swe-forge-e2",
        "--containerd-plugins-namespace", "swe-forge-e2-plugins",
        f"--cgroup-parent=/{root.name}",
    ]  # fmt: skip
    log = (root / "dockerd.log").open("wb")
    process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    second = SecondEngine(root, host, process)
    deadline = time.monotonic() + 60
    while True:
        try:
            second.engine()
            return second
        except DockerError:
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (root / "dockerd.log").read_text(errors="replace")[-3000:]
                stop_second_engine(second)
                pytest.fail(f"a second dockerd did not start ({cmd}):\n{tail}")
            time.sleep(0.5)


def stop_second_engine(second: SecondEngine) -> None:
    """Stop the engine (its containerd goes with it), undo its mounts, delete its data."""
    if second.process.poll() is None:
        second.process.send_signal(signal.SIGTERM)
        try:
            second.process.wait(60)
        except subprocess.TimeoutExpired:
            second.process.kill()
            second.process.wait(10)
    prefix = str(second.root) + "/"
    mounts = [
        line.split()[1]
        for line in Path("/proc/mounts").read_text().splitlines()
        if line.split()[1].startswith(prefix)
    ]
    for mount in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], check=False)
    shutil.rmtree(second.root, ignore_errors=True)
    # Its cgroup parent, in every hierarchy: empty directories once its containers are gone.
    for parent in Path("/sys/fs/cgroup").glob(f"*/{second.root.name}"):
        for dirpath, _dirs, _files in os.walk(parent, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(dirpath)


@pytest.fixture
def second_engine() -> Iterator[SecondEngine]:
    """A fresh second engine with no image at all, for one test; stopped and deleted after."""
    second = start_second_engine()
    try:
        assert second.engine().api.images(all=True) == []
        yield second
    finally:
        stop_second_engine(second)
