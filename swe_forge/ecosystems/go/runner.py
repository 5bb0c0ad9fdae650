"""Go's runner: go test per package through test2json, each twin's test binaries built once
before the runs, the argv of a twin's build and run, and the environment of a run.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swe_forge.gates.runner import RunResult

from swe_forge.ecosystems.go.scope import package_dir
from swe_forge.ecosystems.go.toolchain import _vkey

#: Where the toolchain and the module cache live in the image.
GOROOT = "/usr/local/go"


MODCACHE = "/opt/go/modcache"


BUILD_CACHE = "/opt/go/cache"


GO_PATH_ENV = f"{GOROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


#: The environment of every go command in an image (build and tests).
GO_ENV = {
    "GOTOOLCHAIN": "local",
    "GOPROXY": "off",
    "GOSUMDB": "off",
    "GOFLAGS": "-mod=readonly",
    "GOMODCACHE": MODCACHE,
    "CGO_ENABLED": "0",
    "GOTELEMETRY": "off",
    "GOWORK": "off",
}


# A panic as the runtime prints it: the value, then the goroutine dump (the harness keeps the
# first lines of a failed test's output, without blank ones).
_GO_PANIC = re.compile(r"^panic: .*\n(?:.*\n)*?goroutine \d+ \[", re.M)


class GoRunner:
    """``go test -json`` on the packages of the test files."""

    name = "go-test"
    #: A package builds whole: when the test patch's tests do not build before the fix, the
    #: gate runs the base's own tests too (PASS_TO_PASS from them, see gates.gate.classify).
    baseline_runs = True
    #: ``-shuffle=off`` runs the tests in the order they are written (files in name order,
    #: functions in source order): the gate's fallback for suites that share state.
    declared_order = True

    def __init__(self, module: str, packages: list[str] | None = None) -> None:
        self.module = module
        self.packages = packages

    def _packages(self, test_files: list[str]) -> list[str]:
        if self.packages is not None:
            return self.packages
        return sorted({package_dir(f) for f in test_files}) or ["..."]

    def argv(
        self,
        test_files: list[str],
        *,
        order_seed: int | None = 0,
        run: str = "",
        timeout: float = 0.0,
        vet: bool = True,
    ) -> list[str]:
        """The test command: a warm build cache copied to tmpfs, then go test (``timeout``:
        go test's own limit on each test binary, 0 for none; ``vet``: go test's vet checks,
        off for perturbed copies of tests, whose literals can fire one; ``order_seed`` None:
        the declared order, no shuffle)."""
        pkgs = [("./" + p) if p != "." else "." for p in self._packages(test_files)]
        pkgs = ["./..." if p == "./..." else p for p in pkgs]
        limit = f"-timeout={int(timeout)}s" if timeout > 0 else "-timeout=0"
        cmd = ["go", "test", "-json", "-count=1", "-shuffle=" + _shuffle(order_seed), limit]
        if not vet:
            cmd.append("-vet=off")
        if run:
            cmd.append(f"-run={run}")
        cmd += pkgs
        script = (
            'mkdir -p "$GOCACHE" && cp -R ' + BUILD_CACHE + '/. "$GOCACHE"/ 2>/dev/null; '
            "exec " + " ".join(shlex.quote(a) for a in cmd)
        )
        return ["/bin/sh", "-c", script]

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The command as one shell line (recorded in manifests)."""
        return " ".join(shlex.quote(a) for a in self.argv(test_files, order_seed=order_seed))

    def settle(self, result: RunResult) -> None:
        """Mark the packages whose test binary a panicking test took down as crashed.

        ``testing`` reports a test that panics as failed, then panics again and the binary
        dies: the tests the shuffled order put after it were not run, so a run that did not
        reach them says nothing about them (not flaky; see ``gates.gate._observed``). A test
        that exits the process (``os.Exit``) is recognised by the harness already (it has no
        outcome at all)."""
        crashed = set(result.crashed)
        for key, message in result.messages.items():
            if result.tests.get(key) == "failed" and _GO_PANIC.search(message):
                crashed.add(key.split("::", 1)[0])
        result.crashed = sorted(crashed)

    def run_spec(
        self,
        test_files: list[str],
        *,
        order_seed: int,
        hash_seed: int,
        test_timeout: float = 0.0,
        order: str = "random",
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run (``order`` "declared": unshuffled)."""
        seed = None if order == "declared" else order_seed
        return {
            "argv": self.argv(test_files, order_seed=seed, timeout=test_timeout),
            "env": {**GO_ENV, "GOCACHE": "/tmp/gocache"},
            "report": {
                "format": "go-test-json",
                "module": self.module,
                "packages": self._packages(test_files),
            },
        }


#: Where a twin's build puts its test binaries, and where its run finds them.
TWIN_BUILD = "/tmp/swe-forge-bin"


TWIN_BIN = "/swe-forge-run/bin/go"


#: Before Go 1.21 ``go test -json`` ran binaries with -test.v, since then -test.v=test2json.
TEST2JSON_V_SINCE = (1, 21)


def _shuffle(seed: int | None) -> str:
    """``-shuffle``'s value: the seed, or ``off`` (the declared order) for None."""
    return "off" if seed is None else str(seed)


def _binary(i: int) -> str:
    return f"p{i}.test"


#: test2json's name beside a twin's test binaries: a twin's run converts their output itself.
TEST2JSON = "test2json"


def _test2json_lines() -> list[str]:
    """The build's lines that put test2json beside the test binaries. Since Go 1.25 the
    distribution ships no prebuilt test2json (``go test -json`` converts in process, and
    ``go tool`` builds the others on demand), so a path into ``$GOTOOLDIR`` runs nothing:
    every twin of such a toolchain ended unconnected ("the test run did not finish",
    samber/lo, fatih/color). The prebuilt one is copied where there is one, else it is
    built from GOROOT's own source (offline; first, before any of the project's code is
    compiled), and the run finds it with the binaries, execute-only as they are."""
    out = f"{TWIN_BUILD}/{TEST2JSON}"
    build = f"go build -o {out} cmd/test2json"
    return [
        't2j="$(go env GOTOOLDIR)/test2json"',
        f'if [ -x "$t2j" ]; then cp "$t2j" {out}; else {build}; fi || rc=1',
    ]


def twin_build_argv(packages: list[str]) -> list[str]:
    """A twin's build: test2json, then one test binary per package (compiling runs nothing
    of the project's:
    no cgo, no generators). Without go vet: a decoy's or a calibration copy's literal can
    make a check of vet's fire (``x[2] != "a" || x[2] != "b"``: "suspect or"), which would
    fail the whole package's build; the tests decide, as they do for the gold patch."""
    lines = [
        'mkdir -p "$GOCACHE" && cp -R ' + BUILD_CACHE + '/. "$GOCACHE"/ 2>/dev/null',
        f"mkdir -p {TWIN_BUILD}; rc=0",
        *_test2json_lines(),
    ]
    for i, pkg in enumerate(packages):
        target = "." if pkg == "." else "./" + pkg
        out = f"{TWIN_BUILD}/{_binary(i)}"
        lines.append(f"go test -c -vet=off -o {out} {shlex.quote(target)} || rc=1")
    lines.append("exit $rc")
    return ["/bin/sh", "-c", "cd /testbed\n" + "\n".join(lines)]


def twin_run_argv(
    module: str, packages: list[str], *, run: str, seed: int | None, timeout: float, version: str
) -> list[str]:
    """A twin's run: each package's binary, from its directory, through the test2json its
    build kept (the stream ``go test -json`` gives); a package with no binary had no test
    files (``seed`` None: the declared order)."""
    try:
        newer = _vkey(".".join(version.split(".")[:2])) >= TEST2JSON_V_SINCE
    except ValueError:
        newer = True
    verbose = "-test.v=test2json" if newer else "-test.v=true"
    limit = f"-test.timeout={int(timeout)}s" if timeout > 0 else "-test.timeout=0"
    lines = ["rc=0"]
    for i, pkg in enumerate(packages):
        path = module if pkg == "." else f"{module}/{pkg}"
        binary = f"{TWIN_BIN}/{_binary(i)}"
        cmd = [
            f"{TWIN_BIN}/{TEST2JSON}",
            "-t",
            "-p",
            path,
            binary,
            verbose,
            "-test.count=1",
            "-test.shuffle=" + _shuffle(seed),
            f"-test.run={run}",
            limit,
        ]
        where = "/testbed" if pkg == "." else "/testbed/" + pkg
        lines.append(
            f"if [ -x {binary} ]; then cd {shlex.quote(where)} && "
            + " ".join(shlex.quote(a) for a in cmd)
            + " || rc=1; fi"
        )
    lines.append("exit $rc")
    return ["/bin/sh", "-c", "\n".join(lines)]
