"""The pytest harness plugin, run by real pytest processes on projects made here.

Events arrive over a pipe, as the supervisor reads them in a container. The subtest cases run
under several pytest versions (each in its own venv made with uv from the package index):
pytest 9 reports unittest ``subTest`` and ``subtests`` failures *before* the parent's own
"passed" report, which a harness that lets the last report win turns into a pass.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from swe_forge.ecosystems.python.recipe_requirements import harness_pytest_floor

PROJECT = {
    "tests/test_one.py": (
        "import pytest\n\n"
        "def test_pass():\n    pass\n\n"
        "def test_fail():\n    assert 1 == 2\n\n"
        "@pytest.mark.parametrize('x,y', [(1, 2), ('a b', 'c::d')])\n"
        "def test_param(x, y):\n    assert x != y\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n"
        "def test_setup_error(broken):\n    pass\n\n"
        "@pytest.fixture\ndef bad_teardown():\n    yield\n    raise RuntimeError('teardown')\n\n"
        "def test_teardown_error(bad_teardown):\n    pass\n\n"
        "@pytest.mark.skip\ndef test_skipped():\n    pass\n\n"
        "@pytest.mark.xfail\ndef test_xfail():\n    assert False\n\n"
        "class TestGroup:\n    def test_method(self):\n        pass\n"
    ),
    "tests/test_broken_import.py": "from nowhere import nothing\n\ndef test_never():\n    pass\n",
}

SUBTESTS = {
    "tests/test_sub.py": (
        "import unittest\n\n"
        "class T(unittest.TestCase):\n"
        "    def test_unittest_subtest_fails(self):\n"
        "        for i in range(3):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, 1)\n\n"
        "    def test_unittest_subtests_pass(self):\n"
        "        for i in range(3):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertLess(i, 3)\n"
    ),
}

SUBTESTS_FIXTURE = {
    "tests/test_subfixture.py": (
        "def test_fixture_subtest_fails(subtests):\n"
        "    for i in range(3):\n"
        "        with subtests.test(i=i):\n"
        "            assert i != 1\n\n"
        "def test_fixture_subtests_pass(subtests):\n"
        "    for i in range(3):\n"
        "        with subtests.test(i=i):\n"
        "            assert i < 3\n"
    ),
}

PLUGIN_DIR = Path(str(resources.files("swe_forge.gates.harness")))


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


KEY = bytes(range(32))


def run_harness(
    root: Path,
    *args: str,
    python: str = sys.executable,
    seed: int | None = 1,
    select: dict[str, object] | None = None,
    on_hello: Callable[[], None] | None = None,
    extra_env: dict[str, str] | None = None,
) -> tuple[list[dict[str, object]], int]:
    """Run pytest with the harness, as the supervisor does: the secret (key, selection) on a
    pipe read once, events on another. Return the authenticated events and the exit status;
    a line that fails its MAC or its sequence number fails the test. ``on_hello`` is what the
    supervisor does when the harness says hello (close the test files), before it answers on
    the harness's acknowledgement pipe."""
    read_fd, write_fd = os.pipe()
    key_read, key_write = os.pipe()
    ack_read, ack_write = os.pipe() if on_hello is not None else (-1, -1)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "SWE_FORGE", "PYTHON"))
    }
    env.update(
        PYTHONPATH=str(PLUGIN_DIR),
        SWE_FORGE_FD=str(write_fd),
        SWE_FORGE_KEY_FD=str(key_read),
        PYTHONHASHSEED="0",
    )
    if seed is not None:
        env["SWE_FORGE_ORDER_SEED"] = str(seed)
    env.update(extra_env or {})
    if on_hello is not None:
        env["SWE_FORGE_ACK_FD"] = str(ack_read)
    secret: dict[str, object] = {"key": KEY.hex(), **(select or {})}
    os.write(key_write, json.dumps(secret).encode())
    os.close(key_write)
    chunks: list[bytes] = []

    def pump() -> None:
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
            if on_hello is not None and not acked and b"\n" in b"".join(chunks):
                on_hello()
                os.write(ack_write, b"1")
                os.close(ack_write)
                acked.append(True)

    acked: list[bool] = []

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        proc = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-p",
                "swe_forge_harness",
                "-p",
                "no:cacheprovider",
                f"--rootdir={root}",
                "--continue-on-collection-errors",
                "-q",
                *args,
            ],
            cwd=root,
            env=env,
            capture_output=True,
            pass_fds=(write_fd, key_read) + ((ack_read,) if on_hello is not None else ()),
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_fd)
        os.close(key_read)
        if on_hello is not None:
            os.close(ack_read)
    reader.join(10)
    os.close(read_fd)
    if on_hello is not None and not acked:
        os.close(ack_write)
    events = []
    for i, line in enumerate(b"".join(chunks).splitlines()):
        mac, _, body = line.partition(b" ")
        assert mac.decode() == hmac.new(KEY, body, hashlib.sha256).hexdigest(), line
        event = json.loads(body)
        assert event.pop("seq") == i
        events.append(event)
    return events, proc.returncode


def outcomes(events: list[dict[str, object]]) -> dict[str, object]:
    return {str(e["nodeid"]): e["outcome"] for e in events if e["event"] == "test"}


def test_outcomes_ids_and_session(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    events, code = run_harness(tmp_path, "tests")
    assert events[0]["event"] == "hello"
    assert outcomes(events) == {
        "tests/test_one.py::TestGroup::test_method": "passed",
        "tests/test_one.py::test_fail": "failed",
        "tests/test_one.py::test_param[1-2]": "passed",
        "tests/test_one.py::test_param[a b-c::d]": "passed",
        "tests/test_one.py::test_pass": "passed",
        "tests/test_one.py::test_setup_error": "error",
        "tests/test_one.py::test_skipped": "skipped",
        "tests/test_one.py::test_teardown_error": "error",
        "tests/test_one.py::test_xfail": "xfailed",
    }
    assert [e["nodeid"] for e in events if e["event"] == "collect_error"] == [
        "tests/test_broken_import.py"
    ]
    end = events[-1]
    assert end["event"] == "end" and end["exitstatus"] == code == 1 and end["tampered"] == ""
    assert end["testsfailed"] >= 3
    # Failures carry their first line (what a generated problem statement quotes); passes none.
    messages = {
        str(e["nodeid"]): e.get("message")
        for e in events
        if e["event"] in ("test", "collect_error") and e.get("message")
    }
    assert messages.keys() == {
        "tests/test_one.py::test_fail",
        "tests/test_one.py::test_setup_error",
        "tests/test_one.py::test_teardown_error",
        "tests/test_broken_import.py",
    }
    assert "assert 1 == 2" in str(messages["tests/test_one.py::test_fail"])
    assert "RuntimeError: setup" in str(messages["tests/test_one.py::test_setup_error"])
    assert "nowhere" in str(messages["tests/test_broken_import.py"])


def test_order_follows_the_seed(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)

    def order(seed: int) -> list[str]:
        return list(outcomes(run_harness(tmp_path, "tests/test_one.py", seed=seed)[0]))

    a, b, a2 = order(1), order(2), order(1)
    assert a == a2 and a != b and sorted(a) == sorted(b)


def test_selection_and_canary_inversion(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    canary = "tests/test_one.py::test_fail"  # fails: what a canary must do
    xpass = "tests/test_one.py::test_pass"  # passes: a canary that held, so the run fails
    events, code = run_harness(
        tmp_path,
        "tests/test_one.py",
        select={"tests": ["tests/test_one.py::test_param[1-2]"], "canaries": [canary, xpass]},
    )
    # Raw outcomes reach the supervisor; pytest itself counted them inverted.
    assert outcomes(events) == {
        "tests/test_one.py::test_param[1-2]": "passed",
        canary: "failed",
        xpass: "passed",
    }
    assert code == 1 and events[-1]["testsfailed"] == 1
    events, code = run_harness(
        tmp_path,
        "tests/test_one.py",
        select={"tests": [], "canaries": [canary], "strict": True},
    )
    assert outcomes(events) == {canary: "failed"} and code == 0
    # Calibration (not strict): a canary that holds is only recorded, never a failure.
    events, code = run_harness(
        tmp_path,
        "tests/test_one.py",
        select={"tests": [], "canaries": [canary, xpass], "strict": False},
    )
    assert outcomes(events) == {canary: "failed", xpass: "passed"} and code == 0


def test_calibration_runs_every_canary_before_the_real_tests(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    real = ["tests/test_one.py::test_param[1-2]", "tests/test_one.py::TestGroup::test_method"]
    canaries = ["tests/test_one.py::test_fail", "tests/test_one.py::test_pass"]
    seen = set()
    for seed in range(1, 7):
        select = {"tests": real, "canaries": canaries, "strict": False, "canaries_first": True}
        ran = list(
            outcomes(run_harness(tmp_path, "tests/test_one.py", seed=seed, select=select)[0])
        )
        assert sorted(ran[:2]) == sorted(canaries) and sorted(ran[2:]) == sorted(real)
        seen.add(tuple(ran))
        # Grading (no canaries_first): canaries are shuffled among the real tests.
        select.pop("canaries_first")
        ran = list(
            outcomes(run_harness(tmp_path, "tests/test_one.py", seed=seed, select=select)[0])
        )
        seen.add(tuple(ran))
    assert any(set(order[:2]) != set(canaries) for order in seen)


def test_grading_order_keeps_the_real_tests_in_collection_order(tmp_path: Path) -> None:
    write(tmp_path, PROJECT)
    real = [
        "tests/test_one.py::test_param[1-2]",
        "tests/test_one.py::test_param[a b-c::d]",
        "tests/test_one.py::TestGroup::test_method",
    ]
    canaries = ["tests/test_one.py::test_fail"]
    places = set()
    for seed in range(1, 9):
        select = {"tests": real, "canaries": canaries, "order": "natural"}
        ran = list(
            outcomes(run_harness(tmp_path, "tests/test_one.py", seed=seed, select=select)[0])
        )
        assert [t for t in ran if t in real] == real  # the order pytest collects them in
        places.add(ran.index(canaries[0]))
    assert len(places) > 1  # the canary's place varies with the seed


def test_canaries_carry_no_mark(tmp_path: Path) -> None:
    # Nothing on a collected item tells a canary from a test: no marker, no keyword.
    write(
        tmp_path,
        {
            "tests/test_m.py": (
                "import pytest\n\n"
                "@pytest.fixture(autouse=True)\n"
                "def _look(request):\n"
                "    assert not list(request.node.iter_markers())\n\n"
                "def test_a():\n    assert 1 == 2\n\n"
                "def test_b():\n    pass\n"
            )
        },
    )
    events, code = run_harness(
        tmp_path,
        "tests",
        select={"tests": ["tests/test_m.py::test_b"], "canaries": ["tests/test_m.py::test_a"]},
    )
    assert outcomes(events) == {
        "tests/test_m.py::test_a": "failed",
        "tests/test_m.py::test_b": "passed",
    }
    assert code == 0


def test_secret_and_channel_are_out_of_reach(tmp_path: Path) -> None:
    # Neither descriptor is named in the environment the tests see, the secret's pipe is
    # closed, and lines written by anyone else fail their MAC.
    write(
        tmp_path,
        {
            "tests/test_child.py": (
                "import os\n\n"
                "def test_env():\n"
                "    assert not [k for k in os.environ if k.startswith('SWE_FORGE_') and k != "
                "'SWE_FORGE_ORDER_SEED']\n"
            )
        },
    )
    events, code = run_harness(tmp_path, "tests")
    assert outcomes(events) == {"tests/test_child.py::test_env": "passed"} and code == 0


def test_import_gate_refuses_new_code_beyond_the_allowance(tmp_path: Path) -> None:
    gate: dict[str, object] = {"gate_imports": True, "allowance": [], "digests": []}
    write(
        tmp_path,
        {
            "tests/test_gen.py": (
                "import importlib, pathlib, sys\n\n"
                "def test_generated(tmp_path):\n"
                "    sys.path.insert(0, str(tmp_path))\n"
                "    (tmp_path / 'plain_mod.py').write_text('X = 1\\n')\n"
                "    assert importlib.import_module('plain_mod').X == 1\n"
                "    (tmp_path / 'evil_mod.py').write_text('import gc\\nA = gc.get_objects()\\n')\n"
                "    try:\n"
                "        importlib.import_module('evil_mod')\n"
                "    except ImportError as exc:\n"
                "        assert 'refused by the judge' in str(exc)\n"
                "    else:\n"
                "        raise AssertionError('imported')\n"
            )
        },
    )
    # The test module itself was there before the run: the supervisor digested it.
    gate["digests"] = [hashlib.sha256((tmp_path / "tests/test_gen.py").read_bytes()).hexdigest()]
    # Only pytest's temporary folders count as writable here: this checkout (and its .venv)
    # may itself live under /tmp, where the container's prefixes would gate every module.
    gate["writable"] = [str(Path(tempfile.gettempdir()).resolve()) + "/pytest-of-"]
    events, _ = run_harness(tmp_path, "tests", select=gate)
    assert outcomes(events) == {"tests/test_gen.py::test_generated": "passed"}
    tamper = [e for e in events if e["event"] == "tamper"]
    assert tamper and "evil_mod.py" in str(tamper[0]["detail"]) and "gc_access" in str(tamper)


# ------------------------------------------------------------ test files read before the code
#: Code under test that reads its test file while the tests import it (a computed path): what
#: it finds there is what it would return.
EARLY_READER = {
    "pkg/__init__.py": (
        "import os\n"
        "_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n"
        "try:\n"
        "    with open(os.path.join(_here, 'te' + 'sts', 'test_' + 'pkg.py')) as _fh:\n"
        "        SEEN = _fh.read()\n"
        "except OSError:\n"
        "    SEEN = ''\n\n"
        "def answer():\n    return 41\n"
    ),
    "tests/__init__.py": "",
    "tests/test_pkg.py": (
        "from pkg import SEEN, answer\n\n"
        "def test_answer():\n    assert answer() == 41\n\n"
        "def test_nothing_seen():\n    assert 'test_answer' not in SEEN\n\n"
        "def test_rewritten():\n    got = [1]\n    assert got == [2]\n"
    ),
}


def pytest_venv(root: Path, version: str) -> str:
    """A venv (made with uv from the package index) with ``pytest==version``; its python."""
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    venv = root / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", python, f"pytest=={version}"],
        check=True,
        timeout=300,
    )
    return python


@pytest.mark.parametrize(
    "version", ["this pytest", "the recipe's floor", "pytest 7.4", "pytest 9.0"]
)
def test_test_files_are_read_before_any_code_under_test(
    tmp_path: Path, venvs: dict[str, str], version: str
) -> None:
    # The harness reads the files the secret names at import; on hello the supervisor closes
    # them (here: their text is replaced, as this test may run as root). pytest imports them
    # from the harness's copy, assertions rewritten; the package they import, reading the
    # file at collection, finds nothing of them.
    write(tmp_path, EARLY_READER)
    test_file = tmp_path / "tests/test_pkg.py"

    def close() -> None:
        test_file.write_text("raise RuntimeError('read from disk')\n")

    if version == "this pytest":
        python = sys.executable
    elif version == "the recipe's floor":  # its assertion rewriting takes other arguments
        floor = str(harness_pytest_floor(f"{sys.version_info[0]}.{sys.version_info[1]}"))
        python = pytest_venv(tmp_path / "env", floor)
    else:
        python = venvs[version]
    events, code = run_harness(
        tmp_path,
        "tests",
        python=python,
        select={"sources": ["tests/test_pkg.py"]},
        on_hello=close,
    )
    assert outcomes(events) == {
        "tests/test_pkg.py::test_answer": "passed",
        "tests/test_pkg.py::test_nothing_seen": "passed",
        "tests/test_pkg.py::test_rewritten": "failed",
    }, events
    message = next(str(e.get("message")) for e in events if e.get("outcome") == "failed")
    assert "[1] == [2]" in message, message  # pytest's rewriting, not a bare AssertionError
    assert code == 1 and not [e for e in events if e["event"] == "tamper"]


def test_without_the_harness_copy_the_closed_file_is_what_pytest_gets(tmp_path: Path) -> None:
    # The same run with no sources in the secret: pytest reads the closed file from disk (the
    # control for the test above: it is the harness's copy that made the difference).
    write(tmp_path, EARLY_READER)
    test_file = tmp_path / "tests/test_pkg.py"

    def close() -> None:
        test_file.write_text("raise RuntimeError('read from disk')\n")

    events, _ = run_harness(tmp_path, "tests", on_hello=close)
    assert not outcomes(events)
    assert [e["nodeid"] for e in events if e["event"] == "collect_error"] == ["tests/test_pkg.py"]


@pytest.mark.parametrize("version", ["this pytest", "pytest 8.3 + pytest-subtests", "pytest 9.0"])
@pytest.mark.parametrize("layout", ["package", "rootdir"])
def test_importlib_import_mode_gets_the_harness_copy(
    tmp_path: Path, venvs: dict[str, str], version: str, layout: str
) -> None:
    # First contact (hynek/structlog, session 20): `addopts = --import-mode=importlib` with
    # pytest 8.3 to 9.0 asks the assertion-rewrite hook with the module's own file as well as
    # its package root (pytest #12659), but every other finder, the judge's import gate
    # included, with the root alone. The gate found nothing, pytest asked the hook itself, and
    # its loader read the closed test file: a collection error in every run of such projects.
    files = {k.replace("tests/", "tests/inner/"): v for k, v in EARLY_READER.items()}
    files["tests/inner/test_pkg.py"] = files["tests/inner/test_pkg.py"]
    files["pkg/__init__.py"] = files["pkg/__init__.py"].replace(
        "'sts', 'test_'", "'sts', 'inner', 'test_'"
    )
    if layout == "package":
        files["tests/__init__.py"] = ""
    else:
        del files["tests/inner/__init__.py"]
    write(tmp_path, files)
    test_file = tmp_path / "tests/inner/test_pkg.py"

    def close() -> None:
        test_file.write_text("raise RuntimeError('read from disk')\n")

    python = sys.executable if version == "this pytest" else venvs[version]
    events, code = run_harness(
        tmp_path,
        "tests",
        "--import-mode=importlib",
        python=python,
        select={"sources": ["tests/inner/test_pkg.py"]},
        on_hello=close,
    )
    assert outcomes(events) == {
        "tests/inner/test_pkg.py::test_answer": "passed",
        "tests/inner/test_pkg.py::test_nothing_seen": "passed",
        "tests/inner/test_pkg.py::test_rewritten": "failed",
    }, events
    message = next(str(e.get("message")) for e in events if e.get("outcome") == "failed")
    assert "[1] == [2]" in message, message
    assert code == 1 and not [e for e in events if e["event"] == "tamper"]


# ------------------------------------------------------------ the running test's identity
#: The sixteenth red team's forgery: the code under test reads the running test's node id from
#: the environment (pytest's PYTEST_CURRENT_TEST) and, with parametrised ids, returns the
#: expected value spelt in it. No name of pytest appears in the patch.
ID_READER = {
    "pkg/__init__.py": (
        "import os\n\n"
        "def reading_time(words):\n"
        "    for value in os.environ.values():\n"
        "        if value.endswith('] (call)'):\n"
        "            return int(value[: -len('] (call)')].rsplit('-', 1)[1])\n"
        "    return -1\n\n"
        "def under_pytest():\n"
        "    return os.environ.get('PYTEST_CURRENT_TEST', '')\n"
    ),
    "tests/test_pkg.py": (
        "import pytest\n"
        "from pkg import reading_time, under_pytest\n\n"
        "@pytest.mark.parametrize('words,minutes', [(250, 2), (500, 3)])\n"
        "def test_reading_time(words, minutes):\n"
        "    assert reading_time(words) == minutes\n\n"
        "def test_still_under_pytest():\n"
        "    assert under_pytest().endswith(' (call)')\n"
    ),
}


@pytest.mark.parametrize("version", ["this pytest", "the recipe's floor", "pytest 9.0"])
def test_the_running_tests_id_is_not_in_the_environment(
    tmp_path: Path, venvs: dict[str, str], version: str
) -> None:
    write(tmp_path, ID_READER)
    if version == "this pytest":
        python = sys.executable
    elif version == "the recipe's floor":
        floor = str(harness_pytest_floor(f"{sys.version_info[0]}.{sys.version_info[1]}"))
        python = pytest_venv(tmp_path / "env", floor)
    else:
        python = venvs[version]
    # The control: plain pytest pays the forgery (the ids spell 2 and 3).
    plain = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert plain.returncode == 0, plain.stdout
    events, code = run_harness(tmp_path, "tests", python=python)
    assert outcomes(events) == {
        "tests/test_pkg.py::test_reading_time[250-2]": "failed",
        "tests/test_pkg.py::test_reading_time[500-3]": "failed",
        # The variable is still there for code that asks whether it runs under pytest.
        "tests/test_pkg.py::test_still_under_pytest": "passed",
    }, events
    assert code == 1 and not [e for e in events if e["event"] == "tamper"]


MEMORY_READER = {
    "tests/test_memory.py": (
        "import sys\n\n"
        "LOADED = sorted(n for n in sys.modules if n.split('.')[0] in ('ctypes', '_ctypes'))\n\n"
        "def test_the_harness_left_no_ctypes_behind():\n"
        "    assert LOADED == []\n\n"
        "def test_this_process_is_not_dumpable():\n"
        "    import ctypes\n"
        "    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE\n"
    ),
}


def test_the_test_process_memory_is_closed(tmp_path: Path) -> None:
    # The eighteenth red team read its node ids (``[250-2]``: the expected value, the same in
    # every twin) out of /proc/self/mem. Not dumpable, the process's /proc files are root's:
    # the tests' user cannot open them (checked as that user in the docker suite).
    write(tmp_path, MEMORY_READER)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    # The control: a plain pytest process is dumpable.
    assert plain.returncode == 1 and "1 failed, 1 passed" in plain.stdout, plain.stdout
    events, code = run_harness(tmp_path, "tests")
    assert outcomes(events) == {
        "tests/test_memory.py::test_the_harness_left_no_ctypes_behind": "passed",
        "tests/test_memory.py::test_this_process_is_not_dumpable": "passed",
    }, events
    assert code == 0


MEMORY_HOG = {
    "tests/test_hog.py": (
        "def test_takes_all_memory():\n"
        # Address space only (calloc'd, never touched): without a cap this passes and costs
        # nothing; under a 200 MB cap it runs out, as a real memory hog would.
        "    held = []\n"
        "    for _ in range(16):\n"
        "        held.append(bytes(64 << 20))\n"
        "    assert len(held) == 16\n\n"
        "def test_runs_after_the_hog():\n"
        # Touched, within the cap only if the hog's memory came back.
        "    assert len(bytearray(150 << 20)) == 150 << 20\n\n"
        "def test_small():\n"
        "    assert sum(range(10)) == 45\n"
    ),
}


def test_a_test_that_exhausts_memory_fails_alone(tmp_path: Path) -> None:
    # One test running out of memory must fail that test, not have the kernel kill the whole
    # pytest process (every outcome lost, the run a resource limit).
    write(tmp_path, MEMORY_HOG)
    events, code = run_harness(
        tmp_path, "tests", seed=None, extra_env={"SWE_FORGE_TEST_MEMORY": str(200 << 20)}
    )
    assert outcomes(events) == {
        "tests/test_hog.py::test_takes_all_memory": "failed",
        "tests/test_hog.py::test_runs_after_the_hog": "passed",
        "tests/test_hog.py::test_small": "passed",
    }, events
    assert code == 1 and events[-1]["event"] == "end"


# ------------------------------------------------------------------ subtests, several pytests
VENVS = {
    "pytest 7.4": ["pytest==7.4.4"],
    "pytest 8.3 + pytest-subtests": ["pytest==8.3.5", "pytest-subtests==0.14.1"],
    "pytest 9.0": ["pytest==9.0.1"],
}


@pytest.fixture(scope="session")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    root = tmp_path_factory.mktemp("venvs")
    out = {}
    for i, (name, reqs) in enumerate(sorted(VENVS.items())):
        venv = root / f"v{i}"
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *reqs],
            check=True,
            timeout=300,
        )
        out[name] = str(venv / "bin" / "python")
    return out


