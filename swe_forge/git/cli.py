"""The git command line, hardened for hostile repositories.

Every call runs without the user's or the system's git configuration, with hooks and fsmonitor
disabled on the command line (command-line ``-c`` wins over a repository's own config, so a
mined repository cannot make git run a program of its choosing), with no terminal prompts and
with only the transports a clone needs.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
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
        from swe_forge.errors import file_system_fault

        where = git_dir or cwd
        fault = file_system_fault(where, proc.stderr.decode("utf-8", "replace")) if where else None
        if fault is not None:
            raise fault
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        last = err[-1] if err else f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])} failed: {last}")
    return proc


#: Where a clone or fetch is: one line such as "Receiving objects 45% (450/1000), 1.2 MiB".
Progress = Callable[[str], None]

#: git's progress meter (``--progress``): "Receiving objects:  45% (450/1000), 1.20 MiB | ..."
_METER = re.compile(r"^(?:remote: )?([A-Za-z][A-Za-z ]*[a-z]):\s+(\d+)% \((\d+)/(\d+)\)(.*)$")

#: A clone or fetch that writes no progress for this long is stuck (a dead connection):
#: the whole transfer may take hours for a large repository, so no overall limit applies.
STALL_SECONDS = 600.0


class _Meter:
    """Turns git's progress output into at most one line per ``interval`` seconds (plus the
    end of each phase), so a clone of minutes shows where it is without flooding the log."""

    def __init__(self, progress: Progress, interval: float) -> None:
        self.progress = progress
        self.interval = interval
        self.phase = ""
        self.last = 0.0

    def feed(self, line: str) -> None:
        m = _METER.match(line.strip())
        if not m:
            return
        phase, pct, done, total = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        rest = m.group(5).split(", done")[0].strip(" ,")
        now = time.monotonic()
        finished = pct == 100 and done == total
        if phase == self.phase and not finished and now - self.last < self.interval:
            return
        if phase == self.phase and finished and self.last < 0:
            return  # this phase's end was said already (git repeats it with ", done.")
        self.phase = phase
        self.last = -1.0 if finished else now
        self.progress(f"{phase} {pct}% ({done}/{total}){', ' + rest if rest else ''}")


def _run_with_progress(
    args: Sequence[str],
    progress: Progress,
    *,
    git_dir: Path | None = None,
    interval: float = 5.0,
    stall: float | None = None,
) -> tuple[int, str]:
    """Run a transfer (``clone``/``fetch`` with ``--progress``), passing its meter on.

    Returns the exit code and the last lines git wrote that are not meter lines (its error).
    The process is killed when it writes nothing for ``stall`` seconds, and on any exception
    here (Ctrl-C, SIGTERM): an abandoned transfer must not go on writing into the cache.
    """
    cmd = ["git", *HARDENING, *([f"--git-dir={git_dir}"] if git_dir else []), *args]
    try:
        proc = subprocess.Popen(
            cmd,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed", hint="install git (apt-get install git)") from exc
    stall = STALL_SECONDS if stall is None else stall
    meter = _Meter(progress, interval)
    said: list[str] = []
    seen = [time.monotonic()]

    def read() -> None:
        assert proc.stderr is not None
        pending = b""
        # git rewrites its meter in place with \r: split on both ends of line.
        while chunk := os.read(proc.stderr.fileno(), 4096):
            seen[0] = time.monotonic()
            pending += chunk
            *lines, pending = re.split(rb"[\r\n]", pending)
            for raw in lines:
                line = raw.decode("utf-8", "replace").strip()
                if not line:
                    continue
                if _METER.match(line):
                    meter.feed(line)
                else:
                    said.append(line)
                    del said[:-20]
        if pending.strip():
            said.append(pending.decode("utf-8", "replace").strip())

    reader = threading.Thread(target=read, name="git-progress", daemon=True)
    reader.start()
    try:
        while True:
            try:
                code = proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() - seen[0] > stall:
                    proc.kill()
                    proc.wait()
                    raise RemoteError(
                        f"git {args[0]} wrote nothing for {stall:.0f}s (a stalled transfer)",
                        hint="check the network and run again; what was fetched is discarded",
                    ) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    return code, "\n".join(said)


def _transfer(
    args: Sequence[str], progress: Progress | None, *, git_dir: Path | None = None
) -> tuple[int, str]:
    """A clone or fetch, always metered: the meter is also how a stalled transfer is seen
    (an overall time limit would kill a large repository's honest clone)."""
    return _run_with_progress(
        [args[0], "--progress", *args[1:]], progress or (lambda _line: None), git_dir=git_dir
    )


def _error_line(said: str, default: str) -> str:
    """git's own error among what it wrote ("fatal: ..." comes before its advice lines)."""
    lines = said.splitlines()
    for line in lines:
        if line.startswith(("fatal:", "error:", "remote: error", "ERROR")):
            return line
    return lines[-1] if lines else default


def clone_or_update(
    url: str, dest: Path, *, offline: bool = False, progress: Progress | None = None
) -> Path:
    """Make ``dest`` a bare mirror of ``url``, holding a lock so concurrent runs take turns.

    ``progress`` gets where a clone or fetch is (phase, percentage, objects, size and rate,
    from git's own meter) every few seconds and at the end of each phase.
    """
    from swe_forge.locks import file_lock

    dest.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(dest.with_name(dest.name + ".lock")):
        return _clone_or_update(url, dest, offline=offline, progress=progress)


def _clone_or_update(
    url: str, dest: Path, *, offline: bool = False, progress: Progress | None = None
) -> Path:
    """Make ``dest`` a bare mirror of ``url`` (clone it, or fetch into an existing one).

    A bare mirror has every branch, so the default branch and its full history are there;
    no work tree is checked out, so nothing from the repository is written as files.

    Raises:
        RemoteError: the clone or fetch failed (unreachable host, no such repository).
    """
    if (dest / "HEAD").exists():
        if offline:
            return dest
        code, msg = _transfer(["fetch", "--prune", "origin"], progress, git_dir=dest)
        if code != 0:
            raise RemoteError(
                f"cannot update {url}: {_error_line(msg, 'fetch failed')}",
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
    code, msg = _transfer(["clone", "--mirror", "--", url, str(tmp)], progress)
    if code != 0:
        raise RemoteError(
            f"cannot clone {url}: {_error_line(msg, 'clone failed')}",
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
