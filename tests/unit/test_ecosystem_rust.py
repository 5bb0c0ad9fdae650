"""The Rust adapter without Docker: toolchain choice, libtest JSON reading, guards, scope."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from swe_forge.ecosystems import detect_ecosystem, ecosystem_named, for_runner
from swe_forge.ecosystems.rust.adapter import (
    CAPABILITIES,
    INSTALL,
    RustEcosystem,
    RustRunner,
    _feature_builds,
    _world_readable,
    cargo_info,
    choose_toolchain,
    lock_argv,
    scan_targets,
    target_file,
    toolchain_pin,
)
from swe_forge.ecosystems.rust.runner import LIB, target_of
from swe_forge.errors import BuildError
from swe_forge.gates.harness import swe_forge_polyglot as polyglot
from swe_forge.gates.runner import RunResult

ECO = RustEcosystem()


def diff(path: str, old: list[str], new: list[str], *, create: bool = False) -> str:
    head = (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        if create
        else f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    )
    start = 0 if create else 1
    body = "".join(f"-{x}\n" for x in old) + "".join(f"+{x}\n" for x in new)
    return head + f"@@ -{start},{len(old)} +1,{len(new)} @@\n" + body


# ---------------------------------------------------------------------------- toolchain


@pytest.mark.parametrize(
    ("date", "rust_version", "pin", "want"),
    [
        ("2024-10-07", "", "", "1.81.0"),
        ("2024-10-17", "", "", "1.82.0"),
        ("2023-06-01", "", "", "1.70.0"),
        ("2019-01-01", "", "", "1.56.1"),  # older than the table: its first release
        ("2023-06-01", "1.74", "", "1.74.1"),  # raised to rust-version
        ("2023-06-01", "1.65.0", "", "1.70.0"),  # an older rust-version changes nothing
        ("2023-06-01", "", "1.77.0", "1.77.2"),  # raised to rust-toolchain's version
        ("2030-01-01", "", "", "1.95.0"),
    ],
)
def test_toolchain_by_date(date: str, rust_version: str, pin: str, want: str) -> None:
    assert choose_toolchain(date, rust_version, pin) == want


def test_toolchain_newer_than_table_fails() -> None:
    with pytest.raises(BuildError):
        choose_toolchain("2024-01-01", "1.120")


def test_toolchain_files_and_manifest() -> None:
    assert toolchain_pin('[toolchain]\nchannel = "1.76.0"\n') == "1.76.0"
    assert toolchain_pin("1.72\n") == "1.72"
    assert toolchain_pin("stable\n") == ""
    assert toolchain_pin('[toolchain]\nchannel = "nightly-2024-01-01"\n') == ""
    info = cargo_info('[package]\nname = "x"\nrust-version = "1.70"\nedition = "2021"\n')
    assert info == {"name": "x", "rust-version": "1.70", "edition": "2021"}
    assert cargo_info("[workspace]\nmembers = ['a']\n") == {"workspace": "1"}


def test_registry_and_detection() -> None:
    assert ecosystem_named("rust").runner_name == "cargo-test"
    assert isinstance(for_runner("cargo-test"), RustEcosystem)
    files = {"Cargo.toml": b"[package]\nname='x'\n"}
    assert detect_ecosystem(files.get) == "rust"
    assert detect_ecosystem({}.get) == "python"


# ------------------------------------------------------------------------------ targets


def test_targets_of_test_files() -> None:
    assert target_of("tests/text.rs") == (".", "text")
    assert target_of("tests/words/main.rs") == (".", "words")
    assert target_of("crates/core/tests/api.rs") == ("crates/core", "api")
    assert target_of("tests/common/mod.rs") is None
    assert target_file("tests/words/helpers.rs") == "tests/words/main.rs"
    assert target_file("tests/common/mod.rs") is None
    assert ECO.is_test_file("tests/common/mod.rs") and not ECO.is_test_file("src/lib.rs")


def test_runner_script_runs_each_target_with_libtest_json() -> None:
    spec = RustRunner("rustkit").run_spec(
        ["tests/text.rs", "tests/words/main.rs", "tests/words/extra.rs"], order_seed=7, hash_seed=0
    )
    script = spec["argv"][2]
    assert spec["report"] == {
        "format": "libtest-json",
        "files": ["tests/text.rs", "tests/words/main.rs"],
    }
    assert script.count("cargo test --offline") == 2
    assert "--test text" in script and "--test words" in script
    assert "--format json" in script and "--shuffle-seed 7" in script
    assert spec["env"]["RUSTC_BOOTSTRAP"] == "1"
    old = RustRunner("x", "1.56.1").argv(["tests/a.rs"], order_seed=2)[2]
    assert "--shuffle-seed" not in old and "--test-threads=3" in old


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_helper_module_dirs_are_no_targets() -> None:
    # tests/helpers/mod.rs (quick-xml) is declared by targets with `mod helpers;`: there is
    # no target "helpers" to run.
    assert target_file("tests/helpers/mod.rs") is None
    assert (
        RustRunner("x").run_spec(["tests/helpers/mod.rs"], order_seed=1, hash_seed=0)["report"][
            "files"
        ]
        == []
    )


def test_scan_targets_leaves_out_targets_without_libtest(tmp_path: Path) -> None:
    """A [[test]] with harness = false has its own main: no per-test event to observe."""
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "log"\n\n[[test]]\nname = "integration"\n'
            'path = "tests/integration.rs"\nharness = false\n\n[[test]]\nname = "macros"\n'
            'path = "tests/macros.rs"\nharness = true\n',
            "tests/integration.rs": "fn main() {}\n",
            "tests/macros.rs": "#[test]\nfn a() {}\n",
        },
    )
    assert scan_targets(tree)["targets"] == {"tests/macros.rs": {"name": "macros", "features": []}}


def test_scan_targets_reads_test_entries_features_and_shared_modules(tmp_path: Path) -> None:
    # quick-xml's layout: [[test]] entries with required-features, shared helper modules.
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "q"\n\n[[test]]\nname = "serde-de"\n'
            'required-features = ["serialize"]\npath = "tests/serde-de.rs"\n\n'
            '[[test]]\nname = "odd"\npath = "checks/odd_name.rs"\n',
            "tests/serde-de.rs": "mod serde_helpers;\n#[test]\nfn a() {}\n",
            "tests/reader.rs": "mod helpers;\n#[test]\nfn b() {}\n",
            "tests/issues.rs": '#[path = "helpers/mod.rs"]\nmod h;\n',
            "tests/plain.rs": "#[test]\nfn c() {}\n",
            "tests/helpers/mod.rs": "pub fn x() {}\n",
            "tests/serde_helpers/mod.rs": "pub fn y() {}\n",
            "tests/words/main.rs": "mod edge;\n",
            "tests/words/edge.rs": "#[test]\nfn d() {}\n",
            "checks/odd_name.rs": "#[test]\nfn e() {}\n",
        },
    )
    layout = scan_targets(tree)
    assert layout["targets"] == {
        "checks/odd_name.rs": {"name": "odd", "features": []},
        "tests/issues.rs": {"name": "issues", "features": []},
        "tests/plain.rs": {"name": "plain", "features": []},
        "tests/reader.rs": {"name": "reader", "features": []},
        "tests/serde-de.rs": {"name": "serde-de", "features": ["serialize"]},
        "tests/words/main.rs": {"name": "words", "features": []},
    }
    assert layout["modules"] == {
        "tests/helpers/mod.rs": ["tests/issues.rs", "tests/reader.rs"],
        "tests/serde_helpers/mod.rs": ["tests/serde-de.rs"],
    }
    runner = RustRunner("q", "1.81.0", layout)
    spec = runner.run_spec(
        ["tests/serde-de.rs", "tests/helpers/mod.rs", "tests/words/edge.rs", "checks/odd_name.rs"],
        order_seed=3,
        hash_seed=0,
    )
    assert spec["report"]["files"] == [
        "checks/odd_name.rs",
        "tests/issues.rs",
        "tests/reader.rs",
        "tests/serde-de.rs",
        "tests/words/main.rs",
    ]
    script = spec["argv"][2]
    # cargo refuses `--test serde-de` without its required features.
    assert "--test serde-de --features serialize --" in script
    assert "--test odd --" in script and "--test helpers" not in script
    # The instance warms the build of the targets that need features too.
    install = INSTALL.format(
        cargo="/c", target="/t", features=_feature_builds({"harness": {"layout": layout}})
    )
    assert "cargo test --offline --no-run --tests --features serialize" in install


def test_autotests_false_keeps_only_test_entries(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "q"\nautotests = false\n\n'
            '[[test]]\nname = "all"\npath = "tests/main.rs"\n',
            "tests/main.rs": "mod parse;\n",
            "tests/parse.rs": "#[test]\nfn p() {}\n",
        },
    )
    layout = scan_targets(tree)
    assert layout["targets"] == {"tests/main.rs": {"name": "all", "features": []}}
    assert layout["modules"] == {"tests/parse.rs": ["tests/main.rs"]}


def test_admission_runner_knows_toolchain_and_layout() -> None:
    layout = {"targets": {"tests/a.rs": {"name": "a", "features": ["x"]}}, "modules": {}}
    rec = SimpleNamespace(
        project_name="k", recipe={"toolchain": "rust-1.56.1", "harness": {"layout": layout}}
    )
    runner = ECO.runner_for(rec)  # type: ignore[arg-type]
    script = runner.argv(["tests/a.rs"], order_seed=2)[2]
    # Rust 1.56 has no --shuffle-seed: the gate varies the thread count instead.
    assert "--shuffle-seed" not in script and "--test-threads=3" in script
    assert "--test a --features x" in script


def test_lock_is_generated_as_of_the_base_date() -> None:
    argv = lock_argv("cargo", "/t/Cargo.toml", "2019-05-01T00:00:00Z")
    assert argv[-3:] == ["-Zunstable-options", "--publish-time", "2019-05-01T00:00:00Z"]
    assert lock_argv("cargo", "/t/Cargo.toml", "") == [
        "cargo",
        "generate-lockfile",
        "--manifest-path",
        "/t/Cargo.toml",
    ]


@pytest.mark.slow
def test_publish_time_keeps_crates_published_later_out(tmp_path: Path) -> None:
    # rust-base64 in 2019 had no Cargo.lock; resolved by today's index, memchr 2.6 (which
    # Rust 1.56's cargo cannot parse) came in through the dev-dependencies.
    import shutil
    import subprocess

    cargo = shutil.which("cargo")
    if not cargo:
        pytest.skip("no cargo on this machine")
    _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "t"\nversion = "0.1.0"\n\n'
            '[dependencies]\nmemchr = "2"\n',
            "src/lib.rs": "",
        },
    )
    argv = lock_argv(cargo, str(tmp_path / "Cargo.toml"), "2019-05-01T00:00:00Z")
    proc = subprocess.run(
        argv, env={**__import__("os").environ, "RUSTC_BOOTSTRAP": "1"}, capture_output=True
    )
    if proc.returncode != 0 and b"index" in proc.stderr:
        pytest.skip("crates.io index not reachable")
    assert proc.returncode == 0, proc.stderr
    lock = (tmp_path / "Cargo.lock").read_text()
    assert 'name = "memchr"\nversion = "2.2.0"' in lock


def test_warm_target_fits_the_run_tmpfs() -> None:
    # rust-base64-252: the warm target dir (debug info of criterion's dependencies) outgrew
    # the run's /tmp; the partial copy left crates cargo thought built ("can't find crate").
    install = INSTALL.format(cargo="/c", target="/t", features="")
    spec = RustRunner("x").run_spec(["tests/a.rs"], order_seed=1, hash_seed=0)
    for env in ("CARGO_PROFILE_DEV_DEBUG=0", "CARGO_PROFILE_TEST_DEBUG=0"):
        assert env in install
        key, value = env.split("=")
        assert spec["env"][key] == value
    assert "|| rm -rf /tmp/target" in spec["argv"][2]


# ----------------------------------------------------------------------- libtest JSON


def _mark(file: str) -> str:
    return json.dumps({"type": "swe-forge-target", "file": file})


DONE = json.dumps({"type": "swe-forge-done"})


def _suite(*tests: tuple[str, str]) -> list[str]:
    lines = [json.dumps({"type": "suite", "event": "started", "test_count": len(tests)})]
    for name, event in tests:
        lines.append(json.dumps({"type": "test", "event": "started", "name": name}))
        item = {"type": "test", "name": name, "event": event}
        if event == "failed":
            item["stdout"] = "thread 'x' panicked at tests/a.rs:3:5:\nassertion failed\n"
        lines.append(json.dumps(item))
    counts = {
        "passed": sum(e == "ok" for _, e in tests),
        "failed": sum(e == "failed" for _, e in tests),
        "ignored": sum(e == "ignored" for _, e in tests),
    }
    lines.append(
        json.dumps({"type": "suite", "event": "failed" if counts["failed"] else "ok", **counts})
    )
    return lines


def parse(lines: list[str], files: list[str]) -> dict:
    data = ("\n".join(lines) + "\n").encode()
    return polyglot.parse({"format": "libtest-json", "files": files}, data)


def test_parse_outcomes_per_target() -> None:
    lines = [
        _mark("tests/a.rs"),
        *_suite(("one", "ok"), ("m::two", "failed"), ("three", "ignored")),
        _mark("tests/b/main.rs"),
        *_suite(("four", "ok")),
        DONE,
    ]
    ev = parse(lines, ["tests/a.rs", "tests/b/main.rs"])
    assert ev["tests"] == {
        "tests/a.rs::one": "passed",
        "tests/a.rs::m::two": "failed",
        "tests/a.rs::three": "skipped",
        "tests/b/main.rs::four": "passed",
    }
    assert ev["connected"] and ev["ended"] and ev["exitstatus"] == 1
    assert ev["tamper"] == [] and ev["collect_errors"] == []
    assert "assertion failed" in ev["messages"]["tests/a.rs::m::two"]


def test_parse_target_that_does_not_compile_is_a_collection_error() -> None:
    lines = [_mark("tests/a.rs"), _mark("tests/b.rs"), *_suite(("x", "ok")), DONE]
    ev = parse(lines, ["tests/a.rs", "tests/b.rs", "tests/c.rs"])
    assert ev["collect_errors"] == ["tests/a.rs", "tests/c.rs"]
    assert ev["exitstatus"] == 1 and not ev["ended"]  # c never ran


def test_parse_crash_mid_suite_is_a_collection_error() -> None:
    lines = [_mark("tests/a.rs"), *_suite(("x", "ok"))[:-1], DONE]
    ev = parse(lines, ["tests/a.rs"])
    assert ev["collect_errors"] == ["tests/a.rs"] and ev["exitstatus"] == 1


def test_parse_crash_names_the_one_test_in_flight() -> None:
    """hyperium/http-838: the new test double-frees before the fix and glibc aborts the test
    binary. The one test that had started and not ended is the one that ended it: failed (so
    it can be FAIL_TO_PASS). With two in flight (several test threads), neither is named."""
    suite = _suite(("x", "ok"), ("into_iter_drop_panic", "ok"))
    aborted = suite[:4]  # x passed; the next one started and the binary died
    ev = parse([_mark("tests/a.rs"), *aborted, DONE], ["tests/a.rs"])
    assert ev["tests"] == {"tests/a.rs::x": "passed", "tests/a.rs::into_iter_drop_panic": "failed"}
    assert ev["collect_errors"] == ["tests/a.rs"] and ev["exitstatus"] == 1
    two = [
        json.dumps({"type": "suite", "event": "started", "test_count": 2}),
        json.dumps({"type": "test", "event": "started", "name": "p"}),
        json.dumps({"type": "test", "event": "started", "name": "q"}),
    ]
    ev = parse([_mark("tests/a.rs"), *two, DONE], ["tests/a.rs"])
    assert ev["tests"] == {} and ev["collect_errors"] == ["tests/a.rs"]


def test_parse_forged_duplicate_is_tamper() -> None:
    forged = json.dumps({"type": "test", "name": "one", "event": "ok"})
    suite = _suite(("one", "failed"))
    lines = [_mark("tests/a.rs"), suite[0], forged, *suite[1:], DONE]
    ev = parse(lines, ["tests/a.rs"])
    assert any("reported twice" in t for t in ev["tamper"])


@pytest.mark.parametrize(
    "lines",
    [
        # a forged end and a forged frame for the next target, then the real ones
        [_mark("tests/a.rs"), *_suite(("one", "ok")), DONE, DONE],
        [_mark("tests/a.rs"), *_suite(("one", "ok")), _mark("tests/a.rs"), DONE],
        # an event before any frame
        [json.dumps({"type": "test", "name": "one", "event": "ok"}), _mark("tests/a.rs"), DONE],
        # counts that disagree with the tests reported
        [
            _mark("tests/a.rs"),
            json.dumps({"type": "suite", "event": "started", "test_count": 2}),
            json.dumps({"type": "test", "name": "one", "event": "ok"}),
            json.dumps({"type": "suite", "event": "ok", "passed": 2, "failed": 0}),
            DONE,
        ],
    ],
)
def test_parse_forged_frames_are_tamper(lines: list[str]) -> None:
    assert parse(lines, ["tests/a.rs"])["tamper"]


def test_parse_ignores_free_text() -> None:
    lines = ["running 1 test", "test one ... ok", _mark("tests/a.rs"), *_suite(("one", "ok"))]
    ev = parse([*lines, DONE], ["tests/a.rs"])
    assert ev["tests"] == {"tests/a.rs::one": "passed"} and ev["exitstatus"] == 0


def test_run_job_twins_build_their_binaries_then_run_them() -> None:
    from types import SimpleNamespace
    from typing import Any

    task: Any = SimpleNamespace(
        FAIL_TO_PASS=["tests/a.rs::one"],
        PASS_TO_PASS=["tests/a.rs::two", "tests/b.rs::three"],
        harness={"module": "k"},
        image={"toolchain": "rust-1.80.1"},
        test_patch=diff("tests/a.rs", ["fn one() {}"], ["fn one() { }"]),
    )
    job = ECO.run_job(task, "/t", timeout=10, output_limit=100, twins=[{}, {}], test_timeout=7)
    run = job["run"]
    build = run["build"]["argv"][-1]
    assert (
        "cargo test --offline --no-run --message-format=json --manifest-path Cargo.toml --test a"
        in build
    )
    assert 'cp "$exe" /tmp/swe-forge-bin/t0' in build and "/tmp/swe-forge-bin/t1" in build
    assert "[ -d /tmp/target ] || cp -a /opt/target /tmp/target" in build
    assert run["hide"][0] == "tests/a.rs" and "/tmp/target/debug/deps" in run["hide"]
    script = run["argv"][-1]
    # Each target's binary, framed, with its tests; a limit of 7 s per test it runs.
    assert "timeout -k 5 14 /swe-forge-run/bin/rust/t0" in script
    assert "--exact one two" in script and "--exact three" in script
    assert '"type": "swe-forge-done"' in script
    calibration = ECO.run_job(task, "/t", timeout=10, output_limit=100, extra={"tests/a.rs::x": {}})
    assert (
        "build" not in calibration["run"] and "--exact one two x" in calibration["run"]["argv"][-1]
    )


# -------------------------------------------------------------------------------- guards

GOLD = diff("src/lib.rs", ["pub fn f() {}"], ["pub fn f() { let _ = 1; }"])


@pytest.mark.parametrize(
    "patch",
    [
        diff("Cargo.toml", [], ["[[test]]", 'name = "text"', "harness = false"]),
        diff("Cargo.toml", [], ["[patch.crates-io]", 'serde = { path = "shim" }']),
        diff("Cargo.toml", [], ["[profile.test]", "opt-level = 3"]),
        diff("Cargo.toml", [], ['build = "gen.rs"']),
        diff("Cargo.toml", [], ["autotests = false"]),
        diff("Cargo.toml", [], ['helper = { path = "../helper" }']),
        diff("build.rs", [], ["fn main() {}"], create=True),
        diff("crates/x/build.rs", [], ["fn main() {}"], create=True),
        diff(".cargo/config.toml", [], ["[build]", 'rustflags = ["--cfg", "x"]'], create=True),
        diff("rust-toolchain.toml", [], ["[toolchain]", 'channel = "nightly"'], create=True),
        diff("vendor/serde/src/lib.rs", ["a"], ["b"]),
    ],
)
def test_runner_configuration_is_refused(patch: str) -> None:
    found = ECO.patch_violations(patch, gold_patch=GOLD, read_base=None)
    assert found and all(v["code"] == "runner_config" for v in found)


def test_what_the_gold_patch_changes_is_allowed() -> None:
    build = diff("build.rs", [], ["fn main() {}"], create=True)
    assert ECO.patch_violations(build, gold_patch=build, read_base=None) == []
    dep = diff("Cargo.toml", [], ['memchr = "2"'])
    assert ECO.patch_violations(dep, gold_patch=GOLD, read_base=None) == []  # a registry dep


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("    std::process::exit(0);", "process::exit/abort"),
        ("    std::process::abort();", "process::exit/abort"),
        ("    unsafe { x() }", "unsafe"),
        ("    libc::write(1, p, n);", "libc"),
        ('    println!("x");', "stdout/stderr"),
        ("    let _ = std::io::stdout();", "stdout/stderr"),
        ("#[ctor::ctor]", "ctor"),
        ('#[link_section = ".init_array"]', "ctor"),
        ('extern "C" fn f() {}', "extern"),
        ("#[no_mangle]", "extern"),
        ("    let a: Vec<_> = std::env::args().collect();", "env::args"),
        ("    std::panic::set_hook(Box::new(|_| {}));", "panic hooks"),
        ('    let s = "{\\"type\\": \\"test\\", \\"event\\": \\"ok\\"}";', "test-runner text"),
        ('    include!("../tests/text.rs");', "include!"),
    ],
)
def test_capabilities(line: str, name: str) -> None:
    assert name in CAPABILITIES
    assert name in ECO.capabilities(diff("src/lib.rs", [], [line]))
    # the same line in any .rs file the patch touches (a module can compile it in)
    assert name in ECO.capabilities(diff("tests/a.rs", [], [line]))


def test_plain_code_uses_no_capability() -> None:
    code = ["pub fn squeeze(s: &str) -> String {", '    s.replace("  ", " ")', "}"]
    assert ECO.capabilities(diff("src/text.rs", [], code)) == []
    base = {"src/lib.rs": b"pub fn f() { unsafe { g() } }\n", "tests/a.rs": b"println!()\n"}
    assert ECO.base_capabilities(base, base.get) == ["unsafe"]


# --------------------------------------------------------------------------------- scope


def test_scope_covers_changed_and_new_tests() -> None:
    changed = diff(
        "tests/text.rs",
        [],
        ["#[test]", "fn truncate_exact_width() {", "    assert_eq!(1, 1);", "}"],
    )
    body = (
        "diff --git a/tests/text.rs b/tests/text.rs\n--- a/tests/text.rs\n+++ b/tests/text.rs\n"
        "@@ -10,3 +10,3 @@\n fn reverse_ascii() {\n-    assert_eq!(1, 2);\n+    assert_eq!(1, 1);\n }\n"
    )
    new = diff(
        "tests/words/main.rs",
        [],
        ["mod edge {", "    #[test]", "    fn empty() {}", "}"],
        create=True,
    )
    scope = ECO.scope(changed + body + new)
    assert scope.covers("tests/text.rs::truncate_exact_width")
    assert scope.covers("tests/text.rs::reverse_ascii")
    assert not scope.covers("tests/text.rs::truncate_long")
    assert scope.covers("tests/words/main.rs::edge::empty")
    assert scope.covers("tests/words/main.rs::anything")


def test_scope_reads_the_function_a_hunk_starts_in_from_the_base_file() -> None:
    # glob's tests/glob-std.rs is one long `fn main`: a hunk deep inside it shows no `fn`.
    base = "\n".join(
        [
            "#[test]",
            "fn main() {",
            *[f"    check({i});" for i in range(40)],
            "}",
            "",
            "fn helper() {",
            "    todo!()",
            "}",
            "",
        ]
    ).encode()
    inside = (
        "diff --git a/tests/glob-std.rs b/tests/glob-std.rs\n"
        "--- a/tests/glob-std.rs\n+++ b/tests/glob-std.rs\n"
        "@@ -30,2 +30,3 @@\n     check(27);\n+    check(99);\n     check(28);\n"
    )
    read = {"tests/glob-std.rs": base}.get
    assert ECO.scope(inside, read).covers("tests/glob-std.rs::main")
    # Without the base file the hunk is in no known function.
    assert not ECO.scope(inside).covers("tests/glob-std.rs::main")
    # A hunk after main's closing brace, before the next function, is in none.
    between = (
        "diff --git a/tests/glob-std.rs b/tests/glob-std.rs\n"
        "--- a/tests/glob-std.rs\n+++ b/tests/glob-std.rs\n"
        "@@ -44,2 +44,3 @@\n \n+// a comment\n fn helper() {\n"
    )
    scope = ECO.scope(between, read)
    assert not scope.covers("tests/glob-std.rs::main")


_MACRO_BASE = "\n".join(
    [
        "macro_rules! test {",
        "    ($($name:ident($value:expr, $expected:expr))*) => {",
        "        $(",
        "            #[test]",
        "            fn $name() {",
        "                assert_eq!(fmt($value), $expected);",
        "            }",
        "        )*",
        "    };",
        "}",
        "",
        "test! {",
        '    test_u64_0(0u64, "0")',
        '    test_u64_max(u64::MAX, "18446744073709551615")',
        "}",
        "",
        "#[test]",
        "fn test_other() {",
        '    assert_eq!(fmt(1), "1");',
        "}",
        "",
    ]
).encode()


def _hunk(start: int, context: list[str], added: list[str]) -> str:
    n = len(context)
    body = "".join(f" {x}\n" for x in context) + "".join(f"+{x}\n" for x in added)
    return (
        "diff --git a/tests/test.rs b/tests/test.rs\n--- a/tests/test.rs\n+++ b/tests/test.rs\n"
        f"@@ -{start},{n} +{start},{n + len(added)} @@\n{body}"
    )


def test_scope_reaches_the_tests_a_changed_macro_invocation_generates() -> None:
    """itoa: tests are generated by ``test! { name(value, expected) ... }``; a test patch
    that adds an entry to the invocation adds that test, and its siblings are reached."""
    read = {"tests/test.rs": _MACRO_BASE}.get
    patch = _hunk(
        13,
        ['    test_u64_0(0u64, "0")', '    test_u64_max(u64::MAX, "18446744073709551615")'],
        ['    test_u128_max(u128::MAX, "3402")'],
    )
    scope = ECO.scope(patch, read)
    assert scope.covers("tests/test.rs::test_u128_max")
    assert scope.covers_directly("tests/test.rs::test_u128_max")
    assert scope.covers("tests/test.rs::test_u64_0")  # same invocation: reached...
    assert not scope.covers_directly("tests/test.rs::test_u64_0")  # ...not its own
    assert not scope.covers("tests/test.rs::test_other")


def test_scope_reaches_every_test_of_a_changed_macro_rules() -> None:
    read = {"tests/test.rs": _MACRO_BASE}.get
    patch = _hunk(
        6,
        ["                assert_eq!(fmt($value), $expected);"],
        ["                assert_eq!(fmt($value).len(), $expected.len());"],
    )
    scope = ECO.scope(patch, read)
    assert scope.covers("tests/test.rs::test_u64_0")
    assert scope.covers("tests/test.rs::test_u64_max")
    assert not scope.covers_directly("tests/test.rs::test_u64_max")
    assert not scope.covers("tests/test.rs::test_other")
    # A line in a test function's own assert_eq! is that function's, not a macro's.
    patch = _hunk(19, ['    assert_eq!(fmt(1), "1");'], ['    assert_eq!(fmt(2), "2");'])
    scope = ECO.scope(patch, read)
    assert scope.covers("tests/test.rs::test_other")
    assert not scope.covers("tests/test.rs::test_u64_0")


def test_a_line_belongs_to_every_function_it_is_nested_in() -> None:
    # glob-128: main declares helper functions of its own; a hunk after them is main's.
    base = "\n".join(
        [
            "#[test]",
            "fn main() {",
            "    fn glob_vec(p: &str) -> Vec<u8> {",
            "        vec![]",
            "    }",
            "",
            *[f"    check({i});" for i in range(30)],
            "}",
            "",
        ]
    ).encode()
    patch = (
        "diff --git a/tests/glob-std.rs b/tests/glob-std.rs\n"
        "--- a/tests/glob-std.rs\n+++ b/tests/glob-std.rs\n"
        "@@ -3,3 +3,6 @@ fn main() {\n"
        "     fn glob_vec(p: &str) -> Vec<u8> {\n         vec![]\n     }\n"
        "+    fn glob_with_vec(p: &str) -> Vec<u8> {\n+        vec![1]\n+    }\n"
        "@@ -30,2 +33,3 @@ fn main() {\n     check(23);\n+    check(99);\n     check(24);\n"
    )
    scope = ECO.scope(patch, {"tests/glob-std.rs": base}.get)
    assert scope.covers("tests/glob-std.rs::main")
    assert scope.covers("tests/glob-std.rs::glob_with_vec")
    assert not scope.covers("tests/glob-std.rs::glob_vec")


def test_protect_locks_the_test_trees_and_manifests() -> None:
    p = ECO.protect(diff("tests/words/main.rs", [], ["fn a() {}"], create=True))
    assert "tests/words/main.rs" in p["files"] and "Cargo.toml" in p["files"]
    assert p["trees"] == ["tests"]
    # The lock is the judge's and cargo must fit it to a gold patch's Cargo.toml: not locked.
    assert "Cargo.lock" not in p["files"]
    assert "Cargo.lock" not in ECO.protect(diff("Cargo.lock", ["a"], ["b"]))["files"]


def test_every_run_uses_the_judges_lock_writable(tmp_path: Path) -> None:
    """indexmap-422: the gold patch bumps the version and a dependency in Cargo.toml; with
    the tree's read-only lock cargo cannot update it and nothing builds. The run replaces
    whatever lock the tree has (a patch's, a symlink) by the gold tree's, writable."""
    import subprocess

    from swe_forge.ecosystems.rust.runner import (
        CARGO_DIR,
        GOLD_LOCK,
        RUN_HOME,
        RUN_PRELUDE,
        RUN_TARGET,
        TARGET_DIR,
    )

    cargo, testbed = tmp_path / "cargo", tmp_path / "testbed"
    cargo.mkdir()
    testbed.mkdir()
    (cargo / "config.toml").write_text("")
    (cargo / "Cargo.gold.lock").write_text("# gold\n")
    (tmp_path / "elsewhere").write_text("# not to be written\n")
    (testbed / "Cargo.lock").symlink_to(tmp_path / "elsewhere")
    script = (
        RUN_PRELUDE.replace(GOLD_LOCK, str(cargo / "Cargo.gold.lock"))
        .replace(CARGO_DIR, str(cargo))
        .replace(RUN_HOME, str(tmp_path / "home"))
        .replace(RUN_TARGET, str(tmp_path / "run-target"))
        .replace(TARGET_DIR, str(tmp_path / "target"))
    )
    subprocess.run(["/bin/sh", "-c", script], cwd=testbed, check=True)
    lock = testbed / "Cargo.lock"
    assert not lock.is_symlink() and lock.read_text() == "# gold\n"
    assert (tmp_path / "elsewhere").read_text() == "# not to be written\n"
    # An env image from before the gold lock: the tree's lock stays.
    (cargo / "Cargo.gold.lock").unlink()
    lock.write_text("# tree\n")
    subprocess.run(["/bin/sh", "-c", script], cwd=testbed, check=True)
    assert lock.read_text() == "# tree\n"


def test_judges_lock_is_one_the_toolchain_reads() -> None:
    from swe_forge.ecosystems.rust.deps import readable_lock

    v4 = "# auto\nversion = 4\n\n[[package]]\n"
    assert readable_lock(v4, "1.70.0").startswith("# auto\nversion = 3\n")
    assert readable_lock(v4, "1.80.0") == v4


def test_a_target_whose_binary_died_mid_run_is_crashed_not_a_build_failure() -> None:
    # http's header_map.rs aborts on a double drop before the fix: the tests it had not
    # reported yet (the shuffle and the threads decide which) were not run.
    result = RunResult(
        "before",
        0,
        0,
        "ok",
        101,
        0.1,
        tests={"tests/header_map.rs::smoke": "passed", "tests/other.rs::a": "passed"},
        collect_errors={"tests/header_map.rs": "error", "tests/broken.rs": "error"},
    )
    RustRunner("m").settle(result)
    # tests/broken.rs reported nothing: it did not compile (or died first), no crash known.
    assert result.crashed == ["tests/header_map.rs"]
    assert set(result.collect_errors) == {"tests/header_map.rs", "tests/broken.rs"}


def test_vendored_crates_become_readable_by_the_test_user(tmp_path: Path) -> None:
    crate = tmp_path / "vendor" / "magenta-0.1.1"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text("[package]\n")
    (crate / "Cargo.toml").chmod(0o640)
    (crate / "build.sh").write_text("#!/bin/sh\n")
    (crate / "build.sh").chmod(0o700)
    (crate / "src").chmod(0o750)
    (crate / "open.rs").write_text("")
    (crate / "open.rs").chmod(0o666)
    _world_readable(tmp_path / "vendor")
    assert (crate / "Cargo.toml").stat().st_mode & 0o777 == 0o644
    assert (crate / "build.sh").stat().st_mode & 0o777 == 0o755
    assert (crate / "src").stat().st_mode & 0o777 == 0o755
    assert (crate / "open.rs").stat().st_mode & 0o777 == 0o644


def test_the_cargo_config_caps_lints_and_keys_the_env_image() -> None:
    import tomllib

    from swe_forge.ecosystems.rust.adapter import CARGO_CONFIG, ENV_DOCKERFILE

    config = tomllib.loads(CARGO_CONFIG.format(vendor="/opt/cargo/vendor"))
    # #![deny(warnings)] in old code must not fail its build on a newer toolchain.
    assert config["build"]["rustflags"] == ["--cap-lints", "warn"]
    assert config["source"]["crates-io"]["replace-with"] == "vendored-sources"
    assert config["net"]["offline"] is True
    # The config is part of the env image's key (its digest is in the Dockerfile).
    assert "{config}" in ENV_DOCKERFILE


# ------------------------------------------------------------------ unit tests under src/


def test_unit_test_modules_under_src_are_tests() -> None:
    """rust-smallvec keeps its tests in src/tests.rs (``#[cfg(test)] mod tests;``): test
    code, held out and run as the library's unit tests, not source."""
    from swe_forge.config import load_config
    from swe_forge.mining.classify import PathClassifier

    classify = PathClassifier(load_config().classify)
    for path in ("src/tests.rs", "src/map/tests.rs", "src/map/tests/core.rs", "a/src/tests.rs"):
        assert ECO.is_test_file(path), path
        assert classify.is_test(path) and classify.is_test_module(path), path
    for path in ("src/lib.rs", "src/testing.rs", "src/map.rs"):
        assert not ECO.is_test_file(path) and not classify.is_test(path), path
    assert target_file("src/tests.rs") == "src/lib.rs"
    assert target_file("src/map/tests/core.rs") == "src/lib.rs"
    assert target_file("crates/a/src/tests.rs") == "crates/a/src/lib.rs"
    assert target_of("src/lib.rs") == (".", LIB)
    assert target_of("src/tests.rs") is None
    assert target_of("tests/smoke.rs") == (".", "smoke")


def test_unit_tests_run_as_the_library_target(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "sv"\nversion = "0.1.0"\n',
            "src/lib.rs": "#[cfg(test)]\nmod tests;\n",
            "src/tests.rs": "#[test]\nfn push() {}\n",
            "tests/macros.rs": "#[test]\nfn m() {}\n",
        },
    )
    layout = scan_targets(tree)
    assert layout["targets"]["src/lib.rs"] == {"name": LIB, "features": []}
    assert layout["modules"] == {}
    script = RustRunner("sv", "1.80.0", layout).argv(["src/tests.rs"], order_seed=3)[2]
    assert "--lib" in script and "--test" not in script
    assert '"file": "src/lib.rs"' in script
    both = RustRunner("sv", "1.80.0", layout).argv(
        ["src/tests.rs", "tests/macros.rs"], order_seed=3
    )
    assert "--lib" in both[2] and "--test macros" in both[2]
    # The scope names the library's tests by the library root and the module path.
    patch = (
        "diff --git a/src/tests.rs b/src/tests.rs\n--- a/src/tests.rs\n+++ b/src/tests.rs\n"
        "@@ -1,2 +1,4 @@\n #[test]\n fn push() {}\n+#[test]\n+fn pop() {}\n"
    )
    scope = ECO.scope(patch, {"src/tests.rs": b"#[test]\nfn push() {}\n"}.get)
    assert scope.covers("src/lib.rs::tests::pop")
    assert not scope.covers("src/lib.rs::tests::push")


def test_scan_targets_enables_the_features_a_targets_tests_are_gated_on(tmp_path: Path) -> None:
    """rust-lang/log's kv tests exist only with feature kv: the target is run with it."""
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "log"\n\n[features]\nstd = []\nkv = []\n'
            'nightly = []\n\n[dependencies]\nserde = { version = "1", optional = true }\n',
            "tests/macros.rs": '#[test]\n#[cfg(all(feature = "std", feature = "kv"))]\nfn kv_net() {}\n'
            '#[cfg(feature = "nightly")]\n#[test]\nfn n() {}\n'
            '#[cfg(feature = "serde")]\n#[test]\nfn s() {}\n'
            '#[cfg(feature = "undeclared")]\n#[test]\nfn u() {}\n',
            "tests/plain.rs": "#[test]\nfn p() {}\n",
        },
    )
    targets = scan_targets(tree)["targets"]
    assert targets["tests/macros.rs"]["features"] == ["kv", "serde", "std"]
    assert targets["tests/plain.rs"]["features"] == []


# ------------------------------------------------------------------ module paths (issue 23)


def test_scope_keys_a_new_modules_functions_by_its_module_path() -> None:
    # A new src/tests/flag_name.rs declaring `fn cases`: its test is tests::flag_name::cases,
    # not every `cases` of the other modules of the library (bitflags: 35 old tests were
    # taken for the PR's own).
    patch = diff(
        "src/tests/flag_name.rs",
        [],
        ["#[test]", "fn cases() {", "    assert!(true);", "}"],
        create=True,
    )
    base = {"src/lib.rs": b"#[cfg(test)]\nmod tests;\n", "src/tests.rs": b"mod all;\n"}
    scope = ECO.scope(patch, base.get)
    assert scope.covers_directly("src/lib.rs::tests::flag_name::cases")
    assert not scope.covers_directly("src/lib.rs::tests::all::cases")
    assert not scope.covers("src/lib.rs::tests::bits::cases")
    # Without the base the file's place still names the module.
    assert not ECO.scope(patch).covers("src/lib.rs::tests::all::cases")


def test_scope_module_path_takes_inline_modules_and_outer_wrappers() -> None:
    old = [
        "mod a {",
        "    #[test]",
        "    fn t() {",
        "        x();",
        "    }",
        "}",
        "mod b {",
        "    #[test]",
        "    fn t() {",
        "        x();",
        "    }",
        "}",
    ]
    text = ("\n".join(old) + "\n").encode()
    patch = (
        "diff --git a/tests/it.rs b/tests/it.rs\n--- a/tests/it.rs\n+++ b/tests/it.rs\n"
        "@@ -9,3 +9,3 @@\n     fn t() {\n-        x();\n+        y();\n     }\n"
    )
    scope = ECO.scope(patch, {"tests/it.rs": text}.get)
    assert scope.covers("tests/it.rs::b::t")
    assert not scope.covers("tests/it.rs::a::t")
    # A module of tests/<dir>/ keyed below the target: an outer module the place does not
    # show (a `mod x { automod::dir!(..) }` wrapper) still matches.
    sub = diff("tests/words/edge.rs", [], ["#[test]", "fn empty() {}"], create=True)
    scope = ECO.scope(sub, {"tests/words/main.rs": b"mod edge;\n"}.get)
    assert scope.covers_directly("tests/words/main.rs::edge::empty")
    assert scope.covers_directly("tests/words/main.rs::outer::edge::empty")
    assert not scope.covers_directly("tests/words/main.rs::other::empty")


