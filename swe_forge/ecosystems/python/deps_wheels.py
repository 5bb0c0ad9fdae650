"""A shared, content-addressed wheel store; sdists fetched and read without running them.

**The store.** Every wheel a wheelhouse needs is kept once under ``<cache>/wheels/sha256/``,
named by its sha256, and hard-linked into the wheelhouses that use it: two locks that pin the
same distribution download it once. A *selection* records which file was taken for a pin on a
target (``name==version`` for one Python and platform, or an sdist built on one build image),
so a later lock gets the very same file without asking the index, whatever else the store
holds. A selected file is used only when its hash is one the lock allows.

**sdists.** A pin with no compatible wheel is fetched as an sdist straight from the index's
simple API (PEP 691 JSON, or the PEP 503 HTML page) and checked against the lock's hashes.
``pip download`` would prepare its metadata, which runs the sdist's ``setup.py`` on the host
with the host's Python; here nothing of it runs on the host. Its build requirements are read
statically from the archive (``[build-system] requires``, or setuptools' defaults plus
``setup_requires`` from ``setup.cfg`` and from a literal in ``setup.py``).
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import hashlib
import html
import json
import os
import re
import shutil
import tarfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from swe_forge import pyast
from swe_forge.errors import BuildError

#: The build requirements PEP 517 prescribes when a project declares none.
DEFAULT_BUILD_REQUIRES = ("setuptools>=40.8.0", "wheel")
_MAX_META = 1 << 20
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link ``src`` to ``dst`` (same file system), else copy it."""
    try:
        os.link(src, dst)
    except FileExistsError:
        pass
    except OSError:
        shutil.copy2(src, dst)


class WheelStore:
    """Wheels by content hash, and which file each pin on each target resolved to.

    Writers never leave partial files: a file is copied under a temporary name and renamed,
    so concurrent builders of different locks can share one store.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = root / "sha256"
        self.selections = root / "selections"

    def add(self, path: Path) -> tuple[str, Path]:
        """Put a file into the store; returns (sha256, its path in the store)."""
        sha = file_sha256(path)
        target = self.files / sha[:2] / sha / path.name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{path.name}.{os.getpid()}.tmp")
            link_or_copy(path, tmp)
            os.replace(tmp, target)
        return sha, target

    def remember(self, key: str, sha: str, filename: str) -> None:
        """Record that ``key`` (see :func:`selection_key`) resolved to this file."""
        self.selections.mkdir(parents=True, exist_ok=True)
        path = self.selections / f"{key}.json"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"sha256": sha, "filename": filename}, sort_keys=True))
        os.replace(tmp, path)

    def selected(self, key: str, allowed: frozenset[str] | None = None) -> Path | None:
        """The stored file selected for ``key``; None when unknown, missing, or not allowed
        (its hash is not among ``allowed``, the hashes the lock accepts)."""
        path = self.selections / f"{key}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        sha, name = str(data.get("sha256", "")), str(data.get("filename", ""))
        if allowed is not None and sha not in allowed:
            return None
        found = self.files / sha[:2] / sha / name
        return found if sha and name and found.is_file() else None


def selection_key(*parts: str) -> str:
    """The key of a selection: a hash over what determines the chosen file."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ---------------------------------------------------------------------------- sdists


@dataclass(frozen=True)
class IndexFile:
    """One file of a release on the index."""

    filename: str
    url: str
    sha256: str


def index_url() -> str:
    """The simple index the host's pip/uv use (``PIP_INDEX_URL``, ``UV_DEFAULT_INDEX``...)."""
    for var in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        value = os.environ.get(var, "").strip()
        if value:
            return value.rstrip("/") + "/"
    return "https://pypi.org/simple/"


def _is_sdist(filename: str) -> bool:
    return filename.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz"))


