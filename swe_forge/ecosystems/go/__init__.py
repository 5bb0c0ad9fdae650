"""Go: modules, ``go test -json``, toolchains from the Go module proxy.

- **Toolchain.** The Go release that was newest when the base commit was made (a fixed table
  of minor releases and the patch release we pin for each, so the same date always gives the
  same toolchain), raised to the ``go``/``toolchain`` lines of ``go.mod``. It comes from the
  Go module proxy as the module ``golang.org/toolchain``, checked against the checksum
  database by the host's ``go``, and is copied into the image at ``/usr/local/go``.
- **Dependencies.** ``go mod download`` with the chosen toolchain on the host, for the base
  tree and for the tree with the gold and test patches (a fix may add a module), into a
  module cache copied into the env image at ``/opt/go/modcache``. go.mod and go.sum pin
  exact versions, so the base date needs no resolver. Tests run with ``GOPROXY=off``,
  ``GOFLAGS=-mod=readonly``, ``GOTOOLCHAIN=local`` and no network; a missing module fails the
  image build, not a test.
- **Tests.** ``go test -json -count=1 -shuffle=SEED`` on the packages of the test files; the
  supervisor reads per-test events from test2json's stream (Go frames its own lines, so a
  test's output is an ``output`` event, never a verdict) and checks them against the exit
  status. Test ids are ``<package dir>::<TestName>[/<subtest>]`` (``.`` for the root).
- **Judge's files.** ``*_test.go`` and ``testdata/`` are tests; ``go.work``, ``vendor/`` and
  the ``replace``, ``toolchain`` and ``godebug`` directives of ``go.mod`` are runner
  configuration a candidate may not change; ``go.mod`` and ``go.sum`` are locked in the run.
- **Capabilities.** A candidate's Go source may not newly use what reaches the process or
  the test binary's output (``os.Exit``, ``os.Stdout``, ``syscall``, ``unsafe``,
  ``go:linkname``, ``runtime``, the ``testing`` package, text shaped like test2json's frames...)
  unless the base code or the gold patch already does: read on the syntax tree, aliases and
  folded strings resolved (:mod:`swe_forge.ecosystems.go.scan`).
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    digest_text,
    file_lines,
    line_violations,
    parse_patch,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    source_capabilities,
    touched_paths,
    tree_source_capabilities,
    verify_job,
)
from swe_forge.ecosystems.go.scan import ASSEMBLY, foreign_source, scan
from swe_forge.ecosystems.go.scan import CAPABILITIES as CAPABILITIES
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError

if TYPE_CHECKING:
    from swe_forge.gates.runner import RunResult
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

#: Minor releases: (minor, first release date, the patch release pinned for it). The patch
#: is the last of its line on the proxy: bug and security fixes only, and fixed for good.
GO_RELEASES: tuple[tuple[str, str, str], ...] = (
    ("1.17", "2021-08-16", "1.17.13"),
    ("1.18", "2022-03-15", "1.18.10"),
    ("1.19", "2022-08-02", "1.19.13"),
    ("1.20", "2023-02-01", "1.20.14"),
    ("1.21", "2023-08-08", "1.21.13"),
    ("1.22", "2024-02-06", "1.22.12"),
    ("1.23", "2024-08-13", "1.23.12"),
    ("1.24", "2025-02-11", "1.24.13"),
    ("1.25", "2025-08-12", "1.25.14"),
    ("1.26", "2026-02-10", "1.26.11"),
)
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
ENV_DOCKERFILE = """\
FROM {base}
COPY go {goroot}
COPY modcache {modcache}
ENV PATH={path} {env}
"""
#: The instance's build step: every module the tests need must be in the cache (a missing
#: one fails the build here, not a test later), and the build cache is warmed so that a test
#: run compiles only what a patch changes.
INSTALL = (
    "export GOCACHE={cache} HOME=/root && cd /testbed && go list -deps -test ./... >/dev/null "
    "&& {{ go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true; }} "
    "&& chmod -R a+rX {cache}"
)

_GO_DIRECTIVE = re.compile(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", re.M)
_TOOLCHAIN_DIRECTIVE = re.compile(r"^toolchain\s+go(\d+\.\d+(?:\.\d+)?)\s*$", re.M)
_MODULE = re.compile(r"^module\s+(\S+)", re.M)
_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
# A panic as the runtime prints it: the value, then the goroutine dump (the harness keeps the
# first lines of a failed test's output, without blank ones).
_GO_PANIC = re.compile(r"^panic: .*\n(?:.*\n)*?goroutine \d+ \[", re.M)


def go_mod_info(text: str) -> dict[str, str]:
    """module, go and toolchain lines of a go.mod."""
    out: dict[str, str] = {}
    pairs = (("module", _MODULE), ("go", _GO_DIRECTIVE), ("toolchain", _TOOLCHAIN_DIRECTIVE))
    for key, rx in pairs:
        m = rx.search(text)
        if m:
            out[key] = m.group(1)
    return out


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def choose_toolchain(base_date: str, go_line: str = "", toolchain_line: str = "") -> str:
    """The pinned Go release for a commit made on ``base_date`` (ISO date), no older than the
    ``go`` and ``toolchain`` lines of its go.mod ask for."""
    day = base_date[:10]
    released = [r for r in GO_RELEASES if r[1] <= day] or [GO_RELEASES[0]]
    choice = released[-1]
    floor = max((v for v in (go_line, toolchain_line) if v), key=_vkey, default="")
    if floor:
        minor = ".".join(floor.split(".")[:2])
        if _vkey(minor) > _vkey(choice[0]):
            later = [r for r in GO_RELEASES if _vkey(r[0]) >= _vkey(minor)]
            if not later:
                raise BuildError(
                    f"go.mod asks for Go {floor}, newer than any pinned toolchain",
                    hint="add the release to swe_forge/ecosystems/go/__init__.py GO_RELEASES",
                )
            choice = later[0]
    return choice[2]


def host_go() -> str:
    """The host's go command (used only to fetch and check modules)."""
    found = shutil.which("go")
    if not found:
        raise BuildError("the go command is not on this machine", hint="install Go on the host")
    return found


