"""The JavaScript/TypeScript adapter's images: Node, node_modules, env and instance.

:func:`build_images` reads the base commit's package.json (framework, ``engines.node``),
chooses Node by date (:mod:`swe_forge.ecosystems.js.toolchain`), resolves ``node_modules``
on the host (:mod:`swe_forge.ecosystems.js.deps`) and builds the base image with Debian's
``nodejs``, the env image (``node_modules`` copied to ``/opt/node_modules``, the runner's
environment; :data:`ENV_DOCKERFILE`) and the instance image, whose install step links
``/testbed/node_modules`` to it (:data:`INSTALL`).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import digest_text
from swe_forge.ecosystems.image import failed, finish_instance, record_env
from swe_forge.ecosystems.js.deps import resolve
from swe_forge.ecosystems.js.runner import JS_ENV, NODE_MODULES
from swe_forge.ecosystems.js.toolchain import choose_node, detect_framework, read_package_json
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError
from swe_forge.records import ImageRecord

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate


ENV_DOCKERFILE = """\
FROM {base}
COPY node_modules {modules}
RUN chmod -R a+rX,go-w {modules}
ENV {env}
"""


INSTALL = f"ln -s {NODE_MODULES} /testbed/node_modules"


def build_images(builder: Builder, candidate: Candidate) -> ImageRecord:
    """Node, node_modules, env and instance images (failures come back in the record)."""
    from swe_forge.ecosystems.image import ecosystem_base
    from swe_forge.images.base import BaseRecipe

    rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
    stage = "recipe"
    try:
        repo = builder.repo(candidate)
        commit = repo.commit(candidate.base_commit)

        def read(path: str) -> bytes | None:
            got = repo.blob_at(candidate.base_commit, path)
            return got[1] if got else None

        pkg = read_package_json(read)
        if pkg is None:
            raise BuildError("no readable package.json at the base commit")
        if pkg.get("workspaces"):
            raise BuildError(
                "npm workspaces (a monorepo) are not supported: node_modules would link "
                "into the work tree"
            )
        framework = detect_framework(pkg)
        if not framework:
            raise BuildError("no test framework (jest, vitest or mocha) in package.json")
        engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
        node_range = str((engines or {}).get("node") or "")
        date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
        distro, node = choose_node(date, node_range)
        stage = "resolve"
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="js-") as tmp:
            ctx = Path(tmp)
            resolved = resolve(builder, repo, candidate, ctx, date)
            fw_pkg = ctx / "node_modules" / framework / "package.json"
            if not fw_pkg.is_file():
                raise BuildError(f"{framework} is not installed by the project's package.json")
            fw_info = json.loads(fw_pkg.read_text())
            fw_version = str(fw_info.get("version") or "")
            fw_engines = str((fw_info.get("engines") or {}).get("node") or "")
            distro, node = choose_node(date, node_range, fw_engines)
            module = f"{framework}@{fw_version}"
            rec.project_name = module
            rec.recipe = {
                "ecosystem": "js",
                "package": str(pkg.get("name") or ""),
                "framework": framework,
                "framework_version": fw_version,
                "toolchain": f"node{node}",
                "toolchain_source": f"Debian {distro} package nodejs",
                "engines_node": node_range,
                "resolver": resolved["resolver"],
                "lockfile": resolved["lockfile"],
                "resolved_tree": resolved["tree"],
                "packages": resolved["packages"],
                "base_date": date,
                "env": dict(JS_ENV),
            }
            rec.lock_digest = digest_text(f"node{node}", distro, resolved["lock_text"])
            rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
            rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
            stage = "base"
            recipe = BaseRecipe.for_distro(distro)
            recipe = replace(recipe, packages=(*recipe.packages, "nodejs"))
            base = ecosystem_base(builder, rec, recipe)
            stage = "env"
            env_tag, env_id, env_s = _env_image(builder, base.tag, ctx, rec.lock_digest)
        record_env(rec, env_tag, env_id, env_s)
        stage = "instance"
        finish_instance(
            rec,
            builder,
            repo,
            candidate,
            install_cmd=INSTALL,
            extra_labels={
                f"{LABEL_PREFIX}.lock": rec.lock_digest,
                f"{LABEL_PREFIX}.ecosystem": "js",
                f"{LABEL_PREFIX}.toolchain": f"node{node}",
            },
        )
    except DockerError:
        raise
    except (SweForgeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        failed(rec, stage, exc)
    return rec


def _env_image(builder: Builder, base_tag: str, ctx: Path, lock: str) -> tuple[str, str, float]:
    from swe_forge.ecosystems.image import build_ecosystem_env

    env_line = " ".join(f'{k}="{v}"' for k, v in sorted(JS_ENV.items()))
    dockerfile = ENV_DOCKERFILE.format(base=base_tag, modules=NODE_MODULES, env=env_line)
    return build_ecosystem_env(
        builder,
        "js",
        base_tag=base_tag,
        dockerfile=dockerfile,
        lock=lock,
        ctx=ctx,
        copies={},
        dockerignore="tree\n",
    )
