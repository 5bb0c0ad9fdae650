"""Exact pins older than the chosen Python: the nearest release that supports it instead.

A project's test requirements pin the releases of their day (``hypothesis==3.1.0``); the
image's Python is chosen by the commit's date, often years later. The old release may still
install (nothing in its metadata forbids the newer Python) and then fail at import or at its
first use (hypothesis 3.1.0 builds code objects with the constructor of Python 3.5): every
test that uses it fails, before and after the fix alike, and the task is lost.

What a release says about the Pythons it supports is its ``Requires-Python`` and its trove
classifiers (``Programming Language :: Python :: 3.5``). A pin whose release excludes the chosen
Python by ``Requires-Python``, or lists Python 3 minors that all stop two or more below it
(classifiers often lag one minor), is replaced by the *nearest* later release that supports
it: among the first few (by version) uploaded once that Python was out, the first whose
classifiers allow it, else the first of them (its ``Requires-Python`` allows it). The
replacement is exact, is recorded as an :class:`Adjustment` with the reason, and is resolved
as of its own upload date (the commit's date predates it). A release whose metadata cannot be
read is left alone: no evidence, no change.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from swe_forge.ecosystems.python.recipe_requirements import Adjustment, _render, applies

#: When each Python had its first final release (recipe.PYTHON_RELEASES, passed in).
Releases = dict[str, str]
_MINOR = re.compile(r"^Programming Language :: Python :: (3\.\d+)\s*$")
#: Later releases whose metadata is read, at most, looking for one that names the Python.
_LOOK_AHEAD = 8
#: Minors a release's classifiers may stop short of the Python and still count as for it.
_LAG = 1
#: Archives read for their metadata when no separate metadata file exists (bytes).
_MAX_ARCHIVE = 8 << 20
_MAX_META = 1 << 20


@dataclass(frozen=True)
class Release:
    """One release of a distribution on the index."""

    version: str
    #: Earliest upload time of its files (ISO 8601, UTC).
    uploaded: str
    requires_python: str | None


class ReleaseIndex:
    """What the pin check asks the index: a distribution's releases, and the Python 3 minors a
    release's classifiers name (None: its metadata could not be read)."""

    def releases(self, name: str) -> list[Release]:
        """Every non-yanked release, any order."""
        raise NotImplementedError

    def python_minors(self, name: str, version: str) -> frozenset[str] | None:
        """``{"3.4", "3.5"}`` from its classifiers; empty when it names no minor."""
        raise NotImplementedError


def _within(spec: str | None, python: str) -> bool:
    if not spec:
        return True
    try:
        s = SpecifierSet(spec)
    except InvalidSpecifier:
        return True
    return any(s.contains(Version(v), prereleases=True) for v in (f"{python}.0", f"{python}.99"))


def _exact(req: Requirement) -> str | None:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


def unsupported(release: Release, minors: frozenset[str] | None, python: str) -> str | None:
    """Why ``release`` does not support ``python`` by its own metadata (None: it may)."""
    if not _within(release.requires_python, python):
        return f"requires Python {release.requires_python}"
    if minors and python not in minors:
        top = Version(max(minors, key=Version))
        # Classifiers often lag a release behind: one minor short is no evidence.
        if top.major == 3 and top.minor + _LAG < Version(python).minor:
            return f"declares Python {', '.join(sorted(minors, key=Version))} only"
    return None


def _day_after(iso: str) -> str:
    day = datetime.strptime(iso[:10], "%Y-%m-%d") + timedelta(days=1)
    return day.strftime("%Y-%m-%dT00:00:00Z")


def nearest_supporting(
    name: str, pinned: str, python: str, python_released: str, index: ReleaseIndex
) -> Release | None:
    """The first release after ``pinned`` (by version, final releases only) uploaded once
    ``python`` was out that supports it by its metadata."""
    try:
        floor = Version(pinned)
    except InvalidVersion:
        return None
    later: list[tuple[Version, Release]] = []
    for rel in index.releases(name):
        try:
            v = Version(rel.version)
        except InvalidVersion:
            continue
        if (
            v > floor
            and not v.is_prerelease
            and rel.uploaded[:10] >= python_released
            and _within(rel.requires_python, python)
        ):
            later.append((v, rel))
    ordered = [rel for _v, rel in sorted(later, key=lambda x: x[0])]
    for rel in ordered[:_LOOK_AHEAD]:
        minors = index.python_minors(name, rel.version)
        if minors is not None and unsupported(rel, minors, python) is None:
            return rel
    # None of the nearest says so outright: the first made once the Python was out (its
    # classifiers lag, its Requires-Python allows it) is still the nearest that can.
    return ordered[0] if ordered else None


def adjust_stale_pins(
    requirements: tuple[str, ...],
    python: str,
    python_releases: Releases,
    index: ReleaseIndex,
) -> tuple[tuple[str, ...], list[Adjustment], dict[str, str]]:
    """Replace exact pins whose release does not support ``python`` (see the module).

    Returns the requirements, the adjustments made, and for each replaced distribution the
    "as of" date its resolution needs (the day after its replacement's upload).
    """
    released = python_releases.get(python)
    if not released:
        return requirements, [], {}
    out: list[str] = []
    adjusted: list[Adjustment] = []
    dates: dict[str, str] = {}
    for line in requirements:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            out.append(line)
            continue
        pinned = _exact(req)
        if pinned is None or req.url or not applies(req, python):
            out.append(line)
            continue
        try:
            this = next((r for r in index.releases(req.name) if _same(r.version, pinned)), None)
            why = (
                unsupported(this, index.python_minors(req.name, this.version), python)
                if this
                else None
            )
            chosen = nearest_supporting(req.name, pinned, python, released, index) if why else None
        except (OSError, ValueError):  # the index out of reach or unreadable: no change
            chosen = None
        if chosen is None:
            out.append(line)
            continue
        new = Requirement(line)
        new.specifier = SpecifierSet(f"=={chosen.version}")
        out.append(_render(new))
        adjusted.append(
            Adjustment(
                original=_render(req),
                chosen=_render(new),
                reason=f"{req.name} {pinned} {why}: the nearest release for Python {python}",
            )
        )
        dates[canonicalize_name(req.name)] = _day_after(chosen.uploaded)
    return tuple(out), adjusted, dates


