"""Clones and fetches of remote sources report git's own progress meter, and a transfer that
stalls is ended (issue 24: a clone of minutes must show where it is)."""

from __future__ import annotations

import socket
import subprocess
import threading
from pathlib import Path

import pytest

from swe_forge.errors import RemoteError
from swe_forge.git import cli
from swe_forge.git.cli import _Meter, clone_or_update


def _repo(path: Path, files: int) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for i in range(files):
        (path / f"f{i}.txt").write_text(f"{i}\n" * 2000)
    env = ["-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), *env, "commit", "-qm", "one"], check=True)
    return path


def test_meter_throttles_and_says_each_phase_end_once() -> None:
    said: list[str] = []
    meter = _Meter(said.append, interval=3600)
    for pct in range(0, 101, 10):
        meter.feed(f"Receiving objects:  {pct}% ({pct * 10}/1000), 1.20 MiB | 2.00 MiB/s")
    meter.feed("Receiving objects: 100% (1000/1000), 1.20 MiB | 2.00 MiB/s, done.")
    meter.feed("remote: Compressing objects:  50% (5/10)")
    meter.feed("warning: redirecting to https://example.org/")  # not a meter line
    assert said == [
        "Receiving objects 0% (0/1000), 1.20 MiB | 2.00 MiB/s",
        "Receiving objects 100% (1000/1000), 1.20 MiB | 2.00 MiB/s",
        "Compressing objects 50% (5/10)",
    ]


def test_clone_and_fetch_of_a_url_report_progress(tmp_path: Path) -> None:
    src = _repo(tmp_path / "src", 40)
    dest = tmp_path / "cache" / "src.git"
    lines: list[str] = []
    clone_or_update(f"file://{src}", dest, progress=lines.append)
    assert (dest / "HEAD").exists()
    assert any(line.startswith("Receiving objects 100% (") for line in lines), lines
    # An update fetches (nothing new here, but the same path and the same hardening).
    clone_or_update(f"file://{src}", dest, progress=lines.append)
    assert not (tmp_path / "cache" / "src.git.partial").exists()


def test_a_failed_clone_says_gits_error_not_its_meter(tmp_path: Path) -> None:
    with pytest.raises(RemoteError, match=r"does not exist|not appear to be a git"):
        clone_or_update(f"file://{tmp_path}/missing", tmp_path / "x.git", progress=print)
    assert not (tmp_path / "x.git").exists()


def test_a_stalled_transfer_is_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server that accepts the connection and then says nothing: the dead link a clone of
    # hours must not wait on forever (and that an overall time limit would confuse with a
    # large repository).
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True).start()
    monkeypatch.setattr(cli, "STALL_SECONDS", 2.0)
    try:
        with pytest.raises(RemoteError, match="wrote nothing for 2s"):
            clone_or_update(f"git://127.0.0.1:{port}/r.git", tmp_path / "r.git")
    finally:
        for s in held:
            s.close()
        server.close()
    assert not (tmp_path / "r.git").exists()
