"""The Rust adapter end to end on the real engine: rustkit mined and admitted as expected,
gold patches verified at 1.0, and attacks on cargo's configuration, on libtest's output and
on the test framework scored 0 with a named reason."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.ecosystems.rust.adapter import CAPABILITIES
from swe_forge.example.rust_example import EXPECTED_RUST, create_rust_example
from swe_forge.git.cli import checkout_clean, run_git, staged_diff
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import (
    AdmittedExample,
    Edit,
    attack_from_inside,
    both,
    mine_and_admit,
    open_gate,
    patch_of,
    records_by_id,
    sub,
)

TASK = "swe-forge__rustkit-1"


@pytest.fixture(scope="module")
def rust_tasks(tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "rustkit", create_rust_example)


def test_rustkit_is_mined_and_admitted_as_expected(rust_tasks: AdmittedExample) -> None:
    tasks, rejected = records_by_id(rust_tasks.tasks_path), records_by_id(rust_tasks.rejected_path)
    mined = {c["instance_id"] for c in rust_tasks.candidates}
    for number, want in EXPECTED_RUST.items():
        iid = f"swe-forge__rustkit-{number}"
        assert (iid in mined) == want["candidate"], iid
        if not want["candidate"]:
            continue
        if want["admitted"]:
            task = tasks[iid]
            assert task["FAIL_TO_PASS"] == want["FAIL_TO_PASS"], iid
            assert task["harness"]["runner"] == "cargo-test"
            assert task["image"]["ecosystem"] == "rust"
            assert task["image"]["toolchain"] == "rust-1.81.0"
            assert task["image"]["toolchain_source"].startswith("https://static.rust-lang.org")
            assert task["environment"]["env"]["RUSTC_BOOTSTRAP"] == "1"
        else:
            assert rejected[iid]["reason"] == want["reason"], iid
    assert tasks[TASK]["PASS_TO_PASS"] == [
        "tests/text.rs::reverse_ascii",
        "tests/text.rs::truncate_long",
        "tests/text.rs::truncate_short",
    ]


def _patch(repo: Path, base: str, work: Path, edits: dict[str, str], gold: str = "") -> str:
    """A diff against ``base``: the gold patch (if any), then files replaced or created."""
    checkout_clean(repo, work, base)
    if gold:
        run_git(["apply", "-"], cwd=work, input_bytes=gold.encode())
    for path, text in edits.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    return staged_diff(work, base)


_FORGE = """\
//! Helpers for text.
use std::io::Write;

pub fn truncate(_s: &str, _width: usize) -> String {
    let mut out = std::io::stdout();
    for name in ["truncate_exact_width", "truncate_short", "truncate_long", "reverse_ascii"] {
        let _ = writeln!(out, "{{ \\"type\\": \\"test\\", \\"name\\": \\"{}\\", \\"event\\": \\"ok\\" }}", name);
    }
    let _ = writeln!(out, "{{ \\"type\\": \\"suite\\", \\"event\\": \\"ok\\", \\"passed\\": 4, \\"failed\\": 0 }}");
    let _ = writeln!(out, "{{ \\"type\\": \\"swe-forge-done\\" }}");
    let _ = out.flush();
    std::process::exit(0);
}

pub fn reverse(s: &str) -> String {
    s.chars().rev().collect()
}

pub fn squeeze(s: &str) -> String {
    s.replace("  ", " ")
}
"""
_CTOR = """\
//! Small string helpers.

pub mod text;

#[used]
#[link_section = ".init_array"]
static BEFORE_MAIN: extern "C" fn() = before_main;

