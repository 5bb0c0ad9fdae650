"""The verifier with the real engine: gold patches score 1.0; every attack scores 0.

One attack (at least) per category of ../shared/design/THREATS.md and per class of issue 10.
Each asserts its status, reward 0 and a named violation or reason; after each, the gold patch
of the same task must still score 1.0, and the host must be unaffected (no leftover
containers, no stray files).

Three layers are attacked separately:

- the static guards (paths, modes, runner files): ``invalid_patch`` before anything runs;
- the capability gate (what the patch's code newly *can* do, by syntax tree), on the tasks as
  admitted: ``invalid_patch`` with a ``capability_*`` violation;
- the runtime defences (another uid judging, locked and watched files, exit status against the
  session, assertion canaries, limits), on a *permissive* copy of the task whose base code is
  said to use every capability already, so the gate lets everything through and only the
  runtime stands between the attack and a reward.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.ecosystems.base import touched_paths
from swe_forge.ecosystems.python.adapter import PythonEcosystem
from swe_forge.ecosystems.python.runner import PytestRunner, protect_spec
from swe_forge.engine import Engine, Limits
from swe_forge.gates.harness.swe_forge_capabilities import CAPABILITIES
from swe_forge.gates.runner import run_tests
from swe_forge.git.repo import GitRepository
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest, VerifyResult
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import ExampleImages, ExampleTasks

TASK = "swe-forge__textkit-1"  # wrap(): `>=` should be `>`; F2P asserts with ==
RAISES_TASK = "swe-forge__textkit-5"  # truncate(): one F2P test uses pytest.raises
FILES = (
    "src/textkit/wrap.py",
    "src/textkit/__init__.py",
    "pyproject.toml",
    "tests/test_wrap.py",
)


@pytest.fixture(scope="module")
def tasks(example_tasks: ExampleTasks) -> dict[str, TaskManifest]:
    return {
        t.instance_id: t
        for t in (
            TaskManifest.from_dict(json.loads(x))
            for x in example_tasks.tasks.read_text().splitlines()
        )
    }


def permissive(task: TaskManifest) -> TaskManifest:
    """The task as if its base code already used every capability (the gate allows all)."""
    caps = {"base": sorted(CAPABILITIES), "gold": [], "scope": "repository"}
    return replace(task, audit={**task.audit, "capabilities": caps})


@pytest.fixture(scope="module")
def verifier(engine: Engine) -> Verifier:
    limits = Limits(
        memory="512m", pids=128, cpus=1.0, nofile=512, fsize_bytes=64 << 20, output_bytes=1 << 20
    )
    settings = VerifySettings(
        timeout_seconds=25,
        limits=limits,
        tmpfs_size="64m",
        testbed_size="128m",
        inodes=20000,
        infra_retries=0,
    )
    return Verifier(engine, PathClassifier(load_config().classify), settings)


@pytest.fixture(scope="module")
def base_file(example_images: ExampleImages, tasks: dict[str, TaskManifest]) -> dict[str, str]:
    repo = GitRepository(example_images.repo)
    task = tasks[TASK]
    out = {}
    for path in FILES:
        got = repo.blob_at(task.base_commit, path)
        assert got is not None, path
        out[path] = got[1].decode()
    return out


def diff(files: dict[str, tuple[str | None, str | None]], context: int = 3) -> str:
    """A git-style patch from (old, new) contents; None means absent."""
    out = []
    for path, (old, new) in files.items():
        a = (old or "").splitlines(keepends=True)
        b = (new or "").splitlines(keepends=True)
        head = f"diff --git a/{path} b/{path}\n"
        if old is None:
            head += "new file mode 100644\n"
        elif new is None:
            head += "deleted file mode 100644\n"
        body = "".join(
            difflib.unified_diff(
                a,
                b,
                "/dev/null" if old is None else f"a/{path}",
                "/dev/null" if new is None else f"b/{path}",
                n=context,
            )
        )
        out.append(head + body)
    return "".join(out)


def append_to(base: dict[str, str], path: str, code: str) -> str:
    return diff({path: (base[path], base[path] + "\n" + code)})


def new_file(path: str, text: str) -> str:
    return diff({path: (None, text)})


# ---------------------------------------------------------------------------------------------
# 1. Static guards: name -> (patch builder, expected status, a substring of the evidence)
# ---------------------------------------------------------------------------------------------


def static_attacks(base: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    test_file = "tests/test_wrap.py"
    return {
        # Editing the judge
        "edit_test_file": (
            diff(
                {
                    test_file: (
                        base[test_file],
                        base[test_file].replace("assert", "assert True or", 1),
                    )
                }
            ),
            "invalid_patch",
            "test_patch_path",
        ),
        "root_conftest": (
            new_file(
                "conftest.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n"
            ),
            "invalid_patch",
            "runner_config",
        ),
        "deep_conftest": (
            new_file("src/textkit/sub/conftest.py", "x = 1\n"),
            "invalid_patch",
            "runner_config",
        ),
        "pytest_ini": (
            new_file("pytest.ini", "[pytest]\naddopts = -p no:python\n"),
            "invalid_patch",
            "runner_config",
        ),
        "pyproject_addopts": (
            diff(
                {
                    "pyproject.toml": (
                        base["pyproject.toml"],
                        base["pyproject.toml"]
                        + '\n[tool.pytest.ini_options]\naddopts = "--deselect tests/test_wrap.py"\n',
                    )
                }
            ),
            "invalid_patch",
            "runner_config",
        ),
        "tox_ini": (
            new_file("tox.ini", "[pytest]\naddopts = -k nothing\n"),
            "invalid_patch",
            "runner_config",
        ),
        "ci_file": (
            new_file(".github/workflows/evil.yml", "on: push\n"),
            "invalid_patch",
            "ci_config",
        ),
        "sitecustomize": (
            new_file("src/sitecustomize.py", "import os\n"),
            "invalid_patch",
            "startup_hook",
        ),
        "pth_file": (new_file("src/evil.pth", "import os\n"), "invalid_patch", "startup_hook"),
        "pytest11_entry_point": (
            new_file("src/evil-1.0.dist-info/entry_points.txt", "[pytest11]\nevil = evil\n"),
            "invalid_patch",
            "distribution_metadata",
        ),
        "shadow_pytest": (
            new_file("src/pytest.py", "def main():\n    return 0\n"),
            "invalid_patch",
            "shadows_framework",
        ),
        "shadow_stdlib": (
            new_file("src/json.py", "loads = None\n"),
            "invalid_patch",
            "shadows_stdlib",
        ),
        "path_escape": (
            "diff --git a/../evil.py b/../evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n",
            "invalid_patch",
            "path_escape",
        ),
        "absolute_path": (
            "diff --git a//etc/evil b//etc/evil\nnew file mode 100644\n--- /dev/null\n+++ b//etc/evil\n@@ -0,0 +1 @@\n+x\n",
            "invalid_patch",
            "absolute_path",
        ),
        "git_internals": (
            new_file(".git/hooks/post-checkout", "#!/bin/sh\necho pwned\n"),
            "invalid_patch",
            "git_internals",
        ),
        "symlink_then_write": (
            "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+../../etc\n\\ No newline at end of file\n"
            "diff --git a/link/passwd b/link/passwd\nnew file mode 100644\n--- /dev/null\n+++ b/link/passwd\n@@ -0,0 +1 @@\n+root::0:0::/:/bin/sh\n",
            "invalid_patch",
            "symlink",
        ),
        "rej_outside": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\n--- a/src/textkit/wrap.py\n+++ b/src/textkit/wrap.py\n@@ -1,1 +1,1 @@\n-this line is not there\n+x\n",
            "apply_failed",
            "patch",
        ),
        "case_collision": (
            new_file("Tests/test_wrap.py", "def test_x():\n    pass\n"),
            "invalid_patch",
            "test_file",
        ),
        "submodule": (
            "diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n",
            "invalid_patch",
            "submodule",
        ),
        "binary_patch": (
            "diff --git a/src/textkit/blob.bin b/src/textkit/blob.bin\nnew file mode 100644\nindex 0000000..1234567\nGIT binary patch\nliteral 3\nKcmZQzU|;|M00aO5\n\nliteral 0\nHcmV?d00001\n\n",
            "invalid_patch",
            "binary_patch",
        ),
        "setuid_mode": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\nold mode 100644\nnew mode 104755\n",
            "invalid_patch",
            "bad_mode",
        ),
        "huge_diff": (
            new_file("src/textkit/huge.py", "x = 1\n" * 300_000),
            "invalid_patch",
            "too_large",
        ),
        "non_utf8": (
            "diff --git a/src/textkit/x.py b/src/textkit/x.py\nnew file mode 100644\n--- /dev/null\n+++ b/src/textkit/x.py\n@@ -0,0 +1 @@\n+\udcff\udcfe = 1\n",
            "invalid_patch",
            "not_utf8",
        ),
        "malformed_hunk": (
            "diff --git a/src/textkit/wrap.py b/src/textkit/wrap.py\n--- a/src/textkit/wrap.py\n+++ b/src/textkit/wrap.py\n@@ -1,5 +1,5 @@\n-x\n",
            "invalid_patch",
            "malformed_diff",
        ),
        "empty_patch": ("", "invalid_patch", "empty_patch"),
    }


# ---------------------------------------------------------------------------------------------
# 2. The capability gate, on the task as admitted: one attack per capability class
# ---------------------------------------------------------------------------------------------

CAPABILITY_ATTACKS = {
    # the asserting frame's locals hold the expected value
    "frame_introspection": (
        "src/textkit/wrap.py",
        "import inspect as _i\n_w = wrap\n"
        "def wrap(text, width=70):\n"
        "    f = _i.currentframe().f_back\n"
        "    return _w(text, width)\n",
    ),
    "gc_access": ("src/textkit/__init__.py", "import gc as _g\n_all = _g.get_objects()\n"),
    "tracing": ("src/textkit/__init__.py", "import sys as _s\n_s.settrace(lambda *a: None)\n"),
    "native_code": ("src/textkit/__init__.py", "import ctypes as _c\n_c.pythonapi\n"),
    # a test function's code swapped for a no-op
    "code_objects": (
        "src/textkit/__init__.py",
        "def _swap(f):\n    f.__code__ = (lambda: None).__code__\n",
    ),
    "class_mutation": (
        "src/textkit/wrap.py",
        "class _L(list):\n    pass\n_r = []\n_r.__class__ = _L\n",
    ),
    "proc_access": ("src/textkit/__init__.py", "_maps = open('/proc/self/maps').read()\n"),
    "fd_manipulation": ("src/textkit/__init__.py", "import os as _o\n_o.dup2(1, 2)\n"),
    "sockets": ("src/textkit/__init__.py", "import socket as _so\n_so.socket()\n"),
    # the held-out tests read from disk to return the expected literals
    "test_files_access": (
        "src/textkit/wrap.py",
        "_src = open('tests/test_wrap.py').read()\n",
    ),
    "dynamic_access": (
        "src/textkit/__init__.py",
        "import sys as _s\n_n = '_get' + chr(102) + 'rame'\n_f = getattr(_s, _n)\n",
    ),
    "builtin_subclass_comparison": (
        "src/textkit/wrap.py",
        "class _Any(list):\n    def __eq__(self, other):\n        return len(self) >= 0\n",
    ),
    # an always-true value built with type() and operator, no class statement in sight
    "dynamic_class": (
        "src/textkit/wrap.py",
        "import operator as _op\n_U = type('U', (list,), {'__eq__': _op.is_not})\n",
    ),
    "threads": (
        "src/textkit/__init__.py",
        "import threading as _t\n_t.Thread(target=print, daemon=True).start()\n",
    ),
    "framework_access": (
        "src/textkit/__init__.py",
        "import pytest as _p\n_p.skip('nothing to see', allow_module_level=True)\n",
    ),
    "module_table": (
        "src/textkit/__init__.py",
        "import sys as _s\n_m = _s.modules.get('_py' + 'test.reports')\n",
    ),
    "process_exit": ("src/textkit/__init__.py", "import os as _o\ngetattr(_o, '_' + 'exit')(0)\n"),
    "harness_reference": ("src/textkit/__init__.py", "_h = 'swe_' + 'forge_harness'\n"),
    # A comparison that checks the answer (the third red team's): the unfixed wrap() returned
    # as an object equal to any wrapping of the same words within the width. A twin's wrong
    # literal fails the check too, so only the gate (on the host) stops it.
    "comparison_hooks": (
        "src/textkit/wrap.py",
        "def _fits(lines, text, width):\n"
        "    return ' '.join(lines) == ' '.join(text.split()) and all(\n"
        "        x and (len(x) <= width or ' ' not in x) for x in lines)\n"
        "class Lines:\n"
        "    def __init__(self, items, text, width):\n"
        "        self.items, self.text, self.width = items, text, width\n"
        "    def __iter__(self):\n"
        "        return iter(self.items)\n"
        "    def __eq__(self, other):\n"
        "        return isinstance(other, list) and _fits(other, self.text, self.width)\n"
        "class Text:\n"
        "    def __init__(self, text, width):\n"
        "        self.text, self.width = text, width\n"
        "    def __eq__(self, other):\n"
        "        return isinstance(other, str) and _fits(other.split('\\n'), self.text, self.width)\n"
        "_wrap3 = wrap\n"
        "def wrap(text, width=70):\n"
        "    return Lines(_wrap3(text, width), text, width)\n"
        "def fill(text, width=70):\n"
        "    return Text(text, width)\n",
    ),
}


# ---------------------------------------------------------------------------------------------
# 3. Runtime defences, on the permissive task: name -> (code appended to a file, status, marker)
# ---------------------------------------------------------------------------------------------

UNIVERSAL = """
import operator as _op
_U = type("_U", (list,), {"__eq__": lambda s, o: True, "__ne__": lambda s, o: False})
_S = type("_S", (str,), {"__eq__": lambda s, o: _op.truth(1), "__ne__": lambda s, o: _op.not_(1),
                         "__hash__": str.__hash__})
