"""Twin runs: where a verdict comes from when the code under test can say anything.

The code under test runs inside the test process, before and around the tests: it can exit
with any status, write any report in the runner's own format to the runner's own channel,
replace the comparisons the assertions use, or read the test files and return what they
expect. Nothing the test process says about itself can make a test pass. So a verification
runs the held-out tests several times (the *twins*), each in a judge's container of its own
(:mod:`swe_forge.verify.apart`), in an order only the host knows:

- the **honest** twin: the test files as the test patch left them;
- **decoys**: the same files with exactly one literal of one assertion of one test changed to
  a wrong value of the same type and shape (a string of the same length and kinds of
  characters, a number near the number, a bool flipped), the test keeping its name, its file
  and its place. Which assertions may be changed was calibrated at admission: the gold patch
  fails each decoy used.

A correct fix passes the honest twin and fails every decoy. Anything that fakes a verdict
from inside (an exit status, a forged report, a comparison that always agrees, a test file
read back at run time) does the same in every twin, since the twins cannot be told apart from
inside, and so makes a decoy pass: ``tamper_detected``. A twin's verdict is binary and comes
from what the supervisor observes (the runner's exit status by ``waitpid``, the files, the
limits); the runner's stream only explains failures.

Decoys are drawn to cover each *kind* of assertion first (Python's compare, raises, approx,
``in`` and unittest equality; another language's kind of literal: a patched ``pytest.raises``
or an ``Object.is`` that lies only about strings fools only the decoys of its kind), then
each *unit* (a process of its own in a twin: a Go package's test binary, a Rust test target),
then each test: code that can see its own outcomes (a gated capability) could fake a pass only
where no decoy changes the test it broke.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: At most this many decoys per verification, whatever the units.
MAX_DECOYS = 6


@dataclass(frozen=True)
class TwinPlan:
    """The twins of one verification, in execution order."""

    #: One entry per twin: None for the honest one, else the armed decoy it runs.
    twins: list[dict[str, Any] | None] = field(default_factory=list)

    @property
    def honest(self) -> int:
        """Where the honest twin runs."""
        return self.twins.index(None)

    @property
    def decoys(self) -> list[int]:
        """Where the decoys run."""
        return [i for i, t in enumerate(self.twins) if t is not None]


def armed_entries(harness: dict[str, Any]) -> list[dict[str, Any]]:
    """The armed decoys of a task manifest (``harness.canaries.armed``), as dicts.

    Python's entries are ``{"test", "site": k, "seed"}``; other ecosystems' carry the site's
    record (``{"test", "site": {...}, "seed", "unit"}``)."""
    out = []
    for entry in (harness.get("canaries") or {}).get("armed") or ():
        if isinstance(entry, dict) and "test" in entry and "site" in entry:
            out.append(entry)
    return out


def kind_of(entry: dict[str, Any]) -> str:
    """The kind of an armed decoy: Python's assertion kind, another language's literal kind."""
    site = entry.get("site")
    if isinstance(site, dict):
        return str(site.get("kind") or "")
    return str(entry.get("kind") or "")


def plan_twins(armed: list[dict[str, Any]], decoys: int, rng: random.Random) -> TwinPlan:
    """One honest twin and ``decoys`` decoys (more when the armed entries span more kinds or
    units, up to :data:`MAX_DECOYS`), in a random order. No armed entry: the honest twin
    alone."""
    if not armed or decoys <= 0:
        return TwinPlan([None])
    units: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for entry in armed:
        unit = str(entry.get("unit") or "")
        units.setdefault(unit, {}).setdefault(str(entry["test"]), []).append(entry)
    kinds = sorted({kind_of(e) for e in armed})
    # Python's kinds are assertion mechanisms (each one a library function the code could
    # patch), and its twins are cheap: each gets a decoy. Another language's are the types
    # of the literals: covered first, within the decoys the units ask for.
    mechanisms = [
        k for k in kinds if any(kind_of(e) == k and not isinstance(e["site"], dict) for e in armed)
    ]
    want = min(MAX_DECOYS, max(decoys, len(units), len(mechanisms)))
    chosen: list[dict[str, Any]] = []
    pools = {
        unit: {test: rng.sample(items, len(items)) for test, items in tests.items()}
        for unit, tests in units.items()
    }
    # Every kind once first, each from the unit that has given the fewest decoys so far.
    for kind in rng.sample(kinds, len(kinds)):
        if len(chosen) >= want:
            break
        of_kind = [
            (unit, test, e)
            for unit, tests in sorted(pools.items())
            for test, items in sorted(tests.items())
            for e in items
            if kind_of(e) == kind
        ]
        if not of_kind:
            continue
        fewest = min(sum(1 for c in chosen if str(c.get("unit") or "") == u) for u, _, _ in of_kind)
        unit, test, pick = rng.choice(
            [
                x
                for x in of_kind
                if sum(1 for c in chosen if str(c.get("unit") or "") == x[0]) == fewest
            ]
        )
        pools[unit][test].remove(pick)
        chosen.append(pick)

    # Then round-robin: the unit that has given the fewest decoys so far, and in it the test
    # that has (each at random among equals), never the same entry twice while others remain.
    def given(unit: str) -> int:
        return sum(1 for c in chosen if str(c.get("unit") or "") == unit)

    while len(chosen) < want:
        live_units = [u for u in sorted(pools) if any(pools[u].values())]
        if not live_units:
            break
        least = min(given(u) for u in live_units)
        unit = rng.choice([u for u in live_units if given(u) == least])
        tests = pools[unit]
        live = [t for t in sorted(tests) if tests[t]]
        used = {t: sum(1 for c in chosen if c["test"] == t) for t in live}
        fewest = min(used.values())
        test = rng.choice([t for t in live if used[t] == fewest])
        chosen.append(tests[test].pop())
    # Fewer armed entries than decoys wanted: fewer decoys. (Running one twice would make two
    # twins alike, and only the honest one unlike any other.)
    twins: list[dict[str, Any] | None] = [None, *chosen]
    rng.shuffle(twins)
    return TwinPlan(twins)


def decoy_verdict(record: dict[str, Any]) -> str:
    """What a decoy twin's run says: ``failed`` (as a decoy must), ``passed`` (it must not:
    something faked the verdict), or ``tampered`` (its own run shows tampering)."""
    integrity = record.get("integrity") or {}
    events = record.get("events") or {}
    if (
        integrity.get("changed")
        or integrity.get("appeared")
        or integrity.get("watch")
        or events.get("forged")
    ):
        return "tampered"
    if record.get("status") == "ran" and record.get("exit_code") == 0:
        return "passed"
    return "failed"
