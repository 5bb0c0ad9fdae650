"""The Rust scan's rules: the capabilities it reports and what makes each one, and how a
path is matched against them.

Tables only, besides two small functions of paths: path prefixes (after ``use`` aliases,
``core``/``alloc`` read as std), last segments, macros and attributes by name, std's macros a
file may shadow, the roots a fragment's paths start from, environment names that point into
the source tree, text shaped like libtest's events. Kept apart from the token-stream walk
that applies them (:mod:`swe_forge.ecosystems.rust.scan_walk`) so that the rules read (and
change) on their own.
"""

from __future__ import annotations

import re

from swe_forge.ecosystems.scanning import UNPARSABLE

EXIT = "process::exit/abort"
COMMAND = "process::Command"
UNSAFE = "unsafe"
LIBC = "libc"
STDOUT = "stdout/stderr"
CTOR = "ctor"
EXTERN = "extern"
ARGS = "env::args"
PANIC = "panic hooks"
ALLOCATOR = "global_allocator"
RAW_FDS = "raw fds"
INCLUDE = "include!"
ASM = "asm"
PROC_MACRO = "proc_macro"
RUNNER_TEXT = "test-runner text"
ENV_VAR = "env::var"
SOURCE_PATHS = "source paths"
FILE_READ = "file_read"
TEST_HARNESS = "test harness"
TEST_TREE = "reads_test_tree"
DEVICE = "device paths"
COMPARISON = "comparison impls"
LIFETIME_HOLE = "lifetime extension"
MODULE_PATH = "module path"
SHADOWED_MACRO = "std macro shadowed"
THREAD_NAME = "thread::current"

#: Every capability this scanner reports.
CAPABILITIES = (
    COMPARISON,
    LIFETIME_HOLE,
    MODULE_PATH,
    SHADOWED_MACRO,
    ASM,
    CTOR,
    DEVICE,
    ARGS,
    ENV_VAR,
    EXTERN,
    FILE_READ,
    ALLOCATOR,
    INCLUDE,
    LIBC,
    PANIC,
    COMMAND,
    EXIT,
    PROC_MACRO,
    RAW_FDS,
    TEST_TREE,
    SOURCE_PATHS,
    STDOUT,
    TEST_HARNESS,
    THREAD_NAME,
    RUNNER_TEXT,
    UNPARSABLE,
    UNSAFE,
)

#: Path prefixes (after aliases, core/alloc read as std) -> capability.
_PATHS: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    (tuple(prefix.split("::")), cap)
    for cap, prefixes in {
        EXIT: (
            "std::process::exit",
            "std::process::abort",
            "std::intrinsics::abort",
            "libc::exit",
            "libc::_exit",
            "libc::abort",
            "nix::unistd::_exit",
        ),
        COMMAND: (
            "std::process::Command",
            "std::process::Child",
            "std::os::unix::process::CommandExt",
            "tokio::process",
            "async_process",
            "async_std::process",
            "duct",
            "nix::unistd::fork",
            "nix::unistd::execv",
            "nix::unistd::execve",
            "nix::unistd::execvp",
        ),
        LIBC: ("libc", "nix", "rustix", "winapi", "windows_sys"),
        STDOUT: (
            "std::io::stdout",
            "std::io::stderr",
            "std::io::Stdout",
            "std::io::Stderr",
            "std::io::StdoutLock",
            "std::io::StderrLock",
            "std::io::set_output_capture",
            "std::io::_print",
            "std::io::_eprint",
        ),
        ARGS: ("std::env::args", "std::env::args_os", "std::env::Args", "std::env::ArgsOs"),
        ENV_VAR: (
            "std::env::var",
            "std::env::var_os",
            "std::env::vars",
            "std::env::vars_os",
            "std::env::set_var",
            "std::env::remove_var",
        ),
        SOURCE_PATHS: ("std::env::current_exe",),
        # libtest runs each test in a thread named after the test, and a test's name may
        # spell its expected value (test_case's `_250_expects_2`), the same in every twin:
        # the running thread's handle is the test's identity.
        THREAD_NAME: ("std::thread::current", "std::thread::Thread::name"),
        PANIC: (
            "std::panic::set_hook",
            "std::panic::take_hook",
            "std::panic::update_hook",
            "std::panic::catch_unwind",
            "std::panic::resume_unwind",
            "std::panic::always_abort",
        ),
        RAW_FDS: ("std::os::fd", "std::os::unix::io", "std::os::windows::io"),
        FILE_READ: (
            "std::fs::read",
            "std::fs::read_to_string",
            "std::fs::read_dir",
            "std::fs::read_link",
            "std::fs::File",
            "std::fs::OpenOptions",
            "std::fs::canonicalize",
            "tokio::fs",
            "async_std::fs",
            "walkdir",
            "glob::glob",
        ),
        PROC_MACRO: ("proc_macro",),
        # Under another name (``use std::cmp::PartialEq as E``), an impl would not show it.
        COMPARISON: tuple(
            f"{root}::cmp::{name}"
            for root in ("std", "core")
            for name in ("PartialEq", "PartialOrd", "Ord", "Eq")
        ),
    }.items()
    for prefix in prefixes
)
_PATHS_BY_ROOT: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _prefix, _cap in _PATHS:
    _PATHS_BY_ROOT.setdefault(_prefix[0], []).append((_prefix, _cap))
#: Tokens of an impl header read before it counts as unreadable.
_HEADER_LIMIT = 2048
#: Token kinds of a macro's metavariables (``$tr``).
_METAVARIABLES = frozenset({"metavariable", "$"})
#: Traits whose hand-written ``impl`` is what a comparison in a test calls.
_COMPARISON_TRAITS = frozenset({"PartialEq", "PartialOrd", "Ord", "Eq"})
#: Names that are a capability at the end of any path (traits and methods of raw handles).
_LAST_SEGMENTS = {
    **dict.fromkeys(
        ("from_raw_fd", "FromRawFd", "OwnedFd", "RawFd", "BorrowedFd", "FromRawHandle"), RAW_FDS
    ),
}
#: Macros by name (std's, or unqualified ones no ``macro_rules!`` of the file defines).
_MACROS = {
    **dict.fromkeys(("print", "println", "eprint", "eprintln", "dbg"), STDOUT),
    **dict.fromkeys(("include", "include_str", "include_bytes"), INCLUDE),
    **dict.fromkeys(("asm", "global_asm", "naked_asm", "llvm_asm"), ASM),
    "file": SOURCE_PATHS,
}
#: Std macros that assert, no crate names a module or a function after: an import under one
#: of these names is an assertion's replacement (``use crate::env`` is most likely a module).
_ASSERTION_MACROS = frozenset(
    [
        "assert",
        "assert_eq",
        "assert_ne",
        "assert_matches",
        "debug_assert",
        "debug_assert_eq",
        "debug_assert_ne",
        "matches",
        "unreachable",
        "todo",
        "unimplemented",
    ]
)
#: The standard library's macros that assert or make values (printing ones aside): a
#: ``macro_rules!`` of one of these names, or an import under one, takes the place of std's
#: where its textual scope or the import reaches, the tests' ``assert_eq!`` in a
#: ``#[cfg(test)] mod tests`` declared after it among them.
_STD_MACROS = _ASSERTION_MACROS | frozenset(
    [
        "panic",
        "vec",
        "format",
        "format_args",
        "write",
        "writeln",
        "concat",
        "stringify",
        "include",
        "include_str",
        "include_bytes",
        "env",
        "option_env",
        "line",
        "column",
        "file",
        "module_path",
        "cfg",
        "compile_error",
        "thread_local",
        "try",
    ]
)
#: Attribute names -> capability (read through cfg_attr and unsafe(...)).
_ATTRIBUTES = {
    **dict.fromkeys(("link_section", "used", "ctor", "dtor"), CTOR),
    **dict.fromkeys(("no_mangle", "export_name", "link", "link_name", "link_ordinal"), EXTERN),
    "global_allocator": ALLOCATOR,
    "naked": ASM,
    **dict.fromkeys(("proc_macro", "proc_macro_derive", "proc_macro_attribute"), PROC_MACRO),
    **dict.fromkeys(
        ("test_runner", "reexport_test_harness_main", "panic_handler", "lang"),
        TEST_HARNESS,
    ),
}
#: The first segment of a path in a fragment whose ``use`` lines are out of view.
_FRAGMENT_ROOTS = {
    "process": ("std", "process"),
    "env": ("std", "env"),
    "io": ("std", "io"),
    "fs": ("std", "fs"),
    "panic": ("std", "panic"),
}
#: Environment names whose value is a path into the source or build tree.
_PATH_VARIABLE = re.compile(r"DIR$|PATH$|^CARGO_BIN_EXE|^CARGO_MANIFEST|^OUT_DIR$")
#: Text shaped like libtest's JSON events and terse lines, or this harness's frames.
_RUNNER_TEXT = re.compile(
    r"\"type\"\s*:\s*\"(?:test|suite|bench)\"|\"event\"\s*:\s*\"(?:ok|failed|ignored|started"
    r"|timeout)\"|\"(?:exec_time|test_count|filtered_out)\"\s*:|swe-forge-(?:target|done)"
    r"|test result: (?:ok|FAILED)|(?:^|\n)test \S+ \.\.\. (?:ok|FAILED|ignored)"
)

#: A path segment built by a macro (``$name``, paste's ``[<...>]``).
_ANY = "$"


def _matches(path: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    """Does ``path`` start with ``prefix`` (a segment a macro builds matches any)?"""
    if len(path) < len(prefix) and _ANY not in path:
        return False
    for seg, want in zip(path, prefix, strict=False):
        if seg == _ANY:
            return True
        if seg != want:
            return False
    return len(path) >= len(prefix)


def _normal(path: tuple[str, ...]) -> tuple[str, ...]:
    """``core::`` and ``alloc::`` are std's; a leading ``::`` is gone already."""
    if path and path[0] in ("core", "alloc"):
        return ("std", *path[1:])
    return path
