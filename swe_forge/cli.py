"""The command line: the only module that imports typer, and the only one that prints.

Expected errors print one line and a hint and exit with their fixed code; Ctrl-C exits 130;
anything else is a crash: a short message, a log file with versions and the traceback, exit 1.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import traceback
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from swe_forge import __version__
from swe_forge.config import Config, load_config
from swe_forge.errors import (
    EXIT_CRASH,
    EXIT_INFRA_ERRORS,
    EXIT_INTERRUPTED,
    BuildError,
    InputError,
    PartialFailure,
    SweForgeError,
    UsageError,
    exit_code_table,
)
from swe_forge.progress import NullReporter, Reporter

_EXIT_CODES = "\n\n".join(
    f"{code:>3}  {name}: {meaning}" for code, name, meaning in exit_code_table()
)

_ALL_EXIT_CODES = f"Exit codes:\n\n{_EXIT_CODES}"

app = typer.Typer(
    name="swe-forge",
    help=(
        "Turn the git history of permissively licensed repositories into SWE-bench-style "
        "tasks, and grade candidate patches against them.\n\n"
        "Pipeline: mine (PRs -> candidates.jsonl) -> admit (images + gates -> tasks.jsonl) "
        "-> verify (patches -> results.jsonl).\n\n"
        "Start with:  swe-forge example create /tmp/textkit && "
        "swe-forge mine /tmp/textkit -o candidates.jsonl --rejected rejected.jsonl"
    ),
    epilog=f"Exit codes:\n\n{_EXIT_CODES}",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
example_app = typer.Typer(help="The embedded example repository (the quickstart and test fixture).")
app.add_typer(example_app, name="example")
images_app = typer.Typer(
    help="Hermetic images: base (OS + Python, no registry), env (dependencies from a wheelhouse, "
    "no network) and instance (the repository at its base commit, history scrubbed). Local "
    "names start with swe-forge.invalid/, a registry that never resolves, so no pull can "
    "fetch a stranger's image under them. To grade elsewhere: `images push` (pinned by "
    "digest; `verify` and `admit` pull what is missing) or `images export` / `images import` "
    "(one OCI archive, for machines without a registry).",
    no_args_is_help=True,
)
app.add_typer(images_app, name="images")

# soft_wrap: error lines must stay whole (people grep logs for them).
_err = Console(stderr=True, soft_wrap=True)
_out = Console()


class _State:
    debug: bool = False
    config_path: Path | None = None
    quiet: bool = False


STATE = _State()


def _config() -> Config:
    return load_config(STATE.config_path)


class RichReporter:
    """Renders a stage's progress as a rich progress bar on stderr."""

    def __init__(self, console: Console, enabled: bool = True, unit: str = "commits") -> None:
        self.console = console
        self.enabled = enabled
        self.unit = unit
        self._progress: Progress | None = None
        self._task: Any = None

    def start(self, description: str, total: int | None) -> None:
        """Open a bar for one unit of work."""
        if not self.enabled:
            return
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(self.unit),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(description, total=total)

    def advance(self, n: int = 1) -> None:
        """Move the bar."""
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def note(self, message: str) -> None:
        """Print a line above the bar."""
        self.console.print(message, markup=False, highlight=False)

    def finish(self) -> None:
        """Close the bar."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A YAML file overriding configs/default.yaml (only the keys it sets).",
            envvar="SWE_FORGE_CONFIG",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True)
    ] = False,
) -> None:
    if version:
        print(f"swe-forge {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())
        raise typer.Exit(0)
    STATE.debug = debug
    STATE.config_path = config


def _parse_date(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise UsageError(
            f"{option} {value!r} is not a date",
            hint="use ISO 8601, e.g. 2024-01-31 or 2024-01-31T12:00",
        ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@app.command(epilog=_ALL_EXIT_CODES)
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
        int | None, typer.Option(min=1, help="Stop after this many candidates in total.")
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

    options = MineOptions(
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
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        table = Table(title=f"mined {summary['repos']} repositories in {summary['seconds']:.1f}s")
        for col in ("repository", "commits", "PRs", "candidates", "rejected"):
            table.add_column(col, justify="right" if col != "repository" else "left")
        for r in result.repos:
            table.add_row(
                r.repo,
                str(r.commits_scanned),
                str(r.prs_found),
                str(r.candidates),
                ", ".join(f"{k}={v}" for k, v in sorted(r.rejections.items())) or r.error or "-",
            )
        _out.print(table)
        _out.print(f"{summary['candidates']} candidates -> {output}")
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


@app.command("license", epilog=_ALL_EXIT_CODES)
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


@example_app.command("create", epilog=_ALL_EXIT_CODES)
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
    from swe_forge.example import create_example
    from swe_forge.example.polyglot import create_language_example

    if language == "python":
        info = create_example(directory, force=force)
    else:
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


@example_app.command("expected", epilog=_ALL_EXIT_CODES)
def example_expected(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print it as JSON (what this command prints anyway)."),
    ] = False,
) -> None:
    """Print the example's expectation file (which PR becomes what, and why)."""
    from swe_forge.example import load_expectations

    print(json.dumps(load_expectations(), indent=2, sort_keys=True))