_wrap0 = wrap
def wrap(text, width=70):
    return _U(_wrap0(text, width))
def fill(text, width=70):
    return _S("anything")
"""

# Agrees with every builtin value (what a test writes as its expected value) and honestly with
# anything else: the old canaries compared with a foreign "equal to nothing" object.
AWARE_COMPARISON = """
class _Sly:
    def __init__(self, real):
        self.real = real
    def __eq__(self, other):
        if isinstance(other, (int, float, str, bytes, list, tuple, dict, set, bool)):
            return len(str(other)) >= 0
        return self.real == other
    __hash__ = object.__hash__
    def __repr__(self):
        return repr(self.real)
_wrap1 = wrap
def wrap(text, width=70):
    return _Sly(_wrap1(text, width))
def fill(text, width=70):
    return _Sly("\\n".join(_wrap1(text, width)))
"""

# Reads the test module that calls it (the caller's file, a computed path), parses it, and
# returns the literal that the calling line's assertion expects. At run time the test files are
# closed by then (pytest has collected them): nothing to read.
TEST_FILE_ORACLE = """
import ast as _ast
import sys as _sys
def _source(path):
    return open(path).read()
def _expected(default):
    frame = _sys._getframe(2)
    try:
        tree = _ast.parse(_source(frame.f_code.co_filename))
    except (OSError, SyntaxError):
        return default
    for node in _ast.walk(tree):
        if isinstance(node, _ast.Assert) and node.lineno == frame.f_lineno:
            if isinstance(node.test, _ast.Compare):
                try:
                    return _ast.literal_eval(node.test.comparators[0])
                except ValueError:
                    return default
    return default
_wrap2 = wrap
def wrap(text, width=70):
    return _expected(_wrap2(text, width))
def fill(text, width=70):
    return _expected("\\n".join(_wrap2(text, width)))
"""

# The same, with the test files read while pytest imports them (the code under test is
# imported by them). The harness has read them and the supervisor closed them before pytest
# collects: nothing to read then either.
EARLY_ORACLE = TEST_FILE_ORACLE.replace(
    "def _source(path):\n    return open(path).read()\n",
    "from pathlib import Path as _P\n"
    "_SEEN = {}\n"
    "for _t in (_P(__file__).resolve().parents[2] / 'tests').glob('test_*.py'):\n"
    "    try:\n"
    "        _SEEN[str(_t)] = _t.read_text()\n"
    "    except OSError:\n"
    "        pass\n"
    "def _source(path):\n    return _SEEN[str(__import__('pathlib').Path(path).resolve())]\n",
)

# Reads its own twin's test file at import through a path computed at run time, and answers
# with the literal a call's assertion expects only when it is a plausible answer (the same
# words as the input): a decoy's changed literal is refused, so the decoys alone do not catch
# it (the red team's A18, 1.0 on every try while the files were closed only after collection).
VALIDATED_ORACLE = r"""
import ast as _ast
import os as _os
import re as _re
_w = "".join(map(chr, (116, 101, 115, 116, 115)))
_root = _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
try:
    with open(_os.path.join(_root, _w, _w[:4] + "_" + __name__.rsplit(".", 1)[-1] + ".py")) as _fh:
        _NOTES = _fh.read()
except OSError:
    _NOTES = ""
def _lit(v):
    if isinstance(v, str):
        return "[\"']" + _re.escape(v) + "[\"']"
    return _re.escape(repr(v))
def _answer(fn, text, width):
    call = _re.escape(fn) + r"\(\s*" + _lit(text) + r"\s*,\s*(?:width\s*=\s*)?" + _lit(width)
    m = _re.search(call + r"\s*\)\s*==\s*(\[[^\]]*\]|\"[^\"]*\"|'[^']*')", _NOTES)
    if m:
        try:
            return True, _ast.literal_eval(m.group(1))
        except ValueError:
            pass
    return False, None
_wrap3 = wrap
def wrap(text, width=70):
    ok, val = _answer("wrap", text, width)
    if ok and isinstance(val, list) and " ".join(val).split() == text.split():
        return val
    return _wrap3(text, width)
_fill3 = fill
def fill(text, width=70):
    ok, val = _answer("fill", text, width)
    if ok and isinstance(val, str) and val.split() == text.split():
        return val
    return _fill3(text, width)
"""

FORGE_REPORTS = """
import sys as _s
_m = _s.modules.get("_py" + "test.reports")
if _m is not None:
    _C = getattr(_m, "Test" + "Report")
    _o = _C.__init__
    def _i(self, *a, **k):
        _o(self, *a, **k)
        self.outcome = "passed"
    _C.__init__ = _i
"""

# The harness's own state: its merge function rewritten so every report becomes a pass.
HARNESS_STATE = """
import sys as _s
_h = _s.modules.get("swe_forge_harness")
if _h is not None:
    _t = _h._OUTCOMES
    _h._merge = lambda nodeid, *a: _t.__setitem__(nodeid, "passed")
    _h._STATE["tampered"] = ""
"""

# Every pipe the process may write to, found by fstat and fcntl (the harness takes its
# descriptor's name out of the environment).
WRITE_PIPES = """
import fcntl as _fc, os as _o, stat as _st
def _pipes():
    out = []
    for fd in range(3, 40):
        try:
            if _st.S_ISFIFO(_o.fstat(fd).st_mode) and _fc.fcntl(fd, _fc.F_GETFL) & 3 == 1:
                out.append(fd)
        except OSError:
            pass
    return out
"""

# Claims of passes written to every such pipe.
FORGED_EVENTS = (
    WRITE_PIPES
    + """
for _fd in _pipes():
    _o.write(_fd, b'{"event": "test", "nodeid": "tests/test_wrap.py::test_fill_exact_width", '
                  b'"outcome": "passed", "seq": 1}\\n')
"""
)

# dup2 over every such pipe, relay what is written with failures turned into passes.
FD_RELAY = (
    WRITE_PIPES
    + """
import threading as _t
def _relay(r, real):
    buf = b""
    while True:
        chunk = _o.read(r, 65536)
        if not chunk:
            return
        buf += chunk
        while b"\\n" in buf:
            line, buf = buf.split(b"\\n", 1)
            line = line.replace(b'"outcome":"failed"', b'"outcome":"passed"')
            line = line.replace(b'"exitstatus":1', b'"exitstatus":0')
            _o.write(real, line + b"\\n")
for _fd in _pipes():
    _real = _o.dup(_fd)
    _r, _w = _o.pipe()
    _o.dup2(_w, _fd)
    _t.Thread(target=_relay, args=(_r, _real), daemon=True).start()
"""
)

# pytest.Function's inherited runtest replaced: every test "passes" without running.
FUNCTION_BASE = """
import sys as _s
_py = _s.modules.get("_py" + "test.python")
if _py is not None:
    for _k in _py.Function.__mro__:
        if "runtest" in vars(_k):
            setattr(_k, "runtest", lambda self: None)
"""

# A thread swaps the test functions' code for a no-op as soon as their module is imported.
CODE_SWAP = """
import sys as _s, threading as _t, time as _tm
_noop = (lambda *a, **k: None).__code__
def _swap():
    end = _tm.time() + 20
    while _tm.time() < end:
        for name, mod in list(_s.modules.items()):
            if name.split(".")[-1].startswith("test_"):
                for k, v in list(vars(mod).items()):
                    code = getattr(v, "__code__", None)
                    if k.startswith("test_") and code is not None and code is not _noop:
                        v.__code__ = _noop
        _tm.sleep(0.001)
_t.Thread(target=_swap, daemon=True).start()
"""

# A report hook replaced while a test runs and put back before the harness looks again.
HOOK_SWAP = """
import sys as _s
_r = _s.modules.get("_py" + "test.runner")
if _r is not None:
    _orig = _r.call_and_report
    def _forging(item, when, log=True, **kw):
        _r.call_and_report = _orig
        rep = _orig(item, when, log=False, **kw)
        rep.outcome = "passed"
        if log:
            item.ihook.pytest_runtest_logreport(report=rep)
        _r.call_and_report = _forging
        return rep
    _r.call_and_report = _forging
"""

# The test files rewritten at import (then put back): the kernel refuses the write.
REWRITE_TESTS = """
_p = "/testbed/tests/test_wrap.py"
try:
    _old = open(_p).read()
    open(_p, "w").write("def test_fill_exact_width():\\n    pass\\n")
    open(_p, "w").write(_old)
except OSError:
    pass
"""

# A daemon that outlives pytest and forges events after the session.
BACKGROUND_FORGER = """
import json as _j, os as _o, time as _tm
_fd = int(_o.environ.get("SWE_FORGE_FD", "-1"))
if _fd >= 0 and _o.fork() == 0:
    _o.setsid()
    _tm.sleep(0.5)
    for _i in range(100):
        ev = {"event": "test", "nodeid": "tests/test_wrap.py::test_fill_exact_width", "outcome": "passed"}
        try:
            _o.write(_fd, (_j.dumps(ev) + "\\n").encode())
        except OSError:
            pass
        _tm.sleep(0.1)
    _o._exit(0)
"""

# Everything the supervisor or the host could be hit with from inside: signals to every pid,
# writes into other processes' stdout, the read-only mounts, the run folder.
ATTACK_THE_JUDGE = """
import os as _o, signal as _sig
for _p in range(1, 400):
    if _p == _o.getpid():
        continue
    try:
        _o.kill(_p, _sig.SIGKILL)
    except OSError:
        pass
for _p in _o.listdir("/proc"):
    if _p.isdigit():
        try:
            with open("/proc/%s/fd/1" % _p, "w") as _f:
                _f.write('{"status": "ran", "exit_code": 0}\\n')
        except OSError:
            pass
for _d in ("/swe-forge/job", "/swe-forge", "/swe-forge-run", "/", "/opt/venv"):
    try:
        open(_d + "/x", "w").write("x")
    except OSError:
        pass
