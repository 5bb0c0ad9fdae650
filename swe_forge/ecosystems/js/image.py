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
from swe_forge.ecosystems.js.deps import fetch_node, resolve
from swe_forge.ecosystems.js.runner import JS_ENV, NODE_MODULES
from swe_forge.ecosystems.js.toolchain import (
    NODE_BINARY_PACKAGE,
    NODE_TEST,
    choose_node,
    configured_files,
    detect_framework,
    official_node,
    read_package_json,
    runner_config,
)
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError
from swe_forge.records import ImageRecord

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate


#: The Node releases Node's own test runner is judged on (see :func:`build_images`).
NODE_TEST_FLOOR = ">=22"


#: Tool caches tools write under node_modules (Vite bundles its config into ``.vite-temp``,
#: Vite and Vitest keep ``.vite``, Vitest before 0.30 ``.vitest``, find-cache-dir users such
#: as Babel and nyc ``.cache``): node_modules is read-only in the judge's container, so each
#: is a link to the run's own /tmp (a tmpfs there, fresh for every run, so nothing cached
#: outlives a run), and the installed packages themselves stay read-only.
TOOL_CACHES = (".vite-temp", ".vite", ".vitest", ".cache")


ENV_DOCKERFILE = """\
FROM {base}
{node}COPY node_modules {modules}
RUN chmod -R a+rX,go-w {modules} && cd {modules} && rm -rf {caches} && {links}
ENV {env}
"""


#: Where an official Node build (:data:`swe_forge.ecosystems.js.toolchain.NODE_BINARIES`)
#: goes in the env image; ``node`` on the PATH is a link to it.
NODE_HOME = "/opt/node"


OFFICIAL_NODE = f"""\
COPY node {NODE_HOME}
RUN chmod -R a+rX,go-w {NODE_HOME} && ln -s {NODE_HOME}/bin/node /usr/local/bin/node
"""


def env_dockerfile(base: str, env_line: str, *, official: bool = False) -> str:
    """The env image's Dockerfile: node_modules copied in, read-only, its tool caches linked
    to /tmp (:data:`TOOL_CACHES`); with ``official``, the official Node build in the context's
    ``node`` folder too (the base image then has no Debian ``nodejs``)."""
    links = " && ".join(f"ln -s /tmp {name}" for name in TOOL_CACHES)
    return ENV_DOCKERFILE.format(
        base=base,
        node=OFFICIAL_NODE if official else "",
        modules=NODE_MODULES,
        caches=" ".join(TOOL_CACHES),
        links=links,
        env=env_line,
    )


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
            raise BuildError(
                "no test framework (jest, vitest, mocha or node --test) in package.json"
            )
        engines = pkg.get("engines") if isinstance(pkg.get("engines"), dict) else {}
        node_range = str((engines or {}).get("node") or "")
        date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
        # Node's own runner is judged on Node 22 or later: from 22 the runner's exit status
        # counts a test file whose process failed even when the file's report says otherwise
        # (a red team forged passes on Node 20 with frames of the runner's protocol written
        # on the test process's output; 22 exits 1 and the judge calls the disagreement).
        judge_floor = NODE_TEST_FLOOR if framework == NODE_TEST else ""
        distro, node = choose_node(date, node_range, judge_floor)
        stage = "resolve"
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="js-") as tmp:
            ctx = Path(tmp)
            resolved = resolve(builder, repo, candidate, ctx, date)
            if framework == NODE_TEST:
                # Node's own runner: its version is Node's.
                fw_version = cli_version = node
            else:
                fw_pkg = ctx / "node_modules" / framework / "package.json"
                if not fw_pkg.is_file():
                    raise BuildError(f"{framework} is not installed by the project's package.json")
                fw_info = json.loads(fw_pkg.read_text())
                fw_version = str(fw_info.get("version") or "")
                cli_version = fw_version
                if framework == "jest":
                    # jest's bin runs jest-cli, which parses the options, and jest X.Y asks
                    # for jest-cli ^X.Y: the runner's options follow the CLI that is
                    # installed (the copy nested under jest first, as Node resolves it).
                    cli_version = jest_cli_version(ctx / "node_modules") or fw_version
                fw_engines = str((fw_info.get("engines") or {}).get("node") or "")
                distro, node = choose_node(date, node_range, fw_engines)
            official = official_node(node)
            module = f"{framework}@{cli_version}"
            config = runner_config(pkg, framework, read)
            rec.project_name = module
            rec.recipe = {
                "ecosystem": "js",
                "package": str(pkg.get("name") or ""),
                "framework": framework,
                "framework_version": fw_version,
                "toolchain": f"node{node}",
                "toolchain_source": (
                    f"npm registry {NODE_BINARY_PACKAGE}@{node} (nodejs.org's build; "
                    f"{official[1][:23]}...), on Debian {distro}"
                    if official
                    else f"Debian {distro} package nodejs"
                ),
                "engines_node": node_range,
                **({"node_floor": judge_floor} if judge_floor else {}),
                "resolver": resolved["resolver"],
                "lockfile": resolved["lockfile"],
                "resolved_tree": resolved["tree"],
                "packages": resolved["packages"],
                "base_date": date,
                "env": dict(JS_ENV),
            }
            # The files that decide how the held-out tests are loaded (the named config and
            # what it and the root configs name: setup, transform, preset), read here from the
            # base tree: the verifier refuses a candidate's edits to them without that tree.
            judge_files = sorted(configured_files(read))
            if config or judge_files:
                rec.recipe["harness"] = {
                    **({"config": config} if config else {}),
                    **({"judge_files": judge_files} if judge_files else {}),
                }
            rec.lock_digest = digest_text(f"node{node}", distro, resolved["lock_text"])
            copies = {}
            if official:
                copies["node"] = fetch_node(node, official[1], builder.cache)
            rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
            rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
            stage = "base"
            recipe = BaseRecipe.for_distro(distro)
            if not official:
                recipe = replace(recipe, packages=(*recipe.packages, "nodejs"))
            base = ecosystem_base(builder, rec, recipe)
            stage = "env"
            env_tag, env_id, env_s = _env_image(builder, base.tag, ctx, rec.lock_digest, copies)
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
        stage = "runner"
        runner_starts(builder, rec.instance_image, framework, config=config)
    except DockerError:
        raise
    except (SweForgeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        failed(rec, stage, exc)
    return rec


#: A command that makes each framework read its configuration and find its tests, running
#: none: it fails when the runner cannot start at all (a ``jest.config.ts`` without the
#: ``ts-node`` it needs). Not Vitest: it starts a server on ``localhost``, which this probe's
#: container (unlike the judge's, given its own /etc/hosts) cannot resolve.
START_PROBES: dict[str, list[str]] = {
    "jest": [
        "node",
        "node_modules/jest/bin/jest.js",
        "--ci",
        "--listTests",
        "--no-watchman",
        "--cacheDirectory=/tmp/jest-cache",
    ],
}


def jest_cli_version(modules: Path) -> str:
    """The version of the jest-cli that ``modules``' jest runs ("" when none is there)."""
    for pkg in (modules / "jest" / "node_modules" / "jest-cli", modules / "jest-cli"):
        try:
            info = json.loads((pkg / "package.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("version"):
            return str(info["version"])
    return ""


def runner_starts(
    builder: Builder, image: str, framework: str, timeout: float = 600, config: str = ""
) -> None:
    """Fail the environment (a BuildError) when the test runner cannot start in ``image``
    at the base commit, offline, with the configuration file its test script names
    (``config``): no task could be judged on it, and its gate runs would otherwise be taken
    for the PR's ``no_test_report``."""
    argv = START_PROBES.get(framework)
    if not argv:
        return
    if config:
        argv = [*argv[:2], "--config", config, *argv[2:]]
    out = builder.engine.run_locked(
        image, argv, timeout=timeout, environment={**JS_ENV, "HOME": "/tmp"}
    )
    if out.exit_code != 0:
        why = "timed out" if out.timed_out else f"exit {out.exit_code}"
        tail = "\n".join(out.output.strip().splitlines()[-12:])
        raise BuildError(
            f"{framework} cannot start in this environment ({why}):\n{tail}",
            hint="a package the runner or its configuration needs is not installed",
        )


def _env_image(
    builder: Builder, base_tag: str, ctx: Path, lock: str, copies: dict[str, Path]
) -> tuple[str, str, float]:
    from swe_forge.ecosystems.image import build_ecosystem_env

    env_line = " ".join(f'{k}="{v}"' for k, v in sorted(JS_ENV.items()))
    dockerfile = env_dockerfile(base_tag, env_line, official="node" in copies)
    return build_ecosystem_env(
        builder,
        "js",
        base_tag=base_tag,
        dockerfile=dockerfile,
        lock=lock,
        ctx=ctx,
        copies=copies,
        dockerignore="tree\n",
    )
