"""The Go adapter's pure parts: toolchain choice, go.mod, report parsing, guards, scope."""

from __future__ import annotations

import json
from typing import Any

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems import detect_ecosystem, ecosystem_named, for_runner
from swe_forge.ecosystems.go.adapter import (
    CAPABILITIES,
    GoEcosystem,
    GoRunner,
    choose_toolchain,
    go_mod_info,
)
from swe_forge.ecosystems.scanning import capability_violations
from swe_forge.errors import BuildError
from swe_forge.gates.harness import swe_forge_polyglot as polyglot
from swe_forge.gates.runner import RunResult
from swe_forge.mining.classify import FileKind, PathClassifier

GO = GoEcosystem()


def _diff(path: str, old: list[str], new: list[str], *, created: bool = False) -> str:
    head = f"diff --git a/{path} b/{path}\n"
    if created:
        head += "new file mode 100644\n--- /dev/null\n"
    else:
        head += f"--- a/{path}\n"
    head += f"+++ b/{path}\n@@ -{0 if created else 1},{len(old)} +1,{len(new)} @@\n"
    return head + "".join(f"-{x}\n" for x in old) + "".join(f"+{x}\n" for x in new)


@pytest.mark.parametrize(
    ("date", "go_line", "toolchain", "want"),
    [
        ("2024-03-04", "1.21", "", "1.22.12"),  # newest release by the date
        ("2023-09-01", "", "", "1.21.13"),
        ("2019-01-01", "", "", "1.17.13"),  # older than the table: its first entry
        ("2023-09-01", "1.22", "", "1.22.12"),  # raised to go.mod's go line
        ("2023-09-01", "1.21", "1.23.1", "1.23.12"),  # and to its toolchain line
        ("2026-11-30", "", "", "1.26.11"),
    ],
)
def test_toolchain_by_date_and_go_mod(date: str, go_line: str, toolchain: str, want: str) -> None:
    assert choose_toolchain(date, go_line, toolchain) == want


def test_toolchain_newer_than_any_pinned_is_a_build_error() -> None:
    with pytest.raises(BuildError, match="newer than any pinned"):
        choose_toolchain("2024-01-01", "1.99")


def test_go_mod_info() -> None:
    text = "module example.com/x/y\n\ngo 1.21.3\n\ntoolchain go1.22.1\n\nrequire a.b/c v1.0.0\n"
    assert go_mod_info(text) == {"module": "example.com/x/y", "go": "1.21.3", "toolchain": "1.22.1"}


def test_detect_and_runner_lookup() -> None:
    files = {"go.mod": b"module m\n"}
    assert detect_ecosystem(files.get) == "go"
    assert detect_ecosystem({"setup.py": b""}.get) == "python"
    assert for_runner("pytest").name == "python" and for_runner("").name == "python"
    eco = for_runner("go-test")
    assert eco is not None and eco.name == "go"
    assert ecosystem_named("go").runner_name == "go-test"


def test_classifier_knows_go_tests() -> None:
    c = PathClassifier(load_config().classify)
    assert c.classify("pkg/x_test.go") is FileKind.TEST
    assert c.classify("pkg/testdata/in.txt") is FileKind.TEST
    assert c.classify("pkg/x.go") is FileKind.SOURCE
    assert c.is_test_module("pkg/x_test.go")


def _events(*items: dict[str, object]) -> bytes:
    return b"".join(json.dumps(i).encode() + b"\n" for i in items)


