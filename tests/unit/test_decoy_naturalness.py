"""Decoys that read like the literals they replace, placed where the base cannot give them away
(ecosystems/decoys.py and the naturalness measure of ecosystems/syntax.py)."""

from __future__ import annotations

import random

from swe_forge.ecosystems import ecosystem_named, syntax, writer_for
from swe_forge.ecosystems.canaries import Site
from swe_forge.ecosystems.decoys import (
    NATURAL,
    added_lines,
    calibration_copies,
    fresh_sites,
    natural_first,
    strangeness,
)

JAVA_PATH = "src/test/java/org/x/GreeterTest.java"
JAVA = b"""package org.x;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GreeterTest {
    @Test
    void greets() {
        assertEquals("hello world", Greeter.greet("world"));
        assertEquals("hello there", Greeter.greet("there"));
        assertEquals(40, Greeter.width());
    }
}
"""


def _site(text: bytes, literal: bytes, kind: str = "string") -> Site:
    start = text.index(literal)
    return Site(
        JAVA_PATH,
        "org.x.GreeterTest::greets",
        0,
        start,
        start + len(literal),
        kind,
        "expected",
        literal.decode(),
    )


def test_a_word_the_file_never_uses_stands_out_and_one_it_uses_does_not() -> None:
    site = _site(JAVA, b'"hello world"')
    # "there" is a word of the file: as natural as "world"; "wxrld" is no word of it.
    assert strangeness(JAVA, site, '"hello there"') < strangeness(JAVA, site, '"hello wxrld"')
    assert strangeness(JAVA, site, '"hello wxrld"') > NATURAL


def test_a_round_number_stays_round_and_a_near_copy_is_seen() -> None:
    number = _site(JAVA, b"40", "int")
    assert strangeness(JAVA, number, "30") < strangeness(JAVA, number, "41")
    context = syntax.LiteralContext(JAVA, number.start, number.end)
    # Near copy: one character off another string of the file.
    near = context.features('"hello therf"')
    far = context.features('"wombat here"')
    assert near[2] == 1 and far[2] == 0


def test_round_numbers_move_by_their_grain_half_of_the_time() -> None:
    got = {syntax.perturb_int(40, random.Random(seed)) for seed in range(200)}
    assert {30, 50} <= got  # by its grain (10)
    assert got & {37, 38, 39, 41, 42, 43}  # and near it
    assert all(n >= 0 and n != 40 for n in got)


def test_the_writer_keeps_the_most_natural_of_its_draws() -> None:
    writer = writer_for("java")
    (site,) = [s for s in writer.sites(JAVA_PATH, JAVA, ["org.x.GreeterTest::greets"])][:1]
    assert site.text == '"hello world"'
    chosen = [writer.perturb(JAVA, site, random.Random(seed)) for seed in range(20)]
    literals = {c[site.start : site.end].decode() for c in chosen if c is not None}
    assert literals, "no decoy at all"
    # Never another string of the file (what a wrong fix may return: its inputs, other answers).
    assert '"hello there"' not in literals
    # Every decoy of "hello world" is made of words the file has (a whole word swapped or
    # another string's value): none is a misspelling.
    words = set(syntax.vocabulary(JAVA))
    for literal in literals:
        assert all(w in words for w in literal.strip('"').split()), literal


def test_braces_are_never_changed() -> None:
    for seed in range(40):
        out = syntax.perturb_pieces([("{} {}!", False)], random.Random(seed))
        assert out is not None and out[0].count("{") == 2 and out[0].count("}") == 2
    assert syntax.perturb_pieces([("{}", False)], random.Random(0)) is None


def test_natural_first_keeps_only_natural_decoys_when_there_are_enough() -> None:
    assert natural_first([0.0, 2.0, 0.1, 0.5, 3.0]) == [0, 2, 3]
    # Too few natural ones: every one, the most natural first.
    assert natural_first([2.0, 0.0, 1.0]) == [1, 2, 0]
    assert natural_first([]) == []