def _go(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 1800) -> str:
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",
        **{k: v for k, v in os.environ.items() if k in ("GOPROXY", "GOSUMDB", "GONOSUMDB")},
        **env,
    }
    proc = subprocess.run(
        argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise BuildError(f"{' '.join(argv[:4])} failed:\n{tail}")
    return proc.stdout


def fetch_toolchain(version: str, cache: Path) -> Path:
    """The extracted toolchain ``go<version>`` for linux/amd64 (fetched once per machine)."""
    store = cache / "go" / "toolchains"
    store.mkdir(parents=True, exist_ok=True)
    module = f"golang.org/toolchain@v0.0.1-go{version}.linux-amd64"
    with tempfile.TemporaryDirectory(dir=store) as tmp:
        out = _go(
            [host_go(), "mod", "download", "-json", module],
            cwd=Path(tmp),
            env={"GOMODCACHE": str(store)},
        )
    data = json.loads(out)
    extracted = Path(data["Dir"])
    if not (extracted / "bin" / "go").is_file():
        raise BuildError(f"the toolchain module {module} has no bin/go")
    # Module zips keep no file modes: the SDK is copied out once, its programs made executable
    # (as the go command does when it switches toolchains itself).
    sdk = cache / "go" / "sdk" / f"go{version}"
    if not (sdk / "bin" / "go").is_file():
        tmp_sdk = sdk.with_name(f".go{version}-{os.getpid()}")
        shutil.rmtree(tmp_sdk, ignore_errors=True)
        shutil.copytree(extracted, tmp_sdk, symlinks=True)
        for path in tmp_sdk.rglob("*"):
            if path.is_symlink():
                continue
            mode = 0o755 if path.is_dir() else 0o644
            rel = path.relative_to(tmp_sdk).parts
            if path.is_file() and (rel[0] == "bin" or rel[:2] == ("pkg", "tool")):
                mode = 0o755
            path.chmod(mode)
        tmp_sdk.chmod(0o755)
        shutil.rmtree(sdk, ignore_errors=True)
        tmp_sdk.rename(sdk)
    return sdk


def download_modules(go_bin: Path, tree: Path, modcache: Path) -> None:
    """Every module the packages and tests of ``tree`` need, into ``modcache``."""
    env = {"GOMODCACHE": str(modcache), "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    _go([str(go_bin), "mod", "download"], cwd=tree, env=env)
    # ``download`` alone misses what only tests of dependencies import on old go.mod files.
    _go([str(go_bin), "list", "-e", "-deps", "-test", "./..."], cwd=tree, env=env)


def package_dir(path: str) -> str:
    """The package directory of a file (``.`` at the root)."""
    return path.rsplit("/", 1)[0] if "/" in path else "."


@dataclass(frozen=True)
class GoScope:
    """The tests a test patch defines or changes: top-level test functions its added lines
    declare, and every test of a test file it creates."""

    names: frozenset[tuple[str, str]]  # (package dir, TestName)
    new_dirs: frozenset[str]
    #: The tests whose own function the patch adds or changes (the rest of ``names`` it
    #: reaches through a changed table or helper). None: all of ``names``.
    direct: frozenset[tuple[str, str]] | None = None

    def covers(self, test: str) -> bool:
        """Is ``test`` (``dir::TestName/sub``) defined or changed by the test patch?"""
        pkg, _, name = test.partition("::")
        top = name.split("/", 1)[0]
        return (pkg, top) in self.names

    def covers_directly(self, test: str) -> bool:
        """Does the test patch add or change ``test``'s own function?"""
        pkg, _, name = test.partition("::")
        top = name.split("/", 1)[0]
        return (pkg, top) in (self.names if self.direct is None else self.direct)


class GoRunner:
    """``go test -json`` on the packages of the test files."""

    name = "go-test"
    #: A package builds whole: when the test patch's tests do not build before the fix, the
    #: gate runs the base's own tests too (PASS_TO_PASS from them, see gates.gate.classify).
    baseline_runs = True

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
        order_seed: int = 0,
        run: str = "",
        timeout: float = 0.0,
        vet: bool = True,
    ) -> list[str]:
        """The test command: a warm build cache copied to tmpfs, then go test (``timeout``:
        go test's own limit on each test binary, 0 for none; ``vet``: go test's vet checks,
        off for perturbed copies of tests, whose literals can fire one)."""
        pkgs = [("./" + p) if p != "." else "." for p in self._packages(test_files)]
        pkgs = ["./..." if p == "./..." else p for p in pkgs]
        limit = f"-timeout={int(timeout)}s" if timeout > 0 else "-timeout=0"
        cmd = ["go", "test", "-json", "-count=1", f"-shuffle={order_seed}", limit]
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
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        return {
            "argv": self.argv(test_files, order_seed=order_seed, timeout=test_timeout),
            "env": {**GO_ENV, "GOCACHE": "/tmp/gocache"},
            "report": {
                "format": "go-test-json",
                "module": self.module,
                "packages": self._packages(test_files),
            },
        }


class GoEcosystem:
    """The Go adapter (see the module docstring)."""

    name = "go"
    runner_name = "go-test"

    def detect(self, read: Reader) -> bool:
        """A go.mod at the root."""
        return read("go.mod") is not None

    def is_test_file(self, path: str) -> bool:
        """``*_test.go`` files."""
        return path.endswith("_test.go")

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (not deleted ones)."""
        return patched_test_files(test_patch, self.is_test_file)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> GoScope:
        """Test functions the test patch adds or changes, read on the patched file: a changed
        line inside ``func TestX`` changes TestX; a changed line elsewhere (a table of cases,
        a helper) changes the tests of that package's test files that name what it declares
        or lies in. Without the base file, only declarations in added lines count."""
        from swe_forge.diffs import PatchApplyError, apply_file_patch
        from swe_forge.gates.scope import _touched_lines

        names: set[tuple[str, str]] = set()
        new_dirs: set[str] = set()
        parsed = parse_patch(test_patch)
        texts: dict[str, str] = {}
        touched: dict[str, set[int]] = {}
        direct: set[tuple[str, str]] = set()
        for fp in parsed:
            if not fp.new_path or not self.is_test_file(fp.new_path):
                continue
            pkg = package_dir(fp.new_path)
            if fp.old_path is None:
                new_dirs.add(pkg)
            original = b"" if fp.old_path is None else read_base(fp.old_path) if read_base else None
            if original is None:
                for hunk in fp.hunks:
                    for tag, body in hunk.lines:
                        m = _TEST_FUNC.match(body.decode("utf-8", "replace"))
                        if m and tag == 0x2B:
                            names.add((pkg, m.group(1)))
                            direct.add((pkg, m.group(1)))
                continue
            try:
                text = apply_file_patch(original, fp).decode("utf-8", "replace")
            except PatchApplyError:
                continue
            texts[fp.new_path] = text
            touched[fp.new_path] = _touched_lines(fp)
        for path, text in texts.items():
            pkg = package_dir(path)
            decls = _top_level_blocks(text)
            lines = touched[path]
            other: set[str] = set()
            for start, end, name, is_test in decls:
                if not any(start <= n <= end for n in lines):
                    continue
                if is_test:
                    names.add((pkg, name))
                    direct.add((pkg, name))
                elif name:
                    other.add(name)
            # Changed tables and helpers: the tests (in the patched files of the package)
            # that use them.
            for _ in range(2):
                for p2, t2 in texts.items():
                    if package_dir(p2) != pkg:
                        continue
                    for start, end, name, is_test in _top_level_blocks(t2):
                        block = "\n".join(t2.splitlines()[start - 1 : end])
                        if name and any(re.search(rf"\b{re.escape(o)}\b", block) for o in other):
                            if is_test:
                                names.add((pkg, name))
                            elif name not in other:
                                other.add(name)
        return GoScope(frozenset(names), frozenset(new_dirs), frozenset(direct))

    def runner(self, module: str, packages: list[str] | None = None) -> GoRunner:
        """The gate's runner for a module."""
        return GoRunner(module, packages)

    def runner_for(self, rec: ImageRecord) -> GoRunner:
        """The gate's runner for the images of ``rec`` (its project's name is all it needs)."""
        return self.runner(str(rec.project_name or ""))

    # -------------------------------------------------------------- judge's files, capabilities
    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """go.work, vendor/ and go.mod's replace/toolchain/godebug lines (unless gold does)."""
        out: list[dict[str, str]] = []
        for path in paths_beyond_gold(patch, gold_patch):
            top = path.split("/", 1)[0]
            workspace = path in ("go.work", "go.work.sum")
            if workspace or top == "vendor" or "/vendor/" in path:
                out.append(
                    runner_config(
                        f"{path}: workspace and vendored modules decide what code the tests "
                        "link against"
                    )
                )
        out += line_violations(
            patch,
            gold_patch,
            _mod_directives,
            "replace, toolchain and godebug lines decide which code and which runtime the "
            "tests use",
        )
        return out

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the patch's non-test Go files use after it that they did not use
        before (read on their syntax trees, :mod:`swe_forge.ecosystems.go.scan`), and
        ``assembly`` for a file the go tool compiles into the package that no scanner reads
        (``.s``, ``.syso``, C sources)."""
        found = set(source_capabilities(patch, read_base, self._source, scan))
        if any(foreign_source(fp.new_path or "") for fp in parse_patch(patch)):
            found.add(ASSEMBLY)
        return sorted(found)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's non-test Go files (outside vendor/) use."""
        own = [p for p in paths if not p.startswith("vendor/") and "/vendor/" not in p]
        found = set(tree_source_capabilities(own, read, self._source, scan))
        if any(foreign_source(p) for p in own):
            found.add(ASSEMBLY)
        return sorted(found)

    def _source(self, path: str) -> bool:
        return path.endswith(".go") and not self.is_test_file(path)

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files locked during a run: the test patch's paths, testdata trees, go.mod/go.sum."""
        files = set(touched_paths(test_patch)) | {"go.mod", "go.sum"}
        trees = set()
        for path in touched_paths(test_patch):
            parts = path.split("/")
            if "testdata" in parts:
                trees.add("/".join(parts[: parts.index("testdata") + 1]))
        return {"files": sorted(files), "trees": sorted(trees)}

    # ------------------------------------------------------------------------------ verifying
    def run_job(
        self,
        task: TaskManifest,
        test_patch_path: str,
        *,
        timeout: float,
        output_limit: int,
        twins: list[dict[str, Any]] | None = None,
        files: list[dict[str, str]] | None = None,
        extra: dict[str, dict[str, Any]] | None = None,
        test_timeout: float = 0.0,
        rng: random.Random | None = None,
    ) -> dict[str, Any]:
        """The verifier's run of the expected tests (and the calibration copies ``extra``
        names), as twins or as one run (see :func:`swe_forge.ecosystems.base.verify_job`).

        Twins build first: each twin's test binaries are compiled (``go test -c``, which runs
        nothing of the project's), then the held-out test files and the build cache are
        closed to the tests' user, and each twin runs its own binaries through test2json.
        What a test process can read is its own twin's program and nothing of the others."""
        rng = rng or random.SystemRandom()
        module = str(task.harness.get("module") or "")
        expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS) + sorted(extra or {})
        packages = sorted({t.split("::", 1)[0] for t in expected})
        tops = {t.split("::", 1)[1].split("/", 1)[0] for t in expected if "::" in t}
        run = "^(" + "|".join(sorted(re.escape(t) for t in tops)) + ")$"
        runner = GoRunner(module, packages)
        seed = rng.randrange(2**31)
        job = verify_job(
            test_patch_path,
            self.protect(task.test_patch),
            # Calibration copies are built without vet, as twins are (twin_build_argv).
            argv=runner.argv([], order_seed=seed, run=run, timeout=test_timeout, vet=not files),
            env={**GO_ENV, "GOCACHE": "/tmp/gocache"},
            timeout=timeout,
            output_limit=output_limit,
            report={"format": "go-test-json", "module": module, "packages": packages},
            twins=twins,
            files=files,
            canary_map=extra,
        )
        if twins is not None:
            version = str(task.image.get("toolchain") or "").removeprefix("go")
            job["run"]["argv"] = twin_run_argv(
                module, packages, run=run, seed=seed, timeout=test_timeout, version=version
            )
            job["run"]["build"] = {
                "argv": twin_build_argv(packages),
                "env": {**GO_ENV, "GOCACHE": "/tmp/gocache"},
                "timeout": timeout,
                "keep": [{"from": TWIN_BUILD, "to": TWIN_BIN}],
            }
            job["run"]["hide"] = sorted(patched_test_files(task.test_patch, self.is_test_file))
            job["run"]["hide"].append("/tmp/gocache")
        return job

    def unit_of(self, test: str) -> str:
        """A Go package's tests run in its own test binary."""
        return test.split("::", 1)[0]

    # ------------------------------------------------------------------------------- images
    def build(self, builder: ImageBuilder, candidate: Candidate) -> ImageRecord:
        """Toolchain, module cache, env and instance images (failures come back in the record)."""
        from swe_forge.ecosystems.image import ecosystem_base
        from swe_forge.images.base import BaseRecipe
        from swe_forge.images.build import ImageRecord, failed, finish_instance, record_env

        rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
        stage = "recipe"
        try:
            repo = builder._repo(candidate)
            commit = repo.commit(candidate.base_commit)
            got = repo.blob_at(candidate.base_commit, "go.mod")
            if got is None:
                raise BuildError(
                    "no go.mod at the base commit: a Go project from before modules "
                    "(GOPATH mode) is not supported",
                    hint="its dependencies are not pinned anywhere in the repository",
                )
            info = go_mod_info(got[1].decode("utf-8", "replace"))
            module = info.get("module", "")
            date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
            version = choose_toolchain(date, info.get("go", ""), info.get("toolchain", ""))
            rec.project_name = module
            rec.recipe = {
                "ecosystem": "go",
                "module": module,
                "go_directive": info.get("go", ""),
                "toolchain": f"go{version}",
                "toolchain_source": f"golang.org/toolchain@v0.0.1-go{version}.linux-amd64",
                "base_date": date,
                "env": dict(GO_ENV),
            }
            stage = "toolchain"
            t = time.perf_counter()
            goroot = fetch_toolchain(version, builder.cache)
            rec.seconds["toolchain"] = round(time.perf_counter() - t, 3)
            stage = "base"
            base = ecosystem_base(builder, rec, BaseRecipe.for_distro("bookworm"))
            stage = "resolve"
            t = time.perf_counter()
            with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="go-") as tmp:
                ctx = Path(tmp)
                modcache = ctx / "modcache"
                modcache.mkdir()
                sums = self._download(repo, candidate, goroot, ctx, modcache)
                rec.lock_digest = digest_text(f"go{version}", *sums)
                rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
                rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
                stage = "env"
                env_tag, env_id, env_s = self._env_image(
                    builder, base.tag, goroot, modcache, ctx, rec.lock_digest
                )
                _make_writable(modcache)
            record_env(rec, env_tag, env_id, env_s)
            stage = "instance"
            finish_instance(
                rec,
                builder,
                repo,
                candidate,
                install_cmd=INSTALL.format(cache=BUILD_CACHE),
                extra_labels={
                    f"{LABEL_PREFIX}.lock": rec.lock_digest,
                    f"{LABEL_PREFIX}.ecosystem": "go",
                    f"{LABEL_PREFIX}.toolchain": f"go{version}",
                },
            )
        except DockerError:
            raise
        except (SweForgeError, subprocess.TimeoutExpired, OSError) as exc:
            failed(rec, stage, exc)
        return rec

    def _download(
        self, repo: Any, candidate: Candidate, goroot: Path, ctx: Path, modcache: Path
    ) -> list[str]:
        """Modules of the base tree and of the tree with both patches; returns the go.sum
        texts (the lock)."""
        from swe_forge.git.scrub import scrubbed_checkout

        sums: list[str] = []
        tree = ctx / "tree"
        scrubbed_checkout(repo, candidate.base_commit, tree)
        go_bin = goroot / "bin" / "go"
        download_modules(go_bin, tree, modcache)
        sums.append((tree / "go.sum").read_text() if (tree / "go.sum").exists() else "")
        for patch in (candidate.patch, candidate.test_patch):
            apply_to_tree(tree, patch)
        if "go.mod" in touched_paths(candidate.patch) or "go.sum" in touched_paths(candidate.patch):
            download_modules(go_bin, tree, modcache)
        sums.append((tree / "go.sum").read_text() if (tree / "go.sum").exists() else "")
        shutil.rmtree(tree)
        # The cache's own lock files and VCS checkouts are not needed offline.
        shutil.rmtree(modcache / "cache" / "vcs", ignore_errors=True)
        return sums

    def _env_image(
        self,
        builder: ImageBuilder,
        base_tag: str,
        goroot: Path,
        modcache: Path,
        ctx: Path,
        lock: str,
    ) -> tuple[str, str, float]:
        from swe_forge.ecosystems.image import build_ecosystem_env

        env_line = " ".join(f"{k}={v}" for k, v in sorted(GO_ENV.items()))
        dockerfile = ENV_DOCKERFILE.format(
            base=base_tag, goroot=GOROOT, modcache=MODCACHE, path=GO_PATH_ENV, env=env_line
        )
        # Module cache files are read-only (0444) on the host; the image only reads them.
        return build_ecosystem_env(
            builder,
            "go",
            base_tag=base_tag,
            dockerfile=dockerfile,
            lock=lock,
            ctx=ctx,
            copies={"go": goroot},
            dockerignore="tree\n",
        )


