"""``swe-forge verify``: grade predictions against task manifests, one fresh container each."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge.config import Config
from swe_forge.engine import Engine
from swe_forge.errors import DigestError, InputError, UsageError
from swe_forge.images.registry import needs_of_task, provide
from swe_forge.jsonl import AtomicWriter, read_jsonl, write_jsonl
from swe_forge.mining.classify import PathClassifier
from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import TaskManifest
from swe_forge.records.read import kind_of, refuse_kind
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier, VerifyResult


@dataclass(frozen=True)
class Prediction:
    """One prediction in SWE-bench's format."""

    instance_id: str
    model_name_or_path: str
    model_patch: str


def read_tasks(path: Path) -> dict[str, TaskManifest]:
    """instance_id -> manifest."""
    out: dict[str, TaskManifest] = {}
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = kind_of(data)
        if kind != "task":
            raise refuse_kind(
                path,
                lineno,
                kind,
                "task",
                "--tasks takes the tasks.jsonl that `swe-forge admit` writes (not its "
                "--format swebench rows: they carry no image, judge or gates)",
            )
        try:
            task = TaskManifest.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"{path}:{lineno}: not a task manifest ({exc})") from exc
        out[task.instance_id] = task
    if not out:
        raise InputError(f"{path} holds no tasks", hint="run `swe-forge admit` first")
    return out


def read_predictions(path: Path, notes: list[str] | None = None) -> list[Prediction]:
    """Predictions from .jsonl, a .json list, or a .json object keyed by instance id.

    A prediction without ``model_name_or_path`` is graded as model ``unknown``, and one line
    saying so is added to ``notes``.

    Raises:
        InputError: the file holds another kind of row (SWE-bench task rows, candidates...), a
            row has no instance_id or no model_patch, or a field has the wrong type.
    """
    if path.suffix == ".json":
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise InputError(f"no such file: {path}") from exc
        except ValueError as exc:
            raise InputError(f"{path} is not valid JSON: {exc}") from exc
        rows = list(data.values()) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise InputError(f"{path}: expected a list of predictions or an object of them")
    else:
        rows = list(read_jsonl(path))
    if not rows:
        raise InputError(f"{path} holds no predictions")
    out = []
    unnamed = 0
    shape = (
        "a prediction is one JSON object per line: "
        '{"instance_id": "...", "model_name_or_path": "...", "model_patch": "diff --git ..."}'
    )
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise InputError(f"{path}: prediction {i} is not a JSON object", hint=shape)
        kind = kind_of(row)
        if kind != "prediction":
            raise refuse_kind(
                path, i, kind, "prediction", shape + " (or grade the tasks' own patches: --gold)"
            )
        if "instance_id" not in row or not isinstance(row["instance_id"], str):
            raise InputError(f"{path}: prediction {i} has no instance_id string", hint=shape)
        if "model_patch" not in row:
            raise InputError(
                f"{path}: prediction {i} ({row['instance_id']}) has no model_patch",
                hint=shape + " (null for a model that gave no patch)",
            )
        patch = row.get("model_patch")
        if patch is not None and not isinstance(patch, str):
            raise InputError(
                f"{path}: prediction {i} ({row['instance_id']}): model_patch is a "
                f"{type(patch).__name__}, not the text of a diff"
            )
        model = row.get("model_name_or_path")
        if model is not None and not isinstance(model, str):
            raise InputError(
                f"{path}: prediction {i} ({row['instance_id']}): model_name_or_path is a "
                f"{type(model).__name__}, not a name",
                hint=shape,
            )
        if not model:
            unnamed += 1
        out.append(Prediction(row["instance_id"], model or "unknown", patch or ""))
    if unnamed and notes is not None:
        notes.append(
            f"{path}: {unnamed} prediction(s) name no model_name_or_path: graded as model 'unknown'"
        )
    return deduplicate(out, path)


