"""The adapter, :class:`RustEcosystem`: what the package's modules answer, behind the protocol
(the package's docstring says how; :mod:`swe_forge.ecosystems.rust`)."""

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
from swe_forge.ecosystems.rust.deps import _world_readable as _world_readable
from swe_forge.ecosystems.rust.detect import MARKER, is_test_module
from swe_forge.ecosystems.rust.image import CARGO_CONFIG as CARGO_CONFIG
from swe_forge.ecosystems.rust.image import ENV_DOCKERFILE as ENV_DOCKERFILE
from swe_forge.ecosystems.rust.image import INSTALL as INSTALL
from swe_forge.ecosystems.rust.image import _feature_builds as _feature_builds
from swe_forge.ecosystems.rust.image import build_images
from swe_forge.ecosystems.rust.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.rust.scan import scan
from swe_forge.ecosystems.scanning import source_capabilities, tree_source_capabilities

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.ecosystems.canaries import CanaryWriter
    from swe_forge.records import Candidate, ImageRecord, TaskManifest

from swe_forge.ecosystems.rust.runner import (
    _TEST_FN,
    RUN_ENV,
    RUN_TARGET,
    TWIN_BIN,
    TWIN_BUILD,
    RustRunner,
    _script,
    _target,
    _twin_build_script,
    _twin_run_script,
    target_file,
)
from swe_forge.ecosystems.rust.runner import scan_targets as scan_targets
from swe_forge.ecosystems.rust.scope import (
    RustScope,
    _enclosing_fns,
    enclosing_mods,
    macro_reach,
    module_path,
)
from swe_forge.ecosystems.rust.toolchain import cargo_info as cargo_info
from swe_forge.ecosystems.rust.toolchain import choose_toolchain as choose_toolchain
from swe_forge.ecosystems.rust.toolchain import lock_argv as lock_argv
from swe_forge.ecosystems.rust.toolchain import toolchain_pin as toolchain_pin

#: Cargo.toml sections and keys that decide what is built and how tests run.
_CONFIG_SECTION = re.compile(
    r"^\s*\[\[?\s*(profile|patch|replace|test|lib|bin|bench|example|workspace|target|"
    r"build-dependencies|features)\b"
)


_CONFIG_KEY = re.compile(
    r"^\s*(build|harness|autotests|autobins|autoexamples|autobenches|autolib|path|"
    r"proc-macro|links|cargo-features|test|doctest|default-run|members|rustflags|"
    r"package|workspace|resolver|edition|rust-version)\s*="
)