@pytest.mark.parametrize("version", sorted(VENVS))
def test_failed_subtests_fail_their_test(
    tmp_path: Path, venvs: dict[str, str], version: str
) -> None:
    files = dict(SUBTESTS)
    if version != "pytest 7.4":  # the subtests fixture: pytest-subtests, or pytest 9 itself
        files.update(SUBTESTS_FIXTURE)
    write(tmp_path, files)
    events, code = run_harness(tmp_path, "tests", python=venvs[version])
    got = outcomes(events)
    assert got["tests/test_sub.py::T::test_unittest_subtest_fails"] == "failed", got
    assert got["tests/test_sub.py::T::test_unittest_subtests_pass"] == "passed", got
    if "tests/test_subfixture.py" in files:
        assert got["tests/test_subfixture.py::test_fixture_subtest_fails"] == "failed", got
        assert got["tests/test_subfixture.py::test_fixture_subtests_pass"] == "passed", got
    # The exit status agrees with the outcomes: something failed.
    assert code == 1 and events[-1]["exitstatus"] == 1


# ------------------------------------------------------------ the recipe's pytest floor
#: The release just before each floor of swe_forge.ecosystems.python.recipe_requirements.HARNESS_PYTEST_FLOOR.
BELOW_FLOOR = {"6.2.4": "6.2.3", "5.4.0": "5.3.5"}


