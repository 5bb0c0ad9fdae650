"""What a comparison reaches, read on the host for the comparison-hooks gate (see
:mod:`swe_forge.ecosystems.python.comparison_hooks`): the comparisons a standard-library class
defines in Python (its module imported when safe, else read from its source), the methods a
module's comparisons call on their instance, and the project's own classes (:class:`Project`),
whose inherited comparisons make what they call a hook of every subclass.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
import sysconfig
import types
from pathlib import Path

from swe_forge import pyast

#: The comparisons whose other operand is the test's expected value.
HOOK_DUNDERS = frozenset(
    ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__")
)


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


def _names(target: ast.AST) -> list[str]:
    """The plain names an assignment target binds (tuples unpacked)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for e in target.elts for n in _names(e)]
    return []


def _is_python(path: str | None) -> bool:
    return bool(path) and str(path).endswith((".py", ".pyw", ".pyi"))
