"""Inter-process file locks: concurrent runs share caches safely, and never write one output.

:func:`file_lock` waits (caches: the second run uses what the first made). :func:`hold_output`
does not wait: two runs writing one output file or folder would both do all the work and
interleave their records, so the second is refused at once with :class:`OutputBusy` (exit
18), naming the process that holds it."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    The lock dies with the process, so a killed run never leaves a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


#: Output locks this process holds, by lock file: kept until the process ends (the lock dies
#: with it, so a killed run never leaves a stale one). Taking one twice in a process is free.
_HELD: dict[str, int] = {}


def output_lock_path(output: Path) -> Path:
    """The lock file of an output: ``DIR/.swe-forge.lock`` for a folder, else a hidden
    ``.NAME.lock`` beside the file."""
    if output.is_dir():
        return output / ".swe-forge.lock"
    return output.with_name(f".{output.name}.lock")


def hold_output(output: Path) -> None:
    """Take the output lock of ``output`` (a file to write, or a run's folder) for the rest of
    this process.

    Raises:
        OutputBusy: another process holds it.
        OutputError: the lock file cannot be created (read-only, full disk, permission).
    """
    from swe_forge.errors import OutputBusy, output_error

    lock = output_lock_path(output)
    key = str(lock.resolve())
    if key in _HELD:
        return
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise output_error(exc, lock) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
        os.close(fd)
        raise OutputBusy(
            f"{output} is being written by another swe-forge run (pid {holder})",
            hint="wait for it to finish, or give this run another output; two runs on one "
            "output would both do all the work",
        ) from exc
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd
