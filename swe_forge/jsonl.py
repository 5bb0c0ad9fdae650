"""JSON Lines files written atomically and read with line-numbered errors."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from swe_forge.errors import InputError


class AtomicWriter:
    """Write lines to ``PATH.partial`` and rename it to ``PATH`` on :meth:`commit`.

    Each line is flushed as it is written, so an interrupted run leaves every finished record
    in the ``.partial`` file; the final name appears only when the whole output is complete.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.partial.open("w", encoding="utf-8")
        self.count = 0

    def write(self, line: str) -> None:
        """Append one record (a JSON string without newline)."""
        self._fh.write(line + "\n")
        self._fh.flush()
        self.count += 1

    def commit(self) -> None:
        """Sync and move the finished file into place."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.partial, self.path)

    def abort(self) -> None:
        """Close, keeping the ``.partial`` file for inspection."""
        if not self._fh.closed:
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
        fh = path.open(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(f"no such file: {path}") from exc
    with fh:
        for lineno, line in enumerate(fh, 1):
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
