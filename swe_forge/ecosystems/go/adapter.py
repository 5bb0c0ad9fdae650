"""The adapter, :class:`GoEcosystem`: what the package's modules answer, behind the protocol
(the package's docstring says how; :mod:`swe_forge.ecosystems.go`)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    file_lines,
    line_violations,
    parse_patch,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    touched_paths,
    verify_job,
)
from swe_forge.ecosystems.decoys import HostCanaries
from swe_forge.ecosystems.go.detect import MARKER
from swe_forge.ecosystems.go.image import build_images
from swe_forge.ecosystems.go.scan import ASSEMBLY, foreign_source, scan
from swe_forge.ecosystems.go.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.scanning import source_capabilities, tree_source_capabilities

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.ecosystems.canaries import CanaryWriter
    from swe_forge.records import Candidate, ImageRecord, TaskManifest

from swe_forge.ecosystems.go.runner import (
    GO_ENV,
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
from swe_forge.ecosystems.go.toolchain import choose_toolchain as choose_toolchain
from swe_forge.ecosystems.go.toolchain import go_mod_info as go_mod_info
from swe_forge.gates.runner import DECLARED, task_order

_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)


_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)


class GoEcosystem(HostCanaries):
    """The Go adapter (see the module docstring)."""

    name = "go"
    runner_name = "go-test"

    def detect(self, read: Reader) -> bool:
        """A go.mod at the root."""
        return read(MARKER) is not None

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
        # A task the gate admitted in the declared order (its tests share state and pass only
        # in it, see gates.gate.run_gate) is graded in that order; the others shuffled.
        seed: int | None = rng.randrange(2**31)
        if task_order(task) == DECLARED:
            seed = None
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

    def canary_writer(self) -> CanaryWriter:
        """The decoys' writer (:mod:`swe_forge.ecosystems.go.canary`), one per process."""
        from swe_forge.ecosystems.go.canary import writer

        return writer()

    def unit_of(self, test: str) -> str:
        """A Go package's tests run in its own test binary."""
        return test.split("::", 1)[0]

    # ------------------------------------------------------------------------------- images
    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """Toolchain, module cache, env and instance images (failures come back in the record;
        :func:`swe_forge.ecosystems.go.image.build_images`)."""
        return build_images(builder, candidate)


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
