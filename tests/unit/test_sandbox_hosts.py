"""The judge's container names the loopback addresses (no docker: a recording engine)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swe_forge.gates.sandbox import HOSTS, MOUNT, Sandbox, SandboxSettings


class RecordingEngine:
    """Just what Sandbox.open calls; records the mounts and what they hold at start."""

    def __init__(self) -> None:
        self.mounts: dict[str, str] = {}
        self.contents: dict[str, bytes] = {}

    def reap_orphans(self) -> None:
        pass

    def attach_stdout(self, ctr: Any) -> Any:
        return iter(())

    def sandbox_options(self, limits: Any, *, tmpfs: Any, mounts: dict[str, str]) -> dict:
        self.mounts = dict(mounts)
        return {}

    @contextmanager
    def container(self, image: str, command: Any, **kwargs: Any) -> Any:
        engine = self

        class Ctr:
            def start(self) -> None:
                engine.contents = {
                    inside: Path(host).read_bytes()
                    for host, inside in engine.mounts.items()
                    if Path(host).is_file()
                }

        yield Ctr()


def test_judges_container_resolves_localhost(tmp_path: Path) -> None:
    # With networking disabled the engine gives the container an empty /etc/hosts: Vitest 4
    # (fb55/htmlparser2) failed to start with getaddrinfo EAI_AGAIN localhost in every run.
    engine = RecordingEngine()
    sandbox = Sandbox(engine, SandboxSettings(), tmp_path)  # type: ignore[arg-type]
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "abc.tar").write_bytes(b"")
    with sandbox.open("sha256:abc"):
        pass
    assert "/etc/hosts" in engine.mounts.values()
    hosts = engine.contents["/etc/hosts"].decode()
    assert "127.0.0.1\tlocalhost" in hosts and "::1\tlocalhost" in hosts
    assert engine.contents["/etc/hosts"] == HOSTS
    assert MOUNT in engine.mounts.values()
