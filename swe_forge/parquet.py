"""Records as parquet files: one record type per file, with a declared Arrow schema.

The schema of a record type comes from its class (:func:`swe_forge.schema.columns`), never
from the rows, so every file of a type has the same schema whatever it holds: the shards of a
dataset load together (Hugging Face ``datasets``, ``pyarrow.dataset``) even when a field is
empty, null or missing in every row of one of them. A file reads back to the same records:
``read_parquet(write_parquet(records))`` equals ``records``, and their JSON lines are the
same bytes.

pyarrow is an optional dependency (``pip install 'swe-forge[parquet]'``); importing this
module does not need it, using it does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from swe_forge.errors import InputError, RemoteError, UsageError
from swe_forge.records import RECORD_TYPES, Record
from swe_forge.schema import DERIVED_COLUMNS, Column, ColumnType, columns, table_columns

#: Rows per row group: bounds the memory a writer holds and keeps every string column of a
#: group far below Arrow's 2 GiB per-array limit (a row holds a few patches).
ROW_GROUP_ROWS = 1000
#: The schema metadata key naming the record type (and its schema version) of a file.
METADATA_KEY = b"swe_forge"
#: Parquet compression: zstd packs patches well and every reader of parquet has it.
COMPRESSION = "zstd"

_INSTALL_HINT = "install the extra: pip install 'swe-forge[parquet]'"


def _pyarrow() -> Any:
    """The ``pyarrow`` module, or a usage error that says how to install it."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise UsageError(
            "parquet needs pyarrow, which is not installed", hint=_INSTALL_HINT
        ) from exc
    return pyarrow


def _arrow_type(pa: Any, t: ColumnType) -> Any:
    if t.kind == "json" or t.kind == "string":
        return pa.string()
    if t.kind == "int64":
        return pa.int64()
    if t.kind == "double":
        return pa.float64()
    if t.kind == "bool":
        return pa.bool_()
    if t.kind == "list":
        assert t.item is not None
        return pa.list_(_arrow_type(pa, t.item))
    if t.kind == "struct":
        return pa.struct([_arrow_field(pa, c) for c in t.fields])
    if t.kind == "pairs":
        assert t.item is not None
        key, value = t.names
        pair = pa.struct(
            [
                pa.field(key, pa.string(), nullable=False),
                pa.field(value, _arrow_type(pa, t.item), nullable=False),
            ]
        )
        return pa.list_(pair)
    raise TypeError(f"unknown column kind {t.kind!r}")


def _arrow_field(pa: Any, column: Column) -> Any:
    return pa.field(column.name, _arrow_type(pa, column.type), nullable=column.nullable)


def arrow_schema(record_type: str) -> Any:
    """The ``pyarrow.Schema`` of a record type's files (columns in field order; the record
    type and schema version in the schema's metadata)."""
    pa = _pyarrow()
    cls = RECORD_TYPES[record_type]
    meta = {"record_type": record_type, "schema_version": _schema_version(cls)}
    return pa.schema(
        [_arrow_field(pa, c) for c in table_columns(record_type)],
        metadata={METADATA_KEY: json.dumps(meta, sort_keys=True).encode()},
    )


def _schema_version(cls: type[Record]) -> int:
    # The schema_version the class writes (its field's default).
    return int(cls.__dataclass_fields__["schema_version"].default)


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _encode(t: ColumnType, value: Any, where: str) -> Any:
    """A value of a record's plain data as its column holds it."""
    if value is None:
        return None
    if t.kind == "json":
        return _dump(value)
    if t.kind == "list":
        assert t.item is not None
        item = t.item
        return [_encode(item, v, where) for v in value]
    if t.kind == "pairs":
        assert t.item is not None
        key, name = t.names
        item = t.item
        return [{key: k, name: _encode(item, v, where)} for k, v in value.items()]
    if t.kind == "struct":
        if not isinstance(value, dict):
            raise InputError(f"{where}: expected an object, got {type(value).__name__}")
        names = [c.name for c in t.fields]
        if sorted(value) != sorted(names):
            raise InputError(
                f"{where}: {sorted(value)} cannot be stored in a table: its columns are "
                f"{', '.join(names)}"
            )
        return {c.name: _encode(c.type, value[c.name], where) for c in t.fields}
    return value


def _decode(t: ColumnType, value: Any) -> Any:
    """Inverse of :func:`_encode`."""
    if value is None:
        return None
    if t.kind == "json":
        return json.loads(value)
    if t.kind == "list":
        assert t.item is not None
        return [_decode(t.item, v) for v in value]
    if t.kind == "pairs":
        assert t.item is not None
        key, name = t.names
        return {p[key]: _decode(t.item, p[name]) for p in value}
    if t.kind == "struct":
        return {c.name: _decode(c.type, value[c.name]) for c in t.fields}
    return value


def record_type_of(records: Sequence[Record]) -> str:
    """The one record type of ``records``.

    Raises:
        UsageError: records of several types (a parquet file holds one).
    """
    found = sorted({r.record_type for r in records})
    if len(found) > 1:
        raise UsageError(
            f"records of several types ({', '.join(found)}): a parquet file holds one",
            hint="export each type on its own (--records TYPE)",
        )
    if not found:
        raise UsageError("no records to write", hint="give a file that holds records")
    return found[0]


def to_rows(records: Iterable[Record], record_type: str) -> list[dict[str, Any]]:
    """The table rows of records of one type (plain data, as the columns hold it), derived
    columns included."""
    cols = columns(RECORD_TYPES[record_type])
    derived = DERIVED_COLUMNS.get(record_type, ())
    rows = []
    for record in records:
        data = record.to_dict()
        where = f"{record_type} {getattr(record, 'instance_id', '') or ''}".strip()
        row = {c.name: _encode(c.type, data[c.name], f"{where}: {c.name}") for c in cols}
        for column, method in derived:
            row[column.name] = getattr(record, method)()
        rows.append(row)
    return rows


