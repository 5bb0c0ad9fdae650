"""Rust's toolchain by date: the release current at a base commit, fetched from static.rust-lang.org
(checksummed) and merged into one prefix; the project's own pins; cargo on the host for locks.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tomllib
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.errors import BuildError

if TYPE_CHECKING:
    pass


#: Minor releases: (minor, release date, the patch release pinned for it: the last of its
#: line, bug and security fixes only).
RUST_RELEASES: tuple[tuple[str, str, str], ...] = (
    ("1.56", "2021-10-21", "1.56.1"),
    ("1.57", "2021-12-02", "1.57.0"),
    ("1.58", "2022-01-13", "1.58.1"),
    ("1.59", "2022-02-24", "1.59.0"),
    ("1.60", "2022-04-07", "1.60.0"),
    ("1.61", "2022-05-19", "1.61.0"),
    ("1.62", "2022-06-30", "1.62.1"),
    ("1.63", "2022-08-11", "1.63.0"),
    ("1.64", "2022-09-22", "1.64.0"),
    ("1.65", "2022-11-03", "1.65.0"),
    ("1.66", "2022-12-15", "1.66.1"),
    ("1.67", "2023-01-26", "1.67.1"),
    ("1.68", "2023-03-09", "1.68.2"),
    ("1.69", "2023-04-20", "1.69.0"),
    ("1.70", "2023-06-01", "1.70.0"),
    ("1.71", "2023-07-13", "1.71.1"),
    ("1.72", "2023-08-24", "1.72.1"),
    ("1.73", "2023-10-05", "1.73.0"),
    ("1.74", "2023-11-16", "1.74.1"),
    ("1.75", "2023-12-28", "1.75.0"),
    ("1.76", "2024-02-08", "1.76.0"),
    ("1.77", "2024-03-21", "1.77.2"),
    ("1.78", "2024-05-02", "1.78.0"),
    ("1.79", "2024-06-13", "1.79.0"),
    ("1.80", "2024-07-25", "1.80.1"),
    ("1.81", "2024-09-05", "1.81.0"),
    ("1.82", "2024-10-17", "1.82.0"),
    ("1.83", "2024-11-28", "1.83.0"),
    ("1.84", "2025-01-09", "1.84.1"),
    ("1.85", "2025-02-20", "1.85.1"),
    ("1.86", "2025-04-03", "1.86.0"),
    ("1.87", "2025-05-15", "1.87.0"),
    ("1.88", "2025-06-26", "1.88.0"),
    ("1.89", "2025-08-07", "1.89.0"),
    ("1.90", "2025-09-18", "1.90.0"),
    ("1.91", "2025-10-30", "1.91.1"),
    ("1.92", "2025-12-11", "1.92.0"),
    ("1.93", "2026-01-22", "1.93.1"),
    ("1.94", "2026-03-05", "1.94.1"),
    ("1.95", "2026-04-16", "1.95.0"),
)


DIST = "https://static.rust-lang.org/dist"


TRIPLE = "x86_64-unknown-linux-gnu"


COMPONENTS = ("rustc", "cargo", "rust-std")


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _minor(version: str) -> str:
    m = _VERSION.match(version.strip())
    return f"{m.group(1)}.{m.group(2)}" if m else ""


def choose_toolchain(base_date: str, rust_version: str = "", pinned: str = "") -> str:
    """The pinned Rust release for a commit made on ``base_date`` (ISO date), no older than
    ``rust_version`` (Cargo.toml) and ``pinned`` (a version from rust-toolchain) ask for."""
    day = base_date[:10]
    released = [r for r in RUST_RELEASES if r[1] <= day] or [RUST_RELEASES[0]]
    choice = released[-1]
    floors = [_minor(v) for v in (rust_version, pinned) if v and _minor(v)]
    if floors:
        minor = max(floors, key=_vkey)
        if _vkey(minor) > _vkey(choice[0]):
            later = [r for r in RUST_RELEASES if _vkey(r[0]) >= _vkey(minor)]
            if not later:
                raise BuildError(
                    f"the project asks for Rust {minor}, newer than any pinned toolchain",
                    hint="add the release to swe_forge/ecosystems/rust/__init__.py RUST_RELEASES",
                )
            choice = later[0]
    return choice[2]


def cargo_info(text: str) -> dict[str, str]:
    """name, rust-version and edition of a Cargo.toml ("" where absent or unreadable)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    out: dict[str, str] = {}
    pkg = data.get("package")
    if not isinstance(pkg, dict):
        ws = data.get("workspace")
        pkg = ws.get("package") if isinstance(ws, dict) else None
        out["workspace"] = "1"
    if isinstance(pkg, dict):
        for key in ("name", "rust-version", "edition"):
            value = pkg.get(key)
            if isinstance(value, str):
                out[key] = value
    return out


def toolchain_pin(text: str) -> str:
    """The version a rust-toolchain(.toml) file pins ("" for a channel name or a nightly)."""
    channel = text.strip()
    try:
        data = tomllib.loads(text)
        tc = data.get("toolchain")
        if isinstance(tc, dict) and isinstance(tc.get("channel"), str):
            channel = tc["channel"]
    except tomllib.TOMLDecodeError:
        pass
    channel = channel.strip().strip('"')
    return channel if _VERSION.match(channel) else ""


