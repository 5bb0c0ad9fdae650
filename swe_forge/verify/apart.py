"""Twins apart: each twin of a verification in a judge's container of its own.

Twins must not be told apart from inside (see :mod:`swe_forge.verify.twins`): a patch that can
read the expected values (where the base code already reads files, the gate lets it) and knows
its twin's place in the run order can pass at one place and fail at the others, and be paid
whenever the honest twin runs there: 1/(K+1) of the time, against p(1-p)^K (0.148 for two
decoys) when it must guess blind. In one container the place shows without any gated step:
process ids are handed out in sequence (``getpid()`` of the first twin's runner is smaller
than the next one's), and the container's cgroup counters (CPU time, page faults, forks) only
grow. A red team read its place from the pids.

So every twin gets a fresh container that went through the same steps: each started and
given the candidate exactly as the first one was (the same supervisor calls, so the same
process ids are handed out), all of them before the first twin runs; then each builds and
runs its one twin, one after another in the plan's order. The containers are removed only
when every twin ended (a removal is work a running twin could feel). Each twin then starts
from the same process ids and fresh counters whichever place it has, and nothing it leaves in
its container (files, IPC objects, processes) reaches another twin.

Every twin's job still writes the same set of files (the honest one its untouched copies, a
decoy its one literal changed and the others' files untouched): which files were rewritten
must not say which twin a container holds.

What this does not close, because the kernel is shared, is what a file read can learn: a
container's age at its twin's start (``/proc/1/stat``, the work tree's ctimes) grows with the
twins before it, and the host's state outlives a container (the page cache of the image's
files, ``/proc/stat``'s count of forks). Any forging needs a file read anyway (the expected
values are in the test files), which the gate allows only where the base code reads files.
See README, "What remains possible".
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from swe_forge.gates.sandbox import Session
from swe_forge.verify.judge import InfraError


@dataclass(frozen=True)
class Prepared:
    """How the first container was prepared, for the others to be prepared the same way."""

    patch: str
    test_patch: str
    #: The supervisor's ``prepare`` job (the patches' paths are the same in every container).
    job: dict[str, Any]


def _paths_of(twin: dict[str, Any]) -> set[str]:
    """The files a twin's entry makes the supervisor write (its edits, its files, the test
    file of a Python decoy)."""
    paths = {str(e.get("path") or "") for e in twin.get("edits") or ()}
    paths |= {str(e.get("path") or "") for e in twin.get("files") or ()}
    decoy = twin.get("decoy")
    if isinstance(decoy, dict):
        paths.add(str(decoy.get("test") or "").split("::", 1)[0])
    return {p for p in paths if p}


def twin_jobs(job: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``run`` job per twin of ``job`` (in its order), each with that twin alone.

    A twin that does not write every file some twin writes gets an edit that changes nothing
    in each missing one (the file is written as the test patch left it), as the supervisor does
    when the twins share a container."""
    twins = list((job.get("run") or {}).get("twins") or ())
    everyone: set[str] = set()
    for twin in twins:
        everyone |= _paths_of(twin)
    out = []
    for twin in twins:
        alone = copy.deepcopy(twin)
        missing = sorted(everyone - _paths_of(alone))
        if missing:
            # An empty edit at offset 0: the supervisor writes the file unchanged.
            alone["edits"] = [
                *(alone.get("edits") or ()),
                *({"path": p, "start": 0, "end": 0, "text": "", "new": ""} for p in missing),
            ]
        one = copy.deepcopy(job)
        one["run"]["twins"] = [alone]
        out.append(one)
    return out


