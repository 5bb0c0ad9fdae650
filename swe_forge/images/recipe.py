"""Work out how to install a repository for testing, from its files at the base commit.

Everything here is *static*: metadata files are parsed (TOML, INI, the AST of ``setup.py``),
never executed. A mined repository is hostile input, and resolution runs on the host.

The recipe names the Python version (the newest of our base images' Pythons that had been
released by the commit's date and that the project allows), the project's own name (so it
is never taken from the package index: a newer release would leak the fix), the
requirements to resolve (runtime dependencies, test extras or groups, test requirement
files, tox deps, ``tests_require``, and pytest when nothing provides it) and the build
requirements needed to install the project itself offline. Requirements of one distribution
under different markers stay apart, as a resolver reads them; Poetry tables are read by
poetry-core (see :mod:`swe_forge.images.poetry`); a pytest older than the harness supports is
raised to the oldest one it does, and the change is recorded in the recipe.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from swe_forge import pyast
from swe_forge.config import RepoOverride
from swe_forge.images.poetry import dependency_table, python_constraint

#: Extras, dependency groups and Poetry groups that hold test dependencies.
TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop", "development", "test-dependencies")
#: Requirement files that hold test dependencies (matched as paths from the repository root).
TEST_REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-testing.txt",
    "requirements_test.txt",
    "requirements_tests.txt",
    "requirements-dev.txt",
    "requirements_dev.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests-requirements.txt",
    "dev-requirements.txt",
    "dev_requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
    "requirements/dev.txt",
    "requirements/develop.txt",
    "tests/requirements.txt",
    "requirements.txt",
)
#: When a Python version was first released (to pick one a commit could have run on).
PYTHON_RELEASES = {
    "3.8": "2019-10-14",
    "3.9": "2020-10-05",
    "3.10": "2021-10-04",
    "3.11": "2022-10-24",
    "3.12": "2023-10-02",
    "3.13": "2024-10-07",
    "3.14": "2025-10-07",
}
_CLASSIFIER_PY = re.compile(r"Programming Language :: Python :: (3\.\d+)\s*$")
_TOX_ENV = re.compile(r"\bpy3(\d{1,2})\b")
_MAX_FILE = 1 << 20
_SELF_INSTALL = re.compile(r"^(?:-e\s+|--editable\s+)?\.(?:\[([^\]]*)\])?\s*$")


@dataclass(frozen=True)
class Adjustment:
    """A requirement of the project that the recipe replaced, with both specs and why."""

    original: str
    chosen: str
    reason: str


@dataclass(frozen=True)
class InstallRecipe:
    """How to build the environment for one repository at one commit."""

    project_name: str | None
    python: str
    python_reason: str
    requirements: tuple[str, ...]
    build_requirements: tuple[str, ...]
    extras: tuple[str, ...]
    sources: tuple[str, ...]
    exclude_newer: str
    notes: tuple[str, ...] = field(default=())
    #: Requirements changed on purpose (a pytest too old for the harness), as evidence.
    adjusted: tuple[Adjustment, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def requirements_in(self) -> str:
        """The input of the resolver: one requirement per line, sorted."""
        return "".join(
            f"{r}\n" for r in sorted(set(self.requirements) | set(self.build_requirements))
        )


def _req(line: str) -> Requirement | None:
    line = line.split(" #", 1)[0].strip()
    if (
        not line
        or line.startswith(("#", "-", ".", "/"))
        or "://" in line
        or "@" in line.split(";")[0]
    ):
        return None
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


class _Reader:
    """Reads text files of one commit through a callable; caches and bounds them."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self._cache: dict[str, str | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._cache:
            data = self._read(path)
            if data is None or len(data) > _MAX_FILE:
                self._cache[path] = None
            else:
                self._cache[path] = data.decode("utf-8", "replace")
        return self._cache[path]


