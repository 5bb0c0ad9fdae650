"""Assertion canaries, checked on the generated code alone: which sites are found, how each is
perturbed, and that the appended code compiles, defines only what it must and is deterministic.
Running canaries under pytest is in tests/integration/test_canaries_pytest.py."""

from __future__ import annotations

import ast

import pytest

from swe_forge.gates.harness import swe_forge_canaries as canaries
from swe_forge.gates.harness.swe_forge_canaries import find_sites, make_canaries

TOKEN = "t0k"
S, E, W = f"_value_{TOKEN}", f"_Error_{TOKEN}", f"_Warning_{TOKEN}"

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
    assert double(1) == 2


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

# (test, kind, the unique source line of the site), in the order find_sites must give.
EXPECTED = [
    ("test_plain", "compare", "assert double(value) == 42"),
    ("test_plain", "compare", "assert 42 == double(value)"),
    ("test_plain", "compare", "assert double(value) != 0"),
    ("test_plain", "compare", "assert double(1) < 3"),
    ("test_plain", "in", "assert 2 in [double(1)]"),
    ("test_plain", "compare", "assert double(n) >= n"),
    ("test_expectations", "raises", 'with pytest.raises(ValueError, match="invalid"):'),
    ("test_expectations", "raises", "with pytest.raises((ValueError, TypeError)):"),
    ("test_expectations", "raises", 'pytest.raises(ValueError, int, "x")'),
    ("test_expectations", "raises", "with pytest.warns(UserWarning):"),
    ("test_expectations", "approx", "assert double(0.1) == pytest.approx(0.2)"),
    ("test_expectations", "approx", "assert pytest.approx(0.2) == double(0.1)"),
    ("test_param", "compare", "assert double(x) == expected"),
    ("TestPlain::test_method", "compare", "assert double(limit) >= limit"),
    ("TestPlain::test_method", "in", "assert double(limit) in range(5)"),
    ("TestPlain::test_comprehension", "compare", "assert double(twice // 2) == twice"),
    ("TestUnit::test_calls", "call_equal", "self.assertEqual(double(1), 2)"),
    ("TestUnit::test_calls", "call_equal", "self.assertEqual(double(1), second=2)"),
    ("TestUnit::test_calls", "in", "self.assertIn(2, [double(1)])"),
    ("TestUnit::test_calls", "call_equal", "self.assertListEqual([double(1)], [2])"),
    ("TestUnit::test_calls", "call_equal", "self.assertNotEqual(double(2), 3)"),
    ("TestUnit::test_calls", "call_equal", "self.assertAlmostEqual(double(0.1), 0.2)"),
    ("TestUnit::test_calls", "call_equal", "self.assertGreater(double(2), 3)"),
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
        if isinstance(node, ast.FunctionDef) and node.name == name:
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
    assert [s["test"] for s in sites] == ["test_param"] + ["test_plain"] * 6
    assert find_sites("def broken(:\n", ["broken"]) == []


# (test, site, the perturbed line as generated), one per kind of perturbation.
PERTURBED = [
    ("test_plain", 0, f"assert double(value) == {S}"),
    ("test_plain", 1, f"assert {S} == double(value)"),  # the literal is the expected side
    ("test_plain", 2, f"assert double(value) == {S}"),  # != becomes ==: `x != S` always holds
    ("test_plain", 3, f"assert double(1) < {S}"),
    ("test_plain", 4, f"assert {S} in [double(1)]"),
    ("test_plain", 5, f"assert double(n) >= {S}"),
    ("test_expectations", 0, f"with pytest.raises({E}, match='invalid'):"),
    ("test_expectations", 1, f"with pytest.raises({E}):"),
    ("test_expectations", 2, f"pytest.raises({E}, int, 'x')"),
    ("test_expectations", 3, f"with pytest.warns({W}):"),
    ("test_expectations", 4, f"assert double(0.1) == pytest.approx({S})"),
    ("test_expectations", 5, f"assert pytest.approx({S}) == double(0.1)"),
    ("test_param", 0, f"assert double(x) == {S}"),
    ("TestPlain::test_method", 0, f"assert double(limit) >= {S}"),
    ("TestPlain::test_method", 1, f"assert {S} in range(5)"),
    ("TestUnit::test_calls", 0, f"self.assertEqual(double(1), {S})"),
    ("TestUnit::test_calls", 1, f"self.assertEqual(double(1), second={S})"),
    ("TestUnit::test_calls", 2, f"self.assertIn({S}, [double(1)])"),
    ("TestUnit::test_calls", 3, f"self.assertEqual([double(1)], {S})"),
    ("TestUnit::test_calls", 4, f"self.assertEqual(double(2), {S})"),
    ("TestUnit::test_calls", 5, f"self.assertAlmostEqual(double(0.1), {S})"),
    ("TestUnit::test_calls", 6, f"self.assertGreater(double(2), {S})"),
    ("TestUnit::test_calls", 7, f"with self.assertRaises({E}):"),
    ("TestUnit::test_calls", 8, f"self.assertRaisesRegex({E}, 'x', int, 'x')"),
    ("TestUnit::test_calls", 9, f"with self.assertWarns({W}):"),
    ("TestUnit::test_private", 0, f"self.assertEqual(self._TestUnit__cache, {S})"),
    ("TestUnit::test_private", 1, f"self.assertEqual(super(TestUnit, self).id(), {S})"),
]


@pytest.mark.parametrize(("test", "k", "line"), PERTURBED)
def test_each_canary_perturbs_exactly_its_site(test: str, k: int, line: str) -> None:
    code, specs, reason = make_canaries(SOURCE, TARGETS, TOKEN, sites=[(test, k)])
    name = f"{test.rpartition('::')[2]}_{TOKEN}{k}"
    kind = [s["kind"] for s in find_sites(SOURCE, [test]) if s["site"] == k]
    assert (specs, reason) == ([{"test": test, "site": k, "name": name, "kind": kind[0]}], "")
    text = function(code, name)
    assert line in [ln.strip() for ln in text.splitlines()]
    # That one site is perturbed, no other.
    assert sum(text.count(helper) for helper in (S, E, W)) == 1
    compile(SOURCE + code, "sample.py", "exec")


def test_canary_keeps_decorators_and_evaluates_class_names_on_the_class() -> None:
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
    code, specs, reason = make_canaries(source, ["TestA::test_a"], TOKEN)
    assert len(specs) == 1 and reason == ""
    assert f"def test_a_{TOKEN}0(self, x: TestA.Kind=TestA.Kind(1)) -> TestA.Kind:" in code
    namespace = run_module(source + code)
    assert f"test_a_{TOKEN}0" in vars(namespace["TestA"])  # type: ignore[arg-type]


def test_docstrings_are_not_copied() -> None:
    code, _, _ = make_canaries(SOURCE, ["test_plain"], TOKEN, sites=[("test_plain", 0)])
    assert "Doubles." not in code


def test_generated_code_defines_only_helpers_and_canaries() -> None:
    code, specs, reason = make_canaries(SOURCE, TARGETS, TOKEN)
    assert code.startswith("\n\n") and code.endswith("\n")
    assert reason == (
        "test_async: async; TestPlain::TestNested::test_inner: nested class; "
        "test_missing: not found"
    )
    before = run_module(SOURCE)
    after = run_module(SOURCE + code)
    # The module gains the helpers and the module-level canaries, nothing else ...
    module_level = {s["name"] for s in specs if "::" not in s["test"]}
    assert set(after) - set(before) == {S, E, W} | module_level
    # ... its classes gain their canaries, nothing else, and nothing existing is rebound.
    for cls in ("TestPlain", "TestUnit"):
        added = {s["name"] for s in specs if s["test"].startswith(cls + "::")}
        assert set(vars(after[cls])) - set(vars(before[cls])) == added  # type: ignore[arg-type]
    for name, value in before.items():
        code_of = getattr(value, "__code__", None)
        if code_of is not None:
            assert after[name].__code__.co_firstlineno == code_of.co_firstlineno  # type: ignore[attr-defined]


def test_helpers_behave() -> None:
    code, _, _ = make_canaries(SOURCE, TARGETS, TOKEN)
    namespace = run_module(SOURCE + code)
    sentinel = namespace[S]

    class Universal:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    one = 1
    assert (sentinel == one) is False and (one == sentinel) is False and sentinel != one
    assert sentinel != [1] and sentinel != "x" and sentinel != None  # noqa: E711
    assert sentinel == Universal() and Universal() == sentinel  # the other operand decides
    assert sentinel == sentinel and hash(sentinel) == hash(sentinel)
    assert repr(sentinel) == "<object>"
    with pytest.raises(TypeError):
        assert sentinel < 1  # type: ignore[operator]
    assert "__lt__" not in vars(type(sentinel))
    assert issubclass(namespace[E], Exception)  # type: ignore[arg-type]
    assert issubclass(namespace[W], Warning)  # type: ignore[arg-type]


def test_no_generated_identifier_names_the_purpose() -> None:
    code, _, _ = make_canaries(SOURCE, TARGETS, TOKEN)
    for word in ("canary", "canaries", "swe", "forge", "sentinel"):
        assert word not in code.lower()


def test_deterministic() -> None:
    first = make_canaries(SOURCE, TARGETS, TOKEN)
    assert make_canaries(SOURCE, TARGETS, TOKEN) == first
    assert make_canaries(SOURCE, TARGETS, TOKEN, limit=5) == make_canaries(
        SOURCE, TARGETS, TOKEN, limit=5
    )
    other = make_canaries(SOURCE, TARGETS, "z9")
    assert other[0] == first[0].replace(TOKEN, "z9")


def test_round_robin_and_limit() -> None:
    targets = ["test_plain", "test_param", "TestPlain::test_method", "TestUnit::test_private"]
    code, specs, reason = make_canaries(SOURCE, targets, TOKEN, limit=6)
    pairs = [(s["test"], s["site"]) for s in specs]
    # Site 0 of each target, then site 1 of those that have one, until the limit.
    assert pairs == [
        ("test_plain", 0),
        ("test_plain", 1),
        ("test_param", 0),
        ("TestPlain::test_method", 0),
        ("TestPlain::test_method", 1),
        ("TestUnit::test_private", 0),
    ]
    assert reason == "limit 6: 6 of 11 sites"
    compile(SOURCE + code, "sample.py", "exec")
    _, specs, reason = make_canaries(SOURCE, targets, TOKEN, limit=3)
    assert [(s["test"], s["site"]) for s in specs] == [
        ("test_plain", 0),
        ("test_param", 0),
        ("TestPlain::test_method", 0),
    ]
    assert make_canaries(SOURCE, targets, TOKEN, limit=0) == ("", [], "limit 0: 0 of 11 sites")
    _, specs, reason = make_canaries(SOURCE, targets, TOKEN)
    assert len(specs) == 11 and reason == ""


def test_explicit_sites() -> None:
    wanted = [
        ("TestUnit::test_private", 1),
        ("test_plain", 4),
        ("test_plain", 99),
        ("test_nowhere", 0),
        ("test_async", 0),
        ("test_plain", 4),
        {"test": "test_param", "site": 0},
    ]
    code, specs, reason = make_canaries(SOURCE, ["test_plain"], TOKEN, sites=wanted)
    assert [(s["test"], s["site"], s["name"]) for s in specs] == [
        ("TestUnit::test_private", 1, f"test_private_{TOKEN}1"),
        ("test_plain", 4, f"test_plain_{TOKEN}4"),
        ("test_param", 0, f"test_param_{TOKEN}0"),
    ]
    assert reason == ""
    assert E not in code and W not in code  # only the helpers used
    compile(SOURCE + code, "sample.py", "exec")
    assert make_canaries(SOURCE, [], TOKEN, sites=[("test_plain", 99)]) == ("", [], "no sites")


def test_every_single_canary_compiles_with_the_module() -> None:
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
    code, specs, _ = make_canaries(source, ["test_same", "TestA::test_same"], TOKEN)
    assert [s["name"] for s in specs] == [f"test_same_{TOKEN}0"] * 2
    namespace = run_module(source + code)
    # The method's temporary module-level name must not delete the module-level canary.
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
    code, specs, reason = make_canaries(source, targets, TOKEN)
    assert reason == "" and len(specs) == 3
    # Inherited: the base's private names and super(), attached to the class tested.
    assert "self._Base__seen = 1" in code
    assert f"assert super(Base, self).__eq__(self) == {S}" in code
    assert f"setattr(TestChild, 'test_inherited_{TOKEN}0'" in code
    assert f"assert cls.__name__ == {S}" in code
    namespace = run_module(source + code)
    attrs = vars(namespace["TestChild"])
    assert isinstance(attrs[f"test_static_{TOKEN}0"], staticmethod)
    assert isinstance(attrs[f"test_klass_{TOKEN}0"], classmethod)
    assert f"test_inherited_{TOKEN}0" not in vars(namespace["Base"])


def test_a_decorator_that_fails_again_costs_only_its_canary() -> None:
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
        source, ["TestGone::test_gone", "TestGone::test_kept"], TOKEN
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
    code, specs, reason = make_canaries(source, ["test_a"], TOKEN)
    assert (code, specs) == ("", [])
    assert reason == f"test_a site 0: test_a_{TOKEN}0 is taken"


def test_no_sites() -> None:
    source = "def test_a():\n    assert True\n    x = 1\n    assert x is 1\n"
    assert make_canaries(source, ["test_a"], TOKEN) == ("", [], "no sites")
    assert make_canaries(source, [], TOKEN) == ("", [], "no sites")


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
