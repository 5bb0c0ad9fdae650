"""`export` and `schema`: tasks in other formats, and the records' JSON Schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from swe_forge.cli._app import (
    _out,
    app,
    exit_codes,
)
from swe_forge.errors import (
    UsageError,
)


@app.command(epilog=exit_codes(10, 17, 18))
def export(
    records: Annotated[
        Path,
        typer.Argument(
            metavar="FILE",
            help="tasks.jsonl from `swe-forge admit` (full manifests); with --format parquet "
            "also candidates or rejections (mine, admit) or results.jsonl (verify).",
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the rows.")],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="'swebench': SWE-bench 5 instances (as `admit --format swebench` writes). "
            "'parquet': one parquet file of one record type, with the columns "
            "schemas/<type>.columns.txt declares (needs swe-forge[parquet]).",
        ),
    ] = "swebench",
    record_type: Annotated[
        str | None,
        typer.Option(
            "--records",
            help="parquet: the record type to take from a file that holds several "
            "(candidate, task, rejection, verify_result).",
        ),
    ] = None,
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    push_to_hub: Annotated[
        str | None,
        typer.Option(
            "--push-to-hub",
            metavar="REPO",
            help="parquet: also upload the file to this Hugging Face Hub dataset repository "
            "(owner/name, created when missing) as data/<file name>; needs swe-forge[hub] "
            "and a token (HF_TOKEN or `hf auth login`).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Write records in another format, in the input's order.

    swebench: the rows SWE-bench 5's harness grades with our images (`image`: the pinned
    registry reference, else the local image id; `eval_script`: resets the test files to HEAD,
    applies the test patch, runs the gates' tests between SWE-bench's markers; `log_parser`;
    `eval_type`; and `test_strength`, the score of the task's test-strength gate, null when
    unmeasured). For comparison with SWE-bench's numbers: rewards come from `swe-forge
    verify` (see the README).

    parquet: tasks, candidates, rejections or verify results, one type per file, with
    columns declared by the record type: every file of a type has the same schema, so shards
    load together (`datasets.load_dataset("parquet", data_files=[...])`), and a file reads
    back to the same records. Test-id maps are lists of {test, outcome}; free-form blocks
    (a task's image, harness, gates, licence, provenance and audit; a rejection's extra; a
    result's verifier) are JSON strings.
    """
    from swe_forge.commands.export import run_export, run_export_parquet

    if output_format != "parquet" and (record_type or push_to_hub):
        raise UsageError(
            "--records and --push-to-hub go with --format parquet",
            hint="add --format parquet, or drop them",
        )
    if output_format == "parquet":
        result = run_export_parquet(
            records, output, record_type=record_type, only=instance, push_to_hub=push_to_hub
        )
        count, noun = result.count, f"{result.record_type} record(s)"
        summary: dict[str, Any] = {
            "format": output_format,
            "output": str(output),
            "record_type": result.record_type,
            "records": result.count,
        }
        if result.pushed:
            summary["pushed"] = result.pushed
    else:
        count, noun = (
            run_export(records, output, output_format=output_format, only=instance),
            "task(s)",
        )
        summary = {"format": output_format, "output": str(output), "tasks": count}
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    _out.print(f"{count} {noun} -> {output} ({output_format})", markup=False)
    if summary.get("pushed"):
        _out.print(f"pushed to the Hugging Face Hub: {summary['pushed']}", markup=False)


@app.command(epilog=exit_codes(17))
def schema(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The folder of the schema files.")
    ] = Path("schemas"),
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 4 when a file differs from what the code gives."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Write the published schemas of the records, derived from their classes.

    For each record type (candidate, task, rejection, verify_result): TYPE.schema.json, the
    JSON Schema (draft 2020-12) of one JSON line, and TYPE.columns.txt, the columns of its
    parquet files. The repository's schemas/ is what this writes; a test keeps it current.
    """
    from swe_forge.commands.schema import run_schema

    written = run_schema(output, check=check)
    if as_json:
        files = sorted(str(p) for p in written)
        print(json.dumps({"folder": str(output), "check": check, "files": files}, indent=2))
        return
    if check:
        _out.print(f"schemas in {output} are current", markup=False)
        return
    _out.print(f"{len(written)} schema file(s) -> {output}", markup=False)
