"""`report`: the funnel of a run, from its records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from swe_forge.cli._app import (
    _err,
    _out,
    app,
    exit_codes,
)
from swe_forge.errors import (
    UsageError,
)


@app.command(epilog=exit_codes(17, 18))
def report(
    files: Annotated[
        list[Path],
        typer.Argument(help="Outputs of mine and admit: candidates, tasks and rejection files."),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the funnel as JSON.")] = False,
    by_repo: Annotated[
        bool,
        typer.Option(
            "--by-repo",
            help="One row per repository: PRs, candidates, environments built, admitted "
            "(yield), gold patches verified (pass `verify --gold` results too), rejections.",
        ),
    ] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --by-repo: print a Markdown table.")
    ] = False,
    html_out: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also write one self-contained page (inline styles and SVG charts, no "
            "network): the funnel, rejection reasons, per-repository and per-language yields, "
            "per-model results and timings. Pass images.jsonl too for the language of "
            "candidates that were not admitted.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The funnel from mined PRs to admitted tasks, with rejection reasons per stage, and the
    distribution of the admitted tasks' test-strength scores (1.0, [0.5,1), <0.5, unmeasured;
    tasks with at least one surviving mutant).

    Example: swe-forge report */candidates.jsonl */mine-rejected.jsonl */tasks.jsonl
    */admit-rejected.jsonl */results.jsonl --by-repo --markdown
    """
    from swe_forge.commands.report import funnel, funnel_by_repo, funnel_markdown, strength_line

    if markdown and not by_repo:
        raise UsageError("--markdown needs --by-repo", hint="add --by-repo")
    if html_out is not None:
        from swe_forge.commands.report_html import render_html
        from swe_forge.errors import output_error
        from swe_forge.locks import hold_output

        page = render_html(files)
        hold_output(html_out)
        try:
            html_out.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise output_error(exc, html_out) from exc
        _err.print(f"report page -> {html_out}", markup=False)
    if by_repo:
        per_repo = funnel_by_repo(files)
        if as_json:
            print(json.dumps(per_repo, indent=2, sort_keys=True))
        elif markdown:
            print(funnel_markdown(per_repo), end="")
        else:
            from rich.table import Table

            table = Table(title="swe-forge funnel by repository")
            for col in ("repository", "PRs", "candidates", "environment", "admitted", "gold 1.0"):
                table.add_column(col, justify="left" if col == "repository" else "right")
            table.add_column("rejections")
            for r in [*per_repo["repos"], per_repo["total"]]:
                table.add_row(
                    r["repo"],
                    str(r["prs"]),
                    str(r["candidates"]),
                    f"{r['environments']}/{r['judged']}",
                    f"{r['admitted']} ({r['yield']:.0%})",
                    f"{r['gold_verified']}/{r['gold_run']}" if r["gold_run"] else "-",
                    ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "-",
                )
            _out.print(table)
        return
    data = funnel(files)
    if as_json:
        print(json.dumps(data, indent=2, sort_keys=True))
        return
    from rich.table import Table

    table = Table(title="swe-forge funnel")
    table.add_column("stage")
    table.add_column("count", justify="right")
    table.add_column("rejected (reason: count)")
    for row in data["stages"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in row["rejected"].items())
        table.add_row(row["stage"], str(row["count"]), reasons or "-")
    _out.print(table)
    _out.print(strength_line(data["test_strength"]), markup=False, highlight=False)
