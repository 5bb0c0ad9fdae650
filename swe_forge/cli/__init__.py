"""The command line: the only package that imports typer, and the only one that prints.

Each command group's typer wiring is a module of its own (``mine``, ``example``, ``images``,
``admit``, ``export``, ``verify``, ``run``, ``report``); ``_app`` holds the application and what
they share, ``_main`` registers them and maps outcomes to exit codes. This module stays light:
``swe-forge --version`` answers without importing typer, rich or any command.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map outcomes to exit codes."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        # What a wrapper or a crash report asks first, often per job: no imports for it.
        from swe_forge import __version__

        print(f"swe-forge {__version__}")
        sys.exit(0)
    from swe_forge.cli._main import run

    run(argv)


def __getattr__(name: str) -> Any:
    # ``from swe_forge.cli import app`` (tests, embedding) gets the app with every command.
    if name == "app":
        from swe_forge.cli._main import app

        return app
    raise AttributeError(f"module 'swe_forge.cli' has no attribute {name!r}")
