"""The application with every command registered, and the run that maps outcomes to exit codes.

Expected errors print one line and a hint and exit with their fixed code; Ctrl-C exits 130;
anything else is a crash: a short message, a log file with versions and the traceback, exit 1.
"""

from __future__ import annotations

import importlib
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

import typer

from swe_forge import __version__
from swe_forge.cli._app import STATE, _err, app
from swe_forge.errors import (
    EXIT_CRASH,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    SweForgeError,
    Terminated,
    file_system_error,
)

__all__ = ["app", "run"]

# Importing a command module registers its commands on ``app``; the order is the order of
# ``--help`` (the pipeline's order), so it is spelled out rather than left to import sorting.
_COMMAND_MODULES = (
    "mine",
    "example",
    "images",
    "admit",
    "audit_tests",
    "export",
    "verify",
    "run",
    "report",
)
for _name in _COMMAND_MODULES:
    importlib.import_module(f"swe_forge.cli.{_name}")


def threading_main() -> bool:
    """True in the main thread (the only one that may install a signal handler)."""
    import threading

    return threading.current_thread() is threading.main_thread()


def _traceback(exc: BaseException) -> list[str]:
    import traceback

    return traceback.format_exception(exc)


def _crash_log(exc: BaseException) -> Path | None:
    import platform
    from importlib import metadata

    from swe_forge.mining.sources import cache_dir

    lines = [
        f"swe-forge {__version__} crash at {datetime.now(tz=UTC).isoformat()}",
        f"argv: {sys.argv}",
        f"python: {sys.version}",
        f"platform: {platform.platform()}",
    ]
    for dist in (
        "typer",
        "rich",
        "pygit2",
        "docker",
        "unidiff",
        "license-expression",
        "pyaskalono",
        "PyYAML",
        "packaging",
        "poetry-core",
        "uv",
    ):
        try:
            lines.append(f"{dist}: {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{dist}: not installed")
    lines.append("")
    lines.extend(_traceback(exc))
    try:
        folder = cache_dir() / "crash-logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{datetime.now(tz=UTC).strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
        path.write_text("\n".join(lines), encoding="utf-8")
        return path
    except OSError:
        return None


#: Set when SIGTERM arrived: typer reports any KeyboardInterrupt as a plain exit code 130.
_TERMINATED: list[bool] = []


def _on_sigterm(signum: int, frame: object) -> None:
    _TERMINATED.append(True)
    raise Terminated()


def _interrupted() -> None:
    """Say how the run was stopped and exit with its code (143 for SIGTERM, else 130)."""
    if _TERMINATED:
        _err.print("terminated (SIGTERM): finished records are kept in *.partial files")
        sys.exit(EXIT_TERMINATED)
    _err.print("interrupted: finished records are kept in *.partial files")
    sys.exit(EXIT_INTERRUPTED)


def run(argv: list[str] | None = None) -> None:
    """Run the app on ``argv`` (default: the process's arguments); map outcomes to exit codes.

    SIGTERM is handled as Ctrl-C is (the same clean-up), and exits 143 with a line saying so.
    """
    import signal

    if threading_main():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        # Without standalone mode, click returns typer.Exit's code instead of raising it.
        returned = app(args=argv, standalone_mode=False)
    except typer.Exit as exc:
        if exc.exit_code == EXIT_INTERRUPTED and isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted()
        _finish(exc.exit_code)
    except typer.Abort:
        # click turns Ctrl-C (and our SIGTERM, a KeyboardInterrupt) into Abort.
        _interrupted()
    except typer.TyperException as exc:  # usage errors: typer prints them itself
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _err.print(f"error: {exc}", markup=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except SweForgeError as exc:
        if STATE.debug:
            _err.print("".join(_traceback(exc)), markup=False, highlight=False)
        _err.print(f"error: {exc.message}", markup=False, highlight=False)
        if exc.hint:
            _err.print(f"hint: {exc.hint}", markup=False, highlight=False)
        _finish(exc.exit_code)
    except Exception as exc:
        known = file_system_error(exc) if isinstance(exc, OSError) else None
        if known is not None:
            # A full disk or a read-only output is the machine's state, not a bug.
            _err.print(f"error: {known.message}", markup=False, highlight=False)
            _err.print(f"hint: {known.hint}", markup=False, highlight=False)
            sys.exit(known.exit_code)
        log = _crash_log(exc)
        if STATE.debug:
            _err.print("".join(_traceback(exc)), markup=False, highlight=False)
        _err.print(f"crash: {type(exc).__name__}: {exc}", markup=False, highlight=False)
        if log:
            _err.print(
                f"a crash log with the traceback is at {log}; please attach it to a bug report"
            )
        sys.exit(EXIT_CRASH)
    if returned == EXIT_INTERRUPTED:
        # Without standalone mode, typer returns 130 for a KeyboardInterrupt (Ctrl-C, or our
        # SIGTERM) instead of raising: no command returns 130 of its own.
        _interrupted()
    _finish(returned if isinstance(returned, int) else 0)


def _finish(code: int) -> NoReturn:
    """Exit with ``code`` once the command has ended on its own."""
    import signal

    if threading_main():
        # The work is done and written: a SIGTERM now (shutting worker pools down takes a
        # moment) must not turn the exit code into death by signal. Python restores the
        # default action of a signal it handled when it finalizes, not of an ignored one.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(code)
