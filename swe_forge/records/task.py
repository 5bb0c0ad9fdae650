"""Task manifests, rejections and verify results, and every record class by its type."""

from __future__ import annotations

import json
from dataclasses import asdict, field
from typing import Annotated, Any, Final, Literal

from pydantic.dataclasses import dataclass

from swe_forge.records.base import (
    RECORD_CONFIG,
    REJECTION_SCHEMA_VERSION,
    Fields,
    Pairs,
    dump_line,
    validate,
)
from swe_forge.records.candidate import Candidate
from swe_forge.records.images import RegistryPins

TASK_SCHEMA_VERSION: Final = 2
#: Task manifest versions this swe-forge reads (1: before the ``environment`` block).
TASK_SCHEMA_VERSIONS: Final = (1, 2)
#: Fields of a task manifest (dotted: inside a block) that must never reach the policy being
#: trained or evaluated: the fix, the held-out tests and their names, the gates' per-test
#: outcomes, the audit (it quotes the PR's own text and the tests), and what names the PR
#: upstream (with them the fix is one web search away).
HIDDEN_FROM_POLICY: Final = (
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "harness",
    "gates",
    "audit",
    "provenance.merge_commit",
    "provenance.pr_number",
    "provenance.linked_issues",
)

#: SWE-bench's instance fields, in its order (for --format swebench).
SWEBENCH_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "environment_setup_commit",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)


@dataclass(config=RECORD_CONFIG)
class TaskManifest:
    """An admitted task: a SWE-bench instance plus everything the verifier needs.

    ``image``: the pinned instance image (id and tag), its env and base, the Python version
    and the lock; after ``images push``, ``image.registry`` (:class:`RegistryPins`) says
    where they can be pulled from by digest. ``harness``: the runner, the test files, the
    command, and sha256 of the test patch, the gold patch and the harness plugin. ``gates``:
    the seeds, per-run outcomes and durations. ``audit``: sufficiency flags and the image
    audit.
    """

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    hints_text: str
    created_at: str
    version: str
    environment_setup_commit: str
    FAIL_TO_PASS: list[str]
    """Tests that fail in every gate run before the fix and pass in every run after it."""
    PASS_TO_PASS: list[str]
    """Tests that pass in every gate run, before and after."""
    image: dict[str, Any]
    """The pinned instance image: id, tag, env, base, python, lock and recipe digests."""
    harness: dict[str, Any]
    """The runner, test files, command, and sha256 of test patch, gold patch and harness."""
    gates: dict[str, Any]
    """Seeds, scope, evidence and the per-run outcomes and durations of the gates."""
    license: dict[str, Any]
    """The candidate's licence verdict."""
    provenance: dict[str, Any]
    """The candidate's provenance, and the swe-forge version that admitted it."""
    audit: dict[str, Any]
    """Sufficiency flags, capabilities, the image audit and the test strength (mutants of the
    gold fix the tests kill: ``test_strength``)."""
    environment: dict[str, Any] = field(default_factory=dict)
    """What an RL trainer needs to run the task alone: the image, platform, work dir, user,
    PATH, the entrypoint and the command that resets the work tree, network (none), CPU,
    memory and pids limits, the verify timeouts, and ``hidden_from_policy`` (the fields the
    policy must never see). Empty in version 1 manifests."""
    schema_version: Literal[1, 2] = TASK_SCHEMA_VERSION
    record_type: Literal["task"] = "task"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def to_json(self) -> str:
        """One deterministic JSON line."""
        return dump_line(self.to_dict())

    def registry_pins(self) -> RegistryPins | None:
        """The ``image.registry`` block, typed (None when the images were never pushed).

        Raises:
            ValueError: the block is malformed (not pinned by digest, unknown version).
        """
        data = self.image.get("registry")
        return RegistryPins.from_dict(data) if data else None

    def image_reference(self) -> str:
        """The instance image as another machine can get it: the reference pinned by digest
        when it was pushed, else the local image id."""
        pins = self.registry_pins()
        pin = pins.instance if pins else None
        return pin.reference if pin else str(self.image.get("id") or "")

    def test_strength(self) -> float | None:
        """The score of ``audit.test_strength``: the share of the gold fix's graded mutants
        the task's tests kill (None when unmeasured: no block, or nothing killed or
        survived)."""
        block = self.audit.get("test_strength")
        score = block.get("score") if isinstance(block, dict) else None
        if isinstance(score, bool) or not isinstance(score, int | float):
            return None
        return float(score)

    def to_swebench(self) -> dict[str, Any]:
        """SWE-bench's exact encoding: its fields only, F2P and P2P as JSON strings."""
        data = {k: getattr(self, k) for k in SWEBENCH_FIELDS}
        data["FAIL_TO_PASS"] = json.dumps(self.FAIL_TO_PASS)
        data["PASS_TO_PASS"] = json.dumps(self.PASS_TO_PASS)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskManifest:
        """Read a manifest (our format; SWE-bench's JSON-string lists are accepted too)."""
        if data.get("record_type", "task") != "task":
            raise ValueError(f"not a task record: {data.get('record_type')!r}")
        if data.get("schema_version", TASK_SCHEMA_VERSION) not in TASK_SCHEMA_VERSIONS:
            raise ValueError(f"unsupported task schema_version {data.get('schema_version')}")
        fields = dict(data)
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            if isinstance(fields.get(key), str):
                fields[key] = json.loads(fields[key])
        task: TaskManifest = validate(cls, fields)
        named = task.environment.get("image") if isinstance(task.environment, dict) else None
        if named and named != task.image.get("id"):
            # Admission writes the same id in both: a trainer runs environment.image and the
            # verifier grades image.id, so an edited one would grade another image silently.
            raise ValueError(
                f"environment.image {named!r} is not the pinned image.id "
                f"{task.image.get('id')!r} (an edited manifest)"
            )
        return task


