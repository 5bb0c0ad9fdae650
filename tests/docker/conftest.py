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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from swe_forge.commands.admit import run_admit
from swe_forge.commands.images import run_build
from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.engine import Engine
from swe_forge.errors import DockerError
from swe_forge.example import create_example
from swe_forge.mining.miner import MineOptions


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)


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
