"""What the adapters' image builds share: the base image of a recipe, an env image built (or
reused) from a context the adapter has filled, the instance image on it, and the record of it
all (an :class:`~swe_forge.records.ImageRecord`).

The adapters alone use these; ``images/build.py`` keeps the builder that calls the adapter,
``images/instance.py`` the instance image's steps.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import Builder, digest_text
from swe_forge.engine import LABEL_PREFIX, local_name
from swe_forge.errors import BuildError, SweForgeError, Unsupported
from swe_forge.excerpt import excerpt
from swe_forge.images.base import BaseImage, BaseRecipe, ensure_base
from swe_forge.images.instance import build_instance, layer_sizes

if TYPE_CHECKING:
    from swe_forge.git.repo import GitRepository
    from swe_forge.records import Candidate, ImageRecord


def ecosystem_base(builder: Builder, rec: ImageRecord, recipe: BaseRecipe) -> BaseImage:
    """Build (or reuse) the base image of an ecosystem's ``recipe`` and record it in ``rec``."""
    base = ensure_base(
        builder.engine,
        recipe,
        mirror=builder.config.images.debian_mirror,
        work_dir=builder.work_dir,
        log_dir=builder.log_dir,
    )
    rec.base_image = base.tag
    rec.reused["base"] = not base.built
    return base


def build_ecosystem_env(
    builder: Builder,
    ecosystem: str,
    *,
    base_tag: str,
    dockerfile: str,
    lock: str,
    ctx: Path,
    copies: dict[str, Path],
    dockerignore: str,
) -> tuple[str, str, float]:
    """Build (or reuse) an ecosystem's env image from the context ``ctx``, which already
    holds what ``dockerfile`` copies but the trees of ``copies`` (name in the context ->
    host directory, copied only when the image is built). Tagged by the Dockerfile and the
    lock; returns (tag, id, seconds: 0.0 when reused)."""
    tag = f"{local_name('env')}:{ecosystem}-{digest_text(dockerfile, lock)[:16]}"
    found = builder.engine.image(tag)
    if found is not None:
        return tag, found.id, 0.0
    start = time.perf_counter()
    for name, src in copies.items():
        shutil.copytree(src, ctx / name, symlinks=True)
    (ctx / "Dockerfile").write_text(dockerfile)
    (ctx / ".dockerignore").write_text(dockerignore)
    built = builder.engine.build(
        ctx,
        tag,
        labels={
            f"{LABEL_PREFIX}.kind": "env",
            f"{LABEL_PREFIX}.ecosystem": ecosystem,
            f"{LABEL_PREFIX}.base": base_tag,
            f"{LABEL_PREFIX}.lock": lock,
        },
        log_path=builder.log_dir / f"env-{ecosystem}-{lock[:16]}.log",
    )
    return tag, built.id, time.perf_counter() - start


def record_env(
    rec: ImageRecord, tag: str, image_id: str, seconds: float, *, reused: bool | None = None
) -> None:
    """Fill ``rec`` with the env image: its tag, id, whether it was reused (by default: it
    took no time to build) and the seconds its build took."""
    rec.env_image, rec.env_image_id = tag, image_id
    rec.reused["env"] = seconds == 0.0 if reused is None else reused
    rec.seconds["env"] = round(seconds, 3)


def finish_instance(
    rec: ImageRecord,
    builder: Builder,
    repo: GitRepository,
    candidate: Candidate,
    *,
    extra_labels: dict[str, str],
    install: bool = True,
    install_cmd: str | None = None,
) -> None:
    """Build the instance image on the env image of ``rec`` (:func:`build_instance`) and fill
    ``rec`` with it: tag, id, scrubbed commit, reuse, seconds and sizes."""
    engine, env_tag = builder.engine, rec.env_image
    tag, image_id, scrubbed, source_bytes, git_bytes, inst_s = build_instance(
        engine,
        env_tag,
        repo,
        candidate,
        install=install,
        install_cmd=install_cmd,
        work_dir=builder.work_dir,
        log_dir=builder.log_dir,
        extra_labels=extra_labels,
    )
    rec.instance_image, rec.instance_image_id, rec.scrubbed_commit = tag, image_id, scrubbed
    rec.reused["instance"] = inst_s == 0.0
    rec.seconds["instance"] = round(inst_s, 3)
    rec.sizes["source_tree"] = source_bytes
    rec.sizes["git_dir"] = git_bytes
    rec.sizes["instance_layer"] = layer_sizes(engine, tag, env_tag)
    env_info = engine.image(env_tag)
    rec.sizes["env_image"] = env_info.size if env_info else 0


def failed(rec: ImageRecord, stage: str, exc: BaseException) -> ImageRecord:
    """Mark ``rec`` failed at ``stage`` (reason ``<stage>_failed``, or an unsupported
    project's own code: :class:`~swe_forge.errors.Unsupported`): a swe-forge error's
    message (and a build error's hint), or another exception's type and message."""
    rec.status = "failed"
    rec.reason = exc.reason if isinstance(exc, Unsupported) else f"{stage}_failed"
    if isinstance(exc, SweForgeError):
        rec.detail = excerpt(str(exc))
        if isinstance(exc, BuildError) and exc.hint:
            rec.detail += f"\n{exc.hint}"
    else:
        rec.detail = excerpt(f"{type(exc).__name__}: {exc}")
    return rec
