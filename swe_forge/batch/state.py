"""Resumable run state: the output folder is the state.

Every finished unit of work (a mined repository, an admitted or rejected candidate, a graded
prediction) is one file under ``DIR/units/<stage>/``, written to a temporary name, synced and
renamed, so after a crash (``kill -9`` included) a unit's file is either complete or absent.
A rerun skips the units whose files exist and redoes the rest. The final outputs are always
assembled from the unit files, sorted, and written atomically: no duplicates, no lost
records, no torn lines.

``DIR/run.json`` pins what produced the folder (configuration hash, tool version, shard); a
rerun with different settings is refused rather than mixed in.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swe_forge import __version__
from swe_forge.errors import UsageError, output_error
from swe_forge.locks import hold_output


def atomic_write(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        # A full disk must not leave a half-written temporary file behind.
        tmp.unlink(missing_ok=True)
        raise output_error(exc, path) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    # The rename itself must survive a crash too.
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unit_key(text: str) -> str:
    """A file-name-safe, collision-free key for a unit id."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:80]
    return f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


class RunState:
    """The state folder of one (shard of a) run."""

    def __init__(self, root: Path, *, identity: dict[str, Any], force: bool = False) -> None:
        self.root = root
        self.units = root / "units"
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(exc, root) from exc
        # One run per folder: a second would grade or admit everything again beside it.
        hold_output(root)
        meta = root / "run.json"
        identity = {**identity, "tool_version": __version__}
        if meta.exists():
            try:
                old = json.loads(meta.read_text(encoding="utf-8"))
            except ValueError:
                old = {}
            differs = {k for k in identity if old.get(k) != identity[k]}
            if differs and not force:
                raise UsageError(
                    f"{root} holds a run made with other settings ({', '.join(sorted(differs))})",
                    hint="use a new --out folder, or pass --force to continue in this one",
                )
        atomic_write(meta, json.dumps(identity, indent=2, sort_keys=True) + "\n")
        self.identity = identity

    def path(self, stage: str, unit: str, suffix: str = ".jsonl") -> Path:
        """Where a unit's result lives."""
        return self.units / stage / f"{unit_key(unit)}{suffix}"

    def done(self, stage: str, unit: str, suffix: str = ".jsonl") -> bool:
        """Has this unit finished?"""
        return self.path(stage, unit, suffix).exists()

    def save(self, stage: str, unit: str, lines: list[str], suffix: str = ".jsonl") -> None:
        """Record a finished unit (all its records at once)."""
        atomic_write(self.path(stage, unit, suffix), "".join(line + "\n" for line in lines))

    def load(self, stage: str) -> Iterator[dict[str, Any]]:
        """Every record of every finished unit of a stage (unordered)."""
        folder = self.units / stage
        if not folder.is_dir():
            return
        for path in sorted(folder.iterdir()):
            if path.name.startswith("."):
                continue  # an unfinished temporary file of a killed run
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)

    def finished(self, stage: str) -> int:
        """How many units of a stage have finished."""
        folder = self.units / stage
        return (
            len([p for p in folder.iterdir() if not p.name.startswith(".")])
            if folder.is_dir()
            else 0
        )
