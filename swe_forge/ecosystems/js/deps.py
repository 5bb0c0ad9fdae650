"""JavaScript/TypeScript dependencies resolved on the host: npm, locks, node_modules.

``node_modules`` is resolved with the host's npm, install scripts off (``npm ci`` from
``package-lock.json``/``npm-shrinkwrap.json``, else ``npm install --before=<base date>``),
for the base tree or for the tree with both patches when they change package.json or a lock,
and handed to the image build (:mod:`swe_forge.ecosystems.js.image`) in its build context.
The lock names are here too: the adapter's judge's files list them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import git_apply, touched_paths
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate


LOCKS = ("package-lock.json", "npm-shrinkwrap.json")


OTHER_LOCKS = ("yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock")


def resolve(
    builder: Builder, repo: Any, candidate: Candidate, ctx: Path, date: str
) -> dict[str, Any]:
    """node_modules for the base tree, or for the tree with both patches when they change
    package.json or a lock; moved to ``ctx/node_modules``."""
    from swe_forge.git.scrub import scrubbed_checkout

    tree = ctx / "tree"
    scrubbed_checkout(repo, candidate.base_commit, tree)
    which = "base"
    changed = set(touched_paths(candidate.patch)) | set(touched_paths(candidate.test_patch))
    if changed & {"package.json", *LOCKS}:
        which = "gold+test"
        git_apply(tree, (candidate.patch, candidate.test_patch))
    lock = next((n for n in LOCKS if (tree / n).is_file()), "")
    other = next((n for n in OTHER_LOCKS if (tree / n).is_file()), "")
    cache = builder.cache / "npm"
    cache.mkdir(parents=True, exist_ok=True)
    common = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    common += ["--engine-strict=false", "--include=dev", "--include=optional"]
    resolver = ""
    if lock:
        try:
            _npm(["ci", *common], cwd=tree, cache=cache)
            resolver = f"npm ci ({lock})"
        except BuildError:
            shutil.rmtree(tree / "node_modules", ignore_errors=True)
    if not resolver:
        why = f"; {lock} out of date" if lock else (f"; {other} not used" if other else "")
        try:
            _npm(["install", f"--before={date}T23:59:59Z", *common], cwd=tree, cache=cache)
            resolver = f"npm install --before={date}{why}"
        except BuildError as exc:
            if "with a date before" not in str(exc):
                raise
            # The registry (a mirror) dates every version by when it copied it, so no
            # version is older than the base commit: resolve by package.json's ranges.
            _npm(["install", *common], cwd=tree, cache=cache)
            resolver = f"npm install (registry publish times unusable for --before){why}"
    lock_text = (tree / "package.json").read_text(errors="replace")
    for name in (*LOCKS, "node_modules/.package-lock.json"):
        if (tree / name).is_file():
            lock_text += "\n" + (tree / name).read_text(errors="replace")
            break
    packages = sum(1 for _ in (tree / "node_modules").glob("*/package.json")) + sum(
        1 for _ in (tree / "node_modules").glob("@*/*/package.json")
    )
    (tree / "node_modules").rename(ctx / "node_modules")
    shutil.rmtree(tree)
    return {
        "resolver": resolver,
        "lockfile": lock or other,
        "tree": which,
        "packages": packages,
        "lock_text": lock_text,
    }


def _npm(args: list[str], *, cwd: Path, cache: Path, timeout: float = 1800) -> None:
    npm = shutil.which("npm")
    if not npm:
        raise BuildError("the npm command is not on this machine", hint="install Node.js")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "npm_config_cache": str(cache),
        "npm_config_update_notifier": "false",
        "NODE_ENV": "development",
        **{k: v for k, v in os.environ.items() if k.lower().startswith("npm_config_registry")},
    }
    proc = subprocess.run(
        [npm, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise BuildError(f"npm {args[0]} failed:\n{tail}")