def detect_recipe(
    read: Callable[[str], bytes | None],
    commit_time: int,
    *,
    pythons: tuple[str, ...],
    override: RepoOverride | None = None,
    test_imports: frozenset[str] = frozenset(),
) -> InstallRecipe:
    """Detect the install recipe of a repository at a commit.

    ``read(path)`` returns a file's bytes at the commit (None when absent); ``pythons`` are the
    Python versions we have base images for; ``commit_time`` (Unix seconds, the base commit's)
    is both the "as of" date for resolution and the limit of the Python versions considered.
    ``test_imports``: the top-level modules the task's test files import; an extra that is not
    a test extra is installed too when one of its requirements provides one of them (tests
    that import an optional integration, ``yaml`` from a ``[pyyaml]`` extra, say).
    """
    override = override or RepoOverride()
    files = _Reader(read)
    sources: list[str] = []
    notes: list[str] = []
    reqs: list[Requirement] = []
    extras_used: list[str] = []
    requires_python: list[str] = []
    classifier_versions: set[str] = set()
    name: str | None = None
    build: list[str] = []
    setup_requires: list[str] = []

    pyproject = _toml(files.text("pyproject.toml"))
    project = pyproject.get("project") or {}
    if isinstance(project.get("name"), str):
        name = project["name"]
    if isinstance(project.get("requires-python"), str):
        requires_python.append(project["requires-python"])
    for c in project.get("classifiers") or []:
        m = _CLASSIFIER_PY.match(str(c))
        if m:
            classifier_versions.add(m.group(1))
    dynamic = set(project.get("dynamic") or [])
    if "dependencies" not in dynamic and project:
        reqs += _parse_all(
            project.get("dependencies") or [], sources, "pyproject.toml [project] dependencies"
        )
    declared = project.get("optional-dependencies")
    optional: dict[str, Any] = dict(declared) if isinstance(declared, dict) else {}
    groups = dict(pyproject.get("dependency-groups") or {})
    tool = pyproject.get("tool") or {}
    # Development groups under the tools' own keys (before PEP 735): PDM's
    # [tool.pdm.dev-dependencies] (named groups) and uv's [tool.uv] dev-dependencies (one list).
    pdm = tool.get("pdm") if isinstance(tool, dict) else None
    pdm_dev = pdm.get("dev-dependencies") if isinstance(pdm, dict) else None
    if isinstance(pdm_dev, dict):
        for group, items in pdm_dev.items():
            groups.setdefault(group, items)
    uv_tool = tool.get("uv") if isinstance(tool, dict) else None
    uv_dev = uv_tool.get("dev-dependencies") if isinstance(uv_tool, dict) else None
    if isinstance(uv_dev, list):
        groups.setdefault("dev", uv_dev)
    bs = pyproject.get("build-system") or {}
    if isinstance(bs.get("requires"), list):
        build += [str(x) for x in bs["requires"]]
    poetry = (tool.get("poetry") if isinstance(tool, dict) else None) or {}
    if isinstance(poetry, dict) and poetry:
        name = name or (poetry.get("name") if isinstance(poetry.get("name"), str) else None)
        reqs += _poetry(poetry, optional, requires_python, sources, notes, extras_used)

    setup_cfg = _ini(files.text("setup.cfg"))
    if setup_cfg is not None:
        name = name or setup_cfg.get("metadata", "name", fallback=None)
        pr = setup_cfg.get("options", "python_requires", fallback=None)
        if pr:
            requires_python.append(pr)
        for c in setup_cfg.get("metadata", "classifiers", fallback="").splitlines():
            m = _CLASSIFIER_PY.match(c.strip())
            if m:
                classifier_versions.add(m.group(1))
        reqs += _parse_all(
            cfg_requirements(setup_cfg.get("options", "install_requires", fallback="")),
            sources,
            "setup.cfg install_requires",
        )
        reqs += _parse_all(
            cfg_requirements(setup_cfg.get("options", "tests_require", fallback="")),
            sources,
            "setup.cfg tests_require",
        )
        setup_requires += [
            x
            for x in cfg_requirements(setup_cfg.get("options", "setup_requires", fallback=""))
            if _req(x)
        ]
        if setup_cfg.has_section("options.extras_require"):
            for key, value in setup_cfg.items("options.extras_require"):
                optional.setdefault(key, cfg_requirements(value))

    setup_py = files.text("setup.py")
    if setup_py is not None:
        found = _setup_py(setup_py)
        name = name or found.get("name")
        if found.get("python_requires"):
            requires_python.append(found["python_requires"])
        classifier_versions |= {
            m.group(1) for c in found.get("classifiers", []) if (m := _CLASSIFIER_PY.match(c))
        }
        reqs += _parse_all(found.get("install_requires", []), sources, "setup.py install_requires")
        reqs += _parse_all(found.get("tests_require", []), sources, "setup.py tests_require")
        for key, value in (found.get("extras_require") or {}).items():
            optional.setdefault(key, value)
        setup_requires += [str(x) for x in found.get("setup_requires", []) if _req(str(x))]
        if not build:
            build += ["setuptools", "wheel"]
    if not build:
        build += ["setuptools>=40.8.0", "wheel"]
    # setup_requires (pbr, setuptools_scm...) are fetched by setuptools itself when the
    # project installs: offline, they must already be in the environment.
    build += sorted(set(setup_requires))
    if any(b.split(";")[0].strip().lower().startswith("hatchling") for b in build):
        # hatchling asks for editables via get_requires_for_build_editable (older releases).
        build.append("editables")
    if not any(canonicalize_name(Requirement(b).name) == "wheel" for b in build if _req(b)):
        # setuptools before 70 needs the wheel package for editable (PEP 660) builds.
        build.append("wheel")

    norm_name = canonicalize_name(name) if name else None
    self_extras: list[str] = []
    req_files = (
        override.requirement_files
        if override.requirement_files is not None
        else TEST_REQUIREMENT_FILES
    )
    for path in req_files:
        text = files.text(path)
        if text is not None:
            reqs += _requirements_file(files, path, text, sources, 0, self_extras)
    tox = _ini(files.text("tox.ini"))
    if tox is not None and tox.has_section("testenv"):
        # tox installs these extras of the project into its test environments.
        raw = tox.get("testenv", "extras", fallback="")
        self_extras += [e for e in re.split(r"[,\s]+", raw) if e and "{" not in e]
    detected = [k for k in optional if canonicalize_name(str(k)) in TEST_EXTRAS]
    wanted_extras = (
        override.extras
        if override.extras is not None
        else tuple(dict.fromkeys(detected + [e for e in self_extras if e in optional]))
    )
    if override.extras is None and test_imports:
        chosen = set(wanted_extras)
        for extra in sorted(optional, key=str):
            if extra in chosen:
                continue
            provided = {
                m
                for r in _expand_self(optional, extra, norm_name, [], "")
                for m in modules_of(r.name)
            }
            hit = sorted(provided & test_imports)
            if hit:
                wanted_extras = (*wanted_extras, extra)
                notes.append(f"extra [{extra}] installed: the tests import {', '.join(hit)}")
    for extra in wanted_extras:
        if extra in optional:
            reqs += _expand_self(optional, extra, norm_name, sources, f"extra [{extra}]")
            extras_used.append(str(extra))
    for group, items in groups.items():
        if canonicalize_name(str(group)) in TEST_EXTRAS and isinstance(items, list):
            reqs += _parse_all(
                group_requirements(groups, str(group)), sources, f"dependency-group {group}"
            )
            extras_used.append(f"group:{group}")
    if tox is not None and tox.has_section("testenv"):
        lines = [ln for ln in tox.get("testenv", "deps", fallback="").splitlines() if "{" not in ln]
        reqs += _parse_all(lines, sources, "tox.ini [testenv] deps")
        for m in _TOX_ENV.finditer(tox.get("tox", "envlist", fallback="")):
            classifier_versions.add(f"3.{m.group(1)}")

    reqs += _parse_all(list(override.requirements), sources, "configs/repos.yaml requirements")
    excluded = {canonicalize_name(x) for x in override.exclude}
    if norm_name:
        excluded.add(norm_name)
    python, reason = choose_python(
        requires_python, classifier_versions, commit_time, pythons, override.python
    )
    final = merge_requirements(r for r in reqs if canonicalize_name(r.name) not in excluded)
    if not any(canonicalize_name(r.name) == "pytest" and applies(r, python) for r in final):
        final.append(Requirement("pytest"))
        notes.append("pytest added: no test requirement named it for this Python")
    final, adjusted = raise_pytest_floor(final, python)
    exclude_newer = datetime.fromtimestamp(commit_time, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if exclude_newer < harness_pytest_date(python):
        # Older than the oldest pytest the harness runs on: pytest is resolved at that floor's
        # date (images/resolve.py), and a pin on pytest's own internals would contradict it.
        final, relaxed = relax_pytest_internals(final, python)
        adjusted += relaxed
    build_reqs = sorted(
        {str(Requirement(b)) for b in (list(build) + list(override.build_requirements)) if _req(b)}
    )
    return InstallRecipe(
        project_name=name,
        python=python,
        python_reason=reason,
        requirements=tuple(sorted({_render(r) for r in final})),
        build_requirements=tuple(
            b for b in build_reqs if canonicalize_name(Requirement(b).name) not in excluded
        ),
        extras=tuple(dict.fromkeys(extras_used)),
        sources=tuple(dict.fromkeys(sources)),
        exclude_newer=exclude_newer,
        notes=tuple(notes),
        adjusted=tuple(adjusted),
    )


def group_requirements(groups: dict[str, Any], name: str) -> list[str]:
    """A dependency group's requirement strings, ``{include-group = "..."}`` entries expanded
    (PEP 735; group names compare normalised, a cycle or a missing group adds nothing)."""
    by_norm = {canonicalize_name(str(k)): v for k, v in groups.items()}
    out: list[str] = []
    seen: set[str] = set()

    def walk(group: str) -> None:
        norm = canonicalize_name(group)
        if norm in seen:
            return
        seen.add(norm)
        items = by_norm.get(norm)
        if not isinstance(items, list):
            return
        for item in items:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                walk(item["include-group"])

    walk(name)
    return out


def _render(r: Requirement) -> str:
    out = r.name
    if r.extras:
        out += "[" + ",".join(sorted(r.extras)) + "]"
    out += str(r.specifier)
    if r.marker:
        out += f"; {r.marker}"
    return out


def merge_requirements(reqs: Iterable[Requirement]) -> list[Requirement]:
    """Merge requirements the way a resolver reads them: per distribution *and* marker.

    Entries with the same name and the same marker (extras, groups, files asking for the same
    thing) become one, with the intersection of their specifiers and the union of their
    extras. Entries under different markers stay apart: ``pytest<8; python_version < "3.8"``
    and ``pytest>=8`` are two branches, of which the target Python takes the one that applies;
    folding them into the first marker would install nothing on a newer Python.
    """
    merged: dict[tuple[str, str], Requirement] = {}
    for r in reqs:
        key = (canonicalize_name(r.name), str(r.marker) if r.marker else "")
        if key in merged:
            merged[key].specifier &= r.specifier
            merged[key].extras |= r.extras
        else:
            merged[key] = Requirement(str(r))
    return list(merged.values())


def _environment(python: str) -> dict[str, str]:
    """Marker variables of the target: CPython ``python`` on Linux, no extra requested."""
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "extra": "",
    }