"""


def runtime_attacks(base: dict[str, str]) -> dict[str, tuple[str, str, str]]:
    wrap_py = "src/textkit/wrap.py"
    init_py = "src/textkit/__init__.py"
    return {
        # Universal objects (their type() namespaces write __eq__: comparison hooks, refused
        # unrun; the twins catch them too, see FOOL_THE_TESTS) and forged framework parts
        # (the canaries fire).
        "universal_objects": (
            append_to(base, wrap_py, UNIVERSAL),
            "invalid_patch",
            "capability_comparison_hooks",
        ),
        "function_base_class": (
            append_to(base, init_py, FUNCTION_BASE),
            "tamper_detected",
            "runtime_tamper",
        ),
        "code_swap_from_thread": (
            append_to(base, init_py, CODE_SWAP),
            "tamper_detected",
            "decoy",
        ),
        "report_hook_swapped_and_restored": (
            append_to(base, init_py, HOOK_SWAP),
            "tamper_detected",
            "",
        ),
        # Its __eq__ is a comparison hook the reference fix does not add: refused before any
        # test runs (the twins catch it too, see FOOL_THE_TESTS).
        "aware_comparison": (
            append_to(base, wrap_py, AWARE_COMPARISON),
            "invalid_patch",
            "capability_comparison_hooks",
        ),
        "test_file_oracle": (
            append_to(base, wrap_py, TEST_FILE_ORACLE),
            "unresolved",
            "not passed",
        ),
        "test_file_oracle_at_import": (
            append_to(base, wrap_py, EARLY_ORACLE),
            "unresolved",
            "not passed",
        ),
        "validated_oracle_at_import": (
            append_to(base, wrap_py, VALIDATED_ORACLE),
            "unresolved",
            "not passed",
        ),
        # Forged reports, the harness's state, the event pipe: fingerprints, duplicates and
        # pytest's own exit status give them away.
        "forged_reports": (append_to(base, init_py, FORGE_REPORTS), "tamper_detected", ""),
        "harness_state": (append_to(base, init_py, HARNESS_STATE), "tamper_detected", ""),
        "fd_relay": (append_to(base, init_py, FD_RELAY), "tamper_detected", "not from the harness"),
        "forged_events": (
            append_to(base, init_py, FORGED_EVENTS),
            "tamper_detected",
            "not from the harness",
        ),
        "background_forger": (
            append_to(base, init_py, BACKGROUND_FORGER),
            "unresolved",
            "not passed",
        ),
        # The judge's files
        "rewrite_and_restore_tests": (
            append_to(base, init_py, REWRITE_TESTS),
            "unresolved",
            "not passed",
        ),
        "conftest_at_runtime": (
            append_to(
                base, init_py, "open('/testbed/conftest.py', 'w').write('collect_ignore = []')\n"
            ),
            "tamper_detected",
            "conftest.py",
        ),
        # Forging the verdict
        "sys_exit_at_import": (
            append_to(base, init_py, "import sys as _s\n_s.exit(0)\n"),
            "unresolved",
            "not passed",
        ),
        "os_exit_at_import": (
            append_to(base, init_py, "import os as _o\n_o._exit(0)\n"),
            "tamper_detected",
            "without ending its session",
        ),
        "fake_passed_lines": (
            append_to(
                base,
                init_py,
                "print('tests/test_wrap.py::test_fill_exact_width PASSED')\nprint('1 passed')\n",
            ),
            "unresolved",
            "not passed",
        ),
        "planted_result_files": (
            append_to(
                base,
                init_py,
                "for _p in ('/tmp/results.json', '/testbed/report.xml', '/home/swe/reward'):\n"
                "    open(_p, 'w').write('{\"tests\": {}, \"reward\": 1}')\n",
            ),
            "unresolved",
            "not passed",
        ),
        "attack_the_judge": (
            append_to(base, init_py, ATTACK_THE_JUDGE),
            "unresolved",
            "",
        ),
        # Resource attacks during the tests
        "fork_bomb": (
            append_to(
                base,
                init_py,
                "import os as _o\nwhile True:\n    try:\n        _o.fork()\n    except OSError:\n        pass\n",
            ),
            "resource_limit",
            "process limit",
        ),
        "memory_bomb": (
            append_to(
                base, init_py, "_hog = []\nwhile True:\n    _hog.append(bytearray(64 << 20))\n"
            ),
            "resource_limit",
            # The pytest process caps its own data memory below the container's (bdea823): the
            # bomb meets MemoryError before the OOM killer, and the verdict names that limit.
            "MemoryError",
        ),
        "disk_fill_work_tree": (
            append_to(
                base,
                init_py,
                "for _i in range(100):\n"
                "    with open('/testbed/fill%d' % _i, 'wb') as _f:\n"
                "        for _k in range(60):\n"
                "            _f.write(b'x' * (1 << 20))\n",
            ),
            "resource_limit",
            "disk limit",
        ),
        "inode_fill": (
            append_to(
                base,
                init_py,
                "import os as _o\n_o.makedirs('/tmp/m', exist_ok=True)\n_i = 0\n"
                "while True:\n    open('/tmp/m/%d' % _i, 'w').close()\n    _i += 1\n",
            ),
            "resource_limit",
            "disk limit",
        ),
        "file_size": (
            append_to(
                base,
                init_py,
                "with open('/tmp/big', 'wb') as _f:\n    while True:\n        _f.write(b'x' * (1 << 20))\n",
            ),
            "resource_limit",
            "",
        ),
        "endless_output": (
            append_to(base, init_py, "while True:\n    print('y' * 65536)\n"),
            "resource_limit",
            "output limit",
        ),
        "infinite_loop": (append_to(base, init_py, "while True:\n    pass\n"), "timeout", ""),
        "sleep_past_deadline": (
            append_to(base, init_py, "import time as _t\n_t.sleep(3600)\n"),
            "timeout",
            "",
        ),
        # Escape attempts
        "network_egress": (
            append_to(
                base,
                init_py,
                "import socket as _so\n_so.create_connection(('1.1.1.1', 53), timeout=3)\n",
            ),
            "unresolved",
            "not passed",
        ),
        "docker_socket": (
            append_to(base, init_py, "open('/var/run/docker.sock', 'rb')\n"),
            "unresolved",
            "not passed",
        ),
        "setuid_root": (
            append_to(base, init_py, "import os as _o\n_o.setuid(0)\n"),
            "unresolved",
            "not passed",
        ),
        "read_host_paths": (
            append_to(base, init_py, "open('/root/.ssh/id_rsa').read()\n"),
            "unresolved",
            "not passed",
        ),
    }


EMPTY = dict.fromkeys(FILES, "")
STATIC_NAMES = sorted(static_attacks(EMPTY))
RUNTIME_NAMES = sorted(runtime_attacks(EMPTY))


def ours(engine: Engine, image: str) -> set[str]:
    # Containers of this task's image: other work on the machine is not ours to judge.
    return {c.id for c in engine.client.containers.list(all=True, filters={"ancestor": image})}


def check(
    engine: Engine,
    verifier: Verifier,
    judged: TaskManifest,
    gold_task: TaskManifest,
    patch: str,
    status: str,
    marker: str,
    name: str,
) -> None:
    image = str(judged.image["id"])
    before = ours(engine, image)
    result = verifier.verify(judged, patch, f"attack-{name}")
    evidence = json.dumps(result.violations) + result.detail
    assert (result.status, result.reward) == (status, 0.0), (
        f"{name}: {result.status} {result.detail[:400]}"
    )
    assert result.verifier["terminal_reward"] == 0.0
    assert marker in evidence, f"{name}: {marker!r} not in {evidence[:400]}"
    # The next verification on the same task is unaffected.
    gold = verifier.verify(gold_task, gold_task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail
    assert ours(engine, image) <= before


def test_gold_patches_score_one(
    example_tasks: ExampleTasks, tasks: dict[str, TaskManifest], tmp_path: Path
) -> None:
    # Through the command, as a user runs it: every admitted task's gold patch resolves.
    run, report = run_verify(
        example_tasks.tasks,
        tmp_path / "results.jsonl",
        config=load_config(),
        gold=True,
        report_path=tmp_path / "report.json",
    )
    assert report["resolved_instances"] == len(tasks) == 5
    assert all(r.reward == 1.0 and r.verifier["terminal_reward"] == 1.0 for r in run.results)
    assert all(r.verifier["harness_sha256_verified"] for r in run.results)
    # Decoy twins ran and failed, as a correct fix must make them.
    for r in run.results:
        twins = r.verifier["twins"]
        assert twins["decoys"] >= 2 and twins["outcomes"] == {"failed": twins["decoys"]}
    # Each result says what exactly it graded, by what, in which run; its log excerpt is
    # bounded.
    assert len({r.provenance["run_id"] for r in run.results}) == 1
    for r in run.results:
        task = tasks[r.instance_id]
        prov = r.provenance
        assert prov["patch_sha256"] == hashlib.sha256(task.patch.encode()).hexdigest()
        assert prov["task_sha256"] == hashlib.sha256(task.to_json().encode()).hexdigest()
        assert prov["image_id"] == task.image["id"] and prov["tool_version"]
        assert len(prov["config_hash"]) == 64
        assert 0 < len(r.log_excerpt) <= 4000 and "passed" in r.log_excerpt
        env = task.environment
        assert env["network"] == "none" and env["workdir"] == "/testbed"
        assert {"patch", "test_patch", "FAIL_TO_PASS"} <= set(env["hidden_from_policy"])


def test_gold_scores_one_on_permissive_tasks(
    verifier: Verifier, tasks: dict[str, TaskManifest]
) -> None:
    for task in tasks.values():
        result = verifier.verify(permissive(task), task.patch, "gold")
        assert result.status == "resolved", result.detail


def test_empty_prediction_report(
    example_tasks: ExampleTasks, tasks: dict[str, TaskManifest], tmp_path: Path
) -> None:
    preds = tmp_path / "preds.json"
    preds.write_text(
        json.dumps([{"instance_id": TASK, "model_name_or_path": "m", "model_patch": ""}])
    )
    _, report = run_verify(
        example_tasks.tasks,
        tmp_path / "r.jsonl",
        config=load_config(),
        predictions=preds,
    )
    assert report["empty_patch_ids"] == [TASK] and report["resolved_ids"] == []


@pytest.mark.parametrize("attack", STATIC_NAMES)
def test_static_attack_scores_zero(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    attack: str,
) -> None:
    patch, status, marker = static_attacks(base_file)[attack]
    check(engine, verifier, tasks[TASK], tasks[TASK], patch, status, marker, attack)


@pytest.mark.parametrize("capability", sorted(CAPABILITY_ATTACKS))
def test_capability_attack_scores_zero(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    capability: str,
) -> None:
    path, code = CAPABILITY_ATTACKS[capability]
    patch = append_to(base_file, path, code)
    task = tasks[TASK]
    check(
        engine, verifier, task, task, patch, "invalid_patch", f"capability_{capability}", capability
    )


# ---------------------------------------------------------------------------------------------
# 4. What a red team found against the first version of this design, each closed
# ---------------------------------------------------------------------------------------------

# Claims written straight to every pipe the process holds, then pytest's own Exit(0), found
# by walking the class hierarchy (no "pytest" anywhere): forged lines fail their MAC.
FORGE_AND_EXIT = """
import json as _j, os as _o
def _finish():
    for _fd in range(3, 40):
        try:
            _out = open(_fd, "w", closefd=False)
            for _n in ("tests/test_wrap.py::test_fill_exact_width",
                       "tests/test_wrap.py::test_wrap_line_may_fill_the_width_exactly"):
                _out.write(_j.dumps({"event": "test", "nodeid": _n, "outcome": "passed"}) + "\\n")
            _out.flush()
        except OSError:
            pass
    for _c in Exception.__subclasses__():
        if _c.__name__ == "Exit":
            raise _c("done", returncode=0)
