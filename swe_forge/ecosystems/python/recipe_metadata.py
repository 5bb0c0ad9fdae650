"""The metadata files of a repository read statically: ``pyproject.toml`` and ``setup.cfg``
(TOML, INI), requirement files (following ``-r``), PEP 735 dependency groups, and the
``setup()`` call of ``setup.py`` evaluated on its syntax tree, never run (see
:mod:`swe_forge.ecosystems.python.recipe`, which builds the install recipe from them).
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import re
import tomllib
from collections.abc import Callable
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from swe_forge import pyast

_MAX_FILE = 1 << 20
_SELF_INSTALL = re.compile(r"^(?:-e\s+|--editable\s+)?\.(?:\[([^\]]*)\])?\s*$")


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