#: Where a twin's build puts its test binaries, and where its run finds them.
TWIN_BUILD = "/tmp/swe-forge-bin"
TWIN_BIN = "/swe-forge-run/bin/go"
#: Before Go 1.21 ``go test -json`` ran binaries with -test.v, since then -test.v=test2json.
TEST2JSON_V_SINCE = (1, 21)


def _binary(i: int) -> str:
    return f"p{i}.test"


def twin_build_argv(packages: list[str]) -> list[str]:
    """A twin's build: one test binary per package (compiling runs nothing of the project's:
    no cgo, no generators). Without go vet: a decoy's or a calibration copy's literal can
    make a check of vet's fire (``x[2] != "a" || x[2] != "b"``: "suspect or"), which would
    fail the whole package's build; the tests decide, as they do for the gold patch."""
    lines = [
        'mkdir -p "$GOCACHE" && cp -R ' + BUILD_CACHE + '/. "$GOCACHE"/ 2>/dev/null',
        f"mkdir -p {TWIN_BUILD}; rc=0",
    ]
    for i, pkg in enumerate(packages):
        target = "." if pkg == "." else "./" + pkg
        out = f"{TWIN_BUILD}/{_binary(i)}"
        lines.append(f"go test -c -vet=off -o {out} {shlex.quote(target)} || rc=1")
    lines.append("exit $rc")
    return ["/bin/sh", "-c", "cd /testbed\n" + "\n".join(lines)]


