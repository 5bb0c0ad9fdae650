#!/usr/bin/env python3
"""Benchmark: what `swe-forge verify` costs per patch over a plain run of the same tests.

For each language (the example of each: textkit, gokit, rustkit, jskit, javakit), the gold
patches of the admitted tasks are verified --n times in all (spread round-robin over the
tasks, each repetition its own model: gold-1, gold-2...), and each verification is paired
with a *plain* run measured right beside it (their order alternating): a bare
`docker run --network=none` of the same instance image, as its own user, with the image's
environment and the task's (`environment.env`), that applies the test patch and the gold patch
with `git apply` and runs the task's own test command (`harness.test_command`). Nothing of the
judge is in it: no supervisor, seed, tmpfs, locks, canaries, scan, limits or checks.

  verify wall   one `swe-forge verify` of one prediction, from its start to its result
                (the container's removal included), measured outside the verifier;
  plain wall    the bare container from creation to removal;
  overhead      verify wall - plain wall of each pair (median, p95).

Before measuring, every task is verified and run plain once (seeds, page cache, layers).
For Python, the same n predictions are also graded as one batch with --jobs 1 and --jobs 2
(throughput ratio). Targets the project holds itself to, printed (not asserted): Python's
median overhead under 1.0 s on a 2-core machine, and no language's median overhead above 3x
its median plain run.

What the plain run needs beyond the manifest's `test_command` and `environment.env` (the
script adds it, and says so): Python's command loads the judge's pytest plugin
(`-p swe_forge_harness`), which only the judge brings: dropped. Go's command copies the warm
build cache to "$GOCACHE", which only the judge sets (unset, every run rebuilds the standard
library, ~18 s): GOCACHE=/tmp/gocache. Rust's copies the warm target dir and cargo config to
/tmp, which cargo uses only when CARGO_TARGET_DIR and CARGO_HOME point there (the judge sets
them): set to those paths.

Usage: scripts/bench_verify.py [--languages python,go,rust,js,java] [--n 20] [--work DIR]
       [--readmit] [--no-throughput]
  --work DIR keeps each language's example, candidates and tasks in DIR/<language>; a second
  run reuses the admitted tasks (no mining, no admission) unless they were admitted by
  another judge (re-admitted then) or --readmit is given.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swe_forge.commands.admit import run_admit
from swe_forge.commands.images import run_build
from swe_forge.commands.mine import run_mine
from swe_forge.commands.verify import read_tasks, run_verify
from swe_forge.config import Config, load_config
from swe_forge.engine import Engine
from swe_forge.example import create_example
from swe_forge.example.catalog import create_language_example
from swe_forge.mining.miner import MineOptions
from swe_forge.progress import NullReporter
from swe_forge.records import TaskManifest

LANGUAGES = ("python", "go", "rust", "js", "java")
#: What a plain run of a runner's test command needs that the manifest does not give (see
#: the module's docstring): the judge sets these for its own runs.
SCRATCH_ENV: dict[str, dict[str, str]] = {
    "go-test": {"GOCACHE": "/tmp/gocache"},
    "cargo-test": {"CARGO_HOME": "/tmp/cargo-home", "CARGO_TARGET_DIR": "/tmp/target"},
}
#: The judge's own pytest plugin, which a plain run does not have.
HARNESS_PLUGIN = " -p swe_forge_harness"
PYTHON_TARGET_S = 1.0
RATIO_TARGET = 3.0


# ---------------------------------------------------------------------------------- tasks
def admit(lang: str, work: Path, cfg: Config) -> Path:
    """Create, mine and admit the example of ``lang`` in ``work``; return its tasks file."""
    tasks = work / "tasks.jsonl"
    repo = work / "repo"
    print(f"[{lang}] creating, mining and admitting the example in {work}", flush=True)
    if lang == "python":
        info = create_example(repo, force=True)
    else:
        info = create_language_example(lang, repo, force=True)
    cands = work / "candidates.jsonl"
    run_mine(
        [str(info.path)],
        cands,
        config=cfg,
        options=MineOptions(),
        rejected=work / "rejected.jsonl",
    )
    images = None
    if lang == "python":
        # Python's images are built first; the other adapters' admission builds its own.
        images = work / "images.jsonl"
        run_build(cands, images, config=cfg)
    start = time.perf_counter()
    result = run_admit(
        cands,
        tasks,
        config=cfg,
        rejected=work / "admit-rejected.jsonl",
        images_path=images,
        restart=True,
    )
    print(
        f"[{lang}] admitted {len(result.admitted)}, rejected {len(result.rejected)} "
        f"in {time.perf_counter() - start:.0f} s",
        flush=True,
    )
    return tasks


def has_tasks(path: Path) -> bool:
    return path.exists() and any(line.strip() for line in path.read_text().splitlines())


# ---------------------------------------------------------------------------------- timing
class Stopwatch(NullReporter):
    """A progress reporter that notes when grading started and when each result came."""

    def __init__(self) -> None:
        self.started = 0.0
        self.done: list[float] = []

    def start(self, description: str, total: int | None) -> None:
        self.started = time.perf_counter()

    def advance(self, n: int = 1) -> None:
        self.done.extend([time.perf_counter()] * n)


@dataclass
class Graded:
    """One verification: its wall time outside the verifier, and the verifier's result."""

    wall: float
    status: str
    timings: dict[str, float]
    detail: str = ""


