"""Which capabilities a Go source file uses, read on its syntax tree (tree-sitter).

A candidate's Go code runs inside the test binary: it can end the process before the
verdict, write frames into the stream test2json reads, read the held-out test files, or reach
the test framework and the runtime. The gate refuses a patch that newly uses such a
capability (see :func:`swe_forge.ecosystems.scanning.source_capabilities`); this module only says
which ones a file uses, with the line and the code as evidence.

Names are resolved, not matched as text: ``import o "os"`` makes ``o.Exit`` os.Exit, a dot
import makes a bare ``Exit`` one, and a local variable that shadows a package is not it.
Strings are folded before they are judged: ``"--- PA" + "SS"``, ``string(rune(22))``,
``string([]byte{...})``, constants, ``fmt.Sprint``/``Sprintf`` and ``strings.Join`` of
constants. The walk is iterative and nothing of the file runs.

Parts: ``scan_rules`` (the capabilities and the tables that make them), ``scan_walk`` (one
file's walk: imports, scopes, the rules applied), ``scan_fold`` (constant values of literals
and of conversions and std functions); this module is the entry point.
"""

from __future__ import annotations

from typing import Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.go.scan_rules import ASSEMBLY as ASSEMBLY
from swe_forge.ecosystems.go.scan_rules import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.go.scan_walk import _Scan
from swe_forge.ecosystems.scanning import UNPARSABLE, Findings, add_finding

#: Files besides .go that the go tool builds into a package: assembly, objects, C (cgo).
_FOREIGN_SOURCES = (".s", ".S", ".sx", ".syso", ".c", ".cc", ".cpp", ".cxx", ".m", ".h", ".f")


def foreign_source(path: str) -> bool:
    """A file the go tool compiles or links into a package (outside testdata/) that no
    scanner reads: the ``assembly`` capability by its mere presence."""
    return path.endswith(_FOREIGN_SOURCES) and "testdata" not in path.split("/")


def scan(source: bytes, path: str, *, fragment: bool = False) -> Findings:
    """Capability -> [(line, evidence)] of one Go file (``fragment``: the hunks of a patch,
    read without their file's imports: packages are known by their usual names)."""
    found: Findings = {}
    if len(source) > syntax.MAX_PARSE_BYTES:
        add_finding(found, UNPARSABLE, 1, f"{len(source)} bytes")
        return found
    tree = syntax.parse("go", source)
    root = tree.root_node
    if root.has_error and not fragment:
        add_finding(found, UNPARSABLE, _first_error_line(root), "syntax error")
    _Scan(root, found, fragment).run()
    return found


def _first_error_line(root: Any) -> int:
    for node in syntax.walk(root):
        if node.is_error or node.is_missing:
            return syntax.line(node)
    return 1
