"""Resolve a recipe as of its base commit's date, and fill a wheelhouse for offline installs.

Resolution runs on the host, where the host's pip and uv configuration applies (a container
cannot reach the index with the host's TLS settings): ``uv pip compile --exclude-newer DATE``
for the chosen Python and the base image's glibc. The lock (pins with hashes) is kept; its
hash names the wheelhouse and the env image, so tasks whose locks are equal share both.

The wheelhouse holds one wheel per pin, downloaded with ``pip download --only-binary`` for the
target platform (hashes checked against the lock). A pin with no compatible wheel is fetched
as an sdist and built into a wheel inside a base-image container with no network. The
project's own distribution is never in a lock (``--no-emit-package``): a newer release of it
would hand the agent the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from swe_forge.engine import Engine
from swe_forge.errors import BuildError
from swe_forge.images.recipe import InstallRecipe
from swe_forge.locks import file_lock

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")


@dataclass(frozen=True)
class Lock:
    """A resolved, pinned set of distributions for one Python and platform."""

    text: str  # uv's output: pins with hashes
    python: str
    platform: str
    digest: str  # sha256 over text + python + platform

    def pins(self) -> list[tuple[str, str]]:
        """(name, version) of every pin, in lock order."""
        out = []
        for line in self.text.splitlines():
            m = _PIN.match(line.strip())
            if m:
                out.append((m.group(1), m.group(3)))
        return out

    def install_text(self) -> str:
        """The pins without hashes (wheels built here from sdists have their own hashes)."""
        return "".join(f"{n}=={v}\n" for n, v in self.pins())


def _arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def uv_binary() -> str:
    """The uv executable (the one installed with swe-forge, else one on PATH)."""
    here = Path(sys.executable).parent / "uv"
    if here.exists():
        return str(here)
    found = shutil.which("uv")
    if found is None:
        raise BuildError("uv is not installed", hint="pip install uv (a dependency of swe-forge)")
    return found


def resolve(recipe: InstallRecipe, glibc: str, *, cache: Path, timeout: float = 600) -> Lock:
    """Resolve the recipe's requirements as of its date; cache by the input's hash.

    Raises:
        BuildError: the resolver found no solution (the message has its explanation).
    """
    target = f"{_arch()}-manylinux_{glibc.replace('.', '_')}"
    # uv knows manylinux targets up to 2_40; a newer glibc runs those wheels too.
    major, minor = (int(x) for x in glibc.split("."))
    uv_target = f"{_arch()}-manylinux_{major}_{min(minor, UV_MAX_GLIBC_MINOR)}"
    req_in = recipe.requirements_in()
    key = hashlib.sha256(
        json.dumps(
            [req_in, recipe.python, target, recipe.exclude_newer, recipe.project_name]
        ).encode()
    ).hexdigest()
    cached = cache / "locks" / f"{key}.txt"
    if cached.is_file():
        text = cached.read_text()
        return Lock(text, recipe.python, target, _lock_digest(text, recipe.python, target))
    with tempfile.TemporaryDirectory() as tmp:
        req_path = Path(tmp) / "requirements.in"
        req_path.write_text(req_in)
        cmd = [
            uv_binary(),
            "pip",
            "compile",
            str(req_path),
            "--exclude-newer",
            recipe.exclude_newer,
            "--python-version",
            recipe.python,
            "--python-platform",
            uv_target,
            "--no-header",
            "--no-annotate",
            "--generate-hashes",
            "--quiet",
        ]
        if recipe.project_name:
            cmd += ["--no-emit-package", recipe.project_name]
        interp = _target_interpreter(recipe.python)
        if interp:
            # sdists are built for metadata with this interpreter: it must be the target's.
            cmd += ["--python", interp]
        floor = _build_tools_floor(recipe)
        if floor > recipe.exclude_newer:
            for pkg in BUILD_TOOLS:
                cmd += ["--exclude-newer-package", f"{pkg}={floor}"]
        env = dict(os.environ, UV_NO_PROGRESS="1")
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    if proc.returncode != 0:
        msg = proc.stderr.strip()
        raise BuildError(
            f"cannot resolve the dependencies as of {recipe.exclude_newer} for Python "
            f"{recipe.python}:\n{msg[-3000:]}",
            hint="pin or exclude the offending requirement in configs/repos.yaml",
        )
    text = proc.stdout
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    tmp_path.write_text(text)
    os.replace(tmp_path, cached)
    return Lock(text, recipe.python, target, _lock_digest(text, recipe.python, target))


UV_MAX_GLIBC_MINOR = 40
BUILD_TOOLS = ("setuptools", "wheel", "pip", "setuptools-scm")


def _target_interpreter(version: str) -> str | None:
    """A host interpreter of ``version`` that actually runs (a pyenv shim may not)."""
    found = shutil.which(f"python{version}")
    if not found:
        return None
    try:
        proc = subprocess.run(
            [found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if proc.returncode == 0 and proc.stdout.strip() == version else None


def _build_tools_floor(recipe: InstallRecipe) -> str:
    """Build tools no older than ~4 months after the chosen Python's release."""
    from datetime import datetime, timedelta

    from swe_forge.images.recipe import PYTHON_RELEASES

    rel = datetime.fromisoformat(PYTHON_RELEASES[recipe.python]) + timedelta(days=120)
    return rel.strftime("%Y-%m-%dT00:00:00Z")