def verify_one(tasks_path: Path, work: Path, cfg: Config, task: TaskManifest, model: str) -> Graded:
    """One prediction (the gold patch under ``model``) through `swe-forge verify`."""
    preds = work / "one-prediction.jsonl"
    row = {"instance_id": task.instance_id, "model_name_or_path": model, "model_patch": task.patch}
    preds.write_text(json.dumps(row) + "\n")
    watch = Stopwatch()
    run, _ = run_verify(
        tasks_path, work / "one-result.jsonl", config=cfg, predictions=preds, reporter=watch
    )
    (result,) = run.results
    return Graded(
        watch.done[-1] - watch.started, result.status, dict(result.timings), result.detail
    )


def patch_archive(task: TaskManifest) -> bytes:
    """A tar of the two patches for /tmp/bench, owned by the image's user."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in (("bench/test.patch", task.test_patch), ("bench/gold.patch", task.patch)):
            data = text.encode("utf-8", "surrogateescape")
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, 1000, 1000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def plain_command(task: TaskManifest) -> tuple[str, dict[str, str], list[str]]:
    """The plain run's shell script, its environment, and what the script had to add."""
    command = str(task.harness["test_command"])
    added = []
    if HARNESS_PLUGIN in command:
        command = command.replace(HARNESS_PLUGIN, "")
        added.append("dropped -p swe_forge_harness (the judge's plugin)")
    env = {str(k): str(v) for k, v in (task.environment.get("env") or {}).items()}
    scratch = SCRATCH_ENV.get(str(task.harness.get("runner") or ""), {})
    for key, value in scratch.items():
        if key not in env:
            env[key] = value
            added.append(f"set {key}={value} (not in environment.env)")
    script = (
        "set -e; cd /testbed; "
        "git apply --whitespace=nowarn /tmp/bench/test.patch; "
        "git apply --whitespace=nowarn /tmp/bench/gold.patch; set +e\n" + command
    )
    return script, env, added


def plain_one(engine: Engine, task: TaskManifest) -> tuple[float, int, str]:
    """A bare container of the instance image: both patches applied, the tests run."""
    script, env, _ = plain_command(task)
    archive = patch_archive(task)
    timeout = float(task.environment.get("verify_timeout_seconds") or 1800)
    start = time.perf_counter()
    with engine.container(
        str(task.image["id"]), ["/bin/sh", "-c", script], environment=env, network_disabled=True
    ) as ctr:
        ctr.put_archive("/tmp", archive)
        ctr.start()
        code = int(ctr.wait(timeout=timeout).get("StatusCode", -1))
        out = ctr.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    return time.perf_counter() - start, code, out[-800:]


# ---------------------------------------------------------------------------------- stats
def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def p95(xs: list[float]) -> float:
    """Nearest-rank 95th percentile (the 19th of 20)."""
    if not xs:
        return math.nan
    return sorted(xs)[max(0, math.ceil(0.95 * len(xs)) - 1)]


@dataclass
class LanguageRun:
    """What one language's measurements gave."""

    lang: str
    tasks: int = 0
    verify: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    plain_failed: list[str] = field(default_factory=list)
    parts: list[dict[str, float]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    throughput: dict[int, float] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)  # 1-min load average at each pair
    error: str = ""

    @property
    def overhead(self) -> list[float]:
        return [v - p for v, p in zip(self.verify, self.plain, strict=True)]

    @property
    def resolved(self) -> int:
        return sum(s == "resolved" for s in self.statuses)


