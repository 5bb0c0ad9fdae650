"""Rust's images: the cargo configuration and the env image (the merged toolchain at
``/usr/local/rust``, the vendored crates at ``/opt/cargo``), the instance's build step (every
integration test target compiled offline, once per set of required features), and the build
of a candidate's images stage by stage (recipe, toolchain, base, resolve, env, instance), a
failure recorded with its stage.

:meth:`swe_forge.ecosystems.rust.RustEcosystem.build` is :func:`build_images`; the crates
come from :mod:`swe_forge.ecosystems.rust.deps`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import digest_text
from swe_forge.ecosystems.image import failed, finish_instance, record_env
from swe_forge.ecosystems.rust.deps import vendor_crates
from swe_forge.ecosystems.rust.runner import (
    BUILD_ENV,
    CARGO_DIR,
    RUST_ENV,
    RUST_PATH_ENV,
    RUST_ROOT,
    TARGET_DIR,
)
from swe_forge.ecosystems.rust.toolchain import (
    COMPONENTS,
    DIST,
    cargo_info,
    choose_toolchain,
    fetch_toolchain,
    toolchain_pin,
)
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError
from swe_forge.records import ImageRecord

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate

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
# the gold tree's lock at {cargo}/Cargo.gold.lock (the judge's lock of every run)
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


def build_images(builder: Builder, candidate: Candidate) -> ImageRecord:
    """Toolchain, vendored crates, env and instance images (failures come back in the
    record)."""
    from swe_forge.ecosystems.image import ecosystem_base
    from swe_forge.images.base import BaseRecipe

    rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
    stage = "recipe"
    try:
        repo = builder.repo(candidate)
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
            locks = vendor_crates(repo, candidate, prefix, ctx, cargo_dir, rec.recipe)
            (cargo_dir / "config.toml").write_text(
                CARGO_CONFIG.format(vendor=f"{CARGO_DIR}/vendor")
            )
            rec.lock_digest = digest_text(f"rust-{version}", *locks)
            rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
            rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
            stage = "env"
            env_tag, env_id, env_s = _env_image(builder, base.tag, prefix, ctx, rec.lock_digest)
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


def _env_image(
    builder: Builder, base_tag: str, prefix: Path, ctx: Path, lock: str
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


def _feature_builds(recipe: dict[str, Any]) -> str:
    """The instance's extra warm builds: one per set of required features of a test target."""
    layout = (recipe.get("harness") or {}).get("layout") or {}
    sets = sorted(
        {",".join(t["features"]) for t in (layout.get("targets") or {}).values() if t["features"]}
    )
    return "".join(INSTALL_FEATURES.format(features=shlex.quote(f)) for f in sets)
