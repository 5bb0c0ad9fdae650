"""Deterministic repository writer driving the git CLI.

:class:`RepoWriter` builds git repositories commit by commit: it writes and deletes files,
commits with fixed identities and dates, and merges branches the way GitHub does (a real
``--no-ff`` merge commit, or a squash merge). It is what the embedded example project and the
test fixtures use to build repositories.

Why the CLI and not pygit2: merges and squashes should be *exactly* what ``git merge`` makes,
since that is what real histories contain and what the miner must understand.

Determinism: the same sequence of calls gives the same commit SHAs on every machine. Every git
call runs with

* no system or global configuration (``GIT_CONFIG_NOSYSTEM=1``, ``GIT_CONFIG_GLOBAL=/dev/null``),
  and no inherited ``GIT_*`` variables (a caller running inside a git hook sets ``GIT_DIR``);
* fixed author and committer names, e-mails and dates (ISO 8601, UTC, ``+0000``);
* ``GIT_CEILING_DIRECTORIES`` set to the work tree's parent, so a writer whose directory is
  not (yet) a repository can never touch an enclosing one;
* ``-c`` overrides for the settings that change what gets stored (signing, line endings,
  hooks, the default branch name);
* ``LC_ALL=C`` so that error messages do not depend on the locale.

Commit messages are stored verbatim (``--cleanup=verbatim``) after one normalisation: trailing
whitespace is stripped and a single final newline added, as ``git commit -m`` would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import NoReturn

__all__ = [
    "DEFAULT_IDENTITY",
    "GITHUB_IDENTITY",
    "GIT_CONFIG_OVERRIDES",
    "Identity",
    "RepoWriter",
    "format_git_date",
    "github_merge_message",
    "github_squash_message",
]


@dataclass(frozen=True)
class Identity:
    """A git author or committer: a name and an e-mail address."""

    name: str
    email: str


#: Author and committer used when a call names no other identity.
DEFAULT_IDENTITY = Identity("swe-forge", "swe-forge@example.invalid")

#: The committer GitHub records on merge and squash commits made through its web interface.
GITHUB_IDENTITY = Identity("GitHub", "noreply@github.com")

#: ``-c`` settings passed to every git call, so that no user configuration changes the result.
GIT_CONFIG_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("commit.gpgsign", "false"),
    ("tag.gpgsign", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.hooksPath", "/dev/null"),
    ("init.defaultBranch", "main"),
    ("gc.auto", "0"),
    ("merge.ff", "true"),
    ("advice.detachedHead", "false"),
)

# Used when a call does not give a date; keeps even careless callers deterministic.
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def format_git_date(when: datetime) -> str:
    """Format ``when`` as the ISO 8601 string git accepts, in UTC: ``2024-01-08T09:00:00+0000``.

    A naive datetime is taken to be UTC already.
    """
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def github_merge_message(number: int, owner: str, branch: str, title: str, body: str = "") -> str:
    """Return the message of a GitHub merge commit.

    ``Merge pull request #N from OWNER/BRANCH``, a blank line, the PR title, and (when the body
    is not empty) a blank line and the body.
    """
    message = f"Merge pull request #{number} from {owner}/{branch}\n\n{title}"
    if body.strip():
        message += f"\n\n{body.strip()}"
    return message


def github_squash_message(number: int, title: str, body: str = "") -> str:
    """Return the message of a GitHub squash merge: ``TITLE (#N)`` then the body, if any."""
    message = f"{title} (#{number})"
    if body.strip():
        message += f"\n\n{body.strip()}"
    return message


def _normalise_message(message: str) -> str:
    lines = [line.rstrip() for line in message.strip().splitlines()]
    if not lines or not lines[0]:
        raise ValueError("a commit message needs a non-empty first line")
    return "\n".join(lines) + "\n"


def _raise_git_error(message: str, hint: str = "") -> NoReturn:
    # Imported lazily: errors.py is the package root of all error types and must not depend on
    # the git layer; importing here also keeps this module importable on its own.
    from swe_forge.errors import GitError

    raise GitError(message, hint)


class RepoWriter:
    """Build a git repository deterministically through the git CLI.

    Create one with :meth:`init` (a new repository) or the constructor (an existing one). All
    paths given to the file methods are POSIX paths relative to the work tree; absolute paths
    and paths escaping the work tree are refused.

    Example::

        repo = RepoWriter.init(tmp_path / "repo")
        repo.write_text("pkg/mod.py", "X = 1\\n")
        repo.commit("Initial commit", when=datetime(2024, 1, 8, 9, tzinfo=UTC))
        repo.create_branch("fix-x", checkout=True)
        repo.write_text("pkg/mod.py", "X = 2\\n")
        repo.commit("Fix X", when=...)
        repo.checkout("main")
        repo.merge_pr(1, "fix-x", "Fix X", "X was 1.", when=..., owner="octo")
    """

    def __init__(
        self,
        path: Path,
        *,
        author: Identity = DEFAULT_IDENTITY,
        committer: Identity | None = None,
        git: str = "git",
    ) -> None:
        """Wrap the existing work tree at ``path``.

        ``author`` and ``committer`` (default: the author) are used by commits that name no
        identity of their own; ``git`` is the executable to run.
        """
        self._path = Path(path)
        self.author = author
        self.committer = committer if committer is not None else author
        self._git = git

    # ------------------------------------------------------------------ creation

    @classmethod
    def init(
        cls,
        path: Path,
        default_branch: str = "main",
        *,
        author: Identity = DEFAULT_IDENTITY,
        committer: Identity | None = None,
        git: str = "git",
    ) -> RepoWriter:
        """Create an empty repository at ``path`` (created if missing) on ``default_branch``.

        Returns the writer for it. Refuses a ``path`` that is already a git work tree root.
        """
        path = Path(path)
        if (path / ".git").exists():
            _raise_git_error(
                f"{path} is already a git repository",
                "choose an empty directory or remove the existing one first",
            )
        path.mkdir(parents=True, exist_ok=True)
        writer = cls(path, author=author, committer=committer, git=git)
        # An empty --template keeps the system's sample hooks and excludes out of the repo.
        writer.run("init", "--quiet", "--template=", f"--initial-branch={default_branch}", ".")
        return writer

    @property
    def path(self) -> Path:
        """The root of the work tree."""
        return self._path

    # ------------------------------------------------------------------ running git

    def environment(
        self,
        when: datetime | None = None,
        *,
        author: Identity | None = None,
        committer: Identity | None = None,
    ) -> dict[str, str]:
        """Return the environment a git call runs with (see the module docstring)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        author = author or self.author
        committer = committer or self.committer
        date = format_git_date(when if when is not None else _EPOCH)
        env.update(
            {
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_AUTHOR_NAME": author.name,
                "GIT_AUTHOR_EMAIL": author.email,
                "GIT_AUTHOR_DATE": date,
                "GIT_COMMITTER_NAME": committer.name,
                "GIT_COMMITTER_EMAIL": committer.email,
                "GIT_COMMITTER_DATE": date,
                # Never operate on an enclosing repository when the work tree has no .git.
                "GIT_CEILING_DIRECTORIES": str(self._path.absolute().parent),
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_EDITOR": "true",
                "GIT_PAGER": "cat",
                "LC_ALL": "C",
                "LANGUAGE": "C",
            }
        )
        return env

    def run(
        self,
        *args: str,
        when: datetime | None = None,
        author: Identity | None = None,
        committer: Identity | None = None,
        input: str | None = None,
        check: bool = True,
        extra_env: Mapping[str, str] | None = None,
    ) -> str:
        """Run ``git ARGS`` in the work tree and return its standard output.

        ``when``, ``author`` and ``committer`` set the identity and date of any commit the call
        makes. Raises :class:`~swe_forge.errors.GitError` when git exits non-zero (unless
        ``check`` is false) or cannot be started.
        """
        config: list[str] = []
        for key, value in GIT_CONFIG_OVERRIDES:
            config += ["-c", f"{key}={value}"]
        argv = [self._git, *config, *args]
        env = self.environment(when, author=author, committer=committer)
        if extra_env:
            env.update(extra_env)
        try:
            proc = subprocess.run(
                argv,
                cwd=self._path,
                env=env,
                input=input,
                capture_output=True,
                # Decode independently of the caller's locale; never fail on odd bytes.
                encoding="utf-8",
                errors="surrogateescape",
                check=False,
            )
        except (FileNotFoundError, NotADirectoryError):
            if not self._path.is_dir():
                _raise_git_error(
                    f"work tree {self._path} does not exist",
                    "create the repository with RepoWriter.init() first",
                )
            _raise_git_error(
                f"cannot run {self._git!r}: executable not found",
                "install git (e.g. `apt-get install git`) and make sure it is on PATH",
            )
        if check and proc.returncode != 0:
            from swe_forge.errors import file_system_fault

            # A full or read-only disk is the output's fault, not git's: its own exit code.
            fault = file_system_fault(self._path, proc.stderr)
            if fault is not None:
                raise fault
            detail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
            _raise_git_error(
                f"`git {' '.join(args)}` failed in {self._path} (exit {proc.returncode}): "
                + " / ".join(detail[-5:]),
            )
        return proc.stdout

    # ------------------------------------------------------------------ files

    def _resolve(self, rel: str) -> Path:
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts or pure.parts[0] == ".git":
            raise ValueError(f"not a path inside the work tree: {rel!r}")
        return self._path.joinpath(*pure.parts)

    def write_text(self, rel: str, content: str) -> None:
        """Write ``content`` (UTF-8, ``\\n`` line endings kept as given) to ``rel``.

        Parent directories are created. The change is staged by the next :meth:`commit`.
        """
        self.write_bytes(rel, content.encode("utf-8"))

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write ``data`` verbatim to ``rel``, creating parent directories."""
        target = self._resolve(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def read_text(self, rel: str) -> str:
        """Return the work-tree content of ``rel`` decoded as UTF-8."""
        return self._resolve(rel).read_bytes().decode("utf-8")

    def delete(self, rel: str) -> None:
        """Delete the file or directory ``rel`` from the work tree (staged by :meth:`commit`)."""
        target = self._resolve(rel)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            raise FileNotFoundError(f"{rel} does not exist in {self._path}")

    def move(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst`` with ``git mv`` (so a rename is recorded in the index)."""
        self._resolve(src)
        self._resolve(dst).parent.mkdir(parents=True, exist_ok=True)
        self.run("mv", "--", src, dst)

    def set_executable(self, rel: str, executable: bool = True) -> None:
        """Set or clear the executable bit of ``rel`` in the index (mode 100755 / 100644)."""
        self.run("add", "--", rel)
        self.run("update-index", f"--chmod={'+x' if executable else '-x'}", "--", rel)

    # ------------------------------------------------------------------ commits

    def commit(
        self,
        message: str,
        when: datetime,
        *,
        author: Identity | None = None,
        committer: Identity | None = None,
        stage_all: bool = True,
        allow_empty: bool = False,
    ) -> str:
        """Commit the work tree (all changes, when ``stage_all``) and return the new SHA.

        Author and committer date are both ``when``. Raises GitError when there is nothing to
        commit and ``allow_empty`` is false.
        """
        if stage_all:
            self.run("add", "--all", "--", ".")
        args = ["commit", "--quiet", "--no-verify", "--cleanup=verbatim", "--file=-"]
        if allow_empty:
            args.append("--allow-empty")
        self.run(
            *args,
            when=when,
            author=author,
            committer=committer,
            input=_normalise_message(message),
        )
        return self.head()

    def head(self) -> str:
        """Return the full SHA of ``HEAD``."""
        return self.rev_parse("HEAD")

    def rev_parse(self, rev: str) -> str:
        """Return the full SHA that ``rev`` names (a commit-ish)."""
        return self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()

    def parents(self, rev: str = "HEAD") -> list[str]:
        """Return the parent SHAs of ``rev``, first parent first."""
        line = self.run("rev-list", "--parents", "-n", "1", rev, "--").split()
        return line[1:]

    def current_branch(self) -> str:
        """Return the checked-out branch name (GitError on a detached HEAD)."""
        return self.run("symbolic-ref", "--short", "HEAD").strip()

    # ------------------------------------------------------------------ branches

    def create_branch(self, name: str, start: str = "HEAD", *, checkout: bool = False) -> None:
        """Create branch ``name`` at ``start``; switch to it when ``checkout``."""
        if checkout:
            self.run("checkout", "--quiet", "-b", name, start)
        else:
            self.run("branch", "--", name, start)

    def checkout(self, ref: str) -> None:
        """Check out ``ref`` (a branch name, or any commit-ish for a detached HEAD)."""
        self.run("checkout", "--quiet", ref, "--")

    def delete_branch(self, name: str) -> None:
        """Delete branch ``name`` even if unmerged (GitHub's "delete branch" after a squash)."""
        self.run("branch", "--quiet", "-D", "--", name)

    def branches(self) -> list[str]:
        """Return the local branch names, sorted."""
        out = self.run("for-each-ref", "--format=%(refname:short)", "refs/heads/")
        return sorted(out.split())

    def tag(self, name: str, rev: str = "HEAD") -> None:
        """Create a lightweight tag ``name`` at ``rev``."""
        self.run("tag", "--", name, rev)

    # ------------------------------------------------------------------ pull requests

    def _prepare_merge(self, into: str, branch: str, squash: bool) -> None:
        self.checkout(into)
        mode = "--squash" if squash else "--no-ff"
        try:
            self.run("merge", "--quiet", "--no-commit", mode, "--", branch)
        except Exception:
            self.run("merge", "--abort", check=False)
            self.run("reset", "--quiet", "--hard", "HEAD", check=False)
            raise

    def merge_pr(
        self,
        number: int,
        branch: str,
        title: str,
        body: str = "",
        *,
        when: datetime,
        owner: str,
        into: str = "main",
        author: Identity | None = None,
        committer: Identity | None = GITHUB_IDENTITY,
        delete_branch: bool = False,
    ) -> str:
        """Merge ``branch`` into ``into`` as GitHub's "Create a merge commit" does.

        Makes a real two-parent commit with ``git merge --no-ff`` (first parent: ``into``,
        second: ``branch``) whose message is::

            Merge pull request #N from OWNER/BRANCH

            TITLE

            BODY

        ``author`` defaults to the writer's author (the maintainer who merged); ``committer``
        defaults to GitHub. Leaves ``into`` checked out and returns the merge commit's SHA.
        A conflicting merge is aborted and raises GitError.
        """
        self._prepare_merge(into, branch, squash=False)
        sha = self.commit(
            github_merge_message(number, owner, branch, title, body),
            when,
            author=author,
            committer=committer,
            stage_all=False,
        )
        if len(self.parents(sha)) != 2:  # pragma: no cover - guarded by --no-ff
            _raise_git_error(f"merge of {branch} did not produce a merge commit")
        if delete_branch:
            self.delete_branch(branch)
        return sha

    def squash_pr(
        self,
        number: int,
        branch: str,
        title: str,
        body: str = "",
        *,
        when: datetime,
        into: str = "main",
        author: Identity | None = None,
        committer: Identity | None = GITHUB_IDENTITY,
        delete_branch: bool = False,
    ) -> str:
        """Squash-merge ``branch`` into ``into`` as GitHub's "Squash and merge" does.

        Runs ``git merge --squash`` and commits a single-parent commit whose message is
        ``TITLE (#N)``, a blank line and ``BODY``. ``author`` should be the PR's author
        (GitHub credits them); ``committer`` defaults to GitHub. Returns the new SHA; the
        branch's own commits stay unreachable from ``into`` (delete the branch to drop them).
        """
        self._prepare_merge(into, branch, squash=True)
        sha = self.commit(
            github_squash_message(number, title, body),
            when,
            author=author,
            committer=committer,
            stage_all=False,
        )
        if delete_branch:
            self.delete_branch(branch)
        return sha

    # ------------------------------------------------------------------ remotes

    def add_remote(self, name: str, url: str) -> None:
        """Record remote ``name`` pointing at ``url`` (configuration only; nothing is fetched)."""
        self.run("remote", "add", "--", name, url)

    def log_shas(self, rev: str = "HEAD", *, first_parent: bool = False) -> list[str]:
        """Return the SHAs reachable from ``rev``, newest first (optionally first-parent only)."""
        args: Sequence[str] = ["rev-list", "--topo-order"]
        if first_parent:
            args = [*args, "--first-parent"]
        return self.run(*args, rev, "--").split()
