"""Typed, versioned records exchanged between stages.

Every record serialises to one JSON object per line with a ``schema_version`` and a
``record_type``. Field names follow SWE-bench where the meaning is the same (``instance_id``,
``repo``, ``base_commit``, ``patch``, ``test_patch``, ``problem_statement``, ``hints_text``,
``created_at``, ``version``, ``environment_setup_commit``); our own data lives in nested blocks
(``license``, ``provenance``, ``files``). Serialisation is deterministic: sorted keys, no
wall-clock times, so the same inputs give byte-identical files.

Each record is defined once, as a pydantic dataclass: the class validates what it is built
from (``from_dict`` is the model's own validation, plus the few compatibility rules written
below), and the published JSON Schema (``schemas/*.schema.json``, ``swe-forge schema``) and
the parquet columns (``swe_forge.parquet``) are derived from it. They stay dataclasses, so
positional construction, ``dataclasses.replace`` and ``asdict`` work as before, and
``to_dict`` is ``asdict``: the JSON written for a record is byte for byte what it was when
these were plain dataclasses. Two markers (:class:`Pairs`, :class:`Fields`) say how a field
that is a ``dict`` is laid out in a table; they change nothing in the JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from swe_forge.errors import InputError, UsageError
from swe_forge.jsonl import read_jsonl

if TYPE_CHECKING:
    from swe_forge.images.build import ImageRecord

CANDIDATE_SCHEMA_VERSION: Final = 1
REJECTION_SCHEMA_VERSION: Final = 1

#: Every record class reads its fields' docstrings into its JSON Schema, and writes every
#: field (a field with a default is still written: the schema marks it required).
_CONFIG = ConfigDict(
    use_attribute_docstrings=True, json_schema_serialization_defaults_required=True
)


class Pairs:
    """Marks a ``dict[str, V]`` field that a table stores as a list of ``{key, value}``
    structs with these names (e.g. ``{test, outcome}``): the keys are data (test ids), not
    column names, so a map of them cannot be a struct, and a list keeps its order."""

    def __init__(self, key: str, value: str) -> None:
        self.key = key
        self.value = value

    def __repr__(self) -> str:
        return f"Pairs({self.key!r}, {self.value!r})"


class Fields:
    """Marks a ``dict[str, str]`` whose keys are exactly these names: a table stores it as a
    struct of string fields (a dict with other keys cannot be stored, and says so)."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def __repr__(self) -> str:
        return f"Fields{self.names!r}"


_R = TypeVar("_R")
_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def adapter(cls: type[_R]) -> TypeAdapter[_R]:
    """The (cached) pydantic adapter of a record class: validation and JSON Schema."""
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


def validate(cls: type[_R], data: dict[str, Any]) -> _R:
    """Build a record of ``cls`` from plain data with the model's validation.

    Keys the model does not know are ignored (a newer writer's additions).

    Raises:
        ValueError: a field is missing or has the wrong type; one line naming each field.
    """
    try:
        return adapter(cls).validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or cls.__name__}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ValueError(problems) from None


class Reason(StrEnum):
    """Machine-readable rejection reasons of the mining stage.

    One reason per rejection; the first check that fails names it. Checks run in this order:
    repository-level (blocklist, licence), then per PR: blocklisted PR, diff readable, file
    kinds, size caps, problem statement, split round-trip.
    """

    BLOCKLISTED_REPO = "blocklisted_repo"
    BLOCKLISTED_PR = "blocklisted_pr"
    LICENSE_NOT_PERMISSIVE = "license_not_permissive"
    LICENSE_UNKNOWN = "license_unknown"
    LICENSE_UNREADABLE = "license_unreadable"
    EMPTY_DIFF = "empty_diff"
    BINARY_CHANGE = "binary_change"
    SYMLINK_CHANGE = "symlink_change"
    SUBMODULE_CHANGE = "submodule_change"
    NON_UTF8_DIFF = "non_utf8_diff"
    DIFF_UNPARSEABLE = "diff_unparseable"
    NO_CODE_CHANGE = "no_code_change"
    TEST_ONLY = "test_only"
    NO_TEST_CHANGE = "no_test_change"
    TOO_MANY_FILES = "too_many_files"
    TOO_MANY_LINES = "too_many_lines"
    EMPTY_PROBLEM_STATEMENT = "empty_problem_statement"
    SPLIT_MISMATCH = "split_mismatch"
    NO_TEST_MODULE = "no_test_module"
    DUPLICATE_PR = "duplicate_pr"
    REPOSITORY_ERROR = "repository_error"


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, config=_CONFIG)
class LicenseEvidence:
    """One signal about a repository's licence at a commit."""

    source: str
    """Where it was read: "file", "pyproject", "setup.cfg", "setup.py" or "classifier"."""
    path: str
    """The file it was read from."""
    spdx: str
    """The SPDX expression it gives."""
    score: float = 1.0
    """How closely a licence file matched its text (1.0 for metadata)."""
    blob: str = ""
    """The licence file's blob id (files only: metadata evidence is shared between commits
    whose licence lines are equal, so it names no single blob)."""


