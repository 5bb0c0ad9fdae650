"""``swe-forge admit``: candidates -> task manifests (+ rejections with one reason each)."""

from __future__ import annotations

import threading
from pathlib import Path

from swe_forge.admission.admitter import Admitter
from swe_forge.admission.output import DecisionLog, default_rejected_path, sort_decisions
from swe_forge.admission.stage import AdmitResult, admit_candidates
from swe_forge.config import Config
from swe_forge.progress import Reporter
from swe_forge.records import read_candidates, read_image_records


def run_admit(
    candidates_path: Path,
    output: Path,
    *,
    config: Config,
    rejected: Path | None = None,
    images_path: Path | None = None,
    only: list[str] | None = None,
    swebench_format: bool = False,
    audit_images: bool = True,
    reporter: Reporter | None = None,
    restart: bool = False,
    jobs: int = 1,
) -> AdmitResult:
    """Admit every candidate of a file not yet decided in ``output``/``rejected``.

    Each task and each rejection is appended to its file as soon as it is decided (rejections
    go beside the tasks when ``rejected`` is not given); an interrupted run started again
    does only the candidates left. ``restart`` empties both files first.
    """
    candidates = read_candidates(candidates_path, only or ())
    images = read_image_records(images_path) if images_path else {}
    admitter = Admitter(
        config,
        audit_images=audit_images,
        reporter=reporter,
        # Several candidates at once: builds one at a time (disk and CPU heavy), test runs
        # as many as there are jobs.
        build_slots=threading.Semaphore(1) if jobs > 1 else None,
        test_slots=threading.Semaphore(jobs) if jobs > 1 else None,
    )
    rejected_path = rejected or default_rejected_path(output)
    try:
        with DecisionLog(
            output, rejected_path, swebench_format=swebench_format, restart=restart
        ) as log:
            return admit_candidates(
                candidates, admitter, log, images=images, reporter=reporter, jobs=jobs
            )
    finally:
        if jobs > 1:
            order = [c.instance_id for c in candidates]
            sort_decisions(output, order)
            sort_decisions(rejected_path, order)
