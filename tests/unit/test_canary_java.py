"""Java's canary writer: sites of JUnit 4, JUnit 5 and TestNG methods (message, delta and
argument order by framework), AssertJ and Hamcrest chains, nested classes, parameterized
invocations; perturbations, copies (and, with javac, that a perturbed copy fails where the
unperturbed one passes)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems import syntax, writer_for
from swe_forge.ecosystems.canaries import Site, punctuation_only
from swe_forge.errors import UsageError

W = writer_for("java")
PATH = "core/src/test/java/org/x/ParserTest.java"
SOURCE = b"""package org.x;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.*;
import static org.junit.jupiter.api.Assertions.*;

import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ParserTest {
    private static final String SHARED = "shared";

    @Test
    void parsesNumbers() {
        assertEquals(42, Parser.parse("42"));
        assertEquals(1.5, Parser.ratio("3/2"), 0.001);
        assertEquals(10L, Parser.big("10"), "big of %s");
        assertEquals(new BigDecimal("2.50"), Parser.money("2.5"), () -> "money");
        assertArrayEquals(new int[] {1, 2, 3}, Parser.ints("1,2,3"));
        assertTrue(Parser.name().equals("parser"), "name");
        assertTrue(Parser.count() == 0x1F);
        assertFalse(Parser.name().isEmpty());
        String expected = "a-b";
        assertEquals(expected, Parser.join('a', 'b'));
        System.out.println("done " + 3);
        switch (Parser.kind()) {
            case 1: break;
            default: fail("bad kind");
        }
    }

    @Test
    void assertjChains() {
        assertThat(Parser.tokens("a b")).hasSize(2).containsExactly("a", "b");
        assertThat(Parser.ratio("1/3")).as("ratio %s", "x").isCloseTo(0.333, within(0.01));
        assertThat(Parser.name()).isNotEqualTo("other");
        assertThatThrownBy(() -> Parser.parse("x")).hasMessage("bad input: x");
        assertThat(Parser.list(), is(List.of("a")));
        assertThat("reason", Parser.count(), equalTo(3));
        assertThat(Parser.name(), not(equalTo("zz")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "bb", "ccc"})
    void lengths(String s) {
        assertEquals(s.length(), Parser.len(s));
    }

    @ParameterizedTest
    @CsvSource({"1, one", "2, two"})
    void words(int n, String w) {
        assertEquals(w, Parser.word(n));
    }

    void parsesNumbers(int notATest) {
        assertEquals(7, notATest);
    }

    @Nested
    class Inner {
        @Test
        void inner() {
            assertEquals('x', Parser.first("xyz"));
            assertNotEquals(2, Parser.count());
        }
    }
}
"""
JUNIT4_PATH = "src/test/java/org/y/LegacyTest.java"
JUNIT4 = b"""package org.y;

import static org.junit.Assert.*;

import junit.framework.TestCase;
import org.junit.Test;

public class LegacyTest {
    @Test
    public void messagesFirst() {
        assertEquals("message", "want", Legacy.get());
        assertEquals(2.5, Legacy.ratio(), 0.01);
        assertEquals("ratio", 2.5, Legacy.ratio(), 0.01);
        assertTrue("is seven", Legacy.n() == 7);
        assertEquals(Legacy.size(), 3);
        assertEquals(-4L, Legacy.neg());
        assertEquals('\\u0041', Legacy.ch());
        assertEquals(3.0f, Legacy.f(), 0f);
    }
}
"""
TESTNG_PATH = "src/test/java/org/z/NgTest.java"
TESTNG = b"""package org.z;

import static org.testng.Assert.assertEquals;

import org.testng.annotations.Test;

public class NgTest {
    @Test
    public void actualFirst() {
        assertEquals(Ng.get(), "want", "message");
        assertEquals(Ng.count(), 3);
    }
}
"""


def sites_of(test: str, path: str = PATH, source: bytes = SOURCE) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.role) for s in W.sites(path, source, [test])]


def test_test_files_are_the_outer_class_s_file() -> None:
    files = [PATH, "core/src/main/java/org/x/Parser.java", "src/test/java/org/x/ParserTest.java"]
    assert W.test_files("org.x.ParserTest$Inner::inner", files) == [
        PATH,
        "src/test/java/org/x/ParserTest.java",
    ]
    assert W.test_files("org.ParserTest::x", files) == []


def test_junit5_assertions() -> None:
    assert sites_of("org.x.ParserTest::parsesNumbers") == [
        ("42", "int", "expected"),
        ('"42"', "string", "other"),
        ("1.5", "float", "expected"),
        ('"3/2"', "string", "other"),
        ("0.001", "float", "other"),  # the delta
        ("10L", "int", "expected"),  # its message "big of %s" is no site
        ('"10"', "string", "other"),
        ('"2.50"', "string", "expected"),  # new BigDecimal("2.50")
        ('"2.5"', "string", "other"),
        ("1", "int", "expected"),
        ("2", "int", "expected"),
        ("3", "int", "expected"),
        ('"1,2,3"', "string", "other"),
        ('"parser"', "string", "expected"),  # x.equals("parser") in assertTrue
        ("0x1F", "int", "expected"),
        ('"a-b"', "string", "expected"),  # String expected = ...
        ("'a'", "char", "other"),
        ("'b'", "char", "other"),
    ]  # println, the case label and fail's message are no sites


def test_assertj_and_hamcrest() -> None:
    assert sites_of("org.x.ParserTest::assertjChains") == [
        ('"a b"', "string", "other"),
        ("2", "int", "expected"),
        ('"a"', "string", "expected"),
        ('"b"', "string", "expected"),
        ('"1/3"', "string", "other"),
        ("0.333", "float", "expected"),
        ("0.01", "float", "other"),  # within(...)
        ('"other"', "string", "other"),  # isNotEqualTo
        ('"x"', "string", "other"),
        ('"bad input: x"', "string", "expected"),
        ('"a"', "string", "expected"),  # is(List.of("a"))
        ("3", "int", "expected"),  # the reason "reason" is no site
        ('"zz"', "string", "other"),  # not(...)
    ]


def test_parameterized_rows_and_nested_classes() -> None:
    assert sites_of("org.x.ParserTest::lengths(String)[2]") == [('"bb"', "string", "other")]
    assert sites_of("org.x.ParserTest::words(int, String)[1]") == [('"1, one"', "string", "other")]
    assert len(sites_of("org.x.ParserTest::lengths")) == 3
    assert sites_of("org.x.ParserTest$Inner::inner") == [
        ("'x'", "char", "expected"),
        ('"xyz"', "string", "other"),
        ("2", "int", "other"),
    ]


def test_junit4_messages_first_and_deltas() -> None:
    assert sites_of("org.y.LegacyTest::messagesFirst", JUNIT4_PATH, JUNIT4) == [
        ('"want"', "string", "expected"),
        ("2.5", "float", "expected"),
        ("0.01", "float", "other"),
        ("2.5", "float", "expected"),
        ("0.01", "float", "other"),
        ("7", "int", "expected"),
        ("3", "int", "expected"),  # swapped arguments: the value is what is expected
        ("4L", "int", "expected"),
        ("'\\u0041'", "char", "expected"),
        ("3.0f", "float", "expected"),
        ("0f", "float", "other"),
    ]


def test_testng_actual_first() -> None:
    assert sites_of("org.z.NgTest::actualFirst", TESTNG_PATH, TESTNG) == [
        ('"want"', "string", "expected"),
        ("3", "int", "expected"),
    ]


def test_an_expected_argument_made_with_a_constant() -> None:
    source = b"""package q;
import static org.junit.jupiter.api.Assertions.assertEquals;
class CTest {
    @org.junit.jupiter.api.Test
    void c() {
        assertEquals("foo" + SEP, B.text());
        assertEquals(B.parse("x"), result);
        assertEquals(cond ? "a" : "b", B.pick());
        assertEquals(table[2], B.third());
    }
}
"""
    # The literal of a concatenation is expected; under a call, in a condition or an
    # index it is not.
    assert sites_of("q.CTest::c", "src/test/java/q/CTest.java", source) == [
        ('"foo"', "string", "expected"),
        ('"x"', "string", "other"),
        ('"a"', "string", "other"),
        ('"b"', "string", "other"),
        ("2", "int", "other"),
    ]


def test_an_assigned_local_is_no_value() -> None:
    source = b"""package q;
import static org.junit.jupiter.api.Assertions.*;
class MTest {
    @org.junit.jupiter.api.Test
    void m() {
        int count = 0;
        count++;
        assertTrue(count == 3);
    }
}
"""
    assert sites_of("q.MTest::m", "src/test/java/q/MTest.java", source) == [
        ("0", "int", "other"),
        ("3", "int", "expected"),
    ]


def test_what_is_no_test_has_no_sites() -> None:
    assert W.sites(PATH, SOURCE, ["org.x.ParserTest::missing", "org.x.Other::parsesNumbers"]) == []
    assert (
        W.sites(
            PATH,
            SOURCE.replace(b"package org.x;", b"package org.w;"),
            ["org.x.ParserTest::parsesNumbers"],
        )
        == []
    )
    # The test method, not the overload that takes an argument.
    assert ("7", "int", "expected") not in sites_of("org.x.ParserTest::parsesNumbers")


EVERY = [
    "org.x.ParserTest::parsesNumbers",
    "org.x.ParserTest::assertjChains",
    "org.x.ParserTest::lengths",
    "org.x.ParserTest::words(int, String)[2]",
    "org.x.ParserTest$Inner::inner",
]


def check_perturbation(source: bytes, site: Site, out: bytes) -> str:
    """The new literal; asserts the rest of the file is unchanged and it parses."""
    tail = len(source) - site.end
    assert (
        out[: site.start] == source[: site.start] and out[len(out) - tail :] == source[site.end :]
    )
    new = out[site.start : len(out) - tail].decode()
    assert new != site.text
    assert not syntax.parse("java", out).root_node.has_error
    return new


@pytest.mark.parametrize("seed", range(6))
def test_every_perturbation_parses_differs_and_keeps_the_form(seed: int) -> None:
    cases = [(PATH, SOURCE, EVERY), (JUNIT4_PATH, JUNIT4, ["org.y.LegacyTest::messagesFirst"])]
    for path, source, tests in cases:
        for site in W.sites(path, source, tests):
            out = W.perturb(source, site, random.Random(seed))
            if punctuation_only(site.text):
                assert out is None, site  # no change of "-" reads naturally
                continue
            assert out is not None, site
            assert out == W.perturb(source, site, random.Random(seed))
            new = check_perturbation(source, site, out)
            if site.kind in ("string", "char"):
                assert new[0] == site.text[0] and new[-1] == site.text[-1]
                assert len(new) == len(site.text)
            elif site.kind in ("int", "float"):
                if not site.text.startswith("0x"):
                    assert new[-1:].isdigit() == site.text[-1:].isdigit()  # L, f kept
                assert new.startswith("0x") == site.text.startswith("0x")
            elif site.kind == "bool":
                assert {new, site.text} == {"true", "false"}


def test_text_blocks_keep_their_quotes() -> None:
    source = b'package p;\nclass TTest {\n    @org.junit.jupiter.api.Test\n    void t() {\n        org.junit.jupiter.api.Assertions.assertEquals("""\n            hello\n            """, P.text());\n    }\n}\n'
    sites = W.sites("src/test/java/p/TTest.java", source, ["p.TTest::t"])
    assert [(s.kind, s.role) for s in sites] == [("string", "expected")]
    for seed in range(10):
        new = check_perturbation(
            source, sites[0], W.perturb(source, sites[0], random.Random(seed)) or b""
        )
        assert new.startswith('"""\n') and new.endswith('"""') and len(new) == len(sites[0].text)


# ------------------------------------------------------------------------------------ copies


def test_copies_are_methods_after_their_test() -> None:
    inner = W.sites(PATH, SOURCE, ["org.x.ParserTest$Inner::inner"])[0]
    out = W.copies(
        PATH,
        SOURCE,
        [
            ("org.x.ParserTest$Inner::inner", inner, "innerCopy"),
            ("org.x.ParserTest::lengths(String)[2]", None, "lengthsCopy"),
        ],
    ).decode()
    assert not syntax.parse("java", out.encode()).root_node.has_error
    assert (
        '    @ParameterizedTest\n    @ValueSource(strings = {"a", "bb", "ccc"})\n    void lengthsCopy(String s) {'
        in out
    )
    inner_class = out[out.index("class Inner") :]
    assert "        @Test\n        void innerCopy() {" in inner_class
    assert out.count("assertEquals('x', Parser.first") == 1
    assert W.copy_id("org.x.ParserTest::lengths(String)[2]", "lengthsCopy") == (
        "org.x.ParserTest::lengthsCopy(String)[2]"
    )
    assert W.copy_id("org.x.ParserTest$Inner::inner", "innerCopy") == (
        "org.x.ParserTest$Inner::innerCopy"
    )


def test_copies_refuse_what_is_not_there() -> None:
    with pytest.raises(UsageError):
        W.copies(PATH, SOURCE, [("org.x.ParserTest::missing", None, "x")])


def test_new_names() -> None:
    taken: set[str] = set()
    rng = random.Random(2)
    for _ in range(10):
        name = W.new_name("org.x.ParserTest::parsesNumbers", rng, taken)
        assert re.fullmatch(r"[a-z]+([A-Z][a-z]+){1,3}", name) and name not in taken
        taken.add(name)
        legacy = W.new_name("org.x.OldTest::testParse", rng, taken)
        assert re.fullmatch(r"test([A-Z][a-z]+){2,4}", legacy)


# ------------------------------------------------------------------------------ with javac

_STUBS = {
    "org/junit/Test.java": """package org.junit;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target(ElementType.METHOD)
public @interface Test {}
""",
    "org/junit/Assert.java": """package org.junit;
public final class Assert {
    public static void assertEquals(Object e, Object a) {
        if (!java.util.Objects.equals(e, a)) throw new AssertionError(e + " != " + a);
    }
    public static void assertEquals(String m, Object e, Object a) { assertEquals(e, a); }
    public static void assertArrayEquals(Object[] e, Object[] a) {
        if (!java.util.Arrays.equals(e, a)) throw new AssertionError("arrays");
    }
}
""",
    "Main.java": """public final class Main {
    public static void main(String[] args) throws Exception {
        Class<?> cls = Class.forName(args[0]);
        for (int i = 1; i < args.length; i++) {
            String outcome = "pass";
            try {
                cls.getMethod(args[i]).invoke(cls.getConstructor().newInstance());
            } catch (java.lang.reflect.InvocationTargetException e) {
                outcome = "fail";
            }
            System.out.println(args[i] + " " + outcome);
        }
    }
}
""",
}


def _run_java(tree: Path, cls: str, methods: list[str]) -> dict[str, str]:
    stubs = tree.parent / "stubs"
    for rel, text in _STUBS.items():
        (stubs / rel).parent.mkdir(parents=True, exist_ok=True)
        (stubs / rel).write_text(text)
    sources = [str(p) for p in [*stubs.rglob("*.java"), *(tree / "src").rglob("*.java")]]
    out = tree.parent / "classes"
    subprocess.run(
        ["javac", "-d", str(out), *sources], check=True, capture_output=True, timeout=300
    )
    proc = subprocess.run(
        ["java", "-cp", str(out), "Main", cls, *methods],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac")
def test_javac_copies_and_twins_of_the_example(tmp_path: Path) -> None:
    from swe_forge.example.catalog import create_language_example

    tree = tmp_path / "javakit"
    create_language_example("java", tree)
    path = "src/test/java/org/sweforge/javakit/SqueezeTest.java"
    source = (tree / path).read_bytes()
    test = "org.sweforge.javakit.SqueezeTest::squeezeLongRuns"
    sites = W.sites(path, source, [test])
    expected = [s for s in sites if s.role == "expected"]
    assert [s.text for s in expected] == ['"a b"']  # the message `in` is no site
    specs = [(test, None, "plainCopy")] + [(test, s, f"siteCopy{s.index}") for s in sites]
    (tree / path).write_bytes(W.copies(path, source, specs))
    names = ["squeezeLongRuns", "plainCopy", *(f"siteCopy{s.index}" for s in sites)]
    got = _run_java(tree, "org.sweforge.javakit.SqueezeTest", names)
    assert got["plainCopy"] == got["squeezeLongRuns"] == "pass"
    for s in expected:
        assert got[W.copy_id(test, f"siteCopy{s.index}").split("::")[1]] == "fail"
    (tree / path).write_bytes(W.perturb(source, expected[0], random.Random(1)) or b"")
    got = _run_java(
        tree, "org.sweforge.javakit.SqueezeTest", ["squeezeLongRuns", "squeezeNoSpaces"]
    )
    assert got == {"squeezeLongRuns": "fail", "squeezeNoSpaces": "pass"}


GUARDED = b"""package org.x;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class GuardTest {
    @Test
    void rejectsEmpty() {
        Parser p = new Parser("abc");
        assertTrue(p.parse().isEmpty(), "nothing parsed");
        assertFalse(p.failed());
    }

    @Test
    void counts() {
        assertEquals(3, new Parser("abc").count());
        assertTrue(ready());
    }
}
"""


def test_assert_true_and_false_conditions_are_guard_sites_where_no_literal_is_expected() -> None:
    # First contact (apache/commons-text, networknt/json-schema-validator): tests whose checks
    # are assertTrue/assertFalse on a computed condition had no expected literal, hence no
    # decoy. Their conditions, negated, are decoys the gold patch fails where they run.
    path = "src/test/java/org/x/GuardTest.java"
    assert sites_of("org.x.GuardTest::rejectsEmpty", path, GUARDED) == [
        ('"abc"', "string", "other"),
        ("p.parse().isEmpty()", "guard", "expected"),
    ]  # assertFalse(!p.failed()) would be a double negative no one writes: no guard
    assert sites_of("org.x.GuardTest::counts", path, GUARDED) == [
        ("3", "int", "expected"),
        ('"abc"', "string", "other"),
    ]
    guard = W.sites(path, GUARDED, ["org.x.GuardTest::rejectsEmpty"])[1]
    out = W.perturb(GUARDED, guard, random.Random(0))
    assert out is not None and b'assertTrue(!p.parse().isEmpty(), "nothing parsed");' in out
    copied = W.copies(path, GUARDED, [(guard.test, guard, "rejectsNothing")])
    copy = copied[copied.index(b"void rejectsNothing") :]
    assert b"assertTrue(!p.parse().isEmpty()" in copy
    assert copied.count(b"assertTrue(p.parse().isEmpty(),") == 1