def test_a_module_dir_whose_target_is_the_sibling_file(tmp_path: Path) -> None:
    # tests/regression.rs includes tests/regression/*.rs (a macro such as automod::dir!, or
    # the non-mod.rs layout): a new file there belongs to target "regression", not to a
    # tests/regression/main.rs that does not exist (serde_json ran no cargo at all).
    tree = _tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "sj"\nversion = "0.1.0"\n',
            "src/lib.rs": "",
            "tests/regression.rs": 'mod regression {\n    automod::dir!("tests/regression");\n}\n',
            "tests/regression/issue1.rs": "#[test]\nfn test() {}\n",
        },
    )
    layout = scan_targets(tree)
    new = "tests/regression/issue2.rs"
    script = RustRunner("sj", "1.80.0", layout).argv([new], order_seed=1)[2]
    assert "--test regression" in script
    assert RustRunner("sj", "1.80.0", layout).unplanned([new]) is None
    exists = {"tests/regression.rs": b"", "tests/regression/issue1.rs": b""}
    assert target_file(new, lambda p: p in exists) == "tests/regression.rs"
    assert target_file("tests/words/x.rs", lambda p: False) == "tests/words/main.rs"
    patch = diff(new, [], ["#[test]", "fn test() {}"], create=True)
    scope = ECO.scope(patch, exists.get)
    assert scope.covers_directly("tests/regression.rs::regression::issue2::test")
    assert not scope.covers("tests/regression.rs::regression::issue1::test")