_wrap0 = wrap
def wrap(text, width=70):
    _finish()
    return _wrap0(text, width)
"""

# 200,000 empty lines on every pipe (the events' and pytest's output among them): bounded
# evidence, never an infrastructure error.
CHANNEL_FLOOD = """
import os as _o, stat as _st
for _fd in range(3, 40):
    try:
        if _st.S_ISFIFO(_o.fstat(_fd).st_mode):
            open(_fd, "wb", closefd=False).write(b"\\n" * (200 << 10))
    except OSError:
        pass
"""

# A module written at run time, then imported with a plain import statement: the import gate
# scans what the patch did not contain.
WRITE_THEN_IMPORT = """
import os as _o
with open(_o.path.join(_o.path.dirname(__file__), "_gen.py"), "w") as _fh:
    _fh.write("import gc\\n_objects = getattr(gc, 'get_' + 'objects')()\\n")
from textkit import _gen  # noqa: E402
"""

# A tree deeper than the judge walks, made at run time.
DEEP_TREE = """
import os as _o
_o.makedirs("/testbed/" + "/".join(["d"] * 150), exist_ok=True)
"""

HOOK_BY_ASSIGNMENT = """
def _arrange(items):
    for item in items:
        item.runtest = lambda: None
pytest_collection_modifyitems = _arrange
"""


def red_team(base: dict[str, str]) -> dict[str, tuple[str, str, str, str]]:
    """name -> (patch, which task: "task" or "permissive", status, marker)."""
    init_py = "src/textkit/__init__.py"
    wrap_py = "src/textkit/wrap.py"
    pyproject = base["pyproject.toml"]
    assert 'pythonpath = ["src"]\n' in pyproject
    escaped = pyproject.replace(
        'pythonpath = ["src"]\n', 'pythonpath = ["src"]\n"\\u0061ddopts" = "-p textkit._plug"\n'
    )
    utf7 = "# -*- coding: utf-7 -*-\n# compat +AAo-import gc+AAo-_o = gc.get+AF8-objects()\n"
    return {
        "forge_and_exit_gated": (
            append_to(base, wrap_py, FORGE_AND_EXIT),
            "task",
            "invalid_patch",
            "capability_",
        ),
        "forge_and_exit_runtime": (
            append_to(base, wrap_py, FORGE_AND_EXIT),
            "permissive",
            "tamper_detected",
            "not from the harness",
        ),
        "channel_flood": (
            append_to(base, init_py, CHANNEL_FLOOD),
            "permissive",
            "tamper_detected",
            "not from the harness",
        ),
        "escaped_toml_key_and_assigned_hook": (
            # One line of context: the table's header is not in the hunk, only the escaped key.
            diff({"pyproject.toml": (pyproject, escaped)}, context=1)
            + new_file("src/textkit/_plug.py", HOOK_BY_ASSIGNMENT),
            "task",
            "invalid_patch",
            "pytest's settings",
        ),
        "hook_bound_by_assignment": (
            new_file("src/textkit/_plug.py", HOOK_BY_ASSIGNMENT),
            "task",
            "invalid_patch",
            "capability_pytest_hooks",
        ),
        "write_then_import": (
            append_to(base, init_py, WRITE_THEN_IMPORT),
            "task",
            "tamper_detected",
            "appeared during the run",
        ),
        "utf7_cookie": (
            new_file("src/textkit/_u7.py", utf7)
            + append_to(base, init_py, "from textkit import _u7\n"),
            "task",
            "invalid_patch",
            "capability_source_encoding",
        ),
        "deep_tree_in_patch": (
            new_file("/".join(["d"] * 60) + "/x.txt", "x\n"),
            "task",
            "invalid_patch",
            "bad_path",
        ),
        "deep_tree_at_runtime": (
            append_to(base, init_py, DEEP_TREE),
            "task",
            "tamper_detected",
            "deeper",
        ),
    }


RED_TEAM_NAMES = sorted(red_team({**EMPTY, "pyproject.toml": 'pythonpath = ["src"]\n'}))


@pytest.mark.parametrize("attack", RED_TEAM_NAMES)
def test_red_team_attack_scores_zero(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    attack: str,
) -> None:
    patch, which, status, marker = red_team(base_file)[attack]
    task = tasks[TASK]
    judged = permissive(task) if which == "permissive" else task
    check(engine, verifier, judged, task, patch, status, marker, attack)


def test_capability_allowed_when_the_gold_patch_uses_it(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    # The same code is no violation on a task whose reference fix introduces the capability:
    # the gate judges what is *new*, relative to the reference and the base.
    task = tasks[TASK]
    caps = {"base": [], "gold": ["process_spawn"], "scope": "repository"}
    allowed = replace(task, audit={**task.audit, "capabilities": caps})
    patch = task.patch + append_to(
        base_file, "src/textkit/__init__.py", "import subprocess as _sp\n_run = _sp.run\n"
    )
    assert verifier.verify(allowed, patch, "m").status == "resolved"
    assert verifier.verify(task, patch, "m").status == "invalid_patch"


def test_calibration_allows_what_the_gold_patch_introduces(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    # Admission checks its decoys by grading the gold patch as a verification would, before
    # the manifest records the gate's allowance: a reference fix that introduces a capability
    # the base code does not use must still calibrate resolved (pallets/click's __getattr__).
    task = tasks[TASK]
    gold = task.patch + append_to(
        base_file, "src/textkit/__init__.py", "import subprocess as _sp\n_run = _sp.run\n"
    )
    audit = {k: v for k, v in task.audit.items() if k != "capabilities"}
    harness = {k: v for k, v in task.harness.items() if k != "canaries"}
    cal = verifier.calibrate(replace(task, patch=gold, audit=audit, harness=harness))
    assert cal.result is not None
    assert cal.result.status == "resolved", cal.result.detail
    assert "process_spawn" in cal.gold_capabilities
    assert cal.armed, "the decoy check kept no decoy"


SELF_READER = """

def test_reads_its_own_file():
    with open(__file__) as fh:
        assert "test_reads_its_own_file" in fh.read()


def test_reads_nothing():
    assert 1 + 1 == 2
