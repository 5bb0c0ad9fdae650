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
import sysconfig
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from swe_forge import pyast
from swe_forge.diffs import FilePatch, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.ecosystems.base import ADDED, REMOVED

#: The comparisons whose other operand is the test's expected value.
HOOK_DUNDERS = frozenset(
    ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")
)

#: Names on the way from the code under test to the test module's own objects, read on the
#: host because the container's scan resolves ``sys.modules`` by that spelling only: a
#: twelfth red team walked ``os.sys.modules`` -> ``vars(module)`` -> ``pytestmark`` and read
#: the expected values of a ``parametrize`` table (which no decoy changes) for 1.0 on two
#: tasks. ``sys`` reached as another module's attribute, a module registry (``.modules``)
#: other than ``sys``'s, a test's marks, the bytecode disassembler.
_REACH = {
    "sys": "reach/sys through another module",
    "modules": "reach/a module registry",
    "pytestmark": "reach/test marks",
    "dis": "reach/bytecode (dis)",
}
_REACH_TEXT = frozenset({"pytestmark", "sys", "modules"})
_REACH_MODULES = frozenset({"dis"})

#: The pseudo-hook of the string pool (``sys.intern``).
_POOL = "intern (the string pool)"
#: What asks the string pool whether a string is in it: ``sys.intern`` directly, and the
#: counts that tell a string someone else holds from a fresh one (a nineteenth red team took
#: an identifier the parser had interned, ``ast.parse(word).body.id``, and compared its
#: ``sys.getrefcount`` with a control's: "does the test module hold this constant?").
_POOL_NAMES = frozenset({"intern", "getrefcount", "getallocatedblocks"})
#: Modules that count the interpreter's allocations (the same question, by memory).
_POOL_MODULES = frozenset({"tracemalloc"})

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
    comparison of its own without defining a dunder). The modules of :data:`_IMPORTABLE` are
    imported (on the host, never the project's code); every other standard-library module is
    read from its source, never imported (:func:`_stdlib_source_comparisons`)."""
    module, _, name = dotted.rpartition(".")
    if not module or module.split(".")[0] not in sys.stdlib_module_names:
        return ()
    if module not in _IMPORTABLE:
        return _stdlib_source_comparisons(module, name, 0)
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


#: How many bases up a standard-library class read from its source is followed.
_STDLIB_ANCESTRY = 6


@functools.lru_cache(maxsize=128)
def _stdlib_tree(module: str) -> tuple[ast.Module, str] | None:
    """A standard-library module's syntax tree and its path below the library, read from the
    host's installed sources (a C module, or one this host lacks, has none)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", module):
        return None
    root = Path(sysconfig.get_paths()["stdlib"])
    rel = module.replace(".", "/")
    for path in (f"{rel}.py", f"{rel}/__init__.py"):
        try:
            data = (root / path).read_bytes()
        except OSError:
            continue
        try:
            return pyast.parse(data, filename=path), path
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return None


@functools.lru_cache(maxsize=1024)
def _stdlib_source_comparisons(module: str, name: str, depth: int) -> tuple[str, ...]:
    """The comparison dunders a standard-library class (or its standard-library bases)
    defines in Python, read on the module's source: a red team's forgeries subclassed
    ``xml.dom.minidom.NamedNodeMap`` (``__eq__`` is ``self._cmp(other) == 0``) and
    ``_pydecimal.Decimal`` (``__eq__`` calls ``self._cmp`` and ``_check_nans``), modules no
    allowlist of imports would list. Conservative, as for the imported ones: a subclass of
    such a class is a hook of each of those dunders."""
    got = _stdlib_tree(module)
    if got is None or depth > _STDLIB_ANCESTRY:
        return ()
    tree, path = got
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or node.name != name:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                defined = [stmt.name]
            elif isinstance(stmt, ast.Assign):
                defined = [n for t in stmt.targets for n in _names(t)]
            else:
                defined = []
            found.update(d for d in defined if d in HOOK_DUNDERS)
        names = _imports(tree, path)
        for base in node.bases:
            if isinstance(base, ast.Subscript):
                base = base.value
            dotted: str | None = None
            if isinstance(base, ast.Name):
                dotted = names.get(base.id, f"{module}.{base.id}")
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                head = names.get(base.value.id, base.value.id)
                dotted = f"{head}.{base.attr}"
            if not dotted:
                continue
            where, _, cls = dotted.rpartition(".")
            if where == module:
                found.update(_stdlib_source_comparisons(module, cls, depth + 1))
            elif where and where.split(".")[0] in sys.stdlib_module_names:
                found.update(
                    _stdlib_comparisons(dotted)
                    if where in _IMPORTABLE
                    else _stdlib_source_comparisons(where, cls, depth + 1)
                )
    return tuple(sorted(found))


def _mangled(name: str, owner: str) -> str:
    """``__x`` as Python stores it in class ``owner`` (``_Owner__x``); other names as they are."""
    if name.startswith("__") and not name.endswith("__"):
        return "_" + owner.lstrip("_") + name
    return name


def _self_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef, owner: str) -> set[str]:
    """The methods a function calls on its instance (``self._cmp(other)``; a private name
    mangled: ``self.__cast`` in ``UserList`` is ``_UserList__cast``)."""
    me = _self_name(fn)
    out: set[str] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == me:
                name = func.attr
        elif (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Name)
            and func.func.id == "getattr"
            and len(func.args) >= 2
            and isinstance(func.args[0], ast.Name)
            and func.args[0].id == me
        ):
            name = _const_name(func.args[1])
        if name:
            out.add(_mangled(name, owner))
    return out


