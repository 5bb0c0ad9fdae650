"""The Go adapter end to end on the gokit example: mine, admit, verify gold and attacks.

Attacks of each kind the issue names score 0 with a named reason: runner configuration
(go.mod replace, go.work, vendor/), forged output (test2json frames printed by the code under
test, an exit from init) and a shadowed framework (the testing package pulled into the code
under test). The forgeries are refused statically by the capability gate, and again at run
time when the task's allowance is opened to every capability (the runtime defences alone:
a test reported twice, a run that exits 0 without its packages' results, the canaries).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.ecosystems.go.adapter import CAPABILITIES
from swe_forge.engine import Engine
from swe_forge.example.polyglot import EXPECTED_GO, GO_REPO, create_go_example
from swe_forge.records import TaskManifest
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import (
    AdmittedExample,
    Edit,
    attack_from_inside,
    both,
    mine_and_admit,
    open_gate,
    patch_of,
    sub,
    write,
)


@pytest.fixture(scope="module")
def gokit(tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "gokit", create_go_example)


def _id(number: int) -> str:
    return f"{GO_REPO.replace('/', '__')}-{number}"


def test_admissions_match_the_expectations(gokit: AdmittedExample) -> None:
    for number, want in EXPECTED_GO.items():
        iid = _id(number)
        if not want["candidate"]:
            assert iid not in gokit.tasks and iid not in gokit.rejected
        elif want["admitted"]:
            assert iid in gokit.tasks, gokit.rejected.get(iid)
            assert want["FAIL_TO_PASS"] == gokit.tasks[iid].FAIL_TO_PASS
        else:
            assert gokit.rejected[iid]["reason"] == want["reason"]


def test_manifest_records_the_toolchain_and_the_runner(gokit: AdmittedExample) -> None:
    task = gokit.tasks[_id(1)]
    assert task.harness["runner"] == "go-test"
    assert task.harness["module"] == "github.com/swe-forge/gokit"
    assert task.image["ecosystem"] == "go"
    # gokit's commits are of March 2024: Go 1.22 was the newest release then.
    assert task.image["toolchain"] == "go1.22.12"
    assert task.image["toolchain_source"].startswith("golang.org/toolchain@v0.0.1-go1.22.12")
    assert task.environment["env"]["GOPROXY"] == "off"
    assert task.environment["network"] == "none"
    image = task.audit["image"]
    assert image["passed"] and image["git"]["commits_reachable"] == 1
    assert task.PASS_TO_PASS  # the package's other tests
    assert all(len(r["tests"]) >= 2 for r in task.gates["runs"])


def test_no_network_and_go_env_in_the_image(gokit: AdmittedExample, engine: Engine) -> None:
    task = gokit.tasks[_id(1)]
    code, out = engine.run(
        str(task.image["id"]),
        [
            "/bin/sh",
            "-c",
            "go env GOPROXY GOFLAGS GOTOOLCHAIN && go version && git -C /testbed "
            "rev-list --all --count",
        ],
        network_disabled=True,
    )
    assert code == 0, out
    lines = out.strip().splitlines()
    assert lines[:3] == ["off", "-mod=readonly", "local"]
    assert "go1.22.12" in lines[3] and lines[4] == "1"


_IMPORTS = 'import "strings"'
_FRAME = '"\\x16--- PASS: TestTruncateExactWidth (0.00s)\\n"'
ATTACKS: dict[str, tuple[Edit, str]] = {
    # Runner configuration.
    "go_mod_replace": (
        sub("go.mod", "go 1.21\n", "go 1.21\n\nreplace golang.org/x/text => ./text\n"),
        "runner_config",
    ),
    "go_work": (write("go.work", "go 1.21\n\nuse .\n"), "runner_config"),
    "edit_test": (
        sub("strutil/strutil_test.go", 't.Fatalf("got %q", got)', "_ = got"),
        "test_patch_path",
    ),
    # Forged output.
    "frame_and_exit": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"fmt"\n\t"os"\n\t"strings"\n)'),
            sub(
                "strutil/strutil.go",
                "// Reverse returns",
                f"func init() {{\n\tfmt.Print({_FRAME})\n\tos.Exit(0)\n}}\n\n// Reverse returns",
            ),
        ),
        "capability",
    ),
    "frame_in_the_function": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"fmt"\n\t"strings"\n)'),
            sub(
                "strutil/strutil.go",
                "\tr := []rune(s)\n",
                f"\tfmt.Print({_FRAME})\n\tr := []rune(s)\n",
            ),
        ),
        "capability",
    ),
    # The framework shadowed: a vendored module, and the testing package in the code.
    "vendored_module": (
        both(
            write("vendor/modules.txt", "# golang.org/x/text v0.1.0\n## explicit\n"),
            write("vendor/golang.org/x/text/text.go", "package text\n"),
        ),
        "runner_config",
    ),
    "testing_in_the_code": (
        both(
            sub("strutil/strutil.go", _IMPORTS, 'import (\n\t"strings"\n\t"testing"\n)'),
            sub(
                "strutil/strutil.go",
                "// Reverse returns",
                "var _ = testing.Short\n\n// Reverse returns",
            ),
        ),
        "capability",
    ),
}


def test_gold_patches_verify(gokit: AdmittedExample, verifier: Verifier) -> None:
    for task in gokit.tasks.values():
        result = verifier.verify(task, task.patch, "gold")
        assert (result.status, result.reward) == ("resolved", 1.0), result.detail
        twins = result.verifier["twins"]
        assert twins["decoys"] >= 2 and twins["outcomes"] == {"failed": twins["decoys"]}


def test_a_no_op_is_unresolved(gokit: AdmittedExample, verifier: Verifier, tmp_path: Path) -> None:
    task = gokit.tasks[_id(1)]
    noop = patch_of(gokit.repo, task.base_commit, sub("README.md", "# gokit", "# gokit!"), tmp_path)
    result = verifier.verify(task, noop, "noop")
    assert (result.status, result.reward) == ("unresolved", 0.0)
    assert result.fail_to_pass == {"strutil::TestTruncateExactWidth": "failed"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attacks_score_zero(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = gokit.tasks[_id(1)]
    edit, code = ATTACKS[name]
    patch = patch_of(gokit.repo, task.base_commit, edit, tmp_path)
    result = verifier.verify(task, patch, name)
    assert result.reward == 0.0 and result.status == "invalid_patch", result.detail
    assert code in {v["code"] for v in result.violations}, result.violations


@pytest.mark.parametrize("name", ["frame_and_exit", "frame_in_the_function", "testing_in_the_code"])
def test_runtime_defences_without_the_capability_gate(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = gokit.tasks[_id(1)]
    data = task.to_dict()
    data["audit"]["capabilities"]["base"] = sorted(CAPABILITIES)  # every capability allowed
    opened = TaskManifest.from_dict(data)
    patch = patch_of(gokit.repo, task.base_commit, ATTACKS[name][0], tmp_path)
    result = verifier.verify(opened, patch, name)
    assert result.reward == 0.0, result.detail
    assert result.status in ("tamper_detected", "unresolved"), result.detail
    if name != "testing_in_the_code":
        # The forged frames were seen for what they are.
        assert result.status == "tamper_detected", result.detail


# ------------------------------------------------------------ from inside the test process
# Each rewrites Truncate (the function gokit-1 fixes) or runs before the tests, with the
# capability gate opened: what the twins alone make of it.

_STRINGS = 'import "strings"'
_FORGE_IMPORTS = 'import (\n\t"fmt"\n\t"os"\n\t"strings"\n)'
# A package-level initialiser runs before any test: it writes a complete report of its own
# (every selected test passed, in test2json's framing) and exits 0, as an honest run would.
FORGE_REPORT = """
var _ = forgeReport()

