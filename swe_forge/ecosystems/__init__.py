"""Ecosystem adapters: the one seam through which languages enter.

Every stage stays language-neutral and asks the adapter of a repository's ecosystem the same
small questions (see :class:`~swe_forge.ecosystems.base.Ecosystem`): is this repository yours
at this commit; which paths are tests and which are runner configuration; which toolchain fits
this date; vendor the dependencies (on the host, as of the base date) and build offline; how to
run tests with structured per-test results; what a candidate patch must not change.

Python (pytest) is the first adapter and keeps its own, older code path (its outputs are
unchanged byte for byte); the others share one generic path: images from a Debian base with
the toolchain and the vendored dependencies, a runner whose per-test outcomes the supervisor
reads from the runner's structured report, canary tests written at run time, and static checks
of runner configuration and capabilities on the patch.
"""

from __future__ import annotations

from collections.abc import Iterable

from swe_forge.ecosystems.base import Ecosystem, Reader
from swe_forge.errors import UsageError

#: Ecosystems in detection order (the first whose marker file is at the root wins; Python is
#: the default when none is).
ECOSYSTEM_NAMES = ("go", "rust", "java", "js", "python")


def ecosystem_named(name: str) -> Ecosystem:
    """The adapter called ``name`` (the registry: ``base`` knows no adapter; each adapter's
    package is imported when it is first asked for)."""
    if name == "go":
        from swe_forge.ecosystems.go import GoEcosystem

        return GoEcosystem()
    if name == "rust":
        from swe_forge.ecosystems.rust import RustEcosystem

        return RustEcosystem()
    if name == "js":
        from swe_forge.ecosystems.js import JsEcosystem

        return JsEcosystem()
    if name == "java":
        from swe_forge.ecosystems.java import JavaEcosystem

        return JavaEcosystem()
    raise UsageError(f"unknown ecosystem {name!r}", hint=f"one of {', '.join(ECOSYSTEM_NAMES)}")


#: Files that make a repository Python's even when it holds other languages' files.
_PYTHON_MARKERS = ("setup.py", "pyproject.toml", "setup.cfg", "tox.ini", "requirements.txt")


def detect_ecosystem(read: Reader, root_names: Iterable[str] | None = None) -> str:
    """The name of the ecosystem of a repository at one commit (``python`` by default).

    ``root_names``: the names at the top of its tree, when known. A Go repository from before
    modules (``*.go`` at the top, no ``go.mod``, nothing of Python's) is Go's, so that its
    build says what is missing instead of running pytest on Go code.
    """
    for name in ECOSYSTEM_NAMES:
        if name == "python":
            continue
        if ecosystem_named(name).detect(read):
            return name
    names = set(root_names or ())
    if any(n.endswith(".go") for n in names) and not names & set(_PYTHON_MARKERS):
        return "go"
    return "python"


def for_runner(runner: str) -> Ecosystem | None:
    """The adapter whose runner is ``runner``; None for pytest (the original code path)."""
    if runner in ("", "pytest"):
        return None
    for name in ECOSYSTEM_NAMES:
        if name == "python":
            continue
        eco = ecosystem_named(name)
        if eco.runner_name == runner:
            return eco
    raise UsageError(f"no ecosystem adapter runs {runner!r}", hint="re-admit the task")


__all__ = ["ECOSYSTEM_NAMES", "Ecosystem", "detect_ecosystem", "ecosystem_named", "for_runner"]
