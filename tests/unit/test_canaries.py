"""Decoys and calibration copies, checked on the generated code alone: which assertion sites
are found, how each is perturbed in place (one literal of the same type and form, or the
runtime perturbation of the same type), that a calibration copy perturbs exactly as the decoy
does, and that the generated code compiles, defines only what it must and is deterministic.
Running them under pytest is in tests/integration/test_canaries_pytest.py."""

from __future__ import annotations

import ast
import collections
import dataclasses
import enum
import random
from typing import Any

import pytest

from swe_forge.gates.harness import swe_forge_canaries as canaries
from swe_forge.gates.harness.swe_forge_canaries import decoy_source, find_sites, make_canaries

TOKEN = "t0k"
S, E = f"_value_{TOKEN}", f"_error_{TOKEN}"

SOURCE = '''\
import unittest
import warnings

import pytest


def double(x):
    return 2 * x


@pytest.fixture
def value():
    return 21


def test_plain(value):
    """Doubles."""
    assert double(value) == 42
    assert 42 == double(value)
    assert double(value) != 0
    assert double(1) < 3
    assert 2 in [double(1)]
    assert 3 not in [double(1)]
    assert double(1) is not None
    assert double(1)
    assert 1 < double(1) < 3
    for n in range(2):
        if n:
            assert double(n) >= n

    def nested():
        assert double(1) == 2

    check = lambda: double(1) == 2
    check()
    nested()


def test_expectations():
    with pytest.raises(ValueError, match="invalid"):
        int("bad")
    with pytest.raises((ValueError, TypeError)):
        int("x")
    pytest.raises(ValueError, int, "x")
    pytest.raises(ValueError)
    with pytest.raises(KeyboardInterrupt):
        raise KeyboardInterrupt
    with pytest.warns(UserWarning):
        warnings.warn("w", UserWarning)
    assert double(0.1) == pytest.approx(0.2)
    assert pytest.approx(0.2) == double(0.1)


@pytest.mark.parametrize("x,expected", [(1, 2), (2, 4)])
def test_param(x, expected):
    assert double(x) == expected


async def test_async():
    assert double(3) == 6


class TestPlain:
    LIMITS = [1, 2]

    @pytest.mark.parametrize("limit", LIMITS)
    def test_method(self, limit):
        assert double(limit) >= limit
        assert double(limit) in range(5)

    @pytest.mark.parametrize("twice", [n * 2 for n in LIMITS])
    def test_comprehension(self, twice):
        assert double(twice // 2) == twice

    class TestNested:
        def test_inner(self):
            assert double(1) == 2


class TestUnit(unittest.TestCase):
    def setUp(self):
        self.__cache = double(21)

    def test_calls(self):
        self.assertEqual(double(1), 2)
        self.assertEqual(double(1), second=2)
        self.assertIn(2, [double(1)])
        self.assertListEqual([double(1)], [2])
        self.assertNotEqual(double(2), 3)
        self.assertAlmostEqual(double(0.1), 0.2)
        self.assertGreater(double(2), 3)
        self.assertTrue(double(1))
        self.assertIsNone(None)
        with self.assertRaises(ZeroDivisionError):
            1 / 0
        self.assertRaisesRegex(ValueError, "x", int, "x")
        with self.assertWarns(UserWarning):
            warnings.warn("w", UserWarning)

    def test_private(self):
        self.assertEqual(self.__cache, 42)
        self.assertEqual(super().id(), self.id())
'''

TARGETS = [
    "test_plain",
    "test_expectations",
    "test_param",
    "test_async",
    "TestPlain::test_method",
    "TestPlain::test_comprehension",
    "TestPlain::TestNested::test_inner",
    "TestUnit::test_calls",
    "TestUnit::test_private",
    "test_missing",
]

# (test, kind, the unique source line of the site), in the order find_sites must give. Only
# assertions that a wrong value of the same type fails: ==, in, approx, unittest's equality
# methods, expected exceptions (not !=, <, assertNotEqual, assertGreater...).
EXPECTED = [
    ("test_plain", "compare", "assert double(value) == 42"),
    ("test_plain", "compare", "assert 42 == double(value)"),
    ("test_plain", "in", "assert 2 in [double(1)]"),
    ("test_expectations", "raises", 'with pytest.raises(ValueError, match="invalid"):'),
    ("test_expectations", "raises", "with pytest.raises((ValueError, TypeError)):"),
    ("test_expectations", "raises", 'pytest.raises(ValueError, int, "x")'),
    ("test_expectations", "raises", "with pytest.warns(UserWarning):"),
    ("test_expectations", "approx", "assert double(0.1) == pytest.approx(0.2)"),
    ("test_expectations", "approx", "assert pytest.approx(0.2) == double(0.1)"),
    ("test_param", "compare", "assert double(x) == expected"),
    ("test_async", "compare", "assert double(3) == 6"),
    ("TestPlain::test_method", "in", "assert double(limit) in range(5)"),
    ("TestPlain::test_comprehension", "compare", "assert double(twice // 2) == twice"),
    ("TestUnit::test_calls", "call_equal", "self.assertEqual(double(1), 2)"),
    ("TestUnit::test_calls", "call_equal", "self.assertEqual(double(1), second=2)"),
    ("TestUnit::test_calls", "in", "self.assertIn(2, [double(1)])"),
    ("TestUnit::test_calls", "call_equal", "self.assertListEqual([double(1)], [2])"),
    ("TestUnit::test_calls", "call_equal", "self.assertAlmostEqual(double(0.1), 0.2)"),
    ("TestUnit::test_calls", "raises", "with self.assertRaises(ZeroDivisionError):"),
    ("TestUnit::test_calls", "raises", 'self.assertRaisesRegex(ValueError, "x", int, "x")'),
    ("TestUnit::test_calls", "raises", "with self.assertWarns(UserWarning):"),
    ("TestUnit::test_private", "call_equal", "self.assertEqual(self.__cache, 42)"),
    ("TestUnit::test_private", "call_equal", "self.assertEqual(super().id(), self.id())"),
]


def line_of(source: str, text: str) -> int:
    lines = [i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text]
    assert len(lines) == 1, text
    return lines[0]


def function(code: str, name: str) -> str:
    """The source of the generated function `name` (its decorators included)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return ast.unparse(ast.Module(body=[node], type_ignores=[]))
    raise AssertionError(f"{name} not generated")


def run_module(source: str) -> dict[str, object]:
    """The namespace a module's source leaves (definitions only: no test is called)."""
    namespace: dict[str, object] = {"__name__": "sample"}
    exec(compile(source, "sample.py", "exec"), namespace)
    return namespace


def test_find_sites() -> None:
    counters: dict[str, int] = {}
    expected = []
    for test, kind, text in EXPECTED:
        k = counters[test] = counters.get(test, -1) + 1
        expected.append({"test": test, "site": k, "line": line_of(SOURCE, text), "kind": kind})
    assert find_sites(SOURCE, TARGETS) == expected


def test_find_sites_follows_the_target_order_and_ignores_param_ids() -> None:
    sites = find_sites(SOURCE, ["test_param[1-2]", "test_plain", "test_param"])
    assert [s["test"] for s in sites] == ["test_param"] + ["test_plain"] * 3
    assert find_sites("def broken(:\n", ["broken"]) == []


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) of the lines that differ (the same number of lines on both sides)."""
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


SITES = [(s["test"], s["site"]) for s in find_sites(SOURCE, TARGETS)]


@pytest.mark.parametrize(("test", "k"), SITES)
def test_a_decoy_changes_one_expression_of_its_site_in_place(test: str, k: int) -> None:
    decoy, why = canaries.decoy_source(SOURCE, test, k, 12345, TOKEN)
    assert why == "" and decoy is not None
    changed = changed_lines(SOURCE, decoy)
    assert len(changed) == 1
    old, new = changed[0]
    site_line = next(s["line"] for s in find_sites(SOURCE, [test]) if s["site"] == k)
    assert old == SOURCE.splitlines()[site_line - 1]
    # The indentation and the start of the statement are kept: one span replaced.
    assert new[: len(new) - len(new.lstrip())] == old[: len(old) - len(old.lstrip())]
    compile(decoy + "\n\n" + canaries.helper_source(TOKEN), "sample.py", "exec")


# A literal's perturbation keeps its type, its form and (for text) its length.
LITERALS = [
    '"hello world"',
    "'it' 's'",
    "b'bytes'",
    "r'\\d+ and more'",
    '"caf\\u00e9 \\x41\\n"',
    '"""three\nlines"""',
    '"implicit" "concatenation"',
    "42",
    "0",
    "1_000",
    "0x1F",
    "0o17",
    "3.25",
    "1e-3",
    "2j",
    "True",
    "False",
]


@pytest.mark.parametrize("literal", LITERALS)
def test_perturbed_literals_keep_type_and_form(literal: str) -> None:
    old = ast.literal_eval("(" + literal + ")")
    for seed in range(20):
        new = canaries._perturb_literal(literal, random.Random(seed))
        assert new is not None, literal
        value = ast.literal_eval("(" + new + ")")
        assert type(value) is type(old) and value != old
        if isinstance(old, str | bytes):
            assert len(value) == len(old) and len(new) == len(literal)
            # Quotes, prefixes and escapes untouched: only a letter or digit of the value.
            diff = [i for i, (a, b) in enumerate(zip(literal, new, strict=True)) if a != b]
            assert len(diff) == 1 and literal[diff[0]].isalnum() and new[diff[0]].isalnum()
            assert literal[diff[0] - 1] != "\\"
        if isinstance(old, int) and not isinstance(old, bool) and literal.isdigit():
            assert abs(value - old) < 10


def test_literals_that_cannot_keep_their_form_are_left_to_the_runtime_perturbation() -> None:
    assert canaries._perturb_literal('""', random.Random(1)) is None
    assert canaries._perturb_literal("'...'", random.Random(1)) is None
    source = 'def test_e():\n    assert name() == ""\n'
    decoy, _ = canaries.decoy_source(source, "test_e", 0, 7, TOKEN)
    assert decoy is not None and f'assert name() == {S}("", 7)' in decoy


def test_an_expected_expression_without_literals_is_perturbed_at_run_time() -> None:
    decoy, _ = canaries.decoy_source(SOURCE, "test_param", 0, 99, TOKEN)
    assert decoy is not None
    assert changed_lines(SOURCE, decoy) == [
        ("    assert double(x) == expected", f"    assert double(x) == {S}(expected, 99)")
    ]


def test_an_expected_exception_becomes_another_builtin_class_written_plainly() -> None:
    # A decoy must read like a test: another builtin class of the family, by its plain name
    # (a call of the judge's helper would tell the decoy at a glance), never a base of the
    # expected ones (what the code raises would still match).
    import builtins

    seen = set()
    for seed in range(20):
        decoy, _ = canaries.decoy_source(SOURCE, "test_expectations", 1, seed, TOKEN)
        assert decoy is not None
        [(before, after)] = changed_lines(SOURCE, decoy)
        assert before == "    with pytest.raises((ValueError, TypeError)):"
        name = after.removeprefix("    with pytest.raises(").removesuffix("):")
        assert name.isidentifier() and E not in after
        cls = getattr(builtins, name)
        assert issubclass(cls, Exception) and not issubclass(cls, Warning)
        assert not issubclass(ValueError, cls) and not issubclass(TypeError, cls)
        seen.add(name)
    assert seen
    # A warning's decoy is another warning; a builtin base is never chosen.
    source = (
        "import pytest\n\ndef test_w():\n    with pytest.warns(DeprecationWarning):\n"
        "        f()\n    with pytest.raises(KeyError):\n        g()\n"
    )
    for seed in range(20):
        decoy, _ = canaries.decoy_source(source, "test_w", 0, seed, TOKEN)
        assert decoy is not None
        [(_, after)] = changed_lines(source, decoy)
        name = after.strip().removeprefix("with pytest.warns(").removesuffix("):")
        assert issubclass(getattr(builtins, name), Warning) and name != "DeprecationWarning"
        decoy, _ = canaries.decoy_source(source, "test_w", 1, seed, TOKEN)
        assert decoy is not None
        [(_, after)] = changed_lines(source, decoy)
        name = after.strip().removeprefix("with pytest.raises(").removesuffix("):")
        assert not issubclass(KeyError, getattr(builtins, name))
    # The helper stays for an expectation no builtin can stand in for.
    namespace = run_module(canaries.helper_source(TOKEN))
    twins = namespace[E]((ValueError, TypeError))  # type: ignore[operator]
    assert [t.__name__ for t in twins] == ["ValueError", "TypeError"]
    assert not any(issubclass(t, ValueError | TypeError) for t in twins)
    assert issubclass(namespace[E](UserWarning), Warning)  # type: ignore[operator]


def test_decoys_are_deterministic_per_seed_and_vary_with_it() -> None:
    made = {canaries.decoy_source(SOURCE, "test_plain", 0, seed, TOKEN)[0] for seed in range(30)}
    assert len(made) > 5
    again = canaries.decoy_source(SOURCE, "test_plain", 0, 3, TOKEN)
    assert again == canaries.decoy_source(SOURCE, "test_plain", 0, 3, TOKEN)


def test_decoy_source_refuses_what_it_cannot_find() -> None:
    assert canaries.decoy_source(SOURCE, "test_plain", 99, 1, TOKEN) == (None, "no site 99")
    assert canaries.decoy_source(SOURCE, "test_missing", 0, 1, TOKEN) == (None, "not found")
    assert canaries.decoy_source("def (:", "t", 0, 1, TOKEN)[0] is None


RUNTIME: list[tuple[object, type]] = [
    (1, int),
    (0, int),
    (-7, int),
    (2.5, float),
    (True, bool),
    ("abc", str),
    ("", str),
    (b"xy", bytes),
    ([1, 2, 3], list),
    ((1, "a"), tuple),
    ({"k": "v"}, dict),
    ({1, 2}, set),
    (frozenset({"a"}), frozenset),
]


@pytest.mark.parametrize(("value", "kind"), RUNTIME)
def test_the_runtime_perturbation_keeps_type_and_shape(value: Any, kind: type) -> None:
    perturb = run_module(canaries.helper_source(TOKEN))[S]
    for seed in range(10):
        new = perturb(value, seed)  # type: ignore[operator]
        assert type(new) is kind and new != value
        if isinstance(value, str | bytes | list | tuple | dict | set | frozenset) and value:
            assert len(new) == len(value)


def test_the_runtime_perturbation_of_other_values() -> None:
    perturb: Any = run_module(canaries.helper_source(TOKEN))[S]
    point = collections.namedtuple("point", "x y")
    moved = perturb(point(1, 2), 0)
    assert type(moved) is point and moved != point(1, 2)

    @dataclasses.dataclass
    class Box:
        size: int

    assert perturb(Box(3), 1) != Box(3) and type(perturb(Box(3), 1)) is Box

    class Color(enum.Enum):
        RED = 1
        BLUE = 2

    assert perturb(Color.RED, 4) is Color.BLUE
    # Anything else: a value equal to nothing (the other operand decides).
    odd = perturb(object(), 1)
    assert odd != 1 and odd != None  # noqa: E711


def _site_expression(line: str) -> str:
    """The expression a site's line compares with (the test of an assert, else the call)."""
    stmt = line.strip()
    if stmt.startswith("with "):
        stmt = stmt[len("with ") :].rstrip(":")
    node = ast.parse(stmt).body[0]
    expr = node.test if isinstance(node, ast.Assert) else node.value  # type: ignore[attr-defined]
    return ast.unparse(expr)


def test_a_copy_perturbs_as_its_decoy_does() -> None:
    """Calibration judges decoys by copies: a copy of a site for a seed must hold the very
    expression the decoy of that site for that seed holds."""
    for test, k in SITES:
        for seed in (1, 2, 3):
            code, specs, reason = make_canaries(SOURCE, [], TOKEN, sites=[(test, k, seed)])
            assert reason == "" and len(specs) == 1 and specs[0]["seed"] == seed
            decoy, _ = canaries.decoy_source(SOURCE, test, k, seed, TOKEN)
            assert decoy is not None
            expr = _site_expression(changed_lines(SOURCE, decoy)[0][1])
            expr = expr.replace("self.__cache", "self._TestUnit__cache")
            expr = expr.replace("super().", "super(TestUnit, self).")
            assert expr in function(code, specs[0]["name"]), (test, k, seed, expr)


def test_copies_keep_decorators_and_evaluate_class_names_on_the_class() -> None:
    code, _, _ = make_canaries(
        SOURCE, ["TestPlain::test_method", "TestPlain::test_comprehension"], TOKEN
    )
    assert "@pytest.mark.parametrize('limit', TestPlain.LIMITS)" in code
    # Only a comprehension's first iterable is evaluated in the class namespace.
    assert "@pytest.mark.parametrize('twice', [n * 2 for n in TestPlain.LIMITS])" in code
    assert f"setattr(TestPlain, 'test_method_{TOKEN}0', test_method_{TOKEN}0)" in code


def test_future_annotations_and_class_level_annotations() -> None:
    source = (
        "from __future__ import annotations\n\n"
        "class TestA:\n"
        "    Kind = int\n\n"
        "    def test_a(self, x: Kind = Kind(1)) -> Kind:\n"
        "        assert x == 1\n"
    )
    code, specs, reason = make_canaries(source, ["TestA::test_a"], TOKEN, seeds=1)
    assert len(specs) == 1 and reason == ""
    assert f"def test_a_{TOKEN}0(self, x: TestA.Kind=TestA.Kind(1)) -> TestA.Kind:" in code
    namespace = run_module(source + code)
    assert f"test_a_{TOKEN}0" in vars(namespace["TestA"])  # type: ignore[arg-type]


def test_docstrings_are_not_copied() -> None:
    code, _, _ = make_canaries(SOURCE, ["test_plain"], TOKEN, sites=[("test_plain", 0)])
    assert "Doubles." not in code


def test_generated_code_defines_only_helpers_and_copies() -> None:
    code, specs, reason = make_canaries(SOURCE, TARGETS, TOKEN)
    assert code.startswith("\n\n") and code.endswith("\n")
    assert reason == ("TestPlain::TestNested::test_inner: nested class; test_missing: not found")
    before = run_module(SOURCE)
    after = run_module(SOURCE + code)
    # The module gains the helpers and the module-level copies, nothing else ...
    module_level = {s["name"] for s in specs if "::" not in s["test"]}
    assert set(after) - set(before) == {S, E} | module_level
    # ... its classes gain their copies, nothing else, and nothing existing is rebound.
    for cls in ("TestPlain", "TestUnit"):
        added = {s["name"] for s in specs if s["test"].startswith(cls + "::")}
        assert set(vars(after[cls])) - set(vars(before[cls])) == added  # type: ignore[arg-type]
    for name, value in before.items():
        code_of = getattr(value, "__code__", None)
        if code_of is not None:
            assert after[name].__code__.co_firstlineno == code_of.co_firstlineno  # type: ignore[attr-defined]


def test_no_generated_identifier_names_the_purpose() -> None:
    code, _, _ = make_canaries(SOURCE, TARGETS, TOKEN)
    for word in ("canary", "canaries", "decoy", "swe", "forge", "sentinel"):
        assert word not in code.lower()
        assert word not in canaries.helper_source(TOKEN).lower()


def test_deterministic() -> None:
    first = make_canaries(SOURCE, TARGETS, TOKEN)
    assert make_canaries(SOURCE, TARGETS, TOKEN) == first
    assert make_canaries(SOURCE, TARGETS, TOKEN, limit=5) == make_canaries(
        SOURCE, TARGETS, TOKEN, limit=5
    )


def test_round_robin_limit_and_seeds() -> None:
    targets = ["test_plain", "test_param", "TestPlain::test_method", "TestUnit::test_private"]
    code, specs, reason = make_canaries(SOURCE, targets, TOKEN, limit=6, seeds=1)
    pairs = [(s["test"], s["site"]) for s in specs]
    # Site 0 of each target, then site 1 of those that have one, until the limit.
    assert pairs == [
        ("test_plain", 0),
        ("test_plain", 1),
        ("test_param", 0),
        ("TestPlain::test_method", 0),
        ("TestUnit::test_private", 0),
        ("TestUnit::test_private", 1),
    ]
    assert reason == "limit 6: 6 of 7 sites"
    compile(SOURCE + code, "sample.py", "exec")
    _, specs, _ = make_canaries(SOURCE, targets, TOKEN, limit=3, seeds=1)
    assert [(s["test"], s["site"]) for s in specs] == [
        ("test_plain", 0),
        ("test_param", 0),
        ("TestPlain::test_method", 0),
    ]
    assert make_canaries(SOURCE, targets, TOKEN, limit=0) == ("", [], "limit 0: 0 of 7 sites")
    # Two seeds of each site while under the limit: the second copy is named _2.
    _, specs, reason = make_canaries(SOURCE, targets, TOKEN, seeds=2)
    assert len(specs) == 14 and reason == ""
    names = [s["name"] for s in specs]
    assert f"test_plain_{TOKEN}0" in names and f"test_plain_{TOKEN}0_2" in names
    assert len({(s["test"], s["site"], s["seed"]) for s in specs}) == 14


def test_explicit_sites() -> None:
    wanted: list[Any] = [
        ("TestUnit::test_private", 1, 11),
        ("test_plain", 2),
        ("test_plain", 99),
        ("test_nowhere", 0),
        ("test_async", 0),
        {"test": "test_param", "site": 0, "seed": 5},
    ]
    code, specs, reason = make_canaries(SOURCE, ["test_plain"], TOKEN, sites=wanted)
    assert [(s["test"], s["site"], s["name"]) for s in specs] == [
        ("TestUnit::test_private", 1, f"test_private_{TOKEN}1"),
        ("test_plain", 2, f"test_plain_{TOKEN}2"),
        ("test_async", 0, f"test_async_{TOKEN}0"),
        ("test_param", 0, f"test_param_{TOKEN}0"),
    ]
    assert specs[0]["seed"] == 11 and specs[3]["seed"] == 5
    assert reason == ""
    compile(SOURCE + code, "sample.py", "exec")
    assert make_canaries(SOURCE, [], TOKEN, sites=[("test_plain", 99)]) == ("", [], "no sites")


def test_every_single_copy_compiles_with_the_module() -> None:
    for site in find_sites(SOURCE, TARGETS):
        code, specs, _ = make_canaries(SOURCE, [], TOKEN, sites=[(site["test"], site["site"])])
        assert len(specs) == 1
        compile(SOURCE + code, "sample.py", "exec")
    code, _, _ = make_canaries(SOURCE, TARGETS, TOKEN)
    compile(SOURCE + code, "sample.py", "exec")


def test_method_and_function_of_the_same_name() -> None:
    source = (
        "def f():\n    return 1\n\n"
        "def test_same():\n    assert f() == 1\n\n"
        "class TestA:\n    def test_same(self):\n        assert f() == 1\n"
    )
    code, specs, _ = make_canaries(source, ["test_same", "TestA::test_same"], TOKEN, seeds=1)
    assert [s["name"] for s in specs] == [f"test_same_{TOKEN}0"] * 2
    namespace = run_module(source + code)
    # The method's temporary module-level name must not delete the module-level copy.
    assert callable(namespace[f"test_same_{TOKEN}0"])
    assert f"test_same_{TOKEN}0" in vars(namespace["TestA"])  # type: ignore[arg-type]


def test_static_class_and_inherited_methods() -> None:
    source = """\
import pytest


class Base:
    def __init__(self):
        pass

    def test_inherited(self):
        self.__seen = 1
        assert super().__eq__(self) == 1


class TestChild(Base):
    @staticmethod
    def test_static():
        assert abs(-1) == 1

    @classmethod
    def test_klass(cls):
        assert cls.__name__ == "TestChild"
"""
    targets = ["TestChild::test_static", "TestChild::test_klass", "TestChild::test_inherited"]
    code, specs, reason = make_canaries(source, targets, TOKEN, seeds=1)
    assert reason == "" and len(specs) == 3
    # Inherited: the base's private names and super(), attached to the class tested.
    assert "self._Base__seen = 1" in code
    assert "assert super(Base, self).__eq__(self) == " in code
    assert f"setattr(TestChild, 'test_inherited_{TOKEN}0'" in code
    namespace = run_module(source + code)
    attrs = vars(namespace["TestChild"])
    assert isinstance(attrs[f"test_static_{TOKEN}0"], staticmethod)
    assert isinstance(attrs[f"test_klass_{TOKEN}0"], classmethod)
    assert f"test_inherited_{TOKEN}0" not in vars(namespace["Base"])


def test_a_decorator_that_fails_again_costs_only_its_copy() -> None:
    source = """\
import pytest


class TestGone:
    CASES = [1]

    @pytest.mark.parametrize("case", CASES)
    def test_gone(self, case):
        assert case == 1

    del CASES

    def test_kept(self):
        assert 1 + 1 == 2
"""
    code, specs, reason = make_canaries(
        source, ["TestGone::test_gone", "TestGone::test_kept"], TOKEN, seeds=1
    )
    assert len(specs) == 2 and reason == ""
    namespace = run_module(source + code)
    attrs = vars(namespace["TestGone"])
    assert f"test_gone_{TOKEN}0" not in attrs and f"test_kept_{TOKEN}0" in attrs
    assert f"test_gone_{TOKEN}0" not in namespace


def test_names_taken_by_the_module() -> None:
    source = f"{S} = 1\n\ndef test_a():\n    assert 1 == 1\n"
    assert make_canaries(source, ["test_a"], TOKEN) == (
        "",
        [],
        f"token {TOKEN} clashes with a name in the module",
    )
    source = f"def test_a():\n    assert 1 == 1\n\ndef test_a_{TOKEN}0():\n    pass\n"
    code, specs, reason = make_canaries(source, ["test_a"], TOKEN, seeds=1)
    assert (code, specs) == ("", [])
    assert reason == f"test_a site 0: test_a_{TOKEN}0 is taken"


def test_no_sites() -> None:
    source = "def test_a():\n    assert True\n    x = 1\n    assert (1, 2)\n    assert not None\n"
    assert make_canaries(source, ["test_a"], TOKEN) == ("", [], "no sites")
    assert make_canaries(source, [], TOKEN) == ("", [], "no sites")


GUARDED = """\
import unittest

from pkg import core


def test_only_conditions():
    x = core.value()
    assert x is None
    assert core.ok(x)
    assert not core.bad(
        x)
    assert x != 2 and core.ok(x)
    assert len(core.items()) >= 1


def test_with_an_expected_value():
    assert core.ok(1)
    assert core.value() == 3


class T(unittest.TestCase):
    def test_calls(self):
        self.assertTrue(core.ok(1))
        self.assertIsNone(core.value())
        self.assertNotIn(4, core.items())
        self.assertNotEqual(core.value(), None)
"""


def test_guard_sites_where_no_value_is_expected() -> None:
    """A test whose assertions expect no value (no_decoys before: parse, arrow, pyparsing,
    tinydb) gets the condition of each as a site; its decoy asks the opposite, written as an
    author writes it. A test with an expected value keeps its value sites only."""
    sites = find_sites(
        GUARDED, ["test_only_conditions", "test_with_an_expected_value", "T::test_calls"]
    )
    kinds = [(s["test"], s["kind"]) for s in sites]
    assert (
        kinds
        == [("test_only_conditions", "guard")] * 5
        + [("test_with_an_expected_value", "compare")]
        + [("T::test_calls", "guard")] * 4
    )
    decoys = []
    for site in sites:
        if site["kind"] != "guard":
            continue
        out, why = decoy_source(GUARDED, site["test"], site["site"], 7, TOKEN)
        assert out is not None, why
        (changed,) = [
            (a, b) for a, b in zip(GUARDED.splitlines(), out.splitlines(), strict=True) if a != b
        ]
        decoys.append(changed[1].strip())
    assert decoys == [
        "assert x is not None",
        "assert not core.ok(x)",
        "assert core.bad(",
        "assert not (x != 2 and core.ok(x))",
        "assert len(core.items()) < 1",
        "self.assertFalse(core.ok(1))",
        "self.assertIsNotNone(core.value())",
        "self.assertIn(4, core.items())",
        "self.assertEqual(core.value(), None)",
    ]
    # The calibration copies make the same change in a copy of the test, and they compile.
    code, specs, reason = make_canaries(GUARDED, ["test_only_conditions"], TOKEN, seeds=1)
    assert reason == "" and [s["kind"] for s in specs] == ["guard"] * 5
    assert "assert x is not None" in code and "assert not core.ok(x)" in code
    compile(GUARDED + code, "t.py", "exec")


def test_syntax_error() -> None:
    code, specs, reason = make_canaries("def test_a(:\n    pass\n", ["test_a"], TOKEN)
    assert (code, specs) == ("", [])
    assert reason.startswith("syntax error")


@pytest.mark.parametrize("how", ["version", "no unparse"])
def test_old_python(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "version":
        monkeypatch.setattr(canaries.sys, "version_info", (3, 8, 18, "final", 0))
    else:
        monkeypatch.delattr(canaries.ast, "unparse")
    assert make_canaries(SOURCE, TARGETS, TOKEN) == ("", [], "python<3.9")


@pytest.mark.parametrize("token", ["", "A1", "a-b", "a b", None])
def test_bad_token(token: str) -> None:
    with pytest.raises(ValueError):
        make_canaries(SOURCE, TARGETS, token)