def deduplicate(preds: list[Prediction], path: Path) -> list[Prediction]:
    """One prediction per (instance, model). SWE-bench keeps the last one per instance
    silently; here the same patch given twice is kept once, and two different patches for
    one instance from one model are refused (which one was meant cannot be known)."""
    seen: dict[tuple[str, str], Prediction] = {}
    for p in preds:
        key = (p.instance_id, p.model_name_or_path)
        if key in seen and seen[key].model_patch != p.model_patch:
            raise InputError(
                f"{path}: two different predictions for {p.instance_id} from "
                f"{p.model_name_or_path}",
                hint="keep one, or name each sample's model differently (e.g. model@1, "
                "model@2): each (instance, model) is graded once",
            )
        seen.setdefault(key, p)
    return list(seen.values())


def check_writable(path: Path) -> None:
    """Refuse an output path that cannot be written, before any grading starts."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a file to write")
    if not parent.is_dir():
        raise InputError(f"cannot write {path}: no such folder {parent}")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        import errno

        from swe_forge.errors import file_system_fault, output_error

        # An output that cannot be written is an output error (17) like every other: a
        # read-only file system said as such, else the permission.
        raise file_system_fault(path) or output_error(
            OSError(errno.EACCES, "Permission denied", str(path)), path
        )


@dataclass
class VerifyRun:
    """Results of a verify run, and the SWE-bench-shaped report."""

    results: list[VerifyResult] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1

    def report(self, tasks: dict[str, TaskManifest]) -> dict[str, Any]:
        """A superset of SWE-bench 5's run report (its ``schema_version`` 2 fields, same
        meanings), plus counts per status and, under ``reports``, SWE-bench's per-instance
        report (``tests_status`` with success/failure lists) per model and instance."""
        by: dict[str, set[str]] = {
            s: set() for s in ("resolved", "unresolved", "empty", "error", "completed")
        }
        statuses: dict[str, int] = {}
        reports: dict[str, dict[str, Any]] = {}
        for r in self.results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
            empty = any(v.get("code") == "empty_patch" for v in r.violations)
            if r.status == "infra_error":
                by["error"].add(r.instance_id)
            elif empty:
                by["empty"].add(r.instance_id)
            else:
                by["completed"].add(r.instance_id)
                by["resolved" if r.status == "resolved" else "unresolved"].add(r.instance_id)
            if r.status != "infra_error" and not empty:
                task = tasks.get(r.instance_id)
                reports.setdefault(r.model_name_or_path, {})[r.instance_id] = _instance_report(
                    r, task
                )
        # SWE-bench grades one model per run; with several predictions for an instance, it
        # is resolved when one of them resolved it (per model: ``reports``).
        by["unresolved"] -= by["resolved"]
        submitted = sorted({r.instance_id for r in self.results})
        return {
            "schema_version": 2,
            "report_format": "swe-forge/1",
            "total_instances": len(tasks),
            "submitted_instances": len(submitted),
            "completed_instances": len(by["completed"]),
            "resolved_instances": len(by["resolved"]),
            "unresolved_instances": len(by["unresolved"]),
            "infra_failure_instances": len(by["error"]),
            "ambiguous_failure_instances": 0,
            "empty_patch_instances": len(by["empty"]),
            "error_instances": len(by["error"]),
            "completed_ids": sorted(by["completed"]),
            "incomplete_ids": sorted(set(tasks) - set(submitted)),
            "empty_patch_ids": sorted(by["empty"]),
            "submitted_ids": submitted,
            "resolved_ids": sorted(by["resolved"]),
            "unresolved_ids": sorted(by["unresolved"]),
            "infra_failure_ids": sorted(by["error"]),
            "ambiguous_failure_ids": [],
            "failure_reasons": {
                r.instance_id: r.detail[:300] for r in self.results if r.status == "infra_error"
            },
            "error_ids": sorted(by["error"]),
            "predictions": len(self.results),
            "statuses": dict(sorted(statuses.items())),
            "reports": {m: dict(sorted(v.items())) for m, v in sorted(reports.items())},
            "models": self.per_model(),
            "seconds": round(self.seconds, 2),
            "jobs": self.jobs,
        }

    def per_model(self) -> dict[str, dict[str, Any]]:
        """Per model: predictions graded, resolved, the resolve rate over the graded ones
        (infrastructure errors are not the model's and are left out of the rate), and counts
        per status. The top-level ``resolved_ids`` mean "some model resolved it"."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.results:
            row = out.setdefault(
                r.model_name_or_path, {"predictions": 0, "resolved": 0, "statuses": {}}
            )
            row["predictions"] += 1
            row["resolved"] += r.status == "resolved"
            row["statuses"][r.status] = row["statuses"].get(r.status, 0) + 1
        for row in out.values():
            graded = row["predictions"] - row["statuses"].get("infra_error", 0)
            row["resolve_rate"] = round(row["resolved"] / graded, 4) if graded else None
            row["statuses"] = dict(sorted(row["statuses"].items()))
        return dict(sorted(out.items()))


def _instance_report(r: VerifyResult, task: TaskManifest | None) -> dict[str, Any]:
    """SWE-bench's per-instance report of one graded prediction."""

    def split(expected: list[str], seen: dict[str, str]) -> dict[str, list[str]]:
        ok = sorted(t for t in expected if seen.get(t) == "passed")
        return {"success": ok, "failure": sorted(set(expected) - set(ok))}

    f2p = list(task.FAIL_TO_PASS) if task else sorted(r.fail_to_pass)
    p2p = list(task.PASS_TO_PASS) if task else sorted(r.pass_to_pass)
    applied = r.status not in ("apply_failed", "invalid_patch")
    return {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": applied,
        "resolved": r.status == "resolved",
        "status": r.status,
        "reward": r.reward,
        "tests_status": {
            "FAIL_TO_PASS": split(f2p, r.fail_to_pass or r.tests),
            "PASS_TO_PASS": split(p2p, r.pass_to_pass or r.tests),
            "FAIL_TO_FAIL": {"success": [], "failure": []},
            "PASS_TO_FAIL": {"success": [], "failure": []},
        },
    }


def run_verify(
    tasks_path: Path,
    output: Path,
    *,
    config: Config,
    predictions: Path | None = None,
    gold: bool = False,
    instance: str | list[str] | None = None,
    patch_file: Path | None = None,
    jobs: int = 1,
    report_path: Path | None = None,
    reporter: Reporter | None = None,
    out_dir: Path | None = None,
    shard: tuple[int, int] = (1, 1),
    force: bool = False,
    executor: str = "local",
    address: str | None = None,
) -> tuple[VerifyRun, dict[str, Any]]:
    """Grade predictions (or the gold patches, or one patch file) and write results.

    With ``out_dir`` the run is a resumable batch: each graded prediction is a unit file in
    the folder, a rerun grades only what is missing, ``shard`` keeps one deterministic slice,
    and ``results.jsonl`` and ``report.json`` are assembled in the folder at the end.

    ``executor`` is ``local`` (``jobs`` threads in this process) or ``ray`` (one Ray task per
    prediction on the cluster at ``address``; needs the ``ray`` extra): same outputs either way.
    """
    start = time.perf_counter()
    reporter = reporter or NullReporter()
    if executor not in ("local", "ray"):
        raise UsageError(f"no such executor: {executor}", hint="use --executor local or ray")
    if address is not None and executor != "ray":
        raise UsageError("--address needs --executor ray", hint="add --executor ray")
    if executor == "ray":
        # Before anything else: a missing extra is a usage error, not a crash mid-run.
        from swe_forge.executors.ray import import_ray

        import_ray()
    if sum(bool(x) for x in (predictions, gold, patch_file)) != 1:
        raise UsageError("give exactly one of --predictions, --gold, or --instance with --patch")
    wanted = [instance] if isinstance(instance, str) else list(instance or [])
    for target in [output, report_path] if out_dir is None else [out_dir / "results.jsonl"]:
        if target is not None:
            if out_dir is not None and not out_dir.exists():
                check_writable(out_dir)
            else:
                check_writable(target)
    tasks = read_tasks(tasks_path)
    unknown = sorted(set(wanted) - set(tasks))
    if unknown:
        raise InputError(
            f"no such task in {tasks_path}: {', '.join(unknown[:5])}",
            hint="--instance takes instance ids of the tasks file",
        )
    preds: list[Prediction]
    if patch_file is not None:
        if len(wanted) != 1:
            raise UsageError("--patch needs exactly one --instance")
        instance = wanted[0]
        try:
            text = patch_file.read_text(encoding="utf-8", errors="surrogateescape")
        except FileNotFoundError as exc:
            raise InputError(f"no such file: {patch_file}") from exc
        preds = [Prediction(instance, "patch-file", text)]
    elif gold:
        ids = sorted(wanted) if wanted else sorted(tasks)
        preds = [Prediction(i, "gold", tasks[i].patch) for i in ids]
    else:
        assert predictions is not None
        notes: list[str] = []
        preds = read_predictions(predictions, notes)
        for line in notes:
            reporter.note(line)
        if wanted:
            preds = [p for p in preds if p.instance_id in set(wanted)]
    unknown = sorted({p.instance_id for p in preds} - set(tasks))
    if unknown:
        raise InputError(
            f"predictions for unknown tasks: {', '.join(unknown[:5])}", hint="check --tasks"
        )
    verifier = Verifier(
        Engine(), PathClassifier(config.classify), VerifySettings.from_config(config.verify)
    )
    run = VerifyRun(jobs=jobs)
    grader = _Grader(verifier, tasks, config, jobs, executor, address)
    if out_dir is not None:
        batch = _Batch(verifier, tasks, config, reporter, jobs, grader)
        return batch.run(preds, out_dir, run, shard, force, start)
    _provide(verifier.engine, tasks, preds, reporter)
    # Each result is appended to OUTPUT.partial the moment it is graded (a crash or Ctrl-C
    # keeps every finished grade there); OUTPUT itself is written at the end, in input order.
    out = AtomicWriter(output)
    reporter.start("verify", len(preds))
    done: dict[int, VerifyResult] = {}

    def record(i: int, result: VerifyResult) -> None:
        done[i] = result
        out.write(json.dumps(result.to_dict(), sort_keys=True))
        reporter.note(
            f"{result.instance_id} [{result.model_name_or_path}]: {result.status} "
            f"(reward {result.reward:g})"
        )
        reporter.advance()

    try:
        grader.grade(preds, record)
    except BaseException:
        out.abort()
        raise
    reporter.finish()
    out.abort()
    run.results = [done[i] for i in range(len(preds))]
    write_jsonl(output, (json.dumps(r.to_dict(), sort_keys=True) for r in run.results))
    run.seconds = time.perf_counter() - start
    report = run.report(tasks)
    if report_path is not None:
        report_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return run, report


def _provide(
    engine: Engine, tasks: dict[str, TaskManifest], preds: list[Prediction], reporter: Reporter
) -> None:
    """Pull by digest the pinned images of the tasks to grade that are not on this engine.

    Before any grading: a refused image (a digest the registry does not have, an image
    that is not the pinned one) ends the run with its own exit code instead of becoming an
    infrastructure error of each prediction.
    """
    provide_tasks(engine, [tasks[i] for i in sorted({p.instance_id for p in preds})], reporter)


def provide_tasks(engine: Engine, tasks: list[TaskManifest], reporter: Reporter) -> None:
    """Pull by digest the pinned images of ``tasks`` that are not on this engine.

    Raises:
        DigestError: an image is refused, or absent with no registry pin to pull it from.
    """
    needs = [need for task in tasks for need in needs_of_task(task)]
    got = provide(engine, needs, reporter)
    absent = set(got.unpinned)
    if absent:
        # Grading would fail on every try as an infrastructure error ("run again"), which
        # can never help: the image is not here and nothing says where to get it.
        owners = sorted({n.owner for n in needs if (n.id or n.local) in absent})
        raise DigestError(
            f"{len(owners)} task(s) to grade have no image on this engine and their manifests "
            f"pin no registry to pull it from: {', '.join(owners[:5])}",
            hint="import the images (`swe-forge images import ARCHIVE`), or push them from "
            "the machine that built them (`swe-forge images push`) and grade the manifests "
            "that push writes, or build and admit them here",
        )


def _result_of(fut: Future[VerifyResult], p: Prediction) -> VerifyResult:
    """A future's result; an exception escaping the verifier (a bug of ours) becomes this
    prediction's infrastructure error instead of taking the run down."""
    try:
        return fut.result()
    except Exception as exc:
        return VerifyResult(
            p.instance_id,
            p.model_name_or_path,
            "infra_error",
            0.0,
            detail=f"{type(exc).__name__}: {exc}"[:2000],
        )


@dataclass
class _Grader:
    """Grades predictions with the chosen executor, handing each final result to a callback
    the moment it is known (in completion order)."""

    verifier: Verifier
    tasks: dict[str, TaskManifest]
    config: Config
    jobs: int
    executor: str = "local"
    address: str | None = None

    def grade(
        self, preds: list[Prediction], on_result: Callable[[int, VerifyResult], None]
    ) -> None:
        if self.executor == "ray":
            self._grade_ray(preds, on_result)
            return
        with ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            futures = {
                pool.submit(
                    self.verifier.verify,
                    self.tasks[p.instance_id],
                    p.model_patch,
                    p.model_name_or_path,
                ): i
                for i, p in enumerate(preds)
            }
            for fut in as_completed(futures):
                i = futures[fut]
                on_result(i, _result_of(fut, preds[i]))

    def _grade_ray(
        self, preds: list[Prediction], on_result: Callable[[int, VerifyResult], None]
    ) -> None:
        from swe_forge.executors.ray import Job, RayExecutor

        jobs = [Job(self.tasks[p.instance_id], p.model_patch, p.model_name_or_path) for p in preds]
        try:
            RayExecutor(self.config, self.address).grade(jobs, on_result)
        finally:
            # A worker node killed mid-run leaves its judge's container behind (its owner
            # process is dead): remove them, so a Ray run leaves no container either.
            self.verifier.engine.reap_orphans()


def prediction_key(p: Prediction) -> str:
    """A prediction's unit id: task, model and the patch's hash."""
    digest = hashlib.sha256(p.model_patch.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{p.instance_id}|{p.model_name_or_path}|{digest}"


@dataclass
class _Batch:
    verifier: Verifier
    tasks: dict[str, TaskManifest]
    config: Config
    reporter: Reporter
    jobs: int
    grader: _Grader

    def run(
        self,
        preds: list[Prediction],
        out_dir: Path,
        run: VerifyRun,
        shard: tuple[int, int],
        force: bool,
        start: float,
    ) -> tuple[VerifyRun, dict[str, Any]]:
        from swe_forge.batch.shard import select
        from swe_forge.batch.state import RunState, atomic_write

        k, n = shard
        mine = select(preds, prediction_key, k, n)
        keys = "\n".join(sorted(prediction_key(p) for p in preds))
        identity = {
            "command": "verify",
            "config_hash": self.config.digest(),
            "shard": f"{k}/{n}",
            "predictions": hashlib.sha256(keys.encode()).hexdigest(),
        }
        state = RunState(out_dir, identity=identity, force=force)
        todo = [p for p in mine if not state.done("verify", prediction_key(p))]
        _provide(self.verifier.engine, self.tasks, todo, self.reporter)
        self.reporter.start("verify", len(todo))

        def one(i: int, result: VerifyResult) -> None:
            p = todo[i]
            if result.status != "infra_error":
                # Infrastructure errors are not recorded: the next run grades them again.
                line = json.dumps(result.to_dict(), sort_keys=True)
                state.save("verify", prediction_key(p), [line])
            self.reporter.note(
                f"{result.instance_id} [{result.model_name_or_path}]: {result.status} "
                f"(reward {result.reward:g})"
            )
            self.reporter.advance()

        self.grader.grade(todo, one)
        self.reporter.finish()
        rows = sorted(
            state.load("verify"), key=lambda r: (r["instance_id"], r["model_name_or_path"])
        )
        run.results = [VerifyResult(**r) for r in rows]
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
        atomic_write(out_dir / "results.jsonl", text)
        run.seconds = time.perf_counter() - start
        report = run.report(self.tasks)
        report["not_graded"] = len(mine) - len(rows)
        atomic_write(out_dir / "report.json", json.dumps(report, indent=2, sort_keys=True) + "\n")
        return run, report
