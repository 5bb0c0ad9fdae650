"""The adapter interface, the registry of adapters, and what adapters share.

An adapter answers, for one ecosystem:

- ``detect(read)``: is the repository (files read at a commit) of this ecosystem?
- ``is_test_file(path)`` / ``test_files(test_patch)``: which paths hold tests to run;
- ``build(builder, candidate)``: toolchain chosen by the base commit's date, dependencies
  resolved and vendored on the host, images built with no network (an ``ImageRecord``);
- ``runner(...)``: the test command and the structured report the supervisor reads per-test
  outcomes from (never the program's free text);
- ``patch_violations(patch, ...)``: runner configuration and capabilities a candidate patch
  must not change or newly use (what the gold patch and the base code already do is allowed);
- ``run_job(...)``: the verifier's run, with canary tests that must fail.

The pytest adapter is the original code path and is not routed through here.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.diffs import DiffParseError, parse_diff
from swe_forge.errors import UsageError

if TYPE_CHECKING:
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

#: Ecosystems in detection order (the first whose marker file is at the root wins; Python is
#: the default when none is).
ECOSYSTEM_NAMES = ("go", "rust", "java", "js", "python")

Reader = Callable[[str], bytes | None]


class Ecosystem(Protocol):
    """What every language adapter answers (see the module docstring)."""

    #: The ecosystem's name (``go``, ``python``...).
    name: str
    #: The runner recorded as ``harness.runner`` in task manifests.
    runner_name: str

    def detect(self, read: Reader) -> bool:
        """Is a repository whose files ``read`` returns (at one commit) of this ecosystem?"""

    def is_test_file(self, path: str) -> bool:
        """Does ``path`` hold tests the runner runs?"""

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (the gate runs them)."""

    def build(self, builder: ImageBuilder, candidate: Candidate) -> ImageRecord:
        """Toolchain, vendored dependencies and the images of one candidate."""

    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """Runner configuration a patch changes that the gold patch does not."""

    def capabilities(self, patch: str) -> list[str]:
        """Capability names the added lines of a patch's source files use."""

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capability names the base tree's source files use."""

    def runner(self, module: str, packages: list[str] | None = None) -> Any:
        """The gate's test runner (a :class:`swe_forge.gates.runner.TestRunner` with a
        ``run_spec``) for the project ``module`` (its name in the ecosystem)."""

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files and trees the supervisor locks during a run."""

    def scope(self, test_patch: str, read_base: Reader | None = None) -> Any:
        """The tests the test patch defines or changes (an object with ``covers(test)``)."""

    def run_job(
        self, task: TaskManifest, test_patch_path: str, *, timeout: float, output_limit: int
    ) -> dict[str, Any]:
        """The verifier's ``run`` job: F2P, P2P and fresh canaries, in the project's order."""


def ecosystem_named(name: str) -> Ecosystem:
    """The adapter called ``name``."""
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


# ------------------------------------------------------------------------------ shared helpers


def added_lines(patch: str, keep: Callable[[str], bool]) -> dict[str, list[str]]:
    """Path -> lines a patch adds, for the new paths ``keep`` accepts."""
    try:
        parsed = parse_diff(patch)
    except DiffParseError:
        return {}
    out: dict[str, list[str]] = {}
    for fp in parsed:
        path = fp.new_path
        if not path or not keep(path):
            continue
        lines = out.setdefault(path, [])
        for hunk in fp.hunks:
            for tag, body in hunk.lines:
                if tag == 0x2B:  # "+"
                    lines.append(body.decode("utf-8", "replace").rstrip("\r\n"))
    return out


def touched_paths(patch: str) -> list[str]:
    """Every old and new path a patch names."""
    try:
        parsed = parse_diff(patch)
    except DiffParseError:
        return []
    return sorted({p for fp in parsed for p in (fp.old_path, fp.new_path) if p})


def scan_capabilities(lines: Iterable[str], patterns: dict[str, re.Pattern[str]]) -> set[str]:
    """Names of the capability patterns that match any of ``lines``."""
    text = "\n".join(lines)
    return {name for name, rx in patterns.items() if rx.search(text)}


def capability_violations(
    introduced: Iterable[str], *, base: Iterable[str], gold: Iterable[str]
) -> list[dict[str, str]]:
    """Capabilities a patch newly uses that neither the base code nor the gold patch uses."""
    allowed = set(base) | set(gold)
    return [
        {
            "code": "capability",
            "detail": f"the patch newly uses {name}, which neither the project's code nor the "
            "reference fix uses (a way to reach the test runner or the process)",
        }
        for name in sorted(set(introduced) - allowed)
    ]


#: Words that canary test names are made of: they read like a project's own tests, so code
#: under test cannot tell a canary from a held-out test by its name.
_WORDS = (
    "parse",
    "empty",
    "value",
    "handles",
    "nested",
    "quoted",
    "field",
    "order",
    "error",
    "limit",
    "range",
    "token",
    "buffer",
    "stream",
    "reader",
    "writer",
    "encode",
    "decode",
    "config",
    "option",
    "default",
    "merge",
    "split",
    "join",
    "trim",
    "escape",
    "unicode",
    "width",
    "offset",
    "index",
    "window",
    "cache",
    "expire",
    "retry",
    "timeout",
    "header",
    "path",
    "query",
    "format",
    "number",
    "float",
    "integer",
    "bool",
    "slice",
    "map",
    "key",
    "name",
    "list",
    "table",
    "record",
    "row",
    "column",
    "match",
    "pattern",
    "prefix",
    "suffix",
    "round",
    "trip",
    "compare",
    "equal",
    "sort",
    "unique",
)


def canary_name(rng: random.Random, style: str = "camel") -> str:
    """A plausible test name (``ParseNestedHeaderLimit``) from ``rng``."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(2, 4))]
    if style == "snake":
        return "_".join(words)
    return "".join(w.capitalize() for w in words)


def digest_text(*parts: str) -> str:
    """sha256 of text parts (NUL-separated)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()
