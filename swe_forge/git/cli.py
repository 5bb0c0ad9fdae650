"""The git command line, hardened for hostile repositories.

Every call runs without the user's or the system's git configuration, with hooks and fsmonitor
disabled on the command line (command-line ``-c`` wins over a repository's own config, so a
mined repository cannot make git run a program of its choosing), with no terminal prompts and
with only the transports a clone needs.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from swe_forge.errors import GitError, RemoteError

#: Settings forced on every git invocation (they override the repository's own config).
HARDENING: tuple[str, ...] = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "protocol.allow=user",
    "-c",
    "core.symlinks=true",
    "-c",
    "core.autocrlf=false",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "safe.directory=*",
)


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment for git: no user/system config, no prompts, C locale."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/nonexistent"),
        "LANG": "C",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_PROTOCOL_FROM_USER": "1",
    }
    # SSH agents and proxies are the user's business for clone URLs they chose.
    for key in ("SSH_AUTH_SOCK", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy"):
        if key in os.environ:
            env[key] = os.environ[key]
    if extra:
        env.update(extra)
    return env


def run_git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    git_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    input_bytes: bytes | None = None,
    check: bool = True,
    timeout: float | None = 600,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git`` with the hardening settings and return the completed process.

    Raises:
        GitError: git is missing, timed out, or (with ``check``) exited non-zero.
    """
    cmd = ["git", *HARDENING]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    cmd.extend(args)
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=git_env(env),
            input=input_bytes,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed", hint="install git (apt-get install git)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {' '.join(args[:2])} timed out after {timeout}s") from exc
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        last = err[-1] if err else f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])} failed: {last}")
    return proc


def clone_or_update(url: str, dest: Path, *, offline: bool = False) -> Path:
    """Make ``dest`` a bare mirror of ``url``, holding a lock so concurrent runs take turns."""
    from swe_forge.locks import file_lock

    dest.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(dest.with_name(dest.name + ".lock")):
        return _clone_or_update(url, dest, offline=offline)


def _clone_or_update(url: str, dest: Path, *, offline: bool = False) -> Path:
    """Make ``dest`` a bare mirror of ``url`` (clone it, or fetch into an existing one).

    A bare mirror has every branch, so the default branch and its full history are there;
    no work tree is checked out, so nothing from the repository is written as files.

    Raises:
        RemoteError: the clone or fetch failed (unreachable host, no such repository).
    """
    if (dest / "HEAD").exists():
        if offline:
            return dest
        proc = run_git(["fetch", "--prune", "--quiet", "origin"], git_dir=dest, check=False)
        if proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip()
            raise RemoteError(
                f"cannot update {url}: {msg.splitlines()[-1] if msg else 'fetch failed'}",
                hint="check the network, or pass --offline to use the cached copy",
            )
        return dest
    if offline:
        raise RemoteError(f"{url} is not in the cache and --offline forbids cloning it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        import shutil

        shutil.rmtree(tmp)
    proc = run_git(["clone", "--mirror", "--quiet", "--", url, str(tmp)], check=False)
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip()
        raise RemoteError(
            f"cannot clone {url}: {msg.splitlines()[-1] if msg else 'clone failed'}",
            hint="check the URL and that the repository is public (or credentials are set)",
        )
    # Rename last, so an interrupted clone never looks like a finished one.
    tmp.rename(dest)
    return dest


def checkout_clean(repo: Path, work: Path, commit: str) -> Path:
    """``work``: a clone of ``repo`` (made when missing) at ``commit``, with nothing else in
    its tree (what an earlier use left is removed). Tests and scripts write patches here."""
    if not work.exists():
        run_git(["clone", "-q", str(repo), str(work)])
    run_git(["checkout", "-q", "-f", commit], cwd=work)
    run_git(["clean", "-qfdx"], cwd=work)
    return work


def staged_diff(work: Path, against: str | None = None, *, reset: bool = True) -> str:
    """Everything changed in ``work``'s tree (new files too) as a git diff against its
    ``HEAD`` (or ``against``), then, with ``reset``, the tree put back as it was."""
    run_git(["add", "-A"], cwd=work)
    diff = run_git(["diff", "--cached", *([against] if against else [])], cwd=work).stdout
    if reset:
        run_git(["reset", "-q", "--hard"], cwd=work)
    return diff.decode("utf-8")
