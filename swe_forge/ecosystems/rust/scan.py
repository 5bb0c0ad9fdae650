"""Which capabilities a Rust source file uses, read on its syntax tree (tree-sitter).

A candidate's Rust code is linked into the test binaries: it can end the process, print
libtest's JSON events itself, run before ``main`` from a constructor section, replace the
panic hook, read the held-out tests, or step outside safe Rust. The gate refuses a patch
that newly uses such a capability (:func:`swe_forge.ecosystems.scanning.source_capabilities`);
this module only says which ones a file uses, with the line and the code as evidence.

Rust hides much of its code from a syntax tree: the arguments of every macro, and the bodies
of ``macro_rules!``, are flat token trees. So the scan reads the file as one token stream
(the tree's leaves, literals whole), where a path is a path and an attribute is an attribute
wherever they are, inside a macro or not:

- ``use`` trees (braced lists, ``self``, ``as`` renames, globs) and ``extern crate .. as``
  bind names to real paths: ``use std::{process as p}`` makes ``p::exit`` std::process::exit;
  ``core::`` and ``alloc::`` are std's;
- attributes are read through ``cfg_attr(pred, ...)`` and ``unsafe(...)`` wrappers at any
  depth: ``#[cfg_attr(unix, link_section = ".init_array")]`` is a constructor section;
- strings are folded: literals of every kind decoded, ``concat!``/``stringify!``/``format!``
  of constants, ``"a".to_string() + "b"``, ``N as char``, constants by name.

Parts: ``scan_rules`` (the capabilities, the paths, macros and attributes that make them, and
how a path is matched), ``scan_walk`` (one file's token stream: ``use`` bindings, then the
rules applied), ``scan_fold`` (literal values and folded strings); this module is the entry
point.
"""

from __future__ import annotations

import re

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.rust.scan_rules import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.rust.scan_walk import _Scan
from swe_forge.ecosystems.scanning import UNPARSABLE, Findings, add_finding


def scan(source: bytes, path: str, *, fragment: bool = False) -> Findings:
    """Capability -> [(line, evidence)] of one Rust file (``fragment``: the hunks of a patch,
    read without their file's ``use`` lines: ``process::``, ``env::``... are std's)."""
    found: Findings = {}
    if len(source) > syntax.MAX_PARSE_BYTES:
        add_finding(found, UNPARSABLE, 1, f"{len(source)} bytes")
        return found
    tree = syntax.parse("rust", _older_syntax(source))
    root = tree.root_node
    if root.has_error and not fragment:
        line = next((syntax.line(n) for n in syntax.walk(root) if n.is_error or n.is_missing), 1)
        add_finding(found, UNPARSABLE, line, "syntax error")
    _Scan(root, found, fragment).run()
    return found


#: Rust 2015's ``try!``, which the grammar reads as the reserved word ``try``.
_TRY_MACRO = re.compile(rb"(?<![\w#])try!")


def _older_syntax(source: bytes) -> bytes:
    """``try!(..)`` read as a macro of another name, and ``~`` (a token macros may still
    match, the grammar knows none) as ``-``: same length, lines and columns kept."""
    if b"try!" in source:
        source = _TRY_MACRO.sub(b"tri!", source)
    return source.replace(b"~", b"-")
