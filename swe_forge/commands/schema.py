"""``swe-forge schema``: write (or check) the published schemas of the records."""

from __future__ import annotations

from pathlib import Path

from swe_forge.errors import InputError
from swe_forge.schema import stale_schemas, write_schemas


def run_schema(output: Path, *, check: bool = False) -> list[Path]:
    """Write every schema file into ``output`` and return their paths; with ``check``,
    write nothing and return [] when the files there are current.

    Raises:
        InputError: with ``check``, a file is missing or differs (the hint says how to
            regenerate them).
    """
    if check:
        stale = stale_schemas(output)
        if stale:
            raise InputError(
                f"schemas in {output} differ from the record classes: {', '.join(stale)}",
                hint=f"regenerate them: swe-forge schema -o {output}",
            )
        return []
    return write_schemas(output)
