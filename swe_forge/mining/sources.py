"""Turn ``SOURCE`` arguments into repositories to mine.

A source is a local repository path, a clone URL, or a text file listing sources (one per
line; ``#`` starts a comment; an optional second column names the repository ``owner/name``,
e.g. ``./checkouts/foo  acme/foo``; a relative path in a list is relative to the list's folder).

Local paths are resolved to absolute paths here, once: a source's ``spec`` is what the records
keep (``provenance.source``), and later commands (``images build``, ``admit``) open the
repository from it, possibly from another folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from swe_forge.errors import InputError
from swe_forge.git.cli import Progress, clone_or_update

_URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class RepoSource:
    """One repository to mine: where it is and what it is called."""

    spec: str  # a clone URL as given, or the absolute path of a local repository
    name: str | None = None  # owner/name if the user gave one

    @property
    def is_url(self) -> bool:
        """True when the source is a clone URL rather than a local path."""
        return bool(_URL.match(self.spec))


def cache_dir() -> Path:
    """Where clones and other caches live (``$SWE_FORGE_CACHE`` or ``~/.cache/swe-forge``)."""
    env = os.environ.get("SWE_FORGE_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "swe-forge"


def repo_name_from_url(url: str) -> str | None:
    """``https://github.com/Owner/Name.git`` -> ``Owner/Name`` (None when there is no such tail)."""
    tail = re.split(r"[:/]", url.rstrip("/"))
    if len(tail) < 2:
        return None
    owner, name = tail[-2], tail[-1].removesuffix(".git")
    if not owner or not name or not _NAME.match(f"{owner}/{name}"):
        return None
    return f"{owner}/{name}"


def check_repo_name(name: str) -> str:
    """``name`` if it is ``owner/name``.

    Raises:
        InputError: it is not.
    """
    if not _NAME.match(name):
        raise InputError(
            f"not a repository name: {name!r}",
            hint="write owner/name (letters, digits, '.', '_', '-'), e.g. acme/widgets",
        )
    return name


def expand_sources(specs: list[str]) -> list[RepoSource]:
    """Expand list files; check that local paths exist and make them absolute; keep order,
    drop duplicates (the same repository reached by two spellings counts once).

    Raises:
        InputError: a path does not exist, or a list file line is malformed.
    """
    out: list[RepoSource] = []
    for spec in specs:
        if _URL.match(spec):
            out.append(RepoSource(spec))
            continue
        path = Path(spec)
        if path.is_dir():
            out.append(RepoSource(str(path.resolve())))
        elif path.is_file():
            out.extend(_read_list(path))
        else:
            raise InputError(
                f"no such path: {spec} (not a repository, a clone URL or a list file)",
                hint="give a local repository path, a clone URL (https://, ssh://, git@host:, "
                "file://), or a file listing them; relative paths are relative to the current "
                "folder",
            )
    seen: set[str] = set()
    unique = []
    for src in out:
        if src.spec not in seen:
            seen.add(src.spec)
            unique.append(src)
    return unique


def _read_list(path: Path) -> list[RepoSource]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"list file {path} is not UTF-8 text", hint="one source per line") from exc
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        parts = line.split()
        if len(parts) > 2 or (len(parts) == 2 and not _NAME.match(parts[1])):
            raise InputError(
                f"{path}:{lineno}: expected 'SOURCE [owner/name]', got {raw.strip()!r}",
                hint="one repository path or clone URL per line, optionally followed by owner/name",
            )
        spec = parts[0]
        if not _URL.match(spec):
            local = (path.parent / spec) if not Path(spec).is_absolute() else Path(spec)
            if not local.exists():
                raise InputError(
                    f"{path}:{lineno}: no such path: {spec}",
                    hint=f"a relative path in a list file is relative to the list's folder "
                    f"({path.parent.resolve()})",
                )
            spec = str(local.resolve())
        out.append(RepoSource(spec, parts[1] if len(parts) == 2 else None))
    return out


def materialize(
    source: RepoSource, *, offline: bool = False, progress: Progress | None = None
) -> Path:
    """A local path to open: the path itself, or a cached bare mirror of the URL.

    ``progress`` hears where a clone or fetch of a URL is (every few seconds).

    Raises:
        InputError: a local source path does not exist (any more: records made before paths
            were stored absolute hold the path as typed, relative to the folder mine ran in).
    """
    if not source.is_url:
        path = Path(source.spec)
        if not path.exists():
            raise InputError(
                f"no such path: {source.spec} (the repository's source, provenance.source)",
                hint="the repository is no longer where it was mined from: put it back, or run "
                "from the folder a relative path was typed in, or mine it again",
            )
        return path
    digest = hashlib.sha256(source.spec.encode()).hexdigest()[:12]
    name = (repo_name_from_url(source.spec) or "repo").replace("/", "__")
    return clone_or_update(
        source.spec,
        cache_dir() / "repos" / f"{name}-{digest}.git",
        offline=offline,
        progress=progress,
    )
