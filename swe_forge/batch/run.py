"""``swe-forge run``: mine and admit a list of repositories as one resumable, shardable batch.

The unit of mining is a repository; the unit of admission is a candidate. Both stages run
their units concurrently (``--jobs``), with image builds and test runs bounded separately.
``--shard K/N`` keeps the repositories of one shard (so N jobs split a run without talking),
and the output folder holds the state: a killed run started again finishes the work without
redoing what was done, and without duplicating or losing a record.

Admission runs on this machine (``--jobs`` threads) or, with ``executor="ray"``, as one Ray
task per candidate on a cluster (:meth:`swe_forge.executors.ray.RayExecutor.admit`): the same
unit files, the same resume, the same decisions. With image records (``images``: from
``images build``, pushed with ``images push``), a candidate's images are not built but made
present on the engine that admits it, pulled by their pinned digests when missing.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from swe_forge.batch.shard import select
from swe_forge.batch.state import RunState, atomic_write
from swe_forge.config import Config
from swe_forge.errors import (
    EXIT_DONE_WITH_REJECTIONS,
    EXIT_INFRA_ERRORS,
    SweForgeError,
    UsageError,
)
from swe_forge.mining.miner import MineOptions, Miner
from swe_forge.mining.sources import RepoSource, expand_sources, materialize
from swe_forge.records import Candidate, read_image_records

if TYPE_CHECKING:
    from swe_forge.records import ImageRecord

#: Exit codes of batch commands (documented in --help).
EXIT_DONE = 0


class BatchReporter(Protocol):
    """What a batch run tells its display."""

    def stage(self, name: str, total: int, done: int) -> None:
        """A stage starts with ``total`` units, ``done`` of them already finished."""

    def unit_done(self, stage: str, outcome: str) -> None:
        """One unit finished with an outcome (admitted, rejected, mined, error)."""

    def worker(self, worker: str, activity: str) -> None:
        """What a worker is doing now ("" when idle)."""


class NullBatchReporter:
    """Shows nothing."""

    def stage(self, name: str, total: int, done: int) -> None:
        """Ignore."""

    def unit_done(self, stage: str, outcome: str) -> None:
        """Ignore."""

    def worker(self, worker: str, activity: str) -> None:
        """Ignore."""


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs."""

    jobs: int = 1
    build_jobs: int = 1
    test_jobs: int = 1
    shard: tuple[int, int] = (1, 1)
    #: What ``shard`` slices: "repo" (each shard mines and admits its repositories) or
    #: "candidate" (each shard mines every repository, the same candidates, and admits its
    #: slice of them: balanced work when a few repositories hold most candidates).
    shard_by: str = "repo"
    until: str = "admit"  # "mine" | "admit"
    force: bool = False
    mine: MineOptions = field(default_factory=MineOptions)
    #: Where admission runs: "local" (``jobs`` threads) or "ray" (a Ray cluster).
    executor: str = "local"
    #: With ``executor="ray"``: the cluster (what :func:`ray.init` takes); None: RAY_ADDRESS,
    #: else a Ray instance started for the run.
    address: str | None = None
    #: Image records (``images build``/``images push`` output): candidates with one are
    #: admitted on those images (pulled by digest where missing) instead of building.
    images: Path | None = None


