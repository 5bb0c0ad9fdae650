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

One module per stage's records: :mod:`.base` (table markers, validation, mining's
rejection reasons), :mod:`.candidate`, :mod:`.images` (registry pins), :mod:`.task`
(manifests, rejections, verify results) and :mod:`.read` (reading them back); every name is
imported from here.
"""

from __future__ import annotations

from swe_forge.records.base import (
    CANDIDATE_SCHEMA_VERSION,
    RECORD_CONFIG,
    REJECTION_SCHEMA_VERSION,
    Fields,
    Pairs,
    Reason,
    adapter,
    dump_line,
    validate,
)
from swe_forge.records.candidate import (
    STATEMENT_QUALITY_VERSION,
    Candidate,
    ChangedFiles,
    LicenseEvidence,
    LicenseVerdict,
    Provenance,
    StatementQuality,
)
from swe_forge.records.images import (
    IMAGE_KINDS,
    IMAGE_RECORD_SCHEMA_VERSION,
    REGISTRY_PINS_VERSION,
    ImagePin,
    ImageRecord,
    RegistryPins,
)
from swe_forge.records.read import (
    Record,
    read_candidates,
    read_image_records,
    read_records,
    read_task_manifests,
)
from swe_forge.records.task import (
    HIDDEN_FROM_POLICY,
    RECORD_TYPES,
    RESULT_SCHEMA_VERSION,
    SWEBENCH_FIELDS,
    TASK_SCHEMA_VERSION,
    TASK_SCHEMA_VERSIONS,
    Rejection,
    TaskManifest,
    VerifyResult,
)

__all__ = [
    "CANDIDATE_SCHEMA_VERSION",
    "HIDDEN_FROM_POLICY",
    "IMAGE_KINDS",
    "IMAGE_RECORD_SCHEMA_VERSION",
    "RECORD_CONFIG",
    "RECORD_TYPES",
    "REGISTRY_PINS_VERSION",
    "REJECTION_SCHEMA_VERSION",
    "RESULT_SCHEMA_VERSION",
    "STATEMENT_QUALITY_VERSION",
    "SWEBENCH_FIELDS",
    "TASK_SCHEMA_VERSION",
    "TASK_SCHEMA_VERSIONS",
    "Candidate",
    "ChangedFiles",
    "Fields",
    "ImagePin",
    "ImageRecord",
    "LicenseEvidence",
    "LicenseVerdict",
    "Pairs",
    "Provenance",
    "Reason",
    "Record",
    "RegistryPins",
    "Rejection",
    "StatementQuality",
    "TaskManifest",
    "VerifyResult",
    "adapter",
    "dump_line",
    "read_candidates",
    "read_image_records",
    "read_records",
    "read_task_manifests",
    "validate",
]
