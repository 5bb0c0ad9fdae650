"""The adapter interface (:class:`Ecosystem`) and the small helpers every adapter shares (the
registry is :mod:`swe_forge.ecosystems`; the capability scanners' shared machinery is
:mod:`swe_forge.ecosystems.scanning`; base imports no adapter).

An adapter answers, for one ecosystem:

- ``detect(read)``: is the repository (files read at a commit) of this ecosystem?
- ``is_test_file(path)`` / ``test_files(test_patch)``: which paths hold tests to run;
- ``build(builder, candidate)``: toolchain chosen by the base commit's date, dependencies
  resolved and vendored on the host, images built with no network (an ``ImageRecord``);
- ``runner(...)``: the test command and the structured report the supervisor reads per-test
  outcomes from (never the program's free text);
- ``patch_violations(patch, ...)``: runner configuration and capabilities a candidate patch
  must not change or newly use (what the gold patch and the base code already do is allowed);
- ``grading_job(task, request)``: the verifier's run, a calibration (with canary copies that
  the gold patch must fail) or a verification's twins (see :class:`JobRequest`).

Python (pytest) is an adapter like the others (:mod:`swe_forge.ecosystems.python`); where its
design differs (its capability scan and canary writer run in the container, with the task's
own Python: ``scans_in_container``), the adapter says so and the stages ask it.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.diffs import (
    DiffParseError,
    FilePatch,
    parse_diff,
)
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    from swe_forge.config import Config, RepoOverride
    from swe_forge.engine import Engine
    from swe_forge.git.repo import GitRepository
    from swe_forge.records import Candidate, ImageRecord, TaskManifest

Reader = Callable[[str], bytes | None]


class Builder(Protocol):
    """What an adapter's :meth:`Ecosystem.build` is handed: the images stage's builder
    (:class:`swe_forge.images.build.ImageBuilder`), as far as adapters use it."""

    config: Config
    engine: Engine
    #: swe-forge's cache, and the build contexts and logs under it.
    cache: Path
    work_dir: Path
    log_dir: Path
    #: Per-repository settings (``owner/name`` -> override).
    overrides: dict[str, RepoOverride]
    #: The Debian releases base images may be built from, newest last.
    distros: tuple[str, ...]

    def repo(self, candidate: Candidate) -> GitRepository:
        """The candidate's source repository."""


@dataclass(frozen=True)
class JobRequest:
    """What the verifier asks of an adapter's run job (:meth:`Ecosystem.grading_job`).

    ``plan``: a verification's twins (a :class:`swe_forge.verify.twins.TwinPlan`: ``None``
    for the honest twin, else the armed entry its decoy applies), or ``None`` for a
    calibration: one run of the expected tests, with up to ``canary_limit`` calibration
    copies (0: none). ``allowance``: the capabilities code that appears during the run may
    use. ``shown``: the base commit's text of the held-out test files (calibration)."""

    test_patch_path: str
    timeout: float
    test_timeout: float
    output_limit: int
    plan: Any = None
    canary_limit: int = 0
    allowance: tuple[str, ...] = ()
    shown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CandidateCheck:
    """What an adapter's checks of an applied candidate found (:meth:`Ecosystem.check_candidate`).

    ``violations`` refuse the candidate (``invalid_patch``) with ``detail``; ``capabilities``:
    what the candidate newly uses, where the adapter read it on the host (None where the
    judge's container reads it)."""

    violations: list[dict[str, str]] = field(default_factory=list)
    detail: str = ""
    capabilities: list[str] | None = None