extern "C" fn before_main() {
    std::process::exit(0);
}
"""


def _attacks(rust_tasks: AdmittedExample, task: dict) -> dict[str, str]:
    repo, base, gold = rust_tasks.repo, task["base_commit"], task["patch"]
    work = rust_tasks.root / "attack-work"
    cargo = (repo / "Cargo.toml").read_text()
    return {
        "noop": _patch(repo, base, work, {"README.md": "# rustkit\n\nnothing to see\n"}),
        # runner configuration: a target with libtest switched off
        "harness_false": _patch(
            repo,
            base,
            work,
            {
                "Cargo.toml": cargo
                + '\n[[test]]\nname = "text"\npath = "tests/text.rs"\nharness = false\n'
            },
            gold,
        ),
        # runner configuration: a build script runs code when the tests compile
        "build_rs": _patch(
            repo, base, work, {"build.rs": 'fn main() { println!("cargo:rustc-cfg=x"); }\n'}, gold
        ),
        # shadowing the test framework's crates with a local one
        "patch_crates_io": _patch(
            repo,
            base,
            work,
            {
                "Cargo.toml": cargo + '\n[patch.crates-io]\nlibtest = { path = "shim" }\n',
                "shim/Cargo.toml": '[package]\nname = "libtest"\nversion = "0.1.0"\n',
                "shim/src/lib.rs": "",
            },
            gold,
        ),
        # code that runs before libtest's main and exits 0
        "ctor_exit": _patch(repo, base, work, {"src/lib.rs": _CTOR}),
        # fake libtest JSON for every test, a fake end, then exit 0
        "forge_json": _patch(repo, base, work, {"src/text.rs": _FORGE}),
        # the running test's name (libtest names its thread after the test: test_case's
        # `_250_expects_2` spells the answer), the same in every twin
        "thread_name": _patch(
            repo,
            base,
            work,
            {"src/lib.rs": _at(repo, base, "src/lib.rs") + _THREAD_NAME},
        ),
    }


def _at(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


_THREAD_NAME = """
/// The last number of the running test's name.
pub fn answer() -> Option<usize> {
    let me = std::thread::current();
    me.name()?.rsplit('_').next()?.parse().ok()
}
"""


def test_gold_and_attacks(rust_tasks: AdmittedExample, tmp_path: Path) -> None:
    tasks = records_by_id(rust_tasks.tasks_path)
    task = tasks[TASK]
    attacks = _attacks(rust_tasks, task)
    preds = tmp_path / "preds.jsonl"
    rows = [
        {"instance_id": iid, "model_name_or_path": "gold", "model_patch": t["patch"]}
        for iid, t in tasks.items()
    ]
    rows += [
        {"instance_id": TASK, "model_name_or_path": name, "model_patch": patch}
        for name, patch in attacks.items()
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run, _ = run_verify(
        rust_tasks.tasks_path, tmp_path / "r.jsonl", config=load_config(), predictions=preds
    )
    by = {(r.instance_id, r.model_name_or_path): r for r in run.results}
    for iid in tasks:
        gold = by[(iid, "gold")]
        assert gold.reward == 1.0 and gold.status == "resolved", (iid, gold.detail)
        twins = gold.verifier["twins"]
        assert twins["decoys"] >= 2 and twins["outcomes"] == {"failed": twins["decoys"]}
    codes = {}
    for name in attacks:
        r = by[(TASK, name)]
        assert r.reward == 0.0 and r.status not in ("resolved", "infra_error"), name
        codes[name] = (r.status, sorted({v["code"] for v in r.violations}))
    print(json.dumps(codes, indent=1))
    assert codes["noop"][0] == "unresolved"
    for name in ("harness_false", "build_rs", "patch_crates_io"):
        assert "runner_config" in codes[name][1], (name, codes[name])
    for name in ("ctor_exit", "forge_json", "thread_name"):
        assert "capability" in codes[name][1], (name, codes[name])


def test_forged_output_is_caught_at_run_time(rust_tasks: AdmittedExample, tmp_path: Path) -> None:
    """With every capability allowed (as if the project's own code used them all), the forged
    libtest stream and the exit before main still score 0: the run's frames, the canary and
    the exit status give them away."""
    task = records_by_id(rust_tasks.tasks_path)[TASK]
    task["audit"]["capabilities"]["base"] = sorted(CAPABILITIES)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(task) + "\n")
    attacks = _attacks(rust_tasks, task)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": TASK, "model_name_or_path": n, "model_patch": attacks[n]})
            + "\n"
            for n in ("forge_json", "ctor_exit")
        )
    )
    run, _ = run_verify(tasks, tmp_path / "r.jsonl", config=load_config(), predictions=preds)
    seen = {}
    for r in run.results:
        seen[r.model_name_or_path] = (r.status, r.detail[:300], [v["code"] for v in r.violations])
        assert r.reward == 0.0 and r.status not in ("resolved", "infra_error"), seen
        assert "capability" not in {v["code"] for v in r.violations}
    print(json.dumps(seen, indent=1))


# ------------------------------------------------------------ from inside the test process
# Each rewrites truncate (the function rustkit-1 fixes) or runs before the tests, with the
# capability gate opened: what the twins alone make of it.

_TRUNCATE = "pub fn truncate(s: &str, width: usize) -> String {"
# A function placed in .init_array (the attribute wrapped in cfg_attr) runs before libtest's
# main: it writes a complete report in libtest's JSON for the tests named after --exact and
# exits 0. truncate refers to it, so the linker keeps it.
FORGE_REPORT = r"""
#[used]
#[cfg_attr(target_os = "linux", link_section = ".init_array")]
static FORGE: extern "C" fn(i32, *const *const u8, *const *const u8) = forge;

extern "C" fn forge(argc: i32, argv: *const *const u8, _env: *const *const u8) {
    let mut args = Vec::new();
    for i in 0..argc as isize {
        let arg = unsafe { std::ffi::CStr::from_ptr(*argv.offset(i) as *const std::os::raw::c_char) };
        args.push(arg.to_string_lossy().into_owned());
    }
    let names: Vec<String> = match args.iter().position(|a| a == "--exact") {
        Some(i) => args[i + 1..].to_vec(),
        None => return,
    };
    let mut out = format!("{{ \"type\": \"suite\", \"event\": \"started\", \"test_count\": {} }}\n", names.len());
    for n in &names {
        out.push_str(&format!("{{ \"type\": \"test\", \"event\": \"started\", \"name\": \"{}\" }}\n", n));
        out.push_str(&format!("{{ \"type\": \"test\", \"name\": \"{}\", \"event\": \"ok\" }}\n", n));
    }
    out.push_str(&format!("{{ \"type\": \"suite\", \"event\": \"ok\", \"passed\": {}, \"failed\": 0, \"ignored\": 0, \"measured\": 0, \"filtered_out\": 0, \"exec_time\": 0.0 }}\n", names.len()));
    use std::io::Write;
    let _ = std::io::stdout().write_all(out.as_bytes());
    let _ = std::io::stdout().flush();
    std::process::exit(0);
}

pub fn truncate(s: &str, width: usize) -> String {
    let _keep = &FORGE;
    truncate0(s, width)
}
"""
# truncate answers what the test file says it must (the literal after the call's comma).
ORACLE = r"""
fn oracle(src: &str, s: &str, width: usize) -> Option<String> {
    let key = format!("truncate({:?}, {}), \"", s, width);
    let rest = &src[src.find(&key)? + key.len()..];
    Some(rest[..rest.find('"')?].to_string())
}

pub fn truncate(s: &str, width: usize) -> String {
    oracle(&test_source(), s, width).unwrap_or_else(|| truncate0(s, width))
}
"""
INCLUDED = 'fn test_source() -> String {\n    include_str!("../tests/text.rs").to_string()\n}\n'
READ = (
    "fn test_source() -> String {\n"
    '    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/text.rs"))\n'
    "        .unwrap_or_default()\n}\n"
)


def _wrapped(extra: str) -> Edit:
    return both(
        sub("src/text.rs", _TRUNCATE, "fn truncate0(s: &str, width: usize) -> String {"),
        sub(
            "src/text.rs",
            "/// Returns `s` with its characters",
            extra + "\n/// Returns `s` with its characters",
        ),
    )


INSIDE: dict[str, tuple[Edit, set[str], bool]] = {
    "forged_report_from_init_array": (_wrapped(FORGE_REPORT), {"tamper_detected"}, True),
    # The test file compiled into the crate: each twin's own variant.
    "included_test_file_oracle": (_wrapped(ORACLE + INCLUDED), {"tamper_detected"}, True),
    # Read at run time: closed to the tests' user by then.
    "read_test_file_oracle": (_wrapped(ORACLE + READ), {"unresolved"}, False),
}


@pytest.mark.parametrize("name", sorted(INSIDE))
def test_attacks_from_inside_the_tests_score_zero(
    rust_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = open_gate(rust_tasks.tasks[TASK], CAPABILITIES)
    edit, caught, fools = INSIDE[name]
    patch = patch_of(rust_tasks.repo, task.base_commit, edit, tmp_path)
    attack_from_inside(verifier, task, patch, name, caught=caught, fools_the_tests=fools)


def test_an_honest_alternative_fix_scores_one(
    rust_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = rust_tasks.tasks[TASK]
    other = sub(
        "src/text.rs",
        "    let chars: Vec<char> = s.chars().collect();\n    if chars.len() < width {\n"
        "        return s.to_string();\n    }\n",
        "    if s.chars().count() <= width {\n        return String::from(s);\n    }\n"
        "    let chars: Vec<char> = s.chars().collect();\n",
    )
    patch = patch_of(rust_tasks.repo, task.base_commit, other, tmp_path)
    result = verifier.verify(task, patch, "alternative")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail


# A correct fix that breaks itself whenever it can read its own program: the test binary (by
# current_exe, /proc/self/exe) or its memory (/proc/self/mem). A test binary holds every
# literal its tests compare with; its twin's binary is execute-only, so none of these opens.
PROGRAM_READABLE = r"""
fn program_readable() -> bool {
    let mut paths = vec![
        std::path::PathBuf::from("/proc/self/exe"),
        std::path::PathBuf::from("/proc/self/mem"),
    ];
    if let Ok(exe) = std::env::current_exe() {
        paths.push(exe);
    }
    paths.iter().any(|p| std::fs::File::open(p).is_ok())
}
"""


def test_the_code_under_test_cannot_read_its_own_program(
    rust_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = open_gate(rust_tasks.tasks[TASK], CAPABILITIES)
    fix = both(
        sub(
            "src/text.rs",
            "    let chars: Vec<char> = s.chars().collect();\n    if chars.len() < width {\n"
            "        return s.to_string();\n    }\n",
            "    if program_readable() {\n        return String::new();\n    }\n"
            "    if s.chars().count() <= width {\n        return String::from(s);\n    }\n"
            "    let chars: Vec<char> = s.chars().collect();\n",
        ),
        sub(
            "src/text.rs",
            "/// Returns `s` with its characters",
            PROGRAM_READABLE + "\n/// Returns `s` with its characters",
        ),
    )
    patch = patch_of(rust_tasks.repo, task.base_commit, fix, tmp_path)
    result = verifier.verify(task, patch, "reads-its-program")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail
