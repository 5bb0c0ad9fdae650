"""Poetry's dependency tables as PEP 508 requirements, translated by poetry-core itself.

Poetry's constraint language (``^1.2``, ``~1.2``, ``1.2.*``, ``^2.7 || ^3.4``, pre-releases
such as ``^1.0.0b1``) and its dependency tables (``python``/``platform``/``markers`` keys,
``extras``, ``optional``, lists of alternatives per marker) are parsed by poetry-core, the
library Poetry builds with, so the meaning is Poetry's own rather than a re-implementation.

Only what an index can provide is kept: ``path``, ``git`` and ``url`` dependencies are dropped
(they point outside the repository or to the network, and a mined repository is hostile).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from poetry.core.constraints.version import (
    Version,
    VersionConstraint,
    VersionRange,
    VersionUnion,
    parse_constraint,
)
from poetry.core.factory import Factory
from poetry.core.packages.dependency import Dependency

#: Keys of a Poetry dependency table that name a source other than the package index.
_NOT_FROM_INDEX = ("path", "git", "url", "file")
#: Keys whose values poetry-core parses as text (anything else there is malformed input).
_TEXT_KEYS = ("version", "python", "platform", "markers")


@dataclass
class PoetryDeps:
    """Requirements read from one Poetry dependency table.

    ``required`` are always installed; ``optional`` maps a distribution name (as written) to
    its requirements, installed only through an extra of ``[tool.poetry.extras]``; ``notes``
    say what was dropped or widened, and why.
    """

    required: list[str] = field(default_factory=list)
    optional: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def python_constraint(spec: Any) -> str | None:
    """Poetry's ``python = "..."`` as PEP 440 alternatives joined by ``" || "``.

    Each alternative is a valid ``SpecifierSet``; a version is allowed when any alternative
    contains it (``^2.7 || ^3.4`` gives ``>=2.7,<3.0 || >=3.4,<4.0``). None when unparsable.
    """
    if not isinstance(spec, str):
        return None
    try:
        constraint = parse_constraint(spec)
    except ValueError:  # ParseConstraintError
        return None
    if constraint.is_any():
        return None
    ranges = constraint.ranges if isinstance(constraint, VersionUnion) else [constraint]
    return " || ".join(_pep440(r) for r in ranges)


def _pep440(constraint: VersionConstraint) -> str:
    """One range of a poetry-core constraint in PEP 440 (a bare version means ``==``)."""
    if isinstance(constraint, Version):
        return f"=={constraint.text}"
    return str(constraint)


def _hull(constraint: VersionUnion) -> VersionRange:
    """The smallest single range that holds every range of a union."""
    first, last = constraint.ranges[0], constraint.ranges[-1]
    return VersionRange(first.min, last.max, first.include_min, last.include_max)


def dependency_table(deps: Any, where: str) -> PoetryDeps:
    """Translate a ``[tool.poetry.*dependencies]`` table (``python`` is not a dependency)."""
    out = PoetryDeps()
    if not isinstance(deps, dict):
        return out
    for name, spec in sorted(deps.items(), key=lambda kv: str(kv[0])):
        if not isinstance(name, str) or name.lower() == "python":
            continue
        # A list holds alternatives, each with its own markers (``python = "<3.8"``...).
        alternatives = spec if isinstance(spec, list) else [spec]
        for alt in alternatives:
            got = _one(name, alt, where, out.notes)
            if got is None:
                continue
            requirement, optional = got
            if optional:
                out.optional.setdefault(name, []).append(requirement)
            else:
                out.required.append(requirement)
    return out


def _one(name: str, spec: Any, where: str, notes: list[str]) -> tuple[str, bool] | None:
    """One dependency as (PEP 508 text, optional?), or None when it is skipped."""
    if isinstance(spec, dict):
        if any(spec.get(k) for k in _NOT_FROM_INDEX):
            notes.append(f"{where}: {name} dropped (not from the package index)")
            return None
        if any(k in spec and not isinstance(spec[k], str) for k in _TEXT_KEYS):
            notes.append(f"{where}: {name} dropped (malformed table)")
            return None
        extras = spec.get("extras")
        if extras is not None and not (
            isinstance(extras, list) and all(isinstance(e, str) for e in extras)
        ):
            spec = {k: v for k, v in spec.items() if k != "extras"}
    elif not isinstance(spec, str):
        notes.append(f"{where}: {name} dropped (malformed constraint)")
        return None
    try:
        dep: Dependency = Factory.create_dependency(name, spec)
        text = dep.to_pep_508()
        try:
            Requirement(text)
        except InvalidRequirement:
            if not isinstance(dep.constraint, VersionUnion):
                raise
            # PEP 440 has no "or" between ranges: take the hull of the union (the resolver
            # picks the newest version, which lies in the union's last range anyway).
            hull = _hull(dep.constraint)
            notes.append(f"{where}: {name} {dep.pretty_constraint!r} widened to {hull}")
            text = dep.with_constraint(hull).to_pep_508()
            Requirement(text)
    # poetry-core raises its own parser errors (lark's among them) on malformed text; a
    # hostile pyproject must cost only this one dependency, never the whole recipe.
    except Exception as exc:
        notes.append(f"{where}: {name} dropped ({type(exc).__name__})")
        return None
    return text, dep.is_optional()