def _same(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


# ------------------------------------------------------------------------- the index


_WHEEL = re.compile(r"^(?P<name>.+?)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
_SDIST_EXTS = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


def _version_of(filename: str, name: str) -> str | None:
    m = _WHEEL.match(filename)
    if m:
        return m.group("version")
    for ext in _SDIST_EXTS:
        if filename.endswith(ext):
            stem = filename[: -len(ext)]
            prefix_len = len(name) + 1
            if canonicalize_name(stem[: prefix_len - 1]) == canonicalize_name(name):
                return stem[prefix_len:]
    return None


def minors_of_metadata(text: str) -> frozenset[str]:
    """The Python 3 minors a METADATA / PKG-INFO file's classifiers name."""
    found = set()
    for line in text.splitlines():
        if line.startswith("Classifier:"):
            m = _MINOR.match(line.split(":", 1)[1].strip())
            if m:
                found.add(m.group(1))
    return frozenset(found)


class PyPIReleases(ReleaseIndex):
    """The simple index (PEP 691 JSON) of the host's pip/uv, with PEP 658 metadata files and,
    without them, the release's archive (bounded); answers cached under ``cache``."""

    def __init__(self, cache: Path, fetch: Callable[[str], bytes] | None = None) -> None:
        self.cache = cache / "pins"
        self._fetch = fetch or _get
        self._pages: dict[str, list[dict[str, object]]] = {}

    def _files(self, name: str) -> list[dict[str, object]]:
        key = canonicalize_name(name)
        if key not in self._pages:
            from swe_forge.ecosystems.python.deps_wheels import index_url

            url = urllib.parse.urljoin(index_url(), f"{key}/")
            body = self._fetch(url)
            files = json.loads(body).get("files", [])
            base = url
            for f in files:
                f["url"] = urllib.parse.urljoin(base, str(f.get("url", "")))
            self._pages[key] = files
        return self._pages[key]

    def releases(self, name: str) -> list[Release]:
        """Every non-yanked release on the index page."""
        by: dict[str, Release] = {}
        for f in self._files(name):
            if f.get("yanked"):
                continue
            version = _version_of(str(f.get("filename", "")), name)
            if version is None:
                continue
            uploaded = str(f.get("upload-time") or "")
            old = by.get(version)
            rp = f.get("requires-python")
            if old is None or (uploaded and uploaded < old.uploaded):
                by[version] = Release(version, uploaded, str(rp) if rp else None)
        return list(by.values())

    def python_minors(self, name: str, version: str) -> frozenset[str] | None:
        """From a wheel's metadata file, else from the archive's own metadata."""
        cached = self.cache / f"{canonicalize_name(name)}-{version}.json"
        if cached.is_file():
            got = json.loads(cached.read_text())
            return None if got is None else frozenset(got)
        minors = self._read_minors(name, version)
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(None if minors is None else sorted(minors)))
        return minors

    def _read_minors(self, name: str, version: str) -> frozenset[str] | None:
        files = [
            f
            for f in self._files(name)
            if _same(_version_of(str(f.get("filename", "")), name) or "", version)
        ]
        for f in files:
            if f.get("core-metadata") or f.get("data-dist-info-metadata"):
                return minors_of_metadata(
                    self._fetch(str(f["url"]) + ".metadata").decode("utf-8", "replace")
                )
        for f in sorted(files, key=lambda f: int(str(f.get("size") or 0))):
            if int(str(f.get("size") or 0)) > _MAX_ARCHIVE:
                continue
            text = _archive_metadata(str(f.get("filename", "")), self._fetch(str(f["url"])))
            if text is not None:
                return minors_of_metadata(text)
        return None


def _archive_metadata(filename: str, data: bytes) -> str | None:
    """The METADATA of a wheel, or the top-level PKG-INFO of an sdist (never run)."""
    try:
        if filename.endswith((".whl", ".zip")):
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for info in zf.infolist():
                    parts = info.filename.split("/")
                    wanted = (
                        len(parts) == 2
                        and parts[0].endswith(".dist-info")
                        and parts[1] == "METADATA"
                    ) or (len(parts) == 2 and parts[1] == "PKG-INFO")
                    if wanted and info.file_size <= _MAX_META:
                        return zf.read(info).decode("utf-8", "replace")
            return None
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            for member in tf:
                parts = member.name.lstrip("./").split("/")
                if len(parts) == 2 and parts[1] == "PKG-INFO" and member.isfile():
                    if member.size > _MAX_META:
                        return None
                    fh = tf.extractfile(member)
                    return fh.read().decode("utf-8", "replace") if fh else None
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError):
        return None
    return None


def _get(url: str) -> bytes:
    # Index pages can be large (thousands of files); archives are read only below a bound.
    limit = _MAX_ARCHIVE if url.endswith((*_SDIST_EXTS, ".whl")) else 64 << 20
    req = urllib.request.Request(
        url,
        headers={
            "Accept": "application/vnd.pypi.simple.v1+json",
            "User-Agent": "swe-forge",
        },
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        data: bytes = resp.read(limit + 1)
        return data
