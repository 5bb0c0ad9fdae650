"""The Java adapter's pure parts: toolchain choice, pom reading, Surefire reports checked
against Maven's console, canaries, guards, capabilities and scope."""

from __future__ import annotations

import io
import os
import random
import tarfile
from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems import detect_ecosystem, ecosystem_named, for_runner
from swe_forge.ecosystems.java.adapter import (
    CAPABILITIES,
    JavaEcosystem,
    SurefireRunner,
    choose_jdk,
    choose_maven,
    ci_java_versions,
    class_of,
    image_jdk_on_host,
    pom_info,
    probe_source,
)
from swe_forge.ecosystems.java.runner import module_of
from swe_forge.ecosystems.scanning import capability_violations
from swe_forge.errors import BuildError
from swe_forge.gates.harness import swe_forge_polyglot as polyglot
from swe_forge.mining.classify import PathClassifier

JAVA = JavaEcosystem()
T = "src/test/java/org/x/"
M = "src/main/java/org/x/"


def _diff(path: str, old: list[str], new: list[str], *, created: bool = False) -> str:
    head = f"diff --git a/{path} b/{path}\n"
    if created:
        head += "new file mode 100644\n--- /dev/null\n"
    else:
        head += f"--- a/{path}\n"
    head += f"+++ b/{path}\n@@ -{0 if created else 1},{len(old)} +1,{len(new)} @@\n"
    return head + "".join(f"-{x}\n" for x in old) + "".join(f"+{x}\n" for x in new)


@pytest.mark.parametrize(
    ("date", "release", "want"),
    [
        ("2020-05-01", "", (11, "bullseye")),
        ("2020-05-01", "1.8", (11, "bullseye")),
        ("2022-01-10", "11", (17, "bookworm")),
        ("2022-01-10", "21", (21, "trixie")),
        ("2024-04-08", "11", (21, "trixie")),
        ("2024-04-08", "1.6", (11, "bullseye")),
        ("2015-01-01", "", (11, "bullseye")),
    ],
)
def test_jdk_by_date_and_release(date: str, release: str, want: tuple[int, str]) -> None:
    assert choose_jdk(date, release) == want


WORKFLOW = """\
jobs:
  build:
    strategy:
      matrix:
        java-version:
          - 8
          - '11'   # LTS
        os: [ubuntu-latest]
    steps:
      - uses: actions/setup-java@v4
        with:
          java-version: ${{ matrix.java-version }}
          java-package: jdk
          distribution: temurin
"""


@pytest.mark.parametrize(
    ("files", "want"),
    [
        ({"w.yml": WORKFLOW}, [8, 11]),
        ({".travis.yml": "language: java\njdk:\n  - openjdk8\n  - oraclejdk11\n"}, [8, 11]),
        ({"w.yml": "      matrix:\n        java: [ 11, 17, 21 ]\n"}, [11, 17, 21]),
        ({"w.yml": "          java-version: 1.8\n", "v.yml": "  jdk: '17.0.2'\n"}, [8, 17]),
        ({"w.yml": "      - run: mvn -B verify\n        distribution: zulu\n"}, []),
    ],
)
def test_ci_java_versions(files: dict[str, str], want: list[int]) -> None:
    assert ci_java_versions(files) == want


@pytest.mark.parametrize(
    ("date", "release", "ci", "want"),
    [
        # javapoet (2024): tested on Java 8 only, Error Prone 2.3.1 fails on JDK 21's classes.
        ("2024-01-16", "1.8", [8], (11, "bullseye")),
        ("2024-01-16", "1.8", [8, 11, 17], (17, "bookworm")),
        ("2024-01-16", "", [17, 21, 25], (21, "trixie")),
        ("2024-01-16", "17", [8], (17, "bookworm")),
        ("2020-01-16", "", [8, 11, 14], (11, "bullseye")),
    ],
)
def test_jdk_no_newer_than_the_ci_tests_with(
    date: str, release: str, ci: list[int], want: tuple[int, str]
) -> None:
    assert choose_jdk(date, release, ci) == want


