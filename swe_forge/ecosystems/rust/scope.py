"""Which Rust tests a test patch defines or changes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from swe_forge.ecosystems.rust.runner import _TEST_FN


@dataclass(frozen=True)
class RustScope:
    """The tests a test patch defines or changes: test functions its added lines declare or
    whose bodies it changes, every test of a test file it creates, and the tests a macro
    generates (``macro_rules! test`` and ``test! { name(1, "1") ... }``) where the patch
    changes the macro or its invocation."""

    #: (target file, ``module::path::function``): the module path as far as it is known
    #: (from the file's place in the target and the inline ``mod`` blocks around the
    #: function); a test's own path, which may have more outer modules than the file's
    #: place says (a ``mod x { automod::dir!(..) }`` wrapper), ends with it.
    names: frozenset[tuple[str, str]]
    new_files: frozenset[str]
    #: (target file, identifier) of the macro invocations the patch reaches: a test generated
    #: by one has one of them as a segment of its path. Reached through a changed
    #: ``macro_rules!`` or another line of its invocation: indirectly.
    macro_names: frozenset[tuple[str, str]] = frozenset()
    #: The identifiers on the invocation lines the patch itself adds or changes (a new
    #: ``test_u128_max(u128::MAX, "...")``): those tests are the patch's own.
    macro_direct: frozenset[tuple[str, str]] = frozenset()

    def covers(self, test: str) -> bool:
        """Is ``test`` (``tests/x.rs::mod::name``) defined or changed by the test patch?"""
        file, _, name = test.partition("::")
        if file in self.new_files or self._named(file, name):
            return True
        return any((file, seg) in self.macro_names for seg in name.split("::"))

    def covers_directly(self, test: str) -> bool:
        """Does the test patch add or change ``test``'s own code (not only a macro or a
        sibling line of the invocation that generates it)?"""
        file, _, name = test.partition("::")
        if file in self.new_files or self._named(file, name):
            return True
        return any((file, seg) in self.macro_direct for seg in name.split("::"))

    def _named(self, file: str, name: str) -> bool:
        # By module path, not the bare function name: every module of a target may have a
        # ``fn cases`` (bitflags' src/tests/*.rs), and a new one is not the others.
        segs = name.split("::")
        return any((file, "::".join(segs[i:])) in self.names for i in range(len(segs)))


def module_path(path: str, root: str) -> list[str]:
    """The module path of the Rust file ``path`` within the target whose root file is
    ``root``, from its place alone (the crate's ``src/`` for a library, the directory the
    root is in or, for a non-mod.rs root ``tests/x.rs``, ``tests/x/``): ``src/map/tests.rs``
    -> ``map::tests``, ``tests/words/edge/mod.rs`` -> ``edge``, the root itself -> nothing.
    A ``#[path]`` attribute or a macro that includes files (``automod``) may add outer
    modules the place does not show; :meth:`RustScope.covers` allows for them."""
    if path == root:
        return []
    parent = root.rsplit("/", 1)[0] if "/" in root else ""
    stem = root.rsplit("/", 1)[-1]
    if stem not in ("lib.rs", "main.rs", "mod.rs"):
        parent = f"{parent}/{stem[:-3]}" if parent else stem[:-3]
    if not path.startswith(parent + "/") or not path.endswith(".rs"):
        return []
    parts = path[len(parent) + 1 : -3].split("/")
    if parts[-1] == "mod":
        parts.pop()
    return [p for p in parts if p]


def enclosing_mods(lines: list[str], index: int) -> list[str]:
    """The inline modules (``mod tests {``) ``lines[index]`` is in, outermost first; by
    indentation, as :func:`_enclosing_fns` finds functions."""
    found: list[str] = []
    deepest = len(lines[index]) - len(lines[index].lstrip())
    for j in range(index - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = _INLINE_MOD.match(line)
        if m and indent < deepest:
            found.append(m.group(1))
        deepest = min(deepest, indent)
        if deepest == 0:
            break
    return found[::-1]


_INLINE_MOD = re.compile(
    r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*\{"
)


#: A macro's definition (``macro_rules! name {``) or an item-level invocation
#: (``name! {`` / ``name!(`` / ``name![``) that opens a block on its line.
_MACRO_DEF = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?macro_rules!\s*(\w+)")
_MACRO_CALL = re.compile(r"^\s*(?:[\w:]+::)?([A-Za-z_]\w*)!\s*[\[({]")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|//.*$')


def _blocks(lines: list[str]) -> list[tuple[str, str, int, int]]:
    """(kind "def" | "call", macro name, first line, last line) of each macro definition and
    item-level invocation, its end found by bracket balance (strings and line comments
    left out)."""
    out: list[tuple[str, str, int, int]] = []
    i = 0
    while i < len(lines):
        m = _MACRO_DEF.match(lines[i])
        kind = "def"
        if m is None:
            m = _MACRO_CALL.match(lines[i])
            kind = "call"
        if m is None:
            i += 1
            continue
        depth = 0
        opened = False
        end = i
        for j in range(i, len(lines)):
            code = _STRING.sub("", lines[j])
            for ch in code:
                if ch in "([{":
                    depth += 1
                    opened = True
                elif ch in ")]}":
                    depth -= 1
            end = j
            if opened and depth <= 0:
                break
        out.append((kind, m.group(1), i, end))
        i = end + 1
    return out


def macro_reach(lines: list[str], touched: set[int]) -> tuple[set[str], set[str]]:
    """The identifiers of the macro invocations the touched lines (0-based) reach, and those
    on the touched invocation lines themselves. A touched invocation reaches its own
    identifiers; a touched ``macro_rules!`` every invocation of it in the file. A line inside
    a test function is the function's, not the macro's (``assert_eq!``)."""
    blocks = _blocks(lines)
    reached: set[str] = set()
    direct: set[str] = set()
    changed_defs: set[str] = set()
    for kind, name, start, end in blocks:
        hit = sorted(n for n in touched if start <= n <= end)
        if not hit:
            continue
        if kind == "def":
            changed_defs.add(name)
            continue
        if any(_enclosing_fns(lines, n) for n in hit):
            continue
        body = "\n".join(_STRING.sub("", ln) for ln in lines[start + 1 : end + 1])
        reached |= set(_IDENT.findall(body))
        for n in hit:
            if n != start:
                direct |= set(_IDENT.findall(_STRING.sub("", lines[n])))
    for kind, name, start, end in blocks:
        if kind == "call" and name in changed_defs:
            body = "\n".join(_STRING.sub("", ln) for ln in lines[start + 1 : end + 1])
            reached |= set(_IDENT.findall(body))
    return reached, direct


def _enclosing_fns(lines: list[str], index: int) -> list[str]:
    """The functions ``lines[index]`` is in, innermost first (itself when it declares one).

    By indentation, as rustfmt lays code out: a function encloses the line when every
    non-blank line from its declaration down to the line is indented deeper than it (its
    closing brace, at its own indentation, would end it)."""
    found: list[str] = []
    deepest = len(lines[index]) - len(lines[index].lstrip())
    m = _TEST_FN.match(lines[index])
    if m:
        found.append(m.group(1))
    for j in range(index - 1, -1, -1):
        line = lines[j]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = _TEST_FN.match(line)
        if m and indent < deepest:
            found.append(m.group(1))
        deepest = min(deepest, indent)
        if deepest == 0 and not m:
            break
    return found
