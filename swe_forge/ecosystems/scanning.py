"""What the adapters' capability scanners share: the findings' shape, the scan of a patch's
source files against the same files before it (whole files, or the hunks where a file cannot
be rebuilt), the union over a base tree, and the rule a candidate's capabilities are judged by.

A capability is something code can do that reaches the test runner or the process (exit the
process, read a file, write a runner's channel...); each language's ``scan.py`` reads its
own on the syntax tree, and these functions compare what a patch newly uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from swe_forge.diffs import (
    FilePatch,
    PatchApplyError,
    apply_file_patch,
)

if TYPE_CHECKING:
    pass

from swe_forge.ecosystems.base import ADDED, REMOVED, Reader, parse_patch

#: Capability name -> [(line, short evidence)] of one source file: what a scanner
#: (``<language>/scan.py``) reads on its syntax tree.
Findings = dict[str, list[tuple[int, str]]]
#: ``scan(source, path, fragment=False)`` of a language (``fragment``: the text is the hunks of
#: a patch, not a whole file: imports may be missing and syntax errors are expected).
Scanner = Callable[..., Findings]

#: The capability of a source file the parser cannot read whole (a syntax error, or too large):
#: code the scanners do not see must not run unseen.
UNPARSABLE = "unparsable"
#: Bytes of one base-tree file the capability scan reads at most (generated tables beyond).
MAX_SCAN_BYTES = 1 << 20

#: Paths the runner's own channels and the process's internals are reached by.
_DEVICE_PATH = re.compile(
    r"(?<![\w.])/(?:dev/(?:stdout|stderr|stdin|tty|fd(?:/|$)|pts/|console)|proc(?:/|$))"
)
#: Paths into the test tree: Go's test files and testdata, tests/, src/test (Maven),
#: __tests__ and *.test.* / *.spec.* (JS).
_TEST_TREE_PATH = re.compile(
    r"_test\.go\b|(?:^|[/\\])(?:tests?|spec|__tests__|testdata)[/\\]|^(?:__tests__|testdata)$"
    r"|\bsrc[/\\]test\b|[\w*]\.(?:test|spec)\.[cm]?[jt]sx?\b|\w+Tests?\.java\b"
)


def text_capabilities(value: str) -> list[str]:
    """The capabilities a folded string names in any language: a device or /proc path
    (``device paths``), a path into the test tree (``reads_test_tree``)."""
    out = []
    if _DEVICE_PATH.search(value):
        out.append("device paths")
    if _TEST_TREE_PATH.search(value):
        out.append("reads_test_tree")
    return out


#: Uses of one capability a scan keeps as evidence (the first ones; one is enough to refuse).
MAX_EVIDENCE = 20


def add_finding(found: Findings, name: str, line: int, evidence: str) -> None:
    """Record one use of capability ``name`` (evidence cut short, one entry per line, the
    first :data:`MAX_EVIDENCE` uses)."""
    hits = found.setdefault(name, [])
    if len(hits) >= MAX_EVIDENCE or any(n == line for n, _ in hits):
        return
    hits.append((line, " ".join(evidence[:400].split())[:80]))


def postorder(root: Any) -> Iterator[Any]:
    """Every node under ``root`` (itself included), children before their parent,
    iteratively (folding values bottom-up needs no recursion however deep the nesting)."""
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            yield node
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node.children))


class Parents:
    """Each node's parent, read once per tree. tree-sitter finds a node's parent by walking
    down from the root, so asking node by node costs the depth of the tree every time: on
    deeply nested hostile code, walks up to the scopes would be quadratic."""

    def __init__(self, root: Any) -> None:
        self._of: dict[int, Any] = {}
        stack = [root]
        while stack:
            node = stack.pop()
            for child in node.children:
                self._of[child.id] = node
                stack.append(child)

    def parent(self, node: Any) -> Any:
        """The node's parent (None at the root)."""
        return self._of.get(node.id)

    def ancestors(self, node: Any) -> Iterator[Any]:
        """The node's parents, nearest first."""
        parent = self._of.get(node.id)
        while parent is not None:
            yield parent
            parent = self._of.get(parent.id)


