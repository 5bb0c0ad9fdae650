"""The command line: the only package that imports typer, and the only one that prints.

Each command group's typer wiring is a module of its own (``mine``, ``example``, ``images``,
``admit``, ``export``, ``verify``, ``run``, ``report``); ``_app`` holds the application and what
they share, ``_main`` registers them and maps outcomes to exit codes. This module stays light:
``swe-forge --version`` and ``swe-forge --help`` (generated into ``_help``) answer without
importing typer, rich or any command.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map outcomes to exit codes."""
    args = sys.argv[1:] if argv is None else argv
    _early_sigterm()
    if args == ["--version"]:
        # What a wrapper or a crash report asks first, often per job: no imports for it.
        from swe_forge import __version__

        print(f"swe-forge {__version__}")
        sys.exit(0)
    if args in (["--help"], ["-h"]) and _wide():
        # The top-level help as the application prints it (generated, checked by a test):
        # typer's import is most of the start-up, and a first look should not wait for it.
        from swe_forge.cli._help import TEXT

        sys.stdout.write(TEXT)
        sys.exit(0)
    from swe_forge.cli._main import run

    run(argv)


def _on_early_sigterm(signum: int, frame: object) -> None:
    sys.stderr.write("terminated (SIGTERM) while starting: nothing was done\n")
    sys.exit(143)


def _early_sigterm() -> None:
    """Exit 143 (documented) on a SIGTERM that comes while the commands are imported (a
    second or more on a loaded machine), not die of the signal; the app installs its own
    handler, with clean-up, before any work starts."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_early_sigterm)


def _wide() -> bool:
    """Does the help get 80 columns (click wraps it at 78 then, as the cached text is)?"""
    import shutil

    return shutil.get_terminal_size().columns >= 80


def __getattr__(name: str) -> Any:
    # ``from swe_forge.cli import app`` (tests, embedding) gets the app with every command.
    if name == "app":
        from swe_forge.cli._main import app

        return app
    raise AttributeError(f"module 'swe_forge.cli' has no attribute {name!r}")
