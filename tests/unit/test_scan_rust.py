"""The Rust capability scanner: paths resolved through ``use`` trees and aliases, attributes
read through ``cfg_attr``/``unsafe(..)``, macros' token trees read, strings folded, honest code
left alone (swe_forge/ecosystems/rust/scan.py), and the patch-level comparison."""

from __future__ import annotations

import pytest

from swe_forge.ecosystems.rust.adapter import CAPABILITIES, RustEcosystem
from swe_forge.ecosystems.rust.scan import scan

ECO = RustEcosystem()


def caps(source: str, *, fragment: bool = False) -> set[str]:
    return set(scan(source.encode(), "src/lib.rs", fragment=fragment))


# (capability, source): plain uses, renamed or braced imports, folded strings, wrappers.
POSITIVES = [
    # A hand-written comparison: assert_eq! calls it with the expected value (a red team's
    # 5/5 forgery); under another name too. derive(PartialEq) is not one (NEGATIVES).
    ("comparison impls", "impl PartialEq<&str> for S { fn eq(&self, o: &&str) -> bool { true } }"),
    (
        "comparison impls",
        "impl<'a> core::cmp::PartialEq<str> for S<'a> { fn eq(&self, _: &str) -> bool { true } }",
    ),
    (
        "comparison impls",
        "use std::cmp::PartialEq as E;\nimpl E<String> for S { fn eq(&self, _: &String) -> bool { true } }",
    ),
    (
        "comparison impls",
        "macro_rules! m { () => { impl PartialOrd for S { fn partial_cmp(&self, _: &S) -> Option<std::cmp::Ordering> { None } } } }",
    ),
    # The trait a macro's metavariable names, and a header longer than the old window (a
    # second red team's forgeries, 12 of 12).
    (
        "comparison impls",
        "macro_rules! agree { ($tr:ident :: $m:ident for $t:ty) => { impl $tr<$t> for S "
        "{ fn $m(&self, _: &$t) -> bool { true } } } }\nagree!(PartialEq::eq for &str);",
    ),
    (
        "comparison impls",
        "impl<" + ", ".join(f"'l{i}" for i in range(40)) + "> PartialEq<&'l0 str> for S "
        "{ fn eq(&self, _: &&str) -> bool { true } }",
    ),
    ("process::exit/abort", "fn f() { std::process::exit(0) }"),
    ("process::exit/abort", "fn f() { ::std::process::abort() }"),
    ("process::exit/abort", "use std::{env as e, process as p};\nfn f() { p::exit(0) }"),
    ("process::exit/abort", "use std::process::exit as quit;\nfn f() { quit(3) }"),
    ("process::exit/abort", "use std::process::*;\nfn f() { exit(3) }"),
    ("process::exit/abort", "use core::intrinsics;\nfn f() { intrinsics::abort() }"),
    ("process::exit/abort", 'fn f() { println!("{}", std::process::exit(0)) }'),
    ("process::exit/abort", "fn f() { let q = std::process::exit; q(1) }"),
    ("process::exit/abort", "fn f() { std::process::r#exit(0) }"),
    # a segment a macro builds may be any member of the module
    (
        "process::exit/abort",
        "macro_rules! p { ($a:ident) => { std::process::$a(0) } }\nfn f() { p!(exit) }",
    ),
    ("process::exit/abort", "paste::paste! { fn f() { std::process::[<ex it>](0) } }"),
    ("process::Command", 'use std::process::Command as C;\nfn f() { C::new("sh"); }'),
    ("process::Command", "use std::process::{self, Stdio};\nfn f() { process::Command::new(x); }"),
    ("unsafe", "fn f() { unsafe { g() } }"),
    ("unsafe", "pub unsafe fn f() {}"),
    ("unsafe", "macro_rules! m { () => { unsafe { g() } } }"),
    ("libc", "fn f() { libc::write(1, p, n); }"),
    ("libc", "extern crate libc as c;\nfn f() { c::getpid(); }"),
    ("libc", "use nix::unistd;"),
    ("stdout/stderr", 'fn f() { println!("x") }'),
    ("stdout/stderr", 'fn f() { std::eprint!("x") }'),
    ("stdout/stderr", 'use std::println as say;\nfn f() { say!("x") }'),
    ("stdout/stderr", "use std::io::{self, Write};\nfn f() { io::stdout().flush(); }"),
    ("stdout/stderr", "use std::io::{stderr as err};\nfn f() { err(); }"),
    ("stdout/stderr", "fn f() { dbg!(1); }"),
    ("ctor", '#[link_section = ".init_array"]\nstatic X: fn() = f;'),
    ("ctor", '#[cfg_attr(target_os = "linux", link_section = ".init_array")]\nstatic X: u8 = 0;'),
    ("ctor", "#[cfg_attr(all(unix, not(test)), cfg_attr(unix, used))]\nstatic X: u8 = 0;"),
    ("ctor", '#[unsafe(link_section = "__DATA,__mod_init_func")]\nstatic X: u8 = 0;'),
    ("ctor", "#[used]\nstatic X: u8 = 0;"),
    ("ctor", "#[ctor::ctor]\nfn setup() {}"),
    ("ctor", "use ctor::ctor;\n#[ctor]\nfn setup() {}"),
    ("ctor", "use ctor::ctor as init;\n#[init]\nfn setup() {}"),
    ("ctor", 'macro_rules! m { () => { #[link_section = ".ctors"] static Y: u8 = 0; } }'),
    ("extern", 'extern "C" { fn h(); }'),
    ("extern", 'pub extern "C" fn f() {}'),
    ("extern", "#[no_mangle]\npub fn f() {}"),
    ("extern", '#[unsafe(export_name = "main")]\npub fn f() {}'),
    ("extern", "#[cfg_attr(unix, no_mangle)]\npub fn f() {}"),
    ("env::args", "fn f() { let a: Vec<_> = std::env::args().collect(); }"),
    ("env::args", "use std::env::args_os as a;\nfn f() { a(); }"),
    ("env::var", 'use std::env;\nfn f() { env::var("HOME"); }'),
    # The running test's name (libtest names its thread after it).
    ("thread::current", "fn f() { let n = std::thread::current().name().map(String::from); }"),
    ("thread::current", "use std::thread;\nfn f() { let t = thread::current(); t.name(); }"),
    ("thread::current", "use std::thread::{current as c};\nfn f() { c(); }"),
    ("thread::current", "use std::thread::Thread;\nfn f(t: &Thread) { Thread::name(t); }"),
    ("panic hooks", "fn f() { std::panic::set_hook(Box::new(|_| {})); }"),
    ("panic hooks", "use std::panic::{catch_unwind as c};\nfn f() { c(|| 1); }"),
    ("global_allocator", "#[global_allocator]\nstatic A: MyAlloc = MyAlloc;"),
    ("raw fds", "use std::os::fd::FromRawFd;"),
    ("raw fds", "fn f() { File::from_raw_fd(1); }"),
    ("include!", 'const T: &str = include_str!("../tests/a.rs");'),
    ("include!", 'fn f() { core::include_bytes!("x") }'),
    ("asm", 'fn f() { unsafe { std::arch::asm!("nop") } }'),
    ("asm", 'std::arch::global_asm!(".section .init_array");'),
    ("proc_macro", "extern crate proc_macro;\nuse proc_macro::TokenStream;"),
    ("proc_macro", "#[proc_macro_derive(X)]\npub fn x(i: T) -> T { i }"),
    ("test harness", "#![test_runner(crate::run)]"),
    ("source paths", 'const D: &str = env!("CARGO_MANIFEST_DIR");'),
    ("source paths", 'const D: Option<&str> = option_env!(concat!("OUT", "_DIR"));'),
    ("source paths", "fn f() -> &'static str { file!() }"),
    ("file_read", 'use std::fs;\nfn f() { fs::read_to_string("x"); }'),
    ("file_read", "use std::fs::{File as F};\nfn f() { F::open(p); }"),
    # folded strings
    ("test-runner text", 'const S: &str = "{\\"type\\": \\"test\\", \\"event\\": \\"ok\\"}";'),
    ("test-runner text", 'const S: &str = concat!("{\\"ty", "pe\\": \\"suite\\"}");'),
    ("test-runner text", 'fn f() -> String { format!("test {} ... {}", "x", "ok") }'),
    ("test-runner text", 'fn f() { println!("{}{}", "test result: ", "ok."); }'),
    ("test-runner text", 'const S: &str = r#"{"event": "failed"}"#;'),
    ("device paths", 'const P: &str = concat!("/dev/", "std", "out");'),
    ("device paths", 'fn f() -> String { "/pr".to_string() + "oc/self/fd/1" }'),
    ("device paths", 'fn f() -> String { [47 as char, \'d\'].len(); ["/dev", "tty"].join("/") }'),
    ("device paths", 'const A: &str = "/proc";\nfn f() { let _ = concat!(A, "/self"); }'),
    ("device paths", "fn f() { String::from_utf8(vec![47, 100, 101, 118, 47, 116, 116, 121]); }"),
    ("device paths", "fn f() { std::str::from_utf8(&[47, 112, 114, 111, 99]); }"),
    ("reads_test_tree", 'fn f() { let p = concat!(env!("X"), "/tests/", "data.txt"); }'),
    ("reads_test_tree", 'fn f() { format!("{}/tests/{}", root, name); }'),
    # rustc's implied-bounds hole (#25860), the cve-rs shapes: a sixth red team's read of
    # its test binary's literals in safe code.
    ("lifetime extension", "fn w<'a, 'b, T>(_: &'a &'b (), v: &'b T) -> &'a T { v }"),
    ("lifetime extension", "fn f<'b, T>() { let g: for<'x> fn(_, &'x T) -> &'b T = w; }"),
    ("lifetime extension", "type F<'b, T> = fn(&(), &T) -> &'b T;"),
    # rustc compiles a module's file whatever its name: a .txt the .rs scan never read (an
    # eighth red team's 1.0 on a Rust task).
    ("module path", '#[path = "fit.txt"]\npub mod fit;'),
    ("module path", '#[cfg_attr(all(), path = "fit.md")]\nmod fit;'),
    ("module path", '#[path = concat!("fit", ".rs")]\nmod fit;'),
    # A std assertion's name given to something else: a `#[cfg(test)] mod tests` declared
    # after it (or importing it) runs the candidate's `assert_eq!`.
    ("std macro shadowed", "macro_rules! assert_eq { ($a:expr, $b:expr) => {}; }"),
    ("std macro shadowed", "#[macro_export]\nmacro_rules! r#format { ($($t:tt)*) => {}; }"),
    ("std macro shadowed", "pub use crate::check::lenient as assert_ne;"),
    ("unparsable", "fn f() { let x = ; }"),
]


@pytest.mark.parametrize(("cap", "source"), POSITIVES)
def test_capability_is_found(cap: str, source: str) -> None:
    assert cap in CAPABILITIES
    assert cap in caps(source), source


def test_every_capability_has_a_case() -> None:
    assert {cap for cap, _ in POSITIVES} == set(CAPABILITIES)
    # and the scanner reports no name the gate's allowance could not list
    assert set().union(*(caps(source) for _, source in POSITIVES)) <= set(CAPABILITIES)


def test_findings_carry_line_and_evidence() -> None:
    found = scan(b"use std::process as p;\n\nfn f() {\n    p::exit(2)\n}\n", "src/a.rs")
    assert found["process::exit/abort"] == [(4, "p::exit")]


NEGATIVES = [
    "#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]\npub struct S(String);",
    '#[cfg(unix)]\n#[path = "imp/unix.rs"]\nmod imp;',
    "impl S { fn eq_len(&self, o: &S) -> bool { self.0.len() == o.0.len() } }",
    'pub fn squeeze(s: &str) -> String { s.replace("  ", " ") }',
    'fn f(n: u8) -> String { format!("{} items", n) }',
    'fn f(w: &mut impl std::fmt::Write) { write!(w, "x").unwrap(); }',
    "use std::process::ExitCode;\nfn f() -> ExitCode { ExitCode::SUCCESS }",
    "use std::env::consts::OS;",
    'const V: &str = env!("CARGO_PKG_VERSION");',
    "use std::os::unix::fs::PermissionsExt;",
    "use std::fs::Permissions;",
    "use std::io::prelude::*;\nfn f(out: &mut dyn Write) { out.flush(); }",
    '#[derive(Debug, Clone)]\n#[cfg_attr(feature = "serde", derive(Serialize))]\nstruct S;',
    '#[allow(unused)]\n#[doc = "used"]\nfn f() {}',
    "extern crate alloc;\nuse alloc::vec::Vec;",
    # locals named like the capabilities
    "fn f(stdout: &mut W, exit: u8) { stdout.write(exit); let args = 1; }",
    "fn f(p: &Process) { p.exit(); p.abort(); }",
    "mod process { pub fn exit() {} }\nfn f() { crate::process::exit(); }",
    'macro_rules! println { ($($t:tt)*) => {} }\nfn f() { println!("x") }',
    'fn f() -> String { let s = "tests"; s.to_string() }',
    'fn f() { let _ = "--- PASS"; let _ = "{\\"type\\": 1}"; }',
    "fn f<'a>(x: &'a str, y: &&str) -> &'a str { x }",
    'fn f(cb: fn(&str) -> bool, g: fn(&str) -> &str) -> bool { cb(g("x")) }',
    "macro_rules! m { ((~$($fuel:tt)*) $x:tt) => { $x }; }",
]


@pytest.mark.parametrize("source", NEGATIVES)
def test_honest_code_is_not_flagged(source: str) -> None:
    assert caps(source) == set(), source


def test_fragments_read_std_modules_by_their_names() -> None:
    hunk = "        process::exit(1);\n        env::args();\n    }\n"
    assert caps(hunk, fragment=True) == {"process::exit/abort", "env::args"}
    assert caps("fn f() { process::exit(1); }") == set()  # a whole file's use lines decide


# ------------------------------------------------------------------------------ patch level


def diff(path: str, old: list[str], new: list[str]) -> str:
    head = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    if not old:
        head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    body = "".join(f"-{ln}\n" for ln in old) + "".join(f"+{ln}\n" for ln in new)
    return head + f"@@ -{1 if old else 0},{len(old)} +1,{len(new)} @@\n" + body


BASE = ["use std::process;", "pub fn f() { process::exit(1) }"]


def test_patch_capabilities_are_what_the_files_did_not_use_before() -> None:
    files = {"src/lib.rs": "\n".join(BASE).encode() + b"\n"}
    same = diff("src/lib.rs", BASE, [BASE[0], "pub fn f() { process::exit(2) }"])
    assert ECO.capabilities(same, files.get) == []
    # Without the base file, the added line is judged alone (std's modules by name).
    assert ECO.capabilities(same) == ["process::exit/abort"]
    more = diff("src/lib.rs", BASE, [*BASE, "pub fn g() { unsafe { h() } }"])
    assert ECO.capabilities(more, files.get) == ["unsafe"]


