"""Decoys of the ecosystems whose canary writer runs on the host (Go, Rust, Java, JS/TS).

Python's decoys are written inside the container by the task's own Python
(``harness/swe_forge_canaries.py``); every other language's are found here, with the
language's parser (``ecosystems/<language>/canary.py``), on the held-out test files as the
test patch leaves them:

- at admission, :func:`calibration_copies` writes renamed copies of the FAIL_TO_PASS tests,
  each with one assertion literal replaced by a wrong one of the same type and shape; the gold
  patch's run says which copies fail, and those perturbations are armed (each armed entry
  holds the site and the exact literal, so a verification needs no parser and no source);
- a verification's decoy twins apply one armed entry each, in place (:func:`twin_edit`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems import method_hooks, syntax
from swe_forge.ecosystems.base import CandidateCheck, JobRequest, Reader
from swe_forge.ecosystems.canaries import CanaryWriter, CopySpec, Site
from swe_forge.ecosystems.scanning import capability_violations
from swe_forge.errors import InputError

if TYPE_CHECKING:
    from swe_forge.records import ImageRecord, TaskManifest

#: Perturbations of one site tried at calibration, while under the limit.
SEEDS_PER_SITE = 2


def test_texts(test_patch: str, base: dict[str, str]) -> dict[str, bytes]:
    """The test files the test patch adds or changes, as it leaves them (``base``: their
    text at the base commit, as the supervisor showed it; a new file has none)."""
    out: dict[str, bytes] = {}
    try:
        patches = parse_diff(test_patch)
    except DiffParseError:
        return out
    for fp in patches:
        if not fp.new_path:
            continue
        old = base.get(fp.old_path or "", "") if fp.old_path else ""
        try:
            out[fp.new_path] = apply_file_patch(old.encode("utf-8"), fp)
        except PatchApplyError:
            continue
    return out


def added_lines(test_patch: str) -> dict[str, set[int]]:
    """The lines (1-based, in the file as the test patch leaves it) that the test patch adds
    or changes, per file it leaves."""
    out: dict[str, set[int]] = {}
    try:
        patches = parse_diff(test_patch)
    except DiffParseError:
        return out
    for fp in patches:
        if not fp.new_path:
            continue
        lines = out.setdefault(fp.new_path, set())
        for hunk in fp.hunks:
            at = hunk.new_start
            for tag, _text in hunk.lines:
                if tag == ord("+"):
                    lines.add(at)
                    at += 1
                elif tag == ord(" "):
                    at += 1
    return out


def fresh_sites(sites: list[Site], source: bytes, added: set[int]) -> list[Site]:
    """The sites on lines the test patch wrote, when a test has any; else all of them.

    The base commit's version of a test file is in the judge's work tree (its one commit),
    readable wherever the base code reads files: a decoy's literal on a line the test patch
    left as it was would differ from the base there, and the honest one would not."""
    fresh = []
    for site in sites:
        first = source.count(b"\n", 0, site.start) + 1
        last = first + source.count(b"\n", site.start, site.end)
        if all(line in added for line in range(first, last + 1)):
            fresh.append(site)
    return fresh or sites


#: A task keeps its decoys that are as natural as the literals they replace when it has at
#: least this many (see :func:`natural_first`).
NATURAL_ENOUGH = 3
#: Strangeness (see :func:`strangeness`) up to which a decoy counts as natural: no word, no
#: near copy, no roundness apart, and a likelihood of its characters within about a pair's
#: worth of the real literal's.
NATURAL = 0.6


def strangeness(source: bytes, site: Site, literal: str) -> float:
    """How much a decoy's literal stands out from its file more (or less) than the real one
    (0: not at all, by every measure of :class:`~swe_forge.ecosystems.syntax.LiteralContext`)."""
    return syntax.LiteralContext(source, site.start, site.end).distance(site.text, literal)


def natural_first(strangeness_of: list[float]) -> list[int]:
    """Which of a task's perturbations to offer as decoys (indices, in the given order):
    those about as natural as the literals they replace (:data:`NATURAL`), when there are at least
    :data:`NATURAL_ENOUGH` of them; else every one, the most natural first. A decoy a
    program reading the test file can pick out (a word the file never uses, a string one
    letter off another) is worth less than none of its kind."""
    natural = [i for i, d in enumerate(strangeness_of) if d <= NATURAL]
    if len(natural) >= NATURAL_ENOUGH:
        return natural
    return sorted(range(len(strangeness_of)), key=lambda i: (strangeness_of[i], i))


def literal_of(source: bytes, site: Site, perturbed: bytes) -> str:
    """The literal a perturbation put at ``site`` (the rest of the file is unchanged)."""
    tail = len(source) - site.end
    return perturbed[site.start : len(perturbed) - tail].decode("utf-8")


class WritesDecoys(Protocol):
    """An adapter whose decoys are written on the host: its writer, and the process each test
    runs in."""

    def canary_writer(self) -> CanaryWriter:
        """The language's canary writer (``<language>/canary.py``), one per process."""

    def unit_of(self, test: str) -> str:
        """The process a test runs in (see :meth:`Ecosystem.unit_of`)."""


