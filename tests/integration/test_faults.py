"""Faults of the machine and wrong inputs end in a documented exit code and one line with a
hint, never a crash (exit 1 with a crash log), and leave no temporary file behind.

The file systems are real: a read-only tmpfs and a tmpfs of one page (a full disk), mounted
for the test (this needs root, as CI runs; a user without it gets a skip that says why).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import RepoBuilder


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swe_forge", *args], capture_output=True, text=True, timeout=300
    )


def _mount(where: Path, options: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "ro"
    _mount(where, "ro,size=1m")
    yield where
    subprocess.run(["umount", str(where)], check=True)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "full"
    _mount(where, "size=4k")
    yield where
    subprocess.run(["umount", str(where)], check=True)


@pytest.fixture
def repo(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    made = make_repo()
    for n in range(1, 6):
        made.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n" + "#\n" * 200,
                "tests/test_core.py": f"def test_{n}():\n    pass\n" + "#\n" * 200,
            },
            f"Change {n} of the adder, with a statement long enough to be kept " * 3,
        )
    return made


def _no_crash(out: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    assert out.returncode == code, out.stderr
    assert words in out.stderr, out.stderr
    assert "hint:" in out.stderr and "Traceback" not in out.stderr and "crash" not in out.stderr


def test_read_only_output(repo: RepoBuilder, read_only: Path) -> None:
    out = cli("mine", str(repo.path), "-o", str(read_only / "c.jsonl"))
    _no_crash(out, 17, "Read-only file system")


def test_full_disk(repo: RepoBuilder, full_disk: Path) -> None:
    out = cli("mine", str(repo.path), "-o", str(full_disk / "c.jsonl"), "-q")
    _no_crash(out, 17, "No space left on device")
    assert not (full_disk / "c.jsonl").exists()
    assert not [p for p in full_disk.iterdir() if p.name.endswith(".tmp")]


def test_folder_given_as_input_file(tmp_path: Path) -> None:
    (tmp_path / "cands").mkdir()
    out = cli("images", "build", str(tmp_path / "cands"), "-o", str(tmp_path / "i.jsonl"))
    assert out.returncode == 4, out.stderr
    assert "folder" in out.stderr and "Traceback" not in out.stderr


def test_input_that_is_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "cands.jsonl"
    bad.write_bytes(b'{"instance_id": "caf\xe9"}\n')
    out = cli("images", "build", str(bad), "-o", str(tmp_path / "i.jsonl"))
    _no_crash(out, 4, "not UTF-8")


def test_folder_given_as_output_file(repo: RepoBuilder, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    out = cli("mine", str(repo.path), "-o", str(tmp_path / "out"))
    _no_crash(out, 4, "is a folder")


def test_example_on_read_only(read_only: Path) -> None:
    out = cli("example", "create", str(read_only / "ex"))
    _no_crash(out, 17, "Read-only file system")


@pytest.mark.parametrize("size", ["4k", "64k", "256k"])
def test_example_on_a_full_disk(tmp_path: Path, size: str) -> None:
    # Each size fills the disk at another step (git init, a file the builder writes, a merge):
    # git's own words differ at each ("failed to write new configuration file" names no
    # cause), and each is the output's fault: 17, never git's 9 or "cannot write None".
    where = tmp_path / "full"
    _mount(where, f"size={size}")
    try:
        out = cli("example", "create", str(where / "ex"))
    finally:
        subprocess.run(["umount", str(where)], check=True)
    _no_crash(out, 17, f"cannot write {where / 'ex'}")
    assert "No space left on device" in out.stderr


@pytest.mark.parametrize("form", ["-o", "--out"])
def test_verify_on_read_only(tmp_path: Path, read_only: Path, form: str) -> None:
    # Refused before anything is graded (no Docker needed), as an output error like the
    # other commands' (it was 4, "permission denied", whatever the cause).
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("")
    out = cli("verify", "--tasks", str(tasks), "--gold", form, str(read_only / "r"))
    _no_crash(out, 17, "Read-only file system")