def applies(req: Requirement, python: str) -> bool:
    """Does ``req`` apply on the target Python (its marker, if any, holds there)?"""
    if req.marker is None:
        return True
    try:
        return bool(req.marker.evaluate(_environment(python)))
    except (UndefinedComparison, UndefinedEnvironmentName, InvalidVersion):
        return True  # cannot tell: the resolver decides, and keeping it is the safe side


#: The oldest pytest the harness plugin runs on, per Python (found by running the harness
#: under each pytest release, tests/integration/test_harness_plugin.py keeps it true for the
#: host's Python). Before 5.4 the harness sees pytest's own late changes as tampering, and
#: before 4.6 it cannot run at all (no ``--rootdir``, no ``pytest.hookimpl``...); from
#: Python 3.10 on, pytest before 6.2.4 cannot even rewrite asserts (``alias`` has ``lineno``).
HARNESS_PYTEST_FLOOR = (("3.10", "6.2.4"), ("0", "5.4.0"))
#: The day after each floor's release (6.2.4: 2021-05-04, 5.4.0: 2020-03-12): the "as of" date
#: pytest alone is resolved at when the base commit is older, so an open spec such as
#: ``pytest>=3`` gets the oldest supported series rather than one the harness cannot run.
HARNESS_PYTEST_FLOOR_DATE = {"6.2.4": "2021-05-05T00:00:00Z", "5.4.0": "2020-03-13T00:00:00Z"}


