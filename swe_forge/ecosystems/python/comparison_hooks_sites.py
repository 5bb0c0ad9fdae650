"""The comparison hooks of one Python file, on its syntax tree (see
:mod:`swe_forge.ecosystems.python.comparison_hooks`): :class:`Hook`, the visitor that finds
them per class (definitions, assignments, ``setattr``, namespaces, bases inherited or computed
at run time), and the names a scope binds to values the host cannot name.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from swe_forge.ecosystems.python.comparison_hooks_project import (
    HOOK_DUNDERS,
    Project,
    _const_name,
    _names,
    _stdlib_comparisons,
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


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # an unparsable fragment names no owner
        return "?"


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
