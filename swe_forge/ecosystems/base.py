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
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.diffs import DiffParseError, FilePatch, parse_diff
from swe_forge.errors import BuildError, UsageError

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
        self,
        task: TaskManifest,
        test_patch_path: str,
        *,
        timeout: float,
        output_limit: int,
        twins: list[dict[str, Any]] | None = None,
        files: list[dict[str, str]] | None = None,
        extra: dict[str, dict[str, Any]] | None = None,
        test_timeout: float = 0.0,
    ) -> dict[str, Any]:
        """The verifier's ``run`` job: FAIL_TO_PASS and PASS_TO_PASS in the project's order,
        as ``twins`` (a verification) or as one run with the calibration copies ``files``
        hold, ``extra`` naming them (copy's test id -> what it copies); ``test_timeout``: each
        test's limit in seconds (0: the runner's own)."""

    def unit_of(self, test: str) -> str:
        """The process a test runs in, among those of one run (a Go package's test binary,
        a Rust test target; "" where one process runs them all): decoys cover each."""


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


#: The tags of added and removed lines in a parsed hunk.
ADDED, REMOVED = 0x2B, 0x2D  # "+", "-"


def parse_patch(patch: str) -> list[FilePatch]:
    """The file patches of a diff ([] when it does not parse)."""
    try:
        return parse_diff(patch)
    except DiffParseError:
        return []


def added_lines(patch: str, keep: Callable[[str], bool]) -> dict[str, list[str]]:
    """Path -> lines a patch adds, for the new paths ``keep`` accepts."""
    out: dict[str, list[str]] = {}
    for fp in parse_patch(patch):
        path = fp.new_path
        if not path or not keep(path):
            continue
        lines = out.setdefault(path, [])
        for hunk in fp.hunks:
            for tag, body in hunk.lines:
                if tag == ADDED:
                    lines.append(body.decode("utf-8", "replace").rstrip("\r\n"))
    return out


def touched_paths(patch: str) -> list[str]:
    """Every old and new path a patch names."""
    return sorted({p for fp in parse_patch(patch) for p in (fp.old_path, fp.new_path) if p})


def patched_test_files(patch: str, is_test: Callable[[str], bool]) -> list[str]:
    """Test files (by ``is_test``) a patch adds or changes (not deleted ones)."""
    return sorted(
        {fp.new_path for fp in parse_patch(patch) if fp.new_path and is_test(fp.new_path)}
    )


def file_lines(patch: str, name: str) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """(path, [(tag, text)]) of each file called ``name`` (in any directory) that a patch
    changes: every line of its hunks, context lines too (for readers that follow sections),
    decoded, line ends kept. The path is the new one, the old one for a deletion."""
    for fp in parse_patch(patch):
        path = fp.new_path or fp.old_path or ""
        if path.rsplit("/", 1)[-1] != name:
            continue
        lines = [(tag, body.decode("utf-8", "replace")) for h in fp.hunks for tag, body in h.lines]
        yield path, lines


def signed(tag: int, line: str) -> str:
    """``line`` marked as added (``+line``) or removed (``-line``) by its hunk tag."""
    return ("+" if tag == ADDED else "-") + line


def runner_config(detail: str) -> dict[str, str]:
    """A ``runner_config`` violation."""
    return {"code": "runner_config", "detail": detail}


def paths_beyond_gold(patch: str, gold_patch: str) -> list[str]:
    """The paths a patch touches that the gold patch does not."""
    gold = set(touched_paths(gold_patch))
    return [path for path in touched_paths(patch) if path not in gold]


def line_violations(
    patch: str,
    gold_patch: str,
    lines_of: Callable[[str], set[tuple[str, str]]],
    why: str,
) -> list[dict[str, str]]:
    """A ``runner_config`` violation for each (path, signed line) of configuration that
    ``lines_of`` reads in a patch and not in the gold patch (in order)."""
    changed = lines_of(patch) - lines_of(gold_patch)
    return [runner_config(f"{path}: {line[:200]} ({why})") for path, line in sorted(changed)]


def git_apply(tree: Path, patches: Iterable[str]) -> None:
    """Apply ``patches`` in order to the checked-out ``tree`` with ``git apply`` (a
    BuildError when one does not apply)."""
    for patch in patches:
        proc = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            cwd=tree,
            input=patch.encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise BuildError(f"the patches do not apply: {proc.stderr.decode()[-500:]}")


def scan_capabilities(lines: Iterable[str], patterns: dict[str, re.Pattern[str]]) -> set[str]:
    """Names of the capability patterns that match any of ``lines``."""
    text = "\n".join(lines)
    return {name for name, rx in patterns.items() if rx.search(text)}


def patch_capabilities(
    patch: str, keep: Callable[[str], bool], patterns: dict[str, re.Pattern[str]]
) -> list[str]:
    """Capability names the added lines of the files ``keep`` accepts use."""
    lines = added_lines(patch, keep)
    return sorted(scan_capabilities((ln for ls in lines.values() for ln in ls), patterns))


def tree_capabilities(
    paths: Iterable[str],
    read: Reader,
    keep: Callable[[str], bool],
    patterns: dict[str, re.Pattern[str]],
    *,
    max_bytes: int | None = None,
) -> list[str]:
    """Capability names the files of ``paths`` that ``keep`` accepts use (files larger than
    ``max_bytes`` are not read); stops when every pattern is found."""
    found: set[str] = set()
    for path in paths:
        if not keep(path):
            continue
        data = read(path)
        if data is None or (max_bytes is not None and len(data) > max_bytes):
            continue
        found |= scan_capabilities(data.decode("utf-8", "replace").splitlines(), patterns)
        if len(found) == len(patterns):
            break
    return sorted(found)


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


def verify_job(
    test_patch_path: str,
    protect: dict[str, list[str]],
    *,
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    output_limit: int,
    report: dict[str, Any],
    twins: list[dict[str, Any]] | None = None,
    files: list[dict[str, str]] | None = None,
    canary_map: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The verifier's ``run`` job of an adapter: the held-out test patch brought in late, the
    files the supervisor locks, and either the twins of a verification (``twins``: per twin
    the literal it changes, see verify/twins.py) or one run with calibration copies written
    into the test files (``files``: ``{"path", "text"}``; ``canary_map``: copy id -> what it
    copies). No pytest-style selection."""
    run: dict[str, Any] = {
        "argv": argv,
        "env": env,
        "timeout": timeout,
        "output_limit": output_limit,
        "select": None,
        "canaries": None,
        "canary_map": canary_map or {},
        "report": report,
    }
    if twins is not None:
        run["twins"] = twins
    if files:
        run["files"] = files
    return {
        "late_patches": [{"name": "test", "path": test_patch_path}],
        "protect": protect,
        "run": run,
    }


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
