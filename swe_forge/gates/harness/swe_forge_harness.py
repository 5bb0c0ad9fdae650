"""swe-forge's pytest harness plugin, brought into the container from outside the image.

Loaded with ``-p swe_forge_harness`` (its directory on ``PYTHONPATH``), before any test module
or project code is imported. It runs *inside* the process that runs the code under test, so
nothing it says is trusted on its own: it streams claims to the supervisor (a root process of
the container, another uid, outside this process), which checks them against what it sees
itself (pytest's exit status, the files, the limits). What the plugin does:

- keeps only the selected tests when ``SWE_FORGE_SELECT`` names a selection file (the
  expected tests and the assertion canaries; canaries are marked xfail, strict when asked),
  then shuffles them with the seed in ``SWE_FORGE_ORDER_SEED`` (a plain ``random.Random``
  shuffle, so it works with any pytest);
- records one outcome per test node id with failures sticky: a failed setup, call, teardown
  or *subtest* report fails the test, and no later "passed" report undoes it (pytest 9 reports
  unittest ``subTest`` and ``subtests`` failures before the parent's own "passed");
- fingerprints, at load time, the parts of pytest, pluggy and the builtins that decide an
  outcome and checks them again at every report and at the end (a change is tamper evidence);
- streams one JSON event per line to the file descriptor in ``SWE_FORGE_FD`` (a pipe whose
  read end only the supervisor holds).

Standalone on purpose: no imports from swe-forge, Python 3.6+ syntax, pytest 3.6+ hooks.
"""

import builtins
import hashlib
import json
import os
import random
import sys
import time

import pytest

_OUTCOMES = {}
_DURATIONS = {}
_STARTED = time.time()
_STATE = {"fd": None, "fingerprint": None, "tampered": "", "selection": None}
#: Outcomes that no later report of the same test may overwrite.
_STICKY = ("failed", "error")

# Builtins whose identity an honest run never changes.
_BUILTINS = (
    "len",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "repr",
    "str",
    "int",
    "bool",
    "type",
    "object",
    "Exception",
    "BaseException",
    "AssertionError",
    "SystemExit",
    "KeyboardInterrupt",
    "print",
    "open",
    "all",
    "any",
    "sorted",
    "__import__",
)


def _code_digest(obj, h):
    code = getattr(obj, "__code__", None)
    if code is None:
        func = getattr(obj, "__func__", None)
        code = getattr(func, "__code__", None)
    if code is not None:
        h.update(code.co_code)
        h.update(repr(code.co_names).encode())
        h.update(
            repr([c for c in code.co_consts if isinstance(c, (str, int, float, bytes))]).encode()
        )
    else:
        h.update(repr(type(obj)).encode())


