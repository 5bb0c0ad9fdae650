"""swe-forge's pytest harness plugin, brought into the container from outside the image.

Loaded with ``-p swe_forge_harness`` (its directory on ``PYTHONPATH``), before any test module
or project code is imported. It runs *inside* the process that runs the code under test, so
nothing it says is trusted on its own: it streams claims to the supervisor (a root process of
the container, another uid, outside this process), which checks them against what it sees
itself (pytest's exit status, the files, the limits). What the plugin does:

- at import, before any code under test exists, reads its *secret* from the pipe named by
  ``SWE_FORGE_KEY_FD`` and closes it: a per-run key, the tests to keep, the assertion canaries
  among them, and what the import gate allows. The secret lives only in closures, never in a
  file, a module global or the environment;
- streams one event per line to the pipe in ``SWE_FORGE_FD`` (only the supervisor reads it),
  each numbered and authenticated with an HMAC of the key, so code that writes to the pipe
  cannot add, drop or reorder a claim without being seen;
- keeps only the selected tests, shuffled with the seed in ``SWE_FORGE_ORDER_SEED`` (when the
  secret says ``order: natural``: the real tests in collection order, the canaries put at
  random places among them);
- records one outcome per test node id with failures sticky: a failed setup, call, teardown or
  *subtest* report fails the test, and no later "passed" report undoes it (pytest 9 reports
  unittest ``subTest`` and ``subtests`` failures before the parent's own "passed");
- inverts the canaries' reports for pytest's own counting (a canary that fails counts as a
  pass, one that passes counts as a failure), so an honest run exits 0 and nothing on a
  collected item marks it as a canary; the raw outcome goes to the supervisor;
- reads the test files the run selects (``sources`` in the secret) at import, before any
  code under test exists, and has the supervisor close them to the tests' user before pytest
  goes on: pytest imports them from the harness's copy (assertions rewritten as pytest would),
  so code that the tests import, even at collection, finds nothing on disk to read;
- gates imports: a Python module loaded from a writable place (the work tree, /tmp, $HOME)
  whose content the supervisor did not see before the run is scanned for capabilities like
  the patch was, and refused (with a tamper event) if it uses more than the task allows;
- caps its own data memory (``RLIMIT_DATA``) below what the container has left, so a test
  that exhausts memory fails with a ``MemoryError`` instead of the kernel killing the run;
- fingerprints, at load time, the parts of pytest, pluggy and the builtins that decide an
  outcome and checks them again at every report and at the end; checks that a test item's
  ``runtest`` was not replaced on the item.

Standalone on purpose: no imports from swe-forge, Python 3.6+ syntax, pytest 3.6+ hooks.
"""

import builtins
import contextlib
import gc
import hashlib
import hmac
import json
import os
import random
import signal
import sys
import threading
import time

import pytest

_OUTCOMES = {}
_DURATIONS = {}
# First failure message per node id (informational: never part of a verdict).
_MESSAGES = {}
_STARTED = time.time()
_STATE = {"fingerprint": None, "tampered": "", "reported": 0}
#: Outcomes that no later report of the same test may overwrite.
_STICKY = ("failed", "error")
#: Where the tests can write: code loaded from there is checked by the import gate.
_WRITABLE = ("/testbed/", "/tmp/", "/var/tmp/", "/home/", "/dev/shm/", "/run/")

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
                "_update_current_test_var",
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
        "_logreport",
        "pytest_collectreport",
        "pytest_sessionfinish",
        "pytest_collection_modifyitems",
        "_merge",
        "_send",
        "_tamper",
        "_check",
        "_item_check",
        "_is_subtest",
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


