"""Issue 23, Java: what first contact with real Maven projects showed the adapter must do for
any project of the kind (build options, the JDK of the host's resolution, scope read on code
only, a report check that holds for any console reporter and any test resource)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems.java import deps
from swe_forge.ecosystems.java.adapter import JavaEcosystem
from swe_forge.ecosystems.java.runner import build_options
from swe_forge.errors import BuildError
from swe_forge.records import ImageRecord, TaskManifest

JAVA = JavaEcosystem()
T = "src/test/java/org/x/"


# ------------------------------------------------------------------ 1. build options
def test_default_config_skips_checks_that_do_not_change_outcomes() -> None:
    got = build_options(load_config().images.build_options)
    for option in ("-Drat.skip=true", "-Djacoco.skip=true", "-Denforcer.skip=true"):
        assert option in got
    assert build_options({}) == ()
    with pytest.raises(BuildError):
        build_options({"java": ("clean",)})  # a phase, not an option


def test_build_options_reach_the_gate_and_the_verifier() -> None:
    rec = ImageRecord("i", "o/r", "c")
    rec.project_name = "g:a"
    rec.recipe = {"harness": {"build_options": ["-Drat.skip=true"]}}
    argv = JAVA.runner_for(rec).run_spec([f"{T}FooTest.java"], order_seed=1, hash_seed=0)["argv"]
    assert "-Drat.skip=true" in argv
    # Before the judge's own settings: a configured option cannot undo one of ours.
    assert argv.index("-Drat.skip=true") < argv.index("-Dsurefire.runOrder=random")
    assert "-Drat.skip=true" in JAVA.runner_for(rec).command([f"{T}FooTest.java"], order_seed=1)
    task = TaskManifest.__new__(TaskManifest)
    object.__setattr__(task, "FAIL_TO_PASS", ["org.x.FooTest::a"])
    object.__setattr__(task, "PASS_TO_PASS", [])
    object.__setattr__(
        task,
        "harness",
        {"test_files": [f"{T}FooTest.java"], "build_options": ["-Djacoco.skip=true"]},
    )
    object.__setattr__(task, "test_patch", "")
    run = JAVA.run_job(task, "/t", timeout=10, output_limit=100)["run"]
    assert "-Djacoco.skip=true" in run["argv"]


def test_build_options_reach_the_hosts_resolution(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[list[str]] = []

    def fake_run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(deps.subprocess, "run", fake_run)
    deps._mvn(
        tmp_path,
        "/jdk",
        ["test-compile"],
        cwd=tmp_path,
        repo=tmp_path,
        options=("-Drat.skip=true",),
    )
    assert "-Drat.skip=true" in seen[0]
    assert seen[0].index("-Drat.skip=true") < seen[0].index("test-compile")


# ------------------------------------------------------------------ 3. scope on code only
LICENSED = [
    "/*",
    " Permission is hereby granted, free of charge, to any person obtaining a copy of this",
    ' software and associated documentation files (the "Software"), to deal in the Software',
    "*/",
    "package org.x;",
    "",
    "public class FooTest {",
    "    @Test",
    "    public void first() {",
    '        check("static void fake(int a) {");',
    "        check(1);",
    "    }",
    "",
    "    /*",
    "     an explanation that reads like a helper method (see below)",
    "     */",
    "    @Test",
    "    public void second() {",
    "        check(2);",
    "    }",
    "}",
]


def _hunk(path: str, start: int, old: list[str], new: list[str], context: list[str]) -> str:
    body = "".join(f" {x}\n" for x in context)
    body += "".join(f"-{x}\n" for x in old) + "".join(f"+{x}\n" for x in new)
    n = len(context)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{start},{n + len(old)} +{start},{n + len(new)} @@\n{body}"
    )


def test_scope_does_not_read_comments_or_strings_as_declarations() -> None:
    path = f"{T}FooTest.java"
    base = ("\n".join(LICENSED) + "\n").encode()
    read = lambda p: base if p == path else None  # noqa: E731
    # A hunk at the top (a new import) whose context is a licence line in a block comment
    # (no leading stars): that line is no helper method "files" that the import changes, so
    # the class is not wholly in scope.
    patch = _hunk(path, 2, [], ["import org.y.Z;"], LICENSED[1:5])
    scope = JAVA.scope(patch, read)
    assert not scope.new_classes and not scope.covers("org.x.FooTest::second")
    # A hunk that starts inside a comment and changes it: its "helper method (" line is no
    # declaration.
    patch = _hunk(
        path,
        14,
        ["     an explanation that reads like a helper method (see below)"],
        ["     an explanation that reads like a helper method (see above)"],
        [LICENSED[13]],
    )
    scope = JAVA.scope(patch, read)
    assert not scope.new_classes and not scope.covers("org.x.FooTest::second")
    patch = _hunk(path, 9, ["        check(1);"], ["        check(3);"], LICENSED[8:10])
    assert JAVA.scope(patch, read).names == {("org.x.FooTest", "first")}
    # An added line whose string holds a declaration's shape stays in its test.
    patch = _hunk(path, 9, [], ['        check("void other(int b) {");'], LICENSED[8:10])
    assert JAVA.scope(patch, read).names == {("org.x.FooTest", "first")}


# ------------------------------------------------------------------ 4. tamper checks
def _xml(suite: str, cases: list[tuple[str, str]], cls: str = "") -> bytes:
    body = ""
    for name, outcome in cases:
        inner = '<failure message="boom" type="x"/>' if outcome == "failed" else ""
        body += f'<testcase name="{name}" classname="{cls or suite}">{inner}</testcase>'
    return f'<?xml version="1.0"?><testsuite name="{suite}">{body}</testsuite>'.encode()


def _parse(stdout: str, files: dict[str, bytes], classes: dict[str, str]) -> dict[str, Any]:
    from swe_forge.gates.harness import swe_forge_polyglot as polyglot

    spec = {"format": "surefire-xml", "dirs": ["target/surefire-reports"], "files": files}
    spec["classes"] = classes
    return polyglot.parse(spec, stdout.encode())


#: A tree reporter's console (no "Tests run: ... -- in <class>" line per class), then the
#: totals Surefire prints whatever the reporter.
TREE = (
    "[INFO] +-- Foo Test - 0.1s\n[INFO] | +-- [OK] ok - 0.01s\n[INFO] | '-- [XX] bad - 0.01s\n"
    "[INFO] +-- Bar Test - 0.1s\n[INFO] | '-- [OK] one - 0.01s\n"
    "[INFO] Results:\n[INFO]\n"
)


def test_reports_checked_against_the_totals_under_any_console_reporter() -> None:
    classes = {"org.x.FooTest": f"{T}FooTest.java", "org.x.BarTest": f"{T}BarTest.java"}
    files = {
        # A suite named by its display name (usePhrasedTestSuiteClassName): its cases name
        # the class.
        "r/TEST-org.x.FooTest.xml": _xml(
            "Foo Test", [("ok", "passed"), ("bad", "failed")], "org.x.FooTest"
        ),
        "r/TEST-org.x.BarTest.xml": _xml("org.x.BarTest", [("one", "passed")]),
    }
    out = TREE + "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0\n[INFO] BUILD FAILURE\n"
    ev = _parse(out, files, classes)
    assert ev["tamper"] == [] and ev["collect_errors"] == []
    assert ev["tests"]["org.x.FooTest::bad"] == "failed" and ev["exitstatus"] == 1
    # A forged report that hides the failure no longer adds up to Maven's totals.
    forged = dict(files)
    forged["r/TEST-org.x.FooTest.xml"] = _xml(
        "Foo Test", [("ok", "passed"), ("bad", "passed")], "org.x.FooTest"
    )
    assert any("Maven counted" in t for t in _parse(out, forged, classes)["tamper"])
    # A report that went missing does not either.
    gone = {k: v for k, v in files.items() if "Bar" not in k}
    assert any("Maven counted" in t for t in _parse(out, gone, classes)["tamper"])
    # Reports without any tests Maven counted.
    assert _parse(TREE + "[INFO] BUILD SUCCESS\n", files, classes)["tamper"]


def test_a_build_output_copy_of_a_locked_resource_is_not_a_new_runner_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swe_forge.gates.harness import swe_forge_polyglot as polyglot
    from swe_forge.gates.harness import swe_forge_supervisor as sup

    monkeypatch.setattr(sup, "TESTBED", str(tmp_path))
    resource = tmp_path / "src/test/resources/tox.ini"
    resource.parent.mkdir(parents=True)
    resource.write_text("[tox]\nenvlist = py3\n")
    before = sup.digest_files([str(resource)])
    # Maven's process-test-resources copies it; a planted one differs or lies elsewhere.
    copy = tmp_path / "core/target/test-classes/tox.ini"
    copy.parent.mkdir(parents=True)
    copy.write_text("[tox]\nenvlist = py3\n")
    planted = tmp_path / "core/target/classes/conftest.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("import os\n")
    changed = tmp_path / "target/tox.ini"
    changed.parent.mkdir()
    changed.write_text("[pytest]\naddopts = -p evil\n")
    outside = tmp_path / "src/tox.ini"
    outside.write_text("[tox]\nenvlist = py3\n")
    report = {"format": "surefire-xml", "dirs": ["target/surefire-reports"]}
    got = sup.new_runner_files(before, report, polyglot)
    assert sorted(got) == ["core/target/classes/conftest.py", "src/tox.ini", "target/tox.ini"]
    # Another runner's format has no such output directory: the copy counts there.
    assert "core/target/test-classes/tox.ini" in sup.new_runner_files(
        before, {"format": "go-test-json"}, polyglot
    )
    # A link where the copy would be is no copy.
    copy.unlink()
    copy.symlink_to(resource)
    assert "core/target/test-classes/tox.ini" in sup.new_runner_files(before, report, polyglot)


# ------------------------------------------------------------------ 2. the JDK of the host
def test_host_resolves_with_the_images_jdk_major(tmp_path: Path) -> None:
    from swe_forge.ecosystems.java.toolchain import (
        host_jdk_of_major,
        jdk_choices,
        runnable_jdk,
    )

    # A project tested on 8 to 21 in 2026: 21 first, then the older pinned JDKs.
    choices = jdk_choices("2026-07-18", "1.8", [8, 11, 17, 21])
    assert choices == [(21, "trixie"), (17, "bookworm"), (11, "bullseye")]
    # Never older than the release the pom asks for.
    assert jdk_choices("2026-07-18", "17", [17, 21]) == [(21, "trixie"), (17, "bookworm")]
    # The image's JDK 21 does not run here (a newer C library) and the host has no JDK 21
    # (only a newer one): the next choice whose JDK runs here, not another major.
    tried: list[int] = []

    def home_of(jdk: int, distro: str) -> str:
        tried.append(jdk)
        return f"/copies/{jdk}" if jdk == 17 else ""

    assert runnable_jdk(choices, home_of) == (17, "bookworm", "/copies/17")
    assert tried == [21, 17]
    with pytest.raises(BuildError):
        runnable_jdk(choices, lambda jdk, distro: "")
    # A host JDK counts for its own major only.
    for name in ("temurin-25-jdk-amd64", "java-17-openjdk-amd64"):
        (tmp_path / name / "bin").mkdir(parents=True)
        (tmp_path / name / "bin" / "java").write_text("")
    (tmp_path / "java-1.17.0-openjdk-amd64").symlink_to(tmp_path / "java-17-openjdk-amd64")
    assert host_jdk_of_major(21, tmp_path) == ""
    assert host_jdk_of_major(17, tmp_path) == str(tmp_path / "java-17-openjdk-amd64")


# ------------------------------------------------- source/target below what the JDK compiles
def _pom(props: str = "", plugin: str = "", managed: str = "") -> str:
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><groupId>g</groupId>'
        f"<artifactId>a</artifactId><properties>{props}</properties><build>"
        f"<pluginManagement><plugins>{managed}</plugins></pluginManagement>"
        f"<plugins>{plugin}</plugins></build></project>"
    )


def _compiler(version: str = "", conf: str = "") -> str:
    return (
        "<plugin><groupId>org.apache.maven.plugins</groupId>"
        "<artifactId>maven-compiler-plugin</artifactId>"
        + (f"<version>{version}</version>" if version else "")
        + (f"<configuration>{conf}</configuration>" if conf else "")
        + "</plugin>"
    )


def test_an_implicit_old_source_is_raised_to_what_the_jdk_compiles() -> None:
    from swe_forge.ecosystems.java.toolchain import compiler_levels

    # Nothing set, Maven 3.6 binds maven-compiler-plugin 3.1: its default 1.5, which JDK 11
    # refuses ("Source option 5 is no longer supported").
    opts, info = compiler_levels(_pom(), 11, "3.6.3")
    assert opts == ("-Dmaven.compiler.source=6", "-Dmaven.compiler.target=6")
    assert info["levels"] == {"source": 5, "target": 5} and "pinned" not in info
    # JDK 17 compiles 7 at least.
    opts, _ = compiler_levels(_pom(), 17, "3.6.3")
    assert opts == ("-Dmaven.compiler.source=7", "-Dmaven.compiler.target=7")
    # A plugin version whose default is new enough, named in the pom (managed or not) or
    # bound by Maven 3.9: nothing raised, nothing lowered.
    assert compiler_levels(_pom(plugin=_compiler("3.11.0")), 11, "3.6.3")[0] == ()
    assert compiler_levels(_pom(managed=_compiler("3.13.0")), 17, "3.6.3")[0] == ()
    assert compiler_levels(_pom(), 17, "3.9.9")[0] == ()
    # Properties set high enough, or a JDK that compiles 1.5: left alone.
    high = "<maven.compiler.source>1.8</maven.compiler.source>"
    high += "<maven.compiler.target>1.8</maven.compiler.target>"
    assert compiler_levels(_pom(props=high), 21, "3.6.3")[0] == ()
    assert compiler_levels(_pom(), 8, "3.6.3")[0] == ()
    # A low property is raised by the same property.
    low = "<maven.compiler.source>1.5</maven.compiler.source>"
    low += "<maven.compiler.target>1.8</maven.compiler.target>"
    assert compiler_levels(_pom(props=low), 11, "3.8.8")[0] == ("-Dmaven.compiler.source=6",)


def test_a_source_pinned_in_the_plugins_configuration_is_said() -> None:
    from swe_forge.ecosystems.java.toolchain import compiler_levels

    # A property the configuration names is raised through that property...
    props = "<jdk.level>1.5</jdk.level>"
    conf = "<source>${jdk.level}</source><target>${jdk.level}</target>"
    opts, info = compiler_levels(_pom(props=props, plugin=_compiler("3.1", conf)), 11, "3.6.3")
    assert opts == ("-Djdk.level=6",) and "pinned" not in info
    # ...a literal cannot be: said, not raised.
    conf = "<source>1.5</source><target>1.5</target>"
    opts, info = compiler_levels(_pom(plugin=_compiler("3.1", conf)), 11, "3.6.3")
    assert opts == ()
    assert "<source>1.5</source>" in info["pinned"] and "-D" in info["pinned"]
