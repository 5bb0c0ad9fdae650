"""The JS runners: Jest, Vitest, Mocha and Node's own (``node --test``) with their per-test
reports, the test name filter, and the environment of a run.
"""

from __future__ import annotations

import random
import re
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from swe_forge.gates.sandbox import MOUNT

if TYPE_CHECKING:
    pass

from swe_forge.ecosystems.js.toolchain import NODE_TEST, _vtuple

NODE_MODULES = "/opt/node_modules"


#: The judge's Mocha reporter (brought in with the harness; see swe_forge_mocha_reporter.js).
MOCHA_REPORTER = f"{MOUNT}/bin/swe_forge_mocha_reporter.js"


#: The judge's reporter for Node's own test runner (brought in with the harness; see
#: swe_forge_node_reporter.mjs): our Mocha reporter's JSON shape.
NODE_REPORTER = f"{MOUNT}/bin/swe_forge_node_reporter.mjs"


#: The first Node releases with ``--test-concurrency`` (one test file at a time) and
#: ``--test-timeout`` (each test's limit) that we rely on (Debian's 18 has neither for sure).
NODE_TEST_SERIAL = (20, 10)
NODE_TEST_TIMEOUT = (20, 11)


#: The judge's guard of Jest's equality (brought in with the harness; see
#: swe_forge_jest_guard.js): only matchers Jest itself made are asymmetric.
JEST_GUARD = f"{MOUNT}/bin/swe_forge_jest_guard.js"


#: The first jest-cli release whose CLI takes ``--randomize`` (read in each release's
#: ``build/args.js``: 29.4.3 has ``seed`` only).
JEST_RANDOMIZE = (29, 5)


#: The environment of every test run.
JS_ENV = {
    "CI": "true",
    "NODE_ENV": "test",
    "FORCE_COLOR": "0",
    "NO_COLOR": "1",
    "NODE_OPTIONS": "",
    "npm_config_offline": "true",
}


def split_module(module: str) -> tuple[str, str]:
    """``jest@29.7.0`` -> (``jest``, ``29.7.0``)."""
    name, _, version = module.partition("@")
    return name or "jest", version