@images_app.command("base", epilog=_ALL_EXIT_CODES)
def images_base(
    distro: Annotated[
        list[str] | None,
        typer.Option(
            "--distro", help="bullseye (3.9), bookworm (3.11), trixie (3.13); repeatable."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Build the base images (debootstrap + docker import; nothing is pulled)."""
    from swe_forge.commands.images import run_base

    built = run_base(_config(), distro or [], RichReporter(_err, enabled=False))
    if as_json:
        rows = [{"tag": b.tag, "python": b.python, "built": b.built} for b in built]
        print(json.dumps(rows, indent=2, sort_keys=True))
        return
    for b in built:
        state = f"built in {b.seconds:.1f}s" if b.built else "present"
        _out.print(f"{b.tag}  Python {b.python}  {state}", markup=False, soft_wrap=True)


@images_app.command("build", epilog=_ALL_EXIT_CODES)
def images_build(
    candidates: Annotated[Path, typer.Argument(help="candidates.jsonl from `swe-forge mine`.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write one image record per candidate.")
    ] = Path("images.jsonl"),
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Build base, env and instance images for candidates, offline (--network=none).

    Dependencies are resolved as of each base commit's date into a wheelhouse keyed by the
    lock; tasks with the same lock share one env image. Build logs go to the cache's logs/.
    """
    from swe_forge.commands.images import run_build

    result = run_build(
        candidates,
        output,
        config=_config(),
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal),
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _out.print(
            f"{summary['built']} of {summary['candidates']} candidates built "
            f"({summary['env_images']} env images) in {summary['seconds']}s -> {output}",
            markup=False,
        )
        for reason, n in summary["failure_reasons"].items():
            _out.print(f"  {reason}: {n}", markup=False)
    if result.records and len(result.failed) == len(result.records):
        raise BuildError(
            "no candidate's images could be built", hint=f"see the records in {output}"
        )
    if result.failed:
        raise PartialFailure(
            f"{len(result.failed)} of {len(result.records)} candidates' images could not be built",
            hint=f"the reasons are in {output}; the others were built",
        )


@images_app.command("ls", epilog=_ALL_EXIT_CODES)
def images_ls(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the images swe-forge made, with their kind, size and labels."""
    from swe_forge.commands.images import list_images
    from swe_forge.engine import LABEL_PREFIX

    infos = list_images()
    if as_json:
        print(json.dumps([i.__dict__ for i in infos], indent=2, sort_keys=True, default=list))
        return
    table = Table()
    for col in ("kind", "tag", "size (MB)", "python", "repository / base commit"):
        table.add_column(col)
    for i in infos:
        lab = i.labels
        table.add_row(
            lab.get(f"{LABEL_PREFIX}.kind", "?"),
            ", ".join(i.tags) or i.id[:19],
            f"{i.size / 1e6:.1f}",
            lab.get(f"{LABEL_PREFIX}.python", ""),
            " ".join(
                (
                    lab.get(f"{LABEL_PREFIX}.repo", ""),
                    lab.get(f"{LABEL_PREFIX}.base-commit", "")[:12],
                )
            ),
        )
    _out.print(table)


@images_app.command("audit", epilog=_ALL_EXIT_CODES)
def images_audit(
    candidates: Annotated[Path, typer.Argument(help="candidates.jsonl (for the test patches).")],
    images: Annotated[
        Path | None, typer.Option("--images", help="images.jsonl from `images build`.")
    ] = None,
    image: Annotated[
        str | None, typer.Option("--image", help="Audit this image (with one --instance).")
    ] = None,
    instance: Annotated[
        list[str] | None,
        typer.Option("--instance", help="Only these instance ids; repeatable."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write one JSON report per image.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the reports as JSON (exit 14 still tells).")
    ] = False,
) -> None:
    """Check instance images from outside: one scrubbed commit, no test-patch content anywhere,
    the project installed only from /testbed. Exit code 14 when any image fails."""
    from swe_forge.commands.images import run_audit
    from swe_forge.errors import AuditFailure
    from swe_forge.jsonl import write_jsonl

    if images is None and image is None:
        raise UsageError(
            "give --images FILE or --image TAG", hint="see swe-forge images audit --help"
        )
    reports = run_audit(
        candidates, images, image=image, only=instance, reporter=RichReporter(_err, enabled=False)
    )
    if output is not None:
        write_jsonl(output, (json.dumps(r.to_dict(), sort_keys=True) for r in reports))
    failed = [r for r in reports if not r.passed]
    if as_json:
        print(json.dumps([r.to_dict() for r in reports], indent=2, sort_keys=True))
    else:
        _out.print(
            f"{len(reports) - len(failed)} of {len(reports)} images passed the audit",
            markup=False,
        )
    if failed:
        raise AuditFailure(
            f"{len(failed)} image(s) failed the audit: {', '.join(r.instance_id for r in failed)}",
            hint="the findings are listed above" + (f" and in {output}" if output else ""),
        )


@images_app.command("prune", epilog=_ALL_EXIT_CODES)
def images_prune(
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Keep the images named in this images.jsonl.")
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Remove base images too.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Remove swe-forge's instance and env images (and base images with --all)."""
    from swe_forge.commands.images import run_prune

    gone = run_prune(keep=keep, everything=everything, dry_run=dry_run)
    if as_json:
        rows = [{"id": info.id, "tags": list(info.tags)} for info in gone]
        print(json.dumps({"dry_run": dry_run, "images": rows}, indent=2, sort_keys=True))
        return
    verb = "would remove" if dry_run else "removed"
    for info in gone:
        _out.print(f"{verb} {', '.join(info.tags) or info.id}", markup=False, soft_wrap=True)
    _out.print(f"{verb} {len(gone)} image(s)", markup=False)


_RECORDS_FILE_HELP = "images.jsonl from `images build`, or tasks.jsonl from `admit`."


@images_app.command("push", epilog=_ALL_EXIT_CODES)
def images_push(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    registry: Annotated[
        str,
        typer.Option(
            "--registry",
            help="HOST[:PORT]/NAMESPACE of a registry (OCI distribution API v2), e.g. "
            "127.0.0.1:5000/swe-forge. The host is required: a bare NAMESPACE would mean "
            "Docker Hub.",
            envvar="SWE_FORGE_REGISTRY",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the pinned records here (default: FILE, in place)."
        ),
    ] = None,
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Push the base, env and instance images FILE names, and pin them by digest in FILE.

    Each image goes to HOST/NAMESPACE/<kind>:<its local tag> (shared env and base images
    once), and each record gets a registry block: HOST/NAMESPACE/<kind>@sha256:<digest> and
    the image id a pull must give (image.registry in a task, registry in an image record).
    On another machine, `verify` and `admit` then pull what is missing by digest and refuse
    an image that is not the pinned one (exit 16).

    \b
    Example (scripts/ensure-registry.sh starts a registry on 127.0.0.1:5000):
      swe-forge images push tasks.jsonl --registry 127.0.0.1:5000/swe-forge
      DOCKER_HOST=unix:///other.sock swe-forge verify --tasks tasks.jsonl --gold
    """
    from swe_forge.commands.images import run_push

    result = run_push(
        path,
        registry,
        output=output,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return
    _out.print(
        f"pushed {summary['images']} image(s) of {summary['records']} record(s) to "
        f"{summary['registry']} in {summary['seconds']}s; pinned in {output or path}",
        markup=False,
        soft_wrap=True,
    )


@images_app.command("pull", epilog=_ALL_EXIT_CODES)
def images_pull(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Pull by digest the pinned images FILE names that are not on this engine.

    `verify` and `admit` do this themselves; this fetches ahead of time (a grading machine
    before it goes offline). An image already here is checked by its id and not fetched.
    What arrives must be the pinned image id (and, for an instance, that task's image):
    anything else is refused with exit 16; an unreachable registry is exit 15.
    """
    from swe_forge.commands.images import run_pull

    got = run_pull(
        path,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    pulled = sorted(ref for ref, _s in got.pulled)
    unpinned = sorted(set(got.unpinned))
    present = len(set(got.present))
    if as_json:
        summary = {"present": present, "pulled": pulled, "not_pinned": unpinned}
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _out.print(
            f"{len(pulled)} image(s) pulled and verified, {present} already here, "
            f"{len(unpinned)} missing and not pinned",
            markup=False,
        )
    if unpinned:
        raise InputError(
            f"{len(unpinned)} image(s) are not here and {path} pins no registry for them: "
            f"{', '.join(unpinned[:3])}",
            hint="push them from the machine that built them (`images push`), or import them",
        )


@images_app.command("export", epilog=_ALL_EXIT_CODES)
def images_export(
    path: Annotated[Path, typer.Argument(metavar="FILE", help=_RECORDS_FILE_HELP)],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The archive to write (a .tar file).")
    ],
    instance: Annotated[
        list[str] | None, typer.Option("--instance", help="Only these instance ids; repeatable.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Write the base, env and instance images FILE names into one OCI archive.

    The archive is an OCI image layout (index.json, blobs/sha256/...) that `docker load`
    also reads (it carries docker's manifest.json): layers uncompressed, shared layers once,
    the same images always give the same bytes. Image ids are kept, so the tasks' pinned
    ids hold on the machine that imports it.

    \b
    Example:
      swe-forge images export tasks.jsonl -o images.tar
      swe-forge images import images.tar      # on the machine without a registry
    """
    from swe_forge.commands.images import run_export

    images = run_export(
        path,
        output,
        only=instance,
        reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal, unit="images"),
    )
    _print_archived(images, f"exported to {output}", as_json)


@images_app.command("import", epilog=_ALL_EXIT_CODES)
def images_import(
    archive: Annotated[
        Path, typer.Argument(help="An archive from `images export` (or docker save).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Load an image archive into this engine and check every image's id and names.

    The ids are computed from the archive's image configurations and compared with what the
    engine holds after the load (exit 16 on a difference). Set DOCKER_HOST to load into
    another engine.
    """
    from swe_forge.commands.images import run_import

    images = run_import(
        archive, reporter=RichReporter(_err, enabled=not as_json and _err.is_terminal)
    )
    _print_archived(images, f"imported from {archive}", as_json)


def _print_archived(images: list[Any], what: str, as_json: bool) -> None:
    rows = [{"names": list(i.names), "id": i.id, "layers": i.layers} for i in images]
    if as_json:
        print(json.dumps({"images": rows}, indent=2, sort_keys=True))
        return
    for row in rows:
        _out.print(
            f"{row['id']}  {', '.join(row['names']) or '(no name)'}", markup=False, soft_wrap=True
        )
    _out.print(f"{len(rows)} image(s) {what}", markup=False, soft_wrap=True)


@app.command(epilog=_ALL_EXIT_CODES)
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


@app.command(epilog=_ALL_EXIT_CODES)
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
    `eval_type`). For comparison with SWE-bench's numbers: rewards come from `swe-forge
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


@app.command(epilog=_ALL_EXIT_CODES)
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


_VERIFY_EXIT_CODES = (
    "Exit codes: 0 every prediction graded; 21 some ended in an infrastructure error (never "
    "scored as the model's failure: run again, with --out only those are graded again); "
    "15 the registry of a pinned image cannot be reached; 16 a pinned image is refused (the "
    "registry has no such digest, or it is not the image the task pins); 2 usage error; "
    "4 bad input (an empty or wrong file, an unknown --instance, an output path that cannot "
    f"be written). All codes:\n\n{_EXIT_CODES}"
)


@app.command(epilog=_VERIFY_EXIT_CODES)
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
        _out.print(
            f"resolved {data['resolved_instances']} of {data['submitted_instances']} "
            f"({', '.join(f'{k}: {v}' for k, v in data['statuses'].items())}) in "
            f"{data['seconds']}s -> {output}",
            markup=False,
        )
    if data.get("error_instances") or data.get("not_graded"):
        # Infrastructure errors are never the model's: run the same command again.
        raise typer.Exit(EXIT_INFRA_ERRORS)


class RichBatchReporter:
    """A live display of a batch: a bar per stage, counts, and each worker's activity."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.enabled = enabled
        self.console = console
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
    "undone (run the same command again to finish it); 2 usage error. "
    f"All codes:\n\n{_EXIT_CODES}"
)


@app.command(epilog=_BATCH_EXIT_CODES)
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
    print(json.dumps(result.summary(), indent=2, sort_keys=True))
    raise typer.Exit(result.exit_code)


@app.command(epilog=_ALL_EXIT_CODES)
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


@app.command(epilog=_ALL_EXIT_CODES)
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
) -> None:
    """The funnel from mined PRs to admitted tasks, with rejection reasons per stage.

    Example: swe-forge report */candidates.jsonl */mine-rejected.jsonl */tasks.jsonl
    */admit-rejected.jsonl */results.jsonl --by-repo --markdown
    """
    from swe_forge.commands.report import funnel, funnel_by_repo, funnel_markdown

    if markdown and not by_repo:
        raise UsageError("--markdown needs --by-repo", hint="add --by-repo")
    if by_repo:
        per_repo = funnel_by_repo(files)
        if as_json:
            print(json.dumps(per_repo, indent=2, sort_keys=True))
        elif markdown:
            print(funnel_markdown(per_repo), end="")
        else:
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
    table = Table(title="swe-forge funnel")
    table.add_column("stage")
    table.add_column("count", justify="right")
    table.add_column("rejected (reason: count)")
    for row in data["stages"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in row["rejected"].items())
        table.add_row(row["stage"], str(row["count"]), reasons or "-")
    _out.print(table)


def _crash_log(exc: BaseException) -> Path | None:
    from swe_forge.mining.sources import cache_dir

    lines = [
        f"swe-forge {__version__} crash at {datetime.now(tz=UTC).isoformat()}",
        f"argv: {sys.argv}",
        f"python: {sys.version}",
        f"platform: {platform.platform()}",
    ]
    for dist in (
        "typer",
        "rich",
        "pygit2",
        "docker",
        "unidiff",
        "license-expression",
        "pyaskalono",
        "PyYAML",
        "packaging",
        "poetry-core",
        "uv",
    ):
        try:
            lines.append(f"{dist}: {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{dist}: not installed")
    lines.append("")
    lines.extend(traceback.format_exception(exc))
    try:
        folder = cache_dir() / "crash-logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{datetime.now(tz=UTC).strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
        path.write_text("\n".join(lines), encoding="utf-8")
        return path
    except OSError:
        return None


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map outcomes to exit codes."""
    try:
        # Without standalone mode, click returns typer.Exit's code instead of raising it.
        returned = app(args=argv, standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        # click turns Ctrl-C into Abort.
        _err.print("interrupted: finished records are kept in *.partial files")
        sys.exit(EXIT_INTERRUPTED)
    except typer.TyperException as exc:  # usage errors: typer prints them itself
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            _err.print(f"error: {exc}", markup=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _err.print("interrupted: finished records are kept in *.partial files")
        sys.exit(EXIT_INTERRUPTED)
    except SweForgeError as exc:
        if STATE.debug:
            _err.print("".join(traceback.format_exception(exc)), markup=False, highlight=False)
        _err.print(f"error: {exc.message}", markup=False, highlight=False)
        if exc.hint:
            _err.print(f"hint: {exc.hint}", markup=False, highlight=False)
        sys.exit(exc.exit_code)
    except Exception as exc:
        log = _crash_log(exc)
        if STATE.debug:
            _err.print("".join(traceback.format_exception(exc)), markup=False, highlight=False)
        _err.print(f"crash: {type(exc).__name__}: {exc}", markup=False, highlight=False)
        if log:
            _err.print(
                f"a crash log with the traceback is at {log}; please attach it to a bug report"
            )
        sys.exit(EXIT_CRASH)
    sys.exit(returned if isinstance(returned, int) else 0)
