"""Tests that read the wall clock: a task whose outcome may change with the date it runs on.

A test written in 2021 that compares against "this year", or a certificate or a token that
expires, passes on the PR's day and fails years later (or the reverse), while its task claims
to be reproducible. The tasks are not run under a frozen clock (a clock set back also changes
every file time the kernel stamps against it); instead, admission records where the tests a
task's test patch touches read the clock, and whether they control it themselves (freezegun,
time-machine), in ``audit.clock``, so a user can filter on it.

Read with :mod:`ast` from the post-patch source; nothing is run. Python only.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from swe_forge import pyast

#: (owner name, attribute) calls that read the calendar date, and the most arguments with
#: which they still do (``time.localtime(secs)`` converts a given time; ``datetime.now(tz)``
#: reads the clock). ``time.strftime`` reads it with exactly one argument (the format).
#: ``time.time()`` is left out: tests use it to measure durations, which no date changes.
CLOCK_CALLS: dict[tuple[str, str], int] = {
    ("datetime", "now"): 1,
    ("datetime", "today"): 0,
    ("datetime", "utcnow"): 0,
    ("date", "today"): 0,
    ("time", "localtime"): 0,
    ("time", "gmtime"): 0,
    ("time", "ctime"): 0,
    ("time", "strftime"): 1,
}
#: Modules whose use means the test sets the clock itself.
CLOCK_CONTROL = ("freezegun", "time_machine", "libfaketime", "pytest_freezegun", "freezer")
#: Sites kept per task (the count is kept in full).
MAX_SITES = 20


def _owner(node: ast.expr) -> str:
    # datetime.datetime.now -> "datetime"; dt.now -> "dt" (an alias is matched by its name).
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def clock_reads(sources: Mapping[str, bytes]) -> dict[str, Any]:
    """Where ``sources`` (path -> Python source) read the wall clock, and whether they control it.

    Returns ``{"reads": N, "sites": ["path:line owner.attr()", ...], "controlled": bool,
    "unparsed": [paths]}``, sorted, at most :data:`MAX_SITES` sites.
    """
    sites: list[tuple[str, int, str]] = []
    controlled = False
    unparsed: list[str] = []
    aliases = {"datetime": "datetime", "date": "date", "time": "time"}
    for path in sorted(sources):
        try:
            tree = pyast.parse(sources[path])
        except (SyntaxError, ValueError):
            unparsed.append(path)
            continue
        local = dict(aliases)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names]
                module = node.module if isinstance(node, ast.ImportFrom) else ""
                if any(n.split(".")[0] in CLOCK_CONTROL for n in [*names, module or ""]):
                    controlled = True
                for a in node.names:
                    if a.asname and a.name.split(".")[-1] in aliases:
                        local[a.asname] = a.name.split(".")[-1]
            elif isinstance(node, ast.Name) and node.id in ("freezer", "time_machine"):
                controlled = True  # the pytest-freezer / time-machine fixtures
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = local.get(_owner(node.func.value), "")
                limit = CLOCK_CALLS.get((owner, node.func.attr))
                given = len(node.args) + len(node.keywords)
                if limit is None or given > limit:
                    continue
                if (owner, node.func.attr) == ("time", "strftime") and given != 1:
                    continue
                sites.append((path, node.lineno, f"{owner}.{node.func.attr}()"))
    return {
        "reads": len(sites),
        "sites": [f"{p}:{line} {call}" for p, line, call in sorted(sites)[:MAX_SITES]],
        "controlled": controlled,
        "unparsed": sorted(unparsed),
    }