"""


def test_a_gate_run_puts_the_test_files_out_of_reach_as_grading_does(
    verifier: Verifier, tasks: dict[str, TaskManifest]
) -> None:
    # A test that opens its own file at run time cannot pass a verification (the test files
    # are closed to the tests' user once collected). The gates run under the same rule, so
    # such a test is in neither FAIL_TO_PASS nor PASS_TO_PASS, where it would fail every
    # grading of the task (pallets/click's test_file_prompt_default_format).
    task = tasks[TASK]
    test_patch = task.test_patch + new_file("tests/test_self.py", SELF_READER.lstrip())
    files = sorted({*task.harness["test_files"], "tests/test_self.py"})
    run = run_tests(
        verifier.sandbox,
        str(task.image["id"]),
        PytestRunner(),
        files,
        test_patch=test_patch,
        gold_patch=task.patch,
        protect=protect_spec(test_patch, verifier.classifier),
        phase="after",
        hash_seed=0,
        order_seed=1,
        timeout=120,
    )
    assert run.status == "ok", run.output_tail
    assert run.tests["tests/test_self.py::test_reads_its_own_file"] == "failed"
    assert run.tests["tests/test_self.py::test_reads_nothing"] == "passed"
    assert all(run.tests[t] == "passed" for t in task.FAIL_TO_PASS), run.tests


@pytest.mark.parametrize("attack", RUNTIME_NAMES)
def test_runtime_attack_scores_zero(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    attack: str,
) -> None:
    patch, status, marker = runtime_attacks(base_file)[attack]
    task = tasks[TASK]
    check(engine, verifier, permissive(task), task, patch, status, marker, attack)


#: Attacks from inside the test process that fool the honest run itself: without decoys each
#: scores 1.0 (so each is a real attack), with them each is caught.
FOOL_THE_TESTS = ("universal_objects", "aware_comparison")


@pytest.mark.parametrize("attack", FOOL_THE_TESTS)
def test_only_the_decoys_catch_attacks_that_fool_the_tests(
    engine: Engine,
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    attack: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patch = runtime_attacks(base_file)[attack][0]
    judged = permissive(tasks[TASK])
    blind = Verifier(engine, verifier.classifier, replace(verifier.settings, decoys=0))
    # The decoys alone: the host's comparison-hook gate would refuse these unrun.
    monkeypatch.setattr(PythonEcosystem, "check_scanned", lambda *a: [])
    fooled = blind.verify(judged, patch, f"blind-{attack}")
    assert (fooled.status, fooled.reward) == ("resolved", 1.0), fooled.detail
    assert fooled.verifier["twins"] == {"decoys": 0, "outcomes": {}}
    caught = verifier.verify(judged, patch, f"attack-{attack}")
    assert (caught.status, caught.reward) == ("tamper_detected", 0.0), caught.detail
    assert "decoy_passed" in {v["code"] for v in caught.violations}, caught.violations


def test_test_files_closed_before_collection_stop_an_oracle_the_decoys_cannot(
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With the test files left readable while pytest collects (the judge before: closed only
    # after collection) the validated oracle is paid 1.0 through every decoy: a real attack.
    # As the judge runs now it reads nothing and is paid what the base code is worth.
    patch = runtime_attacks(base_file)["validated_oracle_at_import"][0]
    task = permissive(tasks[TASK])  # the capability gate out of the way: the files alone
    run_job = Verifier._run_job

    def files_left_open(self: Verifier, *args: Any, **kwargs: Any) -> Any:
        job, plan = run_job(self, *args, **kwargs)
        job["run"].pop("hide_collected", None)
        return job, plan

    with monkeypatch.context() as m:
        m.setattr(Verifier, "_run_job", files_left_open)
        fooled = verifier.verify(task, patch, "oracle-open")
    assert (fooled.status, fooled.reward) == ("resolved", 1.0), fooled.detail
    assert fooled.verifier["twins"]["decoys"] >= 1, fooled.verifier
    caught = verifier.verify(task, patch, "oracle")
    assert (caught.status, caught.reward) == ("unresolved", 0.0), caught.detail


#: Reads the running test's id from the environment (pytest's PYTEST_CURRENT_TEST) and answers
#: with the expected value a parametrised id spells: `test_reading_time_rounds_up[250-2]`. The
#: same id in every twin (a decoy changes the assertion, not the id): the sixteenth red team's
#: forgery, 1.0 on textkit-9 and textkit-3 before the harness hid the id.
ENV_ID_ORACLE = """
import os as _os
_reading_time = reading_time
def reading_time(text, wpm=200):
    for value in _os.environ.values():
        if value.endswith("] (call)") and "[" in value:
            last = value[value.rindex("[") + 1 : -len("] (call)")].split("-")[-1]
            if last.isdigit():
                return int(last)
    return _nothing_learned(text, wpm)
"""

#: What the oracles return when they learned nothing: the base's answer where it is already
#: right (whole minutes: the pass-to-pass test), else one no decoy holds (a decoy's value is a
#: number near the expected one, and may be the base's own wrong answer).
NOTHING_LEARNED = """
def _nothing_learned(text, wpm):
    words = len(text.split())
    return words // wpm if words % wpm == 0 else 10 ** 9
"""


def _stats_oracle(example_images: ExampleImages, task: TaskManifest, code: str) -> str:
    """textkit-9's stats module at its base with ``code`` (an oracle) appended, as a patch."""
    path = "src/textkit/stats.py"
    got = GitRepository(example_images.repo).blob_at(task.base_commit, path)
    assert got is not None
    return append_to({path: got[1].decode()}, path, NOTHING_LEARNED + code)


def test_the_running_tests_id_is_no_oracle(
    engine: Engine,
    verifier: Verifier,
    example_images: ExampleImages,
    tasks: dict[str, TaskManifest],
) -> None:
    task = tasks["swe-forge__textkit-9"]
    assert any("[" in t for t in task.FAIL_TO_PASS), task.FAIL_TO_PASS  # parametrised ids
    patch = _stats_oracle(example_images, task, ENV_ID_ORACLE)
    check(engine, verifier, task, task, patch, "unresolved", "not passed", "env-id")


#: The eighteenth red team's oracle: the node ids (``[250-2]``) read out of the process's own
#: memory, through paths built at run time (no string of the patch names /proc).
MEMORY_ORACLE = """
import re as _re
def _named(text):
    return bytes(b + 1 for b in text.encode()).decode()
def reading_time(text, wpm=200):
    words = len(text.split())
    pattern = _re.compile(rb"::test_\\w*\\[" + str(words).encode() + rb"-(\\d+)\\]")
    try:
        with open(_named(".oqnb.rdke.l`or")) as maps, open(_named(".oqnb.rdke.ldl"), "rb", 0) as mem:
            for line in maps:
                parts = line.split()
                if len(parts) < 2 or not parts[1].startswith("rw"):
                    continue
                low, high = (int(x, 16) for x in parts[0].split("-"))
                if high - low > (512 << 20):
                    continue
                try:
                    mem.seek(low)
                    found = pattern.search(mem.read(high - low))
                except (OSError, OverflowError, ValueError):
                    continue
                if found:
                    return int(found.group(1))
    except OSError:
        pass
    return _nothing_learned(text, wpm)
"""


def test_the_process_memory_is_no_oracle(
    engine: Engine,
    verifier: Verifier,
    example_images: ExampleImages,
    tasks: dict[str, TaskManifest],
) -> None:
    task = tasks["swe-forge__textkit-9"]
    patch = _stats_oracle(example_images, task, MEMORY_ORACLE)
    check(engine, verifier, task, task, patch, "unresolved", "not passed", "memory")


def test_an_unfixed_tree_is_never_called_tampering(
    verifier: Verifier,
    example_images: ExampleImages,
    tasks: dict[str, TaskManifest],
) -> None:
    # A patch that changes nothing the tests see (a comment): the base's own answers. No
    # decoy may hold one of them (admission drops those the base passes), or an honest wrong
    # fix would be graded tamper_detected.
    repo = GitRepository(example_images.repo)
    seen = 0
    for task in sorted(tasks.values(), key=lambda t: t.instance_id):
        if task.harness["canaries"]["base_passes_kept"]:
            continue  # its every decoy holds a base answer: kept rather than the task lost
        path = next(p for p in touched_paths(task.patch) if p.endswith(".py"))
        got = repo.blob_at(task.base_commit, path)
        if got is None:
            continue
        seen += 1
        patch = append_to({path: got[1].decode()}, path, "# nothing changes\n")
        result = verifier.verify(task, patch, "unfixed")
        assert (result.status, result.reward) == ("unresolved", 0.0), (
            f"{task.instance_id}: {result.status} {result.detail[:400]}"
        )
        assert "base_passed" in task.harness["canaries"]  # admission ran the base against them
    assert seen >= 4