class _ExportEngine:
    """An engine whose image is a tiny Debian-like JDK (bin/java is a shell script)."""

    def __init__(self, java_exit: int) -> None:
        self.java_exit = java_exit
        self.exports = 0

    def image(self, ref: str) -> None:
        return None

    def export(self, image: str):  # type: ignore[no-untyped-def]
        self.exports += 1
        home = "usr/lib/jvm/java-11-openjdk-amd64"
        members: list[tuple[str, str, bytes]] = [
            ("dir", home, b""),
            ("file", f"{home}/bin/java", f"#!/bin/sh\nexit {self.java_exit}\n".encode()),
            ("link", f"{home}/lib/jvm.cfg", b"/etc/java-11-openjdk/jvm-amd64.cfg"),
            ("link", f"{home}/lib/security/cacerts", b"/etc/ssl/certs/java/cacerts"),
            ("file", "etc/java-11-openjdk/jvm-amd64.cfg", b"-server KNOWN\n"),
            ("file", "etc/passwd", b"root:x:0:0\n"),
        ]
        for kind, name, data in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                yield info, None
            elif kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, data.decode()
                yield info, None
            else:
                info.size, info.mode = len(data), 0o755
                yield info, io.BytesIO(data)


def test_image_jdk_is_relocated_to_the_host(tmp_path: Path) -> None:
    engine = _ExportEngine(0)
    home = Path(image_jdk_on_host(engine, "base:jdk11", 11, tmp_path))
    assert home.name == "java-11-openjdk-amd64" and (home / "bin" / "java").is_file()
    # Links into /etc/java-11-openjdk point into the copy; the trust store stays the host's.
    assert (home / "lib" / "jvm.cfg").read_text() == "-server KNOWN\n"
    assert os.readlink(home / "lib" / "security" / "cacerts") == "/etc/ssl/certs/java/cacerts"
    assert not list(tmp_path.rglob("passwd"))
    assert image_jdk_on_host(engine, "base:jdk11", 11, tmp_path) == str(home)
    assert engine.exports == 1


def test_two_runs_copy_the_image_jdk_once(tmp_path: Path) -> None:
    # Two admissions on one machine (a CI run and a quickstart) asked for the same JDK at
    # once: both copied into one folder and one failed with FileExistsError. One copies now,
    # the other waits and finds it.
    import threading
    import time

    engine = _ExportEngine(0)
    members = engine.export

    def slow_export(image: str):  # type: ignore[no-untyped-def]
        for item in members(image):
            time.sleep(0.01)  # the other run arrives while this one is copying
            yield item

    engine.export = slow_export  # type: ignore[method-assign]
    got: list[str] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            got.append(image_jdk_on_host(engine, "base:jdk11", 11, tmp_path))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(set(got)) == 1 and got[0].endswith("java-11-openjdk-amd64")
    assert engine.exports == 1


def test_image_jdk_that_does_not_run_here_is_not_used(tmp_path: Path) -> None:
    engine = _ExportEngine(1)
    assert image_jdk_on_host(engine, "base:jdk21", 11, tmp_path) == ""
    assert image_jdk_on_host(engine, "base:jdk21", 11, tmp_path) == ""
    assert engine.exports == 1


def test_jdk_newer_than_any_pinned_is_a_build_error() -> None:
    with pytest.raises(BuildError):
        choose_jdk("2024-01-01", "25")


def test_maven_by_date() -> None:
    assert choose_maven("2020-01-01")[0] == "3.6.3"
    assert choose_maven("2022-06-01")[0] == "3.8.8"
    assert choose_maven("2024-04-08")[0] == "3.9.9"
    assert len(choose_maven("2024-04-08")[1]) == 128