def decode_escapes(body: str, *, octal: bool = True) -> str:
    """A C-family string literal's body with its escapes decoded (``\\n``, ``\\xNN``,
    ``\\uNNNN``, ``\\u{N}``, ``\\UNNNNNNNN``, octal ``\\NNN`` when ``octal``); unknown
    escapes keep their character."""
    return _ESCAPE.sub(lambda m: _unescape(m.group(0), octal), body)


_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{1,2}|u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}"
    r"|\r?\n|.)",
    re.S,
)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "0": "\0",
    "e": "\x1b",
}


def _unescape(esc: str, octal: bool) -> str:
    body = esc[1:]
    try:
        if body[0] == "x":
            return chr(int(body[1:], 16))
        if body[0] == "u" and body[1:2] == "{":
            return chr(int(body[2:-1], 16))
        if body[0] in "uU" and len(body) > 1:
            return chr(int(body[1:], 16))
        if body[0] in "01234567" and (octal or body == "0"):
            return chr(int(body, 8))
    except (ValueError, OverflowError):
        return body
    if body[0] in "\r\n":
        return ""  # a line continuation
    return _SIMPLE_ESCAPES.get(body, body)


def source_capabilities(
    patch: str, read_base: Reader | None, keep: Callable[[str], bool], scan: Scanner
) -> list[str]:
    """Capabilities the source files (``keep``) of a patch use after it that the same files
    did not use before it.

    Each file's post-image is its base (``read_base``; ``b""`` for a new file) with the hunks
    applied strictly, scanned whole, compared with the scan of its base. Without the base
    file (no reader, a file missing or a patch that does not apply to it), the hunks' new side
    is scanned as a fragment and only what added lines use counts. A file that parsed before
    and not after is ``unparsable``; so is a binary patch to a source file (code no scanner
    reads). A file the patch moves (deleted and added again, as a diff without rename
    detection shows it) is compared with the file it was.
    """
    introduced: set[str] = set()
    patches = parse_patch(patch)
    moved = _moves(patches, keep)
    for fp in patches:
        path = fp.new_path
        if not path or not keep(path):
            continue
        if fp.is_binary:
            introduced.add(UNPARSABLE)
            continue
        before = _pre_image(fp, read_base, keep)
        if before is not None:
            try:
                after = apply_file_patch(before, fp)
            except PatchApplyError:
                after = None
            if after is not None:
                origin = fp.old_path or path
                if fp.old_path is None and read_base is not None and path in moved:
                    origin = moved[path]
                    before = read_base(origin) or b""
                old = set(scan(before, origin)) if before else set()
                introduced |= set(scan(after, path)) - old
                continue
        introduced |= _fragment_capabilities(fp, path, scan)
    return sorted(introduced)


def post_images(patch: str, read_base: Reader | None) -> dict[str, tuple[bytes, bool]]:
    """Path -> (text, whole) of every text file a patch adds or changes: its base file with
    the hunks applied (``whole``), else, when the base cannot be read or the hunks do not
    apply to it, the hunks' new side alone."""
    out: dict[str, tuple[bytes, bool]] = {}
    for fp in parse_patch(patch):
        path = fp.new_path
        if not path or fp.is_binary:
            continue
        before = _pre_image(fp, read_base, lambda _p: True)
        if before is not None:
            try:
                out[path] = (apply_file_patch(before, fp), True)
                continue
            except PatchApplyError:
                pass
        lines = [
            body if body.endswith(b"\n") else body + b"\n"
            for hunk in fp.hunks
            for tag, body in hunk.lines
            if tag != REMOVED
        ]
        out[path] = (b"".join(lines), False)
    return out