def _download(url: str, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}")
    with urllib.request.urlopen(url, timeout=120) as resp, open(tmp, "wb") as fh:
        shutil.copyfileobj(resp, fh, 1 << 20)
    tmp.rename(dest)


def fetch_toolchain(version: str, cache: Path) -> Path:
    """The toolchain ``version`` (rustc, cargo, rust-std for x86_64 Linux) merged into one
    prefix under ``cache/rust/toolchains`` (downloaded and checked once per machine)."""
    from swe_forge.locks import file_lock

    prefix = cache / "rust" / "toolchains" / version
    if (prefix / "bin" / "cargo").is_file() and (prefix / "bin" / "rustc").is_file():
        return prefix
    dist = cache / "rust" / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    with file_lock(cache / "rust" / f".toolchain-{version}.lock"):
        if (prefix / "bin" / "cargo").is_file():
            return prefix
        tmp_prefix = prefix.with_name(f".{version}-{os.getpid()}")
        shutil.rmtree(tmp_prefix, ignore_errors=True)
        tmp_prefix.mkdir(parents=True)
        for url, want in _component_urls(version, dist):
            file = url.rsplit("/", 1)[-1]
            name = file.removesuffix(".tar.xz").removesuffix(".tar.gz")
            tarball = dist / file
            try:
                if not tarball.is_file():
                    _download(url, tarball)
            except OSError as exc:
                raise BuildError(f"cannot download {url}: {exc}") from exc
            if _sha256(tarball) != want:
                tarball.unlink()
                raise BuildError(f"{file} does not match the sha256 of its channel manifest")
            _merge_component(tarball, name, tmp_prefix)
        shutil.rmtree(prefix, ignore_errors=True)
        tmp_prefix.rename(prefix)
    return prefix


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _component_urls(version: str, dist: Path) -> list[tuple[str, str]]:
    """(url, sha256) of each component of release ``version`` for x86_64 Linux, from its
    channel manifest (itself checked against its published .sha256). The manifest names the
    exact files: cargo's tarballs carried cargo's own version (0.57.0) before Rust 1.x..."""
    manifest = dist / f"channel-rust-{version}.toml"
    try:
        if not manifest.is_file():
            sums = dist / f"channel-rust-{version}.toml.sha256"
            _download(f"{DIST}/channel-rust-{version}.toml.sha256", sums)
            _download(f"{DIST}/channel-rust-{version}.toml", manifest)
            if _sha256(manifest) != sums.read_text().split()[0]:
                manifest.unlink()
                raise BuildError(f"channel-rust-{version}.toml does not match its sha256")
    except OSError as exc:
        raise BuildError(f"cannot download the channel manifest of Rust {version}: {exc}") from exc
    data = tomllib.loads(manifest.read_text())
    out = []
    for comp in COMPONENTS:
        target = data.get("pkg", {}).get(comp, {}).get("target", {}).get(TRIPLE, {})
        url, digest = target.get("xz_url"), target.get("xz_hash")
        if not (url and digest):
            url, digest = target.get("url"), target.get("hash")
        if not (url and digest and target.get("available", True)):
            raise BuildError(f"Rust {version} has no {comp} for {TRIPLE}")
        out.append((str(url), str(digest)))
    return out


def _merge_component(tarball: Path, name: str, prefix: Path) -> None:
    """Extract the component directories of a rust-installer tarball into ``prefix`` (what
    its install.sh does, without the manifests and docs)."""
    with tarfile.open(tarball, "r:*") as tar:
        members = []
        for m in tar.getmembers():
            parts = m.name.split("/")
            # <name>/<component dir>/<path>: keep bin/ and lib/ of every component dir.
            if len(parts) < 3 or parts[0] != name or parts[2] not in ("bin", "lib"):
                continue
            if m.issym() or m.islnk() or ".." in parts:
                continue
            m.name = "/".join(parts[2:])
            members.append(m)
        tar.extractall(prefix, members=members, filter="data")
    for path in (prefix / "bin").glob("*"):
        path.chmod(0o755)


def _cargo_run(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 1800
) -> subprocess.CompletedProcess[str]:
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "CARGO_TERM_COLOR": "never",
        **{k: v for k, v in os.environ.items() if k.startswith(("HTTP", "HTTPS", "NO_PROXY"))},
        **env,
    }
    return subprocess.run(
        argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False
    )


def lock_argv(cargo: str, manifest: str, publish_time: str) -> list[str]:
    """``cargo generate-lockfile`` for ``manifest``, seeing only crates published by
    ``publish_time`` (``YYYY-MM-DDTHH:MM:SSZ``; "" for no limit)."""
    argv = [cargo, "generate-lockfile", "--manifest-path", manifest]
    if publish_time:
        argv += ["-Zunstable-options", "--publish-time", publish_time]
    return argv


def host_cargo() -> str:
    """The host's cargo (used when the chosen toolchain's cannot read a lockfile)."""
    found = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
    if not Path(found).is_file():
        raise BuildError("no cargo on this machine", hint="install Rust on the host (rustup)")
    return found
