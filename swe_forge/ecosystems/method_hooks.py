"""Comparison methods a Go, Java or Rust patch adds or changes: "a comparison that checks the
answer" outside Python (Python's: :mod:`swe_forge.ecosystems.python.comparison_hooks`).

A test's verdict ends in a comparison, and in these languages a comparison of a project's
value is the project's own code: JUnit's ``assertEquals(expected, actual)`` calls
``expected.equals(actual)`` (an expected value built from the project's class runs that
class's ``equals``), AssertJ's and Hamcrest's ``isEqualTo``/``is`` call ``actual.equals``,
``assertTrue(set.contains("a"))`` calls the project's ``contains``; go-cmp calls a type's
``Equal`` method and tests write ``got.Equal(want)``; Rust's ``assert_eq!`` calls the
``PartialEq`` impl. A method that receives the expected value can *check* it (accept it
because it is a valid answer, reject a decoy's changed literal because it is not) instead of
the code computing the answer, and the decoys do not catch that.

So a patch that adds such a method, or changes one, is refused unless the reference fix adds
or changes the same method of a type of the same name. A method is compared with itself in
the file before the patch, by its text: an unchanged one is none the patch adds, however many
the file has (a presence-based allowance would excuse every project with one ``equals``).
This runs on the host, from the patch and the base files the supervisor shows.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from swe_forge.diffs import DiffParseError, FilePatch, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import ADDED, REMOVED

Reader = Callable[[str], bytes | None]

#: Java methods that receive the value they are compared with (by name, parameter count).
JAVA_METHODS = {
    "equals": 1,
    "compareTo": 1,
    "compare": 2,
    "contains": 1,
    "containsAll": 1,
    "containsKey": 1,
    "containsValue": 1,
    "equalsIgnoreCase": 1,
}
#: Go methods tests and go-cmp hand the expected value to.
GO_METHODS = frozenset({"Equal", "Equals", "Compare", "Cmp", "Contains", "Less"})
#: Rust traits whose impls ``assert_eq!`` and comparisons call.
RUST_TRAITS = frozenset({"PartialEq", "PartialOrd", "Ord", "Eq"})

_EXTENSIONS = {"java": ".java", "go": ".go", "rust": ".rs"}
_GRAMMAR = {"java": "java", "go": "go", "rust": "rust"}
_SPACE = re.compile(rb"\s+")


@dataclass(frozen=True, order=True)
class MethodHook:
    """One comparison method: its owner type, its name, the file and line it is at."""

    owner: str
    method: str
    path: str
    line: int


#: The ecosystems whose comparison methods this gate reads.
LANGUAGES = frozenset(_GRAMMAR)


def methods(source: bytes, lang: str) -> dict[tuple[str, str], tuple[str, int]]:
    """(owner, method) -> (digest of its text without white space, line) of every
    comparison method of one file; a file that does not parse gives what its tree holds."""
    if len(source) > syntax.MAX_PARSE_BYTES:
        return {("?", "?"): ("unreadable", 1)}
    if lang == "java":
        from swe_forge.ecosystems.java.scan import unicode_escapes

        source = unicode_escapes(source)
    root = syntax.parse(_GRAMMAR[lang], source).root_node
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for node in syntax.walk(root):
        key = _key(node, lang)
        if key is not None:
            digest = hashlib.sha256(_SPACE.sub(b"", node.text or b"")).hexdigest()[:16]
            previous = out.get(key)
            # Two of one key (overloads, impls for several references): both texts count.
            out[key] = (digest if previous is None else previous[0] + digest, syntax.line(node))
    return out


def _key(node: Any, lang: str) -> tuple[str, str] | None:
    if lang == "java" and node.type == "method_declaration":
        name = node.child_by_field_name("name")
        params = node.child_by_field_name("parameters")
        if name is None or params is None:
            return None
        count = sum(1 for c in params.named_children if c.type.endswith("parameter"))
        if JAVA_METHODS.get(syntax.text(name)) != count:
            return None
        return (_java_owner(node), syntax.text(name))
    if lang == "go" and node.type == "method_declaration":
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")
        if name is None or syntax.text(name) not in GO_METHODS:
            return None
        owner = re.findall(r"[A-Za-z_]\w*", syntax.text(receiver) if receiver else "")
        return (owner[-1] if owner else "?", syntax.text(name))
    if lang == "rust" and node.type == "impl_item":
        trait = node.child_by_field_name("trait")
        kind = node.child_by_field_name("type")
        if trait is None:
            return None
        text = syntax.text(trait)
        base = re.sub(r"<.*", "", text).split("::")[-1].strip()
        if base not in RUST_TRAITS:
            return None
        return (_SPACE.sub(b"", (kind.text if kind is not None else b"?")).decode(), text)
    return None


def _java_owner(node: Any) -> str:
    parent = node.parent
    while parent is not None:
        if parent.type in (
            "class_declaration",
            "enum_declaration",
            "record_declaration",
            "interface_declaration",
        ):
            name = parent.child_by_field_name("name")
            return syntax.text(name) if name is not None else "?"
        if parent.type == "object_creation_expression":
            kind = parent.child_by_field_name("type")
            return f"new {syntax.text(kind) if kind is not None else '?'}"
        parent = parent.parent
    return "?"


def added(patch: str, read_base: Reader | None, lang: str) -> list[MethodHook]:
    """Comparison methods a patch adds or changes, file by file against the base (a file
    whose base cannot be read: every comparison method its hunks show with an added line)."""
    ext = _EXTENSIONS[lang]
    try:
        files = parse_diff(patch)
    except DiffParseError:
        return []
    out: list[MethodHook] = []
    for fp in files:
        path = fp.new_path
        if not path or not path.endswith(ext):
            continue
        before = b"" if fp.old_path is None else (read_base(fp.old_path) if read_base else None)
        after = None
        if before is not None:
            try:
                after = apply_file_patch(before, fp)
            except PatchApplyError:
                after = None
        if before is None or after is None:
            out += _fragment(fp, path, lang)
            continue
        old = methods(before, lang) if before else {}
        for key, (digest, line) in sorted(methods(after, lang).items()):
            if old.get(key, ("",))[0] != digest:
                out.append(MethodHook(key[0], key[1], path, line))
    return sorted(set(out))


def _fragment(fp: FilePatch, path: str, lang: str) -> list[MethodHook]:
    text = b"".join(
        body if body.endswith(b"\n") else body + b"\n"
        for hunk in fp.hunks
        for tag, body in hunk.lines
        if tag != REMOVED
    )
    if not any(tag == ADDED for h in fp.hunks for tag, _ in h.lines):
        return []
    return [MethodHook(k[0], k[1], path, v[1]) for k, v in sorted(methods(text, lang).items())]


def violations(candidate: Iterable[MethodHook], gold: Iterable[MethodHook]) -> list[dict[str, str]]:
    """The candidate's comparison methods the reference fix does not also add or change on a
    type of the same name; empty: the gate passes."""
    allowed = {(h.owner, h.method) for h in gold}
    return [
        {
            "code": "capability_comparison_methods",
            "detail": f"{h.path}:{h.line} defines {h.owner}.{h.method}, a comparison the "
            "test's expected value is handed to, which the reference fix does not define",
        }
        for h in candidate
        if (h.owner, h.method) not in allowed
    ]
