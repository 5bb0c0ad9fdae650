"""Errors with fixed exit codes and a hint.

Every expected failure in swe-forge is a subclass of :class:`SweForgeError`. Each subclass
has a fixed, documented exit code so that batch jobs can tell failures apart without parsing
text, and carries a *hint*: one line telling the user what to do about it. The CLI prints
``error: <message>`` and ``hint: <hint>`` and exits with the code; ``--debug`` adds the
traceback. Anything that is not a :class:`SweForgeError` is a crash (exit 1) and gets a crash
log with versions and traceback.

Exit codes (also listed by ``swe-forge --help``):

====  =====================  ==========================================================
code  class                  meaning
====  =====================  ==========================================================
0     -                      success
1     -                      unexpected crash (a bug; see the crash log)
2     UsageError             bad command line (typer/click also uses 2)
3     ConfigError            invalid configuration file or value
4     InputError             a path or source that does not exist or cannot be read
5     RepositoryError        not a git repository, empty history, no default branch
6     LicenseError           a licence file that cannot be read (binary, not UTF-8)
7     DiffError              a commit whose diff cannot be parsed or represented
8     EncodingError          content that is not valid UTF-8 where text is required
9     GitError               a git command failed
10    RemoteError            a remote (clone URL, GitHub API) could not be reached
11    PartialFailure         some sources failed; the others were processed
12    DockerError            no Docker engine, or the engine refused a request
13    BuildError             an image could not be built (base, env or instance)
14    AuditFailure           an image failed its audit (history or test leak)
15    RegistryError          a registry could not be reached, or refused a push or a pull
16    DigestError            an image does not match the digest or id a manifest pins
17    OutputError            an output cannot be written (read-only, full disk, permission)
18    OutputBusy             another swe-forge run is writing the same output
130   -                      interrupted (Ctrl-C)
143   -                      terminated (SIGTERM: ``timeout``, Slurm, Kubernetes)
====  =====================  ==========================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CRASH = 1
#: A batch (`run`) finished, and some candidates were rejected.
EXIT_DONE_WITH_REJECTIONS = 20
#: Infrastructure errors left work undone (verify: predictions ungraded); run it again.
EXIT_INFRA_ERRORS = 21
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised in the main thread so that every clean-up Ctrl-C runs (judge
    containers removed, finished records kept in ``*.partial``) runs for it too."""


class SweForgeError(Exception):
    """Root of every expected swe-forge error.

    Attributes:
        exit_code: the fixed process exit code for this kind of error.
        hint: one line of advice for the user (may be empty).
    """

    exit_code: int = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(SweForgeError):
    """The command line is wrong (a missing or contradictory option)."""

    exit_code = 2


class ConfigError(SweForgeError):
    """A configuration file or value is invalid (unknown key, wrong type)."""

    exit_code = 3


class InputError(SweForgeError):
    """A path or source given by the user does not exist or cannot be read."""

    exit_code = 4


class RepositoryError(SweForgeError):
    """A repository cannot be mined: not a git repository, empty, no default branch."""

    exit_code = 5


class LicenseError(SweForgeError):
    """A licence file cannot be read as text (binary or not UTF-8)."""

    exit_code = 6


class DiffError(SweForgeError):
    """A commit's diff cannot be parsed or represented as a unified diff."""

    exit_code = 7


class EncodingError(SweForgeError):
    """Content that must be text is not valid UTF-8."""

    exit_code = 8


class GitError(SweForgeError):
    """A git command or libgit2 call failed."""

    exit_code = 9


class RemoteError(SweForgeError):
    """A remote could not be reached (clone URL, GitHub API)."""

    exit_code = 10


class PartialFailure(SweForgeError):
    """Some sources failed while the others were processed; details were reported."""

    exit_code = 11


class DockerError(SweForgeError):
    """No usable Docker engine, or the engine refused a request."""

    exit_code = 12


class BuildError(SweForgeError):
    """An image (base, env or instance) could not be built."""

    exit_code = 13


class Unsupported(BuildError):
    """A project no adapter can judge for what it is (a build tool with no distribution here):
    its image build stops at once and its candidates are refused with ``reason``, a fixed code
    (``gradle_unavailable``), instead of ``build_failed``."""

    def __init__(self, message: str, reason: str, hint: str = "") -> None:
        super().__init__(message, hint)
        self.reason = reason


class AuditFailure(SweForgeError):
    """An image failed its audit: leaked history, leaked tests, or a foreign distribution."""

    exit_code = 14


class RegistryError(SweForgeError):
    """A registry could not be reached, or refused a push or a pull."""

    exit_code = 15


class DigestError(SweForgeError):
    """An image does not match the digest or id a manifest pins (tampered, or not there)."""

    exit_code = 16


class OutputError(SweForgeError):
    """An output cannot be written (read-only file system, full disk, no permission)."""

    exit_code = 17


