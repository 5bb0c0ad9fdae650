"""Rust: cargo, libtest's JSON events, toolchains from static.rust-lang.org.

- **Toolchain.** The Rust release that was newest when the base commit was made (a fixed
  table of minor releases and the patch release pinned for each, so the same date always
  gives the same toolchain), raised to ``rust-version`` in Cargo.toml and to a version pinned
  by ``rust-toolchain(.toml)``. Its component tarballs (rustc, cargo, rust-std) come from
  ``static.rust-lang.org/dist``, checked against the published ``.sha256`` files, are
  merged into one prefix once per machine and copied into the env image at
  ``/usr/local/rust``. Rust links with ``cc``, so the env image is made from the base
  image's build flavour (gcc, libc6-dev).
- **Dependencies.** ``cargo vendor`` on the host (the chosen toolchain's cargo, or the
  host's when that one cannot read the lockfile: the recipe says which) of the base tree and
  of the tree with the gold and test patches, into one directory copied into the env image at
  ``/opt/cargo/vendor``, with a cargo configuration that replaces crates.io by it and sets
  ``net.offline``. Without a committed Cargo.lock, the one generated on the host goes into
  the image too (and into the record's lock digest).
- **Build.** The instance image compiles every integration test target offline
  (``cargo test --no-run``) into ``/opt/target``; a run copies it (mtimes kept, so only what
  changed is rebuilt) to ``/tmp/target``.
- **Tests.** One ``cargo test --test <target>`` per integration test target of the test
  files, libtest printing JSON events (``--format json``, ``RUSTC_BOOTSTRAP=1``) in a random
  order (``--shuffle-seed``); the run script frames each target's stream with a line of its
  own and ends with another, and the supervisor reads per-test events from it (never the
  human text). Test ids are ``<test file of the target>::<test name>``
  (``tests/text.rs::truncate_long``, ``tests/words/main.rs::edge::empty``). Which files
  are targets, under which name and with which ``required-features``, and which helper
  modules (``tests/common/mod.rs``) belong to which targets, is read at build time from the
  tree with both patches (``[[test]]`` entries, ``autotests``, ``mod`` declarations) and
  recorded (``harness.layout``); the instance warms one build per set of required features.
- **Judge's files.** ``tests/`` at any depth; Cargo.toml's ``[profile]``, ``[patch]``,
  ``[replace]``, ``[[test]]``, ``[lib]``, ``[workspace]``, ``[target]`` sections and its
  ``build``, ``harness``, ``auto*``, ``path``, ``proc-macro``... keys, ``.cargo/``,
  ``build.rs``, ``rust-toolchain*`` and ``vendor/`` are runner configuration a candidate may
  not change unless the gold patch does.
- **Capabilities.** A candidate's Rust source may not newly use what reaches the process or
  the test binary's output (``process::exit``, ``unsafe``, ``libc``, ``print!``, stdout,
  ``#[ctor]``, ``extern "C"``, ``#[no_mangle]``, ``env::args``, panic hooks, text shaped like
  libtest's JSON, ``include!``...) unless the base code or the gold patch already does: read
  on the token stream of the syntax tree, macros and ``cfg_attr`` included, ``use`` aliases
  resolved and strings folded (:mod:`swe_forge.ecosystems.rust.scan`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
import tomllib
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    digest_text,
    file_lines,
    git_apply,
    line_violations,
    parse_patch,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    source_capabilities,
    touched_paths,
    tree_source_capabilities,
    verify_job,
)
from swe_forge.ecosystems.rust.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.rust.scan import scan
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError

if TYPE_CHECKING:
    from swe_forge.gates.runner import RunResult
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

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
#: Where the toolchain, the vendored crates and the warm target dir live in the image.
RUST_ROOT = "/usr/local/rust"
CARGO_DIR = "/opt/cargo"
TARGET_DIR = "/opt/target"
RUN_TARGET = "/tmp/target"
RUN_HOME = "/tmp/cargo-home"
RUST_PATH_ENV = f"{RUST_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: The environment of every cargo command in an image (build and tests).
RUST_ENV = {
    "CARGO_NET_OFFLINE": "true",
    "CARGO_INCREMENTAL": "0",
    "CARGO_TERM_COLOR": "never",
    "RUSTC_BOOTSTRAP": "1",
    "RUST_BACKTRACE": "0",
}
#: Test builds without debug info: the warm target dir is copied to the run's /tmp (a
#: size-capped tmpfs), and debug info is most of its size (rust-base64 with criterion's
#: dependencies outgrew 512 MB). Set where cargo runs (instance build, runs), not in the env
#: image, so env images stay shared.
BUILD_ENV = {"CARGO_PROFILE_DEV_DEBUG": "0", "CARGO_PROFILE_TEST_DEBUG": "0"}
CARGO_CONFIG = """\
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "{vendor}"

[net]
offline = true