class RustEcosystem(HostCanaries):
    """The Rust adapter (see the module docstring)."""

    name = "rust"
    runner_name = "cargo-test"

    def detect(self, read: Reader) -> bool:
        """A Cargo.toml at the root."""
        return read(MARKER) is not None

    def is_test_file(self, path: str) -> bool:
        """``.rs`` files under a ``tests/`` directory (integration tests and their modules,
        or under ``src/`` a library's unit-test modules) and ``tests.rs`` modules
        (``src/tests.rs``: the library's unit tests, run with ``cargo test --lib``)."""
        return is_test_module(path)

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (not deleted ones)."""
        return patched_test_files(test_patch, self.is_test_file)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> RustScope:
        """Functions the test patch declares or whose bodies it changes, per target file, and
        the tests of the macro invocations it reaches (:func:`~.scope.macro_reach`).

        With the base file, read on the patched file: a changed line belongs to every
        function it is nested in (a test often declares helper functions inside itself, as
        glob's one long ``main`` does), found by indentation. Without it, only what the
        hunks themselves show counts."""
        from swe_forge.diffs import PatchApplyError, apply_file_patch, touched_lines

        names: set[tuple[str, str]] = set()
        new_files: set[str] = set()
        macro_names: set[tuple[str, str]] = set()
        macro_direct: set[tuple[str, str]] = set()
        for fp in parse_patch(test_patch):
            if not fp.new_path or not self.is_test_file(fp.new_path):
                continue
            root = target_file(
                fp.new_path,
                None if read_base is None else (lambda p: read_base(p) is not None),
            )
            if root is None:
                continue
            if fp.old_path is None and root == fp.new_path:
                new_files.add(root)
            mods = module_path(fp.new_path, root)
            base = read_base(fp.old_path) if read_base is not None and fp.old_path else None
            if base is not None:
                try:
                    text = apply_file_patch(base, fp).decode("utf-8", "replace")
                except PatchApplyError:
                    text = None
                if text is not None:
                    lines = text.splitlines()
                    touched = {
                        n - 1
                        for n in touched_lines(fp)
                        if 1 <= n <= len(lines) and lines[n - 1].strip()
                    }
                    for n in sorted(touched):
                        qual = "::".join([*mods, *enclosing_mods(lines, n), ""])
                        names.update((root, qual + f) for f in _enclosing_fns(lines, n))
                    reached, direct = macro_reach(lines, touched)
                    macro_names.update((root, x) for x in reached)
                    macro_direct.update((root, x) for x in direct)
                    continue
            qual = "::".join([*mods, ""])
            for hunk in fp.hunks:
                current = ""
                for tag, body in hunk.lines:
                    line = body.decode("utf-8", "replace")
                    m = _TEST_FN.match(line)
                    if m:
                        current = m.group(1)
                        if tag == ADDED:
                            names.add((root, qual + current))
                    elif tag in (ADDED, REMOVED) and current and line.strip():
                        names.add((root, qual + current))
                    if line.rstrip() == "}" and not line.startswith(" "):
                        current = ""
        return RustScope(
            frozenset(names), frozenset(new_files), frozenset(macro_names), frozenset(macro_direct)
        )

    def runner(self, module: str, packages: list[str] | None = None) -> RustRunner:
        """The gate's runner."""
        return RustRunner(module)

    def runner_for(self, rec: ImageRecord) -> RustRunner:
        """The gate's runner for the images of ``rec``: its toolchain (shuffling or not) and
        the test targets of its tree (names, required features, shared modules)."""
        recipe = rec.recipe or {}
        layout = (recipe.get("harness") or {}).get("layout")
        return RustRunner(
            str(rec.project_name or ""),
            str(recipe.get("toolchain") or "").removeprefix("rust-"),
            layout if isinstance(layout, dict) else None,
        )

    # -------------------------------------------------------------- judge's files, capabilities
    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """.cargo/, build.rs, rust-toolchain*, vendor/ and Cargo.toml's build and test
        configuration (unless the gold patch changes the same)."""
        out: list[dict[str, str]] = []
        for path in paths_beyond_gold(patch, gold_patch):
            parts = path.split("/")
            base = parts[-1]
            why = ""
            if ".cargo" in parts[:-1]:
                why = "cargo's configuration decides sources, flags and the test runner"
            elif base == "build.rs":
                why = "a build script runs arbitrary code when the tests are compiled"
            elif base in ("rust-toolchain", "rust-toolchain.toml"):
                why = "the toolchain file decides which compiler runs the tests"
            elif parts[0] == "vendor" or "/vendor/" in f"/{path}":
                why = "vendored crates decide what code the tests link against"
            if why:
                out.append(runner_config(f"{path}: {why}"))
        out += line_violations(
            patch,
            gold_patch,
            _manifest_lines,
            "Cargo.toml's build, profile, patch and test settings decide what code and which "
            "test runner the tests use",
        )
        return out

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the patch's non-test Rust files use after it that they did not use
        before (read on their token streams, :mod:`swe_forge.ecosystems.rust.scan`)."""
        # Every .rs file, a test's name or directory notwithstanding: a source file's
        # ``mod`` (or ``#[path]``) can compile any of them into the library.
        return source_capabilities(patch, read_base, lambda p: p.endswith(".rs"), scan)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's non-test Rust files (outside vendor/) use."""
        own = [p for p in paths if not p.startswith("vendor/") and "/vendor/" not in p]
        return tree_source_capabilities(own, read, self._source, scan)

    def _source(self, path: str) -> bool:
        return path.endswith(".rs") and not self.is_test_file(path)

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files locked during a run: the test patch's paths, the tests/ trees they are in,
        the manifest. Not Cargo.lock: the run replaces it by the judge's own and cargo must
        be able to fit it to the manifests (``runner.RUN_PRELUDE``)."""
        files = (set(touched_paths(test_patch)) | {"Cargo.toml"}) - {"Cargo.lock"}
        trees = set()
        for path in touched_paths(test_patch):
            parts = path.split("/")
            if "tests" in parts[:-1]:
                i = len(parts) - 1 - parts[:-1][::-1].index("tests") - 1
                trees.add("/".join(parts[: i + 1]))
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
        """The verifier's run: the expected tests of each target (the calibration copies
        ``extra`` names included), as twins or as one run."""
        rng = rng or random.SystemRandom()
        expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS) + sorted(extra or {})
        by_file: dict[str, list[str]] = {}
        for t in expected:
            file, _, name = t.partition("::")
            by_file.setdefault(file, []).append(name)
        layout = task.harness.get("layout")
        layout = layout if isinstance(layout, dict) else None
        entries = []
        for file in sorted(by_file):
            tgt = _target(file, layout)
            if tgt:
                entries.append((file, tgt[0], tgt[1], sorted(by_file[file])))
        toolchain = str(task.image.get("toolchain") or "").removeprefix("rust-")
        runner = RustRunner(str(task.harness.get("module") or ""), toolchain)
        seed = rng.randrange(2**31) if runner._shuffles() else None
        job = verify_job(
            test_patch_path,
            self.protect(task.test_patch),
            argv=["/bin/sh", "-c", _script(entries, seed=seed)],
            env=dict(RUN_ENV),
            timeout=timeout,
            output_limit=output_limit,
            report={"format": "libtest-json", "files": [e[0] for e in entries]},
            twins=twins,
            files=files,
            canary_map=extra,
        )
        if twins is not None:
            # Twins build first: each twin's test binaries compiled, then the held-out test
            # files and the build's own outputs closed to the tests' user (what a test process
            # can read is its own twin's program), then each twin runs its binaries.
            job["run"]["build"] = {
                "argv": ["/bin/sh", "-c", _twin_build_script(entries)],
                "env": dict(RUN_ENV),
                "timeout": timeout,
                "keep": [{"from": TWIN_BUILD, "to": TWIN_BIN}],
            }
            job["run"]["argv"] = ["/bin/sh", "-c", _twin_run_script(entries, seed, test_timeout)]
            hidden = [f"{RUN_TARGET}/debug/{d}" for d in ("deps", "incremental", "build")]
            job["run"]["hide"] = sorted(patched_test_files(task.test_patch, self.is_test_file))
            job["run"]["hide"] += [*hidden, f"{RUN_TARGET}/debug/.fingerprint"]
        return job

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """No base file besides the changed ones: the scan reads those alone."""
        return []

    def canary_writer(self) -> CanaryWriter:
        """The decoys' writer (:mod:`swe_forge.ecosystems.rust.canary`), one per process."""
        from swe_forge.ecosystems.rust.canary import writer

        return writer()

    def unit_of(self, test: str) -> str:
        """Each test target is a binary of its own."""
        return test.split("::", 1)[0]

    # ------------------------------------------------------------------------------- images
    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """Toolchain, vendored crates, env and instance images (failures come back in the
        record; :func:`swe_forge.ecosystems.rust.image.build_images`)."""
        return build_images(builder, candidate)


def _manifest_lines(patch: str) -> set[tuple[str, str]]:
    """(path, line) of Cargo.toml lines a patch adds or removes that are build or test
    configuration: a configuration key, a section header of one, or any line inside such a
    section."""
    out: set[tuple[str, str]] = set()
    for path, lines in file_lines(patch, "Cargo.toml"):
        section = False
        for tag, body in lines:
            line = body.rstrip("\r\n")
            if line.lstrip().startswith("["):
                section = bool(_CONFIG_SECTION.match(line))
                if not section and line.strip().startswith("[") and "." in line:
                    # [dependencies.foo] with a path/git key inside is caught by the key.
                    section = False
            if tag in (ADDED, REMOVED) and (section or _CONFIG_KEY.match(line)):
                out.add((path, signed(tag, line.strip())))
            elif tag in (ADDED, REMOVED) and re.search(r"\b(path|git)\s*=", line):
                # An inline table dependency on a local or git source replaces a crate.
                out.add((path, signed(tag, line.strip())))
    return out
