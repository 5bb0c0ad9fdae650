"""Deterministic, balanced sharding: N jobs split a run without talking to each other.

Units are ordered by the sha256 of their id (stable across machines and list orders), and
unit number ``i`` of that order goes to shard ``i mod N``: every unit lands in exactly one
shard, and shard sizes differ by at most one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from swe_forge.errors import UsageError

T = TypeVar("T")
_SPEC = re.compile(r"^(\d+)/(\d+)$")


def parse_shard(spec: str | None) -> tuple[int, int]:
    """``"K/N"`` (1 <= K <= N) -> (K, N); None -> (1, 1)."""
    if spec is None:
        return 1, 1
    m = _SPEC.match(spec.strip())
    if not m:
        raise UsageError(
            f"--shard {spec!r} is not K/N", hint="e.g. --shard 2/8 for the 2nd of 8 shards"
        )
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        raise UsageError(
            f"--shard {spec}: K must be between 1 and N", hint="shards are numbered from 1"
        )
    return k, n


def shard_order(ids: Sequence[str]) -> list[str]:
    """The global order shards are cut from."""
    return sorted(set(ids), key=lambda u: (hashlib.sha256(u.encode()).hexdigest(), u))


def select(units: Sequence[T], key: Callable[[T], str], k: int, n: int) -> list[T]:
    """The units of shard ``k`` of ``n`` (in their original order)."""
    if n == 1:
        return list(units)
    order = shard_order([key(u) for u in units])
    mine = {u for i, u in enumerate(order) if i % n == k - 1}
    return [u for u in units if key(u) in mine]
