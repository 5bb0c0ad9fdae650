"""Requirements as a resolver reads them, and the pytest the harness needs.

Requirements of one distribution merge per marker (:func:`merge_requirements`); a marker is
evaluated on the target Python (:func:`applies`). A pytest requirement older than the harness
plugin supports is raised to its floor (:func:`raise_pytest_floor`), and for commits older than
that floor, pins on pytest's own internals are relaxed (:func:`relax_pytest_internals`); each
change is an :class:`Adjustment` the recipe records (see
:mod:`swe_forge.ecosystems.python.recipe`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version


@dataclass(frozen=True)
class Adjustment:
    """A requirement of the project that the recipe replaced, with both specs and why."""

    original: str
    chosen: str
    reason: str


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