def comparison_called(tree: ast.Module) -> frozenset[str]:
    """The names of the methods the comparisons of a module's classes call on their
    instance, followed through the class's own methods (``Version.__eq__`` calls
    ``self._cmp``): an instance attribute of that name, set from anywhere, replaces the
    method for that instance (a seventh red team's ``v._cmp = functools.partial(checker)``
    and ``ul._UserList__cast = ...``: comparisons that check the answer, with no class)."""
    out: set[str] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {
            s.name: s for s in cls.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        todo = [d for d in HOOK_DUNDERS if d in methods]
        seen = set(todo)
        while todo and len(seen) < REACH:
            fn = methods.get(todo.pop())
            if fn is None:
                continue
            for name in sorted(_self_calls(fn, cls.name) - seen):
                seen.add(name)
                out.add(name)
                todo.append(name)
    return frozenset(n for n in out if not (n.startswith("__") and n.endswith("__")))


@functools.lru_cache(maxsize=256)
def _stdlib_called(module: str) -> frozenset[str]:
    """:func:`comparison_called` of a standard-library module, read from its source."""
    if module.split(".")[0] not in sys.stdlib_module_names:
        return frozenset()
    got = _stdlib_tree(module)
    return comparison_called(got[0]) if got is not None else frozenset()


def _imported_modules(tree: ast.Module) -> set[str]:
    """Every absolute module a file imports anywhere (``from a.b import c``: ``a.b`` and
    ``a.b.c``, which may be a module)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


#: Where a project's top-level packages live (as the supervisor resolves imports), and the
#: prefix under which it shows installed packages' modules.
SOURCE_ROOTS = ("", "src/", "lib/", "python/", "site-packages/")
#: At most this many names a comparison reaches (through what it reads and calls) per dunder.
REACH = 400
#: How many bases up a class's project ancestors are followed.
ANCESTRY = 4


def module_names(path: str) -> list[str]:
    """The dotted names a project file may be imported as (``src/pkg/mod.py``: ``pkg.mod``
    and ``src.pkg.mod``; ``pkg/__init__.py``: ``pkg``)."""
    if not path.endswith(".py"):
        return []
    stem = path[: -len(".py")]
    if stem == "__init__":
        return []
    stem = stem.removesuffix("/__init__")
    names = []
    for root in SOURCE_ROOTS:
        if root and not stem.startswith(root):
            continue
        rest = stem[len(root) :]
        if rest and "." not in rest:
            names.append(rest.replace("/", "."))
    return names


def _imports(tree: ast.Module, path: str) -> dict[str, str]:
    """Local name -> dotted name of a module's top-level imports (relative ones resolved)."""
    package = path.rsplit("/", 1)[0].replace("/", ".") if "/" in path else ""
    if path.endswith("/__init__.py") or path == "__init__.py":
        package = path[: -len("/__init__.py")].replace("/", ".")
    for root in SOURCE_ROOTS:
        if root and package.startswith(root.rstrip("/").replace("/", ".") + "."):
            package = package[len(root) :]
            break
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    names[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                parts = parts[: len(parts) - (node.level - 1)]
                head = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                head = node.module or ""
            for alias in node.names:
                names[alias.asname or alias.name] = f"{head}.{alias.name}" if head else alias.name
    return names


def _self_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else "self"


def _calls(fn: ast.FunctionDef | ast.AsyncFunctionDef, owner: str) -> tuple[set[str], set[str]]:
    """What a comparison's body reaches that a patch could define: the attributes it reads
    on its instance (``self.key()``, ``self.__cast(other)`` mangled to ``_Owner__cast``,
    ``type(self).x``, ``getattr(self, "x")``), and the plain names it calls (module-level
    helpers)."""
    me = _self_name(fn)
    attrs: set[str] = set()
    helpers: set[str] = set()

    def on_self(node: ast.AST) -> bool:
        if isinstance(node, ast.Name) and node.id == me:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return on_self(node.value)
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) == 1
            and on_self(node.args[0])
        )

    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "__class__")
                or (isinstance(node.func, ast.Call) and on_self(node.func))
            )
            and on_self(node.func if isinstance(node.func, ast.Call) else node.func.value)
        ):
            # self.__class__(other), type(self)(other): the class's own constructor is handed
            # the other operand (packaging's Specifier.__eq__ does this).
            attrs.update(("__init__", "__new__"))
        if isinstance(node, ast.Attribute) and on_self(node.value):
            attrs.add(_mangled(node.attr, owner))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helpers.add(node.func.id)
            if node.func.id == "getattr" and len(node.args) >= 2 and on_self(node.args[0]):
                spelled = _const_name(node.args[1])
                if spelled:
                    attrs.add(spelled)
    return attrs, helpers