class Ecosystem(Protocol):
    """What every language adapter answers (see the module docstring)."""

    #: The ecosystem's name (``go``, ``python``...).
    name: str
    #: The runner recorded as ``harness.runner`` in task manifests.
    runner_name: str
    #: Whether a candidate's capabilities are read in the judge's container by the task's
    #: own interpreter (Python: its scanner and canary writer run there, and the allowance is
    #: what calibration read) rather than on the host from the patch and the base files.
    scans_in_container: bool
    #: Whether a calibration whose copies all failed to build is drawn again once (a
    #: compiled language's copies share one build: one perturbed literal the compiler refuses
    #: fails them all).
    redraws_calibration: bool
    #: Calibrated perturbations checked in place as decoys at admission (the task keeps
    #: those): each is one more run of the tests (a pytest process; a build and run).
    validated_decoys: int

    def detect(self, read: Reader) -> bool:
        """Is a repository whose files ``read`` returns (at one commit) of this ecosystem?"""

    def is_test_file(self, path: str) -> bool:
        """Does ``path`` hold tests the runner runs?"""

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (the gate runs them)."""

    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """Toolchain, vendored dependencies and the images of one candidate."""

    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """Runner configuration a patch changes that the gold patch does not."""

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capability names a patch's source files use after it that the same files did not
        use before it (read on their syntax trees; see :func:`source_capabilities`)."""

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capability names the base tree's source files use (their union)."""

    def runner(self, module: str, packages: list[str] | None = None) -> Any:
        """The gate's test runner (a :class:`swe_forge.gates.runner.TestRunner` with a
        ``run_spec``) for the project ``module`` (its name in the ecosystem)."""

    def runner_for(self, rec: ImageRecord) -> Any:
        """The gate's runner for the images of ``rec``: what :meth:`runner` gives, plus what
        the image record knows (a toolchain, the tree's test targets)."""

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files and trees the supervisor locks during a run."""

    def scope(self, test_patch: str, read_base: Reader | None = None) -> Any:
        """The tests the test patch defines or changes (an object with ``covers(test)``)."""

    def grading_job(self, task: TaskManifest, request: JobRequest) -> dict[str, Any]:
        """The verifier's ``run`` job: FAIL_TO_PASS and PASS_TO_PASS in the project's order,
        as the twins of ``request.plan`` (a verification) or as one calibration run with its
        copies (``request.canary_limit``)."""

    def refusal(self, rec: ImageRecord) -> tuple[str, str] | None:
        """Why no task of this project can be judged (reason, detail), or ``None``."""

    def manifest_blocks(
        self,
        manifest: TaskManifest,
        rec: ImageRecord,
        read: Reader | None,
        paths: Callable[[], list[str]],
    ) -> None:
        """What the adapter adds to a manifest before calibration (toolchain, environment,
        the capabilities of the base tree, whose files ``read`` returns and ``paths()``
        lists, and of the gold patch)."""

    def check_candidate(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> CandidateCheck:
        """The adapter's checks of a candidate once applied, before the judge's container's
        own capability scan is weighed: ``prepared`` is the container's answer to ``prepare``
        (``shown``: the base text of the files the patch and the tests change;
        ``config_texts``: runner configuration before and after)."""

    def check_scanned(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> list[dict[str, str]]:
        """The adapter's checks of an applied candidate after the container's capability scan
        passed (violations; [] for none)."""

    def kept_decoys(
        self,
        copies: dict[str, dict[str, Any]],
        outcomes: dict[str, str],
        test_patch: str,
        shown: dict[str, str],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A calibration's (armed, disarmed) entries: ``copies`` maps each calibration copy's
        test id to what it perturbs, ``outcomes`` the run's per-test outcomes (a copy the gold
        patch fails is armed, unless the adapter drops it)."""

    def swebench_eval(self, task: TaskManifest) -> tuple[str, str]:
        """SWE-bench 5's ``eval_script`` and ``log_parser`` for the task (``export --format
        swebench``); an InputError where SWE-bench's harness cannot grade this runner."""

    def unit_of(self, test: str) -> str:
        """The process a test runs in, among those of one run (a Go package's test binary,
        a Rust test target; "" where one process runs them all): decoys cover each."""

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """Base files the capability scan of a patch changing ``paths`` reads besides those
        files (JS: the ``package.json`` files above them, which say what a file may require)."""


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