def test_only_the_comparison_hook_gate_stops_a_comparison_that_checks_the_answer(
    verifier: Verifier,
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With the host's gate out of the way the twins are fooled (each wrong literal fails the
    # check, the right one passes it): a real attack, paid 1.0. With it, refused unrun.
    path, code = CAPABILITY_ATTACKS["comparison_hooks"]
    patch = append_to(base_file, path, code)
    task = tasks[TASK]
    with monkeypatch.context() as m:
        m.setattr(PythonEcosystem, "check_scanned", lambda *a: [])
        fooled = verifier.verify(task, patch, "hook-blind")
    assert (fooled.status, fooled.reward) == ("resolved", 1.0), fooled.detail
    caught = verifier.verify(task, patch, "hook")
    assert (caught.status, caught.reward) == ("invalid_patch", 0.0), caught.detail
    assert {v["code"] for v in caught.violations} == {"capability_comparison_hooks"}
    assert "Lines.__eq__" in caught.detail and "Text.__eq__" in caught.detail


def test_patched_pytest_raises_is_caught_by_its_canary(
    engine: Engine,
    verifier: Verifier,
    example_images: ExampleImages,
    tasks: dict[str, TaskManifest],
) -> None:
    # The gold fix without its ValueError, plus a pytest.raises that swallows everything: the
    # fail-to-pass test "passes"; its canary (raises of an exception nobody raises) does too.
    from swe_forge.diffs import apply_file_patch, parse_diff

    task = tasks[RAISES_TASK]
    assert "pytest.raises" in task.test_patch
    repo = GitRepository(example_images.repo)
    files: dict[str, tuple[str | None, str | None]] = {}
    for fp in parse_diff(task.patch):
        got = repo.blob_at(task.base_commit, fp.path)
        old = got[1] if got else b""
        files[fp.path] = (old.decode() if got else None, apply_file_patch(old, fp).decode())
    old, new = files["src/textkit/wrap.py"]
    assert new is not None
    raising = 'raise ValueError("placeholder is longer than width")'
    assert raising in new
    new = new.replace(raising, "pass") + (
        "\n\nimport contextlib as _cl\nimport pytest as _pt\n\n"
        "_pt.raises = lambda *a, **k: _cl.suppress(BaseException)\n"
    )
    files["src/textkit/wrap.py"] = (old, new)
    check(
        engine,
        verifier,
        permissive(task),
        task,
        diff(files),
        "tamper_detected",
        "decoy",
        "patched_raises",
    )


def test_failed_subtest_fails_its_test(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    # A fail-to-pass test made of unittest subTests: a candidate that fixes one case and breaks
    # another must not resolve the task (pytest 9 reports the failure before the parent's pass).
    import hashlib

    task = tasks[TASK]
    sub = (
        "import unittest\n\nfrom textkit.wrap import wrap\n\n\n"
        "class TestWidths(unittest.TestCase):\n"
        "    def test_widths(self):\n"
        "        cases = [(7, ['aaa bbb', 'ccc']), (3, ['aaa', 'bbb', 'ccc'])]\n"
        "        for width, want in cases:\n"
        "            with self.subTest(width=width):\n"
        "                self.assertEqual(wrap('aaa bbb ccc', width=width), want)\n"
    )
    test_patch = task.test_patch + new_file("tests/test_wrap_sub.py", sub)
    node = "tests/test_wrap_sub.py::TestWidths::test_widths"
    harness = {
        **task.harness,
        "test_patch_sha256": hashlib.sha256(test_patch.encode()).hexdigest(),
        "test_files": [*task.harness["test_files"], "tests/test_wrap_sub.py"],
        "canaries": {"armed": []},
    }
    variant = replace(
        task, test_patch=test_patch, FAIL_TO_PASS=[*task.FAIL_TO_PASS, node], harness=harness
    )
    assert verifier.verify(variant, task.patch, "gold").status == "resolved"
    # The gold fix, plus a special case that breaks width 3 only: one subtest fails.
    fixed = base_file["src/textkit/wrap.py"].replace(
        "len(current) + 1 + len(word) >= width", "len(current) + 1 + len(word) > width"
    )
    line = "    lines: list[str] = []\n"
    assert fixed != base_file["src/textkit/wrap.py"] and line in fixed
    broken = diff(
        {
            "src/textkit/wrap.py": (
                base_file["src/textkit/wrap.py"],
                fixed.replace(line, line + "    if width == 3:\n        return lines\n"),
            )
        }
    )
    result = verifier.verify(variant, broken, "half-fix")
    assert (result.status, result.reward) == ("unresolved", 0.0), result.detail
    assert result.fail_to_pass[node] == "failed"


@pytest.mark.parametrize("mode", ["file", "out-dir"])
def test_attacks_on_the_verifier_keep_every_other_result(
    tasks: dict[str, TaskManifest],
    base_file: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    # One run: every gold patch, attacks on the judge (on permissive tasks, so they reach the
    # runtime), and a prediction on which the verifier itself raises. The run completes; each
    # prediction keeps its own result, in a results file and in a resumable --out folder.
    tasks_path = tmp_path / "tasks.jsonl"
    tasks_path.write_text("".join(permissive(t).to_json() + "\n" for t in tasks.values()))
    rows = [
        {"instance_id": t.instance_id, "model_name_or_path": "gold", "model_patch": t.patch}
        for t in tasks.values()
    ]
    attacks = ("attack_the_judge", "disk_fill_work_tree", "endless_output", "fd_relay")
    for name in attacks:
        rows.append(
            {
                "instance_id": TASK,
                "model_name_or_path": name,
                "model_patch": runtime_attacks(base_file)[name][0],
            }
        )
    rows.append({"instance_id": TASK, "model_name_or_path": "crash", "model_patch": "x"})
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    original = Verifier._verify_once

    def flaky(self: Verifier, task: TaskManifest, patch: str, model: str, **kw: object) -> object:
        if model == "crash":
            raise RuntimeError("a bug in the verifier")
        return original(self, task, patch, model, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Verifier, "_verify_once", flaky)
    out = tmp_path / "results.jsonl"
    out_dir = tmp_path / "out" if mode == "out-dir" else None
    run, report = run_verify(
        tasks_path, out, config=load_config(), predictions=preds, jobs=2, out_dir=out_dir
    )
    by_model = {(r.instance_id, r.model_name_or_path): r for r in run.results}
    assert all(by_model[(t, "gold")].status == "resolved" for t in tasks)
    for name in attacks:
        assert by_model[(TASK, name)].reward == 0.0
        assert by_model[(TASK, name)].status not in ("resolved", "infra_error")
    assert report["resolved_instances"] == len(tasks)
    if out_dir is None:
        assert len(run.results) == len(rows) == len(out.read_text().splitlines())
        assert by_model[(TASK, "crash")].status == "infra_error"
        assert "a bug in the verifier" in by_model[(TASK, "crash")].detail
    else:
        # Infrastructure errors are not recorded in the folder: a rerun grades them again.
        assert (TASK, "crash") not in by_model and report["not_graded"] == 1
        assert len((out_dir / "results.jsonl").read_text().splitlines()) == len(rows) - 1


def test_infra_error_is_not_the_models_fault(
    verifier: Verifier, tasks: dict[str, TaskManifest]
) -> None:
    task = tasks[TASK]
    broken = replace(task, image={**task.image, "id": "sha256:" + "0" * 64})
    result = verifier.verify(broken, task.patch, "gold")
    assert result.status == "infra_error" and result.reward == 0.0


def test_the_judges_container(verifier: Verifier, tasks: dict[str, TaskManifest]) -> None:
    # Read-only root, capped tmpfs where writing is allowed, no writable host mount, no
    # capabilities for the task's user.
    task = tasks[TASK]
    with verifier.sandbox.open(str(task.image["id"])) as session:
        ctr = session.ctr
        ctr.reload()
        mounts = ctr.attrs["Mounts"]
        assert mounts and all(not m["RW"] for m in mounts), mounts
        assert ctr.attrs["HostConfig"]["ReadonlyRootfs"] is True

        def sh(cmd: str, user: str = "1000:1000") -> tuple[int, str]:
            code, out = ctr.exec_run(["/bin/sh", "-c", cmd], user=user)
            return code, out.decode()

        assert sh("touch /opt/x")[0] != 0 and sh("touch /opt/x", "0:0")[0] != 0
        assert sh("touch /swe-forge/x", "0:0")[0] != 0
        assert sh("cat /swe-forge/job/job.json || ls /swe-forge/job")[0] != 0
        code, out = sh("grep -E '^Cap(Eff|Prm)' /proc/self/status")
        assert code == 0 and set(out.split()) == {"CapPrm:", "CapEff:", "0000000000000000"}
        code, out = sh("df -P /testbed /tmp /home/swe | tail -n +2")
        assert code == 0 and all(line.split()[0] == "tmpfs" for line in out.splitlines())


def test_host_is_unaffected(
    engine: Engine, tasks: dict[str, TaskManifest], verifier: Verifier, base_file: dict[str, str]
) -> None:
    # This process's scratch folders only (other swe-forge runs on the machine make theirs).
    mine = f"sfv-{os.getpid()}-"
    scratch_before = {p for p in os.listdir("/tmp") if p.startswith(mine)}
    task = permissive(tasks[TASK])
    for name in ("fork_bomb", "disk_fill_work_tree", "attack_the_judge", "forged_reports"):
        verifier.verify(task, runtime_attacks(base_file)[name][0], name)
    image = str(task.image["id"])
    assert engine.client.containers.list(all=True, filters={"ancestor": image}) == []
    assert {p for p in os.listdir("/tmp") if p.startswith(mine)} <= scratch_before
    assert not Path("/etc/evil").exists() and not Path("../evil.py").exists()


def test_startup_files_already_in_the_repository_are_locked_not_tamper(
    engine: Engine, verifier: Verifier, tasks: dict[str, TaskManifest], tmp_path: Path
) -> None:
    # Real projects keep a sitecustomize.py or a .pth deep in their tree (tooling, fixtures).
    # Present before the candidate ran, it is the base's: locked like the runner files, never
    # "appeared during the run" (which once rejected every task of a real project).
    task = tasks[TASK]
    (tmp_path / "Dockerfile").write_text(
        f"FROM {task.image['id']}\n"
        "USER 0\n"
        "RUN mkdir -p /testbed/tools/site && printf 'X = 1\\n' > /testbed/tools/site/sitecustomize.py"
        " && printf '\\n' > /testbed/tools/site/extra.pth && chown -R 1000:1000 /testbed/tools\n"
        "USER 1000\n"
        "RUN git -C /testbed add -A tools && git -C /testbed -c user.name=t -c user.email=t@t"
        " commit -q -m base\n"
    )
    image = engine.build(tmp_path, "swe-forge-test/startup-files:latest", labels={})
    derived = replace(task, image={**task.image, "id": image.id})
    gold = verifier.verify(derived, task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail


def resolved_in_every_place(
    verifier: Verifier, task: TaskManifest, patch: str, name: str
) -> list[VerifyResult]:
    """Verify ``patch`` three times (the honest twin's place is random: each run must hold)
    with the gate open; every one must be resolved."""
    results = []
    for n in range(3):
        result = verifier.verify(permissive(task), patch, f"{name}-{n}")
        assert (result.status, result.reward) == ("resolved", 1.0), result.detail[:600]
        results.append(result)
    return results


# A twin that leaves the next one a message, in a file the patch created and in one of the
# seed's (README.md): the correct fix, plus import-time code that counts the twins before it
# from those files and breaks the fix unless it is the first. Without every file put back
# between twins, the honest twin would be wrong whenever it is not the first.
_MEMO = (
    "import os as _os\n"
    "_here = _os.path.dirname(__file__)\n"
    "_seen = 0\n"
    "for _p in (_os.path.join(_here, 'memo.txt'), '/testbed/README.md'):\n"
    "    with open(_p) as _f:\n"
    "        _seen += _f.read().count('twin was here')\n"
    "    with open(_p, 'a') as _f:\n"
    "        _f.write('twin was here\\n')\n"
    "if _seen:\n"
    "    import sys as _sys\n"
    "    _sys.modules['textkit.wrap'].wrap = lambda *a, **k: ['a message from another twin']\n"
)


# The same message in a POSIX message queue: they live in the container's IPC namespace, not
# in any file the supervisor puts back, and ``ipcrm --all`` before util-linux 2.39 (Debian
# bookworm's) removes only System V objects. A red team carried 2 KB between twins in queue
# names, enough to find the honest twin by comparing test files. No queue can be made now.
_MQUEUE_MEMO = (
    "import os as _os\n"
    "try:\n"
    "    _seen = bool(_os.listdir('/dev/mqueue'))\n"
    "except OSError:\n"
    "    _seen = False\n"
    "try:\n"
    "    _os.close(_os.open('/dev/mqueue/swe-forge-memo', _os.O_CREAT | _os.O_RDWR, 0o600))\n"
    "except OSError:\n"
    "    pass\n"
    "if _seen:\n"
    "    import sys as _sys\n"
    "    _sys.modules['textkit.wrap'].wrap = lambda *a, **k: ['a message from another twin']\n"
)


def test_a_twin_cannot_leave_the_next_a_message_in_a_posix_queue(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    task = tasks[TASK]
    patch = task.patch + append_to(base_file, "src/textkit/__init__.py", _MQUEUE_MEMO)
    resolved_in_every_place(verifier, task, patch, "mqueue")


# A twin's place in the run order read from its process id: import-time code that breaks the
# fix when its pid says other twins ran before it, then uses up 300 pids (forks that exit at
# once). In one container for every twin, pids are handed out in sequence and only the first
# twin is correct (the honest one is paid a third of the time); each twin in a container of
# its own starts from the same pids, so the fix holds in every twin.
_PID_PLACE = (
    "import os as _os\n"
    "if _os.getpid() > 250:\n"
    "    import sys as _sys\n"
    "    _sys.modules['textkit.wrap'].wrap = lambda *a, **k: ['not the first twin']\n"
    "for _n in range(300):\n"
    "    _c = _os.fork()\n"
    "    if _c == 0:\n"
    "        _os._exit(0)\n"
    "    _os.waitpid(_c, 0)\n"
)


def test_a_twin_cannot_tell_its_place_from_its_process_id(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    task = tasks[TASK]
    patch = task.patch + append_to(base_file, "src/textkit/__init__.py", _PID_PLACE)
    for result in resolved_in_every_place(verifier, task, patch, "pid-place"):
        assert result.verifier["twins"]["decoys"] == 2


def test_a_twin_cannot_leave_the_next_a_message_in_the_work_tree(
    verifier: Verifier, tasks: dict[str, TaskManifest], base_file: dict[str, str]
) -> None:
    task = tasks[TASK]
    init_py = "src/textkit/__init__.py"
    patch = (
        task.patch
        + append_to(base_file, init_py, _MEMO)
        + new_file("src/textkit/memo.txt", "the patch's own file\n")
    )
    resolved_in_every_place(verifier, task, patch, "memo")


_COMPILED_WHAT = r"""
import importlib._bootstrap_external as be, json, sys
compiled = []
to_code = be.SourceLoader.source_to_code
def recording(self, data, path, *args, **kwargs):
    compiled.append(path.rsplit("/", 1)[-1])
    return to_code(self, data, path, *args, **kwargs)
be.SourceLoader.source_to_code = recording
sys.path.insert(0, "/swe-forge/bin")
import swe_forge_supervisor, swe_forge_canaries, swe_forge_capabilities, swe_forge_polyglot
print(json.dumps(sorted(compiled)))
"""


def test_our_bytecode_is_used_while_it_is_our_source(
    engine: Engine, example_images: ExampleImages, tmp_path: Path
) -> None:
    # The judge's files are compiled once per image (Sandbox.bytecode), not in every
    # container; hash-checked, so a copy of the source that differs by a byte is compiled
    # from that source, never run from bytecode made of another.
    from swe_forge.gates.sandbox import COMPILED, Sandbox, SandboxSettings

    image = next(iter(example_images.records.values()))["instance_image_id"]
    assert isinstance(image, str)
    sandbox = Sandbox(engine, SandboxSettings(), tmp_path / "cache")
    code = sandbox.bytecode(image)
    assert sorted(n.split(".", 1)[0] + ".py" for n in code) == sorted(COMPILED)

    def compiled_in_container(files: dict[str, bytes]) -> list[str]:
        root = tmp_path / "mount"
        if root.exists():
            import shutil

            shutil.rmtree(root)
        (root / "bin" / "__pycache__").mkdir(parents=True)
        for name, data in files.items():
            (root / "bin" / name).write_bytes(data)
        for name, data in code.items():
            (root / "bin" / "__pycache__" / name).write_bytes(data)
        for p in [root, *root.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        out = engine.run_locked(
            image,
            ["python3", "-I", "-S", "-B", "-c", _COMPILED_WHAT],
            timeout=120,
            volumes={str(root): {"bind": "/swe-forge", "mode": "ro"}},
        )
        assert out.exit_code == 0, out.output
        return list(json.loads(out.output.strip().splitlines()[-1]))

    ours = {name: sandbox.files[name] for name in COMPILED}
    assert compiled_in_container(ours) == []
    changed = dict(ours, **{"swe_forge_canaries.py": ours["swe_forge_canaries.py"] + b"\n# x\n"})
    assert compiled_in_container(changed) == ["swe_forge_canaries.py"]