def merged(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The supervisor's answers of the twins apart as one answer of every twin: the first
    answer's fields (as one container's answer gives its first twin's), ``twins`` in order,
    and the seconds the twins took added up.

    An answer without exactly one twin (the held-out tests did not apply, the judge failed)
    is returned as it is: it says why no twin ran."""
    for answer in answers:
        if len(answer.get("twins") or ()) != 1:
            return answer
    run = dict(answers[0]) if answers else {"twins": []}
    run["twins"] = [a["twins"][0] for a in answers]
    seconds: dict[str, float] = {}
    for answer in answers:
        for key, value in (answer.get("seconds") or {}).items():
            if isinstance(value, int | float):
                seconds[key] = round(seconds.get(key, 0.0) + float(value), 3)
    run["seconds"] = seconds
    return run


class Spares:
    """The other twins' containers, each opened and prepared as the first was (see
    :class:`Prepared`), in the background from the moment the candidate is known: while the
    first container is prepared and its candidate checked, not after.

    Nothing of the candidate's runs while they are prepared (``prepare`` applies and scans, it
    runs nothing of the project's), so this overlaps work of the host's, never a twin. Call
    :meth:`take` for the containers a plan needs (it waits for them, and opens more if the
    plan needs more) and :meth:`close` when the verification ends, whatever way it ends."""

    def __init__(
        self,
        opener: Callable[[], AbstractContextManager[Session]],
        prepared: Prepared,
        count: int,
    ) -> None:
        self.opener = opener
        self.prepared = prepared
        self.opened: list[AbstractContextManager[Session]] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max(1, count), thread_name_prefix="twin-open")
        self._pending = [self._pool.submit(self._open) for _ in range(max(0, count))]

    def _open(self) -> Session:
        ctx = self.opener()
        here = ctx.__enter__()
        with self._lock:
            self.opened.append(ctx)
        here.put("candidate.patch", self.prepared.patch)
        here.put("test.patch", self.prepared.test_patch)
        prep = here.call("prepare", self.prepared.job, timeout=600)
        if prep.get("status") == "apply_failed":
            raise InfraError("the candidate applied in one container, not in another")
        return here

    def adopt(self, ctx: AbstractContextManager[Session]) -> None:
        """Remove an entered container opened elsewhere (the first twin's) with the others,
        at :meth:`close`."""
        with self._lock:
            self.opened.append(ctx)

    def take(self, count: int) -> list[Session]:
        """``count`` prepared containers (waits for them; opens what is missing)."""
        while len(self._pending) < count:
            self._pending.append(self._pool.submit(self._open))
        return [f.result() for f in self._pending[:count]]

    def close(self) -> None:
        """Remove every container opened (those still opening first finish, then go)."""
        for f in self._pending:
            f.cancel()
        for f in self._pending:
            if not f.cancelled():
                with contextlib.suppress(Exception):
                    f.result()
        self._pool.shutdown(wait=True)
        with self._lock:
            opened, self.opened = list(self.opened), []
        _close_all(opened)


def run_apart(
    first: Session,
    job: dict[str, Any],
    spares: Spares,
    call: Callable[[Session, dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Run each twin of ``job`` in its own container, one after another in the plan's order:
    the first in ``first`` (prepared already), every other in one of ``spares``, all of them
    prepared before any twin runs; ``call`` runs one twin's job in one container. Returns the
    answers :func:`merged`. The caller closes ``spares`` (after the last twin: removing a
    container is work a running twin could feel)."""
    jobs = twin_jobs(job)
    answers: list[dict[str, Any]] = []
    # Every container ready before the first twin starts: while a twin runs, nothing of the
    # host's runs for this verification (what a twin could feel is the same for every twin).
    others = spares.take(len(jobs) - 1) if len(jobs) > 1 else []
    for here, one in zip([first, *others], jobs, strict=True):
        answers.append(call(here, one))
        if len(answers[-1].get("twins") or ()) != 1:
            break
    return merged(answers)


def _close_all(opened: list[AbstractContextManager[Session]]) -> None:
    """Leave every opened container's context (each removes its container), in parallel."""
    if not opened:
        return
    with ThreadPoolExecutor(max_workers=len(opened), thread_name_prefix="twin-rm") as pool:
        for done in [pool.submit(ctx.__exit__, None, None, None) for ctx in opened]:
            done.result()