def twin_run_argv(
    module: str, packages: list[str], *, run: str, seed: int, timeout: float, version: str
) -> list[str]:
    """A twin's run: each package's binary, from its directory, through test2json (the
    stream ``go test -json`` gives); a package with no binary had no test files."""
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
            f"{GOROOT}/pkg/tool/linux_amd64/test2json",
            "-t",
            "-p",
            path,
            binary,
            verbose,
            "-test.count=1",
            f"-test.shuffle={seed}",
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


def apply_to_tree(tree: Path, patch: str) -> None:
    """Apply a unified diff to a checked-out tree with the strict applier (no fuzz)."""
    from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff

    try:
        parsed = parse_diff(patch)
        for fp in parsed:
            old = tree / fp.old_path if fp.old_path else None
            data = old.read_bytes() if old is not None and old.is_file() else b""
            out = apply_file_patch(data, fp)
            if old is not None and fp.new_path != fp.old_path:
                old.unlink(missing_ok=True)
            if fp.new_path:
                target = tree / fp.new_path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(out)
    except (DiffParseError, PatchApplyError, OSError) as exc:
        raise BuildError(f"the patches do not apply to the base tree: {exc}") from exc


_DECL = re.compile(r"^(func|var|const|type)\b\s*(?:\([^)]*\)\s*)?(\w*)")


