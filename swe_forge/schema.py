"""The published schemas of the records: JSON Schema, and the columns of their tables.

Both are derived from the record classes of :mod:`swe_forge.records`, never written by hand:

- **JSON Schema** (draft 2020-12, pydantic's serialization schema): what one JSON line of
  each record holds. Every field is required, because every field is written (``null`` where
  a field is optional and empty).
- **Columns** (:func:`columns`): how a record is laid out in a table (parquet, Hugging Face
  ``datasets``), one column per top-level field, with types that do not depend on the data,
  so every shard of a dataset has the same schema even where a field is empty in all its
  rows. The rules:

  ============================  =================================================
  field                         column
  ============================  =================================================
  ``str``/``int``/``float``      ``string``/``int64``/``double``/``bool``
  ``X | None``                  the type of X, nullable (every other column is not)
  ``tuple[X, ...]``/``list[X]``  ``list<X>``
  a record block (dataclass)    ``struct<...>`` of its fields
  ``Pairs(key, value)`` map     ``list<struct<key, value>>`` (a test id -> outcome map:
                                ``{test, outcome}``), in the map's order
  ``Fields(a, b)`` dict         ``struct<a: string, b: string>``
  ``dict[str, Any]``            ``json``: a string holding the block as canonical JSON
                                (sorted keys, compact), because its shape is free:
                                it grows with every version of the stage that writes it
  ============================  =================================================

  Timestamps are the records' own ISO 8601 strings (``created_at``).

``schemas/`` in the repository holds both for every record type; ``swe-forge schema``
writes them and a test fails when they differ from what the classes give.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

from swe_forge.errors import InputError
from swe_forge.records import RECORD_TYPES, Fields, Pairs, adapter

#: The JSON Schema dialect of the published schemas.
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_SCALARS: dict[type[Any], str] = {str: "string", int: "int64", float: "double", bool: "bool"}


@dataclass(frozen=True)
class ColumnType:
    """The type of a column or of a part of one.

    ``kind`` is one of ``string``, ``int64``, ``double``, ``bool`` (scalars), ``list``
    (``item``), ``struct`` (``fields``), ``pairs`` (a ``dict`` stored as a list of structs of
    ``names`` = (key name, value name) and ``item`` = the value's type), or ``json`` (a
    string of canonical JSON).
    """

    kind: str
    item: ColumnType | None = None
    fields: tuple[Column, ...] = ()
    names: tuple[str, ...] = ()

    def render(self) -> str:
        """Arrow's notation (``list<item: struct<test: string not null, ...>>``)."""
        if self.kind == "json":
            return "string (json)"
        if self.kind == "list":
            assert self.item is not None
            return f"list<{self.item.render()}>"
        if self.kind == "struct":
            return "struct<" + ", ".join(c.render() for c in self.fields) + ">"
        if self.kind == "pairs":
            assert self.item is not None
            key, value = self.names
            return f"list<struct<{key}: string not null, {value}: {self.item.render()} not null>>"
        return self.kind


@dataclass(frozen=True)
class Column:
    """One named field of a table or of a struct."""

    name: str
    type: ColumnType
    nullable: bool = False

    def render(self) -> str:
        """``name: type`` with ``not null`` where the field cannot be null."""
        return f"{self.name}: {self.type.render()}{'' if self.nullable else ' not null'}"


#: Columns a table of a record type carries after its fields: values derived from a record
#: (name -> the record's method that gives it), for filtering a dataset without parsing its
#: JSON blocks. A reader of the table leaves them out (the record is its fields).
DERIVED_COLUMNS: dict[str, tuple[tuple[Column, str], ...]] = {
    # audit.test_strength.score: the share of wrong variants of the gold fix its tests reject.
    "task": ((Column("test_strength", ColumnType("double"), nullable=True), "test_strength"),),
}


def table_columns(record_type: str) -> tuple[Column, ...]:
    """The columns of a record type's table: its fields (:func:`columns`), then its
    :data:`DERIVED_COLUMNS`."""
    derived = tuple(c for c, _method in DERIVED_COLUMNS.get(record_type, ()))
    return columns(RECORD_TYPES[record_type]) + derived


def columns(cls: type[Any]) -> tuple[Column, ...]:
    """The columns of a record class (or of a block of one), in field order."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple(_column(f.name, hints[f.name]) for f in dataclasses.fields(cls))


def _column(name: str, hint: Any) -> Column:
    inner, nullable = _strip_none(hint)
    return Column(name, _column_type(inner, f"field {name!r}"), nullable)


def _strip_none(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"only X | None unions can be stored in a column: {hint}")
        return args[0], True
    return hint, False


def _column_type(hint: Any, where: str) -> ColumnType:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(hint)
        for marker in meta:
            if isinstance(marker, Pairs):
                key_type, value_type = typing.get_args(base)
                if key_type is not str:
                    raise TypeError(f"{where}: Pairs needs str keys")
                return ColumnType(
                    "pairs",
                    item=_column_type(value_type, where),
                    names=(marker.key, marker.value),
                )
            if isinstance(marker, Fields):
                return ColumnType(
                    "struct",
                    fields=tuple(Column(n, ColumnType("string")) for n in marker.names),
                )
        return _column_type(base, where)
    if hint is Any:
        return ColumnType("json")
    if origin is Literal:
        return ColumnType(_SCALARS[type(typing.get_args(hint)[0])])
    if hint in _SCALARS:
        return ColumnType(_SCALARS[hint])
    if origin in (list, tuple):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        if len(args) != 1:
            raise TypeError(f"{where}: only tuple[X, ...] and list[X] can be stored: {hint}")
        item, nullable = _strip_none(args[0])
        if nullable:
            raise TypeError(f"{where}: list items cannot be None: {hint}")
        return ColumnType("list", item=_column_type(item, where))
    if origin is dict:
        if typing.get_args(hint)[1] is Any:
            return ColumnType("json")
        raise TypeError(f"{where}: say how {hint} is stored (Pairs, Fields or dict[str, Any])")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return ColumnType("struct", fields=columns(hint))
    raise TypeError(f"{where}: no column type for {hint}")


def json_schema(record_type: str) -> dict[str, Any]:
    """The JSON Schema of one JSON line of a record type (``candidate``, ``task``,
    ``rejection``, ``verify_result``)."""
    cls = RECORD_TYPES[record_type]
    schema = adapter(cls).json_schema(mode="serialization")
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def table_layout(record_type: str) -> str:
    """The columns of a record type's table, one ``name: type`` line each."""
    lines = [c.render() for c in table_columns(record_type)]
    return "\n".join(lines) + "\n"


def schema_files() -> dict[str, str]:
    """Every published schema file (name -> text), as the record classes give them."""
    out: dict[str, str] = {}
    for record_type in RECORD_TYPES:
        schema = json.dumps(json_schema(record_type), indent=2, sort_keys=True)
        out[f"{record_type}.schema.json"] = schema + "\n"
        out[f"{record_type}.columns.txt"] = table_layout(record_type)
    return out


def write_schemas(directory: Path) -> list[Path]:
    """Write every schema file into ``directory``; return the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in schema_files().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def stale_schemas(directory: Path) -> list[str]:
    """The schema files of ``directory`` that differ from what the classes give (or are
    missing), by name; empty when the published schemas are current."""
    if not directory.is_dir():
        raise InputError(f"no such directory: {directory}")
    stale = []
    for name, text in schema_files().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale
