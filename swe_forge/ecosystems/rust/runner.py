"""Rust's runner: cargo test per integration target, each twin's test binaries built once before the
runs, libtest's per-test outcomes, and the test targets of a tree (names, features, shared modules).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from swe_forge.gates.runner import RunResult

from swe_forge.ecosystems.rust.toolchain import _vkey

#: Where the toolchain, the vendored crates and the warm target dir live in the image.
RUST_ROOT = "/usr/local/rust"


CARGO_DIR = "/opt/cargo"


TARGET_DIR = "/opt/target"


RUN_TARGET = "/tmp/target"


RUN_HOME = "/tmp/cargo-home"


RUST_PATH_ENV = f"{RUST_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


#: The environment of every cargo command in an image (build and tests).
RUST_ENV = {
    "CARGO_NET_OFFLINE": "true",
    "CARGO_INCREMENTAL": "0",
    "CARGO_TERM_COLOR": "never",
    "RUSTC_BOOTSTRAP": "1",
    "RUST_BACKTRACE": "0",
}


#: Test builds without debug info: the warm target dir is copied to the run's /tmp (a
#: size-capped tmpfs), and debug info is most of its size (rust-base64 with criterion's
#: dependencies outgrew 512 MB). Set where cargo runs (instance build, runs), not in the env
#: image, so env images stay shared.
BUILD_ENV = {"CARGO_PROFILE_DEV_DEBUG": "0", "CARGO_PROFILE_TEST_DEBUG": "0"}


#: The judge's lock: the tree with the gold and test patches resolved from the vendored
#: crates at build time (:func:`swe_forge.ecosystems.rust.deps.vendor_crates`).
GOLD_LOCK = f"{CARGO_DIR}/Cargo.gold.lock"


#: The first line of every run: the warm target dir, a writable cargo home, and the lock.
#: The lock is the judge's, never the tree's: whatever Cargo.lock a patch left is replaced by
#: the gold tree's, and it stays writable, so that cargo can fit it offline to the manifests
#: of this run (a gold patch that bumps the version or a dependency in Cargo.toml; a locked
#: read-only lock made every such task a collection error). Cargo can only pick crates from
#: the vendored directory (the base's and the gold's), so no patch chooses other crates
#: through the lock. Env images from before the gold lock keep the tree's lock.
RUN_PRELUDE = (
    f"mkdir -p {RUN_HOME} && cp {CARGO_DIR}/config.toml {RUN_HOME}/ "
    # A partial copy (a full tmpfs) would leave crates cargo believes built: start cold.
    f"&& {{ cp -a {TARGET_DIR} {RUN_TARGET} 2>/dev/null || rm -rf {RUN_TARGET}; }}; "
    f"if [ -f {GOLD_LOCK} ]; then rm -f Cargo.lock && cp {GOLD_LOCK} Cargo.lock; "
    f"else [ -f Cargo.lock ] || cp {CARGO_DIR}/Cargo.lock Cargo.lock 2>/dev/null; fi; rc=0"
)


RUN_ENV = {**RUST_ENV, **BUILD_ENV, "CARGO_HOME": RUN_HOME, "CARGO_TARGET_DIR": RUN_TARGET}


#: The framing lines of the run script (libtest's own events have a "type" of test/suite).
MARK_TARGET = "swe-forge-target"


MARK_DONE = "swe-forge-done"


#: libtest's JSON format and shuffling exist since 1.58 (behind -Z unstable-options).
SHUFFLE_SINCE = (1, 58)


_TEST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)")


#: The target name that stands for a package's library (its unit tests: ``cargo test --lib``).
LIB = "--lib"


def _unit_member(path: str) -> str | None:
    """The member dir of a unit-test module under a package's ``src/`` (``src/tests.rs``,
    ``src/map/tests.rs``, ``src/map/tests/core.rs``), None for any other path. Such a module
    is compiled into the library under ``#[cfg(test)]``: its tests are the library's."""
    parts = path.split("/")
    if not path.endswith(".rs") or "src" not in parts[:-1]:
        return None
    i = parts.index("src")
    below = parts[i + 1 :]
    if below[-1] == "tests.rs" or "tests" in below[:-1]:
        return "/".join(parts[:i]) or "."
    return None


def target_args(target: str) -> list[str]:
    """cargo test's selection of one target: ``--lib`` or ``--test <name>``."""
    return [LIB] if target == LIB else ["--test", target]


def target_of(path: str) -> tuple[str, str] | None:
    """(member dir, test target) of a test file: an integration test target, or
    (member, :data:`LIB`) for the library root ``src/lib.rs`` (whose unit tests the
    modules under ``src/`` hold); None for a helper module that is no target of its own
    (``tests/common/mod.rs``, ``src/tests.rs``)."""
    parts = path.split("/")
    if parts[-2:] == ["src", "lib.rs"]:
        return "/".join(parts[:-2]) or ".", LIB
    if "tests" not in parts or not path.endswith(".rs") or _unit_member(path) is not None:
        return None
    i = len(parts) - 1 - parts[::-1].index("tests")
    member = "/".join(parts[:i]) or "."
    rest = parts[i + 1 :]
    if len(rest) == 1:
        return member, rest[0][:-3]
    if len(rest) == 2 and rest[1] == "main.rs":
        return member, rest[0]
    return None


def target_file(path: str, exists: Callable[[str], bool] | None = None) -> str | None:
    """The file that is the root of the target a test file belongs to (itself, or for a
    module in ``tests/<dir>/`` the target ``tests/<dir>/main.rs`` or, when ``exists`` says
    only it is there, the sibling ``tests/<dir>.rs`` of the non-mod.rs layout, which
    declares or includes the directory's files: serde_json's ``tests/regression.rs`` with
    ``automod::dir!("tests/regression")``; None when unknown)."""
    main = _dir_target(path)
    if (
        main is not None
        and main != path
        and main.endswith("/main.rs")
        and exists is not None
        and not exists(main)
    ):
        sibling = main.rsplit("/", 1)[0] + ".rs"
        if exists(sibling):
            return sibling
    return main


def _dir_target(path: str) -> str | None:
    if target_of(path):
        return path
    unit = _unit_member(path)
    if unit is not None:
        return "src/lib.rs" if unit == "." else f"{unit}/src/lib.rs"
    parts = path.split("/")
    if "tests" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("tests")
    rest = parts[i + 1 :]
    # tests/<dir>/mod.rs makes <dir> a module other targets declare, not a target.
    if len(rest) >= 2 and rest[0] != "common" and rest[1:] != ["mod.rs"]:
        return "/".join([*parts[: i + 2], "main.rs"])
    return None


def _script(
    entries: list[tuple[str, str, list[str], list[str]]], *, seed: int | None, threads: int = 0
) -> str:
    """The run script: per target (root file, name, required features, test filters), a
    framing line then cargo test with libtest JSON."""
    lines = [RUN_PRELUDE]
    for file, target, features, filters in entries:
        member = target_of(file)
        manifest = "Cargo.toml" if member is None or member[0] == "." else f"{member[0]}/Cargo.toml"
        mark = json.dumps({"type": MARK_TARGET, "file": file})
        cmd = [
            "cargo",
            "test",
            "--offline",
            "--manifest-path",
            manifest,
            *target_args(target),
            *(["--features", ",".join(features)] if features else []),
            "--",
            "-Z",
            "unstable-options",
            "--format",
            "json",
            "--report-time",
        ]
        if seed is not None:
            cmd += ["--shuffle-seed", str(seed)]
        if threads:
            cmd.append(f"--test-threads={threads}")
        if filters:
            cmd += ["--exact", *filters]
        lines.append(
            f"printf '%s\\n' {shlex.quote(mark)}; "
            + " ".join(shlex.quote(a) for a in cmd)
            + " || rc=1"
        )
    lines.append(f"printf '%s\\n' {shlex.quote(json.dumps({'type': MARK_DONE}))}; exit $rc")
    return "\n".join(lines)


#: Where a twin's build puts its test binaries, and where its run finds them.
TWIN_BUILD = "/tmp/swe-forge-bin"


TWIN_BIN = "/swe-forge-run/bin/rust"


def _member_dir(file: str) -> str:
    member = target_of(file)
    return "/testbed" if member is None or member[0] == "." else f"/testbed/{member[0]}"