@pytest.mark.parametrize("which", ["floor", "below the floor"])
def test_recipe_pytest_floor_is_the_oldest_pytest_the_harness_runs_on(
    tmp_path: Path, which: str
) -> None:
    """The recipe raises older pytests to this floor: at it the harness reports what today's
    pytest reports; just below it, it does not (pytest breaks, or the harness cries tamper)."""
    floor = str(harness_pytest_floor(f"{sys.version_info[0]}.{sys.version_info[1]}"))
    version = floor if which == "floor" else BELOW_FLOOR[floor]
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            str(venv / "bin" / "python"),
            f"pytest=={version}",
        ],
        check=True,
        timeout=300,
    )
    write(tmp_path / "today", PROJECT)
    write(tmp_path / "old", PROJECT)
    expected, expected_code = run_harness(tmp_path / "today", "tests")
    events, code = run_harness(tmp_path / "old", "tests", python=str(venv / "bin" / "python"))
    tampered = [e for e in events if e["event"] == "tamper"]
    same = outcomes(events) == outcomes(expected) and code == expected_code and not tampered
    assert same is (which == "floor"), (version, outcomes(events), tampered)


# ------------------------------------------------------------ coverage thresholds
COVERED = {
    "pyproject.toml": ('[tool.pytest.ini_options]\naddopts = "--cov=pkg --cov-fail-under=100"\n'),
    "pkg/__init__.py": "def used():\n    return 1\n\n\ndef unused():\n    return 2\n",
    "tests/test_pkg.py": "from pkg import used\n\n\ndef test_used():\n    assert used() == 1\n",
}