def test_pom_info_reads_properties_and_compiler_plugin() -> None:
    pom = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
    <parent><groupId>org.p</groupId><artifactId>parent</artifactId></parent>
    <artifactId>lib</artifactId>
    <properties><java.version>17</java.version>
      <maven.compiler.source>1.8</maven.compiler.source></properties>
    <modules><module>core</module></modules>
    <build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>
      <configuration><release>${java.version}</release></configuration></plugin></plugins></build>
    </project>"""
    info = pom_info(pom)
    assert info["group"] == "org.p" and info["artifact"] == "lib"
    assert info["release"] == "17" and info["modules"] == ["core"]
    assert pom_info("not xml")["release"] == ""


def test_detect_and_runner_lookup() -> None:
    files = {"pom.xml": b"<project/>"}
    assert detect_ecosystem(files.get) == "java"
    assert detect_ecosystem({"build.gradle": b""}.get) == "java"  # refused: gradle_unavailable
    assert isinstance(ecosystem_named("java"), JavaEcosystem)
    assert isinstance(for_runner("maven-surefire"), JavaEcosystem)


def test_test_files_and_classes() -> None:
    assert class_of(f"{T}FooTest.java") == "org.x.FooTest"
    assert class_of(f"core/{T}FooTest.java") == "org.x.FooTest"
    assert class_of(f"{M}Foo.java") == ""
    assert JAVA.is_test_file(f"{T}FooTest.java") and JAVA.is_test_file(f"{T}TestFoo.java")
    assert JAVA.is_test_file(f"{T}FooTests.java")
    assert not JAVA.is_test_file(f"{T}FooIT.java") and not JAVA.is_test_file(f"{T}Helper.java")
    classifier = PathClassifier(load_config().classify)
    assert classifier.is_test_module(f"{T}FooTest.java")
    assert not classifier.is_test_module(f"{M}FooTest.java")


def test_release_specific_test_roots() -> None:
    # jsoup-2576: tests in src/test/java11, a root its pom adds on JDK 11+ (build-helper).
    path = "src/test/java11/org/jsoup/helper/HttpClientExecutorTest.java"
    assert class_of(path) == "org.jsoup.helper.HttpClientExecutorTest"
    assert JAVA.is_test_file(path)
    assert JAVA.test_files(_diff(path, ["a"], ["b"])) == [path]
    assert module_of("core/" + path) == "core/" and module_of(path) == ""
    assert class_of("src/test/javadoc/org/x/FooTest.java") == ""
    shadow = _diff(
        "src/main/java11/org/junit/Assert.java", [], ["package org.junit;"], created=True
    )
    found = JAVA.patch_violations(shadow, gold_patch="", read_base=None)
    assert [v["code"] for v in found] == ["runner_config"]


# --------------------------------------------------------------------- Surefire reports
def _xml(cls: str, cases: list[tuple[str, str]]) -> bytes:
    body = ""
    for name, outcome in cases:
        inner = {
            "passed": "",
            "failed": '<failure message="boom" type="java.lang.AssertionError">trace</failure>',
            "error": '<error message="npe" type="java.lang.NullPointerException"/>',
            "skipped": "<skipped/>",
        }[outcome]
        body += f'<testcase name="{name}" classname="{cls}" time="0.01">{inner}</testcase>'
    return f'<?xml version="1.0"?><testsuite name="{cls}" tests="{len(cases)}">{body}</testsuite>'.encode()


def _line(cls: str, run: int, fail: int = 0, err: int = 0, skip: int = 0) -> str:
    level = "ERROR" if fail or err else "INFO"
    return (
        f"[{level}] Tests run: {run}, Failures: {fail}, Errors: {err}, Skipped: {skip}, "
        f"Time elapsed: 0.1 s -- in {cls}\n"
    )


def _parse(stdout: str, files: dict[str, bytes], classes: dict[str, str] | None = None) -> dict:
    spec = {"format": "surefire-xml", "dirs": ["target/surefire-reports"], "files": files}
    spec["classes"] = classes or {}
    return polyglot.parse(spec, stdout.encode())


def test_parse_surefire_outcomes_agree_with_maven() -> None:
    out = _line("a.FooTest", 4, fail=1, err=1, skip=1) + "[INFO] BUILD FAILURE\n"
    files = {
        "target/surefire-reports/TEST-a.FooTest.xml": _xml(
            "a.FooTest", [("ok", "passed"), ("bad", "failed"), ("npe", "error"), ("s", "skipped")]
        )
    }
    ev = _parse(out, files, {"a.FooTest": f"{T}FooTest.java"})
    assert ev["tests"] == {
        "a.FooTest::ok": "passed",
        "a.FooTest::bad": "failed",
        "a.FooTest::npe": "failed",
        "a.FooTest::s": "skipped",
    }
    assert ev["tamper"] == [] and ev["ended"] and ev["exitstatus"] == 1
    assert "boom" in ev["messages"]["a.FooTest::bad"]


def test_parse_surefire_success() -> None:
    files = {"r/TEST-a.B.xml": _xml("a.B", [("x", "passed")])}
    ev = _parse(_line("a.B", 1) + "[INFO] BUILD SUCCESS\n", files)
    assert ev["exitstatus"] == 0 and ev["ended"] and ev["tests"] == {"a.B::x": "passed"}


@pytest.mark.parametrize(
    ("stdout", "files", "needle"),
    [
        # A forged report that hides a failure Maven counted.
        (
            _line("a.B", 1, fail=1) + "[ERROR] BUILD FAILURE\n",
            {"r/TEST-a.B.xml": _xml("a.B", [("x", "passed")])},
            "Maven counted",
        ),
        # A second file for the same class.
        (
            _line("a.B", 1) + "[INFO] BUILD SUCCESS\n",
            {
                "r/TEST-a.B.xml": _xml("a.B", [("x", "passed")]),
                "r/TEST-a.B2.xml": _xml("a.B", [("x", "passed")]),
            },
            "reported twice",
        ),
        # A report of a class Maven never ran.
        (
            "[INFO] BUILD SUCCESS\n",
            {"r/TEST-a.B.xml": _xml("a.B", [("x", "passed")])},
            "did not run",
        ),
        # A forged console line beside Maven's own.
        (
            _line("a.B", 1) + _line("a.B", 1) + "[INFO] BUILD SUCCESS\n",
            {"r/TEST-a.B.xml": _xml("a.B", [("x", "passed")])},
            "twice by Maven",
        ),
        # Maven ran the class but its report went.
        (_line("a.B", 1) + "[INFO] BUILD SUCCESS\n", {}, "report is missing"),
        # Entities.
        (
            "[INFO] BUILD SUCCESS\n",
            {"r/TEST-a.B.xml": b'<!DOCTYPE x [<!ENTITY a "b">]><testsuite name="a.B"/>'},
            "document type",
        ),
        # Two builds' ends.
        (
            _line("a.B", 1) + "[INFO] BUILD SUCCESS\n[INFO] BUILD SUCCESS\n",
            {"r/TEST-a.B.xml": _xml("a.B", [("x", "passed")])},
            "more than once",
        ),
    ],
)
def test_parse_surefire_tamper(stdout: str, files: dict[str, bytes], needle: str) -> None:
    ev = _parse(stdout, files)
    assert any(needle in t for t in ev["tamper"]), ev["tamper"]


def test_parse_surefire_compile_error_is_a_collection_error() -> None:
    out = (
        "[ERROR] /testbed/src/test/java/org/x/FooTest.java:[9,9] cannot find symbol\n"
        "[INFO] BUILD FAILURE\n"
    )
    ev = _parse(out, {}, {"org.x.FooTest": f"{T}FooTest.java"})
    assert ev["collect_errors"] == [f"{T}FooTest.java"]
    assert ev["ended"] and ev["exitstatus"] == 1 and ev["tests"] == {}
    assert "cannot find symbol" in ev["messages"][f"{T}FooTest.java"]
    # Maven killed before it ended: not ended.
    assert not _parse("", {}, {"org.x.FooTest": f"{T}FooTest.java"})["ended"]


def test_report_dirs_are_emptied_and_read_without_links(tmp_path: Path) -> None:
    testbed = tmp_path / "testbed"
    rep = testbed / "target" / "surefire-reports"
    rep.mkdir(parents=True)
    (rep / "TEST-planted.xml").write_text("<testsuite/>")
    uid, gid = os.getuid(), os.getgid()
    safe = lambda rel: ".." not in rel.split("/")  # noqa: E731
    made = polyglot.fresh_report_dirs(str(testbed), ["target/surefire-reports"], uid, gid, safe)
    assert made == ["target/surefire-reports"] and list(rep.iterdir()) == []
    (rep / "TEST-a.B.xml").write_bytes(b"<testsuite/>")
    (tmp_path / "outside.xml").write_text("secret")
    (rep / "TEST-link.xml").symlink_to(tmp_path / "outside.xml")
    (rep / "a.B.txt").write_text("not a report")
    got = polyglot.read_report_dirs(str(testbed), ["target/surefire-reports", "nope"])
    assert got == {"target/surefire-reports/TEST-a.B.xml": b"<testsuite/>"}
    assert polyglot.fresh_report_dirs(str(testbed), ["../x"], uid, gid, safe) == []


def test_probe_source_names_its_class(tmp_path: Path) -> None:
    (tmp_path / "FooTest.java").write_text("package org.x;\n\nimport org.junit.Test;\n")
    probe = probe_source(tmp_path / "SweForgeProbeTest.java")
    assert "class SweForgeProbeTest" in probe and "void probe()" in probe
    assert probe.startswith("package org.x;")


def test_a_testng_neighbour_gets_a_testng_probe(tmp_path: Path) -> None:
    # First contact (failsafe-lib/failsafe): beside TestNG classes no probe was written, the
    # host's Surefire run selected nothing and never fetched its TestNG provider, and every
    # run in the image failed offline (collection_error 3 of 3).
    (tmp_path / "AsyncTest.java").write_text(
        "package dev.failsafe;\n\nimport org.testng.annotations.Test;\n\n"
        "@Test\npublic class AsyncTest {}\n"
    )
    probe = probe_source(tmp_path / "SweForgeProbeTest.java")
    assert probe.startswith("package dev.failsafe;\n")
    assert "import org.testng.annotations.Test;" in probe
    assert "public class SweForgeProbeTest" in probe and "public void probe()" in probe


def test_probe_carries_its_neighbours_licence_header(tmp_path: Path) -> None:
    # Apache RAT (every Apache Commons build) failed the host resolution on a probe without
    # a licence header: commons-text 0 of 3 environments at first contact.
    header = (
        "/*\n * Licensed to the Apache Software Foundation (ASF) under one or more\n"
        " * contributor license agreements.\n */\n"
    )
    (tmp_path / "FooTest.java").write_text(
        header
        + "\npackage org.x;\n\nimport org.junit.jupiter.api.Test;\n/** doc */\nclass FooTest {}\n"
    )
    probe = probe_source(tmp_path / "SweForgeProbeTest.java")
    assert probe.startswith(header + "package org.x;\n")
    assert "/** doc */" not in probe and "class SweForgeProbeTest" in probe
    (tmp_path / "FooTest.java").write_text(
        "// SPDX-License-Identifier: MIT\npackage org.x;\nimport org.junit.Test;\n"
    )
    assert probe_source(tmp_path / "SweForgeProbeTest.java").startswith(
        "// SPDX-License-Identifier: MIT\npackage org.x;"
    )


# ----------------------------------------------------------------------------- guards
def test_patch_violations_runner_configuration() -> None:
    pom_plugin = _diff(
        "pom.xml", [], ["    <maven.test.failure.ignore>true</maven.test.failure.ignore>"]
    )
    cases = {
        "pom": pom_plugin,
        "mvn": _diff(".mvn/maven.config", [], ["-Dmaven.test.failure.ignore=true"], created=True),
        "services": _diff(
            "src/main/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener",
            [],
            ["org.x.Listener"],
            created=True,
        ),
        "shadow": _diff(
            "src/main/java/org/junit/Assert.java", [], ["package org.junit;"], created=True
        ),
        "props": _diff("src/main/resources/junit-platform.properties", [], ["x=y"], created=True),
    }
    for name, patch in cases.items():
        got = JAVA.patch_violations(patch, gold_patch="", read_base=None)
        assert [v["code"] for v in got] == ["runner_config"], (name, got)
        # What the gold patch does itself is allowed.
        assert JAVA.patch_violations(patch, gold_patch=patch, read_base=None) == [], name
    free = _diff("pom.xml", ["  <name>a</name>"], ["  <name>b</name>", "  <!-- note -->"])
    assert JAVA.patch_violations(free, gold_patch="", read_base=None) == []
    ok = _diff(f"{M}Foo.java", ["a"], ["b"])
    assert JAVA.patch_violations(ok, gold_patch="", read_base=None) == []


def test_capabilities_of_added_main_lines_only() -> None:
    patch = _diff(
        f"{M}Foo.java",
        [],
        [
            "import org.junit.Assert;",
            '        System.out.println("<testcase name=\\"x\\"/>");',
            "        Runtime.getRuntime().halt(0);",
            "        f.setAccessible(true);",
        ],
    ) + _diff(f"{T}FooTest.java", [], ["System.exit(0);"])
    caps = JAVA.capabilities(patch)
    assert caps == sorted(
        ["test framework", "System.out/err", "test-runner text", "System.exit", "reflection"]
    )
    assert set(caps) <= set(CAPABILITIES)
    assert capability_violations(caps, base=["reflection"], gold=["System.exit"])
    assert not capability_violations(["reflection"], base=["reflection"], gold=[])


def test_base_capabilities_skip_tests() -> None:
    files = {
        f"{M}A.java": b"class A { void f() { System.exit(1); } }",
        f"{T}ATest.java": b"import org.junit.Test;",
    }
    assert JAVA.base_capabilities(files, files.get) == ["System.exit"]


def test_scope_covers_changed_methods_and_new_classes() -> None:
    changed = (
        f"diff --git a/{T}FooTest.java b/{T}FooTest.java\n--- a/{T}FooTest.java\n"
        f"+++ b/{T}FooTest.java\n@@ -10,6 +10,11 @@ public class FooTest {{\n"
        "     @Test\n     public void old() {\n-        check(1);\n+        check(2);\n     }\n"
        "+\n+    @Test\n+    public void added() {\n+        check(3);\n+    }\n"
        "     @Test\n     public void other() {\n"
    )
    new = _diff(f"{T}BarTest.java", [], ["class BarTest {}"], created=True)
    scope = JAVA.scope(changed + new)
    assert scope.covers("org.x.FooTest::old") and scope.covers("org.x.FooTest::added")
    assert scope.covers("org.x.FooTest::added[1]")
    assert not scope.covers("org.x.FooTest::other")
    assert scope.covers("org.x.BarTest::anything") and scope.covers("org.x.BarTest$Inner::x")
    assert JAVA.test_files(changed + new) == [f"{T}BarTest.java", f"{T}FooTest.java"]


PARAMETERIZED = [
    "package org.x;",
    "@RunWith(Parameterized.class)",
    "public class NpmTest {",
    "    @Parameters",
    "    public static Iterable<Object[]> getParameters() {",
    "        return Arrays.asList(new Object[][] {",
    *[f'            {{ "1.{i}.0", "1.2", true, }},' for i in range(12)],
    "        });",
    "    }",
    "    @Test",
    "    public void test() {",
    "        assertEquals(expected, check(version));",
    "    }",
    "    @Test(expected = IllegalStateException.class)",
    "    public void rejects() {",
    "        check(null);",
    "        check(null);",
    "        check(null);",
    "        check(null);",
    "    }",
    "}",
]


def test_scope_reads_the_enclosing_method_and_whole_class_for_changed_tables() -> None:
    # semver4j-11: rows added deep in a @Parameters table (no declaration in the hunk).
    path = f"{T}NpmTest.java"
    base = "\n".join(PARAMETERIZED) + "\n"
    patch = (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -14,3 +14,4 @@\n"
        + "".join(f" {x}\n" for x in PARAMETERIZED[13:16])
        + '+            { "2.0.1", "1.2", false, },\n'
    )
    scope = JAVA.scope(patch, lambda p: base.encode() if p == path else None)
    assert ("org.x.NpmTest", "getParameters") in scope.names
    assert scope.covers("org.x.NpmTest::test[13]")
    # A change inside a test method only (its declaration above the hunk) is that test.
    inner = (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -27,3 +27,3 @@\n"
        '         check(null);\n-        check(null);\n+        check("");\n'
        "         check(null);\n"
    )
    scope = JAVA.scope(inner, lambda p: base.encode() if p == path else None)
    assert scope.names == {("org.x.NpmTest", "rejects")} and not scope.new_classes
    assert not scope.covers("org.x.NpmTest::test[1]")


CLEANER = [
    "package org.x;",
    "",
    "import org.junit.jupiter.api.Test;",
    "import static org.junit.jupiter.api.Assertions.assertEquals;",
    "",
    "public class CleanerTest {",
    "    @Test",
    "    public void keepsText() {",
    '        assertEquals("a",',
    '            clean("a"));',
    "    }",
    "",
    "    @Test",
    "    public void dropsScript() {",
    '        assertEquals("",',
    '            clean("<script>"));',
    "    }",
    "}",
]


def test_an_assertion_continued_on_the_next_line_is_no_changed_helper() -> None:
    # First contact (jhy/jsoup-2579): a test patch adding one method whose `assertEquals("...",`
    # runs over two lines read that line as a declaration of a helper `assertEquals`, which
    # the base has too without @Test: every test of the class went into scope (60 of them
    # passed at the base).
    path = f"{T}CleanerTest.java"
    base = "\n".join(CLEANER) + "\n"
    patch = (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -16,3 +16,9 @@\n"
        "         }\n     }\n \n"
        "+    @Test\n"
        "+    public void dropsStyle() {\n"
        '+        assertEquals("",\n'
        '+            clean("<style>"));\n'
        "+    }\n"
        "+\n"
    )
    scope = JAVA.scope(patch, lambda p: base.encode() if p == path else None)
    assert ("org.x.CleanerTest", "dropsStyle") in scope.names
    assert not any(name == "assertEquals" for _, name in scope.names), scope.names
    assert not scope.covers("org.x.CleanerTest::keepsText")


def test_runner_spec_orders_randomly_and_reports() -> None:
    files = [f"{T}FooTest.java", f"core/{T}BarTest.java"]
    spec = SurefireRunner("g:a").run_spec(files, order_seed=7, hash_seed=0)
    argv = spec["argv"]
    assert argv[:2] == ["mvn", "-o"] and "-Dsurefire.runOrder.random.seed=7" in argv
    assert "-Dtest=org.x.BarTest,org.x.FooTest" in argv
    assert "-Dmaven.test.redirectTestOutputToFile=true" in argv
    assert spec["report"]["format"] == "surefire-xml"
    assert spec["report"]["dirs"] == ["core/target/surefire-reports", "target/surefire-reports"]
    assert spec["report"]["classes"]["org.x.BarTest"] == f"core/{T}BarTest.java"


def test_run_job_selects_methods_and_the_calibration_copies() -> None:
    from swe_forge.records import TaskManifest

    task = TaskManifest.__new__(TaskManifest)
    object.__setattr__(task, "FAIL_TO_PASS", ["org.x.FooTest::a"])
    object.__setattr__(task, "PASS_TO_PASS", ["org.x.FooTest::b[1]", "org.x.BarTest::c"])
    object.__setattr__(task, "harness", {"test_files": [f"{T}FooTest.java", f"{T}BarTest.java"]})
    object.__setattr__(task, "test_patch", "")
    extra = {"org.x.FooTest::handlesEmptyField": {"test": "org.x.FooTest::a"}}
    job = JAVA.run_job(
        task, "/t", timeout=10, output_limit=100, extra=extra, rng=random.Random(1), test_timeout=9
    )
    run = job["run"]
    assert run["canary_map"] == extra and "twins" not in run
    test_arg = next(a for a in run["argv"] if a.startswith("-Dtest="))
    assert "org.x.FooTest#a+b*+handlesEmptyField" in test_arg and "org.x.BarTest#c" in test_arg
    assert "-Djunit.jupiter.execution.timeout.default=9 s" in run["argv"]
    # 4 methods selected: the forked JVM may take 9 s for each (JUnit 4 has no per-test limit).
    assert "-Dsurefire.timeout=36" in run["argv"]
    assert run["report"]["classes"] == {
        "org.x.BarTest": f"{T}BarTest.java",
        "org.x.FooTest": f"{T}FooTest.java",
    }
    twins = JAVA.run_job(task, "/t", timeout=10, output_limit=100, twins=[{}, {}])["run"]
    assert twins["twins"] == [{}, {}] and "-Dsurefire.timeout" not in " ".join(twins["argv"])


def test_twins_preload_the_held_out_test_classes() -> None:
    # The judge's agent takes every Java test file of the test patch into the test JVM (its
    # module's test classes, its class and nested classes by prefix) and has it closed, with
    # its source, before the project's code runs; a one-run calibration does not.
    from swe_forge.records import TaskManifest

    patch = (
        f"diff --git a/core/{T}FooTest.java b/core/{T}FooTest.java\n"
        f"--- a/core/{T}FooTest.java\n+++ b/core/{T}FooTest.java\n"
        "@@ -1 +1,2 @@\n class FooTest {}\n+// more\n"
        f"diff --git a/{T}BarTest.java b/{T}BarTest.java\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/{T}BarTest.java\n@@ -0,0 +1 @@\n+class BarTest {{}}\n"
        "diff --git a/src/main/java/org/x/Foo.java b/src/main/java/org/x/Foo.java\n"
        "--- a/src/main/java/org/x/Foo.java\n+++ b/src/main/java/org/x/Foo.java\n"
        "@@ -1 +1 @@\n-class Foo {}\n+class Foo { }\n"
    )
    task = TaskManifest.__new__(TaskManifest)
    object.__setattr__(task, "FAIL_TO_PASS", ["org.x.FooTest::a"])
    object.__setattr__(task, "PASS_TO_PASS", ["org.x.BarTest::c"])
    object.__setattr__(
        task, "harness", {"test_files": [f"core/{T}FooTest.java", f"{T}BarTest.java"]}
    )
    object.__setattr__(task, "test_patch", patch)
    twins = JAVA.run_job(task, "/t", timeout=10, output_limit=100, twins=[{}, {}])["run"]
    assert twins["preload"] == {
        "entries": [
            {
                "dir": "/testbed/core/target/test-classes",
                "prefix": "org/x/FooTest",
                "sources": [f"core/{T}FooTest.java"],
            },
            {
                "dir": "/testbed/target/test-classes",
                "prefix": "org/x/BarTest",
                "sources": [f"{T}BarTest.java"],
            },
        ]
    }
    one = JAVA.run_job(task, "/t", timeout=10, output_limit=100)["run"]
    assert "preload" not in one


def test_a_declared_package_must_be_the_files_directory_and_not_a_frameworks() -> None:
    shadow = _diff(
        "src/main/java/org/sweforge/javakit/Assert.java",
        [],
        ["package org.junit;", "public class Assert {}"],
        created=True,
    )
    found = JAVA.patch_violations(shadow, gold_patch="", read_base=None)
    assert len(found) == 1 and "declares package org.junit" in found[0]["detail"]
    # Unicode escapes and comments are read as javac reads them.
    hidden = shadow.replace("+package org.junit;", "+\\u0070ackage /* x */ org.\\u006aunit;")
    found = JAVA.patch_violations(hidden, gold_patch="", read_base=None)
    assert len(found) == 1 and "org.junit" in found[0]["detail"]
    # Elsewhere than its directory, a project's own package is refused too.
    moved = shadow.replace("+package org.junit;", "+package org.sweforge;")
    found = JAVA.patch_violations(moved, gold_patch="", read_base=None)
    assert len(found) == 1 and "javac places the class by its package" in found[0]["detail"]
    # A changed file's package line, as the patch changes it.
    changed = _diff("src/main/java/org/x/A.java", ["package org.x;"], ["package org.hamcrest;"])
    assert JAVA.patch_violations(changed, gold_patch="", read_base=None)
    # Where it belongs, nothing is said.
    honest = shadow.replace("+package org.junit;", "+package org.sweforge.javakit;")
    assert JAVA.patch_violations(honest, gold_patch="", read_base=None) == []


def test_a_new_class_outside_the_projects_packages_is_refused() -> None:
    gold = _diff("src/main/java/org/sweforge/javakit/Strings.java", ["a"], ["b"])
    guava = _diff(
        "src/main/java/com/google/common/collect/ImmutableList.java",
        [],
        ["package com.google.common.collect;", "public class ImmutableList {}"],
        created=True,
    )
    found = JAVA.patch_violations(guava + gold, gold_patch=gold, read_base=None)
    assert [v["code"] for v in found] == ["runner_config"]
    assert "outside the project's packages (org.sweforge)" in found[0]["detail"]
    sub = guava.replace("com/google/common/collect", "org/sweforge/util").replace(
        "com.google.common.collect", "org.sweforge.util"
    )
    assert JAVA.patch_violations(sub + gold, gold_patch=gold, read_base=None) == []


def test_a_framework_project_may_change_its_own_package() -> None:
    gold = _diff(
        "src/main/java/org/skyscreamer/jsonassert/JSONCompare.java",
        ["package org.skyscreamer.jsonassert;", "a"],
        ["package org.skyscreamer.jsonassert;", "b"],
    )
    other = gold.replace("JSONCompare", "JSONAssert")
    assert JAVA.patch_violations(other, gold_patch=gold, read_base=None) == []
    assert JAVA.patch_violations(other, gold_patch="", read_base=None)


def test_a_setting_behind_a_comment_is_not_a_comment() -> None:
    # Red team, session 19: any pom line ending in `-->` passed as a comment line, so
    # `<maven.test.failure.ignore>true</...> <!-- -->` changed the build unguarded.
    for line in (
        "    <maven.test.failure.ignore>true</maven.test.failure.ignore> <!-- -->",
        "    <!-- --> <skipTests>true</skipTests>",
        "    <name>x</name><skipTests>true</skipTests>",
    ):
        got = JAVA.patch_violations(
            _diff("pom.xml", ["  <name>a</name>"], [line]), gold_patch="", read_base=None
        )
        assert [v["code"] for v in got] == ["runner_config"], line
    comments = _diff("pom.xml", [], ["  <!-- starts", "  more text", "  ends -->"])
    got = JAVA.patch_violations(comments, gold_patch="", read_base=None)
    # The middle line of a comment is not known to be one: refused, as before.
    assert [v["code"] for v in got] == ["runner_config"]


def test_testng_releases_that_name_no_method_are_refused(tmp_path: Path) -> None:
    """failsafe-lib/failsafe (TestNG 6.9.10): every test of a class annotated @Test came back
    named ""; the project is refused for its runner, not filed as tampering."""
    from swe_forge.ecosystems.java.image import resolved_versions
    from swe_forge.records import ImageRecord

    m2 = tmp_path / "m2"
    for version, jar in (("6.9.10", True), ("7.5", True), ("6.9.12", False)):
        d = m2 / "org" / "testng" / "testng" / version
        d.mkdir(parents=True)
        if jar:
            (d / f"testng-{version}.jar").write_bytes(b"PK")
    assert resolved_versions(m2, "org.testng", "testng") == ["6.9.10", "7.5"]
    assert resolved_versions(m2, "junit", "junit") == []
    eco = ecosystem_named("java")
    rec = ImageRecord("a__b-1", "a/b", "0" * 40)
    assert eco.refusal(rec) is None
    rec.recipe = {"testng": ["7.5"]}
    assert eco.refusal(rec) is None
    rec.recipe = {"testng": ["6.9.10", "7.5"]}
    refused = eco.refusal(rec)
    assert refused is not None and refused[0] == "runner_unsupported"
    assert "6.9.10" in refused[1]
