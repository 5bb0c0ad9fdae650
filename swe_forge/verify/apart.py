"""Twins apart: each twin of a verification in a judge's container of its own.

Twins must not be told apart from inside (see :mod:`swe_forge.verify.twins`): a patch that can
read the expected values (where the base code already reads files, the gate lets it) and knows
its twin's place in the run order can pass at one place and fail at the others, and be paid
whenever the honest twin runs there: 1/(K+1) of the time, against p(1-p)^K (0.148 for two
decoys) when it must guess blind. In one container the place shows without any gated step:
process ids are handed out in sequence (``getpid()`` of the first twin's runner is smaller
than the next one's), and the container's cgroup counters (CPU time, page faults, forks) only
grow. A red team read its place from the pids.

So every twin gets a fresh container that lives the same life: opened, given the candidate
exactly as the first one was (the same supervisor calls, so the same process ids are handed
out), left as long as the first one was between its preparation and its twin (the host's
checks), then its twin built and run; the next container is opened only then. A container's
age when its twin starts (``/proc/1/stat``, the ctimes of what preparing it wrote, the dates
of its ``/etc/hostname`` and cgroup) is then the same at every place: when the containers
were all opened first, it grew with the twins before (an eighteenth red team read its place
from the files' times and forged in the last twin only). The containers are removed only
when every twin ended (a removal is work a running twin could feel). Each twin starts from
the same process ids and fresh counters whichever place it has, and nothing it leaves in its
container (files, IPC objects, processes) reaches another twin.

Every twin's job still writes the same set of files (the honest one its untouched copies, a
decoy its one literal changed and the others' files untouched): which files were rewritten
must not say which twin a container holds.

What this does not close, because the kernel is shared, is what outlives a container on the
host: the page cache of the image's files (a first twin may find them colder than the next,
unless an earlier verification of the same task warmed them) and ``/proc/stat``'s counts of
forks. Any forging needs the expected values too, which the test files hold: closed to the
code under test in Python, Go, Rust and Java, and read only through gated capabilities in
JS. See README, "What remains possible".
"""

from __future__ import annotations

import copy
import threading
import time
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
    :class:`Prepared`), right before its twin runs, never ahead of it.

    A twin must not learn its place in the run order: a container's age when its twin starts
    (``/proc/1/stat``, the ctimes of what ``prepare`` wrote, the dates of ``/etc/hostname``
    and of its cgroup) would say it if the containers were opened together and the later
    twins waited. So each container lives the same life: opened, prepared, then as long a
    pause as the first container's between its ``prepare`` and its twin (the host's checks
    of the candidate: :meth:`ready`), then its twin. Call :meth:`next` for each container a
    plan needs and :meth:`close` when the verification ends, whatever way it ends."""

    def __init__(
        self,
        opener: Callable[[], AbstractContextManager[Session]],
        prepared: Prepared,
    ) -> None:
        self.opener = opener
        self.prepared = prepared
        self.opened: list[AbstractContextManager[Session]] = []
        self._lock = threading.Lock()
        self._ready_at: float | None = None
        self._pause = 0.0

    def ready(self) -> None:
        """The first container is prepared: its pause before its twin starts now."""
        self._ready_at = time.monotonic()

    def started(self) -> None:
        """The first twin starts now: its container's pause is what the others wait."""
        if self._ready_at is not None:
            self._pause = max(0.0, time.monotonic() - self._ready_at)

    def next(self) -> Session:
        """A container opened and prepared as the first was, after the first one's pause."""
        ctx = self.opener()
        here = ctx.__enter__()
        with self._lock:
            self.opened.append(ctx)
        here.put("candidate.patch", self.prepared.patch)
        here.put("test.patch", self.prepared.test_patch)
        prep = here.call("prepare", self.prepared.job, timeout=600)
        ready = time.monotonic()
        if prep.get("status") == "apply_failed":
            raise InfraError("the candidate applied in one container, not in another")
        time.sleep(max(0.0, self._pause - (time.monotonic() - ready)))
        return here

    def adopt(self, ctx: AbstractContextManager[Session]) -> None:
        """Remove an entered container opened elsewhere (the first twin's) with the others,
        at :meth:`close`."""
        with self._lock:
            self.opened.append(ctx)

    def close(self) -> None:
        """Remove every container opened."""
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
    the first in ``first`` (prepared already), every other in a container of ``spares``
    opened and prepared just before it (:meth:`Spares.next`); ``call`` runs one twin's job in
    one container. Returns the answers :func:`merged`. The caller closes ``spares`` (after
    the last twin: removing a container is work a running twin could feel)."""
    jobs = twin_jobs(job)
    answers: list[dict[str, Any]] = []
    spares.started()
    for i, one in enumerate(jobs):
        # Each container opened and prepared only now, after the twins before it: every
        # twin's container is as old when its twin starts, whatever its place.
        here = first if i == 0 else spares.next()
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
