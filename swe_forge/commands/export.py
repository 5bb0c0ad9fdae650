"""``swe-forge export``: task manifests written in another format (SWE-bench 5's instances)."""

from __future__ import annotations

from pathlib import Path

from swe_forge.admission.swebench import swebench_line
from swe_forge.errors import UsageError
from swe_forge.jsonl import write_jsonl
from swe_forge.records import read_task_manifests

#: ``--format`` values.
FORMATS = ("swebench",)


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
    (SWE-bench's fields plus ``image``, ``eval_script``, ``log_parser``, ``eval_type``).

    Raises:
        UsageError: an unknown format.
        InputError: the input is not a file of full task manifests, or a task cannot be
            exported (no image, not pytest, a test patch that does not parse).
    """
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r}", hint=f"use one of: {', '.join(FORMATS)}")
    tasks = read_task_manifests(tasks_path, only or ())
    # Every row is made before anything is written: a task that cannot be exported leaves no
    # partial output behind.
    lines = [swebench_line(task) for task in tasks]
    return write_jsonl(output, lines)