def test_patch_capabilities_of_new_files_tests_and_broken_syntax() -> None:
    new = diff("src/new.rs", [], ["#[cfg_attr(unix, used)]", "static X: u8 = 0;"])
    assert ECO.capabilities(new, {}.get) == ["ctor"]
    # Every .rs file is read, a test's too: a source file's mod can compile any of them.
    exits = diff("tests/a.rs", [], ["fn f() { std::process::exit(0) }"])
    assert ECO.capabilities(exits) == ["process::exit/abort"]
    files = {"src/lib.rs": "\n".join(BASE).encode() + b"\n"}
    broken = diff("src/lib.rs", BASE, [*BASE, "fn g() { let x = ; }"])
    assert ECO.capabilities(broken, files.get) == ["unparsable"]


def test_base_capabilities_skip_tests_and_vendor() -> None:
    base = {
        "src/lib.rs": b"pub fn f() { unsafe { g() } }\n",
        "tests/a.rs": b"fn t() { println!() }\n",
        "vendor/x/src/lib.rs": b"fn f() { std::process::exit(0) }\n",
        "src/broken.rs": b"fn f( {\n",
    }
    assert ECO.base_capabilities(base, base.get) == ["unsafe"]


@pytest.mark.parametrize(
    "source",
    [
        b"fn f() { m!(" + b"(" * 5000 + b")" * 5000 + b") }",
        b"fn f() { let x = " + b" + ".join([b'"a"'] * 5000) + b"; }",
        b"#[cfg_attr(a, " * 300 + b"used" + b")" * 300 + b"]\nstatic X: u8 = 0;",
        b"use a::" + b"{b::" * 2000 + b"c" + b"}" * 2000 + b";",
        b"fn f() { concat!(" + b"concat!(" * 2000 + b'"a"' + b")" * 2000 + b"); }",
        bytes(range(256)) * 40,
    ],
)
def test_hostile_shapes_do_not_crash(source: bytes) -> None:
    assert isinstance(scan(source, "src/a.rs"), dict)


def test_a_moved_file_is_compared_with_the_file_it_was() -> None:
    old = ["fn f() { let p = r#try!(g()); unsafe { h() } }", "fn g( {"]
    files = {"src/imp/unix.rs": "\n".join(old).encode() + b"\n"}
    moved = (
        diff("src/imp/unix.rs", old, [])
        .replace("--- a/src/imp/unix.rs", "deleted file mode 100644\n--- a/src/imp/unix.rs")
        .replace("+++ b/src/imp/unix.rs", "+++ /dev/null")
        .replace(" +1,0 @@", " +0,0 @@")
    )
    moved += diff("src/file/unix.rs", [], old)
    # The code did not parse and used unsafe before it moved: nothing new.
    assert ECO.capabilities(moved, files.get) == []
    assert ECO.capabilities(moved) == ["unparsable", "unsafe"]  # without the base: all new
    # try! (Rust 2015) parses.
    assert caps("fn f() -> io::Result<()> { let p = try!(g()); Ok(p) }") == set()


def test_a_comparison_trait_renamed_from_any_re_export_is_a_comparison_impl() -> None:
    # A fourteenth red team: the prelude's re-exports under another name.
    for path in ("std::prelude::rust_2021::PartialEq", "core::prelude::v1::PartialEq"):
        src = f"use {path} as Agrees;\nstruct C;\nimpl Agrees<&str> for C {{ fn eq(&self, _: &&str) -> bool {{ true }} }}\n"
        assert "comparison impls" in caps(src), path
    assert "comparison impls" in caps("use std::cmp::{Ord as O, Eq};\n")
    # The trait under its own name, imported, is no impl by itself.
    assert "comparison impls" not in caps("use std::prelude::rust_2021::PartialEq;\nfn f() {}\n")
