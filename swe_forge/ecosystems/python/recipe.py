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
poetry-core (see :mod:`swe_forge.ecosystems.python.recipe_poetry`); a pytest older than the
harness supports is raised to the oldest one it does, and the change is recorded in the recipe.

The metadata files themselves are read in :mod:`~swe_forge.ecosystems.python.recipe_metadata`;
requirements are merged and checked against the harness's pytest floor in
:mod:`~swe_forge.ecosystems.python.recipe_requirements`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from swe_forge.config import RepoOverride
from swe_forge.ecosystems.python.recipe_metadata import (
    _expand_self,
    _ini,
    _parse_all,
    _Reader,
    _req,
    _requirements_file,
    _setup_py,
    _toml,
    cfg_requirements,
    group_requirements,
)
from swe_forge.ecosystems.python.recipe_poetry import dependency_table, python_constraint
from swe_forge.ecosystems.python.recipe_requirements import (
    Adjustment,
    _render,
    applies,
    harness_pytest_date,
    merge_requirements,
    raise_pytest_floor,
    relax_pytest_internals,
)

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
    #: Distributions resolved as of a later date than the commit's ("name=date"): a pin
    #: replaced by the nearest release that supports the chosen Python (recipe_pins).
    package_dates: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def requirements_in(self) -> str:
        """The input of the resolver: one requirement per line, sorted."""
        return "".join(
            f"{r}\n" for r in sorted(set(self.requirements) | set(self.build_requirements))
        )


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
        # date (deps.py), and a pin on pytest's own internals would contradict it.
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
        # Absent unless used: recipes without it keep the digests (and images) they had.
        and not (k == "package_dates" and not v)
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


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