def _moves(patches: list[FilePatch], keep: Callable[[str], bool]) -> dict[str, str]:
    """New path -> old path of the source files a patch deletes and adds again: the same
    blob (``index`` lines), else the only deleted file of the same name."""
    deleted = [fp for fp in patches if fp.new_path is None and fp.old_path and keep(fp.old_path)]
    if not deleted:
        return {}
    by_blob = {fp.old_index: fp.old_path for fp in deleted if fp.old_index.strip("0")}
    by_name: dict[str, list[str]] = {}
    for fp in deleted:
        by_name.setdefault((fp.old_path or "").rsplit("/", 1)[-1], []).append(fp.old_path or "")
    out: dict[str, str] = {}
    for fp in patches:
        if fp.old_path is not None or not fp.new_path:
            continue
        origin = by_blob.get(fp.new_index) if fp.new_index.strip("0") else None
        same_name = by_name.get(fp.new_path.rsplit("/", 1)[-1], [])
        if origin is None and len(same_name) == 1:
            origin = same_name[0]
        if origin:
            out[fp.new_path] = origin
    return out


def _pre_image(
    fp: FilePatch, read_base: Reader | None, keep: Callable[[str], bool]
) -> bytes | None:
    """A file's content before the patch: ``b""`` for a new file, for a file that was not
    source before (a test renamed into the source tree) and for one whose only hunk grows it
    from nothing; None when it cannot be read."""
    if fp.old_path is None or not keep(fp.old_path):
        return b""
    if len(fp.hunks) == 1 and fp.hunks[0].old_start == 0 and fp.hunks[0].old_len == 0:
        return b""
    return read_base(fp.old_path) if read_base is not None else None


def _fragment_capabilities(fp: FilePatch, path: str, scan: Scanner) -> set[str]:
    """What the added lines of a file patch use, read on its hunks' new side alone."""
    lines: list[bytes] = []
    added: set[int] = set()
    for hunk in fp.hunks:
        for tag, body in hunk.lines:
            if tag == REMOVED:
                continue
            lines.append(body if body.endswith(b"\n") else body + b"\n")
            if tag == ADDED:
                added.add(len(lines))
        lines.append(b"\n")  # hunks are not contiguous
    if not added:
        return set()
    found = scan(b"".join(lines), path, fragment=True)
    return {name for name, hits in found.items() if any(n in added for n, _ in hits)}


def tree_source_capabilities(
    paths: Iterable[str], read: Reader, keep: Callable[[str], bool], scan: Scanner
) -> list[str]:
    """The union of the capabilities the source files (``keep``) of a tree use, files over
    :data:`MAX_SCAN_BYTES` skipped. A base file the parser cannot read is no allowance: the
    patch-level check already compares each file with its own base."""
    found: set[str] = set()
    for path in paths:
        if not keep(path):
            continue
        data = read(path)
        if data is None or len(data) > MAX_SCAN_BYTES:
            continue
        found |= set(scan(data, path))
    found.discard(UNPARSABLE)
    return sorted(found)


#: Capabilities the base code's use elsewhere does not excuse: so common in honest code that
#: a repository-wide allowance would switch them off for most projects (a Java identity
#: test of two strings: 4 of 5 real Java projects have one somewhere).
FILE_SCOPED = frozenset({"string identity"})


def capability_violations(
    introduced: Iterable[str], *, base: Iterable[str], gold: Iterable[str]
) -> list[dict[str, str]]:
    """Capabilities a patch newly uses that neither the base code nor the gold patch uses
    (those of :data:`FILE_SCOPED`: that the gold patch does not use; each file is compared
    with itself before the patch all the same)."""
    allowed = (set(base) - FILE_SCOPED) | set(gold)
    return [
        {
            "code": "capability",
            "detail": f"the patch newly uses {name}, which neither the project's code nor the "
            "reference fix uses (a way to reach the test runner or the process)",
        }
        for name in sorted(set(introduced) - allowed)
    ]