@dataclass(frozen=True, config=_CONFIG)
class LicenseVerdict:
    """The licence of a repository at one commit, and whether policy allows it."""

    expression: str
    """SPDX expression, or "" when unknown."""
    allowed: bool
    """Whether the licence policy (configs/licenses.yaml) allows it."""
    reason: str
    """"" when allowed, else a rejection reason (license_not_permissive, ...)."""
    detail: str
    """For humans."""
    evidence: tuple[LicenseEvidence, ...] = ()
    """What the expression was read from."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LicenseVerdict:
        """Inverse of :meth:`to_dict`; raises ValueError when malformed."""
        return validate(cls, data)


@dataclass(frozen=True, config=_CONFIG)
class Provenance:
    """Where a candidate came from and what produced it."""

    source: str
    """The absolute path or the clone URL the repository was mined from."""
    pr_number: int
    merge_commit: str
    merge_kind: str
    """"merge" or "squash"."""
    default_branch: str
    problem_statement_source: str
    """"commit_message", "github_issue" or "github_pr"."""
    linked_issues: tuple[int, ...] = ()
    tool_version: str = ""
    """The swe-forge version that mined it."""
    config_hash: str = ""
    """sha256 of the configuration it was mined with."""
    policy_hash: str = ""
    """sha256 of the licence policy and blocklists it was mined with."""


@dataclass(frozen=True, config=_CONFIG)
class ChangedFiles:
    """The files a PR changes, by where they went in the split."""

    patch_files: tuple[str, ...]
    """In ``patch`` (source, and docs/CI/packaging riding along)."""
    test_files: tuple[str, ...]
    """In ``test_patch``."""
    lines_added: int = 0
    lines_removed: int = 0


STATEMENT_QUALITY_VERSION: Final = 1


@dataclass(frozen=True, config=_CONFIG)
class StatementQuality:
    """How much the problem statement tells an agent (``swe_forge.mining.statement``).

    Added to candidate records of schema 1 as an optional block (``statement_quality``) with
    its own ``version``: readers that do not know it ignore it, and a record without it (made
    by an older swe-forge) reads as None. ``score`` is 0..1 (formula in
    ``swe_forge/mining/statement.py``); ``flags`` are sorted names (``thin``, ``revert``,
    ``commit_sha``, ``cross_reference``, ``exact_string``), ``evidence`` says what raised
    them; ``cleaned`` is true when cleaning removed tool noise from the PR's text;
    ``generated`` is true when the statement was written from test failures, not by a person.
    """

    score: float
    """0..1: how much the statement tells (it ranks; it rejects nothing)."""
    flags: tuple[str, ...] = ()
    """Sorted: thin, revert, commit_sha, cross_reference, exact_string."""
    evidence: tuple[str, ...] = ()
    """What raised the flags."""
    words: int = 0
    cleaned: bool = False
    """Cleaning removed tool noise from the PR's text."""
    generated: bool = False
    """Written from test failures, not by a person."""
    version: Literal[1] = STATEMENT_QUALITY_VERSION
    """This block's own version."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StatementQuality:
        """Inverse of ``asdict``; refuses a version this swe-forge does not know."""
        version = data.get("version", STATEMENT_QUALITY_VERSION)
        if version != STATEMENT_QUALITY_VERSION:
            raise ValueError(f"unsupported statement_quality version {version}")
        return validate(cls, data)


@dataclass(frozen=True, config=_CONFIG)
class Candidate:
    """A merged PR split into a gold patch and a held-out test patch.

    The SWE-bench fields come first; ``license``, ``provenance``, ``files`` and
    ``statement_quality`` are ours.
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
    license: LicenseVerdict
    provenance: Provenance
    files: ChangedFiles
    statement_quality: StatementQuality | None = None
    """None in records made before it existed."""
    schema_version: Literal[1] = CANDIDATE_SCHEMA_VERSION
    record_type: Literal["candidate"] = "candidate"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)

    def to_json(self) -> str:
        """One deterministic JSON line (without the newline)."""
        return _dump(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        """Build a candidate from its JSON form; raises KeyError/TypeError when malformed."""
        if data.get("record_type", "candidate") != "candidate":
            raise ValueError(f"not a candidate record: {data.get('record_type')!r}")
        version = data.get("schema_version", CANDIDATE_SCHEMA_VERSION)
        if version != CANDIDATE_SCHEMA_VERSION:
            raise ValueError(f"unsupported candidate schema_version {version}")
        quality = data.get("statement_quality")
        if quality is not None and quality.get("version", STATEMENT_QUALITY_VERSION) != (
            STATEMENT_QUALITY_VERSION
        ):
            raise ValueError(f"unsupported statement_quality version {quality.get('version')}")
        return validate(cls, data)


REGISTRY_PINS_VERSION = 1
#: ``host[:port]/path/name@sha256:<64 hex>``: a reference a registry can only answer with one
#: content (the digest is the hash of the image's manifest). The first component must be a
#: registry host (a dot, a port, or localhost): without one the engine would ask Docker Hub.
_PINNED = re.compile(
    r"^(?:localhost(?::[0-9]+)?|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?|[A-Za-z0-9-]+:[0-9]+)"
    r"(?:/[a-z0-9._-]+)+@sha256:[0-9a-f]{64}$"
)
_IMAGE_ID = re.compile(r"^sha256:[0-9a-f]{64}$")
IMAGE_KINDS = ("instance", "env", "base")


@dataclass(frozen=True)
class ImagePin:
    """One image in a registry, pinned by digest.

    ``reference`` is ``registry/ns/name@sha256:<manifest digest>`` (what is pulled); ``id`` is
    the image id a pull must give (the digest of the image's configuration, which names every
    layer's content); ``local`` is the local name it had when it was pushed (given back to it
    after a pull, so that ``images ls``, ``prune`` and the audit find it as if built here).
    """

    reference: str
    id: str
    local: str = ""

    @property
    def digest(self) -> str:
        """The manifest digest (``sha256:...``) of :attr:`reference`."""
        return self.reference.rpartition("@")[2]

    @property
    def repository(self) -> str:
        """:attr:`reference` without its digest (``registry/ns/name``)."""
        return self.reference.rpartition("@")[0]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImagePin:
        """Read a pin; raises ValueError when the reference is not pinned by a digest or the
        id is not an image id."""
        ref, image_id = str(data["reference"]), str(data["id"])
        if not _PINNED.match(ref):
            raise ValueError(f"{ref!r} is not a reference pinned by digest (name@sha256:<hex>)")
        if not _IMAGE_ID.match(image_id):
            raise ValueError(f"{image_id!r} is not an image id (sha256:<hex>)")
        return cls(reference=ref, id=image_id, local=str(data.get("local") or ""))


@dataclass(frozen=True)
class RegistryPins:
    """Where a task's images live in a registry (``swe-forge images push``).

    An optional block with its own ``version`` (``image.registry`` of a task manifest,
    ``registry`` of an image record): a reader that does not know it ignores it, and a record
    written before it existed reads as None. ``registry`` is the ``HOST[:PORT]/NAMESPACE`` the
    images went to; ``images`` maps a kind (instance, env, base) to its pin.
    """

    registry: str
    images: dict[str, ImagePin]
    version: int = REGISTRY_PINS_VERSION

    @property
    def instance(self) -> ImagePin | None:
        """The pin of the instance image (the one the verifier runs)."""
        return self.images.get("instance")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (kinds in a fixed order)."""
        return {
            "version": self.version,
            "registry": self.registry,
            "images": {k: asdict(self.images[k]) for k in sorted(self.images)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegistryPins:
        """Inverse of :meth:`to_dict`; refuses a version this swe-forge does not know, an
        unknown kind, and a reference that is not pinned by digest (ValueError)."""
        version = data.get("version", REGISTRY_PINS_VERSION)
        if version != REGISTRY_PINS_VERSION:
            raise ValueError(f"unsupported registry pins version {version}")
        images = {}
        for kind, pin in dict(data.get("images") or {}).items():
            if kind not in IMAGE_KINDS:
                raise ValueError(f"unknown image kind {kind!r} in registry pins")
            images[kind] = ImagePin.from_dict(pin)
        return cls(registry=str(data["registry"]), images=images)


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


@dataclass(config=_CONFIG)
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
    """Sufficiency flags, capabilities and the image audit."""
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
        return _dump(self.to_dict())

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
        return validate(cls, fields)


@dataclass(frozen=True, config=_CONFIG)
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
        return _dump(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rejection:
        """Build a rejection from its JSON form (its version and type are this class's, as
        they always were: a rejection's fields have not changed)."""
        fields = {k: v for k, v in data.items() if k not in ("schema_version", "record_type")}
        return validate(cls, fields)


RESULT_SCHEMA_VERSION: Final = 3


@dataclass(config=_CONFIG)
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
        return _dump(self.to_dict())

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


def read_candidates(path: Path, only: Iterable[str] = ()) -> list[Candidate]:
    """Candidate records of a JSON Lines file (rejections are skipped), optionally filtered.

    Raises:
        InputError: the file is missing, a line is not a candidate, or an id of ``only`` is
            not in the file.
    """
    wanted = set(only)
    out = []
    for lineno, data in enumerate(read_jsonl(path), 1):
        if data.get("record_type", "candidate") != "candidate":
            continue
        try:
            cand = Candidate.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a candidate record ({exc})") from exc
        if not wanted or cand.instance_id in wanted:
            out.append(cand)
    if wanted:
        missing = wanted - {c.instance_id for c in out}
        if missing:
            raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return out


def read_task_manifests(path: Path, only: Iterable[str] = ()) -> list[TaskManifest]:
    """Task manifests of a JSON Lines file (``admit``'s full format), in file order,
    optionally filtered.

    Raises:
        InputError: the file is missing or holds no task, a line is not a full manifest (a
            ``--format swebench`` row is not: it has no image, harness or gates blocks), an
            instance id is there twice, or an id of ``only`` is not in the file.
    """
    wanted = set(only)
    out: list[TaskManifest] = []
    seen: set[str] = set()
    for lineno, data in enumerate(read_jsonl(path), 1):
        try:
            task = TaskManifest.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{path}:{lineno}: not a task manifest ({exc})",
                hint="give the tasks file `swe-forge admit` writes without --format swebench",
            ) from exc
        if task.instance_id in seen:
            raise InputError(f"{path}:{lineno}: {task.instance_id} is in the file twice")
        seen.add(task.instance_id)
        if not wanted or task.instance_id in wanted:
            out.append(task)
    if not seen:
        raise InputError(f"no tasks in {path}")
    if wanted:
        missing = wanted - seen
        if missing:
            raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return out


Record = Candidate | TaskManifest | Rejection | VerifyResult


def read_records(
    path: Path, record_type: str | None = None, only: Iterable[str] = ()
) -> tuple[str, list[Record]]:
    """The records of one type in a JSON Lines file, in file order: ``(type, records)``.

    ``record_type`` picks one type from a file that holds several (else the file must hold
    one); ``only`` keeps the records of these instance ids.

    Raises:
        UsageError: an unknown ``record_type``, or several types in the file and none picked.
        InputError: the file is missing or holds no record of the type, a line is not a
            record of ours (a ``--format swebench`` row has no ``record_type``), or an id of
            ``only`` is not in the file.
    """
    if record_type is not None and record_type not in RECORD_TYPES:
        raise UsageError(
            f"unknown record type {record_type!r}", hint=f"use one of: {', '.join(RECORD_TYPES)}"
        )
    found: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = data.get("record_type")
        if kind not in RECORD_TYPES:
            raise InputError(
                f"{path}:{lineno}: not a candidate, task, rejection or verify result "
                f"(record_type {kind!r})",
                hint="give a file that mine, admit (without --format swebench) or verify wrote",
            )
        found.setdefault(str(kind), []).append((lineno, data))
    if record_type is None:
        if len(found) > 1:
            raise UsageError(
                f"{path} holds records of several types: {', '.join(sorted(found))}",
                hint="pick one with --records TYPE",
            )
        if not found:
            raise InputError(f"no records in {path}")
        record_type = next(iter(found))
    cls = RECORD_TYPES[record_type]
    wanted = set(only)
    out: list[Record] = []
    for lineno, data in found.get(record_type, []):
        try:
            record = cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a {record_type} record ({exc})") from exc
        if not wanted or getattr(record, "instance_id", None) in wanted:
            out.append(record)
    if not out and not wanted:
        raise InputError(f"no {record_type} records in {path}")
    missing = wanted - {getattr(r, "instance_id", None) for r in out}
    if missing:
        raise InputError(f"not in {path}: {', '.join(sorted(missing))}")
    return record_type, out


def read_image_records(path: Path) -> dict[str, ImageRecord]:
    """instance_id -> image record, from an ``images build`` output."""
    # The record type belongs to the images stage; imported here, late, so that reading
    # candidates does not load the image builder.
    from swe_forge.images.build import ImageRecord

    out = {}
    for lineno, data in enumerate(read_jsonl(path), 1):
        if data.get("record_type") == "images":
            try:
                rec = ImageRecord.from_dict(data)
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(f"{path}:{lineno}: not an image record ({exc})") from exc
            out[rec.instance_id] = rec
    return out