def calibration_copies(
    eco: WritesDecoys,
    fail_to_pass: list[str],
    texts: dict[str, bytes],
    *,
    limit: int,
    rng: random.Random,
    added: dict[str, set[int]] | None = None,
) -> tuple[list[dict[str, str]], dict[str, dict[str, Any]]]:
    """The test files with the calibration copies in them (``[{"path", "text"}]``) and what
    each copy is (copy's test id -> ``{"test", "unit", "site", "seed", "literal"}``).

    ``added``: the lines the test patch wrote per file (:func:`added_lines`); a test's
    sites are then those on such lines where it has any (:func:`fresh_sites`)."""
    writer = eco.canary_writer()
    sites: dict[str, list[Site]] = {}
    for test in fail_to_pass:
        for path in writer.test_files(test, sorted(texts)):
            found = writer.sites(path, texts[path], [test])
            if added is not None:
                found = fresh_sites(found, texts[path], added.get(path, set()))
            # Expected values first: changing an input changes what the code is called with.
            found.sort(key=lambda s: (s.role != "expected", s.index))
            sites.setdefault(test, []).extend(found)
    # Round-robin over the tests, then a second perturbation of each site while room is left.
    order: list[Site] = []
    depth = 0
    while len(order) < limit and any(len(v) > depth for v in sites.values()):
        for test in fail_to_pass:
            if depth < len(sites.get(test, ())) and len(order) < limit:
                order.append(sites[test][depth])
        depth += 1
    chosen = [(site, rng.randrange(1, 2**31)) for site in order]
    room = max(0, limit - len(chosen))
    chosen += [(site, rng.randrange(1, 2**31)) for site in order[:room] * (SEEDS_PER_SITE - 1)]
    made: list[tuple[Site, int, str]] = []
    for site, seed in chosen:
        source = texts[site.path]
        perturbed = writer.perturb(source, site, random.Random(seed))
        if perturbed is not None:
            made.append((site, seed, literal_of(source, site, perturbed)))
    keep = natural_first([strangeness(texts[s.path], s, lit) for s, _, lit in made])
    specs: dict[str, list[CopySpec]] = {}
    mapping: dict[str, dict[str, Any]] = {}
    taken: set[str] = set()
    for site, seed, literal in (made[i] for i in keep):
        name = writer.new_name(site.test, rng, taken)
        taken.add(name)
        specs.setdefault(site.path, []).append((site.test, site, name, literal))
        mapping[writer.copy_id(site.test, name)] = {
            "test": site.test,
            "unit": eco.unit_of(site.test),
            "site": site.to_dict(),
            "seed": seed,
            "literal": literal,
        }
    files = [
        {"path": path, "text": writer.copies(path, texts[path], items).decode("utf-8")}
        for path, items in sorted(specs.items())
    ]
    return files, mapping


def twin_edit(entry: dict[str, Any]) -> dict[str, Any]:
    """The supervisor's edit of one armed entry: its literal replaced in place."""
    site = entry["site"]
    return {
        "path": site["path"],
        "start": site["start"],
        "end": site["end"],
        "text": site["text"],
        "new": entry["literal"],
    }