def _twin_build_script(entries: list[tuple[str, str, list[str], list[str]]]) -> str:
    """A twin's build: each target's test binary (``cargo test --no-run``), copied out of the
    target dir by the path cargo reports for it."""
    # The warm target dir is copied once, for the first twin; the others build on it.
    prelude = RUN_PRELUDE.replace(
        f"cp -a {TARGET_DIR} {RUN_TARGET}",
        f"[ -d {RUN_TARGET} ] || cp -a {TARGET_DIR} {RUN_TARGET}",
    )
    assert prelude != RUN_PRELUDE
    lines = [prelude, f"mkdir -p {TWIN_BUILD}"]
    for i, (file, target, features, _filters) in enumerate(entries):
        member = target_of(file)
        manifest = "Cargo.toml" if member is None or member[0] == "." else f"{member[0]}/Cargo.toml"
        cmd = [
            "cargo",
            "test",
            "--offline",
            "--no-run",
            "--message-format=json",
            "--manifest-path",
            manifest,
            *target_args(target),
            *(["--features", ",".join(features)] if features else []),
        ]
        lines.append(
            "exe=$("
            + " ".join(shlex.quote(a) for a in cmd)
            + ' | grep -o \'"executable":"[^"]*"\' | tail -n 1 | cut -d\'"\' -f4)'
            f' && [ -n "$exe" ] && cp "$exe" {TWIN_BUILD}/t{i} || rc=1'
        )
    lines.append("exit $rc")
    return "\n".join(lines)


def _twin_run_script(
    entries: list[tuple[str, str, list[str], list[str]]], seed: int | None, timeout: float
) -> str:
    """A twin's run: per target a framing line, then its binary from the member's directory
    (as cargo runs it) with libtest JSON; a target that did not build has no binary (a
    collection error). ``timeout``: each test's limit, as a limit on the binary of that many
    tests (libtest has none per test)."""
    lines = ["rc=0"]
    for i, (file, _target, _features, filters) in enumerate(entries):
        mark = json.dumps({"type": MARK_TARGET, "file": file})
        binary = f"{TWIN_BIN}/t{i}"
        cmd = [binary, "-Z", "unstable-options", "--format", "json", "--report-time"]
        if seed is not None:
            cmd += ["--shuffle-seed", str(seed)]
        if filters:
            cmd += ["--exact", *filters]
        limit = ""
        if timeout > 0:
            limit = f"timeout -k 5 {int(timeout) * max(1, len(filters))} "
        where = _member_dir(file)
        lines.append(
            f"printf '%s\\n' {shlex.quote(mark)}; "
            f"if [ -x {binary} ]; then cd {shlex.quote(where)} && "
            f"CARGO_MANIFEST_DIR={shlex.quote(where)} {limit}"
            + " ".join(shlex.quote(a) for a in cmd)
            + " || rc=1; else rc=1; fi"
        )
    lines.append(f"printf '%s\\n' {shlex.quote(json.dumps({'type': MARK_DONE}))}; exit $rc")
    return "\n".join(lines)