def test_coverage_threshold_is_switched_off_by_the_judge(tmp_path: Path) -> None:
    # A project whose addopts demand 100% coverage: a run of a subset of its tests passes
    # every test yet exits 1, which the judge would read as a disagreement. The supervisor
    # adds --no-cov when the task's environment has pytest-cov.
    from swe_forge.gates.harness.swe_forge_supervisor import pytest_cov_installed

    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    assert not pytest_cov_installed(str(venv)) or Path("/opt/venv").exists()
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", python, "pytest==8.3.5", "pytest-cov==6.0.0"],
        check=True,
        timeout=300,
    )
    assert pytest_cov_installed(str(venv))
    project = tmp_path / "p"
    write(project, COVERED)
    events, code = run_harness(project, "tests", python=python)
    assert outcomes(events) == {"tests/test_pkg.py::test_used": "passed"} and code == 1
    events, code = run_harness(project, "tests", "--no-cov", python=python)
    assert outcomes(events) == {"tests/test_pkg.py::test_used": "passed"} and code == 0
    assert events[-1]["exitstatus"] == 0


def test_a_test_past_the_per_test_limit_fails_alone(tmp_path: Path) -> None:
    # A hang (a read from a pipe nobody writes) fails its own test; the run goes on.
    write(
        tmp_path,
        {
            "tests/test_hang.py": (
                "import os\n\n"
                "def test_hangs():\n"
                "    r, w = os.pipe()\n"
                "    os.read(r, 1)\n\n"
                "def test_swallows():\n"
                "    import time\n"
                "    for _ in range(100):\n"
                "        try:\n"
                "            time.sleep(30)\n"
                "        except Exception:\n"
                "            pass\n\n"
                "def test_after():\n"
                "    pass\n"
            )
        },
    )
    start = time.monotonic()
    events, status = run_harness(tmp_path, "tests", seed=None, select={"test_timeout": 1})
    assert time.monotonic() - start < 25
    assert outcomes(events) == {
        "tests/test_hang.py::test_hangs": "failed",
        "tests/test_hang.py::test_swallows": "failed",
        "tests/test_hang.py::test_after": "passed",
    }
    messages = {e["nodeid"]: e.get("message", "") for e in events if e["event"] == "test"}
    assert "per-test limit of 1 s" in str(messages["tests/test_hang.py::test_hangs"])
    assert status == 1