# Lints warn, never fail the build: code from before a lint existed, built with a newer
# toolchain than its own, often says #![deny(warnings)] (http 0.1 in 2017). Arrays merge
# with a project's own build.rustflags.
[build]
rustflags = ["--cap-lints", "warn"]
"""
ENV_DOCKERFILE = """\
# vendored crates made world-readable on the host; cargo config {config}
FROM {base}
COPY rust {root}
COPY cargo {cargo}
ENV PATH={path} CARGO_HOME={cargo} {env}
"""
#: The instance's build step: every crate must resolve from the vendored sources (a missing
#: one fails the build here, not a test later); then the integration tests are compiled.
INSTALL = (
    "export CARGO_HOME={cargo} CARGO_TARGET_DIR={target} HOME=/root "
    + " ".join(f"{k}={v}" for k, v in sorted(BUILD_ENV.items()))
    + " && cd /testbed "
    "&& {{ [ -f Cargo.lock ] || cp {cargo}/Cargo.lock Cargo.lock; }} "
    "&& cargo metadata --offline --format-version 1 >/dev/null "
    "&& {{ cargo test --offline --workspace --no-run --tests >/dev/null 2>&1 || true; }} "
    "{features}&& mkdir -p {target} && chmod -R a+rX {target}"
)
#: The same for the test targets that ``[[test]]`` entries give ``required-features``.
INSTALL_FEATURES = (
    "&& {{ cargo test --offline --no-run --tests --features {features} >/dev/null 2>&1 || true; }} "
)
#: The first line of every run: the warm target dir and a writable cargo home.
RUN_PRELUDE = (
    f"mkdir -p {RUN_HOME} && cp {CARGO_DIR}/config.toml {RUN_HOME}/ "
    # A partial copy (a full tmpfs) would leave crates cargo believes built: start cold.
    f"&& {{ cp -a {TARGET_DIR} {RUN_TARGET} 2>/dev/null || rm -rf {RUN_TARGET}; }}; "
    f"[ -f Cargo.lock ] || cp {CARGO_DIR}/Cargo.lock Cargo.lock 2>/dev/null; rc=0"
)
RUN_ENV = {**RUST_ENV, **BUILD_ENV, "CARGO_HOME": RUN_HOME, "CARGO_TARGET_DIR": RUN_TARGET}
#: The framing lines of the run script (libtest's own events have a "type" of test/suite).
MARK_TARGET = "swe-forge-target"
MARK_DONE = "swe-forge-done"
#: libtest's JSON format and shuffling exist since 1.58 (behind -Z unstable-options).
SHUFFLE_SINCE = (1, 58)

_TEST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")

#: Cargo.toml sections and keys that decide what is built and how tests run.
_CONFIG_SECTION = re.compile(
    r"^\s*\[\[?\s*(profile|patch|replace|test|lib|bin|bench|example|workspace|target|"
    r"build-dependencies|features)\b"
)
_CONFIG_KEY = re.compile(
    r"^\s*(build|harness|autotests|autobins|autoexamples|autobenches|autolib|path|"
    r"proc-macro|links|cargo-features|test|doctest|default-run|members|rustflags|"
    r"package|workspace|resolver|edition|rust-version)\s*="
)


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


def target_of(path: str) -> tuple[str, str] | None:
    """(member dir, integration test target) of a test file, None for a helper module that
    is no target of its own (``tests/common/mod.rs``)."""
    parts = path.split("/")
    if "tests" not in parts or not path.endswith(".rs"):
        return None
    i = len(parts) - 1 - parts[::-1].index("tests")
    member = "/".join(parts[:i]) or "."
    rest = parts[i + 1 :]
    if len(rest) == 1:
        return member, rest[0][:-3]
    if len(rest) == 2 and rest[1] == "main.rs":
        return member, rest[0]
    return None


def target_file(path: str) -> str | None:
    """The file that is the root of the target a test file belongs to (itself, or
    ``tests/<dir>/main.rs`` for a module in ``tests/<dir>/``; None when unknown)."""
    if target_of(path):
        return path
    parts = path.split("/")
    if "tests" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("tests")
    rest = parts[i + 1 :]
    # tests/<dir>/mod.rs makes <dir> a module other targets declare, not a target.
    if len(rest) >= 2 and rest[0] != "common" and rest[1:] != ["mod.rs"]:
        return "/".join([*parts[: i + 2], "main.rs"])
    return None


@dataclass(frozen=True)
class RustScope:
    """The tests a test patch defines or changes: test functions its added lines declare or
    whose bodies it changes, and every test of a test file it creates."""

    names: frozenset[tuple[str, str]]  # (target file, function name)
    new_files: frozenset[str]

    def covers(self, test: str) -> bool:
        """Is ``test`` (``tests/x.rs::mod::name``) defined or changed by the test patch?"""
        file, _, name = test.partition("::")
        return file in self.new_files or (file, name.rsplit("::", 1)[-1]) in self.names


def _script(
    entries: list[tuple[str, str, list[str], list[str]]], *, seed: int | None, threads: int = 0
) -> str:
    """The run script: per target (root file, name, required features, test filters), a
    framing line then cargo test with libtest JSON."""
    lines = [RUN_PRELUDE]
    for file, target, features, filters in entries:
        member = target_of(file)
        manifest = "Cargo.toml" if member is None or member[0] == "." else f"{member[0]}/Cargo.toml"
        mark = json.dumps({"type": MARK_TARGET, "file": file})
        cmd = [
            "cargo",
            "test",
            "--offline",
            "--manifest-path",
            manifest,
            "--test",
            target,
            *(["--features", ",".join(features)] if features else []),
            "--",
            "-Z",
            "unstable-options",
            "--format",
            "json",
            "--report-time",
        ]
        if seed is not None:
            cmd += ["--shuffle-seed", str(seed)]
        if threads:
            cmd.append(f"--test-threads={threads}")
        if filters:
            cmd += ["--exact", *filters]
        lines.append(
            f"printf '%s\\n' {shlex.quote(mark)}; "
            + " ".join(shlex.quote(a) for a in cmd)
            + " || rc=1"
        )
    lines.append(f"printf '%s\\n' {shlex.quote(json.dumps({'type': MARK_DONE}))}; exit $rc")
    return "\n".join(lines)


#: Where a twin's build puts its test binaries, and where its run finds them.
TWIN_BUILD = "/tmp/swe-forge-bin"
TWIN_BIN = "/swe-forge-run/bin/rust"


def _member_dir(file: str) -> str:
    member = target_of(file)
    return "/testbed" if member is None or member[0] == "." else f"/testbed/{member[0]}"


def _twin_build_script(entries: list[tuple[str, str, list[str], list[str]]]) -> str:
    """A twin's build: each target's test binary (``cargo test --no-run``), copied out of the
    target dir by the path cargo reports for it."""
    # The warm target dir is copied once, for the first twin; the others build on it.
    prelude = RUN_PRELUDE.replace(
        f"cp -a {TARGET_DIR} {RUN_TARGET}",
        f"[ -d {RUN_TARGET} ] || cp -a {TARGET_DIR} {RUN_TARGET}",
    )
    assert prelude != RUN_PRELUDE
    lines = [prelude, f"mkdir -p {TWIN_BUILD}"]
    for i, (file, target, features, _filters) in enumerate(entries):
        member = target_of(file)
        manifest = "Cargo.toml" if member is None or member[0] == "." else f"{member[0]}/Cargo.toml"
        cmd = [
            "cargo",
            "test",
            "--offline",
            "--no-run",
            "--message-format=json",
            "--manifest-path",
            manifest,
            "--test",
            target,
            *(["--features", ",".join(features)] if features else []),
        ]
        lines.append(
            "exe=$("
            + " ".join(shlex.quote(a) for a in cmd)
            + ' | grep -o \'"executable":"[^"]*"\' | tail -n 1 | cut -d\'"\' -f4)'
            f' && [ -n "$exe" ] && cp "$exe" {TWIN_BUILD}/t{i} || rc=1'
        )
    lines.append("exit $rc")
    return "\n".join(lines)


def _twin_run_script(
    entries: list[tuple[str, str, list[str], list[str]]], seed: int | None, timeout: float
) -> str:
    """A twin's run: per target a framing line, then its binary from the member's directory
    (as cargo runs it) with libtest JSON; a target that did not build has no binary (a
    collection error). ``timeout``: each test's limit, as a limit on the binary of that many
    tests (libtest has none per test)."""
    lines = ["rc=0"]
    for i, (file, _target, _features, filters) in enumerate(entries):
        mark = json.dumps({"type": MARK_TARGET, "file": file})
        binary = f"{TWIN_BIN}/t{i}"
        cmd = [binary, "-Z", "unstable-options", "--format", "json", "--report-time"]
        if seed is not None:
            cmd += ["--shuffle-seed", str(seed)]
        if filters:
            cmd += ["--exact", *filters]
        limit = ""
        if timeout > 0:
            limit = f"timeout -k 5 {int(timeout) * max(1, len(filters))} "
        where = _member_dir(file)
        lines.append(
            f"printf '%s\\n' {shlex.quote(mark)}; "
            f"if [ -x {binary} ]; then cd {shlex.quote(where)} && "
            f"CARGO_MANIFEST_DIR={shlex.quote(where)} {limit}"
            + " ".join(shlex.quote(a) for a in cmd)
            + " || rc=1; else rc=1; fi"
        )
    lines.append(f"printf '%s\\n' {shlex.quote(json.dumps({'type': MARK_DONE}))}; exit $rc")
    return "\n".join(lines)


def scan_targets(tree: Path) -> dict[str, Any]:
    """The integration test targets of the root package of ``tree`` as cargo sees them:
    ``targets`` maps each target's root file to its ``name`` and the ``features`` its
    ``[[test]]`` entry requires (cargo refuses to run it without them); ``modules`` maps a
    shared helper module (``tests/common/mod.rs``, ``tests/helpers.rs`` under
    ``autotests = false``...) to the target root files that declare it with ``mod``.

    Targets come from the auto-discovered ``tests/*.rs`` and ``tests/*/main.rs`` (unless
    ``autotests = false``) and from ``[[test]]`` entries, whose ``path`` may be anywhere and
    whose ``name`` need not be the file's stem."""
    try:
        manifest = tomllib.loads(
            (tree / "Cargo.toml").read_text(encoding="utf-8", errors="replace")
        )
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    pkg = manifest.get("package")
    pkg = pkg if isinstance(pkg, dict) else {}
    tests_dir = tree / "tests"
    files = (
        sorted(p.relative_to(tree).as_posix() for p in tests_dir.rglob("*.rs") if p.is_file())
        if tests_dir.is_dir()
        else []
    )
    targets: dict[str, dict[str, Any]] = {}
    if pkg.get("autotests", True) is not False:
        for f in files:
            rest = f.split("/")[1:]
            if len(rest) == 1:
                targets[f] = {"name": rest[0][:-3], "features": []}
            elif len(rest) == 2 and rest[1] == "main.rs":
                targets[f] = {"name": rest[0], "features": []}
    explicit = manifest.get("test")
    for entry in explicit if isinstance(explicit, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        path = entry.get("path")
        if not isinstance(path, str):
            path = f"tests/{name}.rs"
            if not (tree / path).is_file() and (tree / f"tests/{name}/main.rs").is_file():
                path = f"tests/{name}/main.rs"
        path = path.removeprefix("./")
        feats = entry.get("required-features")
        targets[path] = {
            "name": name,
            "features": sorted(str(x) for x in feats) if isinstance(feats, list) else [],
        }
    modules: dict[str, list[str]] = {}
    # tests/<dir>/main.rs: the modules in tests/<dir>/ are its own.
    dirs = {r.rsplit("/", 1)[0] for r in targets if re.fullmatch(r"tests/[^/]+/main\.rs", r)}
    for f in files:
        if f in targets or f.rsplit("/", 1)[0] in dirs:
            continue  # a target, or a module of a target directory (tests/<dir>/main.rs)
        rest = f.split("/")[1:]
        stem = rest[0][:-3] if len(rest) == 1 else rest[0]
        decl = re.compile(
            rf"^\s*(pub(\([^)]*\))?\s+)?mod\s+{re.escape(stem)}\s*;|{re.escape('/'.join(rest))}\"",
            re.M,
        )
        users = []
        for root in sorted(targets):
            parent = root.rsplit("/", 1)[0]
            own = [x for x in files if x.startswith(parent + "/")] if parent in dirs else [root]
            for g in own:
                try:
                    text = (tree / g).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if decl.search(text):
                    users.append(root)
                    break
        if users:
            modules[f] = users
    return {"targets": targets, "modules": modules}


def _roots(file: str, layout: dict[str, Any] | None) -> list[str]:
    """The target root files a test file belongs to (several for a shared helper module)."""
    if not layout:
        root = target_file(file)
        return [root] if root and target_of(root) else []
    targets = layout.get("targets") or {}
    if file in targets:
        return [file]
    if file in (layout.get("modules") or {}):
        return list(layout["modules"][file])
    root = target_file(file)
    return [root] if root and root in targets else []


def _target(root: str, layout: dict[str, Any] | None) -> tuple[str, list[str]] | None:
    """(target name, required features) of a target root file."""
    if layout:
        found = (layout.get("targets") or {}).get(root)
        if found:
            return str(found["name"]), [str(x) for x in found.get("features") or []]
        return None
    tgt = target_of(root)
    return (tgt[1], []) if tgt else None


def _entries(
    test_files: list[str], layout: dict[str, Any] | None = None
) -> list[tuple[str, str, list[str], list[str]]]:
    roots: list[str] = []
    for f in test_files:
        for root in _roots(f, layout):
            if root not in roots:
                roots.append(root)
    out: list[tuple[str, str, list[str], list[str]]] = []
    for root in sorted(roots):
        tgt = _target(root, layout)
        if tgt:
            out.append((root, tgt[0], tgt[1], []))
    return out


class RustRunner:
    """``cargo test --test <target>`` per integration test target, libtest JSON events."""

    name = "cargo-test"
    #: A test target builds whole: when the test patch's targets do not build before the fix,
    #: the gate runs the base's own tests too (PASS_TO_PASS from them, gates.gate.classify).
    baseline_runs = True

    def __init__(
        self, module: str, toolchain: str = "", layout: dict[str, Any] | None = None
    ) -> None:
        self.module = module
        self.toolchain = toolchain
        #: The test targets of the tree (:func:`scan_targets`); None: guessed from paths.
        self.layout = layout

    def _shuffles(self) -> bool:
        if not self.toolchain:
            return True
        return _vkey(self.toolchain)[:2] >= SHUFFLE_SINCE

    def argv(self, test_files: list[str], *, order_seed: int = 0) -> list[str]:
        """The test command (a shell script: one cargo test per target)."""
        seed = order_seed if self._shuffles() else None
        threads = 0 if self._shuffles() else 1 + order_seed % 4
        return [
            "/bin/sh",
            "-c",
            _script(_entries(test_files, self.layout), seed=seed, threads=threads),
        ]

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The command as one shell line (recorded in manifests)."""
        return " ".join(shlex.quote(a) for a in self.argv(test_files, order_seed=order_seed))

    def settle(self, result: RunResult) -> None:
        """Mark the targets whose test binary died mid-run as crashed.

        The harness reports a target whose suite started but never ended as a collection
        error. When some of its tests were reported, the binary was built and ran: it died
        (an abort, a double panic, a signal) at a point the shuffled order and the threads
        decide, so the tests it had not reported were not run in this run and say nothing
        about flakiness (``gates.gate._observed``). Which test killed it libtest does not
        say (several run at once), so none of them is marked failed here."""
        crashed = set(result.crashed)
        for target in result.collect_errors:
            if any(key.startswith(target + "::") for key in result.tests):
                crashed.add(target)
        result.crashed = sorted(crashed)

    def run_spec(
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        return {
            "argv": self.argv(test_files, order_seed=order_seed),
            "env": dict(RUN_ENV),
            "report": {
                "format": "libtest-json",
                "files": [e[0] for e in _entries(test_files, self.layout)],
            },
        }


class RustEcosystem:
    """The Rust adapter (see the module docstring)."""

    name = "rust"
    runner_name = "cargo-test"

    def detect(self, read: Reader) -> bool:
        """A Cargo.toml at the root."""
        return read("Cargo.toml") is not None

    def is_test_file(self, path: str) -> bool:
        """``.rs`` files under a ``tests/`` directory (integration tests and their modules)."""
        return path.endswith(".rs") and ("/tests/" in f"/{path}")

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (not deleted ones)."""
        return patched_test_files(test_patch, self.is_test_file)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> RustScope:
        """Functions the test patch declares or whose bodies it changes, per target file.

        With the base file, read on the patched file: a changed line belongs to every
        function it is nested in (a test often declares helper functions inside itself, as
        glob's one long ``main`` does), found by indentation. Without it, only what the
        hunks themselves show counts."""
        from swe_forge.diffs import PatchApplyError, apply_file_patch
        from swe_forge.gates.scope import _touched_lines

        names: set[tuple[str, str]] = set()
        new_files: set[str] = set()
        for fp in parse_patch(test_patch):
            if not fp.new_path or not self.is_test_file(fp.new_path):
                continue
            root = target_file(fp.new_path)
            if root is None:
                continue
            if fp.old_path is None and root == fp.new_path:
                new_files.add(root)
            base = read_base(fp.old_path) if read_base is not None and fp.old_path else None
            if base is not None:
                try:
                    text = apply_file_patch(base, fp).decode("utf-8", "replace")
                except PatchApplyError:
                    text = None
                if text is not None:
                    lines = text.splitlines()
                    for n in sorted(_touched_lines(fp)):
                        if 1 <= n <= len(lines) and lines[n - 1].strip():
                            names.update((root, f) for f in _enclosing_fns(lines, n - 1))
                    continue
            for hunk in fp.hunks:
                current = ""
                for tag, body in hunk.lines:
                    line = body.decode("utf-8", "replace")
                    m = _TEST_FN.match(line)
                    if m:
                        current = m.group(1)
                        if tag == ADDED:
                            names.add((root, current))
                    elif tag in (ADDED, REMOVED) and current and line.strip():
                        names.add((root, current))
                    if line.rstrip() == "}" and not line.startswith(" "):
                        current = ""
        return RustScope(frozenset(names), frozenset(new_files))

    def runner(self, module: str, packages: list[str] | None = None) -> RustRunner:
        """The gate's runner."""
        return RustRunner(module)

    def runner_for(self, rec: ImageRecord) -> RustRunner:
        """The gate's runner for the images of ``rec``: its toolchain (shuffling or not) and
        the test targets of its tree (names, required features, shared modules)."""
        recipe = rec.recipe or {}
        layout = (recipe.get("harness") or {}).get("layout")
        return RustRunner(
            str(rec.project_name or ""),
            str(recipe.get("toolchain") or "").removeprefix("rust-"),
            layout if isinstance(layout, dict) else None,
        )

    # -------------------------------------------------------------- judge's files, capabilities
    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """.cargo/, build.rs, rust-toolchain*, vendor/ and Cargo.toml's build and test
        configuration (unless the gold patch changes the same)."""
        out: list[dict[str, str]] = []
        for path in paths_beyond_gold(patch, gold_patch):
            parts = path.split("/")
            base = parts[-1]
            why = ""
            if ".cargo" in parts[:-1]:
                why = "cargo's configuration decides sources, flags and the test runner"
            elif base == "build.rs":
                why = "a build script runs arbitrary code when the tests are compiled"
            elif base in ("rust-toolchain", "rust-toolchain.toml"):
                why = "the toolchain file decides which compiler runs the tests"
            elif parts[0] == "vendor" or "/vendor/" in f"/{path}":
                why = "vendored crates decide what code the tests link against"
            if why:
                out.append(runner_config(f"{path}: {why}"))
        out += line_violations(
            patch,
            gold_patch,
            _manifest_lines,
            "Cargo.toml's build, profile, patch and test settings decide what code and which "
            "test runner the tests use",
        )
        return out

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the patch's non-test Rust files use after it that they did not use
        before (read on their token streams, :mod:`swe_forge.ecosystems.rust.scan`)."""
        return source_capabilities(patch, read_base, self._source, scan)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's non-test Rust files (outside vendor/) use."""
        own = [p for p in paths if not p.startswith("vendor/") and "/vendor/" not in p]
        return tree_source_capabilities(own, read, self._source, scan)

    def _source(self, path: str) -> bool:
        return path.endswith(".rs") and not self.is_test_file(path)

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files locked during a run: the test patch's paths, the tests/ trees they are in,
        the manifests."""
        files = set(touched_paths(test_patch)) | {"Cargo.toml", "Cargo.lock"}
        trees = set()
        for path in touched_paths(test_patch):
            parts = path.split("/")
            if "tests" in parts[:-1]:
                i = len(parts) - 1 - parts[:-1][::-1].index("tests") - 1
                trees.add("/".join(parts[: i + 1]))
        return {"files": sorted(files), "trees": sorted(trees)}

    # ------------------------------------------------------------------------------ verifying
    def run_job(
        self,
        task: TaskManifest,
        test_patch_path: str,
        *,
        timeout: float,
        output_limit: int,
        twins: list[dict[str, Any]] | None = None,
        files: list[dict[str, str]] | None = None,
        extra: dict[str, dict[str, Any]] | None = None,
        test_timeout: float = 0.0,
        rng: random.Random | None = None,
    ) -> dict[str, Any]:
        """The verifier's run: the expected tests of each target (the calibration copies
        ``extra`` names included), as twins or as one run."""
        rng = rng or random.SystemRandom()
        expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS) + sorted(extra or {})
        by_file: dict[str, list[str]] = {}
        for t in expected:
            file, _, name = t.partition("::")
            by_file.setdefault(file, []).append(name)
        layout = task.harness.get("layout")
        layout = layout if isinstance(layout, dict) else None
        entries = []
        for file in sorted(by_file):
            tgt = _target(file, layout)
            if tgt:
                entries.append((file, tgt[0], tgt[1], sorted(by_file[file])))
        toolchain = str(task.image.get("toolchain") or "").removeprefix("rust-")
        runner = RustRunner(str(task.harness.get("module") or ""), toolchain)
        seed = rng.randrange(2**31) if runner._shuffles() else None
        job = verify_job(
            test_patch_path,
            self.protect(task.test_patch),
            argv=["/bin/sh", "-c", _script(entries, seed=seed)],
            env=dict(RUN_ENV),
            timeout=timeout,
            output_limit=output_limit,
            report={"format": "libtest-json", "files": [e[0] for e in entries]},
            twins=twins,
            files=files,
            canary_map=extra,
        )
        if twins is not None:
            # Twins build first: each twin's test binaries compiled, then the held-out test
            # files and the build's own outputs closed to the tests' user (what a test process
            # can read is its own twin's program), then each twin runs its binaries.
            job["run"]["build"] = {
                "argv": ["/bin/sh", "-c", _twin_build_script(entries)],
                "env": dict(RUN_ENV),
                "timeout": timeout,
                "keep": [{"from": TWIN_BUILD, "to": TWIN_BIN}],
            }
            job["run"]["argv"] = ["/bin/sh", "-c", _twin_run_script(entries, seed, test_timeout)]
            hidden = [f"{RUN_TARGET}/debug/{d}" for d in ("deps", "incremental", "build")]
            job["run"]["hide"] = sorted(patched_test_files(task.test_patch, self.is_test_file))
            job["run"]["hide"] += [*hidden, f"{RUN_TARGET}/debug/.fingerprint"]
        return job

    def unit_of(self, test: str) -> str:
        """Each test target is a binary of its own."""
        return test.split("::", 1)[0]

    # ------------------------------------------------------------------------------- images
    def build(self, builder: ImageBuilder, candidate: Candidate) -> ImageRecord:
        """Toolchain, vendored crates, env and instance images (failures come back in the
        record)."""
        from swe_forge.ecosystems.image import ecosystem_base
        from swe_forge.images.base import BaseRecipe
        from swe_forge.images.build import ImageRecord, failed, finish_instance, record_env

        rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
        stage = "recipe"
        try:
            repo = builder._repo(candidate)
            commit = repo.commit(candidate.base_commit)
            got = repo.blob_at(candidate.base_commit, "Cargo.toml")
            if got is None:
                raise BuildError("no Cargo.toml at the base commit")
            info = cargo_info(got[1].decode("utf-8", "replace"))
            pin = ""
            for name in ("rust-toolchain.toml", "rust-toolchain"):
                found = repo.blob_at(candidate.base_commit, name)
                if found is not None:
                    pin = toolchain_pin(found[1].decode("utf-8", "replace"))
                    break
            date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
            version = choose_toolchain(date, info.get("rust-version", ""), pin)
            rec.project_name = info.get("name", "")
            rec.recipe = {
                "ecosystem": "rust",
                "crate": info.get("name", ""),
                "rust_version": info.get("rust-version", ""),
                "toolchain_file": pin,
                "toolchain": f"rust-{version}",
                "toolchain_source": f"{DIST}/channel-rust-{version}.toml: {', '.join(COMPONENTS)}",
                "base_date": date,
                "env": dict(RUST_ENV),
            }
            stage = "toolchain"
            t = time.perf_counter()
            prefix = fetch_toolchain(version, builder.cache)
            rec.seconds["toolchain"] = round(time.perf_counter() - t, 3)
            stage = "base"
            base = ecosystem_base(builder, rec, BaseRecipe.for_distro("bookworm").build())
            stage = "resolve"
            t = time.perf_counter()
            with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="rust-") as tmp:
                ctx = Path(tmp)
                cargo_dir = ctx / "cargo"
                cargo_dir.mkdir()
                locks = self._vendor(repo, candidate, prefix, ctx, cargo_dir, rec.recipe)
                (cargo_dir / "config.toml").write_text(
                    CARGO_CONFIG.format(vendor=f"{CARGO_DIR}/vendor")
                )
                rec.lock_digest = digest_text(f"rust-{version}", *locks)
                rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
                rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
                stage = "env"
                env_tag, env_id, env_s = self._env_image(
                    builder, base.tag, prefix, ctx, rec.lock_digest
                )
            record_env(rec, env_tag, env_id, env_s)
            stage = "instance"
            finish_instance(
                rec,
                builder,
                repo,
                candidate,
                install_cmd=INSTALL.format(
                    cargo=CARGO_DIR, target=TARGET_DIR, features=_feature_builds(rec.recipe)
                ),
                extra_labels={
                    f"{LABEL_PREFIX}.lock": rec.lock_digest,
                    f"{LABEL_PREFIX}.ecosystem": "rust",
                    f"{LABEL_PREFIX}.toolchain": f"rust-{version}",
                },
            )
        except DockerError:
            raise
        except (SweForgeError, subprocess.TimeoutExpired, OSError) as exc:
            failed(rec, stage, exc)
        return rec

    def _vendor(
        self,
        repo: Any,
        candidate: Candidate,
        prefix: Path,
        ctx: Path,
        cargo_dir: Path,
        recipe: dict[str, Any],
    ) -> list[str]:
        """Crates of the base tree and of the tree with both patches into
        ``cargo_dir/vendor``; returns the lock texts. A lock generated here (none committed)
        is kept as ``cargo_dir/Cargo.lock``."""
        from swe_forge.git.scrub import scrubbed_checkout

        base_tree, gold_tree = ctx / "base", ctx / "gold"
        scrubbed_checkout(repo, candidate.base_commit, base_tree)
        shutil.rmtree(base_tree / ".git", ignore_errors=True)
        shutil.copytree(base_tree, gold_tree, symlinks=True)
        git_apply(gold_tree, (candidate.patch, candidate.test_patch))
        committed = (base_tree / "Cargo.lock").is_file()
        recipe["lock"] = "committed" if committed else "generated on the host"
        home = ctx / "cargo-home"
        home.mkdir()
        # The registry index and downloads are cached per machine, not per build.
        host_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
        env = {"CARGO_HOME": str(host_home), "RUSTC": str(prefix / "bin" / "rustc")}
        if not committed:
            # No lock at the base: resolve once, as of the base commit (crates published
            # after it are not seen: cargo's --publish-time, unstable, hence RUSTC_BOOTSTRAP),
            # preferring crate versions whose rust-version the chosen toolchain meets
            # (cargo's MSRV-aware fallback resolver, which reads the toolchain's version where
            # the package sets none), and use the same lock for the tree with the patches.
            when = datetime.fromtimestamp(repo.commit(candidate.base_commit).commit_time, UTC)
            stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            gen_env = {**env, "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS": "fallback"}
            manifest = str(base_tree / "Cargo.toml")
            gen = _cargo_run(
                lock_argv(host_cargo(), manifest, stamp),
                cwd=ctx,
                env={**gen_env, "RUSTC_BOOTSTRAP": "1"},
            )
            recipe["lock_resolver"] = (
                f"host cargo, publish-time {stamp}, incompatible-rust-versions = fallback"
            )
            if gen.returncode != 0:
                # A registry without publish times, or a dependency that needs a crate
                # published later (a git or path dependency's): resolve without the date.
                gen = _cargo_run(lock_argv(host_cargo(), manifest, ""), cwd=ctx, env=gen_env)
                recipe["lock_resolver"] = "host cargo, incompatible-rust-versions = fallback"
            if gen.returncode != 0:
                tail = "\n".join(gen.stderr.strip().splitlines()[-15:])
                raise BuildError(f"cargo generate-lockfile failed:\n{tail}")
            lock = base_tree / "Cargo.lock"
            if _vkey(prefix.name)[:2] < (1, 78):
                # Lockfile v4 (the host's default) is read from cargo 1.78 on; v3 says the
                # same for crates.io dependencies and is read from 1.53.
                lock.write_text(
                    re.sub(r"(?m)^version = 4$", "version = 3", lock.read_text(), count=1)
                )
            shutil.copy2(lock, gold_tree / "Cargo.lock")
        argv_tail = [
            "vendor",
            "--versioned-dirs",
            "--manifest-path",
            str(base_tree / "Cargo.toml"),
            "--sync",
            str(gold_tree / "Cargo.toml"),
            str(cargo_dir / "vendor"),
        ]
        used = f"rust-{prefix.name}"
        done = _cargo_run([str(prefix / "bin" / "cargo"), *argv_tail], cwd=ctx, env=env)
        if done.returncode != 0:
            # An old cargo cannot read a newer lockfile format or index: the host's cargo
            # downloads the same locked versions.
            used = "host " + _cargo_run([host_cargo(), "--version"], cwd=ctx, env={}).stdout.strip()
            done = _cargo_run([host_cargo(), *argv_tail], cwd=ctx, env=env)
            if done.returncode != 0:
                tail = "\n".join(done.stderr.strip().splitlines()[-15:])
                raise BuildError(f"cargo vendor failed:\n{tail}")
        recipe["vendor_cargo"] = used
        (cargo_dir / "vendor").mkdir(exist_ok=True)
        # Crates keep their archives' modes, and some ship owner-only files (magenta 0.1.1's
        # are 0640): the tests run as another user and cargo must read every vendored crate.
        _world_readable(cargo_dir / "vendor")
        # The test targets as cargo will see them with both patches applied (a [[test]]
        # entry the gold patch adds, its required features, shared helper modules).
        recipe["harness"] = {"layout": scan_targets(gold_tree)}
        locks = [
            (tree / "Cargo.lock").read_text() if (tree / "Cargo.lock").is_file() else ""
            for tree in (base_tree, gold_tree)
        ]
        if not committed and (base_tree / "Cargo.lock").is_file():
            shutil.copy2(base_tree / "Cargo.lock", cargo_dir / "Cargo.lock")
        shutil.rmtree(base_tree)
        shutil.rmtree(gold_tree)
        return locks

    def _env_image(
        self, builder: ImageBuilder, base_tag: str, prefix: Path, ctx: Path, lock: str
    ) -> tuple[str, str, float]:
        from swe_forge.ecosystems.image import build_ecosystem_env

        env_line = " ".join(f"{k}={v}" for k, v in sorted(RUST_ENV.items()))
        dockerfile = ENV_DOCKERFILE.format(
            base=base_tag,
            root=RUST_ROOT,
            cargo=CARGO_DIR,
            path=RUST_PATH_ENV,
            env=env_line,
            # The config goes into the image with the vendored crates: a change to it is a
            # new env image.
            config=digest_text(CARGO_CONFIG)[:16],
        )
        return build_ecosystem_env(
            builder,
            "rust",
            base_tag=base_tag,
            dockerfile=dockerfile,
            lock=lock,
            ctx=ctx,
            copies={"rust": prefix},
            dockerignore="cargo-home\n",
        )


def _enclosing_fns(lines: list[str], index: int) -> list[str]:
    """The functions ``lines[index]`` is in, innermost first (itself when it declares one).

    By indentation, as rustfmt lays code out: a function encloses the line when every
    non-blank line from its declaration down to the line is indented deeper than it (its
    closing brace, at its own indentation, would end it)."""
    found: list[str] = []
    deepest = len(lines[index]) - len(lines[index].lstrip())
    m = _TEST_FN.match(lines[index])
    if m:
        found.append(m.group(1))
    for j in range(index - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = _TEST_FN.match(line)
        if m and indent < deepest:
            found.append(m.group(1))
        deepest = min(deepest, indent)
        if deepest == 0 and not m:
            break
    return found


def _world_readable(root: Path) -> None:
    """Everything below ``root`` readable (and directories searchable) by every user; the
    owner's write and execute bits are kept, nobody else gets write."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode & 0o7777
        wanted = (mode | 0o555 if path.is_dir() else mode | 0o444) & ~0o022
        if path.is_file() and mode & 0o100:
            wanted |= 0o111
        if wanted != mode:
            path.chmod(wanted)