def _core_fingerprint(only=None):
    """Framework internals and builtins, and the member names it covered.

    Taken first when this module is imported (pytest does that while parsing ``-p`` options:
    before any conftest, test module or project code), restricted to the members that exist
    then (pytest adds a few itself while it configures); taken again, in full, once every
    plugin and conftest has configured.
    """
    h = hashlib.sha256()
    covered = set()
    mods = sys.modules
    names = [
        ("_pytest.reports", ("TestReport", "CollectReport", "BaseReport")),
        (
            "_pytest.runner",
            (
                "call_and_report",
                "runtestprotocol",
                "call_runtest_hook",
                "CallInfo",
                "pytest_runtest_makereport",
                "check_interactive_exception",
            ),
        ),
        ("_pytest.python", ("pytest_pyfunc_call", "Function")),
        ("_pytest.main", ("pytest_runtestloop", "Session")),
        ("_pytest.outcomes", ("fail", "skip", "xfail", "exit", "Failed", "Skipped", "Exit")),
        ("_pytest.skipping", ("pytest_runtest_makereport",)),
        ("pluggy._callers", ("_multicall",)),
        ("pluggy.callers", ("_multicall",)),
        ("pluggy._hooks", ("HookCaller", "_HookCaller")),
        ("pluggy.hooks", ("_HookCaller",)),
    ]
    for modname, attrs in names:
        mod = mods.get(modname)
        h.update(modname.encode())
        if mod is None:
            continue
        for attr in attrs:
            obj = getattr(mod, attr, None)
            h.update(attr.encode())
            if obj is None:
                continue
            if isinstance(obj, type):
                members = vars(obj)
                prefix = modname + "." + attr + "."
                # Plain data members are pytest's own bookkeeping (warning flags and the like);
                # code and descriptors are what decide outcomes.
                keys = (
                    [k for k, v in members.items() if callable(v) or hasattr(v, "__get__")]
                    if only is None
                    else [k for k in only if k.startswith(prefix)]
                )
                for key in sorted(keys):
                    member = key if only is None else key.rsplit(".", 1)[1]
                    name = modname + "." + attr + "." + member
                    covered.add(name)
                    h.update(name.encode())
                    if member in members:
                        _code_digest(members[member], h)
                    else:
                        h.update(b"<gone>")
            else:
                _code_digest(obj, h)
    for name in _BUILTINS:
        h.update(name.encode())
        h.update(str(id(getattr(builtins, name, None))).encode())
    this = sys.modules.get(__name__)
    for name in (
        "pytest_runtest_logreport",
        "pytest_collectreport",
        "pytest_sessionfinish",
        "pytest_collection_modifyitems",
        "_merge",
        "_send",
        "_check",
        "_core_fingerprint",
        "_hooks_fingerprint",
    ):
        _code_digest(getattr(this, name, None), h)
    return h.hexdigest(), covered


def _hooks_fingerprint(config):
    """The hook implementations that make and log reports (a new one means tampering)."""
    h = hashlib.sha256()
    try:
        hook = config.pluginmanager.hook
        for hookname in (
            "pytest_runtest_makereport",
            "pytest_runtest_logreport",
            "pytest_pyfunc_call",
            "pytest_runtest_protocol",
            "pytest_report_teststatus",
            "pytest_runtest_call",
        ):
            caller = getattr(hook, hookname, None)
            impls = caller.get_hookimpls() if caller is not None else []
            for impl in impls:
                func = getattr(impl, "function", None)
                h.update(getattr(impl, "plugin_name", "").encode())
                h.update(getattr(func, "__module__", "").encode())
                h.update(getattr(func, "__qualname__", "").encode())
                _code_digest(func, h)
    except Exception:  # an old pytest without get_hookimpls: the rest still counts
        h.update(b"no-hookimpls")
    return h.hexdigest()


def _send(event):
    fd = _STATE["fd"]
    if fd is None:
        return
    data = (json.dumps(event, sort_keys=True) + "\n").encode("utf-8")
    try:
        while data:
            data = data[os.write(fd, data) :]
    except Exception:
        # The supervisor sees the missing events (a test without an outcome counts as failed).
        _STATE["fd"] = None


def _check(config):
    if _STATE["tampered"] or _STATE["fingerprint"] is None:
        return
    if _core_fingerprint(_STATE["covered"])[0] != _STATE["fingerprint"]:
        _STATE["tampered"] = "pytest, pluggy or the builtins changed after the harness loaded"
    elif _STATE.get("full") is not None and _core_fingerprint()[0] != _STATE["full"]:
        _STATE["tampered"] = "pytest or pluggy gained members after the session started"
    elif _STATE.get("hooks") is not None and _hooks_fingerprint(config) != _STATE["hooks"]:
        _STATE["tampered"] = "report hooks changed after the session started"
    if _STATE["tampered"]:
        _send({"event": "tamper", "detail": _STATE["tampered"]})


_CONFIG = {}


def _open_channel():
    fd = os.environ.get("SWE_FORGE_FD")
    if not fd or not fd.isdigit():
        return
    try:
        os.fstat(int(fd))
        # Keep the descriptor out of programs the tests start (a fork still has it; the
        # supervisor stops listening when pytest exits).
        os.set_inheritable(int(fd), False)
        _STATE["fd"] = int(fd)
    except OSError:
        _STATE["fd"] = None


