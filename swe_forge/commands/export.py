"""``swe-forge export``: records written in another format: SWE-bench 5's instances (tasks),
or parquet (tasks, candidates, rejections or verify results)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swe_forge.admission.swebench import swebench_line
from swe_forge.errors import UsageError
from swe_forge.jsonl import write_jsonl
from swe_forge.records import read_records, read_task_manifests

#: ``--format`` values.
FORMATS = ("swebench", "parquet")


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: how many records of which type, and where a push went."""

    count: int
    record_type: str
    #: The Hugging Face Hub commit a ``--push-to-hub`` made ("" without one).
    pushed: str = ""


def run_export(
    tasks_path: Path,
    output: Path,
    *,
    output_format: str = "swebench",
    only: list[str] | None = None,
) -> int:
    """Write the tasks of ``tasks_path`` (full manifests) to ``output`` in ``output_format``,
    in the input's order, atomically; return how many.

    ``swebench``: SWE-bench 5 instances, the same rows as ``admit --format swebench``
    (SWE-bench's fields plus ``image``, ``eval_script``, ``log_parser``, ``eval_type``, and
    ``test_strength``: the score of ``audit.test_strength``, null when unmeasured).
    ``parquet``: see :func:`run_export_parquet` (any record type).

    Raises:
        UsageError: an unknown format.
        InputError: the input is not a file of full task manifests, or a task cannot be
            exported (no image, not pytest, a test patch that does not parse).
    """
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r}", hint=f"use one of: {', '.join(FORMATS)}")
    if output_format == "parquet":
        return run_export_parquet(tasks_path, output, only=only).count
    tasks = read_task_manifests(tasks_path, only or ())
    # Every row is made before anything is written: a task that cannot be exported leaves no
    # partial output behind.
    lines = [swebench_line(task) for task in tasks]
    return write_jsonl(output, lines)


def run_export_parquet(
    records_path: Path,
    output: Path,
    *,
    record_type: str | None = None,
    only: list[str] | None = None,
    push_to_hub: str | None = None,
) -> ExportResult:
    """Write the records of a JSON Lines file (tasks, candidates, rejections or verify
    results: one type, or the one ``record_type`` picks) to one parquet file, in the input's
    order, atomically; optionally upload it to a Hugging Face Hub dataset repository
    (``data/<output name>``).

    The file's columns are declared by the record type (``schemas/<type>.columns.txt``), so
    files written from different inputs (shards) have the same schema and load together.

    Raises:
        UsageError: pyarrow (or, with ``push_to_hub``, huggingface_hub) is not installed; the
            file holds several record types and none was picked.
        InputError: a line is not a record of ours, or an id of ``only`` is not there.
        RemoteError: the push failed (the parquet file is written).
    """
    # Imported here: the parquet module is light, but it is only needed by this format.
    from swe_forge.parquet import check_hub, write_parquet
    from swe_forge.parquet import push_to_hub as push

    if push_to_hub:
        check_hub(push_to_hub)
    kind, records = read_records(records_path, record_type, only or ())
    count = write_parquet(output, records, kind)
    pushed = push([output], push_to_hub) if push_to_hub else ""
    return ExportResult(count, kind, pushed)
