"""Python's env and instance images (:class:`~swe_forge.ecosystems.python.PythonEcosystem`'s
``build``): the install recipe at the base commit, its lock and wheelhouse, and the images.

- **env**: FROM the base image; a venv at ``/opt/venv`` installed with ``--no-index`` from the
  lock's wheelhouse, in a build stage whose wheels are not copied into the final image. Built
  with no network. Tagged by the lock's hash, so every task with the same lock shares it.
  The stage first upgrades the venv's installers to the lock's pins (pip, setuptools, wheel)
  from a context holding only those three wheels: that layer's inputs are the same for every
  lock of an era, so the engine's layer cache builds it once for all of them. Every wheel is
  already built (sdists were built on the build base, see
  :mod:`swe_forge.ecosystems.python.deps`), so the stage needs no compiler.
- **instance**: built by :func:`swe_forge.images.build.finish_instance` as every ecosystem's
  is, with pip's editable install (:func:`swe_forge.images.instance.install_command`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from swe_forge.ecosystems.base import Builder
from swe_forge.ecosystems.image import failed, finish_instance, record_env
from swe_forge.ecosystems.python.deps import Lock, Wheelhouse, resolve, wheelhouse
from swe_forge.ecosystems.python.recipe import (
    PYTHON_RELEASES,
    InstallRecipe,
    detect_recipe,
    imported_modules,
    recipe_digest,
)
from swe_forge.ecosystems.python.recipe_pins import PyPIReleases, ReleaseIndex, adjust_stale_pins
from swe_forge.engine import LABEL_PREFIX, Engine, local_name
from swe_forge.errors import DockerError, SweForgeError
from swe_forge.images.base import (
    BaseImage,
    ensure_base,
    pythons_available,
    recipe_for_python,
)
from swe_forge.images.instance import sanitize_tag
from swe_forge.locks import file_lock
from swe_forge.records import Candidate, ImageRecord

ENV_DOCKERFILE = """\
FROM {base} AS build
LABEL org.swe-forge.kind=build-stage
COPY bootstrap /bootstrap
RUN python3 -m venv /opt/venv \\
 && /opt/venv/bin/python -m pip install --no-index --no-cache-dir --no-deps \\
      --find-links /bootstrap -r /bootstrap/bootstrap.txt
COPY wheels /wheels
RUN /opt/venv/bin/pip install --no-index --no-cache-dir --no-deps --find-links /wheels \\
      -r /wheels/install.txt