def _load_selection():
    path = os.environ.get("SWE_FORGE_SELECT")
    if not path:
        return None
    with open(path) as fh:
        data = json.load(fh)
    return {
        "tests": set(data.get("tests") or ()),
        "canaries": set(data.get("canaries") or ()),
        "strict": bool(data.get("strict", True)),
    }


def _configure(config):
    # Last: pytest's own plugins add members to its classes while they configure.
    _CONFIG["config"] = config
    _check(config)
    _STATE["full"] = _core_fingerprint()[0]
    _STATE["hooks"] = _hooks_fingerprint(config)


if hasattr(pytest, "hookimpl"):
    pytest_configure = pytest.hookimpl(trylast=True)(_configure)
else:  # pytest < 2.8: the old marker spelling
    pytest_configure = pytest.mark.trylast(_configure)


def pytest_collection_modifyitems(session, config, items):
    selection = _STATE["selection"]
    if selection is not None:
        wanted = selection["tests"] | selection["canaries"]
        keep = [item for item in items if item.nodeid in wanted]
        dropped = [item for item in items if item.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        for item in keep:
            if item.nodeid in selection["canaries"]:
                # A canary's perturbed assertion must fail for a correct implementation.
                item.add_marker(pytest.mark.xfail(strict=selection["strict"], reason="perturbed"))
        items[:] = keep
    seed = os.environ.get("SWE_FORGE_ORDER_SEED")
    if seed is not None:
        items.sort(key=lambda item: item.nodeid)
        random.Random(int(seed)).shuffle(items)
    _send({"event": "collected", "count": len(items)})
    _check(config)


def pytest_collectreport(report):
    if report.failed:
        _send({"event": "collect_error", "nodeid": report.nodeid})


def _merge(nodeid, when, outcome, wasxfail, subtest):
    prev = _OUTCOMES.get(nodeid)
    if prev in _STICKY and outcome != "failed":
        return
    if subtest:
        # A subtest only ever spoils its test; its passes say nothing about the test itself.
        if outcome == "failed":
            _OUTCOMES[nodeid] = "failed"
        return
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
    if outcome == "failed" and prev not in _STICKY:
        _OUTCOMES[nodeid] = "error"


def pytest_runtest_logreport(report):
    # wasxfail holds the reason, which may be empty: its presence is what counts. Subtest
    # reports (pytest 9's SubtestReport, pytest-subtests' SubTestReport) carry a context.
    subtest = type(report).__name__ != "TestReport" or hasattr(report, "context")
    _merge(report.nodeid, report.when, report.outcome, hasattr(report, "wasxfail"), subtest)
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + float(
        getattr(report, "duration", 0.0)
    )
    if report.when == "teardown" and not subtest:
        config = _CONFIG.get("config")
        if config is not None:
            _check(config)
        _send(
            {
                "event": "test",
                "nodeid": report.nodeid,
                "outcome": _OUTCOMES.get(report.nodeid, "error"),
                "seconds": round(_DURATIONS.get(report.nodeid, 0.0), 4),
            }
        )


def pytest_sessionfinish(session, exitstatus):
    config = _CONFIG.get("config")
    if config is not None:
        _check(config)
    _send(
        {
            "event": "end",
            "exitstatus": int(exitstatus),
            "testsfailed": int(getattr(session, "testsfailed", 0) or 0),
            "testscollected": int(getattr(session, "testscollected", 0) or 0),
            "tampered": _STATE["tampered"],
            "seconds": round(time.time() - _STARTED, 3),
        }
    )


# At import: the channel first, then the baseline, before any code under test can run.
_open_channel()
_STATE["selection"] = _load_selection()
_STATE["fingerprint"], _STATE["covered"] = _core_fingerprint()
_send({"event": "hello", "pid": os.getpid(), "python": sys.version.split()[0]})