def test_parse_go_test_json_outcomes_and_build_failures() -> None:
    data = _events(
        {"Action": "start", "Package": "m/a"},
        {"Action": "run", "Package": "m/a", "Test": "TestOne"},
        {
            "Action": "output",
            "Package": "m/a",
            "Test": "TestOne",
            "Output": "    a_test.go:9: boom\n",
        },
        {"Action": "fail", "Package": "m/a", "Test": "TestOne"},
        {"Action": "pass", "Package": "m/a", "Test": "TestTwo/sub"},
        {"Action": "pass", "Package": "m/a", "Test": "TestTwo"},
        {"Action": "skip", "Package": "m/a", "Test": "TestThree"},
        {"Action": "fail", "Package": "m/a"},
        {"Action": "fail", "Package": "m/b"},  # no test: did not build
        {"Action": "pass", "Package": "m"},
    )
    ev = polyglot.parse(
        {"format": "go-test-json", "module": "m", "packages": ["a", "b", "."]}, data
    )
    assert ev["tests"] == {
        "a::TestOne": "failed",
        "a::TestTwo/sub": "passed",
        "a::TestTwo": "passed",
        "a::TestThree": "skipped",
    }
    assert ev["collect_errors"] == ["b"]
    assert ev["messages"]["a::TestOne"] == "a_test.go:9: boom"
    assert ev["ended"] and ev["connected"] and ev["exitstatus"] == 1


def test_parse_go_test_json_duplicate_is_tamper_and_missing_package_not_ended() -> None:
    data = _events(
        {"Action": "fail", "Package": "m/a", "Test": "TestX"},
        {"Action": "pass", "Package": "m/a", "Test": "TestX"},  # a forged frame
        {"Action": "fail", "Package": "m/a"},
    )
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a", "c"]}, data)
    assert ev["tests"] == {"a::TestX": "failed"}  # the first report stands
    assert any("reported twice" in t for t in ev["tamper"])
    assert not ev["ended"] and "c" in ev["collect_errors"]


def test_parse_ignores_non_json_and_counts_nothing_from_text() -> None:
    data = b"--- PASS: TestX (0.00s)\nok  \tm/a\t0.1s\n"
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a"]}, data)
    assert ev["tests"] == {} and not ev["connected"] and not ev["ended"]


def test_patch_violations_runner_configuration() -> None:
    replace = _diff("go.mod", ["module m"], ["module m", "replace a.b/c => ./c"])
    work = _diff("go.work", [], ["go 1.21", "use ."], created=True)
    vendor = _diff("vendor/modules.txt", [], ["# a.b/c v1"], created=True)
    require = _diff("go.mod", ["module m"], ["module m", "require a.b/c v1.2.0"])
    for patch in (replace, work, vendor):
        found = GO.patch_violations(patch, gold_patch="", read_base=None)
        assert found and found[0]["code"] == "runner_config", patch
    assert GO.patch_violations(require, gold_patch="", read_base=None) == []
    # What the gold patch itself does is allowed.
    assert GO.patch_violations(replace, gold_patch=replace, read_base=None) == []


def test_replace_block_lines_count() -> None:
    patch = _diff(
        "go.mod",
        ["module m", "replace (", ")"],
        ["module m", "replace (", "\ta.b/c => ./fake", ")"],
    )
    assert GO.patch_violations(patch, gold_patch="", read_base=None)


def test_capabilities_of_added_source_lines_only() -> None:
    src = _diff(
        "a.go", ["package a"], ["package a", 'func init() { fmt.Println("x"); os.Exit(0) }']
    )
    test = _diff("a_test.go", ["package a"], ["package a", "func init() { os.Exit(0) }"])
    assert {"fmt.Print", "os.Exit", "init"} <= set(GO.capabilities(src))
    # A test file is read too: one the path guard let through would be compiled in.
    assert "os.Exit" in GO.capabilities(test)
    frame = _diff("a.go", ["package a"], ["package a", 'var s = "\\x16--- PASS: TestX"'])
    assert "test-runner text" in GO.capabilities(frame)
    found = capability_violations(GO.capabilities(src), base=["init"], gold=["fmt.Print"])
    assert len(found) == 1 and "newly uses os.Exit," in found[0]["detail"]
    assert set(CAPABILITIES) >= set(GO.capabilities(src))


def test_base_capabilities_skip_tests_and_vendor() -> None:
    files = {
        "a.go": b'package a\nimport "os"\nfunc F() { os.Exit(1) }\n',
        "a_test.go": b'package a\nimport "unsafe"\n',
        "vendor/x/x.go": b'package x\nimport "syscall"\n',
    }
    assert GO.base_capabilities(sorted(files), files.get) == ["os.Exit"]


