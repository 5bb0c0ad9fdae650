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