def harness_pytest_floor(python: str) -> Version:
    """The oldest pytest the harness supports on Python ``python``."""
    for since, floor in HARNESS_PYTEST_FLOOR:
        if Version(python) >= Version(since):
            return Version(floor)
    raise AssertionError("HARNESS_PYTEST_FLOOR ends with a catch-all")


def harness_pytest_date(python: str) -> str:
    """The earliest "as of" date at which pytest resolves to a release the harness supports."""
    return HARNESS_PYTEST_FLOOR_DATE[str(harness_pytest_floor(python))]


def _upper_bounds(spec: SpecifierSet) -> list[tuple[Version, bool]]:
    """(bound, inclusive) of every upper bound in ``spec``."""
    out = []
    for s in spec:
        op, text = s.operator, s.version
        try:
            if op in ("==", "===") and text.endswith(".*"):
                release = list(Version(text[:-2]).release)
                release[-1] += 1
                out.append((Version(".".join(map(str, release))), False))
            elif op in ("==", "===", "<="):
                out.append((Version(text), True))
            elif op == "<":
                out.append((Version(text), False))
            elif op == "~=":
                release = list(Version(text).release[:-1])
                release[-1] += 1
                out.append((Version(".".join(map(str, release))), False))
        except (InvalidVersion, IndexError):
            continue
    return out


