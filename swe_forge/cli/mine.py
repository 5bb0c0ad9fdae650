"""`mine` and `license`: find the candidates, and show a repository's licence as mine judges it."""

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
    _parse_date,
    app,
    exit_codes,
)
from swe_forge.errors import (
    PartialFailure,
)


@app.command(epilog=exit_codes(5, 6, 7, 8, 9, 10, 11, 17, 18))
def mine(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Repository paths, clone URLs, or files listing them (one per line, "
            "optionally followed by owner/name).",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write candidates (JSON Lines).")
    ] = Path("candidates.jsonl"),
    rejected: Annotated[
        Path | None,
        typer.Option("--rejected", help="Also write one line per rejected PR, with its reason."),
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only PRs merged at or after this date (ISO 8601).")
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Only PRs merged at or before this date (ISO 8601).")
    ] = None,
    max_candidates: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Stop after this many candidates in total (the newest first; after --sample "
            "when both are given).",
        ),
    ] = None,
    sample: Annotated[
        str | None,
        typer.Option(
            help="Keep per repository the N newest candidates and M older ones spread evenly "
            "through its history: newest:N,spread:M (e.g. newest:4,spread:2). Deterministic.",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="The owner/name to record for a single source (default: from the URL or the "
            "origin remote, else local/<folder>).",
            show_default=False,
        ),
    ] = None,
    branch: Annotated[
        str | None, typer.Option(help="Mine this branch instead of the default branch.")
    ] = None,
    github: Annotated[
        bool,
        typer.Option(
            "--github",
            help="Take problem statements from linked GitHub issues (token from $GITHUB_TOKEN; "
            "API URL from the config's github.api_url).",
        ),
    ] = False,
    offline: Annotated[
        bool, typer.Option(help="Never touch the network: use cached clones only.")
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Worker processes that diff, split and prove PRs (0: one per CPU; default "
            "mine.jobs from the config). The output is the same for any value.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout instead of a table.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Find merged PRs that change source and tests, and split each into patch + test_patch.

    For every repository: check the decontamination blocklist, walk the first-parent history of
    the default branch, and for each merged PR (merge commit or squash merge) judge the licence
    at the base commit, classify the changed files, split them into a gold patch and a held-out
    test patch, and prove that base + patch + test_patch reproduces the merge.

    Example: swe-forge mine ./repo https://github.com/owner/name.git -o candidates.jsonl
    --rejected rejected.jsonl --json
    """
    from swe_forge.commands.mine import run_mine
    from swe_forge.mining.miner import MineOptions
    from swe_forge.mining.sample import parse_sample

    options = MineOptions(
        sample=parse_sample(sample) if sample is not None else None,
        since=_parse_date(since, "--since"),
        until=_parse_date(until, "--until"),
        max_candidates=max_candidates,
        branch=branch,
        offline=offline,
        jobs=jobs,
    )
    reporter = RichReporter(_err, enabled=not quiet and not as_json and _err.is_terminal)
    result = run_mine(
        sources,
        output,
        config=_config(),
        options=options,
        rejected=rejected,
        github=github,
        reporter=reporter,
        name=name,
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        from rich.table import Table

        table = Table(title=f"mined {summary['repos']} repositories in {summary['seconds']:.1f}s")
        for col in ("repository", "commits", "PRs", "candidates", "rejected"):
            table.add_column(col, justify="right" if col != "repository" else "left")
        for r in result.repos:
            table.add_row(
                r.repo,
                str(r.commits_scanned),
                str(r.prs_found),
                str(r.candidates),
                ", ".join(f"{k}={v}" for k, v in sorted(r.rejections.items()))
                or r.error
                or ("no merged PR found" if r.note else "-"),
            )
        _out.print(table)
        sampled = f" ({summary['not_sampled']} more left out by --sample)" if sample else ""
        _out.print(f"{summary['candidates']} candidates{sampled} -> {output}")
        if rejected:
            _out.print(f"{sum(summary['rejected'].values())} rejections -> {rejected}")
    if result.failed and len(result.failed) == len(result.repos):
        # Nothing could be mined: the (first) repository's own error and exit code.
        first = result.failed[0].exception
        if first is not None:
            raise first
    if result.failed:
        raise PartialFailure(
            f"{len(result.failed)} of {len(result.repos)} repositories could not be mined",
            hint="see the messages above; the other repositories were mined",
        )


@app.command("license", epilog=exit_codes(5, 6, 9))
def license_cmd(
    repository: Annotated[Path, typer.Argument(help="A local repository.", show_default=False)],
    rev: Annotated[
        str | None, typer.Option(help="Branch, tag or commit to judge (default: default branch).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Show a repository's licence at a commit, as mine judges it, with the evidence."""
    from swe_forge.commands.license import run_license

    commit, verdict = run_license(repository, config=_config(), rev=rev)
    if as_json:
        print(json.dumps({"commit": commit, **verdict.to_dict()}, indent=2, sort_keys=True))
        return
    state = "allowed" if verdict.allowed else f"rejected ({verdict.reason})"
    _out.print(f"{commit[:12]}: {verdict.expression or 'unknown'}: {state}", markup=False)
    for ev in verdict.evidence:
        _out.print(
            f"  {ev.source:<10} {ev.path:<24} {ev.spdx} (score {ev.score:.2f})", markup=False
        )
    if verdict.detail:
        _out.print(f"  {verdict.detail}", markup=False)
