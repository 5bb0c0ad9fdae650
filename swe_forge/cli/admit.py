"""`admit`: gate candidates into task manifests."""

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
    UsageError,
)
from swe_forge.progress import NullReporter, Reporter


@app.command(epilog=exit_codes(5, 9, 10, 12, 13, 14, 15, 16, 17, 18))
def admit(
    candidates: Annotated[Path, typer.Argument(help="candidates.jsonl from `swe-forge mine`.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the task manifests.")
    ] = Path("tasks.jsonl"),
    rejected: Annotated[
        Path | None,
        typer.Option(
            "--rejected",
            help="One line per rejected candidate, with its reason "
            "(default: beside --output, OUTPUT-rejected.jsonl).",
        ),
    ] = None,
    images: Annotated[
        Path | None,
        typer.Option("--images", help="images.jsonl from `images build` (else images are built)."),
    ] = None,
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="'swe-forge' (full manifests) or 'swebench' (SWE-bench 5 instances: its "
            "fields, FAIL_TO_PASS/PASS_TO_PASS as JSON strings, and image, eval_script, "
            "log_parser, eval_type for its harness; `swe-forge export` makes them later). "
            "Parquet: `swe-forge export --format parquet` once the run is done.",
        ),
    ] = "swe-forge",
    no_audit: Annotated[
        bool, typer.Option("--no-audit", help="Skip the image audit of admitted tasks.")
    ] = False,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart",
            help="Empty the task and rejection files and decide every candidate again "
            "(by default a run resumes: candidates already in either file are skipped).",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Candidates decided at once (image builds stay one at a time). The files "
            "come out in candidate order whatever the jobs.",
        ),
    ] = 1,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary (progress stays on stderr).")
    ] = False,
) -> None:
    """Turn candidates into tasks: build images, run the gates, audit, write manifests.

    Each candidate runs its touched test files 3 times with the test patch only and 3 times
    with test patch + gold patch, each in a fresh container with no network, its own
    PYTHONHASHSEED and a shuffled order. FAIL_TO_PASS: fails in all 3 before and passes in all
    3 after, among the tests the test patch adds or changes; PASS_TO_PASS: passes in all 6. A
    flaky test that could be FAIL_TO_PASS rejects the task; one that could only be
    PASS_TO_PASS is dropped from it (admit.flaky_policy).

    Each task and each rejection is written as soon as it is decided; run the same command
    again after an interruption and only the candidates left are done.

    Images of an --images file that `images push` pinned and that are not on this engine are
    pulled by digest and checked against the pinned ids (exit 16 when refused).
    """
    from swe_forge.commands.admit import run_admit

    if output_format == "parquet":
        # A decision is appended to the files the moment it is made, and a killed run resumes
        # from them: a parquet file can be neither appended to nor resumed from.
        raise UsageError(
            "admit writes JSON Lines as it decides (so a killed run resumes); it cannot "
            "write parquet",
            hint=f"admit to {output}, then: swe-forge export {output} -o tasks.parquet "
            "--format parquet",
        )
    if output_format not in ("swe-forge", "swebench"):
        raise UsageError(f"--format {output_format!r}", hint="use swe-forge or swebench")
    # Progress goes to stderr in every mode (a real project takes minutes per candidate);
    # with --json, stdout holds only the summary.
    reporter: Reporter = (
        NullReporter() if quiet else RichReporter(_err, enabled=_err.is_terminal, unit="candidates")
    )
    result = run_admit(
        candidates,
        output,
        config=_config(),
        rejected=rejected,
        images_path=images,
        only=instance,
        swebench_format=output_format == "swebench",
        audit_images=not no_audit,
        reporter=reporter,
        restart=restart,
        jobs=jobs,
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    resumed = f" ({summary['resumed']} decided by an earlier run)" if summary["resumed"] else ""
    _out.print(
        f"{summary['admitted']} of {summary['candidates']} candidates admitted{resumed} in "
        f"{summary['seconds']}s -> {output}",
        markup=False,
    )
    for reason, n in summary["rejected"].items():
        _out.print(f"  rejected {reason}: {n}", markup=False)
