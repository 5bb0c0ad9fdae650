"""The typer application, its sub-applications and what every command module shares: the
consoles, the global options' state, the configuration and the progress bar.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from swe_forge import __version__
from swe_forge.errors import (
    UsageError,
    exit_code_table,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from swe_forge.config import Config

_EXIT_CODES = "\n\n".join(
    f"{code:>3}  {name}: {meaning}" for code, name, meaning in exit_code_table()
)

_ALL_EXIT_CODES = f"Exit codes:\n\n{_EXIT_CODES}"

#: The codes any command can end with: success, a crash, a usage, configuration or input
#: error, Ctrl-C and SIGTERM.
_EVERY_COMMAND = (0, 1, 2, 3, 4, 130, 143)


def exit_codes(*codes: int, lead: str = "") -> str:
    """A command's epilog: the exit codes it can return (``codes`` and those of
    :data:`_EVERY_COMMAND`), after an optional sentence saying which matter most."""
    keep = {*_EVERY_COMMAND, *codes}
    rows = "\n\n".join(
        f"{code:>3}  {name}: {meaning}" for code, name, meaning in exit_code_table() if code in keep
    )
    return f"{lead + ' ' if lead else ''}Exit codes:\n\n{rows}"


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


class _LazyConsole:
    """A rich console made on first use: ``--help`` and ``--version`` never print through one,
    and importing rich's console is a fifth of the start-up."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)


# soft_wrap: error lines must stay whole (people grep logs for them).
_err: Console = cast("Console", _LazyConsole(stderr=True, soft_wrap=True))
_out: Console = cast("Console", _LazyConsole())


class _State:
    debug: bool = False
    config_path: Path | None = None
    quiet: bool = False


STATE = _State()


def _config() -> Config:
    from swe_forge.config import load_config

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
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

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
