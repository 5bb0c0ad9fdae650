"""A real local Ray cluster for tests and benchmarks: a head and worker nodes, each one
``ray start --block`` in its own process group on this machine, on free ports, with its own
temporary folder under /tmp. Stopping kills every process group it started (nothing else)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


#: Ports handed out by :func:`free_port` in this process (none is handed out twice).
_ISSUED: set[int] = set()


def free_port() -> int:
    """A TCP port nobody listens on now, and never one this process was given before: the
    kernel may give a port just closed again, and two of a node's components on one port
    stop it (Ray: "gcs_server is trying to use a port number ... used by other components")."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _ISSUED:
            _ISSUED.add(port)
            return port


@dataclass
class Node:
    """One `ray start --block` process group."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL the node as a machine dies: its process group (``ray start``, raylet, GCS,
        agents) and every process of its session (Ray workers each lead a process group of
        their own, in the node's session)."""
        deadline = time.monotonic() + 30
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        # Again until none is left: a worker may be forking while the first signals land.
        while (pids := session_pids(self.process.pid)) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        self.process.wait(30)

    def alive(self) -> list[int]:
        """Live (not zombie) processes of the node's session."""
        return session_pids(self.process.pid)


@dataclass
class LocalRayCluster:
    """A head with ``num-cpus 0`` (it runs no task) and ``workers`` nodes of ``cpus`` CPUs
    each (one by default)."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sfray-", dir="/tmp")))
    nodes: list[Node] = field(default_factory=list)
    address: str = ""

    def _ports(self) -> list[str]:
        # Every listening port of a node, so that nodes of one machine never collide.
        return [
            f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
        ]

    def _start(self, name: str, args: list[str]) -> Node:
        log = self.root / f"{name}.log"
        # Token authentication off, whatever ~/.ray holds: a token file left by any local
        # ray.init would otherwise turn it on for the head but not for `ray status`.
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        with log.open("wb") as fh:
            proc = subprocess.Popen(
                [RAY, "start", "--block", "--disable-usage-stats", *args, *self._ports()],
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killable as a whole
                env=env,
            )
        node = Node(name, proc, log)
        self.nodes.append(node)
        return node

    def start(self, workers: int = 2, memory: int = 8 << 30, cpus: int = 1) -> LocalRayCluster:
        """Start the head and the worker nodes; wait until every node has joined."""
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        self._start(
            "head",
            [
                "--head",
                "--node-ip-address=127.0.0.1",
                f"--port={port}",
                "--include-dashboard=false",
                "--num-cpus=0",
                f"--temp-dir={self.root}/t",
            ],
        )
        self._wait_nodes(1)
        for _ in range(workers):
            # One at a time: on a small loaded machine, nodes joining together time out.
            self.add_worker(memory=memory, cpus=cpus)
        return self

    def add_worker(self, memory: int = 8 << 30, cpus: int = 1) -> Node:
        """Start one more worker node (``worker<N>``, numbered on) and wait until it joins."""
        k = sum(n.name.startswith("worker") for n in self.nodes) + 1
        node = self._start(
            f"worker{k}",
            [
                f"--address={self.address}",
                "--node-ip-address=127.0.0.1",
                f"--num-cpus={cpus}",
                f"--memory={memory}",
            ],
        )
        self._wait_nodes(len([n for n in self.nodes if not n.killed]))
        return node

    def _wait_nodes(self, n: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node in self.nodes:
                if node.process.poll() is not None and not node.killed:
                    raise RuntimeError(f"ray node {node.name} exited:\n{self.logs()}")
            out = subprocess.run(
                [RAY, "status", f"--address={self.address}"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            if out.count("node_") >= n and "Active:" in out:
                active = out.split("Active:", 1)[1].split("Pending:", 1)[0]
                if active.count("node_") >= n:
                    return
            time.sleep(1)
        raise RuntimeError(f"{n} ray nodes did not come up:\n{self.logs()}")

    def worker(self, k: int) -> Node:
        """The k-th worker node (1-based)."""
        return next(n for n in self.nodes if n.name == f"worker{k}")

    def logs(self) -> str:
        """The tail of every node's log."""
        return "\n".join(
            f"--- {n.name}\n{n.log.read_text(errors='replace')[-2000:]}" for n in self.nodes
        )

    def stop(self) -> None:
        """Kill every node's process group (workers first), then delete the folder."""
        for node in reversed(self.nodes):
            node.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def leftovers(self) -> list[int]:
        """Live processes of any node's session (none once stopped)."""
        return [pid for node in self.nodes for pid in node.alive()]


def session_pids(sid: int) -> list[int]:
    """Live (not zombie) processes whose session id is ``sid``."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces, so split after ")".
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(proc.name))
    return out
