"""`audit-tests`: how many wrong fixes the tests of admitted tasks reject."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from swe_forge.cli._app import RichReporter, _config, _err, _out, app, exit_codes
from swe_forge.progress import NullReporter, Reporter


@app.command("audit-tests", epilog=exit_codes(12, 16, 17, 18))
def audit_tests(
    tasks: Annotated[
        Path, typer.Argument(help="tasks.jsonl from `swe-forge admit` (full manifests).")
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Where to write the tasks again, with audit.test_strength."
        ),
    ],
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these tasks; repeatable.")
    ] = None,
    max_mutants: Annotated[
        int | None,
        typer.Option(
            "--max-mutants", min=1, help="Mutants per task (default: admit.test_strength)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="The mutants' seed (default: admit.test_strength.seed).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Score the tests of admitted tasks: how many wrong variants of the gold fix they reject.

    The test-strength gate of `admit`, on tasks already admitted (any dataset of swe-forge
    manifests), from the manifests and their images alone: nothing is admitted again and no
    repository is needed. Small wrong variants (mutants) of the lines the gold patch adds
    (a boundary moved, an operator swapped, a condition negated, a statement removed, ...)
    are each graded by the verifier's judge; a mutant the task's FAIL_TO_PASS and
    PASS_TO_PASS tests all pass is a wrong fix the task would reward (a survivor). Each task
    is written again with audit.test_strength (generated, killed, survived, invalid, score =
    killed / (killed + survived), the survivors' diffs, the seed and budget); `report` shows
    the distribution, `export` carries the score.
    """
    from dataclasses import replace

    from swe_forge.admission.strength import StrengthSettings
    from swe_forge.commands.audit_tests import run_audit_tests

    config = _config()
    ts = config.admit.test_strength
    settings = StrengthSettings(max_mutants=ts.max_mutants, seconds=ts.seconds, seed=ts.seed)
    if max_mutants is not None:
        settings = replace(settings, max_mutants=max_mutants)
    if seed is not None:
        settings = replace(settings, seed=seed)
    reporter: Reporter = (
        NullReporter() if quiet else RichReporter(_err, enabled=_err.is_terminal, unit="tasks")
    )
    run = run_audit_tests(
        tasks, output, config=config, instances=instance, settings=settings, reporter=reporter
    )
    summary = run.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    bins = summary["scores"]
    _out.print(
        f"{summary['measured']} of {summary['tasks']} tasks measured in {summary['seconds']}s "
        f"-> {output}: score 1.0: {bins['1.0']}, [0.5,1): {bins['[0.5,1)']}, <0.5: "
        f"{bins['<0.5']}; {summary['with_survivors']} with a surviving wrong fix",
        markup=False,
    )
    for line in summary["errors"]:
        _out.print(f"  unmeasured: {line}", markup=False)