PATCH = """diff --git a/pkg/a_test.go b/pkg/a_test.go
--- a/pkg/a_test.go
+++ b/pkg/a_test.go
@@ -3,4 +3,5 @@ import "testing"
 func TestOld(t *testing.T) {
-\tif F() != 1 {
+\tif F() != 2 {
 \t}
+\t// added
 }
diff --git a/pkg/b_test.go b/pkg/b_test.go
new file mode 100644
--- /dev/null
+++ b/pkg/b_test.go
@@ -0,0 +1,2 @@
+package pkg
+// new
"""


def test_added_lines_are_the_lines_the_test_patch_wrote() -> None:
    assert added_lines(PATCH) == {"pkg/a_test.go": {4, 6}, "pkg/b_test.go": {1, 2}}
    assert added_lines("not a diff") == {}


GO_BASE = b"""package pkg

import "testing"

func TestF(t *testing.T) {
\tif got := F("old"); got != "left as it was" {
\t\tt.Fatal(got)
\t}
}
"""
GO_TEST_PATCH = """diff --git a/pkg/f_test.go b/pkg/f_test.go
--- a/pkg/f_test.go
+++ b/pkg/f_test.go
@@ -6,4 +6,7 @@ func TestF(t *testing.T) {
 \tif got := F("old"); got != "left as it was" {
 \t\tt.Fatal(got)
 \t}
+\tif got := F("new"); got != "written by the patch" {
+\t\tt.Fatal(got)
+\t}
 }
"""


def test_fresh_sites_prefer_what_the_test_patch_wrote() -> None:
    from swe_forge.ecosystems.decoys import test_texts

    texts = test_texts(GO_TEST_PATCH, {"pkg/f_test.go": GO_BASE.decode()})
    text = texts["pkg/f_test.go"]
    writer = writer_for("go")
    sites = writer.sites("pkg/f_test.go", text, ["pkg::TestF"])
    assert {s.text for s in sites} >= {'"left as it was"', '"written by the patch"'}
    fresh = fresh_sites(sites, text, added_lines(GO_TEST_PATCH)["pkg/f_test.go"])
    assert fresh and all("left" not in s.text and "old" not in s.text for s in fresh)
    # A test with nothing on the patch's lines keeps its sites (decoys of some use, not none).
    assert fresh_sites(sites, text, set()) == sites
    # Calibration follows the same rule.
    _files, mapping = calibration_copies(
        ecosystem_named("go"),
        ["pkg::TestF"],
        texts,
        limit=10,
        rng=random.Random(0),
        added=added_lines(GO_TEST_PATCH),
    )
    assert mapping and all(
        spec["site"]["text"] in {'"new"', '"written by the patch"'} for spec in mapping.values()
    )


def test_the_writer_keeps_a_round_number_round() -> None:
    writer = writer_for("java")
    sites = writer.sites(JAVA_PATH, JAVA, ["org.x.GreeterTest::greets"])
    (site,) = [s for s in sites if s.text == "40"]
    for seed in range(20):
        out = writer.perturb(JAVA, site, random.Random(seed))
        assert out is not None
        digits = out[site.start :].decode()
        value = int(digits[: len(digits) - len(digits.lstrip("0123456789"))])
        assert value != 40 and value % 10 == 0, value


PY_BASE = """from pkg import f


def test_f():
    assert f("old") == "left as it was"
"""
PY_TEST_PATCH = """diff --git a/tests/test_f.py b/tests/test_f.py
--- a/tests/test_f.py
+++ b/tests/test_f.py
@@ -3,3 +3,4 @@ from pkg import f
\x20
 def test_f():
     assert f("old") == "left as it was"
+    assert f("new") == "written by the patch"
"""


