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

Modules: ``toolchain`` (the release by date, fetched; modules downloaded), ``runner`` (go test
through test2json, the twins' builds and runs), ``scope`` (the tests a patch touches),
``canary`` (the decoys), ``scan`` (capabilities on the syntax tree); this module is the adapter
that puts them together (images, judge's files, verification jobs).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
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
from swe_forge.ecosystems.decoys import HostCanaries
from swe_forge.ecosystems.go.scan import ASSEMBLY, foreign_source, scan
from swe_forge.ecosystems.go.scan import CAPABILITIES as CAPABILITIES
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError

if TYPE_CHECKING:
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

from swe_forge.ecosystems.go.runner import (
    BUILD_CACHE,
    GO_ENV,
    GO_PATH_ENV,
    GOROOT,
    MODCACHE,
    TWIN_BIN,
    TWIN_BUILD,
    GoRunner,
    twin_build_argv,
    twin_run_argv,
)
from swe_forge.ecosystems.go.scope import (
    GoScope,
    package_dir,
)
from swe_forge.ecosystems.go.toolchain import (
    choose_toolchain,
    download_modules,
    fetch_toolchain,
    go_mod_info,
)

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


_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


class GoEcosystem(HostCanaries):
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
        from swe_forge.diffs import PatchApplyError, apply_file_patch, touched_lines

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
            touched[fp.new_path] = touched_lines(fp)
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
        # Every .go file: a test file the path guard let through would be compiled into the
        # test binary too.
        found = set(source_capabilities(patch, read_base, lambda p: p.endswith(".go"), scan))
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

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """No base file besides the changed ones: the scan reads those alone."""
        return []

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
