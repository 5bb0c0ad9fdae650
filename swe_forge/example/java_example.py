"""The Java (Maven) example repository, built deterministically like textkit and gokit.

``swe-forge/javakit`` (JUnit 4.13.2 its only dependency) has the same kinds of pull requests
as the other examples: bug fixes and a feature whose tests fail before and pass after
(admitted; the feature's test class does not even compile before), a fix whose tests already
passed before (rejected: no_fail_to_pass) and a documentation-only change (not a candidate).
``EXPECTED_JAVA`` records what the pipeline must conclude.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from swe_forge.example.polyglot import ExamplePR as _PR
from swe_forge.example.polyglot import build_squash_history
from swe_forge.example.skeleton import data_text
from swe_forge.git.writer import Identity

JAVA_OWNER = "swe-forge"
JAVA_NAME = "javakit"
JAVA_REPO = f"{JAVA_OWNER}/{JAVA_NAME}"
JAVA_MODULE = "org.sweforge:javakit"
_START = datetime(2024, 4, 8, 9, 0, 0, tzinfo=UTC)
_STEP = timedelta(hours=6)
_MAINTAINER = Identity("Aino Virtanen", "aino.virtanen@javakit.example.org")
_CONTRIBUTOR = Identity("Rafael Okafor", "rafael.okafor@javakit.example.org")
_SRC = "src/main/java/org/sweforge/javakit"
_TEST = "src/test/java/org/sweforge/javakit"

_POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>

  <groupId>org.sweforge</groupId>
  <artifactId>javakit</artifactId>
  <version>0.1.0</version>
  <packaging>jar</packaging>
  <name>javakit</name>
  <description>Small string helpers for Java.</description>

  <properties>
    <maven.compiler.release>11</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>

  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
"""
_README = "# javakit\n\nSmall string helpers for Java.\n\nMIT, see LICENSE.\n"
_STRINGS = """\
package org.sweforge.javakit;

/** Small string helpers. */
public final class Strings {
    private Strings() {}

    /** Shortens s to at most width characters, ending with "..." when it cut something. */
    public static String truncate(String s, int width) {
        if (s.length() < width) {
            return s;
        }
        if (width <= 3) {
            return s.substring(0, width);
        }
        return s.substring(0, width - 3) + "...";
    }

    /** Returns s with its characters in reverse order. */
    public static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }

    /** Collapses runs of spaces into one space. */
    public static String squeeze(String s) {
        return s.replace("  ", " ");
    }
}
"""
_STRINGS_TEST = """\
package org.sweforge.javakit;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class StringsTest {
    @Test
    public void truncateShort() {
        assertEquals("abc", Strings.truncate("abc", 10));
    }

    @Test
    public void truncateLong() {
        assertEquals("abc...", Strings.truncate("abcdefghij", 6));
    }

    @Test
    public void reverse() {
        assertEquals("olleh", Strings.reverse("hello"));
    }
}
"""


