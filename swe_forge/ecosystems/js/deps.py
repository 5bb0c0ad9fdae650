"""JavaScript/TypeScript dependencies resolved on the host: npm, locks, node_modules.

``node_modules`` is resolved with the host's npm, install scripts off (``npm ci`` from
``package-lock.json``/``npm-shrinkwrap.json``, else ``npm install --before=<base date>``),
for the base tree or for the tree with both patches when they change package.json or a lock,
and handed to the image build (:mod:`swe_forge.ecosystems.js.image`) in its build context.
The lock names are here too: the adapter's judge's files list them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import git_apply, touched_paths
from swe_forge.ecosystems.js.locks import PINNABLE_LOCKS, pin_package_json
from swe_forge.errors import BuildError
from swe_forge.locks import file_lock

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
    if changed & {"package.json", *LOCKS, *OTHER_LOCKS}:
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
        if not lock and other in PINNABLE_LOCKS:
            pinned = pin_package_json(tree, other)
            if pinned:
                why = f"; {other}'s versions ({pinned} pinned)"
        resolver = install_without_git_hosts(tree, common, cache, date) + why
    lock_text = (tree / "package.json").read_text(errors="replace")
    for name in (*LOCKS, "node_modules/.package-lock.json"):
        if (tree / name).is_file():
            lock_text += "\n" + (tree / name).read_text(errors="replace")
            break
    # A project with no dependency at all (Node's own runner and assert) gets no folder from
    # npm: an empty one, so that the image's node_modules link has somewhere to point.
    (tree / "node_modules").mkdir(exist_ok=True)
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


#: What npm says when a dependency fetched from a git host cannot be reached (no git host is
#: reachable from here: janl/mustache.js's ``zuul-ngrok`` from GitHub).
GIT_UNREACHABLE = re.compile(
    r"git --no-replace-objects|codeload\.github\.com|ssh://git@|An unknown git error"
)


#: A dependency's spec that names a git repository rather than a registry version.
_GIT_SPEC = re.compile(
    r"^(?:git\+|git://|github:|gitlab:|bitbucket:|ssh://|https?://(?:github|gitlab|bitbucket)\.)"
    r"|^(?![./~])[\w.-]+/[\w.-]+(?:#.*)?$"
)


def install_without_git_hosts(tree: Path, common: list[str], cache: Path, date: str) -> str:
    """:func:`_install_by_date`; when npm cannot reach a git host for a dependency, again
    without the dependencies fetched from git hosts (:func:`drop_git_dependencies`) and
    without the lockfile that pins them. What was done, for the image's record."""
    try:
        return _install_by_date(tree, common, cache, date)
    except BuildError as exc:
        dropped = drop_git_dependencies(tree) if GIT_UNREACHABLE.search(str(exc)) else []
        if not dropped:
            raise
    shutil.rmtree(tree / "node_modules", ignore_errors=True)
    for name in LOCKS:
        (tree / name).unlink(missing_ok=True)
    done = _install_by_date(tree, common, cache, date)
    return f"{done}; git dependencies left out (no git host is reachable): {', '.join(dropped)}"


def drop_git_dependencies(tree: Path) -> list[str]:
    """Leave the dependencies the tree's package.json fetches from git hosts out of it (this
    host copy only: the image keeps the project's own file); their names, sorted. Tests that
    need one then fail to load, which the gate sees; most are tools of another kind of run
    (mustache.js's ``zuul-ngrok`` is for browser tests)."""
    path = tree / "package.json"
    try:
        pkg = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return []
    if not isinstance(pkg, dict):
        return []
    dropped = []
    for key in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        deps = pkg.get(key)
        if not isinstance(deps, dict):
            continue
        for name, spec in list(deps.items()):
            if isinstance(spec, str) and _GIT_SPEC.search(spec.strip()):
                del deps[name]
                dropped.append(name)
    if dropped:
        path.write_text(json.dumps(pkg, indent=2) + "\n", encoding="utf-8")
    return sorted(set(dropped))


#: What npm says when ``--before`` leaves a package no version: npm 10 and older name the
#: date (ETARGET "... with a date before ..."), npm 11 says ENOVERSIONS "No versions available".
DATE_UNUSABLE = ("with a date before", "ENOVERSIONS", "No versions available for")


def _install_by_date(tree: Path, common: list[str], cache: Path, date: str) -> str:
    """``npm install`` as of ``date``, or, when the registry dates some package's every
    version later (a mirror dates versions by when it copied them), the newest versions
    package.json's ranges allow; what was done, for the image's record."""
    try:
        _npm(["install", f"--before={date}T23:59:59Z", *common], cwd=tree, cache=cache)
        return f"npm install --before={date}"
    except BuildError as exc:
        if not any(marker in str(exc) for marker in DATE_UNUSABLE):
            raise
        missing = _undated_package(str(exc))
    shutil.rmtree(tree / "node_modules", ignore_errors=True)
    (tree / "package-lock.json").unlink(missing_ok=True)
    _npm(["install", *common], cwd=tree, cache=cache)
    return (
        "npm install: the newest versions the ranges allow (registry publish times unusable "
        f"for --before={date}: no version of {missing or 'a package'} dated before it)"
    )


def _undated_package(message: str) -> str:
    """The package npm found no version of before the date, from its error text."""
    for pattern in (r"No versions available for (\S+)", r"No matching version found for (\S+)"):
        m = re.search(pattern, message)
        if m:
            return m.group(1).rstrip(".")
    return ""


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


def fetch_node(version: str, integrity: str, cache: Path) -> Path:
    """An official Node build (:data:`swe_forge.ecosystems.js.toolchain.NODE_BINARIES`): a
    folder with ``bin/node`` and its ``LICENSE``, fetched once per machine with the host's
    npm (its registry settings) and checked against the pinned ``integrity``."""
    from swe_forge.ecosystems.js.toolchain import NODE_BINARY_PACKAGE

    store = cache / "node-binaries"
    home = store / f"node-{version}"
    if (home / "bin" / "node").is_file():
        return home
    store.mkdir(parents=True, exist_ok=True)
    with file_lock(store / f".node-{version}.lock"), tempfile.TemporaryDirectory(dir=store) as tmp:
        if (home / "bin" / "node").is_file():
            return home  # another run fetched it while this one waited
        work = Path(tmp)
        spec = f"{NODE_BINARY_PACKAGE}@{version}"
        _npm(["pack", spec, "--pack-destination", str(work)], cwd=work, cache=cache / "npm")
        archives = sorted(work.glob("*.tgz"))
        if len(archives) != 1:
            raise BuildError(f"npm pack {spec} gave {len(archives)} archives")
        algo, _, want = integrity.partition("-")
        got = base64.b64encode(hashlib.new(algo, archives[0].read_bytes()).digest()).decode()
        if got != want:
            raise BuildError(f"{spec}: {algo} {got[:16]}... is not the pinned one")
        out = work / "node"
        with tarfile.open(archives[0]) as tar:
            for name in ("package/bin/node", "package/LICENSE"):
                try:
                    data = tar.extractfile(tar.getmember(name))
                except KeyError:
                    data = None
                if data is None:
                    raise BuildError(f"{spec}: {name} is not a file")
                dest = out / name.removeprefix("package/")
                dest.parent.mkdir(parents=True, exist_ok=True)
                with dest.open("wb") as fh:
                    shutil.copyfileobj(data, fh)
        (out / "bin" / "node").chmod(0o755)
        shutil.rmtree(home, ignore_errors=True)
        out.rename(home)
    return home
