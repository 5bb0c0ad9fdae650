"""``mine --sample``: a deterministic per-repository sample of the candidates mined.

``--max-candidates`` keeps the first candidates the walk meets, which are the newest: a
measurement of how the tool does on a project then sees only its last months. A sample
``newest:N,spread:M`` keeps, per repository, the ``N`` most recent candidates (by merge date,
then PR number) plus ``M`` older ones spread evenly through the rest of the history (for
``M = 2``: a third and two thirds of the way through). The choice depends only on the
candidates, so the same history gives the same sample.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_forge.errors import InputError
from swe_forge.records import Candidate

_PART = re.compile(r"^\s*(newest|spread)\s*:\s*(\d+)\s*$")


@dataclass(frozen=True)
class Sample:
    """How many candidates to keep per repository: the newest, and older ones spread out."""

    newest: int = 0
    spread: int = 0

    def __str__(self) -> str:
        return f"newest:{self.newest},spread:{self.spread}"


def parse_sample(text: str) -> Sample:
    """Parse ``newest:N,spread:M`` (either part may be left out, in any order).

    Raises:
        InputError: the text is not of that form, names a part twice, or keeps nothing.
    """
    seen: dict[str, int] = {}
    for part in text.split(","):
        match = _PART.match(part)
        if match is None or match[1] in seen:
            raise InputError(
                f"--sample: cannot read {text!r}",
                hint="write newest:N,spread:M (e.g. newest:4,spread:2: per repository the 4 "
                "newest candidates and 2 older ones spread through its history)",
            )
        seen[match[1]] = int(match[2])
    sample = Sample(newest=seen.get("newest", 0), spread=seen.get("spread", 0))
    if sample.newest + sample.spread == 0:
        raise InputError(
            f"--sample {text!r} keeps no candidate", hint="give newest:N or spread:M with N, M > 0"
        )
    return sample


def take_sample(candidates: list[Candidate], sample: Sample) -> list[Candidate]:
    """The candidates ``sample`` keeps, in the order they were given."""
    ordered = sorted(candidates, key=lambda c: (c.created_at, c.provenance.pr_number))
    cut = max(0, len(ordered) - sample.newest)
    head, tail = ordered[:cut], ordered[cut:]
    picks: list[Candidate] = []
    for i in range(1, sample.spread + 1):
        if not head:
            break
        pick = head[min(len(head) - 1, (len(head) * i) // (sample.spread + 1))]
        if pick not in picks:
            picks.append(pick)
    kept = {id(c) for c in picks + tail}
    return [c for c in candidates if id(c) in kept]