def test_python_decoys_keep_to_the_lines_the_test_patch_wrote() -> None:
    from swe_forge.ecosystems.python.canary import fresh as _fresh_python

    test = "tests/test_f.py::test_f"
    armed = {(test, 0, 7, "compare"), (test, 1, 7, "compare"), (test, 1, 9, "compare")}
    shown = {"tests/test_f.py": PY_BASE}
    assert _fresh_python(armed, PY_TEST_PATCH, shown) == {
        (test, 1, 7, "compare"),
        (test, 1, 9, "compare"),
    }
    # A parametrized id is the same function; a test with no site on the patch's lines, or
    # whose file is not shown, keeps what it has.
    param = (f"{test}[a-b]", 1, 3, "compare")
    assert param in _fresh_python({param, (f"{test}[a-b]", 0, 3, "compare")}, PY_TEST_PATCH, shown)
    only_old = {(test, 0, 7, "compare")}
    assert _fresh_python(only_old, PY_TEST_PATCH, shown) == only_old
    assert _fresh_python(armed, PY_TEST_PATCH, {}) == armed


PY_WRAPPED_PATCH = """diff --git a/tests/test_g.py b/tests/test_g.py
new file mode 100644
--- /dev/null
+++ b/tests/test_g.py
@@ -0,0 +1,10 @@
+import pytest
+from pkg import g, h, expected
+
+
+def test_g():
+    assert g(1) == expected()
+    assert g(2) == "two"
+    assert h(3) in expected()
+    with pytest.raises(ValueError):
+        g(-1)
"""


def test_python_decoys_that_call_the_judges_helpers_go_where_their_kind_has_plain_ones() -> None:
    # site 0 (compare, no literal: a helper call), site 1 (compare, a literal), site 2 (in,
    # no literal), site 3 (raises: another builtin class by name).
    from swe_forge.ecosystems.python.canary import plain as _plain_python

    test = "tests/test_g.py::test_g"
    armed = {(test, 0, 5, "compare"), (test, 1, 5, "compare"), (test, 2, 5, "in")}
    armed |= {(test, 3, 5, "raises")}
    kept = _plain_python(armed, PY_WRAPPED_PATCH, {})
    # The compare kind has a plain decoy: its helper call goes; "in" has none: it stays.
    assert kept == {(test, 1, 5, "compare"), (test, 2, 5, "in"), (test, 3, 5, "raises")}


def test_python_decoys_are_never_a_copy_of_another_string_of_the_file() -> None:
    from swe_forge.gates.harness import swe_forge_canaries as canaries

    source = (
        "def test_s():\n    assert f('abc') == 'abd'\n    assert f('abe') == 'abf'\n"
        "    assert f('x') == 'abc'\n"
    )
    strings = {"'abc'", "'abd'", "'abe'", "'abf'", "'x'"}
    for seed in range(40):
        decoy, _ = canaries.decoy_source(source, "test_s", 2, seed, "t0k")
        assert decoy is not None
        new = decoy.splitlines()[3].split("== ")[1]
        assert new != "'abc'" and new not in strings, new


def test_a_swapped_word_is_never_one_the_string_already_says() -> None:
    # "oh no!" in a file whose words are "oh", "no", "is": swapping "no" for "oh" (or "oh"
    # for "no") would make "oh oh!", a word said twice, which no one writes (anyhow's tests
    # told their decoys so). Only "is" may come in, in either language's writer.
    from swe_forge.gates.harness import swe_forge_canaries as judge

    host, python = set(), set()
    for seed in range(60):
        with syntax.using_vocabulary(("is", "no", "oh")):
            got = syntax.perturb_pieces([("oh no!", False)], random.Random(seed))
        assert got is not None
        host.add(got[0])
        python.add(judge._perturb_literal('"oh no!"', random.Random(seed), ["is", "no", "oh"]))
    assert host == {"is no!", "oh is!"}, host
    assert python == {'"is no!"', '"oh is!"'}, python