def index_files(name: str, *, timeout: float = 120) -> list[IndexFile]:
    """Files the index lists for a project (PEP 691 JSON, else the PEP 503 page)."""
    base = index_url()
    url = urllib.parse.urljoin(base, f"{canonicalize_name(name)}/")
    req = urllib.request.Request(
        url,
        headers={
            "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1",
            "User-Agent": "swe-forge",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
            ctype = resp.headers.get("Content-Type", "")
            final = resp.geturl()
    except OSError as exc:
        raise BuildError(f"cannot read the index page of {name}: {exc}", hint=url) from exc
    out: list[IndexFile] = []
    if "json" in ctype:
        for f in json.loads(body).get("files", []):
            sha = str((f.get("hashes") or {}).get("sha256", ""))
            out.append(IndexFile(str(f["filename"]), urllib.parse.urljoin(final, f["url"]), sha))
        return out
    for href in re.findall(rb'href="([^"]+)"', body):
        link = html.unescape(href.decode("utf-8", "replace"))
        full = urllib.parse.urljoin(final, link)
        path, _, frag = full.partition("#")
        sha = frag.split("sha256=", 1)[1] if "sha256=" in frag else ""
        out.append(IndexFile(urllib.parse.unquote(path.rsplit("/", 1)[-1]), path, sha))
    return out


def fetch_sdist(
    name: str, version: str, allowed: frozenset[str], dest: Path, *, timeout: float = 300
) -> Path:
    """Download the sdist of ``name==version`` whose sha256 the lock allows, into ``dest``.

    Raises:
        BuildError: the index has no such sdist, or the bytes do not match the hash.
    """
    files = [f for f in index_files(name, timeout=timeout) if _is_sdist(f.filename)]
    chosen = sorted((f for f in files if f.sha256 in allowed), key=lambda f: f.filename)
    if not chosen:
        raise BuildError(
            f"{name}=={version} has no compatible wheel and no sdist with a locked hash",
            hint="exclude it or pin another version in configs/repos.yaml",
        )
    item = chosen[0]
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / item.filename
    tmp = target.with_name(f".{item.filename}.part")
    req = urllib.request.Request(item.url, headers={"User-Agent": "swe-forge"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp, tmp.open("wb") as out:
            shutil.copyfileobj(resp, out, _CHUNK)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"cannot download {item.url}: {exc}") from exc
    if file_sha256(tmp) != item.sha256:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"{item.filename}: the downloaded bytes do not match the locked hash")
    os.replace(tmp, target)
    return target


def _sdist_members(path: Path) -> dict[str, bytes]:
    """pyproject.toml, setup.cfg and setup.py at the top of an sdist (bounded, never run)."""
    wanted = ("pyproject.toml", "setup.cfg", "setup.py")
    out: dict[str, bytes] = {}
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                parts = info.filename.split("/")
                if len(parts) == 2 and parts[1] in wanted and info.file_size <= _MAX_META:
                    out.setdefault(parts[1], zf.read(info))
        return out
    with tarfile.open(path) as tf:
        for member in tf:
            parts = member.name.lstrip("./").split("/")
            if (
                len(parts) == 2
                and parts[1] in wanted
                and member.isfile()
                and member.size <= _MAX_META
            ):
                fh = tf.extractfile(member)
                if fh is not None:
                    out.setdefault(parts[1], fh.read())
    return out


def build_requirements(sdist: Path) -> list[str]:
    """What building ``sdist`` into a wheel needs, read statically from the archive.

    ``[build-system] requires`` when the sdist declares it, else PEP 517's default
    (setuptools and wheel); for setuptools builds, ``setup_requires`` too (pip gets them
    through the backend's ``get_requires_for_build_wheel``, and offline they must be at hand).
    """
    try:
        files = _sdist_members(sdist)
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise BuildError(f"cannot read the sdist {sdist.name}: {exc}") from exc
    reqs: list[str] = []
    backend = ""
    if "pyproject.toml" in files:
        try:
            data = tomllib.loads(files["pyproject.toml"].decode("utf-8", "replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        bs = data.get("build-system") or {}
        if isinstance(bs.get("requires"), list):
            reqs += [str(r) for r in bs["requires"]]
        backend = str(bs.get("build-backend") or "")
    if not reqs and not backend:
        reqs += DEFAULT_BUILD_REQUIRES
    if backend in ("", "setuptools.build_meta", "setuptools.build_meta:__legacy__"):
        reqs += _setup_requires(files)
        if not any(canonicalize_name(_name(r)) == "wheel" for r in reqs):
            # setuptools before 70 builds wheels through the wheel package.
            reqs.append("wheel")
    return list(dict.fromkeys(r.strip() for r in reqs if r.strip()))


def _name(req: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return match.group(1) if match else req


def _setup_requires(files: dict[str, bytes]) -> list[str]:
    out: list[str] = []
    if "setup.cfg" in files:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        with contextlib.suppress(configparser.Error):
            parser.read_string(files["setup.cfg"].decode("utf-8", "replace"))
            raw = parser.get("options", "setup_requires", fallback="")
            out += [ln.strip() for ln in raw.splitlines() if ln.strip()]
    if "setup.py" in files:
        try:
            tree = pyast.parse(files["setup.py"].decode("utf-8", "replace"))
        except (SyntaxError, ValueError):
            return out
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                if kw.arg != "setup_requires":
                    continue
                with contextlib.suppress(ValueError, SyntaxError, TypeError):
                    value = ast.literal_eval(kw.value)
                    if isinstance(value, str):
                        value = value.splitlines()
                    if isinstance(value, list | tuple):
                        out += [str(v) for v in value if isinstance(v, str)]
    return out
