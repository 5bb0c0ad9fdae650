"""Rust's dependencies, resolved on the host: ``cargo vendor`` (the chosen toolchain's cargo,
or the host's when that one cannot read the lockfile) of the base tree and of the tree with
the gold and test patches into one directory the env image copies in, the lock generated as
of the base commit when none is committed, the gold tree's lock (the judge's lock for every
run), and the test targets of the patched tree.

Used by :mod:`swe_forge.ecosystems.rust.image`, which writes the cargo configuration that
replaces crates.io by the vendored directory.
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import git_apply
from swe_forge.ecosystems.rust.runner import scan_targets
from swe_forge.ecosystems.rust.toolchain import _cargo_run, _vkey, host_cargo, lock_argv
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    from swe_forge.records import Candidate


def vendor_crates(
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
        lock.write_text(readable_lock(lock.read_text(), prefix.name))
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
    if locks[1]:
        # cargo vendor resolved the gold tree (its manifests as the gold patch leaves them)
        # and wrote its lock: the judge's lock for every run (runner.RUN_PRELUDE).
        (cargo_dir / "Cargo.gold.lock").write_text(readable_lock(locks[1], prefix.name))
    shutil.rmtree(base_tree)
    shutil.rmtree(gold_tree)
    return locks


def readable_lock(text: str, toolchain: str) -> str:
    """A lock the toolchain's cargo reads: lockfile v4 (the host's default) is read from
    cargo 1.78 on; v3 says the same for crates.io dependencies and is read from 1.53."""
    if _vkey(toolchain)[:2] < (1, 78):
        return re.sub(r"(?m)^version = 4$", "version = 3", text, count=1)
    return text


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