def _lock_digest(text: str, python: str, target: str) -> str:
    return hashlib.sha256(f"{python}\n{target}\n{text}".encode()).hexdigest()


def _platform_tags(glibc: str) -> list[str]:
    arch = _arch()
    major, minor = (int(x) for x in glibc.split("."))
    tags = [f"manylinux_{major}_{m}_{arch}" for m in range(minor, 4, -1)]
    if arch == "x86_64" or arch == "i686":
        tags += [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    else:
        tags += [f"manylinux2014_{arch}"]
    return tags


@dataclass(frozen=True)
class Wheelhouse:
    """A directory of wheels for one lock, plus the lock itself."""

    path: Path
    lock: Lock
    wheels: int
    sdists_built: int
    reused: bool
    seconds: float


def wheelhouse(
    lock: Lock,
    glibc: str,
    *,
    cache: Path,
    engine: Engine | None = None,
    base_image: str | None = None,
    timeout: float = 1800,
) -> Wheelhouse:
    """Fill (or reuse) the wheelhouse of ``lock`` under ``cache/wheelhouses/<digest>``.

    The directory appears under its final name only when complete (built in a temporary
    directory and renamed), and a lock file serialises concurrent builders of the same lock.

    Raises:
        BuildError: a pin could not be downloaded, or an sdist could not be built.
    """
    start = time.perf_counter()
    final = cache / "wheelhouses" / lock.digest
    if (final / "install.txt").is_file():
        return Wheelhouse(final, lock, len(list(final.glob("*.whl"))), 0, True, 0.0)
    final.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(final.parent / f"{lock.digest}.lock"):
        if (final / "install.txt").is_file():
            return Wheelhouse(final, lock, len(list(final.glob("*.whl"))), 0, True, 0.0)
        tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{lock.digest[:12]}-"))
        try:
            built = _fill(lock, glibc, tmp, engine, base_image, timeout)
            (tmp / "lock.txt").write_text(lock.text)
            (tmp / "install.txt").write_text(lock.install_text())
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return Wheelhouse(
        final, lock, len(list(final.glob("*.whl"))), built, False, time.perf_counter() - start
    )


def _pip_download(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _fill(
    lock: Lock,
    glibc: str,
    dest: Path,
    engine: Engine | None,
    base_image: str | None,
    timeout: float,
) -> int:
    if not lock.pins():
        return 0
    py = lock.python.replace(".", "")
    binary = [
        "--only-binary=:all:",
        "--python-version",
        lock.python,
        "--implementation",
        "cp",
        "--abi",
        f"cp{py}",
        "--abi",
        "abi3",
        "--abi",
        "none",
        "--dest",
        str(dest),
    ]
    for tag in _platform_tags(glibc):
        binary += ["--platform", tag]
    req = dest / "lock.in"
    req.write_text(lock.text)
    proc = _pip_download([*binary, "--require-hashes", "-r", str(req)], timeout)
    req.unlink()
    if proc.returncode == 0:
        return 0
    # Some pins have no compatible wheel: take the wheels one by one, then build the rest.
    missing: list[tuple[str, str]] = []
    for name, version in lock.pins():
        if any(_wheel_matches(p.name, name, version) for p in dest.glob("*.whl")):
            continue
        one = _pip_download([*binary, f"{name}=={version}"], timeout)
        if one.returncode != 0:
            missing.append((name, version))
    if not missing:
        return 0
    sdists = dest / "sdists"
    sdists.mkdir()
    for name, version in missing:
        got = _pip_download(
            ["--no-binary=:all:", "--dest", str(sdists), f"{name}=={version}"], timeout
        )
        if got.returncode != 0:
            tail = "\n".join(got.stderr.strip().splitlines()[-5:])
            raise BuildError(f"cannot download {name}=={version} (no wheel, no sdist):\n{tail}")
    if engine is None or base_image is None:
        raise BuildError(f"sdists need building but no engine was given: {missing}")
    _build_sdists(engine, base_image, dest, sdists, timeout)
    shutil.rmtree(sdists)
    return len(missing)


def _wheel_matches(filename: str, name: str, version: str) -> bool:
    norm = re.sub(r"[-_.]+", "_", name).lower()
    return filename.lower().startswith(f"{norm}-{version.lower()}-")


def _build_sdists(
    engine: Engine, base_image: str, wheels: Path, sdists: Path, timeout: float
) -> None:
    """Build sdists into wheels in a container: no network, wheels as the only index."""
    script = (
        "set -e; python3 -m venv /tmp/b; "
        "/tmp/b/bin/pip install -q --no-index --find-links /wheels wheel setuptools || true; "
        "for s in /sdists/*; do /tmp/b/bin/pip wheel --no-deps --no-index --find-links /wheels "
        '-w /out "$s"; done'
    )
    out = wheels / "built"
    out.mkdir()
    os.chmod(out, 0o777)
    code, log = engine.run(
        base_image,
        ["/bin/sh", "-c", script],
        timeout=timeout,
        volumes={
            str(wheels): {"bind": "/wheels", "mode": "ro"},
            str(sdists): {"bind": "/sdists", "mode": "ro"},
            str(out): {"bind": "/out", "mode": "rw"},
        },
    )
    if code != 0:
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise BuildError(f"building wheels from sdists failed:\n{tail}")
    for whl in out.glob("*.whl"):
        os.replace(whl, wheels / whl.name)
    shutil.rmtree(out)
