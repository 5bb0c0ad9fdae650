"""`example create` and `example expected`: the embedded example repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from swe_forge.cli._app import (
    _out,
    example_app,
    exit_codes,
)


@example_app.command("create", epilog=exit_codes(9, 17))
def example_create(
    directory: Annotated[Path, typer.Argument(help="Where to create the repository.")],
    force: Annotated[bool, typer.Option(help="Replace DIRECTORY if it exists.")] = False,
    language: Annotated[
        str,
        typer.Option(
            "--language",
            help="python (textkit, default), go (gokit), rust, js or java: that example.",
        ),
    ] = "python",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Write the example project as a git repository of merged PRs (same SHAs every time)."""
    from swe_forge.example.catalog import create_language_example

    info = create_language_example(language, directory, force=force)
    if as_json:
        data = {"repo": info.repo, "path": str(info.path), "prs": info.num_prs}
        print(json.dumps({**data, "head": info.head_sha}, indent=2, sort_keys=True))
        return
    _out.print(
        f"created {info.repo} at {info.path}: {info.num_prs} pull requests, "
        f"HEAD {info.head_sha[:12]}",
        markup=False,
        soft_wrap=True,
    )


@example_app.command("expected", epilog=exit_codes())
def example_expected(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print it as JSON (what this command prints anyway)."),
    ] = False,
) -> None:
    """Print the example's expectation file (which PR becomes what, and why)."""
    from swe_forge.example import load_expectations

    print(json.dumps(load_expectations(), indent=2, sort_keys=True))