def scan_targets(tree: Path) -> dict[str, Any]:
    """The integration test targets of the root package of ``tree`` as cargo sees them:
    ``targets`` maps each target's root file to its ``name`` and the ``features`` its
    ``[[test]]`` entry requires (cargo refuses to run it without them); ``modules`` maps a
    shared helper module (``tests/common/mod.rs``, ``tests/helpers.rs`` under
    ``autotests = false``...) to the target root files that declare it with ``mod``.

    Targets come from the auto-discovered ``tests/*.rs`` and ``tests/*/main.rs`` (unless
    ``autotests = false``) and from ``[[test]]`` entries, whose ``path`` may be anywhere and
    whose ``name`` need not be the file's stem; an entry with ``harness = false`` (its own
    ``main``, no libtest events) is left out."""
    try:
        manifest = tomllib.loads(
            (tree / "Cargo.toml").read_text(encoding="utf-8", errors="replace")
        )
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    pkg = manifest.get("package")
    pkg = pkg if isinstance(pkg, dict) else {}
    tests_dir = tree / "tests"
    files = (
        sorted(p.relative_to(tree).as_posix() for p in tests_dir.rglob("*.rs") if p.is_file())
        if tests_dir.is_dir()
        else []
    )
    targets: dict[str, dict[str, Any]] = {}
    if pkg.get("autotests", True) is not False:
        for f in files:
            rest = f.split("/")[1:]
            if len(rest) == 1:
                targets[f] = {"name": rest[0][:-3], "features": []}
            elif len(rest) == 2 and rest[1] == "main.rs":
                targets[f] = {"name": rest[0], "features": []}
    explicit = manifest.get("test")
    for entry in explicit if isinstance(explicit, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        path = entry.get("path")
        if not isinstance(path, str):
            path = f"tests/{name}.rs"
            if not (tree / path).is_file() and (tree / f"tests/{name}/main.rs").is_file():
                path = f"tests/{name}/main.rs"
        path = path.removeprefix("./")
        if entry.get("harness") is False:
            # A target with its own main (harness = false) prints what it likes, not
            # libtest's events: no test of it can be observed, so it is not run (it read as
            # a target that never started: rust-lang/log's tests/integration.rs).
            targets.pop(path, None)
            continue
        feats = entry.get("required-features")
        targets[path] = {
            "name": name,
            "features": sorted(str(x) for x in feats) if isinstance(feats, list) else [],
        }
    lib = manifest.get("lib")
    lib = lib if isinstance(lib, dict) else {}
    lib_path = lib.get("path")
    lib_path = lib_path if isinstance(lib_path, str) else "src/lib.rs"
    # The library's unit tests (src/tests.rs and the like, under #[cfg(test)]); a library
    # elsewhere ([lib] path) is not followed: its modules' paths say nothing.
    if (
        lib_path.removeprefix("./") == "src/lib.rs"
        and (tree / "src" / "lib.rs").is_file()
        and lib.get("test", True) is not False
    ):
        targets["src/lib.rs"] = {"name": LIB, "features": []}
    _add_gated_features(tree, manifest, targets)
    modules: dict[str, list[str]] = {}
    # tests/<dir>/main.rs: the modules in tests/<dir>/ are its own.
    dirs = {r.rsplit("/", 1)[0] for r in targets if re.fullmatch(r"tests/[^/]+/main\.rs", r)}
    for f in files:
        if f in targets or f.rsplit("/", 1)[0] in dirs:
            continue  # a target, or a module of a target directory (tests/<dir>/main.rs)
        rest = f.split("/")[1:]
        stem = rest[0][:-3] if len(rest) == 1 else rest[0]
        decl = re.compile(
            rf"^\s*(pub(\([^)]*\))?\s+)?mod\s+{re.escape(stem)}\s*;|{re.escape('/'.join(rest))}\"",
            re.M,
        )
        users = []
        for root in sorted(targets):
            if targets[root]["name"] == LIB:
                continue  # the library's modules are under src/, not tests/
            parent = root.rsplit("/", 1)[0]
            own = [x for x in files if x.startswith(parent + "/")] if parent in dirs else [root]
            for g in own:
                try:
                    text = (tree / g).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if decl.search(text):
                    users.append(root)
                    break
        if users:
            modules[f] = users
    return {"targets": targets, "modules": modules}


#: ``feature = "name"`` inside a ``#[cfg(...)]`` or ``#![cfg(...)]`` attribute.
_CFG_ATTR = re.compile(r"#!?\[\s*cfg\s*\((.*?)\)\s*\]", re.S)
_CFG_FEATURE = re.compile(r'feature\s*=\s*"([^"]+)"')
#: Features that ask for a nightly compiler (``#![feature(...)]`` behind them): on the pinned
#: stable toolchain they fail the whole target's build.
_NIGHTLY = re.compile(r"nightly|unstable|bench", re.I)


def _add_gated_features(
    tree: Path, manifest: dict[str, Any], targets: dict[str, dict[str, Any]]
) -> None:
    """Enable on each integration-test target the features its tests are gated on.

    A test under ``#[cfg(feature = "kv")]`` does not exist in a build with the default
    features: the fail-to-pass test of a PR that adds one was never compiled in either phase
    (rust-lang/log: ``no_fail_to_pass``). Projects run such tests in CI with the features on;
    so does the harness, for the features the package declares (``[features]`` and optional
    dependencies), except nightly-only ones.
    """
    declared = set((manifest.get("features") or {}).keys())
    for table in ("dependencies", "dev-dependencies"):
        deps = manifest.get(table)
        for name, spec in (deps if isinstance(deps, dict) else {}).items():
            if isinstance(spec, dict) and spec.get("optional") is True:
                declared.add(str(name))
    if not declared:
        return
    for root, target in targets.items():
        if target.get("name") == LIB:
            continue  # the library's own #[cfg(feature)] is everywhere in src/, not tests
        parent = root.rsplit("/", 1)[0]
        own = [root]
        if root.endswith("/main.rs") and parent != "tests":
            own = sorted(p.relative_to(tree).as_posix() for p in (tree / parent).rglob("*.rs"))
        wanted: set[str] = set()
        for path in own:
            try:
                text = (tree / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for attr in _CFG_ATTR.findall(text):
                wanted.update(_CFG_FEATURE.findall(attr))
        extra = sorted(f for f in wanted & declared if not _NIGHTLY.search(f))
        if extra:
            target["features"] = sorted({*target.get("features", []), *extra})


def _roots(file: str, layout: dict[str, Any] | None) -> list[str]:
    """The target root files a test file belongs to (several for a shared helper module)."""
    if not layout:
        root = target_file(file)
        return [root] if root and target_of(root) else []
    targets = layout.get("targets") or {}
    if file in targets:
        return [file]
    if file in (layout.get("modules") or {}):
        return list(layout["modules"][file])
    root = target_file(file, lambda p: p in targets)
    return [root] if root and root in targets else []


def _target(root: str, layout: dict[str, Any] | None) -> tuple[str, list[str]] | None:
    """(target name, required features) of a target root file."""
    if layout:
        found = (layout.get("targets") or {}).get(root)
        if found:
            return str(found["name"]), [str(x) for x in found.get("features") or []]
        return None
    tgt = target_of(root)
    return (tgt[1], []) if tgt else None


def _entries(
    test_files: list[str], layout: dict[str, Any] | None = None
) -> list[tuple[str, str, list[str], list[str]]]:
    roots: list[str] = []
    for f in test_files:
        for root in _roots(f, layout):
            if root not in roots:
                roots.append(root)
    out: list[tuple[str, str, list[str], list[str]]] = []
    for root in sorted(roots):
        tgt = _target(root, layout)
        if tgt:
            out.append((root, tgt[0], tgt[1], []))
    return out


class RustRunner:
    """``cargo test --test <target>`` per integration test target (``--lib`` for the unit
    tests of modules under ``src/``), libtest JSON events."""

    name = "cargo-test"
    #: A test target builds whole: when the test patch's targets do not build before the fix,
    #: the gate runs the base's own tests too (PASS_TO_PASS from them, gates.gate.classify).
    baseline_runs = True

    def __init__(
        self, module: str, toolchain: str = "", layout: dict[str, Any] | None = None
    ) -> None:
        self.module = module
        self.toolchain = toolchain
        #: The test targets of the tree (:func:`scan_targets`); None: guessed from paths.
        self.layout = layout

    def _shuffles(self) -> bool:
        if not self.toolchain:
            return True
        return _vkey(self.toolchain)[:2] >= SHUFFLE_SINCE

    def argv(self, test_files: list[str], *, order_seed: int = 0) -> list[str]:
        """The test command (a shell script: one cargo test per target)."""
        seed = order_seed if self._shuffles() else None
        threads = 0 if self._shuffles() else 1 + order_seed % 4
        return [
            "/bin/sh",
            "-c",
            _script(_entries(test_files, self.layout), seed=seed, threads=threads),
        ]

    def unplanned(self, test_files: list[str]) -> str | None:
        """Why a run of ``test_files`` would run no test target at all (None: it runs some).

        Such a run executes no cargo command and exits 0 with no output; run anyway, it
        read as the PR's ``no_test_report``, when it is the harness that does not know
        where these files are compiled (a layout it does not follow)."""
        if not test_files or _entries(test_files, self.layout):
            return None
        known = sorted((self.layout or {}).get("targets") or {})
        return (
            f"no cargo test target compiles the test file(s) {', '.join(test_files[:5])}: "
            "the harness maps a test file to a target by its path (tests/<name>.rs, "
            "tests/<dir>/main.rs or its sibling tests/<dir>.rs, src/ for the library) and "
            "by the mod declarations of the base tree"
            + (f"; the tree's targets: {', '.join(known[:8])}" if known else "")
        )

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The command as one shell line (recorded in manifests)."""
        return " ".join(shlex.quote(a) for a in self.argv(test_files, order_seed=order_seed))

    def settle(self, result: RunResult) -> None:
        """Mark the targets whose test binary died mid-run as crashed.

        The harness reports a target whose suite started but never ended as a collection
        error. When some of its tests were reported, the binary was built and ran: it died
        (an abort, a double panic, a signal) at a point the shuffled order and the threads
        decide, so the tests it had not reported were not run in this run and say nothing
        about flakiness (``gates.gate._observed``). Which test killed it libtest does not
        say; the judge's parser names it failed when it was the only one started and not
        ended (with several in flight, none is)."""
        crashed = set(result.crashed)
        for target in result.collect_errors:
            if any(key.startswith(target + "::") for key in result.tests):
                crashed.add(target)
        result.crashed = sorted(crashed)

    def run_spec(
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        return {
            "argv": self.argv(test_files, order_seed=order_seed),
            "env": dict(RUN_ENV),
            "report": {
                "format": "libtest-json",
                "files": [e[0] for e in _entries(test_files, self.layout)],
            },
        }