def test_a_run_plan_without_targets_is_refused_on_the_host(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {"Cargo.toml": '[package]\nname = "z"\nversion = "0.1.0"\n', "tests/a.rs": ""},
    )
    runner = RustRunner("z", "1.80.0", scan_targets(tree))
    why = runner.unplanned(["tests/common/util.rs"])
    assert why is not None and "tests/common/util.rs" in why and "tests/a.rs" in why
    assert runner.unplanned(["tests/a.rs"]) is None


def test_admit_refuses_a_run_plan_without_targets_before_any_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from swe_forge.admission import admitter as admitter_mod
    from swe_forge.config import load_config
    from swe_forge.records import ImageRecord

    tree = _tree(
        tmp_path,
        {"Cargo.toml": '[package]\nname = "z"\nversion = "0.1.0"\n', "tests/a.rs": ""},
    )
    rec = ImageRecord("z-1", "o/z", "c")
    rec.status = "ok"
    rec.project_name = "z"
    rec.recipe = {"harness": {"layout": scan_targets(tree)}}
    ran: list[str] = []
    monkeypatch.setattr(admitter_mod, "provide", lambda *a, **k: None)
    monkeypatch.setattr(admitter_mod, "run_gate", lambda *a, **k: ran.append("gate"))
    monkeypatch.setattr(admitter_mod.Admitter, "engine", property(lambda self: None))
    adm = admitter_mod.Admitter(load_config())
    monkeypatch.setattr(adm, "gold_guard", lambda cand: "")
    monkeypatch.setattr(adm, "ecosystem", lambda cand: ECO)
    cand = SimpleNamespace(
        repo="o/z",
        instance_id="z-1",
        test_patch=diff("tests/common/util.rs", [], ["pub fn f() {}"], create=True),
        provenance=SimpleNamespace(pr_number=1, merge_commit="m"),
    )
    got, _ = adm.admit(cand, rec)  # type: ignore[arg-type]
    assert getattr(got, "reason", None) == "no_test_target"
    assert "tests/common/util.rs" in got.detail and not ran