class Project:
    """The project's Python files the verifier was shown, parsed once: where a class's bases
    of the project's own are found, and what their comparisons call.

    A comparison a class inherits from a base of the project's own is a hook of the class
    wherever it reaches code the class defines: ``Version.__eq__`` returning
    ``self._key() == other._key()`` is a comparison of any subclass that defines ``_key``.
    So a method (or a module-level helper) that an inherited or own comparison calls is a
    hook when a patch adds or changes it."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.trees: dict[str, ast.Module] = {}
        self.by_module: dict[str, str] = {}
        for path, data in sorted(files.items()):
            if not _is_python(path):
                continue
            try:
                self.trees[path] = pyast.parse(data, filename=path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for name in module_names(path):
                self.by_module.setdefault(name, path)
        self._names: dict[str, dict[str, str]] = {}
        self._called: frozenset[str] | None = None

    def called(self) -> frozenset[str]:
        """:func:`comparison_called` over every file shown, and over the standard-library
        modules they import (a helper of the project may hand out a ``Version``)."""
        if self._called is None:
            names: set[str] = set()
            for tree in self.trees.values():
                names |= comparison_called(tree)
                for module in _imported_modules(tree):
                    names |= _stdlib_called(module)
            self._called = frozenset(names)
        return self._called

    def names(self, path: str) -> dict[str, str]:
        if path not in self._names:
            tree = self.trees.get(path)
            self._names[path] = _imports(tree, path) if tree is not None else {}
        return self._names[path]

    def top_class(self, path: str, name: str, hops: int = 2) -> tuple[str, ast.ClassDef] | None:
        """The class ``name`` a module defines at its top level, or imports (a package's
        ``__init__`` re-exporting it), followed ``hops`` imports."""
        tree = self.trees.get(path)
        if tree is None:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return path, node
        for node in tree.body:
            # ``Base = Version``: a class named through an assignment (a seventh red team).
            if (
                hops > 0
                and isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and isinstance(node.value, ast.Name | ast.Attribute)
            ):
                found = self.resolve(path, node.value, hops - 1)
                if found is not None:
                    return found
        dotted = self.names(path).get(name)
        if dotted and hops > 0:
            return self.dotted_class(dotted, hops - 1)
        return None

    def dotted_class(self, dotted: str, hops: int = 2) -> tuple[str, ast.ClassDef] | None:
        module, _, name = dotted.rpartition(".")
        path = self.by_module.get(module)
        return self.top_class(path, name, hops) if path else None

    def resolve(self, path: str, expr: ast.expr, hops: int = 2) -> tuple[str, ast.ClassDef] | None:
        """The project class a base expression names in ``path``."""
        if isinstance(expr, ast.Subscript):  # Generic[T], Base[int]
            return self.resolve(path, expr.value, hops)
        if isinstance(expr, ast.Name):
            return self.top_class(path, expr.id, hops)
        if isinstance(expr, ast.Attribute):
            parts: list[str] = []
            node: ast.expr = expr
            while isinstance(node, ast.Attribute):
                parts.insert(0, node.attr)
                node = node.value
            if isinstance(node, ast.Name):
                head = self.names(path).get(node.id, node.id)
                return self.dotted_class(".".join([head, *parts]))
        return None

    def comparison_calls(
        self, path: str, cls: ast.ClassDef
    ) -> tuple[dict[str, set[str]], dict[tuple[str, str], set[str]]]:
        """For ``cls`` (in ``path``) and its project ancestors: per comparison dunder, the
        attributes it reads on the instance; and per (file, hooked class) the plain names its
        comparisons call (the helpers of that file)."""
        attrs: dict[str, set[str]] = {}
        helpers: dict[tuple[str, str], set[str]] = {}
        todo: list[tuple[str, ast.ClassDef, int]] = [(path, cls, 0)]
        seen: set[tuple[str, str]] = set()
        #: Every method of the class and its ancestors by name (the class's own first).
        methods: dict[str, list[tuple[str, ast.ClassDef, ast.FunctionDef | ast.AsyncFunctionDef]]]
        methods = {}
        while todo:
            here, klass, depth = todo.pop(0)
            if (here, klass.name) in seen:
                continue
            seen.add((here, klass.name))
            for stmt in klass.body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                methods.setdefault(stmt.name, []).append((here, klass, stmt))
                if stmt.name in HOOK_DUNDERS:
                    got, calls = _calls(stmt, klass.name)
                    attrs.setdefault(stmt.name, set()).update(got)
                    helpers.setdefault((here, klass.name), set()).update(calls)
            if depth < ANCESTRY:
                for base in klass.bases:
                    found = self.resolve(here, base)
                    if found is not None:
                        todo.append((found[0], found[1], depth + 1))
        # And what those reach in turn: a property the comparison reads, the constructor it
        # calls, what they read on the instance (Specifier.__eq__ -> _canonical_spec -> _spec).
        for names in attrs.values():
            frontier = sorted(names)
            while frontier and len(names) < REACH:
                for here, klass, fn in methods.get(frontier.pop(), ()):
                    got, calls = _calls(fn, klass.name)
                    new = got - names
                    names |= new
                    frontier.extend(sorted(new))
                    helpers.setdefault((here, klass.name), set()).update(calls)
        return attrs, helpers


class _Sites(ast.NodeVisitor):
    def __init__(self, path: str, project: Project | None = None) -> None:
        self.path = path
        self.project = project
        self.found: list[Hook] = []
        #: Local name -> dotted name, from the file's imports (``from collections import
        #: UserList as U``, ``import collections as c``) and assignments (``B = c.UserList``).
        self.names: dict[str, str] = {}
        #: Methods that comparisons in reach call on their instance (see
        #: :func:`comparison_called`): writing one from outside its class is a hook.
        self.called: frozenset[str] = frozenset()
        #: Names bound by an assignment to another name (``_B = Version``).
        self.aliased: set[str] = set()
        #: Names some binding gives a value computed at run time (see _computed_names).
        self.computed: frozenset[str] = frozenset()

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if node.module == "sys" and (alias.name in _POOL_NAMES or alias.name == "*"):
                    self._add("sys", _POOL, node)
                if alias.name in ("sys", "modules", "pytestmark"):
                    self._reach(alias.name, node)  # from os import sys
            if node.module.split(".")[0] in _REACH_MODULES:
                self._reach(node.module.split(".")[0], node)
            if node.module.split(".")[0] in _POOL_MODULES:
                self._add("sys", _POOL, node)

    def _reach(self, name: str, node: ast.AST) -> None:
        """A name on the way to the test module's own objects (see :data:`_REACH`)."""
        what = _REACH.get(name)
        if what is not None:
            self._add("reach", what, node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "pytestmark":
            self._reach("pytestmark", node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.names[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.names[head] = head
            if alias.name.split(".")[0] in _REACH_MODULES:
                self._reach(alias.name.split(".")[0], node)
            if alias.name.split(".")[0] in _POOL_MODULES:
                self._add("sys", _POOL, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in ("sys", "pytestmark"):
            self._reach(node.attr, node)
        elif node.attr == "modules" and self._dotted(node.value) != "sys":
            # sys.modules itself is the container scan's; reached from elsewhere, ours.
            self._reach("modules", node)
        # ``sys.intern(fresh) is not fresh`` asks whether a compiled test module holds
        # ``fresh`` as a constant (identifier-like ones are interned): an eleventh red team's
        # oracle, Java's ``intern`` in Python. Gated like a hook: only the gold excuses it.
        if node.attr in _POOL_NAMES and self._dotted(node.value) == "sys":
            self._add("sys", _POOL, node)
        self.generic_visit(node)

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
        self._reached(node)
        self._unseen_bases(node)
        self._computed_bases(node.name, node.bases, node)
        self.generic_visit(node)

    def _computed_bases(self, owner: str, bases: Iterable[ast.expr], node: ast.AST) -> None:
        """A base the host cannot name (``[Version][0]``, ``make_base()``, ``A if c else B``,
        ``*bases``, a walrus): whatever class it is at run time, its comparisons may call what
        this class defines, so the class counts as a hook of each comparison. A name, a
        dotted name, a generic's subscript, ``namedtuple(...)`` (a tuple's comparisons) and
        ``with_metaclass(M, *bases)`` (its bases read in turn) are read as they are."""
        for base in bases:
            why = self._computed(base)
            if why:
                for dunder in sorted(HOOK_DUNDERS):
                    self._add(owner, f"{dunder}/computed base {why}", node)

    def _computed(self, base: ast.expr, depth: int = 0) -> str:
        """Why a base expression names no class the host can read ("" if it does)."""
        if isinstance(base, ast.Subscript):  # Generic[T], UserList[str]
            base = base.value
        root: ast.expr = base
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name):
            # ``B = [Version][0]`` or a parameter, then ``class W(B)``: a name is only as
            # readable as what it was bound to.
            return f"({root.id} = ...)" if root.id in self.computed else ""
        if isinstance(base, ast.Call) and depth < 4:
            func = base.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if callee in ("namedtuple", "NamedTuple", "TypedDict", "NewType"):
                return ""
            if len(base.args) == 3 and isinstance(base.args[1], ast.Tuple | ast.List):
                # A metaclass called as type(name, bases, ns) is: its literal bases read.
                return self._computed_of(base.args[1].elts, depth)
            if callee in ("with_metaclass", "add_metaclass") and not base.keywords:
                return self._computed_of(base.args[1:], depth)
        return f"({_text(base)[:60]})"

    def _computed_of(self, bases: Iterable[ast.expr], depth: int) -> str:
        """Why one of ``bases`` names no class the host can read, or a standard-library base
        whose comparisons the class inherits ("" if none)."""
        for arg in bases:
            inner = self._computed(arg, depth + 1)
            if inner:
                return inner
            dotted = self._dotted(arg)
            if dotted and _stdlib_comparisons(dotted):
                return f"({_text(arg)[:60]})"
        return ""

    def _unseen_bases(self, node: ast.ClassDef) -> None:
        """A base bound by an assignment to a class of an installed package that the host
        was not shown (the supervisor shows the modules of the names a class statement
        inherits from, and an alias is no import): its comparisons cannot be read, so the
        class counts as a hook of each (a seventh red team: ``_Count = Version`` from
        ``setuptools._distutils.version``, then ``class _Minutes(_Count)``)."""
        for base in node.bases:
            if isinstance(base, ast.Subscript):
                base = base.value
            if not isinstance(base, ast.Name) or base.id not in self.aliased:
                continue
            dotted = self.names.get(base.id, "")
            top = dotted.split(".")[0]
            if not dotted or dotted.startswith("builtins.") or top in sys.stdlib_module_names:
                continue
            if self.project is not None and self.project.dotted_class(dotted) is not None:
                continue
            if self.project is not None and self.project.resolve(self.path, base) is not None:
                continue
            for dunder in sorted(HOOK_DUNDERS):
                self._add(node.name, f"{dunder}/unread base {dotted}", node)

    def _reached(self, node: ast.ClassDef) -> None:
        """Hooks through what the class's own and inherited project comparisons call: a
        method of the class they read on the instance, and a helper of this file they call
        (each keyed by the comparison and the name: ``__eq__/_key``)."""
        if self.project is None:
            return
        attrs, helpers = self.project.comparison_calls(self.path, node)
        for dunder, names in sorted(attrs.items()):
            for stmt in node.body:
                defined: list[str] = []
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    defined = [stmt.name]
                elif isinstance(stmt, ast.Assign):
                    defined = [n for t in stmt.targets for n in _names(t)]
                elif isinstance(stmt, ast.AnnAssign):
                    defined = _names(stmt.target)
                for name in defined:
                    if name in names and name not in HOOK_DUNDERS:
                        self._add(node.name, f"{dunder}/{name}", stmt)
        tree = self.project.trees.get(self.path)
        for (where, owner), called in sorted(helpers.items()):
            if where != self.path or tree is None or owner != node.name:
                continue
            for stmt in tree.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in called:
                    self._add(owner, f"helper/{stmt.name}", stmt)

    def _written(self, owner: str, name: str | None, node: ast.AST, *, public: bool = True) -> None:
        """A name written on an object, a namespace or through ``setattr``: a hook when it
        is a comparison, or a method a comparison in reach calls on its instance
        (``public``: a public name too; a dict's key or a call's keyword such as
        ``replace`` is mostly data, so there only a private name counts)."""
        if name in HOOK_DUNDERS:
            self._add(owner, str(name), node)
        elif name and name in self.called and (public or name.startswith("_")):
            self._add(owner, f"called/{name}", node)

    def _targets(
        self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, targets: Iterable[ast.expr]
    ) -> None:
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute):
                    self._written(_text(sub.value), sub.attr, node)
                elif isinstance(sub, ast.Subscript):
                    self._written("?", _const_name(sub.slice), node, public=False)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # A class statement inside reads its bases in this function's scope too.
        outer = self.computed
        self.computed = outer | _computed_names(node)
        self.generic_visit(node)
        self.computed = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        outer = self.computed
        self.computed = outer | _computed_names(node)
        self.generic_visit(node)
        self.computed = outer

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets)
        for target in node.targets:
            pairs: list[tuple[ast.expr, ast.expr]] = [(target, node.value)]
            if isinstance(target, ast.Tuple | ast.List) and isinstance(
                node.value, ast.Tuple | ast.List
            ):
                pairs = list(zip(target.elts, node.value.elts, strict=False))
            for left, right in pairs:
                # ``_Count = distutils.version.Version``, then ``class X(_Count)``: the
                # base is what the name was bound to (a seventh red team's 1.0s).
                if isinstance(left, ast.Name) and isinstance(right, ast.Name | ast.Attribute):
                    dotted = self._dotted(right)
                    if dotted:
                        self.names[left.id] = dotted
                        self.aliased.add(left.id)
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
            self._written(_text(node.args[0]), _const_name(node.args[1]), node)
        if callee == "getattr" and len(node.args) >= 2 and _const_name(node.args[1]) in _POOL_NAMES:
            self._add("sys", _POOL, node)
        if callee in ("import_module", "__import__") and node.args:
            module = _const_name(node.args[0]) or ""
            if module.split(".")[0] in _POOL_MODULES:
                self._add("sys", _POOL, node)
        if callee in ("getattr", "hasattr", "attrgetter") and node.args:
            at = 0 if callee == "attrgetter" else 1
            name = _const_name(node.args[at]) if len(node.args) > at else None
            if name in _REACH_TEXT:
                self._reach(name or "", node)
        for kw in node.keywords:
            # dict(__eq__=f), type(..., **{...}) and friends: a namespace being written.
            self._written("?", kw.arg, node, public=False)
        if callee == "type" and len(node.args) == 3:
            # type(name, bases, namespace): a class, whose bases are read as a class's are.
            self._made_class(node)
        self.generic_visit(node)

    def _made_class(self, node: ast.Call) -> None:
        bases = node.args[1]
        elts = bases.elts if isinstance(bases, ast.Tuple | ast.List) else []
        owner = _const_name(node.args[0]) or "?"
        if not isinstance(bases, ast.Tuple | ast.List):
            # A tuple of bases made elsewhere: which classes it holds is not read here.
            for dunder in sorted(HOOK_DUNDERS):
                self._add(owner, f"{dunder}/computed base ({_text(bases)[:60]})", node)
        self._computed_bases(owner, elts, node)  # a starred element is computed
        for base in elts:
            dotted = self._dotted(base)
            for dunder in _stdlib_comparisons(dotted) if dotted else ():
                self._add(owner, dunder, node)
        if isinstance(node.args[2], ast.Dict):
            for key in node.args[2].keys:
                name = _const_name(key) if key is not None else None
                self._written(owner, name, node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key in node.keys:
            name = _const_name(key) if key is not None else None
            self._written("?", name, node, public=False)
        self.generic_visit(node)


def _scope_nodes(scope: ast.AST) -> Iterable[ast.AST]:
    """The nodes of one scope: a module's or a function's (its parameters included), not
    those of the functions, lambdas and comprehensions nested in it (their names are their
    own), nor a class body's (bases are read in the enclosing scope)."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        yield scope.args
        stack: list[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    else:
        stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stack.extend(node.decorator_list)
            if not isinstance(node, ast.ClassDef):
                stack.extend(d for d in node.args.defaults + node.args.kw_defaults if d)
            else:
                stack.extend(node.bases)
            continue
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp):
            continue
        if isinstance(node, ast.GeneratorExp):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _module_computed_names(tree: ast.Module) -> frozenset[str]:
    """The module scope's computed names (:func:`_computed_names`), with what reaches it from
    inside: a walrus anywhere (in a comprehension it binds the enclosing scope's name), and a
    name a function declares ``global`` or ``nonlocal`` and binds."""
    out = set(_computed_names(tree))
    declared: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.NamedExpr):
            out.update(_names(node.target))
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
    if declared:
        everywhere = {
            n
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for n in _computed_names(node)
        }
        out |= declared & everywhere
    return frozenset(out)


def _computed_names(scope: ast.AST) -> frozenset[str]:
    """Names one scope binds to a value the host cannot name: an assignment of anything but
    a name or a dotted name, a walrus, a loop, ``with ... as``, ``except ... as``, a
    function's parameters, a pattern's capture. (Imports, class statements and aliases name
    what they bind.)"""
    out: set[str] = set()
    for node in _scope_nodes(scope):
        if isinstance(node, ast.Assign):
            if not isinstance(node.value, ast.Name | ast.Attribute) or len(node.targets) > 1:
                pairs = [(t, node.value) for t in node.targets]
                for target, value in pairs:
                    if isinstance(target, ast.Tuple | ast.List) and isinstance(
                        value, ast.Tuple | ast.List
                    ):
                        for left, right in zip(target.elts, value.elts, strict=False):
                            if not isinstance(right, ast.Name | ast.Attribute):
                                out.update(_names(left))
                    else:
                        out.update(_names(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            if not (isinstance(node, ast.AnnAssign) and node.value is None):
                out.update(_names(node.target))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            out.update(_names(node.target))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            out.update(_names(node.optional_vars))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.arguments):
            every = [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg]
            out.update(a.arg for a in every if a is not None)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return frozenset(out)


def _names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (tuples unpacked)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for e in target.elts for n in _names(e)]
    return []


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


def _is_python(path: str | None) -> bool:
    return bool(path) and str(path).endswith((".py", ".pyw", ".pyi"))


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
