"""SIGTERM (what ``timeout``, Slurm and Kubernetes send) ends a command as Ctrl-C does: the
clean-up runs, a line says so, and the exit code is the documented 143."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from swe_forge.errors import EXIT_TERMINATED, exit_code_table

_PROGRAM = """
import sys, time
from pathlib import Path
from swe_forge.cli import _main
from swe_forge.cli._app import app

@app.command("sleepy")
def sleepy() -> None:
    Path(sys.argv[1]).write_text("started")
    try:
        time.sleep(60)
    finally:
        Path(sys.argv[1]).write_text("cleaned up")

_main.run(["sleepy"])
"""


def test_sigterm_cleans_up_and_exits_143(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", _PROGRAM, str(marker)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text() == "started"):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_TERMINATED == 143
    assert "terminated (SIGTERM)" in err
    assert marker.read_text() == "cleaned up"


def test_143_is_in_the_exit_code_table() -> None:
    assert (143, "terminated", "SIGTERM (timeout, Slurm, Kubernetes)") in exit_code_table()


def test_sigterm_while_the_commands_are_imported_exits_143() -> None:
    # The commands' imports take a second or more on a loaded machine: a SIGTERM then (a
    # job killed at once) must still end with the documented code, not death by signal
    # (-15). main() installs its first handler before any of those imports; here the
    # signal comes right after, deterministically, where the imports would run.
    code = (
        "import os, signal, time\n"
        "from swe_forge import cli\n"
        "cli._early_sigterm()\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(30)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == EXIT_TERMINATED, out
    assert "terminated (SIGTERM) while starting" in out.stderr
    import inspect

    from swe_forge import cli

    body = inspect.getsource(cli.main)
    assert body.index("_early_sigterm()") < body.index("from swe_forge.cli._main import run")


def test_sigterm_after_the_work_is_done_keeps_the_exit_code() -> None:
    # Python gives a handled signal its default action back while it finalizes: a SIGTERM
    # while a finished command shuts down (worker pools take a moment) killed it (-15)
    # although its output was complete. Once the command has ended, SIGTERM is ignored.
    code = (
        "import os, signal, sys, threading\n"
        "from swe_forge.cli import _main\n"
        "signal.signal(signal.SIGTERM, _main._on_sigterm)\n"
        "try:\n"
        "    _main._finish(20)\n"
        "finally:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 20, out