def test_scope_covers_declared_and_changed_tests() -> None:
    patch = _diff(
        "pkg/a_test.go",
        ["func TestOld(t *testing.T) {", "}"],
        [
            "func TestOld(t *testing.T) {",
            "\tcheck()",
            "}",
            "func TestNew(t *testing.T) {",
            "}",
        ],
    )
    scope = GO.scope(patch)
    assert scope.covers("pkg::TestNew") and scope.covers("pkg::TestNew/sub")
    assert scope.covers("pkg::TestOld")
    assert not scope.covers("pkg::TestOther") and not scope.covers("other::TestNew")


def test_runner_spec_shuffles_and_reports() -> None:
    spec = GoRunner("m").run_spec(["a/x_test.go", "x_test.go"], order_seed=7, hash_seed=0)
    script = spec["argv"][-1]
    assert "-shuffle=7" in script and "-json" in script and " ./a " in script + " "
    assert spec["report"] == {"format": "go-test-json", "module": "m", "packages": [".", "a"]}
    assert spec["env"]["GOPROXY"] == "off" and spec["env"]["GOFLAGS"] == "-mod=readonly"


def _go_task() -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(
        FAIL_TO_PASS=["pkg::TestA"],
        PASS_TO_PASS=["pkg::TestB", ".::TestC"],
        harness={"module": "m"},
        image={"toolchain": "go1.22.12"},
        test_patch=(
            "diff --git a/pkg/a_test.go b/pkg/a_test.go\n--- a/pkg/a_test.go\n"
            "+++ b/pkg/a_test.go\n@@ -1 +1,2 @@\n package pkg\n+// x\n"
        ),
    )


def test_run_job_twins_build_their_binaries_then_run_them() -> None:
    twins = [{}, {"edits": [{"path": "pkg/a_test.go", "start": 1, "end": 2, "text": "a"}]}]
    job = GO.run_job(_go_task(), "/t", timeout=10, output_limit=100, twins=twins, test_timeout=30)
    run = job["run"]
    assert run["twins"] == twins and run["canary_map"] == {}
    build = run["build"]["argv"][-1]
    # One test binary per package, compiled (nothing runs), kept out of the tests' reach.
    assert "go test -c -vet=off -o /tmp/swe-forge-bin/p0.test ." in build
    assert "go test -c -vet=off -o /tmp/swe-forge-bin/p1.test ./pkg" in build
    assert run["build"]["keep"] == [{"from": "/tmp/swe-forge-bin", "to": "/swe-forge-run/bin/go"}]
    assert run["hide"] == ["pkg/a_test.go", "/tmp/gocache"]
    script = run["argv"][-1]
    assert (
        "/swe-forge-run/bin/go/test2json -t -p m/pkg /swe-forge-run/bin/go/p1.test "
        "-test.v=test2json" in script
    )
    assert "cd /testbed/pkg" in script and "-test.timeout=30s" in script
    assert "'-test.run=^(TestA|TestB|TestC)$'" in script


_STUB_GO = """#!/bin/sh
# A go command whose toolchain has no prebuilt tool but compile and link (Go 1.25 and later)
# or a prebuilt test2json (before): `go env GOTOOLDIR`, and `-o OUT` writes a program.
echo "go $*" >> "$LOG"
if [ "$1" = env ]; then echo "$TOOLDIR"; exit 0; fi
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then
    case "$*" in
      *cmd/test2json*) printf '#!/bin/sh\\necho built-test2json "$@"\\n' > "$2" ;;
      *) printf '#!/bin/sh\\necho test-binary "$@"\\n' > "$2" ;;
    esac
    chmod +x "$2"
  fi
  shift
done
"""