class OutputBusy(SweForgeError):
    """Another swe-forge run is writing the same output file or folder."""

    exit_code = 18


#: What to do about an OSError of writing, by errno name.
_OUTPUT_HINTS = {
    "ENOSPC": "the disk is full: free space (docker system prune, old .partial files) or "
    "write elsewhere; finished records are kept in the .partial file",
    "EDQUOT": "the disk quota is spent: free space or write elsewhere",
    "EFBIG": "the file is larger than this file system or ulimit -f allows: write elsewhere",
    "EROFS": "the file system is read-only: give an output path on a writable one",
    "EACCES": "no permission to write there: give an output path you can write to",
    "EPERM": "no permission to write there: give an output path you can write to",
    "EISDIR": "the output names a folder: give a file path",
    "ENOTDIR": "a parent of the output path is a file, not a folder",
}


def output_error(exc: OSError, path: object | None = None) -> OutputError:
    """The :class:`OutputError` for ``exc``, raised while writing ``path``."""
    import errno as _errno

    name = _errno.errorcode.get(exc.errno or 0, "")
    where = path if path is not None else exc.filename
    return OutputError(
        f"cannot write {where}: {exc.strerror or exc}"
        if where is not None
        else f"cannot write: {exc.strerror or exc}",
        hint=_OUTPUT_HINTS.get(name, "check the output path, free space and permissions"),
    )


def file_system_fault(path: object, said: str = "") -> OutputError | None:
    """The :class:`OutputError` for a tool (git) that failed writing under ``path`` because
    the disk is full or read-only, or None: read from what it said, else from the file
    system itself (git's "failed to write new configuration file" names no cause)."""
    import errno as _errno
    import os as _os

    for text, code in (
        ("No space left on device", _errno.ENOSPC),
        ("Read-only file system", _errno.EROFS),
        ("Disk quota exceeded", _errno.EDQUOT),
    ):
        if text in said:
            return output_error(OSError(code, text, str(path)), path)
    where = str(path)
    while where and not _os.path.exists(where):
        parent = _os.path.dirname(where)
        if parent == where:
            break
        where = parent
    try:
        st = _os.statvfs(where)
    except OSError:
        return None
    if st.f_flag & _os.ST_RDONLY:
        return output_error(OSError(_errno.EROFS, "Read-only file system", str(path)), path)
    if st.f_bavail == 0 or (st.f_favail == 0 and st.f_files > 0):
        return output_error(OSError(_errno.ENOSPC, "No space left on device", str(path)), path)
    return None


#: errno names only writing gives; the others of :data:`_OUTPUT_HINTS` reading can give too.
_WRITE_ONLY = ("ENOSPC", "EDQUOT", "EFBIG", "EROFS")


def file_system_error(exc: OSError) -> SweForgeError | None:
    """What an :class:`OSError` no command turned into an error of its own means, by errno:
    an :class:`OutputError` for a full disk or a read-only file system, an
    :class:`InputError` for a path that cannot be opened (permission, a folder where a file
    was expected); None for anything else (a bug: a crash log is kept)."""
    import errno as _errno

    name = _errno.errorcode.get(exc.errno or 0, "")
    if name in _WRITE_ONLY:
        return output_error(exc)
    if name in _OUTPUT_HINTS or name == "ENOENT":
        return InputError(
            f"cannot open {exc.filename}: {exc.strerror or exc}",
            hint=_OUTPUT_HINTS.get(name, "check the path").replace("write", "read or write"),
        )
    return None


#: Every error class with its exit code, for ``--help`` and the docs.
ERROR_CLASSES: tuple[type[SweForgeError], ...] = (
    UsageError,
    ConfigError,
    InputError,
    RepositoryError,
    LicenseError,
    DiffError,
    EncodingError,
    GitError,
    RemoteError,
    PartialFailure,
    DockerError,
    BuildError,
    AuditFailure,
    RegistryError,
    DigestError,
    OutputError,
    OutputBusy,
)


def exit_code_table() -> list[tuple[int, str, str]]:
    """Return ``(code, name, meaning)`` rows for every documented exit code."""
    rows = [(EXIT_OK, "ok", "success"), (EXIT_CRASH, "crash", "unexpected error; see crash log")]
    for cls in ERROR_CLASSES:
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        rows.append((cls.exit_code, cls.__name__, doc))
    rows.append((EXIT_DONE_WITH_REJECTIONS, "done_with_rejections", "run: done, some rejected"))
    rows.append(
        (EXIT_INFRA_ERRORS, "infra_errors", "infrastructure errors left work undone: run again")
    )
    rows.append((EXIT_INTERRUPTED, "interrupted", "Ctrl-C"))
    rows.append((EXIT_TERMINATED, "terminated", "SIGTERM (timeout, Slurm, Kubernetes)"))
    return sorted(rows)
