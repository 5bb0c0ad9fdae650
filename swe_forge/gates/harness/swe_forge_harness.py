"""swe-forge's pytest harness plugin, brought into the container from outside the image.

Loaded with ``-p swe_forge_harness`` (its directory on ``PYTHONPATH``). It does two things:

- shuffles the collected tests with the seed in ``SWE_FORGE_ORDER_SEED`` (a plain
  ``random.Random`` shuffle, so it works with any pytest, old ones included);
- records one outcome per test node id (setup, call and teardown combined) and per failed
  collection, and writes them as JSON to ``SWE_FORGE_RESULTS`` when the session ends.

Standalone on purpose: no imports from swe-forge, Python 3.6+ syntax, pytest 3.6+ hooks.
"""

import json
import os
import random
import time

_OUTCOMES = {}
_COLLECT_ERRORS = {}
_DURATIONS = {}
_STARTED = time.time()
_ORDER = []


def pytest_collection_modifyitems(session, config, items):
    seed = os.environ.get("SWE_FORGE_ORDER_SEED")
    if seed is not None:
        items.sort(key=lambda item: item.nodeid)
        random.Random(int(seed)).shuffle(items)
    _ORDER[:] = [item.nodeid for item in items]


def pytest_collectreport(report):
    if report.failed:
        _COLLECT_ERRORS[report.nodeid] = "error"


def _merge(nodeid, when, outcome, wasxfail):
    prev = _OUTCOMES.get(nodeid)
    if when == "setup":
        if outcome == "failed":
            _OUTCOMES[nodeid] = "error"
        elif outcome == "skipped":
            _OUTCOMES[nodeid] = "xfailed" if wasxfail else "skipped"
        return
    if when == "call":
        if outcome == "passed":
            _OUTCOMES[nodeid] = "xpassed" if wasxfail else "passed"
        elif outcome == "failed":
            _OUTCOMES[nodeid] = "failed"
        else:
            _OUTCOMES[nodeid] = "xfailed" if wasxfail else "skipped"
        return
    # teardown: an error there spoils a pass
    if outcome == "failed" and prev in (None, "passed", "xpassed", "skipped"):
        _OUTCOMES[nodeid] = "error"


def pytest_runtest_logreport(report):
    # wasxfail holds the reason, which may be empty: its presence is what counts.
    _merge(report.nodeid, report.when, report.outcome, hasattr(report, "wasxfail"))
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + float(
        getattr(report, "duration", 0.0)
    )


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SWE_FORGE_RESULTS")
    if not path:
        return
    data = {
        "tests": dict(sorted(_OUTCOMES.items())),
        "collect_errors": dict(sorted(_COLLECT_ERRORS.items())),
        "durations": {k: round(v, 4) for k, v in sorted(_DURATIONS.items())},
        "order": _ORDER,
        "exitstatus": int(exitstatus),
        "seconds": round(time.time() - _STARTED, 3),
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
