"""Work out how to install a repository for testing, from its files at the base commit.

Everything here is *static*: metadata files are parsed (TOML, INI, the AST of ``setup.py``),
never executed. A mined repository is hostile input, and resolution runs on the host.

The recipe names the Python version (chosen among the base images we can build), the
project's own name (so it is never taken from the package index: a newer release would leak
the fix), the requirements to resolve (runtime dependencies, test extras or groups, test
requirement files, tox deps, ``tests_require``, and pytest when nothing provides it) and the
build requirements needed to install the project itself offline.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import hashlib
import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from swe_forge.config import RepoOverride

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
) -> InstallRecipe:
    """Detect the install recipe of a repository at a commit.

    ``read(path)`` returns a file's bytes at the commit (None when absent); ``pythons`` are the
    Python versions we have base images for; ``commit_time`` (Unix seconds) is both the
    "as of" date for resolution and a hint for the Python version.
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
    optional = project.get("optional-dependencies") or {}
    groups = pyproject.get("dependency-groups") or {}
    bs = pyproject.get("build-system") or {}
    if isinstance(bs.get("requires"), list):
        build += [str(x) for x in bs["requires"]]
    poetry = (pyproject.get("tool") or {}).get("poetry") or {}
    if poetry:
        name = name or (poetry.get("name") if isinstance(poetry.get("name"), str) else None)
        reqs += _poetry_deps(
            poetry.get("dependencies") or {}, requires_python, sources, "poetry dependencies"
        )
        for group, spec in (poetry.get("group") or {}).items():
            if canonicalize_name(str(group)) in TEST_EXTRAS:
                reqs += _poetry_deps(
                    (spec or {}).get("dependencies") or {}, [], sources, f"poetry group {group}"
                )
                extras_used.append(f"group:{group}")
        if poetry.get("dev-dependencies"):
            reqs += _poetry_deps(poetry["dev-dependencies"], [], sources, "poetry dev-dependencies")

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
            setup_cfg.get("options", "install_requires", fallback="").splitlines(),
            sources,
            "setup.cfg install_requires",
        )
        reqs += _parse_all(
            setup_cfg.get("options", "tests_require", fallback="").splitlines(),
            sources,
            "setup.cfg tests_require",
        )
        if setup_cfg.has_section("options.extras_require"):
            for key, value in setup_cfg.items("options.extras_require"):
                optional.setdefault(key, value.splitlines())

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
        if not build:
            build += ["setuptools", "wheel"]
    if not build:
        build += ["setuptools>=40.8.0", "wheel"]
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
    for extra in wanted_extras:
        if extra in optional:
            reqs += _expand_self(optional, extra, norm_name, sources, f"extra [{extra}]")
            extras_used.append(str(extra))
    for group, items in groups.items():
        if canonicalize_name(str(group)) in TEST_EXTRAS and isinstance(items, list):
            reqs += _parse_all(
                [i for i in items if isinstance(i, str)], sources, f"dependency-group {group}"
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
    final: dict[str, Requirement] = {}
    for r in reqs:
        key = canonicalize_name(r.name)
        if key in excluded:
            continue
        # Keep the first requirement seen per name plus merge specifiers: resolution needs one
        # line per distribution, and the union of constraints is what all sources ask for.
        if key in final:
            merged = final[key]
            merged.specifier &= r.specifier
            merged.extras |= r.extras
        else:
            final[key] = Requirement(str(r))
    if "pytest" not in final:
        final["pytest"] = Requirement("pytest")
        notes.append("pytest added: no test requirement named it")
    python, reason = choose_python(
        requires_python, classifier_versions, commit_time, pythons, override.python
    )
    build_reqs = sorted(
        {str(Requirement(b)) for b in (list(build) + list(override.build_requirements)) if _req(b)}
    )
    return InstallRecipe(
        project_name=name,
        python=python,
        python_reason=reason,
        requirements=tuple(sorted(_render(r) for r in final.values())),
        build_requirements=tuple(
            b for b in build_reqs if canonicalize_name(Requirement(b).name) not in excluded
        ),
        extras=tuple(dict.fromkeys(extras_used)),
        sources=tuple(dict.fromkeys(sources)),
        exclude_newer=datetime.fromtimestamp(commit_time, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        notes=tuple(notes),
    )


def _render(r: Requirement) -> str:
    out = r.name
    if r.extras:
        out += "[" + ",".join(sorted(r.extras)) + "]"
    out += str(r.specifier)
    if r.marker:
        out += f"; {r.marker}"
    return out


def choose_python(
    requires: list[str],
    classifier_versions: set[str],
    commit_time: int,
    pythons: tuple[str, ...],
    forced: str | None = None,
) -> tuple[str, str]:
    """Pick the Python version among ``pythons`` for a repository at a commit.

    ``requires-python`` filters; then the newest classifier/tox version we have (or the
    closest one above it); without such hints, the newest version released before the commit.
    """
    if forced:
        return forced, "configs/repos.yaml"
    ordered = sorted(pythons, key=Version)
    allowed = list(ordered)
    for spec in requires:
        try:
            s = SpecifierSet(spec)
        except InvalidSpecifier:
            continue
        ok = [
            p
            for p in allowed
            if s.contains(Version(f"{p}.0"), prereleases=True)
            or s.contains(Version(p), prereleases=True)
        ]
        if ok:
            allowed = ok
    if classifier_versions:
        top = max(classifier_versions, key=Version)
        below = [p for p in allowed if Version(p) <= Version(top)]
        if below:
            return below[-1], f"newest available <= {top} (classifiers/tox)"
        return allowed[0], f"closest available above {top} (classifiers/tox)"
    when = datetime.fromtimestamp(commit_time, tz=UTC).strftime("%Y-%m-%d")
    released = [p for p in allowed if PYTHON_RELEASES.get(p, "9999") <= when]
    if released:
        return released[-1], f"newest available released before {when}"
    return allowed[0], "oldest available (commit predates every available Python)"


def recipe_digest(recipe: InstallRecipe) -> str:
    """sha256 of the recipe's resolution inputs."""
    data = {
        k: v for k, v in recipe.to_dict().items() if k not in ("sources", "notes", "python_reason")
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


def _poetry_deps(
    deps: dict[str, Any], requires_python: list[str], sources: list[str], where: str
) -> list[Requirement]:
    lines = []
    for dep_name, spec in deps.items():
        if dep_name == "python":
            if isinstance(spec, str):
                requires_python.append(_poetry_spec(spec))
            continue
        version = (
            spec
            if isinstance(spec, str)
            else (spec.get("version") if isinstance(spec, dict) else None)
        )
        if isinstance(spec, dict) and (
            spec.get("path") or spec.get("git") or spec.get("url") or spec.get("optional")
        ):
            continue
        lines.append(f"{dep_name}{_poetry_spec(version) if version else ''}")
    return _parse_all(lines, sources, where)


def _poetry_spec(spec: str) -> str:
    """Translate Poetry's ``^1.2`` / ``~1.2`` / ``1.2.*`` into PEP 440 specifiers."""
    parts = []
    for raw in spec.split(","):
        s = raw.strip()
        if s in ("*", ""):
            continue
        if s[0] in "^~" and s[1:2] != "=":
            nums = [int(x) for x in re.findall(r"\d+", s[1:])[:3]] or [0]
            lower = ".".join(map(str, nums))
            if s[0] == "^":
                idx = next((i for i, n in enumerate(nums) if n != 0), len(nums) - 1)
            else:
                idx = 0 if len(nums) == 1 else 1
            upper = nums[: idx + 1]
            upper[-1] += 1
            parts.append(f">={lower},<{'.'.join(map(str, upper))}")
        elif s[0].isdigit():
            parts.append(f"=={s}")
        else:
            parts.append(s)
    return ",".join(parts)


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
        tree = ast.parse(text)
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
    for key in ("install_requires", "tests_require", "classifiers"):
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
