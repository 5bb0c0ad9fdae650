"""Resolve a recipe as of its base commit's date, and fill a wheelhouse for offline installs.

Resolution runs on the host, where the host's pip and uv configuration applies (a container
cannot reach the index with the host's TLS settings): ``uv pip compile --exclude-newer DATE``
for the chosen Python and the base image's glibc. The lock (pins with hashes) is kept; its
hash names the wheelhouse and the env image, so tasks whose locks are equal share both.

Every lock also pins the installers (:data:`BOOTSTRAP`: pip, setuptools, wheel), never older
than the chosen Python's early releases, and pip never older than 21.3 (the first with PEP 660
editable installs): the env upgrades the venv's own pip to them before installing anything,
since the pip a Debian release bundles (20.3 in bullseye) cannot install a pyproject-only
project in editable mode.

The wheelhouse holds one wheel per pin, taken from the shared :class:`WheelStore` when an
earlier lock needed the same file, else downloaded with ``pip download --only-binary`` for the
target platform (hashes checked against the lock). A pin with no compatible wheel is fetched as
an sdist (never run on the host, see :mod:`swe_forge.ecosystems.python.deps_wheels`); its build
requirements are resolved as of the same date and vendored as wheels under ``build/``, and it is
built into a wheel in a container of the *build* base image (the target's Python with a C
toolchain), with no network and the wheelhouse as the only index. The project's own
distribution is never in a lock (``--no-emit-package``): a newer release of it would hand the
agent the fix.
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from swe_forge.ecosystems.python.deps_wheels import (
    WheelStore,
    build_requirements,
    fetch_sdist,
    link_or_copy,
    selection_key,
)
from swe_forge.ecosystems.python.recipe import InstallRecipe
from swe_forge.ecosystems.python.recipe_requirements import (
    harness_pytest_date,
    harness_pytest_floor,
)
from swe_forge.engine import Engine, Limits
from swe_forge.errors import BuildError
from swe_forge.locks import file_lock

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
#: Installers every lock pins and the env installs first (see the module's docstring).
BOOTSTRAP = ("pip", "setuptools", "wheel")
#: pip 21.3 (2021-10-11) is the first pip with PEP 660 editable installs.
PIP_PEP660_FLOOR = "2021-10-12T00:00:00Z"
#: Build backends' first releases with PEP 660's build_editable hook (the day after):
#: poetry-core 1.0.8 (2022-02-28), flit-core 3.4.0 (2021-10-10).
EDITABLE_BACKEND_FLOORS = {
    "poetry-core": "2022-03-01T00:00:00Z",
    "flit-core": "2021-10-11T00:00:00Z",
}
#: Bumped when what a lock holds changes for the same recipe (cached locks are then stale).
RESOLVE_VERSION = 4


@dataclass(frozen=True)
class Pin:
    """One pinned distribution of a lock and the sha256 hashes of the files it allows."""

    name: str
    version: str
    hashes: frozenset[str]
    text: str  # the lock's lines for this pin (a requirement with its hashes)

    @property
    def key(self) -> str:
        """The normalized project name."""
        return canonicalize_name(self.name)


@dataclass(frozen=True)
class Lock:
    """A resolved, pinned set of distributions for one Python and platform."""

    text: str  # uv's output: pins with hashes
    python: str
    platform: str
    digest: str  # sha256 over text + python + platform
    #: The "as of" date it was resolved for (what sdists' build requirements resolve as of).
    exclude_newer: str = ""

    def pins(self) -> list[tuple[str, str]]:
        """(name, version) of every pin, in lock order."""
        return [(p.name, p.version) for p in self.pinned()]

    def pinned(self) -> list[Pin]:
        """Every pin with its allowed hashes and its own lines of the lock, in lock order."""
        out: list[Pin] = []
        block: list[str] = []
        for line in [*self.text.splitlines(), ""]:
            if line and line[0].isspace() and block:
                block.append(line)
                continue
            if block:
                m = _PIN.match(block[0].strip())
                if m:
                    body = "\n".join(block)
                    out.append(
                        Pin(m.group(1), m.group(3), frozenset(_HASH.findall(body)), body + "\n")
                    )
            block = [line] if line and not line.startswith("#") else []
        return out

    def install_text(self) -> str:
        """The pins without hashes (wheels built here from sdists have their own hashes)."""
        return "".join(f"{n}=={v}\n" for n, v in self.pins())

    def bootstrap_text(self) -> str:
        """The pins of the installers (:data:`BOOTSTRAP`), installed before anything else."""
        return "".join(f"{n}=={v}\n" for n, v in self.pins() if canonicalize_name(n) in BOOTSTRAP)


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


def _uv_target(glibc: str) -> tuple[str, str]:
    """(our platform name, the one uv is given) for a glibc version."""
    target = f"{_arch()}-manylinux_{glibc.replace('.', '_')}"
    # uv knows manylinux targets up to 2_40; a newer glibc runs those wheels too.
    major, minor = (int(x) for x in glibc.split("."))
    return target, f"{_arch()}-manylinux_{major}_{min(minor, UV_MAX_GLIBC_MINOR)}"


def with_bootstrap(req_in: str, project_name: str | None) -> str:
    """``req_in`` plus the installers of :data:`BOOTSTRAP` it does not name already (never the
    project itself: mining pip must not pin pip)."""
    named: set[str] = set()
    for line in req_in.splitlines():
        try:
            named.add(canonicalize_name(Requirement(line).name))
        except InvalidRequirement:
            continue
    if project_name:
        named.add(canonicalize_name(project_name))
    extra = [f"{tool}\n" for tool in BOOTSTRAP if tool not in named]
    return "".join(sorted([*req_in.splitlines(keepends=True), *extra]))


def tool_floors(python: str, exclude_newer: str) -> dict[str, str]:
    """Later "as of" dates for tools whose as-of-date release is too old to work: build tools
    from ~4 months after the Python itself, pip with PEP 660 (see the module), and the oldest
    pytest the harness runs on."""
    floor = _build_tools_floor(python)
    out: dict[str, str] = {}
    for pkg in BUILD_TOOLS:
        date = max(floor, PIP_PEP660_FLOOR) if pkg == "pip" else floor
        if date > exclude_newer:
            out[pkg] = date
    # The project is installed editable: a build backend from before its PEP 660 hooks
    # (build_editable) cannot do that, so it is taken as of its first release with them.
    for pkg, date in EDITABLE_BACKEND_FLOORS.items():
        if date > exclude_newer:
            out[pkg] = max(out.get(pkg, ""), date)
    # pytest too: the harness runs on nothing older than its floor, whatever the commit's date;
    # with it the packages that floor release needs (pluggy >= 0.12 for pytest 5.4...).
    pytest_date = harness_pytest_date(python)
    if pytest_date > exclude_newer:
        for pkg in PYTEST_AND_ITS_DEPENDENCIES:
            out[pkg] = max(out.get(pkg, ""), pytest_date)
    return out


#: pytest and what its floor releases depend on, resolved at the floor's date together.
PYTEST_AND_ITS_DEPENDENCIES = (
    "atomicwrites",
    "attrs",
    "colorama",
    "importlib-metadata",
    "iniconfig",
    "more-itertools",
    "packaging",
    "pluggy",
    "py",
    "pyparsing",
    "pytest",
    "six",
    "toml",
    "wcwidth",
    "zipp",
)


def resolve(recipe: InstallRecipe, glibc: str, *, cache: Path, timeout: float = 600) -> Lock:
    """Resolve the recipe's requirements (plus :data:`BOOTSTRAP`) as of its date; cache by
    the input's hash.

    Raises:
        BuildError: the resolver found no solution (the message has its explanation).
    """
    target, _uv = _uv_target(glibc)
    req_in = with_bootstrap(recipe.requirements_in(), recipe.project_name)
    dates = dict(d.split("=", 1) for d in recipe.package_dates)
    for attempt in range(_DATED_RETRIES + 1):
        try:
            text = _compile(
                req_in,
                python=recipe.python,
                glibc=glibc,
                exclude_newer=recipe.exclude_newer,
                no_emit=recipe.project_name,
                cache=cache,
                timeout=timeout,
                what="the dependencies",
                package_dates=dates,
            )
            break
        except BuildError as exc:
            # A pin replaced by a later release (recipe_pins) needs what that release
            # depends on as of its own date: the resolver names what the commit's date hid.
            hidden = set(_FILTERED.findall(str(exc))) - set(dates)
            if not dates or not hidden or attempt == _DATED_RETRIES:
                raise
            latest = max(dates.values())
            dates.update({canonicalize_name(n): latest for n in hidden})
    return Lock(
        text,
        recipe.python,
        target,
        _lock_digest(text, recipe.python, target),
        exclude_newer=recipe.exclude_newer,
    )


#: How often a resolution with replaced pins is retried with the packages the date hid.
_DATED_RETRIES = 6
_FILTERED = re.compile(r"`([A-Za-z0-9._-]+)` was filtered by `exclude-newer`")


def _compile(
    req_in: str,
    *,
    python: str,
    glibc: str,
    exclude_newer: str,
    no_emit: str | None,
    cache: Path,
    timeout: float,
    what: str,
    package_dates: dict[str, str] | None = None,
) -> str:
    """``uv pip compile`` with hashes for one target as of a date, cached by its inputs.

    ``package_dates``: later "as of" dates of some distributions (a replaced pin's)."""
    target, uv_target = _uv_target(glibc)
    parts: list[object] = [RESOLVE_VERSION, req_in, python, target, exclude_newer, no_emit]
    if package_dates:
        parts.append(sorted(package_dates.items()))
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    cached = cache / "locks" / f"{key}.txt"
    if cached.is_file():
        return cached.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        req_path = Path(tmp) / "requirements.in"
        req_path.write_text(req_in)
        cmd = [
            uv_binary(),
            "pip",
            "compile",
            str(req_path),
            "--python-version",
            python,
            "--python-platform",
            uv_target,
            "--no-header",
            "--no-annotate",
            "--generate-hashes",
            "--quiet",
        ]
        if exclude_newer:
            cmd += ["--exclude-newer", exclude_newer]
            floors = tool_floors(python, exclude_newer)
            for pkg, date in (package_dates or {}).items():
                if date > exclude_newer:
                    floors[pkg] = max(floors.get(pkg, ""), date)
            for pkg, date in sorted(floors.items()):
                cmd += ["--exclude-newer-package", f"{pkg}={date}"]
            if "pytest" in floors:
                # A constraint, not a requirement: it binds only when something needs pytest.
                constraints = Path(tmp) / "constraints.txt"
                constraints.write_text(f"pytest>={harness_pytest_floor(python)}\n")
                cmd += ["--constraint", str(constraints)]
        if no_emit:
            cmd += ["--no-emit-package", no_emit]
        interp = _target_interpreter(python)
        if interp:
            # sdists are built for metadata with this interpreter: it must be the target's.
            cmd += ["--python", interp]
        env = dict(os.environ, UV_NO_PROGRESS="1")
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    if proc.returncode != 0:
        msg = proc.stderr.strip()
        raise BuildError(
            f"cannot resolve {what} as of {exclude_newer or 'today'} for Python "
            f"{python}:\n{msg[-3000:]}",
            hint="pin or exclude the offending requirement in configs/repos.yaml",
        )
    text = proc.stdout
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    tmp_path.write_text(text)
    os.replace(tmp_path, cached)
    return text


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


def _build_tools_floor(python: str) -> str:
    """Build tools no older than ~4 months after the chosen Python's release."""
    from datetime import datetime, timedelta

    from swe_forge.ecosystems.python.recipe import PYTHON_RELEASES

    rel = datetime.fromisoformat(PYTHON_RELEASES[python]) + timedelta(days=120)
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
    """A directory of wheels for one lock, plus the lock itself.

    Layout: one wheel per pin, ``install.txt`` (the pins), ``bootstrap.txt`` (the installers'
    pins), ``lock.txt``; ``build/`` holds the wheels that built the lock's sdists (never
    installed into the env, kept so the build can be repeated offline).
    """

    path: Path
    lock: Lock
    wheels: int
    sdists_built: int
    reused: bool
    seconds: float
    #: Wheels taken from the shared store instead of downloaded or built (0 when reused).
    from_store: int = 0


#: Returns the image sdists are built in (the target's build base); called only when needed.
BuildImage = Callable[[], str]


def wheelhouse(
    lock: Lock,
    glibc: str,
    *,
    cache: Path,
    engine: Engine | None = None,
    build_image: BuildImage | None = None,
    timeout: float = 1800,
) -> Wheelhouse:
    """Fill (or reuse) the wheelhouse of ``lock`` under ``cache/wheelhouses/<digest>``.

    The directory appears under its final name only when complete (built in a temporary
    directory and renamed), and a lock file serialises concurrent builders of the same lock.
    Wheels come from (and go into) the shared store under ``cache/wheels``.

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
        # Readable by the unprivileged user that builds sdists from it in a container.
        os.chmod(tmp, 0o755)
        try:
            (tmp / "lock.txt").write_text(lock.text)
            (tmp / "bootstrap.txt").write_text(lock.bootstrap_text())
            filler = _Filler(lock, glibc, WheelStore(cache / "wheels"), cache, timeout)
            built = filler.fill(tmp, engine, build_image)
            (tmp / "install.txt").write_text(lock.install_text())
            if final.exists():
                shutil.rmtree(final)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return Wheelhouse(
        final,
        lock,
        len(list(final.glob("*.whl"))),
        built,
        False,
        time.perf_counter() - start,
        from_store=filler.from_store,
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


class _Filler:
    """Fills one wheelhouse: store, then index, then sdists built in a container."""

    def __init__(
        self, lock: Lock, glibc: str, store: WheelStore, cache: Path, timeout: float
    ) -> None:
        self.lock = lock
        self.glibc = glibc
        self.store = store
        self.cache = cache
        self.timeout = timeout
        self.from_store = 0
        py = lock.python.replace(".", "")
        self.binary = [
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
        ]
        for tag in _platform_tags(glibc):
            self.binary += ["--platform", tag]

    def _key(self, pin: Pin) -> str:
        # What pip picks for a pin depends on the release's files and the target only.
        return selection_key("wheel", pin.key, pin.version, self.lock.python, self.lock.platform)

    def fill(self, dest: Path, engine: Engine | None, build_image: BuildImage | None) -> int:
        """Put a wheel of every pin into ``dest``; returns how many were built from sdists."""
        missing = self.wheels(self.lock.pinned(), dest)
        if not missing:
            return 0
        todo: list[tuple[Pin, str]] = []
        for pin in missing:
            built_key = selection_key(
                "built", pin.key, pin.version, *sorted(pin.hashes), self.lock.python
            )
            todo.append((pin, built_key))
        # A wheel built earlier from the same sdist for the same Python is reused.
        left = []
        for pin, built_key in todo:
            got = self.store.selected(built_key)
            if got is not None:
                link_or_copy(got, dest / got.name)
                self.from_store += 1
            else:
                left.append((pin, built_key))
        if not left:
            return len(missing)
        if engine is None or build_image is None:
            names = [f"{p.name}=={p.version}" for p, _k in left]
            raise BuildError(f"sdists need building but no engine was given: {names}")
        sdists = dest / "sdists"
        build_dir = dest / "build"
        build_dir.mkdir(exist_ok=True)
        for pin, _k in left:
            sdist = fetch_sdist(pin.name, pin.version, pin.hashes, sdists, timeout=self.timeout)
            self._build_requirements(sdist, build_dir)
        built = _build_sdists(engine, build_image(), dest, sdists, self.timeout)
        for pin, built_key in left:
            whl = built.get(pin.key)
            if whl is None:
                raise BuildError(f"building {pin.name}=={pin.version} produced no wheel")
            sha, _stored = self.store.add(whl)
            self.store.remember(built_key, sha, whl.name)
            os.replace(whl, dest / whl.name)
        shutil.rmtree(sdists)
        return len(missing)

    def wheels(self, pins: list[Pin], dest: Path) -> list[Pin]:
        """Link or download a wheel of every pin into ``dest``; returns pins with none."""
        missing: list[Pin] = []
        for pin in pins:
            got = self.store.selected(self._key(pin), pin.hashes)
            if got is not None:
                link_or_copy(got, dest / got.name)
                self.from_store += 1
            else:
                missing.append(pin)
        if not missing:
            return []
        incoming = Path(tempfile.mkdtemp(dir=dest, prefix=".incoming-"))
        try:
            req = incoming / "lock.in"
            req.write_text("".join(p.text for p in missing))
            proc = _pip_download(
                [*self.binary, "--dest", str(incoming), "--require-hashes", "-r", str(req)],
                self.timeout,
            )
            req.unlink()
            if proc.returncode != 0:
                # Some pins have no compatible wheel: take the wheels one by one.
                for pin in missing:
                    if not any(_wheel_of(p.name, pin) for p in incoming.glob("*.whl")):
                        one = incoming / "one.in"
                        one.write_text(pin.text)
                        args = ["--dest", str(incoming), "--require-hashes", "-r", str(one)]
                        _pip_download([*self.binary, *args], self.timeout)
                        one.unlink()
            left: list[Pin] = []
            for pin in missing:
                found = sorted(p for p in incoming.glob("*.whl") if _wheel_of(p.name, pin))
                if not found:
                    left.append(pin)
                    continue
                sha, stored = self.store.add(found[0])
                self.store.remember(self._key(pin), sha, found[0].name)
                link_or_copy(stored, dest / found[0].name)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        return left

    def _build_requirements(self, sdist: Path, build_dir: Path) -> None:
        """Resolve what building ``sdist`` needs as of the lock's date; vendor it as wheels."""
        reqs = build_requirements(sdist)
        text = _compile(
            "".join(f"{r}\n" for r in sorted(reqs)),
            python=self.lock.python,
            glibc=self.glibc,
            exclude_newer=self.lock.exclude_newer,
            no_emit=None,
            cache=self.cache,
            timeout=self.timeout,
            what=f"the build requirements of {sdist.name}",
        )
        sub = Lock(text, self.lock.python, self.lock.platform, "", self.lock.exclude_newer)
        have = {p.name for p in build_dir.glob("*.whl")}
        pins = [p for p in sub.pinned() if not any(_wheel_of(n, p) for n in have)]
        left = self.wheels(pins, build_dir)
        if left:
            names = ", ".join(f"{p.name}=={p.version}" for p in left)
            raise BuildError(
                f"building {sdist.name} needs {names}, which has no wheel for Python "
                f"{self.lock.python}",
                hint="pin a version with wheels in configs/repos.yaml",
            )


def _wheel_of(filename: str, pin: Pin) -> bool:
    try:
        name, version, _build, _tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return False
    return name == pin.key and str(version) == _normalized_version(pin.version)


def _normalized_version(version: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(version))
    except InvalidVersion:
        return version


#: The sdist build: the lock's installers first, then each sdist with build isolation, its
#: build requirements (and ``setup_requires``, fetched by setuptools through pip) taken only
#: from the vendored wheels.
_SDIST_SCRIPT = (
    "set -e; python3 -m venv /tmp/b; "
    "/tmp/b/bin/python -m pip install -q --no-index --find-links /wheels "
    "-r /wheels/bootstrap.txt; "
    'for s in /sdists/*; do echo "== $s"; '
    '/tmp/b/bin/python -m pip wheel --no-deps --use-pep517 -w /out "$s"; done'
)


def _build_sdists(
    engine: Engine, image: str, wheels: Path, sdists: Path, timeout: float
) -> dict[str, Path]:
    """Build sdists into wheels in a locked-down container of ``image`` (the target's Python
    with a C toolchain): no network, the wheelhouse as the only index, a non-root user and
    resource limits (an sdist's ``setup.py`` is untrusted code). Returns wheels by name."""
    out = wheels / "built"
    out.mkdir()
    os.chmod(out, 0o777)
    result = engine.run_locked(
        image,
        ["/bin/sh", "-c", _SDIST_SCRIPT],
        timeout=timeout,
        volumes={
            str(wheels): {"bind": "/wheels", "mode": "ro"},
            str(sdists): {"bind": "/sdists", "mode": "ro"},
            str(out): {"bind": "/out", "mode": "rw"},
        },
        environment={
            "HOME": "/tmp",
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": "/wheels/build /wheels",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_CACHE_DIR": "1",
        },
        limits=Limits(fsize_bytes=4 << 30),
        working_dir="/tmp",
    )
    if result.exit_code != 0:
        why = "timed out" if result.timed_out else f"exit {result.exit_code}"
        tail = "\n".join(result.output.strip().splitlines()[-15:])
        raise BuildError(f"building wheels from sdists failed ({why}):\n{tail}")
    found: dict[str, Path] = {}
    for whl in sorted(out.glob("*.whl")):
        found[canonicalize_name(parse_wheel_filename(whl.name)[0])] = whl
    return found