def _top_level_blocks(text: str) -> list[tuple[int, int, str, bool]]:
    """(first line, last line, declared name, is a test function) of each top-level
    declaration of a Go file (1-based; a block ends where the next one starts)."""
    lines = text.splitlines()
    starts: list[tuple[int, str, bool]] = []
    for i, line in enumerate(lines, 1):
        m = _DECL.match(line)
        if m:
            test = _TEST_FUNC.match(line)
            starts.append((i, test.group(1) if test else m.group(2), bool(test)))
    out = []
    for k, (i, name, is_test) in enumerate(starts):
        end = starts[k + 1][0] - 1 if k + 1 < len(starts) else len(lines)
        while end > i and not lines[end - 1].strip():
            end -= 1  # blank lines between declarations belong to neither
        out.append((i, end, name, is_test))
    return out


def _make_writable(root: Path) -> None:
    """Give back write permission to a module cache (read-only by design) so it can go."""
    for path in [root, *root.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


def _mod_directives(patch: str) -> set[tuple[str, str]]:
    """("go.mod", "+line"/"-line") of the go.mod lines (of any go.mod) a patch adds or removes
    that are replace/toolchain/godebug directives (or lines inside a ``replace (...)``
    block)."""
    out: set[tuple[str, str]] = set()
    for _path, lines in file_lines(patch, "go.mod"):
        block = ""
        for tag, body in lines:
            line = body.strip()
            word = line.split(" ", 1)[0].split("(", 1)[0]
            if line.endswith("(") and word:
                block = word
            elif line == ")":
                block = ""
            if tag in (ADDED, REMOVED) and (
                word in ("replace", "toolchain", "godebug") or block in ("replace", "godebug")
            ):
                out.add(("go.mod", signed(tag, line)))
    return out


def package_name(source: str) -> str:
    """The package clause of a Go file ("" when none)."""
    m = _PACKAGE.search(source)
    return m.group(1) if m else ""