def _read_secret():
    """The run's secret, read once from its pipe (then closed)."""
    fd = os.environ.pop("SWE_FORGE_KEY_FD", "")
    if not fd.isdigit():
        return {}
    chunks = []
    try:
        while True:
            chunk = os.read(int(fd), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        with contextlib.suppress(OSError):
            os.close(int(fd))
    try:
        return json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return {}


#: The pipe on which the supervisor answers "hello" once it has closed the test files to the
#: tests' user (read at import, before any code under test exists).
_ACK = {"fd": None}
_ack_fd = os.environ.pop("SWE_FORGE_ACK_FD", "")
if _ack_fd.isdigit():
    _ACK["fd"] = int(_ack_fd)


def _wait_for_the_files():
    """Wait (boundedly) until the supervisor says the test files are out of reach: the
    harness holds their text, nothing the code under test does may read them."""
    fd = _ACK["fd"]
    _ACK["fd"] = None
    if fd is None:
        return
    import select

    try:
        ready, _, _ = select.select([fd], [], [], 60)
        if ready:
            os.read(fd, 1)
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def _build():
    """The harness's private parts, closed over the secret (nothing reachable by name)."""
    secret = _read_secret()
    key = bytes.fromhex(secret.get("key", "")) if secret.get("key") else b""
    fd_text = os.environ.pop("SWE_FORGE_FD", "")
    channel = [int(fd_text)] if fd_text.isdigit() else [None]
    if channel[0] is not None:
        try:
            os.fstat(channel[0])
            # Out of programs the tests start (a fork still has it: its lines carry no key).
            os.set_inheritable(channel[0], False)
        except OSError:
            channel[0] = None
    seq = [0]
    selected = secret.get("tests")
    tests = frozenset(selected or ())
    canaries = frozenset(secret.get("canaries") or ())
    strict = bool(secret.get("strict", True))
    digests = frozenset(secret.get("digests") or ())
    allowance = frozenset(secret.get("allowance") or ())
    gate_imports = bool(secret.get("gate_imports"))
    # Where code may appear during a run: the judge's container's writable mounts, unless
    # the secret names others (a test of the harness outside a container).
    writable = tuple(secret.get("writable") or _WRITABLE)
    canary_raw = {}
    # The test files' text, read now (before any code under test exists: the supervisor
    # closes the files once the harness says hello) and handed to pytest's import of each
    # once; nothing else keeps it.
    sources = {}
    compiled = {}
    for rel in secret.get("sources") or ():
        full = os.path.abspath(str(rel))
        try:
            with open(full, "rb") as fh:
                sources[full] = fh.read()
        except OSError:
            continue

    def source_code(origin, loader):
        """The code of a test file from the harness's copy (None when it holds none), its
        assertions rewritten when pytest's rewriting hook would have loaded it."""
        full = os.path.abspath(origin) if origin else ""
        if full in compiled:
            # Imported again (a reload): the same code, the text is long gone.
            return compiled[full]
        data = sources.pop(full, None)
        if data is None:
            return None
        import ast

        tree = ast.parse(data, filename=origin)
        if type(loader).__name__ == "AssertionRewritingHook":
            rewrite = None
            with contextlib.suppress(Exception):
                from _pytest.assertion.rewrite import rewrite_asserts as rewrite
            if rewrite is not None:
                config = getattr(loader, "config", None)
                # pytest 5+ takes the source too; pytest 3-4 only the tree, path and config.
                if rewrite.__code__.co_argcount >= 4:
                    rewrite(tree, data, origin, config)
                else:
                    rewrite(tree, origin, config)
        compiled[full] = compile(tree, origin, "exec", dont_inherit=True)
        return compiled[full]

    def holds(origin):
        if not origin:
            return False
        full = os.path.abspath(origin)
        return full in sources or full in compiled

    def send(event):
        fd = channel[0]
        if fd is None:
            return
        event = dict(event)
        event["seq"] = seq[0]
        seq[0] += 1
        body = json.dumps(event, sort_keys=True, separators=(",", ":"))
        mac = hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()
        data = (mac + " " + body + "\n").encode("utf-8")
        try:
            while data:
                data = data[os.write(fd, data) :]
        except Exception:
            # The supervisor sees the missing events (a test without an outcome has failed).
            channel[0] = None

    def select(items, config):
        if selected is None:
            return
        wanted = tests | canaries
        keep = [item for item in items if item.nodeid in wanted]
        dropped = [item for item in items if item.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    def count_as(report, merged):
        """What pytest itself counts for a canary's report (the raw outcome is ours)."""
        if report.nodeid not in canaries:
            return
        if report.when == "call" or _is_subtest(report):
            canary_raw[report.nodeid] = merged
            if report.outcome == "failed":
                report.outcome = "passed"
            elif strict and report.when == "call" and merged not in ("failed", "error"):
                # A perturbed assertion that held: pytest must fail the run.
                report.outcome = "failed"

    def import_allowed(origin):
        """None when a module file may be loaded, else why not."""
        if not gate_imports or not origin or not origin.startswith(writable):
            return None
        try:
            with open(origin, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() in digests:
            return None
        if not origin.endswith(".py"):
            return "a compiled module that was not there before the run: " + origin
        scanner = _scanner()
        if scanner is None:
            return "cannot scan " + origin
        found = scanner.scan(data, origin)
        extra = sorted(set(found.get("caps") or ()) - allowance)
        if found.get("error") and not str(found["error"]).startswith("SyntaxError"):
            extra.append("unscannable")
        if extra:
            return "{} appeared during the run and uses {}".format(origin, ", ".join(extra))
        return None

    try:
        test_timeout = max(0.0, float(secret.get("test_timeout") or 0))
    except (TypeError, ValueError):
        test_timeout = 0.0
    first = bool(secret.get("canaries_first"))
    natural = secret.get("order") == "natural"

    def arrange(items, seed):
        # "natural": the real tests in the order pytest collects them (the order the
        # project's own CI runs them in: suites whose tests share state pass in it), the
        # canaries each put at a random place among them, so their position says nothing.
        # Otherwise everything shuffled (the gates, to find tests that depend on order).
        rng = random.Random(seed)
        if natural:
            out = [i for i in items if i.nodeid not in canaries]
            for item in sorted((i for i in items if i.nodeid in canaries), key=lambda i: i.nodeid):
                out.insert(rng.randrange(len(out) + 1), item)
            items[:] = out
        else:
            items.sort(key=lambda item: item.nodeid)
            rng.shuffle(items)

    def order(items):
        # Calibration only: every canary before every real test, the worst case for state a
        # canary leaves behind (it stops its test before the test's own clean-up).
        if first and canaries:
            items[:] = [i for i in items if i.nodeid in canaries] + [
                i for i in items if i.nodeid not in canaries
            ]

    return (
        send,
        select,
        count_as,
        import_allowed,
        test_timeout,
        order,
        arrange,
        source_code,
        holds,
    )


def _scanner():
    try:
        import swe_forge_capabilities

        return swe_forge_capabilities
    except Exception:
        return None


def _is_subtest(report):
    # pytest 9's SubtestReport, pytest-subtests' SubTestReport: both carry a context.
    return type(report).__name__ != "TestReport" or hasattr(report, "context")


class _ImportGate:
    """First on ``sys.meta_path``: asks the finders after it, then checks where the module
    comes from before it can run."""

    def find_spec(self, name, path=None, target=None):
        finders = sys.meta_path
        try:
            start = finders.index(self) + 1
        except ValueError:
            return None
        for finder in finders[start:]:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(name, path, target)
            if spec is None and _by_file(finder, path):
                # pytest 8.3 to 9.0 in --import-mode=importlib ask the assertion-rewrite hook
                # with the module's own file beside its package root (pytest #12659) and
                # every other finder, this gate too, with the root alone: ask the hook as
                # pytest would, or pytest asks it directly and its loader reads the closed file.
                file = os.path.join(str(path[0]), *name.split(".")) + ".py"
                if os.path.isfile(file):
                    spec = find(name, [str(path[0]), file], target)
            if spec is None:
                continue
            origin = getattr(spec, "origin", None)
            if _PRIVATE[8](origin):
                # A test file: closed on disk, its text is the harness's.
                import importlib.util

                return importlib.util.spec_from_file_location(
                    name,
                    origin,
                    loader=_HeldSource(spec.loader, origin),
                    submodule_search_locations=spec.submodule_search_locations,
                )
            why = _PRIVATE[3](origin)
            if why:
                _tamper(why)
                raise ImportError("refused by the judge: " + why)
            return spec
        return None


def _by_file(finder, path):
    """Is ``finder`` pytest's assertion-rewrite hook, asked with one path entry?"""
    module = getattr(type(finder), "__module__", "")
    return module == "_pytest.assertion.rewrite" and isinstance(path, list) and len(path) == 1


class _HeldSource:
    """Loads a test file from the text the harness read before the code under test existed
    (the file itself is closed by then). No ``get_source``/``get_data``: the text is not to
    be had from the module either."""

    def __init__(self, inner, origin):
        self._inner = inner
        self._origin = origin

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = _PRIVATE[7](self._origin, self._inner)
        if code is None:
            raise ImportError("swe-forge: no text held for " + self._origin)
        exec(code, module.__dict__)


def _tamper(detail):
    if not _STATE["tampered"]:
        _STATE["tampered"] = detail
    _PRIVATE[0]({"event": "tamper", "detail": detail[:500]})


def _send(event):
    _PRIVATE[0](event)


def _check(config):
    if _STATE["tampered"] or _STATE["fingerprint"] is None:
        return
    if _core_fingerprint(_STATE["covered"])[0] != _STATE["fingerprint"]:
        _STATE["tampered"] = "pytest, pluggy or the builtins changed after the harness loaded"
    elif _STATE.get("full") is not None and _core_fingerprint()[0] != _STATE["full"]:
        _STATE["tampered"] = "pytest or pluggy gained members after the session started"
    elif _STATE.get("hooks") is not None and _hooks_fingerprint(config) != _STATE["hooks"]:
        _STATE["tampered"] = "report hooks changed after the session started"
    elif _GATE not in sys.meta_path:
        _STATE["tampered"] = "the import gate was removed after the harness loaded"
    if _STATE["tampered"]:
        _send({"event": "tamper", "detail": _STATE["tampered"]})


_CONFIG = {}


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
    _PRIVATE[1](items, config)
    seed = os.environ.get("SWE_FORGE_ORDER_SEED")
    if seed is not None:
        _PRIVATE[6](items, int(seed))
    _PRIVATE[5](items)
    _send({"event": "collected", "count": len(items)})
    _check(config)


def _item_check(item):
    # The item's own test code, not something put on the item after collection.
    if "runtest" in vars(item):
        _tamper(f"{item.nodeid}: runtest was replaced on the item")


if hasattr(pytest, "hookimpl"):
    pytest_runtest_call = pytest.hookimpl(tryfirst=True)(_item_check)
else:
    pytest_runtest_call = pytest.mark.tryfirst(_item_check)


class TestTimeout(Exception):
    """Raised in a test that ran past the per-test time limit (it fails; the run goes on)."""

    __test__ = False


class TestTimeoutAgain(BaseException):
    """Raised again if a test caught :class:`TestTimeout` and went on."""

    __test__ = False


def _protocol(item, nextitem):
    # A per-test wall clock: a test that hangs (a bug that blocks on a pipe, say) fails on
    # its own instead of timing out the whole run and every other test with it. SIGALRM
    # interrupts a blocking call in the main thread; the alarm repeats every few seconds so
    # code that catches the first one does not hang the run either.
    limit = _PRIVATE[4]
    usable = (
        limit > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        _memory_reserve()
        try:
            yield
        finally:
            _memory_forget()
        return

    fired = [0]

    def expired(signum, frame):
        fired[0] += 1
        text = f"swe-forge: {item.nodeid} ran past the per-test limit of {limit:g} s"
        # The first as an Exception (a test's own error handling sees an ordinary failure);
        # the next ones past `except Exception:` (pytest still reports them as a failure).
        raise (TestTimeout if fired[0] == 1 else TestTimeoutAgain)(text)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit, 5.0)
    _memory_reserve()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _memory_forget()


if hasattr(pytest, "hookimpl"):
    pytest_runtest_protocol = pytest.hookimpl(hookwrapper=True)(_protocol)
else:
    pytest_runtest_protocol = pytest.mark.hookwrapper(_protocol)


#: What the test process leaves to the rest of the container (the supervisor, files on the
#: tmpfs mounts, the programs the tests start) when it caps its own memory: a share of the
#: container's limit, at least this much.
_MEMORY_MARGIN = 256 << 20
#: Address space held back while a test runs and given up when it runs out of memory, so
#: pytest can still build and report that test's failure.
_MEMORY_RESERVE = 16 << 20
_MEMORY = {"cap": None, "reserve": None, "exhausted": False}


def _cgroup_memory():
    """``(limit, usage)`` of this container's memory cgroup in bytes (v2, then v1), or None
    when there is no limit. The usage leaves out the page cache of files (reclaimed when
    memory runs short, so never what kills a test); tmpfs pages stay in."""
    for limit_path, usage_path, stat_path in (
        (
            "/sys/fs/cgroup/memory.max",
            "/sys/fs/cgroup/memory.current",
            "/sys/fs/cgroup/memory.stat",
        ),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
            "/sys/fs/cgroup/memory/memory.stat",
        ),
    ):
        try:
            with open(limit_path) as fh:
                raw = fh.read().strip()
            with open(usage_path) as fh:
                usage = int(fh.read().strip())
        except (OSError, ValueError):
            continue
        if not raw.isdigit() or int(raw) >= 1 << 60:  # "max", or v1's "unlimited"
            return None
        stat = {}
        try:
            with open(stat_path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    stat[key] = int(value)
        except (OSError, ValueError):
            pass
        cache = sum(
            stat.get("total_" + k, stat.get(k, 0)) for k in ("active_file", "inactive_file")
        )
        return int(raw), max(0, usage - cache)
    return None


def _vm_data():
    """This process's data segment in bytes (what ``RLIMIT_DATA`` counts), 0 if unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _memory_capped():
    """Cap this process's data memory below what the container has left, before any code
    under test exists; return the cap in bytes (None: left alone).

    A test that exhausts memory otherwise meets the container's limit: the kernel kills the
    whole pytest process, every test's outcome with it, and the run is lost as a resource
    limit. Under ``RLIMIT_DATA`` its allocation fails instead: a ``MemoryError`` in that test,
    which fails, and the run goes on. Virtual, not resident, memory is counted, so the cap
    bites before the container's limit does. The hard limit is lowered too: the tests' user
    cannot raise it again (programs the tests start inherit it). ``SWE_FORGE_TEST_MEMORY``
    (bytes this process may still take), set by whoever starts pytest, replaces the cgroup's
    figures."""
    try:
        budget = int(os.environ.get("SWE_FORGE_TEST_MEMORY") or 0)
    except ValueError:
        budget = 0
    if budget <= 0:
        found = _cgroup_memory()
        if found is None:
            return None
        limit, usage = found
        budget = limit - usage - max(_MEMORY_MARGIN, limit // 8)
        if budget <= 0:
            return None
    before = set(sys.modules)
    try:
        import resource

        cap = _vm_data() + budget + _MEMORY_RESERVE
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY and soft <= cap:
            return None
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
        return cap
    except (ImportError, OSError, ValueError):
        return None
    finally:
        # Nothing the harness imported is the tests' to find already imported.
        for name in set(sys.modules) - before:
            sys.modules.pop(name, None)


def _memory_reserve():
    # ``bytes(n)`` is calloc'd: address space that counts against the cap, no resident page.
    if _MEMORY["cap"] and _MEMORY["reserve"] is None:
        with contextlib.suppress(MemoryError):
            _MEMORY["reserve"] = bytes(_MEMORY_RESERVE)


def _memory_forget():
    """After a test that ran out of memory: give what it took back to the next tests.

    pytest keeps the failure for post-mortem debugging (``sys.last_traceback`` holds the
    test's frames and so everything it allocated), and its traceback and pytest's call record
    form a cycle that only the cyclic collector frees, which no small allocation triggers."""
    if not _MEMORY["exhausted"]:
        return
    _MEMORY["exhausted"] = False
    if isinstance(getattr(sys, "last_value", None), MemoryError):
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            with contextlib.suppress(AttributeError):
                delattr(sys, name)
    gc.collect()


def _makereport(item, call):
    if _MEMORY["cap"] and call.excinfo is not None and call.excinfo.errisinstance(MemoryError):
        # The test still holds what it took: the reserve is the room left to report it.
        _MEMORY["reserve"] = None
        _MEMORY["exhausted"] = True
    yield


if hasattr(pytest, "hookimpl"):
    pytest_runtest_makereport = pytest.hookimpl(hookwrapper=True, tryfirst=True)(_makereport)
else:
    pytest_runtest_makereport = pytest.mark.hookwrapper(pytest.mark.tryfirst(_makereport))


def _message(report):
    # What a reader of the failure sees first: the crash line (an assertion's message), else
    # the end of the long report. Bounded: it travels on the channel and into manifests.
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None)
    if not isinstance(text, str) or not text.strip():
        try:
            text = str(report.longrepr or "")[-_MESSAGE_CHARS:]
        except Exception:
            text = ""
    return text.strip()[:_MESSAGE_CHARS]


_MESSAGE_CHARS = 1000


def pytest_collectreport(report):
    if report.failed:
        _send({"event": "collect_error", "nodeid": report.nodeid, "message": _message(report)})


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


def _logreport(report):
    # A wrapper, so this runs before every implementation, pytest's own session counting
    # included: the raw outcome is merged, then a canary's report is inverted for pytest.
    # wasxfail holds the reason, which may be empty: its presence is what counts.
    subtest = _is_subtest(report)
    _merge(report.nodeid, report.when, report.outcome, hasattr(report, "wasxfail"), subtest)
    if report.outcome == "failed" and report.nodeid not in _MESSAGES:
        _MESSAGES[report.nodeid] = _message(report)
    _PRIVATE[2](report, _OUTCOMES.get(report.nodeid))
    yield
    _DURATIONS[report.nodeid] = _DURATIONS.get(report.nodeid, 0.0) + float(
        getattr(report, "duration", 0.0)
    )
    if report.when == "teardown" and not subtest:
        config = _CONFIG.get("config")
        if config is not None:
            _check(config)
        _STATE["reported"] += 1
        event = {
            "event": "test",
            "nodeid": report.nodeid,
            "outcome": _OUTCOMES.get(report.nodeid, "error"),
            "seconds": round(_DURATIONS.get(report.nodeid, 0.0), 4),
        }
        if event["outcome"] in ("failed", "error") and _MESSAGES.get(report.nodeid):
            event["message"] = _MESSAGES[report.nodeid]
        _send(event)


# Around everything: pytest's own session counts failures from the reports, after the
# canaries' inversion.
if hasattr(pytest, "hookimpl"):
    pytest_runtest_logreport = pytest.hookimpl(hookwrapper=True, tryfirst=True)(_logreport)
else:
    pytest_runtest_logreport = pytest.mark.hookwrapper(pytest.mark.tryfirst(_logreport))


def pytest_sessionfinish(session, exitstatus):
    _STATE["session"] = session
    config = _CONFIG.get("config")
    if config is not None:
        _check(config)
    _send(
        {
            "event": "end",
            "exitstatus": int(exitstatus),
            "testsfailed": int(getattr(session, "testsfailed", 0) or 0),
            "testscollected": int(getattr(session, "testscollected", 0) or 0),
            "reported": _STATE["reported"],
            "tampered": _STATE["tampered"],
            "seconds": round(time.time() - _STARTED, 3),
        }
    )


def _unconfigure(config):
    # Once pytest is done (every plugin unconfigured: this hook runs last), the process ends
    # here with pytest's own exit status. A test that left a non-daemon thread blocked (a
    # writer waiting on a pipe nobody reads, after the per-test limit failed it) would keep
    # the interpreter from ever exiting, and the whole run would time out with every result
    # in hand; and the interpreter's own tear-down (every module, atexit hooks of the code
    # under test) decides nothing we judge but cost each run 20-40 ms, paid once per twin.
    session = _STATE.get("session")
    if session is None:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(int(getattr(session, "exitstatus", 1) or 0))


if hasattr(pytest, "hookimpl"):
    pytest_unconfigure = pytest.hookimpl(trylast=True)(_unconfigure)
else:
    pytest_unconfigure = pytest.mark.trylast(_unconfigure)


def _memory_closed():
    """Make this process not dumpable, before any code under test exists.

    A process may read its own memory through ``/proc/self/mem`` (a path built at run time,
    opened with plain ``open``): pytest's items and their node ids, which spell a
    parametrised expected value the same in every twin (``test_round[250-2]``), the
    parameters, this harness's secret. The kernel makes a process's ``/proc/<pid>`` files
    root's once it is not dumpable, so ``open`` is refused to the tests' user; nothing but
    ``prctl`` (native code, a capability the gate refuses) makes it dumpable again, and
    programs the tests start cannot read this one's memory either. The supervisor checks
    the owner of ``/proc/<pid>/mem`` when this process says hello."""
    before = set(sys.modules)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:  # the supervisor's check names what is left open
        pass
    finally:
        # ctypes is nobody's to find already imported (the gate sees an import of it).
        for name in set(sys.modules) - before:
            if name == "ctypes" or name.startswith(("ctypes.", "_ctypes")):
                sys.modules.pop(name, None)


def _current_test_var(item, when):
    """pytest's ``PYTEST_CURRENT_TEST``, without the test's identity.

    pytest puts the running test's node id in the environment, which any code can read
    without naming pytest; a parametrised id (``test_round[250-2]``) spells the expected
    value, the same in every decoy twin. The variable stays (code checks that it runs under
    pytest), its value names no test.
    """
    if when:
        os.environ["PYTEST_CURRENT_TEST"] = "swe-forge::test (" + str(when) + ")"
    else:
        os.environ.pop("PYTEST_CURRENT_TEST", None)


def _hide_the_current_test():
    runner = sys.modules.get("_pytest.runner")
    if runner is None:
        with contextlib.suppress(Exception):
            import _pytest.runner as runner
    if runner is not None and hasattr(runner, "_update_current_test_var"):
        runner._update_current_test_var = _current_test_var


# At import, before any code under test can run: this process's memory capped and closed, the
# secret, the channel, the import gate, the test's identity hidden, then the baseline fingerprint.
_MEMORY["cap"] = _memory_capped()
_memory_closed()
_PRIVATE = _build()
_GATE = _ImportGate()
sys.meta_path.insert(0, _GATE)
_hide_the_current_test()
_STATE["fingerprint"], _STATE["covered"] = _core_fingerprint()
_send({"event": "hello", "pid": os.getpid(), "python": sys.version.split()[0]})
# The supervisor closes the test files on hello (the harness holds their text): from here on,
# conftests, plugins and the code under test they import find nothing to read.
_wait_for_the_files()
