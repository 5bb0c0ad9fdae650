"""What every non-pytest adapter's image build shares: the base image of its recipe, and an env
image built (or reused) from a context it has filled.

The adapters alone use these; ``images/build.py`` keeps the builder, the records and the steps
every ecosystem's instance image shares.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import digest_text
from swe_forge.engine import LABEL_PREFIX, local_name
from swe_forge.images.base import BaseImage, BaseRecipe, ensure_base

if TYPE_CHECKING:
    from swe_forge.images.build import ImageBuilder, ImageRecord


def ecosystem_base(builder: ImageBuilder, rec: ImageRecord, recipe: BaseRecipe) -> BaseImage:
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
    builder: ImageBuilder,
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
