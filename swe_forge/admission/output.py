"""Where admission decisions go: appended to the task and rejection files as they are made.

An admission run takes minutes per candidate on a real project, so a decision is written the
moment it is made: one JSON line, flushed and synced, so the files are valid JSON Lines after
every decision and a killed run loses at most the candidate it was working on. Started again,
a run reads the instance ids already in either file and skips those candidates; a line torn
by a kill in the middle of a write is cut off first (its candidate is simply done again).
``restart`` empties both files instead.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from swe_forge.admission.swebench import swebench_line
from swe_forge.errors import InputError, UsageError
from swe_forge.jsonl import read_jsonl
from swe_forge.records import Rejection, TaskManifest


def default_rejected_path(tasks: Path) -> Path:
    """Where rejections go when no file is named: beside the tasks (``tasks-rejected.jsonl``).

    A resumed run needs them: a rejected candidate not on file would be gated again.
    """
    return tasks.with_name(f"{tasks.stem}-rejected{tasks.suffix or '.jsonl'}")


def _repair(path: Path) -> None:
    """Cut a torn last line (no newline: the write was killed); it is decided again."""
    with path.open("rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())


def _read(path: Path) -> list[dict[str, Any]]:
    hint = "pass --restart to start over, or write to another --output"
    try:
        records = list(read_jsonl(path))
    except InputError as exc:
        raise InputError(f"{exc}; cannot resume from it", hint=hint) from exc
    for lineno, data in enumerate(records, 1):
        if not isinstance(data.get("instance_id"), str):
            raise InputError(
                f"{path}: record {lineno} is not a task or rejection (no instance_id)", hint=hint
            )
    return records


class DecisionLog:
    """The task and rejection files of one admission run, appended one synced line at a time.

    ``decided`` maps the instance ids already on file (from an earlier, interrupted run) to
    "admitted" or the rejection reason. Use as a context manager.

    Raises:
        UsageError: both paths are the same file, or the task file holds manifests in the
            other ``--format``.
        InputError: a file holds a line that is not a record (not resumable).
    """

    def __init__(
        self, tasks: Path, rejected: Path, *, swebench_format: bool = False, restart: bool = False
    ) -> None:
        if tasks.resolve() == rejected.resolve():
            raise UsageError(
                f"tasks and rejections would go to one file: {tasks}",
                hint="name another file with --rejected",
            )
        self.tasks_path = tasks
        self.rejected_path = rejected
        self.swebench_format = swebench_format
        self.decided: dict[str, str] = {}
        from swe_forge.locks import hold_output

        # Before either file is read, repaired or emptied: a second admit on these outputs
        # would admit every candidate again and interleave its lines with the first's.
        for path in (tasks, rejected):
            hold_output(path)
        for path in (tasks, rejected):
            path.parent.mkdir(parents=True, exist_ok=True)
            if restart or not path.exists():
                path.write_bytes(b"")
            else:
                _repair(path)
        for data in _read(tasks):
            if ("record_type" in data) == swebench_format:
                raise UsageError(
                    f"{tasks} holds tasks in the other --format; cannot resume into it",
                    hint="use the same --format, pass --restart, or write to another --output",
                )
            self.decided[data["instance_id"]] = "admitted"
        for data in _read(rejected):
            self.decided.setdefault(data["instance_id"], str(data.get("reason", "")))
        self._tasks: IO[str] = tasks.open("a", encoding="utf-8")
        self._rejected: IO[str] = rejected.open("a", encoding="utf-8")
        # The files' directory entries must survive a crash too, not only their lines.
        for parent in {tasks.parent, rejected.parent}:
            fd = os.open(parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def previous(self, instance_ids: set[str]) -> Counter[str]:
        """Decisions on file for these candidates: "admitted" or reason -> count."""
        return Counter(v for k, v in self.decided.items() if k in instance_ids)

    @staticmethod
    def _append(fh: IO[str], line: str) -> None:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())

    def task(self, manifest: TaskManifest) -> None:
        """Append an admitted task (full manifest, or a SWE-bench 5 instance with --format)."""
        line = swebench_line(manifest) if self.swebench_format else manifest.to_json()
        self._append(self._tasks, line)
        self.decided[manifest.instance_id] = "admitted"

    def rejection(self, rejection: Rejection) -> None:
        """Append a rejection."""
        self._append(self._rejected, rejection.to_json())
        self.decided[rejection.instance_id or ""] = rejection.reason

    def close(self) -> None:
        """Close both files (every line is already on disk)."""
        self._tasks.close()
        self._rejected.close()

    def __enter__(self) -> DecisionLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def sort_decisions(path: Path, order: list[str]) -> None:
    """Rewrite a task or rejection file in candidate order (atomically): decisions made by
    several jobs arrive in the order they finish, and the same inputs must give the same
    file."""
    if not path.exists():
        return
    rank = {iid: n for n, iid in enumerate(order)}
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]

    def key(line: str) -> tuple[int, str]:
        iid = str(json.loads(line).get("instance_id") or "")
        return rank.get(iid, len(rank)), iid

    ordered = sorted(lines, key=key)
    if ordered == lines:
        return
    tmp = path.with_name(path.name + ".sorting")
    tmp.write_text("".join(ln + "\n" for ln in ordered), encoding="utf-8")
    with tmp.open("rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
