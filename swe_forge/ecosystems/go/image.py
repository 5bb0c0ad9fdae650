"""Go's images: the env image (the toolchain at ``/usr/local/go``, the module cache at
``/opt/go/modcache``), the instance's build step, and the build of a candidate's images stage
by stage (recipe, toolchain, base, resolve, env, instance), a failure recorded with its stage.

:meth:`swe_forge.ecosystems.go.GoEcosystem.build` is :func:`build_images`; the modules come
from :mod:`swe_forge.ecosystems.go.deps`.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import digest_text
from swe_forge.ecosystems.go.deps import _make_writable, fetch_modules
from swe_forge.ecosystems.go.runner import BUILD_CACHE, GO_ENV, GO_PATH_ENV, GOROOT, MODCACHE
from swe_forge.ecosystems.go.toolchain import choose_toolchain, fetch_toolchain, go_mod_info
from swe_forge.ecosystems.image import failed, finish_instance, record_env
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError
from swe_forge.records import ImageRecord

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate

ENV_DOCKERFILE = """\
FROM {base}
COPY go {goroot}
COPY modcache {modcache}
ENV PATH={path} {env}
"""


#: The instance's build step: every module the tests need must be in the cache (a missing
#: one fails the build here, not a test later), and the build cache is warmed so that a test
#: run compiles only what a patch changes.
INSTALL = (
    "export GOCACHE={cache} HOME=/root && cd /testbed && go list -deps -test ./... >/dev/null "
    "&& {{ go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true; }} "
    "&& chmod -R a+rX {cache}"
)


def build_images(builder: Builder, candidate: Candidate) -> ImageRecord:
    """Toolchain, module cache, env and instance images (failures come back in the record)."""
    from swe_forge.ecosystems.image import ecosystem_base
    from swe_forge.images.base import BaseRecipe

    rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
    stage = "recipe"
    try:
        repo = builder.repo(candidate)
        commit = repo.commit(candidate.base_commit)
        got = repo.blob_at(candidate.base_commit, "go.mod")
        if got is None:
            raise BuildError(
                "no go.mod at the base commit: a Go project from before modules "
                "(GOPATH mode) is not supported",
                hint="its dependencies are not pinned anywhere in the repository",
            )
        info = go_mod_info(got[1].decode("utf-8", "replace"))
        module = info.get("module", "")
        date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
        version = choose_toolchain(date, info.get("go", ""), info.get("toolchain", ""))
        rec.project_name = module
        rec.recipe = {
            "ecosystem": "go",
            "module": module,
            "go_directive": info.get("go", ""),
            "toolchain": f"go{version}",
            "toolchain_source": f"golang.org/toolchain@v0.0.1-go{version}.linux-amd64",
            "base_date": date,
            "env": dict(GO_ENV),
        }
        stage = "toolchain"
        t = time.perf_counter()
        goroot = fetch_toolchain(version, builder.cache)
        rec.seconds["toolchain"] = round(time.perf_counter() - t, 3)
        stage = "base"
        base = ecosystem_base(builder, rec, BaseRecipe.for_distro("bookworm"))
        stage = "resolve"
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="go-") as tmp:
            ctx = Path(tmp)
            modcache = ctx / "modcache"
            modcache.mkdir()
            sums = fetch_modules(repo, candidate, goroot, ctx, modcache)
            rec.lock_digest = digest_text(f"go{version}", *sums)
            rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
            rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
            stage = "env"
            env_tag, env_id, env_s = _env_image(
                builder, base.tag, goroot, modcache, ctx, rec.lock_digest
            )
            _make_writable(modcache)
        record_env(rec, env_tag, env_id, env_s)
        stage = "instance"
        finish_instance(
            rec,
            builder,
            repo,
            candidate,
            install_cmd=INSTALL.format(cache=BUILD_CACHE),
            extra_labels={
                f"{LABEL_PREFIX}.lock": rec.lock_digest,
                f"{LABEL_PREFIX}.ecosystem": "go",
                f"{LABEL_PREFIX}.toolchain": f"go{version}",
            },
        )
    except DockerError:
        raise
    except (SweForgeError, subprocess.TimeoutExpired, OSError) as exc:
        failed(rec, stage, exc)
    return rec


def _env_image(
    builder: Builder,
    base_tag: str,
    goroot: Path,
    modcache: Path,
    ctx: Path,
    lock: str,
) -> tuple[str, str, float]:
    from swe_forge.ecosystems.image import build_ecosystem_env

    env_line = " ".join(f"{k}={v}" for k, v in sorted(GO_ENV.items()))
    dockerfile = ENV_DOCKERFILE.format(
        base=base_tag, goroot=GOROOT, modcache=MODCACHE, path=GO_PATH_ENV, env=env_line
    )
    # Module cache files are read-only (0444) on the host; the image only reads them.
    return build_ecosystem_env(
        builder,
        "go",
        base_tag=base_tag,
        dockerfile=dockerfile,
        lock=lock,
        ctx=ctx,
        copies={"go": goroot},
        dockerignore="tree\n",
    )