_PRS: tuple[_PR, ...] = (
    _PR(
        1,
        "fix-truncate-exact",
        "truncate cuts strings that exactly fit the width",
        'Strings.truncate("abcdef", 6) returns "abc..." although the string fits in 6 '
        "characters; a string exactly as long as the width must come back unchanged.",
        (
            (
                f"{_SRC}/Strings.java",
                "        if (s.length() < width) {",
                "        if (s.length() <= width) {",
            ),
            (
                f"{_TEST}/StringsTest.java",
                "    @Test\n    public void reverse() {",
                "    @Test\n    public void truncateExactWidth() {\n"
                '        assertEquals("abcdef", Strings.truncate("abcdef", 6));\n    }\n\n'
                "    @Test\n    public void reverse() {",
            ),
        ),
    ),
    _PR(
        2,
        "squeeze-runs",
        "squeeze leaves double spaces behind runs of three or more",
        'Strings.squeeze("a    b") gives "a  b": runs longer than two spaces are only halved. '
        "Every run of spaces should become exactly one space.",
        (
            (
                f"{_SRC}/Strings.java",
                '        return s.replace("  ", " ");',
                '        return s.replaceAll(" {2,}", " ");',
            ),
            (
                f"{_TEST}/SqueezeTest.java",
                "",
                "package org.sweforge.javakit;\n\n"
                "import static org.junit.Assert.assertEquals;\n\n"
                "import org.junit.Test;\n\n"
                "public class SqueezeTest {\n"
                "    @Test\n    public void squeezeLongRuns() {\n"
                "        for (int n : new int[] {2, 3, 4, 7}) {\n"
                '            String in = "a" + " ".repeat(n) + "b";\n'
                '            assertEquals(in, "a b", Strings.squeeze(in));\n'
                "        }\n    }\n\n"
                "    @Test\n    public void squeezeNoSpaces() {\n"
                '        assertEquals("ab", Strings.squeeze("ab"));\n    }\n}\n',
            ),
        ),
    ),
    _PR(
        3,
        "words",
        "Add words(), which splits on any run of white space",
        "Callers split on single spaces and get empty words for tabs and runs. Add "
        "Strings.words(s) returning the words of s separated by any white space.",
        (
            (
                f"{_SRC}/Strings.java",
                "    /** Collapses runs",
                "    /** Returns the words of s, separated by any run of white space. */\n"
                "    public static String[] words(String s) {\n"
                "        String trimmed = s.strip();\n"
                '        return trimmed.isEmpty() ? new String[0] : trimmed.split("\\\\s+");\n'
                "    }\n\n    /** Collapses runs",
            ),
            (
                f"{_TEST}/WordsTest.java",
                "",
                "package org.sweforge.javakit;\n\n"
                "import static org.junit.Assert.assertArrayEquals;\n\n"
                "import org.junit.Test;\n\n"
                "public class WordsTest {\n"
                "    @Test\n    public void wordsSplitOnAnyWhiteSpace() {\n"
                '        assertArrayEquals(new String[] {"java", "is", "fun"}, '
                'Strings.words(" java\\tis  fun "));\n'
                "    }\n}\n",
            ),
        ),
    ),
    _PR(
        4,
        "reverse-doc",
        "reverse: say that it keeps surrogate pairs whole",
        "The doc comment should say reverse keeps characters outside the BMP whole; a test "
        "pins that down.",
        (
            (
                f"{_SRC}/Strings.java",
                "    /** Returns s with its characters in reverse order. */",
                "    /** Returns s with its characters (surrogate pairs kept whole) in reverse "
                "order. */",
            ),
            (
                f"{_TEST}/StringsTest.java",
                "    @Test\n    public void reverse() {",
                "    @Test\n    public void reverseKeepsSurrogatePairs() {\n"
                '        assertEquals("b\\uD83D\\uDE00a", Strings.reverse("a\\uD83D\\uDE00b"));\n'
                "    }\n\n    @Test\n    public void reverse() {",
            ),
        ),
    ),
    _PR(
        5,
        "readme",
        "README: add an example",
        "Show truncate in the README.",
        (
            (
                "README.md",
                "Small string helpers for Java.\n",
                'Small string helpers for Java:\n`Strings.truncate("hello", 4)` gives `"h..."`.\n',
            ),
        ),
    ),
)

_F = "org.sweforge.javakit."
#: What the pipeline must conclude about each pull request of javakit.
EXPECTED_JAVA: dict[int, dict[str, object]] = {
    1: {
        "candidate": True,
        "admitted": True,
        "FAIL_TO_PASS": [f"{_F}StringsTest::truncateExactWidth"],
    },
    2: {"candidate": True, "admitted": True, "FAIL_TO_PASS": [f"{_F}SqueezeTest::squeezeLongRuns"]},
    3: {
        "candidate": True,
        "admitted": True,
        "FAIL_TO_PASS": [f"{_F}WordsTest::wordsSplitOnAnyWhiteSpace"],
    },
    4: {"candidate": True, "admitted": False, "reason": "no_fail_to_pass"},
    5: {"candidate": False},
}


def create_java_example(dest: Path) -> str:
    """Build ``swe-forge/javakit`` at ``dest`` (new or empty); returns the head commit."""
    files = {
        "pom.xml": _POM,
        "README.md": _README,
        "LICENSE": data_text("MIT.txt"),
        ".gitignore": "target/\n",
        f"{_SRC}/Strings.java": _STRINGS,
        f"{_TEST}/StringsTest.java": _STRINGS_TEST,
    }
    return build_squash_history(
        dest,
        name=JAVA_NAME,
        repo=JAVA_REPO,
        files=files,
        prs=_PRS,
        start=_START,
        step=_STEP,
        maintainer=_MAINTAINER,
        contributor=_CONTRIBUTOR,
    )