@pytest.mark.parametrize("prebuilt", [False, True])
def test_twin_runs_the_test2json_its_build_kept(tmp_path: Any, prebuilt: bool) -> None:
    """Go 1.25+ ships no prebuilt test2json: a twin whose run called $GOROOT/pkg/tool's
    found none, printed no event and read as a run that never finished (samber/lo,
    fatih/color: every admission's decoy check). The build keeps one, prebuilt or built."""
    import os
    import subprocess

    from swe_forge.ecosystems.go.runner import TWIN_BIN, TWIN_BUILD

    testbed, tooldir, bindir = tmp_path / "testbed", tmp_path / "tool", tmp_path / "bin"
    for d in (testbed / "pkg", tooldir, bindir):
        d.mkdir(parents=True)
    (bindir / "go").write_text(_STUB_GO)
    (bindir / "go").chmod(0o755)
    if prebuilt:
        (tooldir / "test2json").write_text('#!/bin/sh\necho prebuilt-test2json "$@"\n')
        (tooldir / "test2json").chmod(0o755)
    kept = tmp_path / "kept"
    twins = [{}, {"edits": [{"path": "pkg/a_test.go", "start": 1, "end": 2, "text": "a"}]}]
    run = GO.run_job(_go_task(), "/t", timeout=10, output_limit=100, twins=twins)["run"]

    def local(script: str) -> str:
        # The container's places, here: the build dir is what the run finds (keep moves it).
        for old, new in (
            (TWIN_BUILD, str(kept)),
            (TWIN_BIN, str(kept)),
            ("/testbed", str(testbed)),
            ("/usr/local/go", str(tmp_path / "goroot")),
        ):
            script = script.replace(old, new)
        return script

    env = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "LOG": str(tmp_path / "log"),
        "TOOLDIR": str(tooldir),
        "GOCACHE": str(tmp_path / "cache"),
    }
    build = subprocess.run(
        ["/bin/sh", "-c", local(run["build"]["argv"][-1])], env=env, capture_output=True
    )
    assert build.returncode == 0, build.stderr
    assert os.access(kept / "test2json", os.X_OK)
    built = "go build -o" in (tmp_path / "log").read_text()
    assert built is not prebuilt
    out = subprocess.run(["/bin/sh", "-c", local(run["argv"][-1])], env=env, capture_output=True)
    assert out.returncode == 0, out.stderr
    word = "prebuilt-test2json" if prebuilt else "built-test2json"
    lines = out.stdout.decode().splitlines()
    assert [ln.split()[:4] for ln in lines] == [
        [word, "-t", "-p", "m"],
        [word, "-t", "-p", "m/pkg"],
    ]


def test_run_job_of_a_calibration_runs_the_copies_with_go_test() -> None:
    extra = {"pkg::TestParseOrder": {"test": "pkg::TestA"}}
    files = [{"path": "pkg/a_test.go", "text": "package pkg"}]
    job = GO.run_job(_go_task(), "/t", timeout=10, output_limit=100, files=files, extra=extra)
    run = job["run"]
    assert "build" not in run and "twins" not in run
    assert run["files"] == files and run["canary_map"] == extra
    script = run["argv"][-1]
    assert "go test -json" in script and "TestParseOrder" in script and "-timeout=0" in script
    assert run["report"]["packages"] == [".", "pkg"]


def test_twin_run_of_go_before_1_21_asks_for_verbose_output() -> None:
    from swe_forge.ecosystems.go.adapter import twin_run_argv

    old = twin_run_argv("m", ["."], run="^(TestA)$", seed=1, timeout=0, version="1.19.13")
    assert "-test.v=true" in old[-1] and "-test.timeout=0" in old[-1]


def test_parse_go_test_json_binary_died_mid_test_or_between_tests() -> None:
    died = _events(
        {"Action": "run", "Package": "m/a", "Test": "TestOne"},
        {"Action": "pass", "Package": "m/a", "Test": "TestOne"},
        {"Action": "run", "Package": "m/a", "Test": "TestPanics"},
        {"Action": "output", "Package": "m/a", "Output": "panic: boom\n"},
        {"Action": "fail", "Package": "m/a"},
    )
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a"]}, died)
    assert ev["tests"] == {"a::TestOne": "passed", "a::TestPanics": "failed"}
    assert ev["collect_errors"] == [] and ev["exitstatus"] == 1
    between = _events(
        {"Action": "run", "Package": "m/a", "Test": "TestOne"},
        {"Action": "pass", "Package": "m/a", "Test": "TestOne"},
        {"Action": "fail", "Package": "m/a"},
    )
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a"]}, between)
    assert ev["tests"] == {"a::TestOne": "passed"} and ev["collect_errors"] == ["a"]


