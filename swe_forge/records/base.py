"""Record building blocks: table markers, validation, mining's rejection reasons, JSON lines."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Final, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

CANDIDATE_SCHEMA_VERSION: Final = 1
REJECTION_SCHEMA_VERSION: Final = 1

#: Every record class reads its fields' docstrings into its JSON Schema, and writes every
#: field (a field with a default is still written: the schema marks it required).
RECORD_CONFIG = ConfigDict(
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


def dump_line(data: dict[str, Any]) -> str:
    """One record as a JSONL line: UTF-8 text, or ASCII with ``\\u`` escapes when the record
    holds a lone surrogate (a test titled ``"\\udead"`` in a Jest report, which Python's
    JSON reader turns into one), which no UTF-8 file can hold; readers get it back as is."""
    line = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return line
