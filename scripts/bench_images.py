"""Benchmark: filling the wheelhouses of real candidates with and without the shared store.

Both arms fill the wheelhouse of every candidate's lock, in the same run, from the same locks
(resolved once beforehand, so resolution is not measured):

- ``per-lock`` (the baseline, what swe-forge did before the store): each lock starts from an
  empty cache, so every wheel of every lock is downloaded;
- ``shared-store``: one cache for all locks; a wheel an earlier lock fetched is hard-linked.

Prints seconds per arm, the ratio, and how many wheels were downloaded. Not a timed test.

    .venv/bin/python scripts/bench_images.py /tmp/realrun/tomlkit/candidates.jsonl --limit 8
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from swe_forge.commands.images import read_candidates
from swe_forge.config import load_config, load_repo_overrides
from swe_forge.ecosystems.python.deps import Lock, resolve, wheelhouse
from swe_forge.ecosystems.python.image import recipe_of
from swe_forge.engine import Engine
from swe_forge.images.base import recipe_for_python
from swe_forge.images.build import ImageBuilder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidates", type=Path)
    parser.add_argument("--limit", type=int, default=8)
    args = parser.parse_args()
    config = load_config()
    builder = ImageBuilder(
        config, Engine(), overrides=load_repo_overrides(Path(config.images.repos_file))
    )
    work = Path(tempfile.mkdtemp(prefix="bench-images-"))
    try:
        locks: list[tuple[str, Lock, str]] = []
        for cand in read_candidates(args.candidates)[: args.limit]:
            recipe, _installable = recipe_of(builder, cand)
            glibc = recipe_for_python(recipe.python, builder.distros).glibc
            locks.append((cand.instance_id, resolve(recipe, glibc, cache=work / "resolved"), glibc))
        distinct = {lock.digest for _i, lock, _g in locks}
        print(f"{len(locks)} candidates, {len(distinct)} distinct locks")

        def arm(shared: bool) -> tuple[float, int, int]:
            start = time.perf_counter()
            downloaded = total = 0
            seen: set[str] = set()
            for n, (_iid, lock, glibc) in enumerate(locks):
                if lock.digest in seen:
                    continue  # both arms reuse a finished wheelhouse of the same lock
                seen.add(lock.digest)
                cache = work / ("shared" if shared else f"per-lock-{n}")
                house = wheelhouse(lock, glibc, cache=cache)
                total += house.wheels
                downloaded += house.wheels - house.from_store
            return time.perf_counter() - start, downloaded, total

        base_s, base_dl, base_total = arm(shared=False)
        store_s, store_dl, store_total = arm(shared=True)
        print(f"per-lock     {base_s:8.1f} s  downloaded {base_dl:4d} of {base_total} wheels")
        print(f"shared-store {store_s:8.1f} s  downloaded {store_dl:4d} of {store_total} wheels")
        print(
            f"ratio shared/per-lock: time {store_s / base_s:.2f}, downloads {store_dl / base_dl:.2f}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