def test_parse_go_build_failure_as_plain_text_before_go_1_24() -> None:
    data = b"FAIL\tm/a [build failed]\n" + _events({"Action": "pass", "Package": "m"})
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a", "."]}, data)
    assert ev["collect_errors"] == ["a"] and ev["ended"] and ev["exitstatus"] == 1


def _tree_reader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda p: files[p].encode() if p in files else None


def test_scope_reads_the_patched_file_for_hunks_inside_functions() -> None:
    base = (
        'package a\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {\n\tx := 1\n'
        "\t_ = x\n\tcheck(t)\n}\n\nfunc TestTwo(t *testing.T) {\n}\n\n"
        "var cases = []int{1, 2}\n\nfunc TestTable(t *testing.T) {\n\tfor range cases {\n\t}\n}\n"
    )
    # A hunk that starts inside TestOne (its header is not in the hunk), and one that changes
    # the table TestTable ranges over.
    patch = (
        "diff --git a/a/a_test.go b/a/a_test.go\n--- a/a/a_test.go\n+++ b/a/a_test.go\n"
        "@@ -7,2 +7,2 @@\n \t_ = x\n-\tcheck(t)\n+\tcheck2(t)\n"
        "@@ -14,1 +14,1 @@\n-var cases = []int{1, 2}\n+var cases = []int{1, 2, 3}\n"
    )
    scope = GO.scope(patch, _tree_reader({"a/a_test.go": base}))
    assert scope.covers("a::TestOne") and scope.covers("a::TestTable/sub")
    assert not scope.covers("a::TestTwo")


def test_parse_marks_a_package_whose_binary_died_as_crashed() -> None:
    died = _events(
        {"Action": "run", "Package": "m/a", "Test": "TestPanics"},
        {"Action": "fail", "Package": "m/a"},
    )
    ev = polyglot.parse({"format": "go-test-json", "module": "m", "packages": ["a"]}, died)
    assert ev["crashed"] == ["a"]


def test_a_test_that_panics_takes_its_package_down() -> None:
    # testing reports the panicking test failed, then the binary dies: what the shuffle put
    # after it never ran (pflag: a flag redefined on the global set panics in one order).
    runner = GO.runner("m")
    dump = "panic: unable to redefine 'b' shorthand [recovered]\ngoroutine 95 [running]:"
    result = RunResult(
        "before",
        0,
        0,
        "ok",
        1,
        0.1,
        tests={"a::TestBoolP": "failed", "a::TestOther": "passed", "b::TestLog": "failed"},
        messages={"a::TestBoolP": dump, "b::TestLog": "bool_test.go:9: panic: is a word here"},
    )
    runner.settle(result)
    assert result.crashed == ["a"]
    # A failure that is not a panic, or a panic message on a test that passed, is no crash.
    calm = RunResult(
        "before",
        0,
        0,
        "ok",
        1,
        0.1,
        tests={"a::TestX": "passed", "a::TestY": "failed"},
        messages={"a::TestX": dump, "a::TestY": "x_test.go:3: got 1, want 2"},
    )
    runner.settle(calm)
    assert calm.crashed == []


def test_a_go_repository_from_before_modules_is_go_not_python() -> None:
    read = {"envconfig.go": b"package envconfig\n"}.get
    assert detect_ecosystem(read, ["envconfig.go", "envconfig_test.go", "README.md"]) == "go"
    # Python's markers win over a stray Go file; without the names nothing changes.
    assert detect_ecosystem(read, ["tool.go", "setup.py"]) == "python"
    assert detect_ecosystem(read) == "python"


def test_perturbed_copies_run_without_vet() -> None:
    # A decoy's literal can fire one of vet's checks (`x[2] != "a" || x[2] != "b"`: "suspect
    # or"), which fails the package's build and every test in it: copies and twins build
    # without vet; the gate's runs keep go test's own default.
    runner = GoRunner("m", ["."])
    assert "-vet=off" in " ".join(runner.argv([], vet=False))
    assert "-vet=off" not in " ".join(runner.argv([]))
