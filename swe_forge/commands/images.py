"""``swe-forge images base | build | ls | audit | prune | push | pull | export | import``."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge.config import Config, load_repo_overrides
from swe_forge.engine import LABEL_PREFIX, Engine, ImageInfo
from swe_forge.errors import InputError, SweForgeError, UsageError
from swe_forge.git.repo import GitRepository
from swe_forge.images.archive import ArchivedImage
from swe_forge.images.audit import AuditReport, audit_image, file_index
from swe_forge.images.base import BaseImage, BaseRecipe, ensure_base
from swe_forge.images.build import ImageBuilder, cache_root
from swe_forge.images.registry import (
    Provided,
    PushResult,
    Registry,
    export_images,
    import_images,
    needs_of_record,
    needs_of_task,
    provide,
    push_images,
)
from swe_forge.jsonl import AtomicWriter, read_jsonl
from swe_forge.mining.sources import RepoSource, materialize
from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import (
    Candidate,
    ImageRecord,
    TaskManifest,
    read_candidates,
    read_image_records,
)


def run_base(
    config: Config, distros: list[str], reporter: Reporter | None = None
) -> list[BaseImage]:
    """Build (or find) the base images of the given distributions."""
    engine = Engine()
    out = []
    work = cache_root(config) / "build"
    for distro in distros or list(config.images.distros):
        recipe = BaseRecipe.for_distro(distro)
        (reporter or NullReporter()).note(f"base {distro} (Python {recipe.python}): {recipe.tag}")
        out.append(
            ensure_base(
                engine,
                recipe,
                mirror=config.images.debian_mirror,
                work_dir=work,
                override=config.images.base_overrides.get(recipe.python),
                log_dir=cache_root(config) / "logs",
            )
        )
    return out


@dataclass
class BuildResult:
    """Per-candidate image records of a build run."""

    records: list[ImageRecord] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[ImageRecord]:
        """Records of candidates whose images could not be built."""
        return [r for r in self.records if r.status != "ok"]

    def summary(self) -> dict[str, Any]:
        """Counts, failure reasons, shared env images, and timings."""
        ok = [r for r in self.records if r.status == "ok"]
        reasons: dict[str, int] = {}
        for r in self.failed:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        return {
            "candidates": len(self.records),
            "built": len(ok),
            "failed": len(self.failed),
            "failure_reasons": dict(sorted(reasons.items())),
            "env_images": len({r.env_image for r in ok}),
            "seconds": round(self.seconds, 2),
        }


class _Heartbeat:
    """Says where a long image build is, at most every ``every`` seconds: the candidate, the
    time since it began, the image and the Dockerfile step (a build can take minutes)."""

    def __init__(self, reporter: Reporter, every: float = 20.0) -> None:
        self.reporter, self.every = reporter, every
        self.instance, self.since, self.said = "", 0.0, 0.0

    def begin(self, instance: str) -> None:
        """A new candidate's build starts."""
        self.instance, self.since = instance, time.monotonic()
        self.said = self.since

    def step(self, tag: str, line: str) -> None:
        """The engine started a Dockerfile step of ``tag``."""
        now = time.monotonic()
        if now - self.said >= self.every:
            self.said = now
            took = now - self.since
            self.reporter.note(f"{self.instance}: {took:.0f} s, building {tag}: {line[:100]}")


def run_build(
    candidates_path: Path,
    output: Path,
    *,
    config: Config,
    only: list[str] | None = None,
    reporter: Reporter | None = None,
) -> BuildResult:
    """Build base, env and instance images for every candidate; write one record each."""
    start = time.perf_counter()
    reporter = reporter or NullReporter()
    candidates = read_candidates(candidates_path, only or ())
    engine = Engine()
    builder = ImageBuilder(
        config, engine, overrides=load_repo_overrides(Path(config.images.repos_file))
    )
    result = BuildResult()
    out = AtomicWriter(output)
    heartbeat = _Heartbeat(reporter)
    engine.on_build_step = heartbeat.step
    try:
        reporter.start("images", len(candidates))
        for cand in candidates:
            heartbeat.begin(cand.instance_id)
            rec = builder.build(cand)
            result.records.append(rec)
            out.write(json.dumps(rec.to_dict(), sort_keys=True))
            status = (
                "ok" if rec.status == "ok" else f"{rec.reason}: {rec.detail.splitlines()[0][:120]}"
            )
            reporter.note(f"{cand.instance_id}: {status}")
            reporter.advance()
        reporter.finish()
    except BaseException:
        out.abort()
        raise
    out.commit()
    result.seconds = time.perf_counter() - start
    return result


def list_images(engine: Engine | None = None) -> list[ImageInfo]:
    """Every image swe-forge made (base, env, instance), sorted."""
    return (engine or Engine()).images()


