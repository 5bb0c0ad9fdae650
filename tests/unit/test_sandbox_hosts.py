"""The judge's container names the loopback addresses (no docker: a recording engine)."""

from __future__ import annotations

import io
import tarfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swe_forge.engine import RunOutcome
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

    def run_locked(self, image: str, command: list[str], **kwargs: Any) -> RunOutcome:
        return RunOutcome(1, False, False, "no python3 here", {}, 0.0)

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


def seeded_sandbox(engine: Any, tmp_path: Path) -> Sandbox:
    """A sandbox on ``engine`` whose image ``sha256:abc`` has its seed cached already."""
    sandbox = Sandbox(engine, SandboxSettings(), tmp_path)
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "abc.tar").write_bytes(b"")
    return sandbox


def test_judges_container_resolves_localhost(tmp_path: Path) -> None:
    # With networking disabled the engine gives the container an empty /etc/hosts: Vitest 4
    # (fb55/htmlparser2) failed to start with getaddrinfo EAI_AGAIN localhost in every run.
    engine = RecordingEngine()
    sandbox = seeded_sandbox(engine, tmp_path)
    with sandbox.open("sha256:abc"):
        pass
    assert "/etc/hosts" in engine.mounts.values()
    hosts = engine.contents["/etc/hosts"].decode()
    assert "127.0.0.1\tlocalhost" in hosts and "::1\tlocalhost" in hosts
    assert engine.contents["/etc/hosts"] == HOSTS
    assert MOUNT in engine.mounts.values()


class CompilingEngine(RecordingEngine):
    """RecordingEngine whose one-shot containers "compile": they hand back a tar of bytecode
    with ours, a name of no file of ours and a path out of the folder."""

    def __init__(self) -> None:
        super().__init__()
        self.compiles = 0

    def run_locked(self, image: str, command: list[str], **kwargs: Any) -> RunOutcome:
        self.compiles += 1
        assert command[:3] == ["python3", "-I", "-S"]
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in (
                ("swe_forge_harness.cpython-311.pyc", b"harness-code"),
                ("swe_forge_supervisor.cpython-311.pyc", b"supervisor-code"),
                ("sitecustomize.cpython-311.pyc", b"not ours"),
                ("../swe_forge_canaries.cpython-311.pyc", b"out of the folder"),
            ):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return RunOutcome(0, False, False, "", {kwargs["collect"][0]: buf.getvalue()}, 0.1)

    @contextmanager
    def container(self, image: str, command: Any, **kwargs: Any) -> Any:
        engine = self

        class Ctr:
            def start(self) -> None:
                scratch = next(h for h, inside in engine.mounts.items() if inside == MOUNT)
                engine.contents = {
                    str(p.relative_to(scratch)): p.read_bytes()
                    for p in Path(scratch).rglob("*.pyc")
                }

        yield Ctr()


def test_judges_container_gets_our_bytecode_compiled_once_per_image(tmp_path: Path) -> None:
    # Compiling the supervisor, the scanner and the canary writer cost every judge's
    # container ~30 ms (three containers a verification): their bytecode is made once per
    # image and brought in beside each copy of the source, and nothing else the
    # compiling container names is.
    engine = CompilingEngine()
    sandbox = seeded_sandbox(engine, tmp_path)
    for _ in range(2):
        with sandbox.open("sha256:abc"):
            pass
        assert engine.contents == {
            "bin/__pycache__/swe_forge_harness.cpython-311.pyc": b"harness-code",
            "plugin/__pycache__/swe_forge_harness.cpython-311.pyc": b"harness-code",
            "bin/__pycache__/swe_forge_supervisor.cpython-311.pyc": b"supervisor-code",
        }
    assert engine.compiles == 1
    # Another judge (other files) is another compilation.
    sandbox.digest = "0" * 64
    with sandbox.open("sha256:abc"):
        pass
    assert engine.compiles == 2


def test_an_image_whose_python_cannot_compile_ours_still_opens(tmp_path: Path) -> None:
    class Failing(CompilingEngine):
        def run_locked(self, image: str, command: list[str], **kwargs: Any) -> RunOutcome:
            self.compiles += 1
            return RunOutcome(1, False, False, "SyntaxError", {}, 0.1)

    engine = Failing()
    sandbox = seeded_sandbox(engine, tmp_path)
    for _ in range(2):
        with sandbox.open("sha256:abc"):
            pass
        assert engine.contents == {}
    assert engine.compiles == 1  # the empty answer is kept: not asked at every container