class HostCanaries:
    """What the adapters whose decoys are written and whose capabilities are read on the host
    (Go, Rust, Java, JS/TS) share: their run jobs (calibration copies or decoy twins, through
    the adapter's own ``run_job``) and their manifest blocks. An adapter class lists it first
    among its bases."""

    scans_in_container = False
    redraws_calibration = True
    #: Each decoy checked is one more build and run of the tests.
    validated_decoys = 6
    #: The language's canary writer (``<language>/canary.py``), one per process: each adapter
    #: defines it as a method.
    canary_writer: Callable[[], CanaryWriter]

    def grading_job(self, task: TaskManifest, request: JobRequest) -> dict[str, Any]:
        """Calibration copies in one run, or one literal replaced in place per decoy twin."""
        eco: Any = self
        rng = random.SystemRandom()
        if request.plan is None:
            files: list[dict[str, str]] = []
            mapping: dict[str, dict[str, Any]] = {}
            if request.canary_limit > 0:
                files, mapping = calibration_copies(
                    eco,
                    list(task.FAIL_TO_PASS),
                    test_texts(task.test_patch, request.shown),
                    limit=request.canary_limit,
                    rng=rng,
                    added=added_lines(task.test_patch),
                )
            job: dict[str, Any] = eco.run_job(
                task,
                request.test_patch_path,
                timeout=request.timeout,
                output_limit=request.output_limit,
                files=files,
                extra=mapping,
                test_timeout=request.test_timeout,
            )
            return job
        twins = [{} if t is None else {"edits": [twin_edit(t)]} for t in request.plan.twins]
        job = eco.run_job(
            task,
            request.test_patch_path,
            timeout=request.timeout,
            output_limit=request.output_limit,
            twins=twins,
            test_timeout=request.test_timeout,
        )
        return job

    def check_candidate(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> CandidateCheck:
        """What the applied candidate's source files newly use, read here from the patch and
        the base files the container showed, against what the base code and the gold patch
        use; then the comparison methods it adds or changes (Go, Java, Rust)."""
        eco: Any = self
        base_files = {k: v.encode("utf-8") for k, v in (prepared.get("shown") or {}).items()}
        caps = task.audit.get("capabilities") or {}
        used: list[str] = eco.capabilities(patch, base_files.get)
        # The reference fix read again by this swe-forge's scanners too: a capability a newer
        # scanner names is the fix's as much as the one the admission recorded.
        gold = set(caps.get("gold") or ()) | set(eco.capabilities(task.patch, base_files.get))
        found = capability_violations(used, base=caps.get("base") or (), gold=gold)
        if not found and eco.name in method_hooks.LANGUAGES:
            # A comparison method the expected value is handed to, added or changed.
            found = method_hooks.violations(
                method_hooks.added(patch, base_files.get, eco.name),
                method_hooks.added(task.patch, base_files.get, eco.name),
            )
        detail = "; ".join(f"{v['code']}: {v['detail']}" for v in found[:5])
        return CandidateCheck(found, detail, used)

    def check_scanned(
        self, patch: str, task: TaskManifest, prepared: dict[str, Any]
    ) -> list[dict[str, str]]:
        """Nothing: the container scans nothing of these languages."""
        return []

    def kept_decoys(
        self,
        copies: dict[str, dict[str, Any]],
        outcomes: dict[str, str],
        test_patch: str,
        shown: dict[str, str],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Each copy's entry is the whole armed record: armed when the gold patch failed it."""
        armed: list[dict[str, Any]] = []
        disarmed: list[dict[str, Any]] = []
        for node, spec in sorted(copies.items()):
            (armed if outcomes.get(node) == "failed" else disarmed).append(spec)
        return armed, disarmed

    def swebench_eval(self, task: TaskManifest) -> tuple[str, str]:
        """None: SWE-bench 5's log parsers read pytest's summary lines only."""
        eco: Any = self
        raise InputError(
            f"{task.instance_id}: its tests run with {eco.runner_name!r}; "
            "only pytest tasks have a SWE-bench eval script"
        )

    def refusal(self, rec: ImageRecord) -> tuple[str, str] | None:
        """No project is refused for what it is."""
        return None

    def manifest_blocks(
        self,
        manifest: TaskManifest,
        rec: ImageRecord,
        read: Reader | None,
        paths: Callable[[], list[str]],
    ) -> None:
        """The toolchain and module, the environment, and the capabilities the base code and
        the gold patch use (read here, on the host)."""
        eco: Any = self
        recipe = dict(rec.recipe)
        manifest.image["ecosystem"] = eco.name
        manifest.image["toolchain"] = recipe.get("toolchain", "")
        manifest.image["toolchain_source"] = recipe.get("toolchain_source", "")
        manifest.harness["module"] = rec.project_name or ""
        # What the adapter's verifier run needs besides (Rust: the test targets' layout).
        extra = recipe.get("harness")
        if isinstance(extra, dict):
            manifest.harness.update(extra)
        env = dict(manifest.environment or {})
        env_vars = recipe.get("env")
        if isinstance(env_vars, dict):
            env["env"] = dict(sorted(env_vars.items()))
        manifest.environment = env
        base: list[str] = []
        if read is not None:
            base = eco.base_capabilities(paths(), read)
        manifest.audit["capabilities"] = {
            "scope": "patch",
            "base": base,
            # The gold patch's files compared with their base (what they newly use).
            "gold": eco.capabilities(manifest.patch, read),
        }
