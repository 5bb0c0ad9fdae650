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
  ``#[ctor]``, ``extern "C"``, ``#[no_mangle]``, ``env::args``, ``thread::current``
  (the running test's name), panic hooks, text shaped like
  libtest's JSON, ``include!``...) unless the base code or the gold patch already does: read
  on the token stream of the syntax tree, macros and ``cfg_attr`` included, ``use`` aliases
  resolved and strings folded (:mod:`swe_forge.ecosystems.rust.scan`).

Modules: ``toolchain`` (the release by date, fetched and merged), ``runner`` (cargo test, its
scripts and the tree's test targets), ``scope`` (the tests a patch touches), ``canary`` (the
decoys), ``scan`` (capabilities on the syntax tree); this module is the adapter that puts them
together (images, judge's files, verification jobs).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
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
from swe_forge.ecosystems.decoys import HostCanaries
from swe_forge.ecosystems.rust.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.rust.scan import scan
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError

if TYPE_CHECKING:
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

from swe_forge.ecosystems.rust.runner import (
    _TEST_FN,
    BUILD_ENV,
    CARGO_DIR,
    RUN_ENV,
    RUN_TARGET,
    RUST_ENV,
    RUST_PATH_ENV,
    RUST_ROOT,
    TARGET_DIR,
    TWIN_BIN,
    TWIN_BUILD,
    RustRunner,
    _script,
    _target,
    _twin_build_script,
    _twin_run_script,
    scan_targets,
    target_file,
)
from swe_forge.ecosystems.rust.scope import (
    RustScope,
    _enclosing_fns,
)
from swe_forge.ecosystems.rust.toolchain import (
    COMPONENTS,
    DIST,
    _cargo_run,
    _vkey,
    cargo_info,
    choose_toolchain,
    fetch_toolchain,
    host_cargo,
    lock_argv,
    toolchain_pin,
)

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


class RustEcosystem(HostCanaries):
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
        from swe_forge.diffs import PatchApplyError, apply_file_patch, touched_lines

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
                    for n in sorted(touched_lines(fp)):
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
        # Every .rs file, a test's name or directory notwithstanding: a source file's
        # ``mod`` (or ``#[path]``) can compile any of them into the library.
        return source_capabilities(patch, read_base, lambda p: p.endswith(".rs"), scan)

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

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """No base file besides the changed ones: the scan reads those alone."""
        return []

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
