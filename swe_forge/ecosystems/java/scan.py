"""Which capabilities a Java source file uses, read on its syntax tree (tree-sitter).

A candidate's main code runs in the JVM that Surefire runs the tests in: it can halt the JVM
before the report is written, print what Maven's console reader takes for a verdict, reach
JUnit and Surefire by reflection, read the held-out test classes, or run code when a class
loads. The gate refuses a patch that newly uses such a capability
(:func:`swe_forge.ecosystems.scanning.source_capabilities`); this module only says which ones a
file uses, with the line and the code as evidence.

The file is read as javac reads it: Unicode escapes are translated first (``\\u0053ystem`` is
``System``, and ``\\u000a`` ends a comment). Names are resolved, not matched as text:

- imports (single, on demand, static), ``java.lang``, classes of the file and fully
  qualified names give each class its real name;
- expressions get the types they can be (``Runtime.getRuntime()`` is a Runtime, so is a
  variable declared or cast as one), so ``rt.halt(0)``, ``Runtime.getRuntime()::halt`` and
  ``Runtime::halt`` are all the JVM halting;
- strings are folded: ``"a" + "b"``, chars and ``(char) 47``, ``String.valueOf``,
  ``Character.toString``, ``new String(new char[]{...})``, ``String.join``, ``concat``,
  ``StringBuilder.append`` chains, ``String.format``, constants by name, and path pieces
  (``Paths.get("src", "test")`` is ``src/test``).

This module holds the entry points (:func:`scan`, :func:`unicode_escapes`,
:data:`CAPABILITIES`); the walk is in parts: ``scan_tables`` (capability names and what counts
as each), ``scan_names`` (declarations and resolution), ``scan_strings`` (string folding),
``scan_rules`` (each node judged).
"""

from __future__ import annotations

import re

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.java.scan_rules import _Scan
from swe_forge.ecosystems.java.scan_tables import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.java.scan_tables import PACKAGE_PLACE
from swe_forge.ecosystems.scanning import UNPARSABLE, Findings, add_finding


def unicode_escapes(source: bytes) -> bytes:
    """Java source with its Unicode escapes translated, as javac does before anything else:
    ``\\\\u+XXXX`` whose backslash is not itself escaped (preceded by an even number of
    backslashes)."""
    if b"\\u" not in source:
        return source
    text = source.decode("utf-8", "surrogateescape")
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        run = i
        while run < n and text[run] == "\\":
            run += 1
        count = run - i
        out.append("\\" * (count - 1))
        j = run
        if count % 2 == 1 and j < n and text[j] == "u":
            while j < n and text[j] == "u":
                j += 1
            digits = text[j : j + 4]
            if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                code = int(digits, 16)
                # NUL would end the parser's input: written as the escape it stands for.
                out.append(chr(code) if code else "\\0")
                i = j + 4
                continue
        out.append("\\")
        i = run
    # A character beyond the BMP is escaped as a surrogate pair (``\\uD83D\\uDE00``, an
    # emoji): the pair is one character; a lone surrogate, which UTF-8 cannot hold, is
    # left as the escape it was (an undecodable byte of the file goes back as that byte).
    text = "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return "".join(
        f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" and not "\udc80" <= c <= "\udcff" else c
        for c in text
    ).encode("utf-8", "surrogateescape")


def scan(source: bytes, path: str, *, fragment: bool = False) -> Findings:
    """Capability -> [(line, evidence)] of one Java file (``fragment``: the hunks of a patch,
    read without their file's imports: well-known classes are known by their simple names)."""
    found: Findings = {}
    if len(source) > syntax.MAX_PARSE_BYTES:
        add_finding(found, UNPARSABLE, 1, f"{len(source)} bytes")
        return found
    tree = syntax.parse("java", unicode_escapes(source))
    root = tree.root_node
    if root.has_error and not fragment:
        line = next((syntax.line(n) for n in syntax.walk(root) if n.is_error or n.is_missing), 1)
        add_finding(found, UNPARSABLE, line, "syntax error")
    run = _Scan(root, found, fragment)
    run.run()
    if not fragment and run.package and path.endswith(".java"):
        # javac writes the class where its declared package says, whatever the path: a
        # class of another package (org.junit's Assert) takes that package's place.
        folder = re.sub(r"\s+", "", run.package).replace(".", "/")
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        if not (directory == folder or directory.endswith("/" + folder)):
            add_finding(found, PACKAGE_PLACE, 1, f"package {run.package} in {directory}/")
    return found
