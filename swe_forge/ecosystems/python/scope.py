"""Which tests a test patch adds or changes: the tests a task is about.

FAIL_TO_PASS is meant to name the tests that check the fix. A test that fails before the fix
only because its *module* cannot be imported (the test patch added ``from pkg import
new_name`` at the top) fails before and passes after like a real one, and without this
analysis every test of such a module would become FAIL_TO_PASS. The gate keeps as
FAIL_TO_PASS only tests whose definitions the test patch adds or changes.

A test's definition is its function (decorators included, so a new ``parametrize`` case
counts) and the shared parts of each class around it: the class header, class attributes and
non-test methods (``setUp``, fixtures, helpers), which every test of the class runs through.
Module-level code (imports, helpers, fixtures) is *not* part of any one test's definition:
that is exactly the part that makes a whole module fail to import.

Python only, read from the post-patch source with :mod:`ast`; a module that cannot be
analysed (no source, a syntax error) is not filtered and is named in :attr:`unanalysed`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from typing import Any

from swe_forge import pyast
from swe_forge.diffs import (
    DiffParseError,
    PatchApplyError,
    apply_file_patch,
    parse_diff,
    touched_lines,
)
from swe_forge.ecosystems.python.detect import NAMING, TEST_DATA
from swe_forge.mining.classify import PathClassifier


def _test_name(name: str) -> bool:
    # pytest's default python_functions ("test*"); unittest's methods follow the same prefix.
    return name.startswith("test")


@dataclass(frozen=True)
class PatchScope:
    """The tests a test patch defines or changes, by module.

    ``changed``: "path::Class::function" names (no parameters) whose definitions the patch
    adds or changes. ``modules``: the Python test modules the patch touches (post-patch
    paths). ``unanalysed``: touched modules whose post-patch source could not be read or
    parsed, with the reason; their tests are never filtered out.
    """

    modules: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    unanalysed: dict[str, str] = field(default_factory=dict)
    #: "path::Class" -> the classes it derives from, resolved by name within its module (a
    #: test inherited from a base class is that base's test: pytest collects it under the
    #: subclass's node id).
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Test directories whose data-driven tests the patch changes through their case files
    #: alone (it touches no test module): every test under them is the task's.
    data_dirs: frozenset[str] = frozenset()

    def covers(self, node_id: str) -> bool:
        """Does the patch add or change this test's definition (or is its module unknown)?"""
        path, _, rest = node_id.partition("::")
        if path in self.unanalysed or "*" in self.unanalysed:
            return True
        if any(path.startswith(d + "/") for d in self.data_dirs):
            return True
        if path not in self.modules or not rest:
            return False
        # Parameters may hold anything ("::" included); class and function names cannot
        # hold "[".
        qual = rest.split("[", 1)[0]
        *classes, function = qual.split("::")
        return self._covers(f"{path}::{'::'.join(classes)}" if classes else path, function, 0)

    def _covers(self, owner: str, function: str, depth: int) -> bool:
        # The test's own definition, or a shared part of a class around it.
        if f"{owner}::{function}" in self.changed:
            return True
        prefix = owner
        while "::" in prefix:
            if prefix in self.changed:
                return True
            prefix = prefix.rsplit("::", 1)[0]
        # Inherited tests: the base class's definition (depth-capped against odd cycles).
        return depth < 20 and any(
            self._covers(base, function, depth + 1) for base in self.bases.get(owner, ())
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data for a manifest."""
        return {
            "modules": sorted(self.modules),
            "changed": sorted(self.changed),
            "unanalysed": dict(sorted(self.unanalysed.items())),
            **({"data_dirs": sorted(self.data_dirs)} if self.data_dirs else {}),
        }


def _start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _hit(node: ast.stmt, lines: set[int]) -> bool:
    end = node.end_lineno or node.lineno
    return any(n in lines for n in range(_start(node), end + 1))


def _walk(
    body: Iterable[ast.stmt],
    prefix: str,
    lines: set[int],
    out: set[str],
    in_class: bool,
    classes: dict[str, list[str]],
) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _test_name(node.name) and _hit(node, lines):
                out.add(f"{prefix}::{node.name}")
            elif in_class and _hit(node, lines):
                # A setUp, fixture or helper method: every test of the class runs through it.
                out.add(prefix)
        elif isinstance(node, ast.ClassDef):
            name = f"{prefix}::{node.name}"
            first = node.body[0].lineno if node.body else node.lineno + 1
            header = range(_start(node), max(node.lineno, first - 1) + 1)
            if any(n in lines for n in header):
                out.add(name)
            classes[name] = [_base_name(b) for b in node.bases]
            _walk(node.body, name, lines, out, True, classes)
        elif in_class and _hit(node, lines):
            out.add(prefix)  # a class attribute (markers, parameters) shared by its tests


def _base_name(node: ast.expr) -> str:
    # `Base`, `mod.Base` and `Base[T]` all name the class `Base`.
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def changed_tests(
    path: str, source: bytes, lines: set[int]
) -> tuple[set[str], dict[str, tuple[str, ...]]]:
    """The "path::Class::function" names whose definitions touch ``lines`` of ``source``,
    and each class's bases that are classes of the same module.

    Raises:
        SyntaxError: the source is not Python this interpreter parses.
    """
    tree = pyast.parse(source, filename=path)
    out: set[str] = set()
    classes: dict[str, list[str]] = {}
    _walk(tree.body, path, lines, out, False, classes)
    by_name: dict[str, list[str]] = {}
    for qual in classes:
        by_name.setdefault(qual.rsplit("::", 1)[1], []).append(qual)
    bases = {
        qual: tuple(b for name in names for b in by_name.get(name, ()) if b != qual)
        for qual, names in classes.items()
    }
    return out, {k: v for k, v in bases.items() if v}


def data_test_dirs(paths: Iterable[str], classifier: PathClassifier) -> list[str]:
    """The test directories of data-driven tests whose case files ``paths`` change.

    A test patch that changes only a JSON or YAML case file under ``tests/`` (and no test
    module) changes the tests that read it: a module of that test tree loads the file, at
    collection (``parametrize``) or at run time, and which one cannot be told from the patch.
    The tree is the top-most test directory on the file's path (``tests/``, ``pkg/tests/``),
    as :func:`~swe_forge.ecosystems.python.runner.protect_spec` locks it: pytest runs its
    modules. Empty when a path is a test module (the patch's modules are the tests) or when
    no path is a case file.
    """
    dirs: set[str] = set()
    for path in paths:
        if classifier.is_test_module(path):
            return []
        name = path.rsplit("/", 1)[-1]
        if not classifier.is_test(path) or not any(fnmatch(name.lower(), g) for g in TEST_DATA):
            continue
        if name.lower() in {f.lower() for f in NAMING.runner_files + NAMING.test_config_files}:
            continue
        parts = path.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if classifier.is_test(prefix + "/x"):
                dirs.add(prefix)
                break
    return sorted(dirs)


def patch_scope(
    test_patch: str,
    read_base: Callable[[str], bytes | None] | None,
    is_test_module: Callable[[str], bool],
    data_dirs: Iterable[str] = (),
) -> PatchScope:
    """Analyse a test patch: the tests it adds or changes in each Python test module.

    ``read_base(path)`` returns a file's content at the base commit (None when absent);
    without it, only files the patch creates can be analysed. ``data_dirs``: the test
    directories of data-driven tests the patch changes (:func:`data_test_dirs`).
    """
    try:
        parsed = parse_diff(test_patch)
    except DiffParseError as exc:
        return PatchScope(unanalysed={"*": f"the test patch is not a readable diff: {exc}"})
    modules: set[str] = set()
    changed: set[str] = set()
    bases: dict[str, tuple[str, ...]] = {}
    unanalysed: dict[str, str] = {}
    for fp in parsed:
        path = fp.new_path
        if not path or not path.endswith(".py") or not is_test_module(path):
            continue
        modules.add(path)
        original = b"" if fp.old_path is None else read_base(fp.old_path) if read_base else None
        if original is None:
            unanalysed[path] = (
                f"{fp.old_path} is not in the base commit"
                if read_base
                else "the base source is not at hand"
            )
            continue
        try:
            source = apply_file_patch(original, fp)
            found, module_bases = changed_tests(path, source, touched_lines(fp))
        except (PatchApplyError, SyntaxError, ValueError) as exc:
            unanalysed[path] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        changed |= found
        bases.update(module_bases)
    return PatchScope(
        frozenset(modules), frozenset(changed), unanalysed, bases, frozenset(data_dirs)
    )
