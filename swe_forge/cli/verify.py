"""`verify`: grade candidate patches against tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from swe_forge.cli._app import (
    RichReporter,
    _config,
    _err,
    _out,
    app,
    exit_codes,
)
from swe_forge.errors import (
    EXIT_INFRA_ERRORS,
    UsageError,
)

_VERIFY_EXIT_CODES = (
    "Exit codes: 0 every prediction graded; 21 some ended in an infrastructure error (never "
    "scored as the model's failure: run again, with --out only those are graded again); "
    "15 the registry of a pinned image cannot be reached; 16 a pinned image is refused (the "
    "registry has no such digest, or it is not the image the task pins); 2 usage error; "
    "4 bad input (an empty or wrong file, an unknown --instance, an output path that cannot "
    "be written)."
)


@app.command(epilog=exit_codes(12, 15, 16, 17, 18, 21, lead=_VERIFY_EXIT_CODES))
def verify(
    tasks_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="TASKS",
            help="tasks.jsonl from `swe-forge admit` (like the input file of every command; "
            "--tasks says the same).",
        ),
    ] = None,
    tasks: Annotated[
        Path | None, typer.Option("--tasks", help="tasks.jsonl from `swe-forge admit`.")
    ] = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions",
            help="SWE-bench predictions (instance_id, model_name_or_path, model_patch): "
            ".jsonl or .json.",
        ),
    ] = None,
    gold: Annotated[bool, typer.Option("--gold", help="Grade the tasks' gold patches.")] = False,
    instance: Annotated[
        list[str] | None,
        typer.Option(
            "--instance",
            help="Only these tasks; repeatable (with --patch: the one task to grade).",
        ),
    ] = None,
    patch: Annotated[
        Path | None, typer.Option("--patch", help="Grade this patch file against --instance.")
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="One result per prediction (JSON Lines).")
    ] = Path("results.jsonl"),
    report_path: Annotated[
        Path | None, typer.Option("--report", help="Write the run report (SWE-bench's shape) here.")
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Verifications in parallel.")
    ] = 1,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Batch mode: a resumable folder (results.jsonl, report.json)."),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", help="K/N: grade only the K-th of N slices (with --out)."),
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Continue a --out folder made with other settings.")
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="local: --jobs threads on this machine; ray: one Ray task per prediction "
            "(1 CPU and verify.memory each) on the cluster at --address (pip install "
            "'swe-forge[ray]').",
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="With --executor ray: the cluster (HOST:PORT, auto, ray://...); default "
            "RAY_ADDRESS, else a Ray instance started for this run.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run report as JSON.")] = False,
) -> None:
    """Grade candidate patches in fresh judge's containers from the pinned images.

    Static guards run first (paths, modes, test and runner files, start-up hooks); the
    candidate is applied as uid 1000 with `git apply` (no fuzz), what changed is checked
    again, and the capability gate refuses code that newly reaches frames, gc, pytest, file
    descriptors, the test files... unless the base code or the reference fix already does.
    Only then are the held-out tests applied and locked (root-owned, read-only, watched), and
    pytest runs as uid 1000 under a root supervisor that kills everything afterwards. Reward
    1.0 needs every FAIL_TO_PASS and PASS_TO_PASS test passed, every assertion canary failed,
    and pytest's exit status in agreement. Statuses: resolved, unresolved, invalid_patch,
    apply_failed, timeout, resource_limit, tamper_detected, infra_error (never the model's
    fault; results are kept in OUTPUT.partial as they are graded).

    A task's image that is not on this engine (DOCKER_HOST picks the engine) is pulled first
    by the digest `images push` pinned, and used only if it is the image id the task pins.

    With --executor ray each prediction is a Ray task (a node that dies mid-task is retried by
    Ray, an infra_error result up to verify.infra_retries times); every node needs swe-forge,
    a Docker engine and the tasks' images. The results are the same as a local run's.
    """
    from swe_forge.batch.shard import parse_shard
    from swe_forge.commands.verify import run_verify

    if shard and out is None:
        raise UsageError("--shard needs --out", hint="a shard's results live in its own folder")
    if (tasks is None) == (tasks_file is None):
        raise UsageError(
            "give the tasks file once: swe-forge verify TASKS (or --tasks TASKS)",
            hint="see swe-forge verify -h",
        )
    source = tasks or tasks_file
    assert source is not None
    _run, data = run_verify(
        source,
        output,
        config=_config(),
        predictions=predictions,
        gold=gold,
        instance=instance,
        patch_file=patch,
        jobs=jobs,
        report_path=report_path,
        reporter=RichReporter(_err, enabled=False) if not as_json else None,
        out_dir=out,
        shard=parse_shard(shard),
        force=force,
        executor=executor,
        address=address,
    )
    if as_json:
        print(json.dumps(data, indent=2, sort_keys=True))
    else:
        from rich.table import Table

        models = data.get("models", {})
        table = Table(title=f"{data['predictions']} prediction(s) graded in {data['seconds']}s")
        for col in ("model", "predictions", "resolved", "rate", "statuses"):
            table.add_column(col, justify="left" if col in ("model", "statuses") else "right")
        for model, row in models.items():
            rate = row["resolve_rate"]
            table.add_row(
                model,
                str(row["predictions"]),
                str(row["resolved"]),
                "-" if rate is None else f"{rate:.1%}",
                ", ".join(f"{k}: {v}" for k, v in row["statuses"].items()),
            )
        _out.print(table)
        _out.print(
            f"instances: {data['resolved_instances']} of {data['submitted_instances']} "
            f"resolved by some model -> {output}",
            markup=False,
        )
    if data.get("error_instances") or data.get("not_graded"):
        # Infrastructure errors are never the model's: run the same command again.
        raise typer.Exit(EXIT_INFRA_ERRORS)