@dataclass
class BatchResult:
    """What a batch run did, for the summary and the exit code."""

    out: Path
    repos: int = 0
    candidates: int = 0
    admitted: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    infra_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: With ``--shard-by candidate``: the candidates this shard admits (of ``candidates``).
    shard_candidates: int | None = None
    #: Lines worth telling the user (an uneven split).
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 all done; 20 done with rejections; 21 infrastructure errors left work undone."""
        if self.infra_errors:
            return EXIT_INFRA_ERRORS
        return EXIT_DONE_WITH_REJECTIONS if sum(self.rejected.values()) else EXIT_DONE

    def summary(self) -> dict[str, Any]:
        """The JSON summary written to DIR/summary.json."""
        return {
            "schema_version": 1,
            "out": str(self.out),
            "repos": self.repos,
            "candidates": self.candidates,
            "admitted": self.admitted,
            "rejected": dict(sorted(self.rejected.items())),
            "infra_errors": self.infra_errors[:50],
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
            **({"notes": self.notes} if self.notes else {}),
            **(
                {"shard_candidates": self.shard_candidates}
                if self.shard_candidates is not None
                else {}
            ),
        }


def _sort_key(rec: dict[str, Any]) -> tuple[str, str, int, str]:
    return (
        str(rec.get("repo", "")),
        str(rec.get("instance_id") or ""),
        int(rec.get("pr_number") or 0),
        str(rec.get("stage", "")),
    )


def assemble(state: RunState) -> tuple[int, int, Counter[str]]:
    """Write candidates.jsonl, rejected.jsonl and tasks.jsonl from the unit files (sorted)."""
    candidates: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    for rec in state.load("mine"):
        kind = rec.get("record_type")
        if kind == "candidate":
            candidates.append(rec)
        elif kind == "rejection":
            rejected.append(rec)
    for rec in state.load("admit"):
        (tasks if rec.get("record_type") == "task" else rejected).append(rec)

    def dump(recs: list[dict[str, Any]]) -> str:
        return "".join(
            json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
            for r in sorted(recs, key=_sort_key)
        )

    atomic_write(state.root / "candidates.jsonl", dump(candidates))
    atomic_write(state.root / "rejected.jsonl", dump(rejected))
    atomic_write(state.root / "tasks.jsonl", dump(tasks))
    return len(candidates), len(tasks), Counter(str(r.get("reason")) for r in rejected)


def run_batch(
    repos_file: Path,
    out: Path,
    *,
    config: Config,
    options: BatchOptions,
    reporter: BatchReporter | None = None,
) -> BatchResult:
    """Mine (and admit) every repository of a shard; resumable from ``out``."""
    start = time.perf_counter()
    reporter = reporter or NullBatchReporter()
    if options.executor not in ("local", "ray"):
        raise UsageError(
            f"no such executor: {options.executor}", hint="use --executor local or ray"
        )
    if options.address is not None and options.executor != "ray":
        raise UsageError("--address needs --executor ray", hint="add --executor ray")
    if options.executor == "ray":
        # Before anything else: a missing extra is a usage error, not a crash mid-run.
        from swe_forge.executors.ray import import_ray

        import_ray()
    if options.shard_by not in ("repo", "candidate"):
        raise UsageError(f"--shard-by {options.shard_by!r}", hint="use repo or candidate")
    if options.shard_by == "candidate" and options.until == "mine":
        raise UsageError(
            "--shard-by candidate slices admission: with --until mine every shard would do "
            "the same work",
            hint="use --shard-by repo to slice mining",
        )
    images = read_image_records(options.images) if options.images is not None else {}
    sources = expand_sources([str(repos_file)])
    k, n = options.shard
    by_candidate = options.shard_by == "candidate" and n > 1
    mine_units = sources if by_candidate else select(sources, lambda s: s.spec, k, n)
    identity = {
        "command": "run",
        "config_hash": config.digest(),
        "shard": f"{k}/{n}",
        "until": options.until,
        "sources": hashlib.sha256("\n".join(s.spec for s in sources).encode()).hexdigest(),
    }
    if by_candidate:
        # Only when set: folders made before the option continue as they were.
        identity["shard_by"] = "candidate"
    if options.images is not None:
        # Other images may decide otherwise: a folder is continued only with the same ones.
        identity["images"] = _images_digest(images)
    state = RunState(out, identity=identity, force=options.force)
    result = BatchResult(out=out, repos=len(mine_units))
    if n > 1 and not by_candidate and len(sources) < 2 * n:
        result.notes.append(
            f"{len(sources)} repositories for {n} shards: shards hold whole repositories, so "
            "their work is uneven (some may have none); --shard-by candidate balances admission"
        )
    _mine_stage(state, mine_units, config, options, reporter, result)
    if options.until == "admit":
        slice_of = (_instance_id, k, n) if by_candidate else None
        _admit_stage(state, config, options, reporter, result, images, slice_of)
    result.candidates, result.admitted, result.rejected = assemble(state)
    result.seconds = time.perf_counter() - start
    atomic_write(
        out / "summary.json", json.dumps(result.summary(), indent=2, sort_keys=True) + "\n"
    )
    return result


def _mine_stage(
    state: RunState,
    units: list[RepoSource],
    config: Config,
    options: BatchOptions,
    reporter: BatchReporter,
    result: BatchResult,
) -> None:
    todo = [s for s in units if not state.done("mine", s.spec)]
    if not todo:
        reporter.stage("mine", len(units), len(units))
        return
    with Miner(config) as miner:
        # Mining is CPU work in Python (threads would share one interpreter lock): one
        # repository at a time, with --jobs worker processes building its PRs. They are
        # forked first, before the progress display or the fetch threads exist.
        miner.start_workers(options.jobs)
        reporter.stage("mine", len(units), len(units) - len(todo))
        fetched = _fetch(todo, options, reporter, result)
        worker = threading.current_thread().name
        mine_options = replace(options.mine, jobs=options.jobs)
        for source in todo:
            if source.spec not in fetched:
                reporter.unit_done("mine", "error")
                continue
            reporter.worker(worker, f"mining {source.name or source.spec}")
            # Clones were brought up to date just now: no second trip to the remote.
            opts = replace(mine_options, offline=True) if source.is_url else mine_options
            candidates, rejections, stats = miner.mine(source, opts)
            if stats.error:
                # A repository that cannot be opened: retried on the next run.
                result.infra_errors.append(f"{stats.repo}: {stats.error}")
                reporter.unit_done("mine", "error")
            else:
                lines = [c.to_json() for c in candidates] + [r.to_json() for r in rejections]
                state.save("mine", source.spec, lines)
                reporter.unit_done("mine", "mined")
            reporter.worker(worker, "")


def _fetch(
    todo: list[RepoSource], options: BatchOptions, reporter: BatchReporter, result: BatchResult
) -> set[str]:
    """Clone or update the remote repositories of ``todo`` (--jobs at once: network-bound).

    Returns the specs that can be mined; a remote that cannot be reached is an
    infrastructure error, retried on the next run.
    """
    ready = {s.spec for s in todo if not s.is_url}
    remote = [s for s in todo if s.is_url]
    if not remote:
        return ready

    def one(source: RepoSource) -> None:
        worker = threading.current_thread().name
        reporter.worker(worker, f"fetching {source.name or source.spec}")
        try:
            label = f"fetching {source.name or source.spec}"
            materialize(
                source,
                offline=options.mine.offline,
                progress=lambda line: reporter.worker(worker, f"{label}: {line}"),
            )
            ready.add(source.spec)
        except SweForgeError as exc:
            result.infra_errors.append(f"{source.name or source.spec}: {exc}")
        reporter.worker(worker, "")

    with ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="fetch") as pool:
        list(pool.map(one, remote))
    return ready


def _instance_id(cand: Candidate) -> str:
    return cand.instance_id


def _images_digest(images: dict[str, ImageRecord]) -> str:
    """A hash of the image records a run admits with (order-free)."""
    text = "\n".join(
        json.dumps(images[k].to_dict(), sort_keys=True, default=str) for k in sorted(images)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _admit_stage(
    state: RunState,
    config: Config,
    options: BatchOptions,
    reporter: BatchReporter,
    result: BatchResult,
    images: dict[str, ImageRecord] | None = None,
    slice_of: tuple[Callable[[Candidate], str], int, int] | None = None,
) -> None:
    images = images or {}
    candidates = sorted(
        (Candidate.from_dict(r) for r in state.load("mine") if r.get("record_type") == "candidate"),
        key=lambda c: c.instance_id,
    )
    if slice_of is not None:
        key, k, n = slice_of
        candidates = select(candidates, key, k, n)
        result.shard_candidates = len(candidates)
    todo = [c for c in candidates if not state.done("admit", c.instance_id)]
    reporter.stage("admit", len(candidates), len(candidates) - len(todo))
    if not todo:
        return
    # Containers of this run are labelled with it: a killed attempt's leftovers are removed
    # when the run starts again (never another run's).
    labels = {
        "org.swe-forge.run": hashlib.sha256(str(state.root.resolve()).encode()).hexdigest()[:16]
    }
    from swe_forge.engine import Engine

    engine = Engine()
    engine.remove_containers("org.swe-forge.run=" + labels["org.swe-forge.run"])
    if options.executor == "ray":
        try:
            _admit_on_ray(state, config, options, reporter, result, todo, images, labels)
        finally:
            # A node killed mid-admission leaves its gate's container behind (its owner
            # process is dead): remove those, so a Ray run leaves no container either.
            engine.reap_orphans()
        return
    _admit_here(state, config, options, reporter, result, todo, images, labels)


def _record(state: RunState, reporter: BatchReporter, instance_id: str, line: str) -> None:
    """Keep one decision (a unit file) and count it."""
    state.save("admit", instance_id, [line])
    admitted = json.loads(line).get("record_type") == "task"
    reporter.unit_done("admit", "admitted" if admitted else "rejected")


def _admit_here(
    state: RunState,
    config: Config,
    options: BatchOptions,
    reporter: BatchReporter,
    result: BatchResult,
    todo: list[Candidate],
    images: dict[str, ImageRecord],
    labels: dict[str, str],
) -> None:
    """Admit on this machine: ``--jobs`` threads, builds and test runs bounded apart."""
    from swe_forge.admission.admitter import Admitter

    build_slots = threading.Semaphore(max(1, options.build_jobs))
    test_slots = threading.Semaphore(max(1, options.test_jobs))
    local = threading.local()

    def admitter() -> Admitter:
        # One per thread: each holds its own engine connection and repository handles.
        if not hasattr(local, "admitter"):
            local.admitter = Admitter(
                config, build_slots=build_slots, test_slots=test_slots, container_labels=labels
            )
        return local.admitter  # type: ignore[no-any-return]

    def one(cand: Candidate) -> None:
        worker = threading.current_thread().name
        reporter.worker(worker, f"admitting {cand.instance_id}")
        try:
            made, _timings = admitter().admit(cand, images.get(cand.instance_id))
        except SweForgeError as exc:
            result.infra_errors.append(f"{cand.instance_id}: {exc}")
            reporter.unit_done("admit", "error")
            reporter.worker(worker, "")
            return
        _record(state, reporter, cand.instance_id, made.to_json())
        reporter.worker(worker, "")

    with ThreadPoolExecutor(max_workers=max(1, options.jobs), thread_name_prefix="worker") as pool:
        list(pool.map(one, todo))


def _admit_on_ray(
    state: RunState,
    config: Config,
    options: BatchOptions,
    reporter: BatchReporter,
    result: BatchResult,
    todo: list[Candidate],
    images: dict[str, ImageRecord],
    labels: dict[str, str],
) -> None:
    """Admit on a Ray cluster: one task per candidate; each decision is saved the moment it
    reaches this process (so a killed driver resumes like a killed local run)."""
    from swe_forge.executors.ray import RayExecutor

    executor = RayExecutor(config, options.address)
    reporter.worker("ray", f"{len(todo)} candidate(s) on the cluster")

    def decided(i: int, line: str) -> None:
        _record(state, reporter, todo[i].instance_id, line)

    def failed(i: int, message: str) -> None:
        # Not decided: no unit file, so the next run admits it again (as locally).
        result.infra_errors.append(f"{todo[i].instance_id}: {message}")
        reporter.unit_done("admit", "error")

    executor.admit(
        [c.to_dict() for c in todo],
        [images[c.instance_id].to_dict() if c.instance_id in images else None for c in todo],
        labels,
        decided,
        failed,
    )
    reporter.worker("ray", "")


def merge_runs(shards: list[Path], out: Path, *, force: bool = False) -> dict[str, Any]:
    """Combine shard folders into one: refuse shards of different configurations."""
    from swe_forge.errors import InputError

    identities = []
    for d in shards:
        meta = d / "run.json"
        if not meta.exists():
            raise InputError(f"{d} is not a run folder (no run.json)")
        identities.append(json.loads(meta.read_text(encoding="utf-8")))
    keys = ("command", "config_hash", "until", "sources", "tool_version", "shard_by")
    for key in keys:
        values = {str(i.get(key)) for i in identities}
        if len(values) > 1 and not force:
            raise UsageError(
                f"the shards differ in {key}: {', '.join(sorted(values))}",
                hint="merge only shards of one run (same configuration, repositories and version)",
            )
    counts = {str(i.get("shard", "1/1")).split("/")[1] for i in identities}
    if len(counts) > 1 and not force:
        raise UsageError(f"the shards come from different splits: {sorted(counts)}")
    seen_shards = [str(i.get("shard")) for i in identities]
    if len(set(seen_shards)) != len(seen_shards):
        raise UsageError(f"a shard is given twice: {sorted(seen_shards)}")
    identity = {k: identities[0].get(k) for k in keys if k != "tool_version"}
    identity["shard"] = "merged"
    identity["merged_from"] = sorted(seen_shards)
    state = RunState(out, identity=identity, force=force)
    for d in shards:
        for stage_dir in sorted((d / "units").glob("*")):
            for unit in sorted(stage_dir.iterdir()):
                if unit.name.startswith("."):
                    continue
                target = state.units / stage_dir.name / unit.name
                if not target.exists():
                    atomic_write(target, unit.read_text(encoding="utf-8"))
    n_cands, n_tasks, rejected = assemble(state)
    expected = int(next(iter(counts))) if counts else 1
    summary = {
        "schema_version": 1,
        "shards": sorted(seen_shards),
        "complete": len(seen_shards) == expected,
        "candidates": n_cands,
        "admitted": n_tasks,
        "rejected": dict(sorted(rejected.items())),
    }
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary
