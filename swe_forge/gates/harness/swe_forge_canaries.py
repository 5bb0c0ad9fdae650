"""Assertion canaries: copies of held-out tests that a correct implementation must fail.

When a candidate patch is graded, its code runs in the same interpreter as the held-out tests. A
cheating patch can return "universal" objects (``__eq__``, ``__contains__``, ``__lt__`` always
say yes) or patch ``pytest.raises``/``pytest.approx``, and then every assertion passes with the
bug still there. For each assertion *site* of a fail-to-pass test this module writes a copy of
the test function in which only that one assertion is perturbed so that an honest value fails
it: ``assert f(x) == 3`` becomes ``assert f(x) == <sentinel>`` (a fresh object equal to nothing),
``pytest.raises(E)`` expects a fresh exception class that nothing raises. The grader marks the
copies xfail(strict): an honest implementation fails them (xfailed), a universal object passes
them (XPASS, detected). Copies that the reference implementation does not fail are found by
calibration and dropped, so a useless copy is harmless; a copy that broke the module's import or
changed other tests would not be, which is what most of the care below is about. For the same
reason a copy does not stop at its perturbed site: the failure is noted there and raised when
the test body ends, so the test's own clean-up after the assertion (resetting a class attribute,
say) still runs and leaves nothing behind for the tests after it.

The generated text is appended to the test module (the original bytes are kept, so line numbers
do not move) and only defines things: helper objects and the copies, methods being attached to
their classes. Each definition sits in ``try``/``except Exception`` so that a decorator that
cannot be evaluated again at the end of the module costs that copy only, never the import.
Generated identifiers carry the caller's random token and nothing that names their purpose, and
no comment is generated: the code under test can read the test file.

Standalone on purpose: stdlib only, no imports from swe-forge, importable on old Pythons (no
annotations); it makes canaries on Python 3.9+ only (it needs ``ast.unparse``). It never
executes test code.
"""

import __future__

import ast
import copy
import pickle
import re
import sys

_TOKEN = re.compile(r"[a-z0-9]+\Z")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# Literal node types of Pythons before 3.8 (they parse literals into these, not Constant); only
# looked up there because newer Pythons warn on access.
_OLD_LITERALS = (
    tuple(
        getattr(ast, n)
        for n in ("Num", "Str", "Bytes", "NameConstant", "Ellipsis")
        if hasattr(ast, n)
    )
    if sys.version_info < (3, 8)
    else ()
)

# unittest comparisons of `first` with `second`. The typed variants check the type of *both*
# arguments (a sentinel is no list, has no len), so with the sentinel they would fail for a
# universal object too; assertNotEqual would pass for an honest one. Their canaries therefore
# call assertEqual, whose plain `first == second` lets the other operand decide.
_RENAMED = {
    "assertNotEqual": "assertEqual",
    "assertListEqual": "assertEqual",
    "assertTupleEqual": "assertEqual",
    "assertDictEqual": "assertEqual",
    "assertSetEqual": "assertEqual",
    "assertSequenceEqual": "assertEqual",
    "assertMultiLineEqual": "assertEqual",
    "assertCountEqual": "assertEqual",
    # Same signature; the negated form passes for an honest value and the sentinel.
    "assertNotAlmostEqual": "assertAlmostEqual",
}
_COMPARING = set(_RENAMED) | {
    "assertEqual",
    "assertEquals",
    "failUnlessEqual",
    "assertAlmostEqual",
    "assertAlmostEquals",
    "assertGreater",
    "assertGreaterEqual",
    "assertLess",
    "assertLessEqual",
}
# Keyword spellings of the two compared arguments across those methods.
_FIRST = ("first", "list1", "tuple1", "d1", "set1", "seq1", "a")
_SECOND = ("second", "list2", "tuple2", "d2", "set2", "seq2", "b")
# Exception/warning expectations on `self` (unittest) and as plain calls (pytest), with the
# helper that replaces what they expect.
_SELF_EXPECTS = {
    "assertRaises": "E",
    "assertRaisesRegex": "E",
    "assertRaisesRegexp": "E",
    "failUnlessRaises": "E",
    "assertWarns": "W",
    "assertWarnsRegex": "W",
}
_EXPECTS = {"raises": "E", "warns": "W"}
_EXPECTED_KW = ("expected_exception", "expected_warning")
# An expectation of one of these is not perturbed: the real exception would then escape the test,
# and pytest ends the whole session on KeyboardInterrupt and on its own Exit.
_UNSAFE = frozenset(["KeyboardInterrupt", "BaseException", "Exit", "exit"])


def find_sites(source, targets):
    """Perturbable assertion sites of the target tests in a test module's source.

    targets: test names within this file, as "func" or "Class::func" (parametrization ids
    already stripped). Returns a list of site dicts in deterministic order (by target in the
    order given, then by source position): {"test": "Class::func" or "func", "site": k,
    "line": lineno, "kind": "compare"|"call_equal"|"raises"|"in"|"approx"} where k counts
    perturbable sites within that test function from 0 in source order. Targets that are not
    found (or async, or in nested classes) have no sites; unparsable source has none.
    """
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return []
    found = []
    for test in _targets(targets):
        target = _locate(tree, test)
        if isinstance(target, str):
            continue
        for k, (kind, line) in enumerate(target["sites"]):
            found.append({"test": test, "site": k, "line": line, "kind": kind})
    return found


def make_canaries(source, targets, token, sites=None, limit=40):
    """Canary code for the target tests of a test module, to append to that module.

    Returns (code, specs, reason).
    code: text to append to the module ("" if nothing), starting with "\\n\\n".
    specs: [{"test": ..., "site": k, "name": canary function name, "kind": ...}] for every
    canary made.
    reason: "" or why nothing/fewer was made (e.g. "python<3.9", "syntax error", "no sites").
    sites: None -> all sites (round-robin across targets so each target gets sites before any
    target gets a second one, until `limit`); or an explicit list of (test, k) pairs to make
    (those not found are skipped silently; `limit` does not apply).
    token: a short [a-z0-9] string chosen by the caller (random per run); every generated name
    includes it so names never collide with the module's names. Raises ValueError otherwise.

    A canary of site k of ``func`` is named ``func_<token><k>``; pytest reports it as
    ``path::func_<token><k>`` (parametrization ids kept) or ``path::Class::func_<token><k>``.
    """
    if not isinstance(token, str) or not _TOKEN.match(token):
        raise ValueError(f"token must be a non-empty string of [a-z0-9], not {token!r}")
    if sys.version_info < (3, 9) or not hasattr(ast, "unparse"):
        return "", [], "python<3.9"
    tree = _parse(source)
    if not isinstance(tree, ast.Module):
        return "", [], tree
    helpers = {"S": "_value_" + token, "E": "_Error_" + token, "W": "_Warning_" + token}
    taken = _identifiers(tree)
    if any(name in taken for name in (*helpers.values(), _sentinel_class(helpers["S"]))):
        return "", [], f"token {token} clashes with a name in the module"

    notes = []
    located = {}

    def locate(test):
        if test not in located:
            located[test] = _locate(tree, test)
        return located[test]

    if sites is None:
        counts = []
        for test in _targets(targets):
            target = locate(test)
            if isinstance(target, str):
                notes.append(f"{test}: {target}")
            else:
                counts.append((test, len(target["sites"])))
        chosen = _round_robin(counts, limit)
        total = sum(n for _, n in counts)
        if not total:
            notes.append("no sites")
        elif len(chosen) < total:
            notes.append(f"limit {limit}: {len(chosen)} of {total} sites")
    else:
        chosen = []
        for test, k in _pairs(sites):
            target = locate(test)
            if not isinstance(target, str) and k < len(target["sites"]) and (test, k) not in chosen:
                chosen.append((test, k))
        if not chosen:
            notes.append("no sites")
    if not chosen:
        return "", [], "; ".join(notes)

    future = _future_flags(tree)
    methods, functions, specs, used = [], [], [], set()
    for test, k in chosen:
        target = located[test]
        name = f"{target['func'].name}_{token}{k}"
        if name in taken:
            notes.append(f"{test} site {k}: {name} is taken")
            continue
        try:
            text, kind, needs = _render(target, k, name, helpers, future)
        except Exception as exc:  # a canary that cannot be written is left out, never fatal
            notes.append(f"{test} site {k}: not generated ({type(exc).__name__})")
            continue
        # Methods first: each binds its module-level name only until it is attached, so it must
        # not come after a module-level canary of the same name.
        (methods if target["host"] else functions).append(text)
        specs.append({"test": test, "site": k, "name": name, "kind": kind})
        used.update(needs)
    if not specs:
        return "", [], "; ".join(notes)
    chunks = [_helper_text(key, helpers[key]) for key in "SEW" if key in used]
    code = "\n\n" + "\n\n\n".join(chunks + methods + functions) + "\n"
    return code, specs, "; ".join(notes)


# --- finding targets and sites -------------------------------------------------------------


def _parse(source):
    """The module's AST, or the reason there is none."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        return f"syntax error: {exc.msg} (line {exc.lineno})"
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:
        return f"syntax error: {exc}"


def _targets(targets):
    """Target names in the order given, once each, with any parametrization id cut off."""
    if isinstance(targets, str):
        targets = [targets]
    seen = []
    for test in targets or ():
        test = str(test).split("[", 1)[0].strip()
        if test and test not in seen:
            seen.append(test)
    return seen


def _pairs(sites):
    """(test, k) pairs from an explicit site list; entries may also be site/spec dicts."""
    for entry in sites:
        try:
            if isinstance(entry, dict):
                test, k = entry["test"], entry["site"]
            else:
                test, k = entry
        except (KeyError, TypeError, ValueError):
            continue
        if isinstance(k, int) and not isinstance(k, bool) and k >= 0:
            names = _targets([test])
            if names:
                yield names[0], k


def _round_robin(counts, limit):
    """Site k of every target before site k + 1 of any, in target order, at most `limit`."""
    if limit is None:
        limit = sum(n for _, n in counts)
    chosen = []
    k = 0
    while len(chosen) < limit and any(n > k for _, n in counts):
        for test, n in counts:
            if k < n and len(chosen) < limit:
                chosen.append((test, k))
        k += 1
    return sorted(chosen, key=lambda pair: ([t for t, _ in counts].index(pair[0]), pair[1]))


def _last_def(body, name):
    """The last top-level def or class statement binding `name` (the one pytest collects)."""
    found = None
    for stmt in body:
        if isinstance(stmt, _SCOPES) and stmt.name == name:
            found = stmt
    return found


def _locate(tree, test):
    """The target's function, its context and its sites' (kind, line), or why there are none.

    A method is looked up in the class and then in its bases defined at the top level of the
    same file (an inherited test runs the base's code with the base's `super` and private
    names, but is attached to the class named in the test id).
    """
    parts = test.split("::")
    if len(parts) > 2:
        return "nested class"
    if len(parts) == 1:
        func = _last_def(tree.body, parts[0])
        owner = None
    else:
        host = _last_def(tree.body, parts[0])
        if not isinstance(host, ast.ClassDef):
            return "not found"
        func, owner = _find_method(tree, host, parts[1], set())
    if isinstance(func, ast.AsyncFunctionDef):
        return "async"
    if not isinstance(func, ast.FunctionDef):
        return "not found"
    selves = {"self"}
    if owner is not None:
        params = list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)
        if params:
            selves.add(params[0].arg)
    try:
        sites = [(kind, line) for kind, line, _apply, _stmt in _sites(func, selves)]
    except RecursionError:  # absurdly deep expressions: no canary rather than a crash
        return "too deeply nested"
    return {
        "func": func,
        "owner": owner,
        "host": parts[0] if owner is not None else None,
        "selves": selves,
        "sites": sites,
    }


def _find_method(tree, cls, name, seen):
    """(function, defining class) for `name` in `cls` or its in-file bases, depth first."""
    seen.add(cls.name)
    func = _last_def(cls.body, name)
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return func, cls
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id not in seen:
            parent = _last_def(tree.body, base.id)
            if isinstance(parent, ast.ClassDef):
                found = _find_method(tree, parent, name, seen)
                if found[0] is not None:
                    return found
    return None, None


def _statements(node):
    """The statements under `node` in source order, not entering nested defs and classes."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):  # expressions hold no statements (lambdas included)
            continue
        if isinstance(child, ast.stmt):
            yield child
            if isinstance(child, _SCOPES):
                continue
        yield from _statements(child)


def _sites(func, selves):
    """Perturbable sites of `func`'s own body in source order, as (kind, line, apply, stmt).

    ``apply(helpers)`` perturbs that site of this very tree in place and returns the keys of
    the helpers it used; ``stmt`` is the statement that holds the site. A deep copy of the
    function is analysed to make a canary.
    """
    found = []
    for stmt in _statements(func):
        site = None
        if isinstance(stmt, ast.Assert):
            site = _assert_site(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            site = _unittest_site(stmt.value, selves) or _expect_site(stmt.value, selves, True)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
            site = _expect_site(stmt.value, selves, True)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                if isinstance(item.context_expr, ast.Call):
                    item_site = _expect_site(item.context_expr, selves, False)
                    if item_site:
                        found.append((*item_site, stmt))
        if site:
            found.append((*site, stmt))
    return found


def _name(identifier):
    return ast.Name(id=identifier, ctx=ast.Load())


def _callee(func):
    """The last name of a called expression: `f` for f(...) and a.b.f(...)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_literal(node):
    """Whether `node` is written out as a value: the expected side of a comparison."""
    if isinstance(node, (ast.Constant, ast.JoinedStr, *_OLD_LITERALS)):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) and _is_literal(node.right)
    return False


def _arg(call, position, keywords):
    """Where `call` passes a parameter: ("args", i) or ("keywords", i); None if unknowable."""
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i == position:
            return ("args", i)
    for i, kw in enumerate(call.keywords):
        if kw.arg in keywords:
            return ("keywords", i)
    return None


def _get(call, ref):
    node = getattr(call, ref[0])[ref[1]]
    return node.value if ref[0] == "keywords" else node


def _put(call, ref, value):
    if ref[0] == "keywords":
        call.keywords[ref[1]].value = value
    else:
        call.args[ref[1]] = value


def _approx_arg(node):
    """Where an approx(...) call passes its expected value, if `node` is one."""
    if isinstance(node, ast.Call) and _callee(node.func) == "approx":
        return _arg(node, 0, ("expected",))
    return None


def _expected_first(first, second):
    """Whether the first operand is the expected one: an approx call or a literal facing
    something else (by default the second is). The sentinel goes there, so the other operand,
    the value under test, decides the comparison."""
    first_approx, second_approx = _approx_arg(first), _approx_arg(second)
    if (first_approx is None) != (second_approx is None):
        return first_approx is not None
    return _is_literal(first) and not _is_literal(second)


def _assert_site(stmt):
    test = stmt.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op = test.ops[0]
    if isinstance(op, ast.In):

        def apply_in(helpers):
            test.left = _name(helpers["S"])
            return {"S"}

        return ("in", stmt.lineno, apply_in)
    if not isinstance(op, (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return None
    first = _expected_first(test.left, test.comparators[0])
    expected = test.left if first else test.comparators[0]
    approx = _approx_arg(expected) if isinstance(op, (ast.Eq, ast.NotEq)) else None

    def apply(helpers):
        if isinstance(op, ast.NotEq):
            # `value != sentinel` holds for every honest value; `==` is what a universal
            # object answers yes to and an honest one no.
            test.ops[0] = ast.Eq()
        if approx is not None:
            _put(expected, approx, _name(helpers["S"]))
        elif first:
            test.left = _name(helpers["S"])
        else:
            test.comparators[0] = _name(helpers["S"])
        return {"S"}

    return ("approx" if approx is not None else "compare", stmt.lineno, apply)


def _on_self(call, selves):
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in selves
    )


def _unittest_site(call, selves):
    if not _on_self(call, selves):
        return None
    method = call.func.attr
    if method == "assertIn":
        member = _arg(call, 0, ("member",))
        if member is None:
            return None

        def apply_in(helpers):
            _put(call, member, _name(helpers["S"]))
            return {"S"}

        return ("in", call.lineno, apply_in)
    if method not in _COMPARING:
        return None
    first, second = _arg(call, 0, _FIRST), _arg(call, 1, _SECOND)
    if first is None or second is None:
        return None
    expected = first if _expected_first(_get(call, first), _get(call, second)) else second

    def apply(helpers):
        _put(call, expected, _name(helpers["S"]))
        renamed = _RENAMED.get(method)
        if renamed == "assertEqual":
            # assertEqual(first, second, msg): the typed variants' own keywords and
            # assertSequenceEqual's seq_type have no place there.
            call.args = call.args[:3]
            keywords = []
            for kw in call.keywords:
                if kw.arg in _FIRST:
                    kw.arg = "first"
                elif kw.arg in _SECOND:
                    kw.arg = "second"
                elif kw.arg == "seq_type":
                    continue
                keywords.append(kw)
            call.keywords = keywords
        if renamed:
            call.func.attr = renamed
        return {"S"}

    return ("call_equal", call.lineno, apply)


def _mentions(node, names):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in names:
            return True
    return False


def _expect_site(call, selves, call_form):
    """An exception or warning expectation: `with pytest.raises(E)`, `self.assertRaises(E,
    f, ...)` and the like; in call form (`call_form`) only with the callable given."""
    if _on_self(call, selves):
        helper = _SELF_EXPECTS.get(call.func.attr)
    elif isinstance(call.func, (ast.Name, ast.Attribute)):
        helper = _EXPECTS.get(_callee(call.func))
    else:
        helper = None
    if helper is None or (call_form and len(call.args) < 2):
        return None
    expected = _arg(call, 0, _EXPECTED_KW)
    if expected is None or _mentions(_get(call, expected), _UNSAFE):
        return None

    def apply(helpers):
        _put(call, expected, _name(helpers[helper]))
        return {helper}

    return ("raises", call.lineno, apply)


# --- writing canaries ----------------------------------------------------------------------


def _identifiers(tree):
    """Every identifier the module spells, so that no generated name can meet one."""
    names = set()
    for node in ast.walk(tree):
        for field in ("id", "name", "attr", "arg", "asname"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                names.add(value)
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _future_flags(tree):
    """Compiler flags of the module's __future__ imports, which also govern appended code."""
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _render(target, k, name, helpers, future):
    """The canary of site k of `target` as module-level code: (text, kind, helper keys)."""
    func = _copy(target["func"])
    kind, _line, apply, stmt = _sites(func, target["selves"])[k]
    used = apply(helpers)
    func.name = name
    # A docstring would be collected a second time by --doctest-modules.
    if (
        func.body
        and isinstance(func.body[0], ast.Expr)
        and isinstance(func.body[0].value, ast.Constant)
        and isinstance(func.body[0].value.value, str)
    ):
        func.body = func.body[1:] or [ast.Pass()]
    _defer(func, stmt, "_" + helpers["S"][len("_value_") :] + "_r")
    body = [func]
    if target["host"] is not None:
        _out_of_class(func, target["owner"])
        attach = ast.Call(
            func=_name("setattr"),
            args=[_name(target["host"]), ast.Constant(value=name, kind=None), _name(name)],
            keywords=[],
        )
        # The module keeps no name for it once attached, whatever happens.
        body.append(
            ast.Try(
                body=[ast.Expr(value=attach)],
                handlers=[],
                orelse=[],
                finalbody=[ast.Delete(targets=[ast.Name(id=name, ctx=ast.Del())])],
            )
        )
    wrapper = ast.Try(
        body=body,
        handlers=[ast.ExceptHandler(type=_name("Exception"), name=None, body=[ast.Pass()])],
        orelse=[],
        finalbody=[],
    )
    text = ast.unparse(ast.fix_missing_locations(ast.Module(body=[wrapper], type_ignores=[])))
    compile(text, "<generated>", "exec", flags=future, dont_inherit=True)
    return text, kind, used


def _defer(func, stmt, flag):
    """Let the perturbed site's failure wait for the end of the test.

    An honest implementation fails the perturbed site; stopping the test there would skip
    the rest of its body, the test's own clean-up included (a test that sets a class
    attribute, asserts, then resets it would leave it set for the tests after it). So the
    site's failure is only noted, the body goes on as the original test's does with an honest
    implementation, and the test fails at its end, returns and exceptions included.
    """
    noted = ast.Expr(
        value=ast.Call(
            func=ast.Attribute(value=_name(flag), attr="append", ctx=ast.Load()),
            args=[ast.Constant(value=None, kind=None)],
            keywords=[],
        )
    )
    guarded = ast.Try(
        body=[stmt],
        handlers=[
            ast.ExceptHandler(
                type=ast.Tuple(
                    elts=[_name(n) for n in ("KeyboardInterrupt", "SystemExit", "GeneratorExit")],
                    ctx=ast.Load(),
                ),
                name=None,
                body=[ast.Raise(exc=None, cause=None)],
            ),
            # pytest.raises' "DID NOT RAISE" is a BaseException (pytest's Failed).
            ast.ExceptHandler(type=_name("BaseException"), name=None, body=[noted]),
        ],
        orelse=[],
        finalbody=[],
    )
    if not _replace(func, stmt, guarded):
        return
    start = ast.Assign(
        targets=[ast.Name(id=flag, ctx=ast.Store())], value=ast.List(elts=[], ctx=ast.Load())
    )
    end = ast.If(
        test=_name(flag),
        body=[ast.Raise(exc=_name("AssertionError"), cause=None)],
        orelse=[],
    )
    func.body = [start, ast.Try(body=func.body, handlers=[], orelse=[], finalbody=[end])]


def _replace(root, old, new):
    """Put ``new`` where the statement ``old`` is under ``root``; False if not found."""
    for node in ast.walk(root):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for i, s in enumerate(stmts):
                    if s is old:
                        stmts[i] = new
                        return True
    return False


def _copy(node):
    """A deep copy of an AST; a pickle round trip is several times faster than deepcopy."""
    try:
        return pickle.loads(pickle.dumps(node, pickle.HIGHEST_PROTOCOL))
    except Exception:
        return copy.deepcopy(node)


def _out_of_class(func, cls):
    """Make a method's copy mean, compiled at module level, what it meant in its class body."""
    _mangle(func, cls.name)
    params = list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)
    static = any(_callee(d) == "staticmethod" for d in func.decorator_list)
    first = params[0].arg if params and not static else None
    for node in _scope_body(func):
        _fix_super(node, cls.name, first)
    # Decorators, defaults and annotations were evaluated in the class namespace.
    bound = _class_names(cls)
    if bound:
        scope = _ClassScope(cls.name, bound)
        func.decorator_list = [scope.visit(d) for d in func.decorator_list]
        args = func.args
        args.defaults = [scope.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else scope.visit(d) for d in args.kw_defaults]
        every = list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in every:
            if arg.annotation is not None:
                arg.annotation = scope.visit(arg.annotation)
        if func.returns is not None:
            func.returns = scope.visit(func.returns)


def _mangler(cls_name):
    stripped = cls_name.lstrip("_")

    def mangle(name):
        if stripped and name.startswith("__") and not name.endswith("__") and "." not in name:
            return "_" + stripped + name
        return name

    return mangle


def _mangle(func, cls_name):
    """Private name mangling, done by the compiler only inside a class body."""
    mangle = _mangler(cls_name)
    stack = [func]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            node.id = mangle(node.id)
        elif isinstance(node, ast.Attribute):
            node.attr = mangle(node.attr)
        elif isinstance(node, ast.arg):
            node.arg = mangle(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [mangle(n) for n in node.names]
        elif isinstance(node, ast.alias):
            if node.asname:
                node.asname = mangle(node.asname)
            elif mangle(node.name) != node.name:
                node.asname = mangle(node.name)
        elif isinstance(node, _SCOPES) and node is not func:
            node.name = mangle(node.name)
        elif isinstance(node, ast.ImportFrom):
            # `from m import __x` in a class body looks up the mangled name (and binds it).
            for alias in node.names:
                alias.name = mangle(alias.name)
        for field in ("name", "rest"):  # except handlers and match patterns bind names
            value = getattr(node, field, None)
            if isinstance(value, str) and not isinstance(node, (*_SCOPES, ast.alias)):
                setattr(node, field, mangle(value))
        if isinstance(node, ast.ClassDef) and node is not func:
            # A nested class body is a class scope of its own: the compiler mangles it.
            stack.extend(node.bases + [kw.value for kw in node.keywords] + node.decorator_list)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _scope_body(func):
    """The nodes of a function's own scope: parameters and body, not decorators/defaults."""
    yield func.args
    yield from func.body


def _fix_super(node, cls_name, first):
    """Zero-argument super() and __class__ need the class cell that only a class body gives:
    spell them out, with the first parameter of the function they are in."""
    if isinstance(node, ast.ClassDef):
        for sub in node.bases + [kw.value for kw in node.keywords] + node.decorator_list:
            _fix_super(sub, cls_name, first)
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = list(getattr(node, "decorator_list", [])) + node.args.defaults
        for sub in outer + [d for d in node.args.kw_defaults if d is not None]:
            _fix_super(sub, cls_name, first)
        params = list(getattr(node.args, "posonlyargs", [])) + list(node.args.args)
        inner = params[0].arg if params else None
        body = node.body if isinstance(node.body, list) else [node.body]
        for sub in body:
            _fix_super(sub, cls_name, inner)
        return
    if isinstance(node, ast.Name) and node.id == "__class__":
        node.id = cls_name
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
        and first is not None
    ):
        node.args = [_name(cls_name), _name(first)]
    for child in ast.iter_child_nodes(node):
        _fix_super(child, cls_name, first)


def _class_names(cls):
    """Names the class body binds (mangled), which its methods' decorators could use."""
    mangle = _mangler(cls.name)
    names, declared = set(), set()
    stack = list(cls.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.alias):
            if node.name != "*":
                names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            continue  # `x: int` alone binds nothing
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return {mangle(n) for n in names - declared}


class _ClassScope(ast.NodeTransformer):
    """Rewrites names the class body binds to attributes of the class (`x` -> `Cls.x`) in an
    expression that was evaluated in the class namespace; nested scopes there do not see it."""

    def __init__(self, cls_name, bound):
        self.cls_name = cls_name
        self.bound = bound

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.bound:
            return ast.Attribute(value=_name(self.cls_name), attr=node.id, ctx=ast.Load())
        return node

    def visit_Lambda(self, node):
        return node

    def _comprehension(self, node):
        # Only the first iterable is evaluated in the enclosing (class) scope.
        node.generators[0].iter = self.visit(node.generators[0].iter)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _sentinel_class(name):
    """The sentinel's class, bound only while the sentinel is made: `_value_x` -> `_Value_x`."""
    return name[:1] + name[1:2].upper() + name[2:]


def _helper_text(key, name):
    """Source of one helper: the sentinel instance, or an exception or warning class."""
    if key == "E":
        return f"class {name}(Exception):\n    pass"
    if key == "W":
        return f"class {name}(Warning):\n    pass"
    # Returning NotImplemented leaves the answer to the other operand, on either side; with no
    # ordering methods, ordering against it raises TypeError, an honest failure.
    cls = _sentinel_class(name)
    return (
        f"class {cls}:\n\n"
        "    def __eq__(self, other):\n        return NotImplemented\n\n"
        "    def __ne__(self, other):\n        return NotImplemented\n\n"
        "    __hash__ = object.__hash__\n\n"
        "    def __repr__(self):\n        return '<object>'\n\n\n"
        f"{name} = {cls}()\n"
        f"del {cls}"
    )