FROM {base}
COPY --from=build /opt/venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv
"""


def env_tag(base_tag: str, python: str, lock_digest: str) -> str:
    """``swe-forge.invalid/env:py<version>-<hash16>``, a hash of the Dockerfile, the base and
    the lock: the same lock on the same base is one env image."""
    key = hashlib.sha256(f"{ENV_DOCKERFILE}\n{base_tag}\n{lock_digest}".encode()).hexdigest()
    return f"{local_name('env')}:py{python}-{key[:16]}"


def build_env(
    engine: Engine, base: BaseImage, house: Wheelhouse, *, work_dir: Path, log_dir: Path
) -> tuple[str, str, bool, float]:
    """Build (or reuse) the env image of a wheelhouse; returns (tag, id, reused, seconds)."""
    tag = env_tag(base.tag, base.python, house.lock.digest)
    info = engine.image(tag)
    if info is not None:
        return tag, info.id, True, 0.0
    start = time.perf_counter()
    with file_lock(work_dir / f"env-{house.lock.digest[:16]}.lock"):
        info = engine.image(tag)
        if info is not None:
            return tag, info.id, True, 0.0
        with tempfile.TemporaryDirectory(dir=work_dir, prefix="env-") as tmp:
            ctx = Path(tmp)
            wheels = ctx / "wheels"
            wheels.mkdir()
            for item in house.path.iterdir():
                if item.is_file():
                    _link_or_copy(item, wheels / item.name)
            # Only the installers and their pins: the cache key of the first layers.
            boot = ctx / "bootstrap"
            boot.mkdir()
            boot_text = house.lock.bootstrap_text()
            (boot / "bootstrap.txt").write_text(boot_text)
            for line in boot_text.splitlines():
                name, _, version = line.partition("==")
                for whl in sorted(wheels.glob("*.whl")):
                    if _is_wheel_of(whl.name, name, version):
                        _link_or_copy(whl, boot / whl.name)
            (ctx / "Dockerfile").write_text(ENV_DOCKERFILE.format(base=base.tag))
            info = engine.build(
                ctx,
                tag,
                labels={
                    f"{LABEL_PREFIX}.kind": "env",
                    f"{LABEL_PREFIX}.base": base.tag,
                    f"{LABEL_PREFIX}.python": base.python,
                    f"{LABEL_PREFIX}.lock": house.lock.digest,
                },
                log_path=log_dir / f"env-{house.lock.digest[:16]}.log",
            )
    return tag, info.id, False, time.perf_counter() - start


def _is_wheel_of(filename: str, name: str, version: str) -> bool:
    try:
        got, got_version, _b, _t = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return False
    return got == canonicalize_name(name) and str(got_version) == str(Version(version))


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def installable(read: Any) -> bool:
    """Does the repository have something pip can install (setup.py, or a build-ready pyproject)?"""
    if read("setup.py") is not None:
        return True
    data = read("pyproject.toml")
    if data is None:
        return False
    text = data.decode("utf-8", "replace")
    return any(s in text for s in ("[build-system]", "[project]", "[tool.poetry]"))


def test_imports(candidate: Candidate, read: Callable[[str], bytes | None]) -> frozenset[str]:
    """Top-level modules the task's tests import: its test files and the conftest.py files
    above them at the base commit, the lines the test patch adds, and the test helpers those
    import relatively (``from .test_preconf import ...``: cattrs' tests import optional
    integrations through a shared helper module), two levels deep."""
    paths = set(candidate.files.test_files)
    for f in candidate.files.test_files:
        parts = f.split("/")[:-1]
        paths |= {"/".join([*parts[:i], "conftest.py"]) for i in range(len(parts) + 1)}
    added = "\n".join(
        line[1:]
        for line in candidate.test_patch.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )
    texts = [added]
    seen: set[str] = set()
    todo = sorted(p for p in paths if p.endswith(".py"))
    for _depth in range(3):
        helpers: list[str] = []
        for p in todo:
            if p in seen:
                continue
            seen.add(p)
            data = read(p)
            if data is None:
                continue
            text = data.decode("utf-8", "replace")
            texts.append(text)
            helpers += relative_import_paths(p, text)
        todo = sorted(set(helpers) - seen)
    return imported_modules(texts)


_RELATIVE = re.compile(r"^\s*from\s+(\.+)([\w.]*)\s+import\s+\(?([\w, ]+)", re.M)


def relative_import_paths(path: str, text: str) -> list[str]:
    """Files that ``path``'s relative imports may name (``from .a import b``: ``a.py`` and
    ``a/__init__.py`` beside it; ``from . import a``: ``a.py``)."""
    base = path.split("/")[:-1]
    out: list[str] = []
    for m in _RELATIVE.finditer(text):
        dots, mod, names = m.group(1), m.group(2), m.group(3)
        up = len(dots) - 1
        if up >= len(base):  # past the top package
            continue
        where = base[: len(base) - up]
        if mod:
            stem = "/".join([*where, *mod.split(".")])
            out += [f"{stem}.py", f"{stem}/__init__.py"]
        else:
            out += ["/".join([*where, f"{n.strip()}.py"]) for n in names.split(",") if n.strip()]
    return out


def recipe_of(builder: Builder, candidate: Candidate) -> tuple[InstallRecipe, bool]:
    """The install recipe at the candidate's base commit, and whether it is installable."""
    repo = builder.repo(candidate)
    commit = repo.commit(candidate.base_commit)

    def read(path: str) -> bytes | None:
        got = repo.blob_at(candidate.base_commit, path)
        return got[1] if got else None

    override = builder.overrides.get(candidate.repo.lower())
    recipe = detect_recipe(
        read,
        commit.commit_time,
        pythons=pythons_available(builder.distros),
        override=override,
        test_imports=test_imports(candidate, read),
    )
    return with_supported_pins(recipe, PyPIReleases(builder.cache)), installable(read)


def with_supported_pins(recipe: InstallRecipe, index: ReleaseIndex) -> InstallRecipe:
    """The recipe with exact pins too old for its Python replaced by the nearest release that
    supports it (:mod:`~swe_forge.ecosystems.python.recipe_pins`), recorded as adjustments."""
    reqs, adjusted, dates = adjust_stale_pins(
        recipe.requirements, recipe.python, PYTHON_RELEASES, index
    )
    if not adjusted:
        return recipe
    return replace(
        recipe,
        requirements=tuple(sorted(set(reqs))),
        adjusted=(*recipe.adjusted, *adjusted),
        package_dates=tuple(sorted(f"{k}={v}" for k, v in dates.items())),
    )


def build_python(builder: Builder, candidate: Candidate) -> ImageRecord:
    """Python's three images (base, env, instance) from the candidate's recipe."""
    rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
    stage = "recipe"
    try:
        recipe, install = recipe_of(builder, candidate)
        rec.python = recipe.python
        rec.project_name = recipe.project_name
        rec.recipe = recipe.to_dict()
        rec.recipe_digest = recipe_digest(recipe)
        stage = "base"
        base_recipe = recipe_for_python(recipe.python, builder.distros)
        base = ensure_base(
            builder.engine,
            base_recipe,
            mirror=builder.config.images.debian_mirror,
            work_dir=builder.work_dir,
            override=builder.config.images.base_overrides.get(recipe.python)
            if builder.config.images.base_overrides
            else None,
            log_dir=builder.log_dir,
        )
        rec.base_image = base.tag
        rec.reused["base"] = not base.built
        rec.seconds["base"] = round(base.seconds, 3)
        stage = "resolve"
        t = time.perf_counter()
        lock: Lock = resolve(recipe, base.glibc, cache=builder.cache)
        rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
        rec.lock_digest = lock.digest
        stage = "wheelhouse"
        override = (
            builder.config.images.base_overrides.get(recipe.python)
            if builder.config.images.base_overrides
            else None
        )

        def build_image() -> str:
            # Only a lock with sdists needs the build base: most never build it.
            if override and base.tag == override:
                return base.tag  # a configured image stands for both flavours
            built = ensure_base(
                builder.engine,
                base_recipe.build(),
                mirror=builder.config.images.debian_mirror,
                work_dir=builder.work_dir,
                log_dir=builder.log_dir,
            )
            rec.reused["build_base"] = not built.built
            rec.seconds["build_base"] = round(built.seconds, 3)
            return built.tag

        house = wheelhouse(
            lock, base.glibc, cache=builder.cache, engine=builder.engine, build_image=build_image
        )
        rec.reused["wheelhouse"] = house.reused
        rec.wheels = {
            "total": house.wheels,
            "from_store": house.from_store,
            "sdists_built": house.sdists_built,
        }
        rec.seconds["wheelhouse"] = round(house.seconds, 3)
        stage = "env"
        env_ref, env_id, env_reused, env_s = build_env(
            builder.engine, base, house, work_dir=builder.work_dir, log_dir=builder.log_dir
        )
        record_env(rec, env_ref, env_id, env_s, reused=env_reused)
        stage = "instance"
        finish_instance(
            rec,
            builder,
            builder.repo(candidate),
            candidate,
            install=install,
            extra_labels={
                f"{LABEL_PREFIX}.lock": lock.digest,
                f"{LABEL_PREFIX}.recipe": rec.recipe_digest,
                f"{LABEL_PREFIX}.python": recipe.python,
            },
        )
        rec.logs = {
            "env": str(builder.log_dir / f"env-{lock.digest[:16]}.log"),
            "instance": str(
                builder.log_dir / f"instance-{sanitize_tag(candidate.instance_id)}.log"
            ),
        }
    except DockerError:
        raise  # the engine itself failed: infrastructure, not this candidate
    except SweForgeError as exc:
        failed(rec, stage, exc)
    return rec