# ---------------------------------------------------------------------------------- a language
def stale_judge(graded: list[Graded]) -> bool:
    return any(g.status == "infra_error" and "judge differs" in g.detail for g in graded)


def bench_language(lang: str, args: argparse.Namespace, cfg: Config, engine: Engine) -> LanguageRun:
    out = LanguageRun(lang)
    work = (args.work / lang).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tasks_path = work / "tasks.jsonl"
    if args.readmit or not has_tasks(tasks_path):
        admit(lang, work, cfg)
    else:
        print(f"[{lang}] reusing the tasks admitted in {tasks_path}", flush=True)
    if not has_tasks(tasks_path):
        out.error = "no task admitted"
        return out
    tasks = read_tasks(tasks_path)
    ids = sorted(tasks)
    out.tasks = len(ids)
    # Warm-up, not measured: each task once each way (the seed of each image is made here).
    warm = [verify_one(tasks_path, work, cfg, tasks[i], "warm-up") for i in ids]
    if stale_judge(warm):
        print(f"[{lang}] the tasks were admitted by another judge: admitting again", flush=True)
        admit(lang, work, cfg)
        tasks = read_tasks(tasks_path)
        ids = sorted(tasks)
        out.tasks = len(ids)
        warm = [verify_one(tasks_path, work, cfg, tasks[i], "warm-up") for i in ids]
    for i, g in zip(ids, warm, strict=True):
        if g.status != "resolved":
            print(f"[{lang}] warm-up: {i} {g.status}: {g.detail[:200]}", flush=True)
    for i in ids:
        _, code, tail = plain_one(engine, tasks[i])
        if code != 0:
            print(f"[{lang}] warm-up plain run of {i} exited {code}:\n{tail}", flush=True)
    out.added = plain_command(tasks[ids[0]])[2]
    print(
        f"[{lang}] measuring {args.n} verifications over {len(ids)} tasks, each beside a "
        f"plain run (plain run adds: {', '.join(out.added) or 'nothing'})",
        flush=True,
    )
    for k in range(args.n):
        task = tasks[ids[k % len(ids)]]
        model = f"gold-{k // len(ids) + 1}"

        def verified(task: TaskManifest = task, model: str = model) -> None:
            g = verify_one(tasks_path, work, cfg, task, model)
            out.verify.append(g.wall)
            out.statuses.append(g.status)
            out.parts.append(g.timings)
            if g.status != "resolved":
                print(f"[{lang}] {task.instance_id} {model}: {g.status}: {g.detail[:300]}")

        def plain(task: TaskManifest = task) -> None:
            wall, code, tail = plain_one(engine, task)
            out.plain.append(wall)
            if code != 0:
                out.plain_failed.append(task.instance_id)
                print(f"[{lang}] plain run of {task.instance_id} exited {code}:\n{tail}")

        # Alternate which goes first, so neither always runs on the other's warm caches.
        for step in (verified, plain) if k % 2 == 0 else (plain, verified):
            step()
        out.loads.append(os.getloadavg()[0])
        print(
            f"[{lang}] {k + 1}/{args.n} {task.instance_id}: verify {out.verify[-1]:.2f} s, "
            f"plain {out.plain[-1]:.2f} s",
            flush=True,
        )
    if lang == "python" and args.throughput:
        preds = work / "preds.jsonl"
        rows = [
            {
                "instance_id": ids[k % len(ids)],
                "model_name_or_path": f"gold-{k // len(ids) + 1}",
                "model_patch": tasks[ids[k % len(ids)]].patch,
            }
            for k in range(args.n)
        ]
        preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
        for jobs in (1, 2):
            start = time.perf_counter()
            run, _ = run_verify(
                tasks_path,
                work / f"results-j{jobs}.jsonl",
                config=cfg,
                predictions=preds,
                jobs=jobs,
            )
            out.throughput[jobs] = time.perf_counter() - start
            resolved = sum(r.status == "resolved" for r in run.results)
            print(
                f"[{lang}] --jobs {jobs}: {len(run.results)} graded, {resolved} resolved, "
                f"{out.throughput[jobs]:.1f} s",
                flush=True,
            )
    return out


# ---------------------------------------------------------------------------------- report
def table(runs: list[LanguageRun]) -> str:
    head = (
        "language",
        "tasks",
        "n",
        "resolved",
        "verify med",
        "verify p95",
        "plain med",
        "plain p95",
        "overhead med",
        "overhead p95",
        "verify/plain",
        "overhead/plain",
        "load",
        "target",
    )
    rows = []
    for r in runs:
        if r.error:
            rows.append((r.lang, str(r.tasks), "0", "-", *["-"] * 9, r.error))
            continue
        v, p, o = median(r.verify), median(r.plain), median(r.overhead)
        if r.lang == "python":
            met = o < PYTHON_TARGET_S and o <= RATIO_TARGET * p
            goal = f"< {PYTHON_TARGET_S:.1f} s and <= {RATIO_TARGET:g}x plain"
        else:
            met = o <= RATIO_TARGET * p
            goal = f"<= {RATIO_TARGET:g}x plain"
        resolved = f"{r.resolved}/{len(r.statuses)}"
        if r.plain_failed:
            resolved += f" (plain failed {len(r.plain_failed)})"
        rows.append(
            (
                r.lang,
                str(r.tasks),
                str(len(r.verify)),
                resolved,
                f"{v:.2f} s",
                f"{p95(r.verify):.2f} s",
                f"{p:.2f} s",
                f"{p95(r.plain):.2f} s",
                f"{o:+.2f} s",
                f"{p95(r.overhead):+.2f} s",
                f"{v / p:.2f}x",
                f"{o / p:.2f}x",
                f"{statistics.mean(r.loads):.1f}",
                f"{'met' if met else 'NOT met'} ({goal})",
            )
        )
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep, *(line(r) for r in rows)])


def parts(runs: list[LanguageRun]) -> str:
    """Medians of the verifier's own timings (its view from inside), per language."""
    keys = ("container_start", "prepare", "tests", "run", "total")
    lines = ["verifier's own timings (medians): " + ", ".join(keys) + ", run - tests"]
    for r in runs:
        if not r.parts:
            continue
        med = {k: median([t.get(k, 0.0) for t in r.parts]) for k in keys}
        rest = median([t.get("run", 0.0) - t.get("tests", 0.0) for t in r.parts])
        cells = ", ".join(f"{med[k]:.2f}" for k in keys)
        lines.append(f"  {r.lang:<7} {cells}, {rest:.2f} s")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated")
    ap.add_argument("--n", type=int, default=20, help="verifications per language")
    ap.add_argument("--work", type=Path, default=Path("bench-verify"))
    ap.add_argument("--readmit", action="store_true", help="admit again even if tasks exist")
    ap.add_argument(
        "--no-throughput",
        dest="throughput",
        action="store_false",
        help="skip Python's --jobs 1 / --jobs 2 batches",
    )
    args = ap.parse_args()
    langs = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = sorted(set(langs) - set(LANGUAGES))
    if unknown or args.n < 1:
        ap.error(f"unknown language {unknown[0]}" if unknown else "--n must be at least 1")
    args.work.mkdir(parents=True, exist_ok=True)
    cfg = load_config()
    engine = Engine()
    started = time.perf_counter()
    load = os.getloadavg()
    runs = []
    for lang in langs:
        try:
            runs.append(bench_language(lang, args, cfg, engine))
        except Exception as exc:  # a benchmark reports what broke and goes on
            runs.append(LanguageRun(lang, error=f"{type(exc).__name__}: {exc}"[:200]))
            print(f"[{lang}] failed: {runs[-1].error}", flush=True)
    print()
    print(
        f"swe-forge verify vs a plain docker run, {os.cpu_count()} CPUs, load average "
        f"{load[0]:.2f} at the start and {os.getloadavg()[0]:.2f} at the end, "
        f"{time.perf_counter() - started:.0f} s in all"
    )
    print(table(runs))
    cpus = os.cpu_count() or 1
    busy = [r.lang for r in runs if r.loads and statistics.mean(r.loads) > cpus]
    if busy:
        print(
            f"note: the load average (mean of the pairs, column 'load') was above the {cpus} "
            f"CPUs while measuring {', '.join(busy)}: other work shared the machine"
        )
    print(parts(runs))
    for r in runs:
        if r.added:
            print(f"plain run of {r.lang} beside the manifest's command: {', '.join(r.added)}")
        if r.throughput:
            w1, w2 = r.throughput[1], r.throughput[2]
            n = len(r.verify)
            print(
                f"{r.lang} throughput: --jobs 1 {n / w1:.2f}/s ({w1:.1f} s), --jobs 2 "
                f"{n / w2:.2f}/s ({w2:.1f} s): jobs2/jobs1 {w1 / w2:.2f}x"
            )


if __name__ == "__main__":
    main()
