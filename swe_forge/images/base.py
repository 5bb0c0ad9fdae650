"""Base images (OS + Python) built without any container registry.

``debootstrap`` writes a minimal Debian root file system with Python, venv and git; a non-root
user ``swe`` (uid 1000) is added; documentation, caches and apt lists are dropped; ``docker
import`` turns the tree into an image tagged by a hash of its recipe, so the same recipe is
built once per machine. A base image named in the configuration (for example a registry image
such as ``python:3.11-slim``) is used instead when it exists locally or can be pulled.

Each distribution has two flavours with the same Python from the same Debian packages: the
*runtime* base, which task images are made from, and the *build* base (:meth:`BaseRecipe.build`),
which adds a C toolchain and the Python headers. Builds that compile (sdists into wheels, the
env's virtual environment) run on the build base and copy their products onto the runtime
base, so no compiler ships in a task image and the runtime base's recipe (and tag) is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from swe_forge.engine import LABEL_PREFIX, Engine, ImageInfo, local_name
from swe_forge.errors import BuildError
from swe_forge.locks import file_lock

#: PATH in every image (the project's venv first).
ENV_PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: Debian releases we bootstrap, with their Python and glibc versions.
DISTROS: dict[str, tuple[str, str]] = {
    "bullseye": ("3.9", "2.31"),
    "bookworm": ("3.11", "2.36"),
    "trixie": ("3.13", "2.41"),
}
RECIPE_VERSION = 1
_PACKAGES = ("python3", "python3-venv", "git", "ca-certificates")
#: What the build flavour adds: enough to compile C and C++ extensions for the distribution's
#: own Python (``python3-dev`` brings the headers and ``sysconfig`` data of exactly that build).
TOOLCHAIN = ("gcc", "g++", "make", "libc6-dev", "python3-dev")
_DROP = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/cache/apt",
    "var/lib/apt/lists",
    "var/log",
)


@dataclass(frozen=True)
class BaseRecipe:
    """What goes into a base image; its hash is the image's tag."""

    distro: str
    python: str
    glibc: str
    packages: tuple[str, ...] = _PACKAGES
    variant: str = "minbase"
    user_uid: int = 1000
    recipe_version: int = RECIPE_VERSION

    @classmethod
    def for_distro(cls, distro: str) -> BaseRecipe:
        """The recipe of one of :data:`DISTROS`."""
        if distro not in DISTROS:
            raise BuildError(
                f"unknown distribution {distro!r}", hint=f"one of {', '.join(DISTROS)}"
            )
        python, glibc = DISTROS[distro]
        return cls(distro=distro, python=python, glibc=glibc)

    def build(self) -> BaseRecipe:
        """The build flavour of this recipe: the same system plus :data:`TOOLCHAIN`."""
        extra = tuple(p for p in TOOLCHAIN if p not in self.packages)
        return replace(self, packages=self.packages + extra)

    @property
    def is_build(self) -> bool:
        """Does this recipe carry the toolchain (is it a build flavour)?"""
        return set(TOOLCHAIN) <= set(self.packages)

    def digest(self) -> str:
        """sha256 of the recipe (the mirror is not part of it)."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()

    @property
    def tag(self) -> str:
        """``swe-forge.invalid/base:<distro>-py<version>[-build]-<hash12>``."""
        flavour = "-build" if self.is_build else ""
        name = local_name("base")
        return f"{name}:{self.distro}-py{self.python}{flavour}-{self.digest()[:12]}"


def recipe_for_python(python: str, distros: tuple[str, ...]) -> BaseRecipe:
    """The base recipe that provides Python ``python`` among the configured distributions."""
    for distro in distros:
        if DISTROS.get(distro, ("", ""))[0] == python:
            return BaseRecipe.for_distro(distro)
    raise BuildError(f"no configured base image provides Python {python}")


def pythons_available(distros: tuple[str, ...]) -> tuple[str, ...]:
    """Python versions the configured distributions provide."""
    return tuple(DISTROS[d][0] for d in distros if d in DISTROS)


@dataclass(frozen=True)
class BaseImage:
    """A base image ready to use."""

    tag: str
    id: str
    python: str
    glibc: str
    built: bool  # False when it already existed
    seconds: float


def ensure_base(
    engine: Engine,
    recipe: BaseRecipe,
    *,
    mirror: str,
    work_dir: Path,
    override: str | None = None,
    log_dir: Path | None = None,
) -> BaseImage:
    """Return the base image for ``recipe``, building it when missing.

    ``override`` names an image to use instead (it must exist locally or be pullable).

    Raises:
        BuildError: debootstrap is missing, we are not root, or the bootstrap failed.
    """
    start = time.perf_counter()
    if override:
        info = engine.image(override) or _pull(engine, override)
        if info is not None:
            return BaseImage(override, info.id, recipe.python, recipe.glibc, False, 0.0)
    info = engine.image(recipe.tag)
    if info is not None:
        return BaseImage(recipe.tag, info.id, recipe.python, recipe.glibc, False, 0.0)
    work_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(work_dir / f"base-{recipe.digest()[:12]}.lock"):
        info = engine.image(recipe.tag)  # another process may have built it meanwhile
        if info is None:
            info = _build(engine, recipe, mirror, work_dir, log_dir)
            return BaseImage(
                recipe.tag, info.id, recipe.python, recipe.glibc, True, time.perf_counter() - start
            )
    return BaseImage(recipe.tag, info.id, recipe.python, recipe.glibc, False, 0.0)


def _pull(engine: Engine, ref: str) -> ImageInfo | None:
    try:
        engine.client.images.pull(ref)
    except Exception:  # no registry is a normal situation here
        return None
    return engine.image(ref)


def _build(
    engine: Engine, recipe: BaseRecipe, mirror: str, work_dir: Path, log_dir: Path | None
) -> ImageInfo:
    if shutil.which("debootstrap") is None:
        raise BuildError(
            "debootstrap is not installed",
            hint="run scripts/ensure-docker.sh (it installs docker.io and debootstrap)",
        )
    if os.geteuid() != 0:
        raise BuildError("building a base image needs root (debootstrap)", hint="run as root")
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="base-") as tmp:
        root = Path(tmp) / "root"
        cmd = [
            "debootstrap",
            f"--variant={recipe.variant}",
            f"--include={','.join(recipe.packages)}",
            recipe.distro,
            str(root),
            mirror,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        log = proc.stdout + proc.stderr
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            (log_dir / f"base-{recipe.tag.rsplit(':', 1)[1]}.log").write_text(log[-200_000:])
        if proc.returncode != 0:
            tail = "\n".join(log.strip().splitlines()[-10:])
            raise BuildError(
                f"debootstrap {recipe.distro} failed:\n{tail}", hint=f"mirror: {mirror}"
            )
        user = subprocess.run(
            [
                "chroot",
                str(root),
                "useradd",
                "-m",
                "-u",
                str(recipe.user_uid),
                "-U",
                "-s",
                "/bin/bash",
                "swe",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if user.returncode != 0:
            raise BuildError(f"cannot add the user in the base image: {user.stderr.strip()}")
        for rel in _DROP:
            target = root / rel
            if target.is_dir():
                shutil.rmtree(target)
                target.mkdir(parents=True, exist_ok=True)
        (root / "etc" / "machine-id").write_text("")
        tar_path = Path(tmp) / "rootfs.tar"
        tar = subprocess.run(
            ["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(tar_path), "."],
            capture_output=True,
            text=True,
            check=False,
        )
        if tar.returncode != 0:
            raise BuildError(f"cannot pack the root file system: {tar.stderr.strip()}")
        return engine.import_rootfs(
            tar_path,
            recipe.tag,
            changes=[
                f"ENV PATH={ENV_PATH}",
                "ENV LANG=C.UTF-8",
                "ENV PYTHONDONTWRITEBYTECODE=1",
                "ENV PIP_DISABLE_PIP_VERSION_CHECK=1",
                "ENV PIP_NO_INPUT=1",
                'CMD ["/bin/bash"]',
            ],
            labels={
                f"{LABEL_PREFIX}.kind": "base",
                f"{LABEL_PREFIX}.flavour": "build" if recipe.is_build else "runtime",
                f"{LABEL_PREFIX}.recipe": recipe.digest(),
                f"{LABEL_PREFIX}.distro": recipe.distro,
                f"{LABEL_PREFIX}.python": recipe.python,
                f"{LABEL_PREFIX}.glibc": recipe.glibc,
            },
        )