def _feature_builds(recipe: dict[str, Any]) -> str:
    """The instance's extra warm builds: one per set of required features of a test target."""
    layout = (recipe.get("harness") or {}).get("layout") or {}
    sets = sorted(
        {",".join(t["features"]) for t in (layout.get("targets") or {}).values() if t["features"]}
    )
    return "".join(INSTALL_FEATURES.format(features=shlex.quote(f)) for f in sets)


def _manifest_lines(patch: str) -> set[tuple[str, str]]:
    """(path, line) of Cargo.toml lines a patch adds or removes that are build or test
    configuration: a configuration key, a section header of one, or any line inside such a
    section."""
    out: set[tuple[str, str]] = set()
    for path, lines in file_lines(patch, "Cargo.toml"):
        section = False
        for tag, body in lines:
            line = body.rstrip("\r\n")
            if line.lstrip().startswith("["):
                section = bool(_CONFIG_SECTION.match(line))
                if not section and line.strip().startswith("[") and "." in line:
                    # [dependencies.foo] with a path/git key inside is caught by the key.
                    section = False
            if tag in (ADDED, REMOVED) and (section or _CONFIG_KEY.match(line)):
                out.add((path, signed(tag, line.strip())))
            elif tag in (ADDED, REMOVED) and re.search(r"\b(path|git)\s*=", line):
                # An inline table dependency on a local or git source replaces a crate.
                out.add((path, signed(tag, line.strip())))
    return out