class JsRunner:
    """The framework's command with its JSON report on stdout."""

    name = "node-test"

    def __init__(self, module: str, packages: list[str] | None = None, config: str = "") -> None:
        self.module = module
        self.framework, self.version = split_module(module)
        self.packages = packages
        #: The runner's configuration file the project's test script names (a repository
        #: path, :func:`swe_forge.ecosystems.js.toolchain.runner_config`), "" for the default.
        self.config = config

    def _config(self) -> list[str]:
        """The configuration option (Mocha reads ``--config`` from version 6)."""
        if not self.config:
            return []
        if self.framework == "mocha" and self.version and _vtuple(self.version) < (6,):
            return []
        return ["--config", self.config]

    def argv(
        self, files: list[str], *, order_seed: int = 0, grep: str = "", timeout: float = 0.0
    ) -> list[str]:
        """The test command for explicit test files (``grep``: a full-name regex; ``timeout``:
        each test's limit in seconds, 0 for the framework's own)."""
        fw = self.framework
        ms = str(int(timeout * 1000)) if timeout > 0 else ""
        if fw == "vitest":
            cmd = ["node", "node_modules/vitest/vitest.mjs", "run", *self._config()]
            cmd.append("--reporter=json")
            cmd += ["--sequence.shuffle", f"--sequence.seed={order_seed}", "--watch=false"]
            if ms:
                cmd.append(f"--testTimeout={ms}")
            if grep:
                cmd += ["-t", grep]
            return cmd + list(files)
        if fw == NODE_TEST:
            # Node's own runner: every test of the files runs (its name filter matches a
            # test's own name before Node 22 and the full name from 22, and a test that does
            # not match hides its subtests: the files run whole, as Mocha's do without grep).
            ordered = list(files)
            random.Random(order_seed).shuffle(ordered)
            cmd = ["node", "--test", f"--test-reporter={NODE_REPORTER}"]
            cmd.append("--test-reporter-destination=stdout")
            node = _vtuple(self.version or "0")
            if node >= NODE_TEST_SERIAL:
                cmd.append("--test-concurrency=1")
            if ms and node >= NODE_TEST_TIMEOUT:
                cmd.append(f"--test-timeout={ms}")
            return cmd + ordered
        if fw == "mocha":
            ordered = list(files)
            random.Random(order_seed).shuffle(ordered)
            # bin/_mocha is the in-process CLI in every Mocha release (bin/mocha.js only
            # since 9; before, bin/mocha); --no-color is not an option before Mocha 6 (and
            # the JSON report has no colour: NO_COLOR and FORCE_COLOR=0 are set anyway).
            # Our reporter: Mocha's JSON shape with each test's file at every version.
            cmd = ["node", "node_modules/mocha/bin/_mocha", *self._config()]
            cmd += ["--reporter", MOCHA_REPORTER]
            if ms:
                cmd += ["--timeout", ms]
            # --exit (force the process to end after the run) exists from Mocha 4, which made
            # waiting for open handles the default; before, ending was the default and the
            # option unknown (Mocha 2 and 3 refuse to start with it).
            if not self.version or _vtuple(self.version) >= (4,):
                cmd += ["--exit"]
            if grep:
                cmd += ["--grep", grep]
            return cmd + ordered
        cmd = ["node", "node_modules/jest/bin/jest.js", *self._config()]
        cmd += ["--ci", "--json", "--runInBand"]
        cmd += ["--no-watchman", "--forceExit", "--cacheDirectory=/tmp/jest-cache"]
        # A project's coverage thresholds (coverageThreshold with collectCoverage) make Jest
        # exit 1 when every test passed, since a run of a few files covers little: coverage
        # says nothing of a test's outcome (vercel/ms: harness_disagreement).
        cmd.append("--coverage=false")
        if ms:
            cmd.append(f"--testTimeout={ms}")
        # --seed came in jest-cli 29.2 but --randomize, which orders the tests by it, only in
        # 29.5 (29.3.1 and 29.4.3 refuse it: "Unrecognized option"; their build/args.js).
        if _vtuple(self.version or "0") >= JEST_RANDOMIZE:
            cmd += ["--randomize", f"--seed={order_seed}"]
        if grep:
            cmd += ["-t", grep]
        return [*cmd, "--runTestsByPath", *files]

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The command as one shell line (recorded in manifests)."""
        return " ".join(shlex.quote(a) for a in self.argv(test_files, order_seed=order_seed))

    def env(self) -> dict[str, str]:
        """The environment of a run: Jest's with the judge's guard preloaded (in gate runs
        too, so that a test that relies on a value of its own with ``asymmetricMatch`` is
        judged the same way at admission as when graded)."""
        env = dict(JS_ENV)
        if self.framework == "jest":
            env["NODE_OPTIONS"] = f"--require {JEST_GUARD}"
        return env

    def report(self, files: list[str]) -> dict[str, Any]:
        """The supervisor's report spec."""
        fmt = {"vitest": "vitest-json", "mocha": "mocha-json", NODE_TEST: "node-test-json"}.get(
            self.framework, "jest-json"
        )
        return {"format": fmt, "module": self.module, "files": sorted(files), "root": "/testbed/"}

    def run_spec(
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        seed = order_seed % (2**31 - 1)
        return {
            "argv": self.argv(test_files, order_seed=seed, timeout=test_timeout),
            "env": self.env(),
            "report": self.report(test_files),
        }


#: Characters no command-line argument can carry (NUL ends a C string; a lone surrogate is
#: no UTF-8), and other control characters, which are kept readable.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _grep(names: Iterable[str], framework: str) -> str:
    """An anchored regex of full test names (Jest and Vitest join titles with a space).

    A control character or lone surrogate in a name (jshttp/cookie tests "\\0" in cookie
    values, eemeli/yaml "\\udead") is written as a ``\\uXXXX`` escape, which JavaScript's
    RegExp reads as that code unit: as it is, the argument cannot be passed (``execve``)."""
    parts = sorted({"".join(_escape(c) for c in n) for n in names})
    return "^(" + "|".join(parts) + ")$"


def _escape(char: str) -> str:
    """One character of a name as a regex that JavaScript's RegExp and Python's read alike."""
    return f"\\u{ord(char):04x}" if _UNPRINTABLE.match(char) else re.escape(char)


def _full_name(title: str, framework: str) -> str:
    """A test id's title as the framework's name filter sees it (titles joined by a space)."""
    if framework in ("mocha", NODE_TEST):
        return title
    base = re.sub(r" \[\d+\]$", "", title)
    return base.replace(" > ", " ")