def below_floor(spec: SpecifierSet, floor: Version) -> bool:
    """Does every version ``spec`` admits lie below ``floor`` (an upper bound under it)?"""
    return any(
        bound < floor or (bound == floor and not inclusive)
        for bound, inclusive in _upper_bounds(spec)
    )


def raise_pytest_floor(
    reqs: list[Requirement], python: str
) -> tuple[list[Requirement], list[Adjustment]]:
    """Replace a pytest requirement that only admits releases older than the harness supports.

    The replacement is the oldest supported minor series (``>=floor,<next minor``): the
    closest to what the project asked for. Its extras and marker are kept; each replacement is
    returned as an :class:`Adjustment` (the original and the chosen spec).
    """
    floor = harness_pytest_floor(python)
    upper = f"{floor.major}.{floor.minor + 1}"
    out: list[Requirement] = []
    adjusted: list[Adjustment] = []
    for r in reqs:
        if (
            canonicalize_name(r.name) == "pytest"
            and applies(r, python)
            and below_floor(r.specifier, floor)
        ):
            new = Requirement(str(r))
            new.specifier = SpecifierSet(f">={floor},<{upper}")
            adjusted.append(
                Adjustment(
                    original=_render(r),
                    chosen=_render(new),
                    reason=f"the harness needs pytest>={floor} on Python {python}",
                )
            )
            r = new
        out.append(r)
    return out, adjusted


#: pytest's own internals: a project that pins them pins the pytest of its day.
PYTEST_INTERNALS = frozenset({"pluggy", "py"})


