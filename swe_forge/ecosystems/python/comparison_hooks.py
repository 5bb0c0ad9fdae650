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

The sites of one file are read in :mod:`~swe_forge.ecosystems.python.comparison_hooks_sites`;
what a comparison reaches (standard-library bases, the project's own classes) in
:mod:`~swe_forge.ecosystems.python.comparison_hooks_project`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from swe_forge import pyast
from swe_forge.diffs import FilePatch, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems.base import ADDED, REMOVED
from swe_forge.ecosystems.python.comparison_hooks_project import (
    Project,
    _imported_modules,
    _is_python,
    _stdlib_called,
    comparison_called,
)
from swe_forge.ecosystems.python.comparison_hooks_sites import (
    _POOL,
    Hook,
    _module_computed_names,
    _Sites,
)

#: The code of the violation (a capability the container's catalog does not hold).
CAPABILITY = "comparison_hooks"

_TOKEN = re.compile(rb"__(?:eq|ne|lt|le|gt|ge|contains)__")

Reader = Callable[[str], bytes | None]


def hooks(source: bytes, path: str = "", project: Project | None = None) -> list[Hook] | None:
    """Every comparison hook a Python file defines (None: the host cannot parse it);
    ``project``: the project's files this one's bases may come from (then what its own and
    inherited comparisons call counts too, see :class:`Project`)."""
    try:
        tree = pyast.parse(source, filename=path or "<patch>")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    sites = _Sites(path, project)
    called = set(comparison_called(tree))
    for module in _imported_modules(tree):
        called |= _stdlib_called(module)
    if project is not None:
        called |= project.called()
    sites.called = frozenset(called)
    try:
        sites.computed = _module_computed_names(tree)
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


def added_hooks(
    patch: str, read_base: Reader, modules: dict[str, bytes] | None = None
) -> list[Hook]:
    """The comparison hooks a patch adds or changes in Python files (sorted).

    ``read_base``: a base file's bytes by path (None when it cannot be read: then the added
    lines are read as text). ``modules``: the project's other files (path -> bytes, as the
    base has them; the modules the changed files import), where bases of the project's own
    are looked up. A patch that does not parse adds what its text shows.
    """
    try:
        patches = parse_diff(patch)
    except ValueError:
        return [Hook("?", m.group().decode(), "", "", 0) for m in _TOKEN.finditer(patch.encode())]
    # A hook the base defines anywhere among the files the patch touches is not added by it
    # (a class moved to another file keeps its hooks).
    befores: dict[str, bytes] = {}
    posts: list[tuple[FilePatch, str, bytes | None]] = []
    for fp in patches:
        path = fp.new_path
        if not path or not _is_python(path):
            if fp.old_path and _is_python(fp.old_path):
                befores[fp.old_path] = read_base(fp.old_path) or b""
            continue
        before = b"" if fp.old_path is None else read_base(fp.old_path)
        after: bytes | None = None
        if before is not None:
            try:
                after = apply_file_patch(before, fp)
            except PatchApplyError:
                after = None
            # A base the host cannot parse (newer syntax) excuses nothing.
            befores[fp.old_path or path] = before
        posts.append((fp, path, after))
    others = dict(modules or {})
    old_project = Project({**others, **befores})
    new_project = Project({**others, **{p: a for _fp, p, a in posts if a is not None}})
    seen: set[tuple[str, str, str]] = set()
    for path, before in befores.items():
        seen |= {h.key for h in hooks(before, path, old_project) or ()}
    out: list[Hook] = []
    for fp, path, after in posts:
        new = hooks(after, path, new_project) if after is not None else None
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
        if h.owner == "reach":
            found.append(
                {
                    "code": f"capability_{CAPABILITY}",
                    "detail": f"{where} reaches {h.dunder.split('/', 1)[1]}, a way to the test "
                    "module's own objects; the reference fix does not",
                }
            )
            continue
        if h.dunder == _POOL:
            found.append(
                {
                    "code": f"capability_{CAPABILITY}",
                    "detail": f"{where} reaches the interpreter's string pool (sys.intern, "
                    "sys.getrefcount, sys.getallocatedblocks, tracemalloc), which tells which "
                    "strings a test module holds; the reference fix does not",
                }
            )
            continue
        found.append(
            {
                "code": f"capability_{CAPABILITY}",
                "detail": f"{where} defines {h.owner}.{h.dunder}, a comparison the test's "
                "expected value is handed to, which the reference fix does not define",
            }
        )
    return found
