"""The top-level help is answered without typer, and is exactly what the application prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, columns: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS=columns)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_the_generated_help_is_the_applications_own() -> None:
    # Stale after a change of the app's help, options or commands: scripts/refresh_help.py.
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "refresh_help.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_help_imports_no_typer_on_a_wide_terminal_and_typer_on_a_narrow_one() -> None:
    probe = (
        "import sys; sys.argv = ['swe-forge', '--help']\n"
        "from swe_forge.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n"
        "    sys.stderr.write(f'rc={e.code} typer={\"typer\" in sys.modules}')\n"
    )
    wide = _run(probe, "120")
    assert wide.stderr.endswith("rc=0 typer=False"), wide.stderr
    from swe_forge.cli._help import TEXT

    assert wide.stdout == TEXT and TEXT.startswith("Usage: swe-forge [OPTIONS] COMMAND")
    narrow = _run(probe, "60")
    assert narrow.stderr.endswith("rc=0 typer=True"), narrow.stderr
    # Wrapped narrower by click itself.
    assert narrow.stdout != TEXT and narrow.stdout.startswith("Usage: swe-forge")
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60


def test_version_imports_nothing_of_the_cli() -> None:
    probe = (
        "import sys; sys.argv = ['swe-forge', '--version']\n"
        "from swe_forge.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n"
        "    sys.stderr.write(f'rc={e.code} typer={\"typer\" in sys.modules}')\n"
    )
    done = _run(probe, "120")
    assert done.stderr.endswith("rc=0 typer=False") and done.stdout.startswith("swe-forge ")