def relax_pytest_internals(
    reqs: list[Requirement], python: str
) -> tuple[list[Requirement], list[Adjustment]]:
    """Drop the version specifiers of pins on pytest's internals (``pluggy``, ``py``).

    For commits older than the harness's pytest floor: the floor release needs newer internals
    than a pin of that day allows. Each relaxed pin is returned as an :class:`Adjustment`.
    """
    floor = harness_pytest_floor(python)
    out: list[Requirement] = []
    adjusted: list[Adjustment] = []
    for r in reqs:
        if canonicalize_name(r.name) in PYTEST_INTERNALS and r.specifier and applies(r, python):
            new = Requirement(str(r))
            new.specifier = SpecifierSet()
            adjusted.append(
                Adjustment(
                    original=_render(r),
                    chosen=_render(new),
                    reason=f"pytest>={floor} (the harness's floor on Python {python}) needs "
                    f"a newer {r.name} than the project pinned",
                )
            )
            r = new
        out.append(r)
    return out, adjusted


def choose_python(
    requires: list[str],
    classifier_versions: set[str],
    commit_time: int,
    pythons: tuple[str, ...],
    forced: str | None = None,
) -> tuple[str, str]:
    """Pick the Python version among ``pythons`` for a repository at a commit, and say why.

    The newest of ``pythons`` that had had its final release by the commit's date (see
    :data:`PYTHON_RELEASES`), that every ``requires`` allows (an entry may hold PEP 440
    alternatives joined by ``" || "``, as Poetry's ``python`` key does; one that no available
    version meets is ignored as a mistake) and that is no newer than the newest classifier or
    tox environment. A Python released later than the commit never runs it: its packages had
    no wheels then, and older sdists (``Cython<3``...) do not build on it. When classifiers
    stop below every released candidate, the oldest released one is the closest; when the
    commit predates all of them, the oldest allowed one.
    """
    if forced:
        return forced, "configs/repos.yaml"
    when = datetime.fromtimestamp(commit_time, tz=UTC).strftime("%Y-%m-%d")
    allowed = sorted(pythons, key=Version)
    limits: list[str] = []
    for spec in requires:
        ok = [p for p in allowed if _python_allowed(spec, p)]
        if ok:
            if len(ok) < len(allowed):
                limits.append(f"requires {spec}")
            allowed = ok
    released = [p for p in allowed if PYTHON_RELEASES.get(p, "9999") <= when]
    if not released:
        why = "oldest available: none had been released by " + when
        return allowed[0], "; ".join([why, *limits])
    if classifier_versions:
        top = max(classifier_versions, key=Version)
        below = [p for p in released if Version(p) <= Version(top)]
        if below:
            why = f"newest released by {when} and <= {top} (classifiers/tox)"
            return below[-1], "; ".join([why, *limits])
        why = f"oldest released by {when}: the closest above {top} (classifiers/tox)"
        return released[0], "; ".join([why, *limits])
    return released[-1], "; ".join([f"newest released by {when}", *limits])


def _python_allowed(spec: str, python: str) -> bool:
    """Does ``spec`` (PEP 440, or alternatives joined by ``" || "``) allow ``python``?

    ``>=3.8.1`` counts as allowing 3.8: a minor is allowed when some patch release of it is.
    """
    for alternative in spec.split("||"):
        try:
            s = SpecifierSet(alternative.strip())
        except InvalidSpecifier:
            continue
        # Any patch release of the minor will do (the base image's is not known here).
        if any(
            s.contains(Version(v), prereleases=True)
            for v in (f"{python}.0", python, f"{python}.99")
        ):
            return True
    return False