@dataclass(frozen=True, config=RECORD_CONFIG)
class Rejection:
    """Why a PR (or a whole repository, when ``pr_number`` is None) did not become a record.

    ``stage`` names the pipeline stage that rejected it; ``reason`` is one machine-readable
    code (a :class:`Reason` value for ``mine``); ``detail`` is for humans.
    """

    stage: str
    """The stage that rejected it: mine or admit."""
    repo: str
    reason: str
    """One machine-readable code."""
    detail: str
    """For humans."""
    instance_id: str | None = None
    """None for a repository-level rejection."""
    pr_number: int | None = None
    commit: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form evidence of the stage that rejected it."""
    schema_version: Literal[1] = REJECTION_SCHEMA_VERSION
    record_type: Literal["rejection"] = "rejection"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def to_json(self) -> str:
        """One deterministic JSON line (without the newline)."""
        return dump_line(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rejection:
        """Build a rejection from its JSON form (its version and type are this class's, as
        they always were: a rejection's fields have not changed)."""
        fields = {k: v for k, v in data.items() if k not in ("schema_version", "record_type")}
        return validate(cls, fields)


RESULT_SCHEMA_VERSION: Final = 3


@dataclass(config=RECORD_CONFIG)
class VerifyResult:
    """The grade of one prediction (``swe-forge verify``)."""

    instance_id: str
    model_name_or_path: str
    status: str
    """resolved, unresolved, invalid_patch, apply_failed, timeout, resource_limit,
    tamper_detected or infra_error."""
    reward: float
    """1.0 when resolved, else 0.0."""
    violations: list[Annotated[dict[str, str], Fields("code", "detail")]] = field(
        default_factory=list
    )
    """Why the patch was refused or the run judged tampered: a code and a detail each."""
    tests: Annotated[dict[str, str], Pairs("test", "outcome")] = field(default_factory=dict)
    """Every test that ran (canaries excluded): test id -> outcome."""
    fail_to_pass: Annotated[dict[str, str], Pairs("test", "outcome")] = field(default_factory=dict)
    """The task's FAIL_TO_PASS tests: test id -> outcome."""
    pass_to_pass: Annotated[dict[str, str], Pairs("test", "outcome")] = field(default_factory=dict)
    """The task's PASS_TO_PASS tests: test id -> outcome."""
    timings: Annotated[dict[str, float], Pairs("step", "seconds")] = field(default_factory=dict)
    """Seconds by step (guards, container_start, ...)."""
    verifier: dict[str, Any] = field(default_factory=dict)
    """What graded it: versions and digests of the verifier and its harness."""
    detail: str = ""
    attempts: int = 1
    """Runs it took (infrastructure errors are retried)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """What exactly was graded, by what: ``task_sha256`` (the task's JSON line),
    ``image_id`` and ``image_reference``, ``patch_sha256``, ``tool_version``, ``config_hash``
    (the verify settings), ``run_id`` (one per verify run)."""
    log_excerpt: str = ""
    """The end of the test run's output, bounded (4,000 characters), canary names redacted.
    It shows held-out tests: never hand it to the policy being graded."""
    schema_version: int = RESULT_SCHEMA_VERSION
    """3 (results of versions 1 and 2 read as they are)."""
    record_type: Literal["verify_result"] = "verify_result"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def to_json(self) -> str:
        """One deterministic, compact JSON line, like every record's (``verify`` writes its
        results with ``json.dumps(to_dict(), sort_keys=True)``; both read back the same)."""
        return dump_line(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifyResult:
        """Build a result from its JSON form; raises ValueError when malformed."""
        if data.get("record_type", "verify_result") != "verify_result":
            raise ValueError(f"not a verify result: {data.get('record_type')!r}")
        return validate(cls, data)


#: Every record class by its ``record_type``.
RECORD_TYPES: dict[str, type[Candidate | TaskManifest | Rejection | VerifyResult]] = {
    "candidate": Candidate,
    "task": TaskManifest,
    "rejection": Rejection,
    "verify_result": VerifyResult,
}
