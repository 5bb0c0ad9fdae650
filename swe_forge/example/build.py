"""Build the example repository ``swe-forge/textkit`` from its recorded history.

The build is deterministic: fixed identities, a clock that starts at 2024-01-08T09:00:00Z and
advances :data:`COMMIT_INTERVAL` per commit, and git configuration isolated by
:class:`~swe_forge.git.writer.RepoWriter`, so every run yields the same commit SHAs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from swe_forge.example.history import HISTORY
from swe_forge.example.skeleton import initial_files
from swe_forge.example.steps import (
    MAINTAINER,
    NAME,
    OWNER,
    Append,
    DirectCommit,
    Edit,
    PullRequest,
    Replace,
    Write,
)
from swe_forge.git.writer import GITHUB_IDENTITY, RepoWriter

#: ``owner/name`` of the example repository (from its ``origin`` remote).
EXAMPLE_REPO = f"{OWNER}/{NAME}"
#: URL of the ``origin`` remote (recorded only; nothing is fetched from it).
EXAMPLE_REMOTE_URL = f"https://github.com/{OWNER}/{NAME}.git"
DEFAULT_BRANCH = "main"
#: Date of the initial commit.
START = datetime(2024, 1, 8, 9, 0, 0, tzinfo=UTC)
#: How far the clock moves for every commit (branch commits, merges and squashes alike).
COMMIT_INTERVAL = timedelta(hours=6)

INITIAL_MESSAGE = "Initial commit: textkit 0.1.0\n"


@dataclass(frozen=True)
class ExampleInfo:
    """What :func:`create_example` built."""

    path: Path
    repo: str
    head_sha: str
    default_branch: str
    num_prs: int


class _Clock:
    def __init__(self, start: datetime, step: timedelta) -> None:
        self._next = start
        self._step = step

    def tick(self) -> datetime:
        now = self._next
        self._next += self._step
        return now


def _apply(writer: RepoWriter, edit: Edit) -> None:
    if isinstance(edit, Write):
        if isinstance(edit.content, bytes):
            writer.write_bytes(edit.path, edit.content)
        else:
            writer.write_text(edit.path, edit.content)
    elif isinstance(edit, Replace):
        current = writer.read_text(edit.path)
        found = current.count(edit.old)
        if found != 1:
            # A drift between skeleton.py and history.py: a bug in this package.
            raise RuntimeError(
                f"example history: expected one occurrence in {edit.path}, found {found}: "
                f"{edit.old!r}"
            )
        writer.write_text(edit.path, current.replace(edit.old, edit.new))
    elif isinstance(edit, Append):
        writer.write_text(edit.path, writer.read_text(edit.path) + edit.text)
    else:
        writer.delete(edit.path)


def _prepare_destination(dest: Path, force: bool) -> None:
    from swe_forge.errors import InputError

    if dest.exists() or dest.is_symlink():
        if not dest.is_dir() or dest.is_symlink():
            raise InputError(
                f"{dest} exists and is not a directory",
                "choose a path that does not exist yet, or an empty directory",
            )
        if any(dest.iterdir()):
            if not force:
                raise InputError(
                    f"{dest} is not empty",
                    "choose a new or empty directory, or pass --force to replace its contents",
                )
            resolved = dest.resolve()
            if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
                raise InputError(
                    f"refusing to wipe {resolved}",
                    "give a dedicated directory for the example repository",
                )
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    dest.mkdir(parents=True, exist_ok=True)


def build_history(writer: RepoWriter) -> dict[int, str]:
    """Write the initial commit and every step of the history into the empty ``writer`` repo.

    Returns the SHA of main after each PR, keyed by PR number (0: the initial commit).
    """
    clock = _Clock(START, COMMIT_INTERVAL)
    maintainer = MAINTAINER.identity
    for path, content in initial_files().items():
        writer.write_text(path, content)
    main_after: dict[int, str] = {
        0: writer.commit(INITIAL_MESSAGE, clock.tick(), author=maintainer, committer=maintainer)
    }
    for step in HISTORY:
        if isinstance(step, DirectCommit):
            for edit in step.edits:
                _apply(writer, edit)
            who = step.author.identity
            writer.commit(step.message, clock.tick(), author=who, committer=who)
            continue
        main_after[step.number] = _merge_pull_request(writer, step, main_after, clock)
    return main_after


def _merge_pull_request(
    writer: RepoWriter, pr: PullRequest, main_after: dict[int, str], clock: _Clock
) -> str:
    start = DEFAULT_BRANCH if pr.based_on is None else main_after[pr.based_on]
    writer.create_branch(pr.branch, start, checkout=True)
    author = pr.author.identity
    for commit in pr.commits:
        for edit in commit.edits:
            _apply(writer, edit)
        writer.commit(commit.message, clock.tick(), author=author, committer=author)
    if pr.strategy == "merge":
        # The maintainer presses the button; GitHub commits.
        sha = writer.merge_pr(
            pr.number,
            pr.branch,
            pr.title,
            pr.body,
            when=clock.tick(),
            owner=pr.author.login,
            into=DEFAULT_BRANCH,
            author=MAINTAINER.identity,
            committer=GITHUB_IDENTITY,
            delete_branch=True,
        )
    else:
        # GitHub credits a squash to the PR's author.
        sha = writer.squash_pr(
            pr.number,
            pr.branch,
            pr.title,
            pr.body,
            when=clock.tick(),
            into=DEFAULT_BRANCH,
            author=author,
            committer=GITHUB_IDENTITY,
            delete_branch=True,
        )
    return sha


def create_example(dest: Path, *, force: bool = False) -> ExampleInfo:
    """Create the example repository ``swe-forge/textkit`` at ``dest``.

    ``dest`` must not exist or be an empty directory; with ``force`` an existing directory's
    contents are deleted first. The result is the same, commit for commit, on every run.

    Raises:
        InputError: ``dest`` is a file, or a non-empty directory without ``force``.
        GitError: git is missing or failed.
    """
    dest = Path(dest)
    _prepare_destination(dest, force)
    writer = RepoWriter.init(dest, DEFAULT_BRANCH, author=MAINTAINER.identity)
    main_after = build_history(writer)
    writer.add_remote("origin", EXAMPLE_REMOTE_URL)
    return ExampleInfo(
        path=dest,
        repo=EXAMPLE_REPO,
        head_sha=writer.head(),
        default_branch=DEFAULT_BRANCH,
        num_prs=len(main_after) - 1,
    )