def recipe_digest(recipe: InstallRecipe) -> str:
    """sha256 of the recipe's resolution inputs."""
    data = {
        k: v
        for k, v in recipe.to_dict().items()
        if k not in ("sources", "notes", "python_reason", "adjusted")
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _toml(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str | None) -> configparser.ConfigParser | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


#: Distributions whose import name is not their own name (lowercased, ``-`` as ``_``).
IMPORT_NAMES = {
    "pyyaml": ("yaml",),
    "python-dateutil": ("dateutil",),
    "beautifulsoup4": ("bs4",),
    "pillow": ("PIL",),
    "scikit-learn": ("sklearn",),
    "pymongo": ("pymongo", "bson", "gridfs"),
    "python-dotenv": ("dotenv",),
    "attrs": ("attr", "attrs"),
    "protobuf": ("google",),
    "msgpack-python": ("msgpack",),
    "pyjwt": ("jwt",),
    "pycryptodome": ("Crypto",),
    "opencv-python": ("cv2",),
    "typing-extensions": ("typing_extensions",),
    "tomli-w": ("tomli_w",),
    "ruamel-yaml": ("ruamel",),
}


def modules_of(dist: str) -> tuple[str, ...]:
    """The top-level modules a distribution most likely provides."""
    name = canonicalize_name(dist)
    return IMPORT_NAMES.get(name, (name.replace("-", "_"),))


_IMPORT = re.compile(
    r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w., ]*))", re.M
)


def imported_modules(texts: Iterable[str]) -> frozenset[str]:
    """Top-level module names that Python sources import (relative imports left out)."""
    found: set[str] = set()
    for text in texts:
        for m in _IMPORT.finditer(text):
            names = [m.group(1)] if m.group(1) else m.group(2).split(",")
            for n in names:
                head = n.strip().split(" ")[0].split(".")[0]
                if head.isidentifier():
                    found.add(head)
    return frozenset(found)


def cfg_requirements(value: str) -> list[str]:
    """A setup.cfg requirements list the way setuptools reads it: one per line when the value
    spans lines, else separated by ``;`` (``install_requires = a>=1; b`` is two requirements,
    not ``a>=1`` with the marker ``b``); comment lines left out."""
    parts = value.splitlines() if "\n" in value else value.split(";")
    return [p.strip() for p in parts if p.strip() and not p.strip().startswith("#")]


def _parse_all(lines: list[Any], sources: list[str], where: str) -> list[Requirement]:
    out = []
    for line in lines:
        if not isinstance(line, str):
            continue
        r = _req(line)
        if r is not None:
            out.append(r)
    if out:
        sources.append(where)
    return out


def _expand_self(
    optional: dict[str, Any],
    extra: str,
    self_name: str | None,
    sources: list[str],
    where: str,
    seen: set[str] | None = None,
) -> list[Requirement]:
    """Requirements of an extra, following ``project[other]`` self-references."""
    seen = seen if seen is not None else set()
    if extra in seen:
        return []
    seen.add(extra)
    out: list[Requirement] = []
    for r in _parse_all(list(optional.get(extra) or []), sources, where):
        if self_name and canonicalize_name(r.name) == self_name:
            for sub in r.extras:
                out += _expand_self(optional, sub, self_name, sources, f"extra [{sub}]", seen)
        else:
            out.append(r)
    return out


def _requirements_file(
    files: _Reader,
    path: str,
    text: str,
    sources: list[str],
    depth: int,
    self_extras: list[str],
) -> list[Requirement]:
    """Requirements of a file (following ``-r``); ``-e .[a,b]`` lines add to ``self_extras``."""
    out: list[Requirement] = []
    base = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("-r ", "--requirement ")) and depth < 3:
            target = line.split(None, 1)[1].strip()
            if "://" in target or target.startswith("/") or ".." in target.split("/"):
                continue
            inc = files.text(base + target)
            if inc is not None:
                out += _requirements_file(
                    files, base + target, inc, sources, depth + 1, self_extras
                )
            continue
        own = _SELF_INSTALL.match(line)
        if own:
            self_extras += [e.strip() for e in (own.group(1) or "").split(",") if e.strip()]
            continue
        r = _req(line)
        if r is not None:
            out.append(r)
    if out:
        sources.append(path)
    return out


