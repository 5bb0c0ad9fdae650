"""The mining stage's record: a candidate (licence verdict, provenance, changed files,
statement quality)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Final, Literal

from pydantic.dataclasses import dataclass

from swe_forge.records.base import CANDIDATE_SCHEMA_VERSION, RECORD_CONFIG, dump_line, validate


@dataclass(frozen=True, config=RECORD_CONFIG)
class LicenseEvidence:
    """One signal about a repository's licence at a commit."""

    source: str
    """Where it was read: "file", "pyproject", "setup.cfg", "setup.py", "classifier", "cargo",
    "package.json" or "pom.xml"."""
    path: str
    """The file it was read from."""
    spdx: str
    """The SPDX expression it gives."""
    score: float = 1.0
    """How closely a licence file matched its text (1.0 for metadata)."""
    blob: str = ""
    """The licence file's blob id (files only: metadata evidence is shared between commits
    whose licence lines are equal, so it names no single blob)."""


@dataclass(frozen=True, config=RECORD_CONFIG)
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


@dataclass(frozen=True, config=RECORD_CONFIG)
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


@dataclass(frozen=True, config=RECORD_CONFIG)
class ChangedFiles:
    """The files a PR changes, by where they went in the split."""

    patch_files: tuple[str, ...]
    """In ``patch`` (source, and docs/CI/packaging riding along)."""
    test_files: tuple[str, ...]
    """In ``test_patch``."""
    lines_added: int = 0
    lines_removed: int = 0


STATEMENT_QUALITY_VERSION: Final = 1


@dataclass(frozen=True, config=RECORD_CONFIG)
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


@dataclass(frozen=True, config=RECORD_CONFIG)
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
        return dump_line(self.to_dict())

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