def run_audit(
    candidates_path: Path,
    images_path: Path | None,
    *,
    image: str | None = None,
    only: list[str] | None = None,
    reporter: Reporter | None = None,
) -> list[AuditReport]:
    """Audit the instance image of each candidate (from an images file, or one given image)."""
    reporter = reporter or NullReporter()
    candidates = read_candidates(candidates_path, only or ())
    if image is not None and len(candidates) != 1:
        raise UsageError("--image audits one candidate: name it with --instance")
    records = read_image_records(images_path) if images_path else {}
    engine = Engine()
    reports = []
    base_files: dict[str, dict[str, tuple[int, int]]] = {}
    repos: dict[str, GitRepository] = {}
    for cand in candidates:
        rec = records.get(cand.instance_id)
        ref = image or (rec.instance_image if rec and rec.status == "ok" else None)
        if ref is None:
            reporter.note(f"{cand.instance_id}: no instance image to audit")
            continue
        if rec and rec.base_image and rec.base_image not in base_files:
            base_files[rec.base_image] = file_index(engine, rec.base_image)
        base_tree, base_lines = _base_facts(cand, repos)
        report = audit_image(
            engine,
            ref,
            instance_id=cand.instance_id,
            test_patch=cand.test_patch,
            project_name=rec.project_name if rec else None,
            base_tree=base_tree,
            base_lines=base_lines,
            unchanged=base_files.get(rec.base_image, {}) if rec else {},
        )
        reports.append(report)
        verdict = (
            "passed"
            if report.passed
            else "FAILED: " + "; ".join(f["detail"] for f in report.findings)
        )
        reporter.note(f"{cand.instance_id}: audit {verdict}")
    return reports


def _base_facts(
    cand: Candidate, repos: dict[str, GitRepository]
) -> tuple[str | None, set[bytes] | None]:
    """The base tree id and its lines, from the source repository when it is at hand."""
    src = cand.provenance.source
    try:
        if src not in repos:
            repos[src] = GitRepository(materialize(RepoSource(src), offline=True))
        repo = repos[src]
        return repo.commit(cand.base_commit).tree, repo.text_lines(cand.base_commit)
    except SweForgeError:
        return None, None


def run_prune(*, keep: Path | None, everything: bool, dry_run: bool) -> list[ImageInfo]:
    """Remove swe-forge images: instance and env images not referenced by ``keep``.

    ``everything`` also removes base images (they take a minute to bootstrap again).
    """
    engine = Engine()
    keep_refs: set[str] = set()
    if keep is not None:
        for rec in read_image_records(keep).values():
            keep_refs |= {rec.instance_image, rec.env_image, rec.base_image}
    victims = []
    order = {"instance": 0, "env": 1, "base": 2}
    for info in sorted(
        engine.images(), key=lambda i: order.get(i.labels.get(f"{LABEL_PREFIX}.kind", ""), 3)
    ):
        kind = info.labels.get(f"{LABEL_PREFIX}.kind", "")
        if kind == "base" and not everything:
            continue
        if set(info.tags) & keep_refs:
            continue
        victims.append(info)
        if not dry_run:
            engine.remove_image(info.id, force=True)
    # Untagged leftovers: build stages (with their wheels) and layers of failed builds.
    for info in engine.images(dangling=True):
        victims.append(info)
        if not dry_run:
            engine.remove_image(info.id, force=True)
    return victims


def run_push(
    path: Path,
    registry: str,
    *,
    output: Path | None = None,
    only: list[str] | None = None,
    reporter: Reporter | None = None,
) -> PushResult:
    """Push the images an images or tasks file names; write it (in place by default) with
    each record's images pinned by digest."""
    return push_images(
        Engine(),
        path,
        Registry.parse(registry),
        output or path,
        only=only or (),
        reporter=reporter,
    )


def run_pull(
    path: Path, *, only: list[str] | None = None, reporter: Reporter | None = None
) -> Provided:
    """Make the images an images or tasks file pins present here, pulled by digest: every
    image of an image record (what ``admit`` uses), the instance image of a task (what
    ``verify`` runs)."""
    wanted = set(only or ())
    needs = []
    for lineno, data in enumerate(read_jsonl(path), 1):
        if wanted and data.get("instance_id") not in wanted:
            continue
        try:
            if data.get("record_type") == "images":
                needs += needs_of_record(ImageRecord.from_dict(data))
            elif data.get("record_type", "task") == "task" and isinstance(data.get("image"), dict):
                needs += needs_of_task(TaskManifest.from_dict(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a record with images ({exc})") from exc
    if not needs:
        raise InputError(
            f"{path} names no image" + (" of the given --instance" if wanted else ""),
            hint="give an images.jsonl or a tasks.jsonl (swe-forge format)",
        )
    return provide(Engine(), needs, reporter)


def run_export(
    path: Path, dest: Path, *, only: list[str] | None = None, reporter: Reporter | None = None
) -> list[ArchivedImage]:
    """Write the images an images or tasks file names into one OCI archive."""
    return export_images(Engine(), path, dest, only=only or (), reporter=reporter)


def run_import(archive: Path, *, reporter: Reporter | None = None) -> list[ArchivedImage]:
    """Load an archive from ``images export`` (or ``docker save``) and check the ids."""
    if not archive.is_file():
        raise InputError(f"no such file: {archive}")
    return import_images(Engine(), archive, reporter=reporter)