def _poetry(
    poetry: dict[str, Any],
    optional: dict[str, Any],
    requires_python: list[str],
    sources: list[str],
    notes: list[str],
    extras_used: list[str],
) -> list[Requirement]:
    """Requirements of ``[tool.poetry]``: main dependencies, test groups, legacy
    ``dev-dependencies``; its ``python`` key; its extras (added to ``optional``, so the test
    extras are chosen the same way as PEP 621 ones)."""
    main = poetry.get("dependencies")
    if isinstance(main, dict):
        pyspec = python_constraint(main.get("python"))
        if pyspec:
            requires_python.append(pyspec)
    table = dependency_table(main, "poetry dependencies")
    notes += table.notes
    out = _parse_all(table.required, sources, "poetry dependencies")
    extras = poetry.get("extras")
    if isinstance(extras, dict):
        by_name = {canonicalize_name(k): v for k, v in table.optional.items()}
        for extra, names in sorted(extras.items()):
            if not isinstance(names, list):
                continue
            picked = [
                r
                for n in names
                if isinstance(n, str)
                # An extra names a distribution, possibly with its own extras: ``foo[bar]``.
                for r in by_name.get(canonicalize_name(n.split("[", 1)[0].strip()), [])
            ]
            optional.setdefault(str(extra), picked)
    groups = poetry.get("group")
    tables: list[tuple[str, Any]] = []
    if isinstance(groups, dict):
        tables += [
            (f"poetry group {g}", spec.get("dependencies"))
            for g, spec in sorted(groups.items())
            if canonicalize_name(str(g)) in TEST_EXTRAS and isinstance(spec, dict)
        ]
    tables.append(("poetry dev-dependencies", poetry.get("dev-dependencies")))
    for where, deps in tables:
        got = dependency_table(deps, where)
        notes += got.notes
        # Optional group members are still members: Poetry installs them with the group.
        reqs = got.required + [r for rs in got.optional.values() for r in rs]
        out += _parse_all(reqs, sources, where)
        if reqs and where.startswith("poetry group "):
            extras_used.append(f"group:{where.removeprefix('poetry group ')}")
    return out


def _eval(node: ast.AST, names: dict[str, Any]) -> Any:
    """Evaluate literals, known names, ``x["k"]`` of known dicts and ``+`` of lists/strings.

    Enough for the usual shapes of ``setup.py`` (``EXTRAS["tests"] = EXTRAS["base"] + [...]``)
    without executing anything.
    """
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise ValueError(node.id)
    if isinstance(node, ast.Subscript):
        return _eval(node.value, names)[_eval(node.slice, names)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _eval(node.left, names) + _eval(node.right, names)
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _eval(k, names): _eval(v, names)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    return ast.literal_eval(node)


_EVAL_ERRORS = (
    ValueError,
    SyntaxError,
    TypeError,
    KeyError,
    IndexError,
    MemoryError,
    RecursionError,
)


def _setup_py(text: str) -> dict[str, Any]:
    """Keyword arguments of the ``setup()`` call, evaluated statically (see :func:`_eval`)."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        with contextlib.suppress(*_EVAL_ERRORS):
            value = _eval(node.value, names)
            if isinstance(target, ast.Name):
                names[target.id] = value
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                names[target.value.id][_eval(target.slice, names)] = value
    out: dict[str, Any] = {}
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and getattr(call.func, "id", getattr(call.func, "attr", "")) == "setup"
        ):
            continue
        for kw in call.keywords:
            if kw.arg is None:
                continue
            try:
                value = _eval(kw.value, names)
            except _EVAL_ERRORS:
                value = None
            if value is not None:
                out[kw.arg] = value
    for key in ("install_requires", "tests_require", "setup_requires", "classifiers"):
        if isinstance(out.get(key), str):
            out[key] = out[key].splitlines()
        if not isinstance(out.get(key, []), list):
            out.pop(key)
    if not isinstance(out.get("extras_require", {}), dict):
        out.pop("extras_require")
    if not isinstance(out.get("name", ""), str):
        out.pop("name")
    if not isinstance(out.get("python_requires", ""), str):
        out.pop("python_requires")
    return out
