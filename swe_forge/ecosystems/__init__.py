"""Ecosystem adapters: the one seam through which languages enter.

Every stage stays language-neutral and asks the adapter of a repository's ecosystem the same
small questions (see :class:`~swe_forge.ecosystems.base.Ecosystem`): is this repository yours
at this commit; which paths are tests and which are runner configuration; which toolchain fits
this date; vendor the dependencies (on the host, as of the base date) and build offline; how to
run tests with structured per-test results; what a candidate patch must not change.

Every language is one adapter behind that protocol, Python's included
(:mod:`swe_forge.ecosystems.python`); this module is their registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import Ecosystem, Reader
from swe_forge.ecosystems.naming import ECOSYSTEM_NAMES
from swe_forge.errors import UsageError

if TYPE_CHECKING:
    from swe_forge.ecosystems.canaries import CanaryWriter
    from swe_forge.mining.classify import PathClassifier

#: The ecosystem of a repository no adapter recognises.
DEFAULT_ECOSYSTEM = "python"


def _go(classifier: PathClassifier | None) -> Ecosystem:
    from swe_forge.ecosystems.go.adapter import GoEcosystem

    return GoEcosystem()


def _rust(classifier: PathClassifier | None) -> Ecosystem:
    from swe_forge.ecosystems.rust.adapter import RustEcosystem

    return RustEcosystem()


def _java(classifier: PathClassifier | None) -> Ecosystem:
    from swe_forge.ecosystems.java.adapter import JavaEcosystem

    return JavaEcosystem()


def _js(classifier: PathClassifier | None) -> Ecosystem:
    from swe_forge.ecosystems.js.adapter import JsEcosystem

    return JsEcosystem()


def _python(classifier: PathClassifier | None) -> Ecosystem:
    from swe_forge.ecosystems.python.adapter import PythonEcosystem

    return PythonEcosystem(classifier)


#: Each adapter by name, made on demand: an adapter's package is imported when it is first
#: asked for (``base`` knows no adapter), so grading a Go task loads no Rust.
_FACTORIES: dict[str, Callable[[PathClassifier | None], Ecosystem]] = {
    "go": _go,
    "rust": _rust,
    "java": _java,
    "js": _js,
    "python": _python,
}


def ecosystem_named(name: str, classifier: PathClassifier | None = None) -> Ecosystem:
    """The adapter called ``name``. ``classifier``: the configured path classifier, for the
    adapters that name test files by it (Python's)."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UsageError(f"unknown ecosystem {name!r}", hint=f"one of {', '.join(ECOSYSTEM_NAMES)}")
    return factory(classifier)


def detect_ecosystem(read: Reader, root_names: Iterable[str] | None = None) -> str:
    """The name of the ecosystem of a repository at one commit (:data:`DEFAULT_ECOSYSTEM`
    when no adapter recognises it).

    ``root_names``: the names at the top of its tree, when known. A Go repository from before
    modules (``*.go`` at the top, no ``go.mod``, nothing of Python's) is Go's, and one with a
    ``package.json`` at the top and nothing of Python's is JavaScript's, so that its build
    says what is missing instead of running pytest on Go or JavaScript code.
    """
    for name in ECOSYSTEM_NAMES:
        if ecosystem_named(name).detect(read):
            return name
    from swe_forge.ecosystems.python.detect import PYTHON_MARKERS

    names = set(root_names or ())
    if any(n.endswith(".go") for n in names) and not names & set(PYTHON_MARKERS):
        return "go"
    # A package.json at the top whose runner no adapter runs (ava, tap, uvu...) and nothing
    # of Python's: JavaScript's, so that its build names the runner it lacks instead of
    # running pytest on JavaScript (tj/commander.js, first contact: 3 of 3 "no tests").
    if read("package.json") is not None and not any(read(m) is not None for m in PYTHON_MARKERS):
        return "js"
    return DEFAULT_ECOSYSTEM


def writer_for(name: str) -> CanaryWriter:
    """The canary writer of the ecosystem called ``name``, for those whose decoys are written
    on the host (Python's are written in the container by the judge itself)."""
    from swe_forge.ecosystems.decoys import HostCanaries

    eco = ecosystem_named(name)
    if not isinstance(eco, HostCanaries):
        hosts = [n for n in ECOSYSTEM_NAMES if isinstance(ecosystem_named(n), HostCanaries)]
        raise UsageError(f"no canary writer for {name!r}", hint=f"one of {', '.join(hosts)}")
    return eco.canary_writer()


#: The ecosystem of each runner a manifest names (``harness.runner``): looked up, so that
#: grading a task imports its own adapter only (each adapter's ``runner_name`` is its key
#: here: tests/unit/test_ecosystem_protocol.py).
RUNNERS = {
    "go-test": "go",
    "cargo-test": "rust",
    "maven-surefire": "java",
    "node-test": "js",
    "pytest": "python",
}


def for_runner(runner: str, classifier: PathClassifier | None = None) -> Ecosystem:
    """The adapter whose runner is ``runner`` (a manifest's ``harness.runner``; a manifest
    without one is pytest's, as every manifest was before the other adapters)."""
    name = RUNNERS.get(runner or "pytest")
    if name is None:
        raise UsageError(f"no ecosystem adapter runs {runner!r}", hint="re-admit the task")
    return ecosystem_named(name, classifier)


__all__ = [
    "DEFAULT_ECOSYSTEM",
    "ECOSYSTEM_NAMES",
    "RUNNERS",
    "Ecosystem",
    "detect_ecosystem",
    "ecosystem_named",
    "for_runner",
    "writer_for",
]
