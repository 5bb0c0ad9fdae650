"""Comparison hooks a Python patch adds: the gate on "a comparison that checks the answer".

A test's verdict ends in a comparison: ``assert wrap(text) == ["a b", "c"]``. Builtin values
compare honestly, and replacing or subclassing them is gated in the container (see
``harness/swe_forge_capabilities.py``: ``builtins_access``, ``builtin_subclass_comparison``).
What that leaves is a plain class of the project's own: the code under test returns an object
whose ``__eq__`` receives the test's expected value, and can accept it by *checking* it (the
same words, every line within the width) instead of computing it. Perturbed twins of the
assertion do not catch that, because a wrong literal fails the check too. So the comparison
itself is the capability: a patch that defines or changes a rich comparison or a membership
test (``__eq__``, ``__ne__``, ``__lt__``, ``__le__``, ``__gt__``, ``__ge__``,
``__contains__``) is refused unless the reference fix does the same to a class of the same
name.

Each site is read on the syntax tree, per class, and compared with the same file before the
patch: a hook whose definition is unchanged is no hook the patch adds, however many the file
already has (a project-wide allowance would excuse every project that defines one ``__eq__``).
The forms read are a ``def`` or an assignment in a class body, ``X.__eq__ = ...``,
``setattr(X, "__eq__", ...)`` (constant names, concatenations folded), and a namespace written
as a subscript or a dict (a metaclass's ``ns["__eq__"] = ...``). Names computed at run time are
``dynamic_access`` in the container's scan. A file the host's parser cannot read is scanned
as text: a hook's name on an added line counts.

This runs on the host, from the patch and the base files the supervisor shows, so it is no
part of the judge's digest: tasks admitted before it keep their judge.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from swe_forge.diffs import FilePatch, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems.base import ADDED, REMOVED

#: The comparisons whose other operand is the test's expected value.
HOOK_DUNDERS = frozenset(
    ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")
)

#: The code of the violation (a capability the container's catalog does not hold).
CAPABILITY = "comparison_hooks"

_TOKEN = re.compile(rb"__(?:eq|ne|lt|le|gt|ge|contains)__")

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True, order=True)
class Hook:
    """One comparison hook: its owner (a class's name, the target written before the dunder,
    or ``?`` for a namespace), the dunder, and the definition's syntax tree (no positions)."""

    owner: str
    dunder: str
    body: str
    path: str = ""
    line: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two sites the same hook (the file and line do not)."""
        return (self.owner, self.dunder, self.body)


def _const_name(node: ast.AST) -> str | None:
    """A string the expression is, folding ``+`` of constants and constant f-strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_name(node.left), _const_name(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [_const_name(v) for v in node.values]
        return "".join(p for p in parts if p is not None) if None not in parts else None
    return None


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # an unparsable fragment names no owner
        return "?"


#: Standard-library modules safe to import on the host (a patch names the module: some,
#: ``antigravity`` for one, do things when imported). Their classes are the values a return
#: can be made of; a base from another module gives no inherited hook (README: what remains).
_IMPORTABLE = frozenset(
    (
        "builtins",
        "collections",
        "collections.abc",
        "datetime",
        "decimal",
        "fractions",
        "ipaddress",
        "numbers",
        "pathlib",
        "string",
        "uuid",
        "xmlrpc.client",
        "email.message",
        "email.headerregistry",
        "urllib.parse",
        "json",
        "array",
        "enum",
        "typing",
        "dataclasses",
        "functools",
        "argparse",
        "configparser",
        "http.cookies",
        "tomllib",
    )
)


@functools.lru_cache(maxsize=256)
def _stdlib_comparisons(dotted: str) -> tuple[str, ...]:
    """The hooks a standard-library class inherits written in Python (``UserList.__eq__`` is
    ``self.data == self.__cast(other)``: a subclass that overrides ``_UserList__cast`` has a
    comparison of its own without defining a dunder). Only the standard library is imported
    (on the host, never the project's code); anything else gives none."""
    module, _, name = dotted.rpartition(".")
    if module not in _IMPORTABLE or module.split(".")[0] not in sys.stdlib_module_names:
        return ()
    try:
        cls = getattr(importlib.import_module(module), name)
    except Exception:  # a module this host lacks, a name it does not have
        return ()
    if not isinstance(cls, type):
        return ()
    found = set()
    for klass in cls.__mro__:
        for dunder in HOOK_DUNDERS:
            if isinstance(klass.__dict__.get(dunder), types.FunctionType):
                found.add(dunder)
    return tuple(sorted(found))


class _Sites(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[Hook] = []
        #: Local name -> dotted name, from the file's imports (``from collections import
        #: UserList as U``, ``import collections as c``).
        self.names: dict[str, str] = {}

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.names[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.names[head] = head

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Subscript):  # Generic[T], UserList[str]
            return self._dotted(node.value)
        if isinstance(node, ast.Name):
            return self.names.get(node.id, "builtins." + node.id)
        if isinstance(node, ast.Attribute):
            head = self._dotted(node.value)
            return f"{head}.{node.attr}" if head else None
        return None

    def _inherited(self, node: ast.ClassDef) -> None:
        """A hook for each comparison the class inherits, in Python, from a standard-library
        base (the body is the class's: what it overrides is what the comparison calls)."""
        for base in node.bases:
            dotted = self._dotted(base)
            for dunder in _stdlib_comparisons(dotted) if dotted else ():
                self._add(node.name, dunder, node)

    def _add(self, owner: str, dunder: str, node: ast.AST) -> None:
        body = ast.dump(node, include_attributes=False)
        self.found.append(Hook(owner, dunder, body, self.path, getattr(node, "lineno", 0)))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for stmt in node.body:
            if (
                isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                and stmt.name in HOOK_DUNDERS
            ):
                self._add(node.name, stmt.name, stmt)
            targets: list[ast.expr] = []
            if isinstance(stmt, ast.Assign):
                targets = list(stmt.targets)
            elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
                targets = [stmt.target]
            for t in targets:
                for name in _names(t):
                    if name in HOOK_DUNDERS:
                        self._add(node.name, name, stmt)
        self._inherited(node)
        self.generic_visit(node)

    def _targets(
        self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, targets: Iterable[ast.expr]
    ) -> None:
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and sub.attr in HOOK_DUNDERS:
                    self._add(_text(sub.value), sub.attr, node)
                elif isinstance(sub, ast.Subscript):
                    name = _const_name(sub.slice)
                    if name in HOOK_DUNDERS:
                        self._add("?", str(name), node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if callee in ("setattr", "__setattr__") and len(node.args) >= 2:
            name = _const_name(node.args[1])
            if name in HOOK_DUNDERS:
                self._add(_text(node.args[0]), str(name), node)
        for kw in node.keywords:
            if kw.arg in HOOK_DUNDERS:
                # dict(__eq__=f), type(..., **{...}) and friends: a namespace being written.
                self._add("?", kw.arg, node)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key in node.keys:
            name = _const_name(key) if key is not None else None
            if name in HOOK_DUNDERS:
                self._add("?", str(name), node)
        self.generic_visit(node)


def _names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (tuples unpacked)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for e in target.elts for n in _names(e)]
    return []


def hooks(source: bytes, path: str = "") -> list[Hook] | None:
    """Every comparison hook a Python file defines (None: the host cannot parse it)."""
    try:
        tree = ast.parse(source, filename=path or "<patch>")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    sites = _Sites(path)
    try:
        sites.visit(tree)
    except RecursionError:
        return None
    return sorted(sites.found)


def _added_lines_hooks(fp: FilePatch, path: str) -> list[Hook]:
    """A hook's name on an added line, for a file whose post-image the host cannot read."""
    out: list[Hook] = []
    line = 0
    for hunk in fp.hunks:
        line = hunk.new_start
        for tag, body in hunk.lines:
            if tag == ADDED:
                text = body.strip().decode("utf-8", "replace")
                out.extend(
                    Hook("?", m.group().decode(), text, path, line) for m in _TOKEN.finditer(body)
                )
            if tag != REMOVED:
                line += 1
    return out


def _is_python(path: str | None) -> bool:
    return bool(path) and str(path).endswith((".py", ".pyw", ".pyi"))


def added_hooks(patch: str, read_base: Reader) -> list[Hook]:
    """The comparison hooks a patch adds or changes in Python files (sorted).

    ``read_base``: a base file's bytes by path (None when it cannot be read: then the added
    lines are read as text). A patch that does not parse adds what its text shows.
    """
    try:
        patches = parse_diff(patch)
    except ValueError:
        return [Hook("?", m.group().decode(), "", "", 0) for m in _TOKEN.finditer(patch.encode())]
    # A hook the base defines anywhere among the files the patch touches is not added by it
    # (a class moved to another file keeps its hooks).
    seen: set[tuple[str, str, str]] = set()
    posts: list[tuple[FilePatch, str, bytes | None]] = []
    for fp in patches:
        path = fp.new_path
        if not path or not _is_python(path):
            if fp.old_path and _is_python(fp.old_path):
                seen |= {h.key for h in hooks(read_base(fp.old_path) or b"", fp.old_path) or ()}
            continue
        before = b"" if fp.old_path is None else read_base(fp.old_path)
        after: bytes | None = None
        if before is not None:
            try:
                after = apply_file_patch(before, fp)
            except PatchApplyError:
                after = None
            # A base the host cannot parse (newer syntax) excuses nothing.
            seen |= {h.key for h in hooks(before, fp.old_path or path) or ()}
        posts.append((fp, path, after))
    out: list[Hook] = []
    for fp, path, after in posts:
        new = hooks(after, path) if after is not None else None
        if new is None:
            out.extend(_added_lines_hooks(fp, path))
            continue
        out.extend(h for h in new if h.key not in seen)
    return sorted(out)


def violations(candidate: list[Hook], gold: list[Hook]) -> list[dict[str, str]]:
    """The candidate's hooks that the reference fix does not also add to an owner of the
    same name (the same dunder); empty: the gate passes."""
    allowed = {(h.owner, h.dunder) for h in gold}
    wild = {h.dunder for h in gold if h.owner == "?"}
    found: list[dict[str, str]] = []
    for h in candidate:
        if (h.owner, h.dunder) in allowed or h.dunder in wild:
            continue
        where = f"{h.path}:{h.line}" if h.path else "the patch"
        found.append(
            {
                "code": f"capability_{CAPABILITY}",
                "detail": f"{where} defines {h.owner}.{h.dunder}, a comparison the test's "
                "expected value is handed to, which the reference fix does not define",
            }
        )
    return found