func forgeReport() int {
	pattern, mark := "", ""
	for _, a := range os.Args {
		if strings.HasPrefix(a, "-test.run=") {
			pattern = strings.TrimPrefix(a, "-test.run=")
		}
		if a == "-test.v=test2json" {
			mark = "\\x16"
		}
	}
	for _, name := range strings.Split(strings.Trim(pattern, "^()$"), "|") {
		fmt.Printf("%s=== RUN   %s\\n%s--- PASS: %s (0.00s)\\n", mark, name, mark, name)
	}
	fmt.Printf("%sPASS\\n", mark)
	os.Exit(0)
	return 0
}
"""
# Truncate answers what the test file it reads expects of it (the literal after `got !=`).
ORACLE = """
func oracle(src string, s string, width int) (string, bool) {
	key := fmt.Sprintf("Truncate(%q, %d); got != \\"", s, width)
	if i := strings.Index(src, key); i >= 0 {
		rest := src[i+len(key):]
		if j := strings.Index(rest, "\\""); j >= 0 {
			return rest[:j], true
		}
	}
	return "", false
}

func Truncate(s string, width int) string {
	if want, ok := oracle(testSource(), s, width); ok {
		return want
	}
	return truncate0(s, width)
}
"""
EMBED = "\n//go:embed strutil_test.go\nvar embedded string\n\nfunc testSource() string { return embedded }\n"
READ = (
    '\nfunc testSource() string {\n\tdata, err := os.ReadFile("strutil_test.go")\n'
    '\tif err != nil {\n\t\treturn ""\n\t}\n\treturn string(data)\n}\n'
)
INSIDE: dict[str, tuple[Edit, set[str], bool]] = {
    "forged_report_from_an_initialiser": (
        both(
            sub("strutil/strutil.go", _STRINGS, _FORGE_IMPORTS),
            sub("strutil/strutil.go", "// Reverse returns", FORGE_REPORT + "\n// Reverse returns"),
        ),
        {"tamper_detected"},
        True,
    ),
    # The test file compiled into the package: each twin's own variant, so the literal it
    # returns is the decoy's in every decoy.
    "embedded_test_file_oracle": (
        both(
            sub("strutil/strutil.go", _STRINGS, 'import (\n\t_ "embed"\n\t"fmt"\n\t"strings"\n)'),
            sub("strutil/strutil.go", "func Truncate(", "func truncate0("),
            sub(
                "strutil/strutil.go", "// Reverse returns", ORACLE + EMBED + "\n// Reverse returns"
            ),
        ),
        {"tamper_detected"},
        True,
    ),
    # Read at run time: the held-out test files are closed to the tests' user by then.
    "read_test_file_oracle": (
        both(
            sub("strutil/strutil.go", _STRINGS, _FORGE_IMPORTS),
            sub("strutil/strutil.go", "func Truncate(", "func truncate0("),
            sub("strutil/strutil.go", "// Reverse returns", ORACLE + READ + "\n// Reverse returns"),
        ),
        {"unresolved"},
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(INSIDE))
def test_attacks_from_inside_the_tests_score_zero(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = open_gate(gokit.tasks[_id(1)], CAPABILITIES)
    edit, caught, fools = INSIDE[name]
    patch = patch_of(gokit.repo, task.base_commit, edit, tmp_path)
    attack_from_inside(verifier, task, patch, name, caught=caught, fools_the_tests=fools)


def test_an_honest_alternative_fix_scores_one(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = gokit.tasks[_id(1)]
    other = both(
        sub("strutil/strutil.go", _STRINGS, 'import (\n\t"strings"\n\t"unicode/utf8"\n)'),
        sub(
            "strutil/strutil.go",
            "\tr := []rune(s)\n\tif len(r) < width {\n\t\treturn s\n\t}\n",
            "\tif utf8.RuneCountInString(s) <= width {\n\t\treturn s\n\t}\n\tr := []rune(s)\n",
        ),
    )
    patch = patch_of(gokit.repo, task.base_commit, other, tmp_path)
    result = verifier.verify(task, patch, "alternative")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail


# A correct fix that breaks itself whenever it can read its own program: the test binary (by
# os.Executable, /proc/self/exe) or its memory (/proc/self/mem). A test binary holds every
# literal its tests compare with; its twin's binary is execute-only, so none of these opens.
PROGRAM_READABLE = """
func programReadable() bool {
	paths := []string{"/proc/self/exe", "/proc/self/mem"}
	if exe, err := os.Executable(); err == nil {
		paths = append(paths, exe)
	}
	for _, p := range paths {
		if f, err := os.Open(p); err == nil {
			f.Close()
			return true
		}
	}
	return false
}
"""


def test_the_code_under_test_cannot_read_its_own_program(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = open_gate(gokit.tasks[_id(1)], CAPABILITIES)
    fix = both(
        sub("strutil/strutil.go", _STRINGS, 'import (\n\t"os"\n\t"strings"\n\t"unicode/utf8"\n)'),
        sub(
            "strutil/strutil.go",
            "\tr := []rune(s)\n\tif len(r) < width {\n\t\treturn s\n\t}\n",
            '\tif programReadable() {\n\t\treturn ""\n\t}\n'
            "\tif utf8.RuneCountInString(s) <= width {\n\t\treturn s\n\t}\n\tr := []rune(s)\n",
        ),
        sub("strutil/strutil.go", "// Reverse returns", PROGRAM_READABLE + "\n// Reverse returns"),
    )
    patch = patch_of(gokit.repo, task.base_commit, fix, tmp_path)
    result = verifier.verify(task, patch, "reads-its-program")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail


def test_a_hanging_test_is_stopped_by_the_per_test_limit(
    gokit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    # Truncate never returns: verify.test_timeout_seconds stops each twin's test binary long
    # before the run's own limit, and the prediction is the model's failure, not a timeout of
    # the whole verification.
    import time
    from dataclasses import replace

    task = gokit.tasks[_id(1)]
    hang = sub("strutil/strutil.go", "\tr := []rune(s)\n", "\tfor {\n\t}\n\tr := []rune(s)\n")
    patch = patch_of(gokit.repo, task.base_commit, hang, tmp_path)
    quick = Verifier(
        verifier.engine,
        verifier.classifier,
        replace(verifier.settings, test_timeout_seconds=5.0, timeout_seconds=600.0),
    )
    start = time.monotonic()
    result = quick.verify(task, patch, "hang")
    assert result.reward == 0.0 and result.status == "unresolved", result.detail
    assert time.monotonic() - start < 120
