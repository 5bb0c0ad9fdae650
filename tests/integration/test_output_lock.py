"""Two runs on one output: the second is refused at once (exit 18), naming the first; the
first's records are untouched. A run that ends (even killed) frees the output."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from swe_forge.batch.state import RunState
from swe_forge.errors import OutputBusy
from tests.conftest import RepoBuilder

_HOLD = """
import sys, time
from pathlib import Path
from swe_forge.locks import hold_output
hold_output(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(120)
"""


@contextmanager
def held_by_another_process(output: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(output)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_second_mine_on_one_output_is_refused(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(1, {"pkg/a.py": "x = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"}, "Fix")
    out = tmp_path / "cands.jsonl"
    out.write_text("the first run's finished output\n")
    with held_by_another_process(out) as holder:
        got = subprocess.run(
            [sys.executable, "-m", "swe_forge", "mine", str(repo.path), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert got.returncode == 18, got.stderr
        assert f"pid {holder.pid}" in got.stderr and "hint:" in got.stderr
        assert out.read_text() == "the first run's finished output\n"
        assert not out.with_name("cands.jsonl.partial").exists()
    # The holder was killed: its lock died with it.
    got = subprocess.run(
        [sys.executable, "-m", "swe_forge", "mine", str(repo.path), "-o", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr


def test_second_batch_on_one_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    with held_by_another_process(folder), pytest.raises(OutputBusy, match="another swe-forge"):
        RunState(folder, identity={"command": "verify"})
    # In the holder's own process, taking it again is free (a resumed stage).
    RunState(folder, identity={"command": "verify"})
    RunState(folder, identity={"command": "verify"})


@pytest.mark.parametrize("which", ["tasks", "rejected"])
def test_second_admit_on_one_output_is_refused(tmp_path: Path, which: str) -> None:
    # Refused before anything is read or written: no image is built, no Docker is needed,
    # and the first run's decisions stay as they are.
    from swe_forge.admission.output import DecisionLog

    tasks = tmp_path / "tasks.jsonl"
    rejected = tmp_path / "tasks-rejected.jsonl"
    for f in (tasks, rejected):
        f.write_text("")
    cands = tmp_path / "cands.jsonl"
    cands.write_text("")
    held = tasks if which == "tasks" else rejected
    with held_by_another_process(held) as holder:
        got = subprocess.run(
            [sys.executable, "-m", "swe_forge", "admit", str(cands), "-o", str(tasks)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert got.returncode == 18, got.stderr
        assert f"pid {holder.pid}" in got.stderr
        with pytest.raises(OutputBusy):
            DecisionLog(tasks, rejected)