def test_a_thread_left_blocked_does_not_keep_the_run_alive(tmp_path: Path) -> None:
    # python-dotenv: a writer thread waits on a FIFO forever; the test itself fails at the
    # per-test limit, and the process must still end (with pytest's status) once pytest is
    # done, not wait for that thread.
    write(
        tmp_path,
        {
            "tests/test_thread.py": (
                "import os, threading\n\n"
                "def test_leaves_a_thread():\n"
                "    r, w = os.pipe()\n"
                "    threading.Thread(target=os.read, args=(r, 1)).start()\n"
                "    os.read(r, 1)\n\n"
                "def test_other():\n"
                "    pass\n"
            )
        },
    )
    start = time.monotonic()
    events, status = run_harness(tmp_path, "tests", seed=None, select={"test_timeout": 1})
    assert time.monotonic() - start < 30
    assert outcomes(events) == {
        "tests/test_thread.py::test_leaves_a_thread": "failed",
        "tests/test_thread.py::test_other": "passed",
    }
    assert status == 1 and events[-1]["event"] == "end"


def test_the_run_ends_with_pytests_status_once_pytest_is_done(tmp_path: Path) -> None:
    # The process ends as pytest's last hook returns: an atexit hook of the code under test
    # (here one that would turn the failure into exit status 0) never runs.
    write(
        tmp_path,
        {
            "tests/test_exit.py": (
                "import atexit, os\n\n"
                "atexit.register(lambda: os._exit(0))\n\n"
                "def test_fails():\n"
                "    assert 1 == 2\n\n"
                "def test_passes():\n"
                "    pass\n"
            )
        },
    )
    events, status = run_harness(tmp_path, "tests", seed=None)
    assert outcomes(events) == {
        "tests/test_exit.py::test_fails": "failed",
        "tests/test_exit.py::test_passes": "passed",
    }
    assert status == 1 and events[-1]["event"] == "end" and events[-1]["exitstatus"] == 1
