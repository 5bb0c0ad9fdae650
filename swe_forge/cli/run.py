"""`run` and `merge`: the whole pipeline as a batch job, and the merge of its shards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from swe_forge.cli._app import (
    _config,
    _err,
    app,
    exit_codes,
)
from swe_forge.errors import (
    UsageError,
)

if TYPE_CHECKING:
    from rich.console import Console


class RichBatchReporter:
    """A live display of a batch: a bar per stage, counts, and each worker's activity."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.enabled = enabled
        self.console = console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.tasks: dict[str, Any] = {}
        self.workers: dict[str, Any] = {}
        self.counts: dict[str, int] = {"admitted": 0, "rejected": 0, "error": 0}
        # The display (and its refresh thread) starts with the first stage: mining forks its
        # worker processes before that, when the process has no other thread.
        self._started = False

    def stage(self, name: str, total: int, done: int) -> None:
        """A stage starts."""
        if self.enabled:
            if not self._started:
                self.progress.start()
                self._started = True
            self.tasks[name] = self.progress.add_task(name, total=total, completed=done)
        else:
            self.console.print(f"{name}: {total} units, {done} done already", markup=False)

    def unit_done(self, stage: str, outcome: str) -> None:
        """One unit finished."""
        if outcome in self.counts:
            self.counts[outcome] += 1
        if self.enabled and stage in self.tasks:
            desc = stage
            if stage == "admit":
                c = self.counts
                desc = (
                    f"admit (admitted {c['admitted']}, rejected {c['rejected']}, "
                    f"errors {c['error']})"
                )
            self.progress.update(self.tasks[stage], advance=1, description=desc)

    def worker(self, worker: str, activity: str) -> None:
        """Show what a worker does."""
        if not self.enabled:
            return
        if worker not in self.workers:
            self.workers[worker] = self.progress.add_task(f"  {worker}", total=None)
        self.progress.update(self.workers[worker], description=f"  {worker}: {activity or 'idle'}")

    def close(self) -> None:
        """Stop the live display."""
        if self._started:
            self.progress.stop()
            self._started = False


_BATCH_EXIT_CODES = (
    "Exit codes: 0 all done; 20 done, with rejections; 21 infrastructure errors left work "
    "undone (run the same command again to finish it); 2 usage error."
)


@app.command(
    epilog=exit_codes(5, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, lead=_BATCH_EXIT_CODES)
)
def run(
    repos: Annotated[
        Path,
        typer.Argument(
            help="A file listing repositories (path or clone URL, optionally owner/name)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The output folder; it also holds the state.")],
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Work at once: mining worker processes (and clones fetched at once), "
            "repositories admitted at once.",
        ),
    ] = 1,
    build_jobs: Annotated[
        int,
        typer.Option("--build-jobs", min=1, help="Image builds at once (heavy on disk and CPU)."),
    ] = 1,
    test_jobs: Annotated[
        int, typer.Option("--test-jobs", min=1, help="Test runs (gates) at once.")
    ] = 2,
    shard: Annotated[
        str | None, typer.Option("--shard", help="K/N: do only the K-th of N deterministic slices.")
    ] = None,
    shard_by: Annotated[
        str,
        typer.Option(
            "--shard-by",
            help="What --shard slices. repo: each shard mines and admits its repositories "
            "(whole repositories: uneven when a few hold most candidates). candidate: each "
            "shard mines every repository (the same candidates) and admits its slice of them "
            "(balanced admission, the hours of a run, for the minutes of mining again).",
        ),
    ] = "repo",
    until: Annotated[str, typer.Option(help="Stop after 'mine' or after 'admit'.")] = "admit",
    force: Annotated[
        bool, typer.Option(help="Continue in a folder made with other settings.")
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="Where candidates are admitted. local: --jobs threads on this machine; ray: "
            "one Ray task per candidate (1 CPU and admit.memory each) on the cluster at "
            "--address (pip install 'swe-forge[ray]').",
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
    images: Annotated[
        Path | None,
        typer.Option(
            "--images",
            help="Image records (from `images build`, pinned by `images push`): a candidate "
            "with one is admitted on those images, pulled by digest where missing, not built.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No live display.")] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the summary as JSON (what this command prints anyway)."),
    ] = False,
) -> None:
    """Mine and admit a list of repositories as a batch: parallel, sharded, resumable.

    The folder holds the state: kill the process at any point (kill -9 included) and run the
    same command again; finished work is kept and not redone. Outputs: candidates.jsonl,
    rejected.jsonl, tasks.jsonl and summary.json in --out. Merge shard folders with
    `swe-forge merge`.

    With --executor ray mining stays on this machine and each candidate is admitted by a Ray
    task (a node that dies mid-task is retried by Ray; an admission that fails for the
    infrastructure is submitted again up to verify.infra_retries times); the folder, its
    resume and the decisions are those of a local run. Every node needs swe-forge, a Docker
    engine and the repositories (a clone URL is fetched by the node; a path must be reachable
    there); with --images a node pulls the pinned digests it lacks, without it a node builds.
    """
    from swe_forge.batch.run import BatchOptions, run_batch
    from swe_forge.batch.shard import parse_shard

    if until not in ("mine", "admit"):
        raise UsageError(f"--until {until!r}", hint="use mine or admit")
    options = BatchOptions(
        jobs=jobs,
        build_jobs=build_jobs,
        test_jobs=test_jobs,
        shard=parse_shard(shard),
        shard_by=shard_by,
        until=until,
        force=force,
        executor=executor,
        address=address,
        images=images,
    )
    display = RichBatchReporter(_err, enabled=not quiet and _err.is_terminal)
    try:
        result = run_batch(repos, out, config=_config(), options=options, reporter=display)
    finally:
        display.close()
    for note in result.notes:
        _err.print(f"note: {note}", markup=False, highlight=False)
    print(json.dumps(result.summary(), indent=2, sort_keys=True))
    raise typer.Exit(result.exit_code)


@app.command(epilog=exit_codes(17, 18))
def merge(
    shards: Annotated[list[Path], typer.Argument(help="The --out folders of the shards.")],
    out: Annotated[Path, typer.Option("--out", help="The merged folder.")],
    force: Annotated[bool, typer.Option(help="Merge even shards of different settings.")] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the summary as JSON (what this command prints anyway)."),
    ] = False,
) -> None:
    """Combine shard folders into one tasks file, one rejections file and one summary.

    Refuses shards made with different configurations, repositories or versions.
    """
    from swe_forge.batch.run import merge_runs

    summary = merge_runs(shards, out, force=force)
    print(json.dumps(summary, indent=2, sort_keys=True))
