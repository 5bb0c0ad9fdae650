"""JSON Lines files written atomically and read with line-numbered errors."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from swe_forge.errors import InputError, output_error
from swe_forge.locks import hold_output


class AtomicWriter:
    """Write lines to ``PATH.partial`` and rename it to ``PATH`` on :meth:`commit`.

    Each line is flushed as it is written, so an interrupted run leaves every finished record
    in the ``.partial`` file; the final name appears only when the whole output is complete.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        if path.is_dir():
            raise InputError(
                f"the output {path} is a folder", hint="give a file path for this output"
            )
        # Before the .partial is opened (truncated): a second run on this output must not
        # wipe the first one's finished records.
        hold_output(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.partial.open("w", encoding="utf-8")
        except OSError as exc:
            raise output_error(exc, self.partial) from exc
        self.count = 0

    def write(self, line: str) -> None:
        """Append one record (a JSON string without newline).

        Raises:
            OutputError: the file cannot be written (full disk, ...); finished records stay in
                the ``.partial`` file.
        """
        try:
            self._fh.write(line + "\n")
            self._fh.flush()
        except OSError as exc:
            self._close_quietly()
            raise output_error(exc, self.partial) from exc
        self.count += 1

    def commit(self) -> None:
        """Sync and move the finished file into place.

        Raises:
            OutputError: the file cannot be finished (full disk, read-only, ...).
        """
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            os.replace(self.partial, self.path)
        except OSError as exc:
            self._close_quietly()
            raise output_error(exc, self.path) from exc

    def abort(self) -> None:
        """Close, keeping the ``.partial`` file for inspection."""
        self._close_quietly()

    def _close_quietly(self) -> None:
        # Closing flushes what is buffered: on a full disk that fails again, and the error
        # that matters has already been raised.
        if not self._fh.closed:
            with contextlib.suppress(OSError):
                self._fh.close()


def write_jsonl(path: Path, lines: Iterable[str]) -> int:
    """Write all lines atomically; return how many."""
    writer = AtomicWriter(path)
    try:
        for line in lines:
            writer.write(line)
    except BaseException:
        writer.abort()
        raise
    writer.commit()
    return writer.count


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield each JSON object of a JSON Lines file.

    Raises:
        InputError: the file is missing, or a line is not a JSON object.
    """
    try:
        # utf-8-sig: a byte-order mark (as some editors on Windows write) is not part of the
        # first record.
        fh = path.open(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise InputError(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{path} is a folder, not a JSON Lines file") from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with fh:
        for lineno, line in _lines(fh, path):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}:{lineno}: not valid JSON ({exc.msg})",
                    hint="each line must be one JSON object",
                ) from exc
            if not isinstance(data, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object")
            yield data


def _lines(fh: Any, path: Path) -> Iterator[tuple[int, str]]:
    """Number the lines of ``fh``; text that is not UTF-8 is an input error, not a crash."""
    lineno = 0
    try:
        for lineno, line in enumerate(fh, 1):
            yield lineno, line
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}:{lineno + 1}: not UTF-8 text ({exc.reason} at byte {exc.start})",
            hint="JSON Lines files are UTF-8; convert the file (iconv -t UTF-8)",
        ) from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
