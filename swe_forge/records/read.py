"""Reading records back from JSON Lines files, with errors that say which line and why."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from swe_forge.errors import InputError, UsageError
from swe_forge.jsonl import read_jsonl
from swe_forge.records.candidate import Candidate
from swe_forge.records.images import ImageRecord
from swe_forge.records.task import RECORD_TYPES, Rejection, TaskManifest, VerifyResult

#: What each kind of row is and which command writes it, for "this file holds X, not Y".
KINDS = {
    "candidate": "candidates (from `swe-forge mine`)",
    "rejection": "rejections (from --rejected)",
    "task": "task manifests (from `swe-forge admit`)",
    "swebench_row": "SWE-bench task rows (from `swe-forge export` or admit --format swebench)",
    "prediction": "predictions (instance_id, model_name_or_path, model_patch)",
    "verify_result": "verification results (from `swe-forge verify`)",
    "images": "image records (from `swe-forge images build`)",
    "unknown": "rows that are none of swe-forge's records",
}


def kind_of(data: dict[str, Any]) -> str:
    """Which of :data:`KINDS` a row is: its ``record_type``, or for rows without one, what
    their fields say (SWE-bench's task rows and predictions carry no type of their own)."""
    kind = data.get("record_type")
    if isinstance(kind, str):
        return kind if kind in KINDS else "unknown"
    if "model_patch" in data or "model_name_or_path" in data:
        return "prediction"
    if "FAIL_TO_PASS" in data or "PASS_TO_PASS" in data:
        return "swebench_row"
    if {"instance_id", "base_commit", "patch", "test_patch"} <= data.keys():
        return "candidate"  # written before records carried their type
    return "unknown"


def refuse_kind(path: Path, lineno: int, kind: str, wanted: str, hint: str) -> InputError:
    """The error for a file of the wrong kind, given where it was seen."""
    return InputError(
        f"{path} holds {KINDS.get(kind, kind)}, not {KINDS[wanted]} (line {lineno})", hint=hint
    )


def read_candidates(path: Path, only: Iterable[str] = ()) -> list[Candidate]:
    """Candidate records of a JSON Lines file (rejections are skipped), optionally filtered.

    Raises:
        InputError: the file is missing, a line is not a candidate, or an id of ``only`` is
            not in the file.
    """
    wanted = set(only)
    out = []
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = kind_of(data)
        if kind == "rejection":
            continue
        if kind != "candidate":
            raise refuse_kind(
                path, lineno, kind, "candidate", "give the candidates file `swe-forge mine` writes"
            )
        try:
            cand = Candidate.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a candidate record ({exc})") from exc
        if not wanted or cand.instance_id in wanted:
            out.append(cand)
    if wanted:
        missing = wanted - {c.instance_id for c in out}
        if missing:
            raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return out


def read_task_manifests(path: Path, only: Iterable[str] = ()) -> list[TaskManifest]:
    """Task manifests of a JSON Lines file (``admit``'s full format), in file order,
    optionally filtered.

    Raises:
        InputError: the file is missing or holds no task, a line is not a full manifest (a
            ``--format swebench`` row is not: it has no image, harness or gates blocks), an
            instance id is there twice, or an id of ``only`` is not in the file.
    """
    wanted = set(only)
    out: list[TaskManifest] = []
    seen: set[str] = set()
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = kind_of(data)
        if kind != "task":
            raise refuse_kind(
                path,
                lineno,
                kind,
                "task",
                "give the tasks file `swe-forge admit` writes without --format swebench",
            )
        try:
            task = TaskManifest.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{path}:{lineno}: not a task manifest ({exc})",
                hint="give the tasks file `swe-forge admit` writes without --format swebench",
            ) from exc
        if task.instance_id in seen:
            raise InputError(f"{path}:{lineno}: {task.instance_id} is in the file twice")
        seen.add(task.instance_id)
        if not wanted or task.instance_id in wanted:
            out.append(task)
    if not seen:
        raise InputError(f"no tasks in {path}")
    if wanted:
        missing = wanted - seen
        if missing:
            raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return out


Record = Candidate | TaskManifest | Rejection | VerifyResult


def read_records(
    path: Path, record_type: str | None = None, only: Iterable[str] = ()
) -> tuple[str, list[Record]]:
    """The records of one type in a JSON Lines file, in file order: ``(type, records)``.

    ``record_type`` picks one type from a file that holds several (else the file must hold
    one); ``only`` keeps the records of these instance ids.

    Raises:
        UsageError: an unknown ``record_type``, or several types in the file and none picked.
        InputError: the file is missing or holds no record of the type, a line is not a
            record of ours (a ``--format swebench`` row has no ``record_type``), or an id of
            ``only`` is not in the file.
    """
    if record_type is not None and record_type not in RECORD_TYPES:
        raise UsageError(
            f"unknown record type {record_type!r}", hint=f"use one of: {', '.join(RECORD_TYPES)}"
        )
    found: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = data.get("record_type")
        if kind not in RECORD_TYPES:
            raise InputError(
                f"{path}:{lineno}: not a candidate, task, rejection or verify result "
                f"({KINDS[kind_of(data)]})",
                hint="give a file that mine, admit (without --format swebench) or verify wrote",
            )
        found.setdefault(str(kind), []).append((lineno, data))
    if record_type is None:
        if len(found) > 1:
            raise UsageError(
                f"{path} holds records of several types: {', '.join(sorted(found))}",
                hint="pick one with --records TYPE",
            )
        if not found:
            raise InputError(f"no records in {path}")
        record_type = next(iter(found))
    cls = RECORD_TYPES[record_type]
    wanted = set(only)
    out: list[Record] = []
    for lineno, data in found.get(record_type, []):
        try:
            record = cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a {record_type} record ({exc})") from exc
        if not wanted or getattr(record, "instance_id", None) in wanted:
            out.append(record)
    if not out and not wanted:
        raise InputError(f"no {record_type} records in {path}")
    missing = wanted - {getattr(r, "instance_id", None) for r in out}
    if missing:
        raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return record_type, out


def read_image_records(path: Path) -> dict[str, ImageRecord]:
    """instance_id -> image record, from an ``images build`` output."""
    out = {}
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = kind_of(data)
        if kind != "images":
            raise refuse_kind(
                path, lineno, kind, "images", "give the file `swe-forge images build` writes"
            )
        if data.get("record_type") == "images":
            try:
                rec = ImageRecord.from_dict(data)
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(f"{path}:{lineno}: not an image record ({exc})") from exc
            out[rec.instance_id] = rec
    return out