def from_rows(rows: Iterable[dict[str, Any]], record_type: str) -> list[Record]:
    """Records of one type from table rows (inverse of :func:`to_rows`; derived columns are
    not read: the record is its fields)."""
    cls = RECORD_TYPES[record_type]
    cols = columns(cls)
    out: list[Record] = []
    for row in rows:
        data = {c.name: _decode(c.type, row[c.name]) for c in cols}
        out.append(cls.from_dict(data))
    return out


def write_parquet(path: Path, records: Sequence[Record], record_type: str | None = None) -> int:
    """Write records of one type to a parquet file, atomically; return how many.

    ``record_type`` names the type when ``records`` may be empty (an empty file of a type
    still carries its schema). The same records give the same bytes with the same pyarrow.

    Raises:
        UsageError: pyarrow is not installed, or the records are of several types.
        InputError: a record holds what its columns cannot (a key a struct has no field for).
    """
    pa = _pyarrow()
    kind = record_type or record_type_of(records)
    if records and record_type_of(records) != kind:
        raise UsageError(f"records are not of type {kind!r}")
    schema = arrow_schema(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    writer = pa.parquet.ParquetWriter(str(partial), schema, compression=COMPRESSION)
    try:
        # An empty file gets no row group at all: readers that size their batches by the
        # first row group (Hugging Face `datasets`) fail on a group of 0 rows.
        for start in range(0, len(records), ROW_GROUP_ROWS):
            rows = to_rows(records[start : start + ROW_GROUP_ROWS], kind)
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
    except BaseException:
        writer.close()
        partial.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(partial, path)
    return len(records)


def parquet_record_type(path: Path) -> str:
    """The record type a parquet file written by :func:`write_parquet` holds.

    Raises:
        InputError: the file is missing, not parquet, or not one of ours.
    """
    pa = _pyarrow()
    try:
        schema = pa.parquet.read_schema(str(path))
    except FileNotFoundError as exc:
        raise InputError(f"no such file: {path}") from exc
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: not a parquet file ({exc})") from exc
    meta = (schema.metadata or {}).get(METADATA_KEY)
    kind = json.loads(meta).get("record_type") if meta else None
    if kind not in RECORD_TYPES:
        raise InputError(
            f"{path}: not a parquet file of swe-forge records",
            hint="give a file that `swe-forge export --format parquet` wrote",
        )
    return str(kind)


def read_parquet(path: Path) -> list[Record]:
    """The records of a parquet file written by :func:`write_parquet`, in file order.

    Raises:
        UsageError: pyarrow is not installed.
        InputError: the file is not a parquet file of swe-forge records, or its columns are
            not those of its record type.
    """
    pa = _pyarrow()
    kind = parquet_record_type(path)
    table = pa.parquet.read_table(str(path))
    expected = arrow_schema(kind)
    # A file written before its type had derived columns holds its fields alone: the same
    # records (derived columns are never read back).
    fields_only = pa.schema([_arrow_field(pa, c) for c in columns(RECORD_TYPES[kind])])
    if not (
        table.schema.equals(expected, check_metadata=False)
        or table.schema.equals(fields_only, check_metadata=False)
    ):
        raise InputError(
            f"{path}: its columns are not those of a {kind} of this swe-forge",
            hint="read it with the swe-forge version that wrote it",
        )
    try:
        return from_rows(table.to_pylist(), kind)
    except ValueError as exc:
        raise InputError(f"{path}: not a {kind} record ({exc})") from exc


_HUB_HINT = "install the extra: pip install 'swe-forge[hub]'"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_hub(repo: str) -> None:
    """Refuse early what :func:`push_to_hub` would refuse after the work: huggingface_hub
    missing, or a repository id that is not ``owner/name``.

    Raises:
        UsageError: either.
    """
    if not _REPO_ID.match(repo):
        raise UsageError(
            f"--push-to-hub {repo!r} is not a repository id",
            hint="name a dataset repository as owner/name",
        )
    try:
        import huggingface_hub  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            "--push-to-hub needs huggingface_hub, which is not installed", hint=_HUB_HINT
        ) from exc


def push_to_hub(paths: Sequence[Path], repo: str, *, path_in_repo: str = "data") -> str:
    """Upload files to a Hugging Face Hub dataset repository (created when missing), in one
    commit; return the commit's URL.

    Each file goes to ``{path_in_repo}/{name}`` (the Hub's dataset viewer and
    ``datasets.load_dataset(repo)`` read every parquet file under ``data/``). The token is
    huggingface_hub's own (``HF_TOKEN``, or ``hf auth login``).

    Raises:
        UsageError: huggingface_hub is not installed, or ``repo`` is not ``owner/name``.
        RemoteError: the Hub could not be reached, or refused the upload.
    """
    check_hub(repo)
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi()
    operations = [
        CommitOperationAdd(path_in_repo=f"{path_in_repo}/{p.name}", path_or_fileobj=str(p))
        for p in paths
    ]
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        info = api.create_commit(
            repo,
            operations,
            repo_type="dataset",
            commit_message=f"swe-forge: {', '.join(p.name for p in paths)}",
        )
    except Exception as exc:  # huggingface_hub raises many kinds; all mean "not pushed"
        first = f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise RemoteError(
            f"could not push to the Hugging Face Hub dataset {repo}: {first}",
            hint="log in (`hf auth login` or HF_TOKEN), check the repository and the network; "
            "the parquet file is written, run the export again to push it",
        ) from exc
    return str(getattr(info, "commit_url", "") or repo)
