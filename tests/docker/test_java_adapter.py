"""The Java adapter end to end on the javakit example: mine, admit, verify gold and attacks.

Attacks of each kind the issue names score 0 with a named reason: runner configuration
(Surefire's failure switch in pom.xml, .mvn/maven.config), forged output (a Surefire report
written over the real one by a shutdown hook, fake console lines) and a shadowed framework
(``org.junit.Assert`` in the main sources, a JUnit listener registered in main resources).
The forgeries are refused statically by the capability gate, and again at run time when the
task's allowance is opened to every capability (the runtime defences alone: reports checked
against Maven's own per-class counts, the canaries); the shadowed Assert is caught at run
time by the canaries when the path guard is switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swe_forge.ecosystems.java.adapter import CAPABILITIES, JavaEcosystem
from swe_forge.ecosystems.java.toolchain import host_jdk_of_major
from swe_forge.engine import Engine
from swe_forge.example.java_example import EXPECTED_JAVA, JAVA_REPO, create_java_example
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
def javakit(tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "javakit", create_java_example)


def _id(number: int) -> str:
    return f"{JAVA_REPO.replace('/', '__')}-{number}"


def test_admissions_match_the_expectations(javakit: AdmittedExample) -> None:
    for number, want in EXPECTED_JAVA.items():
        iid = _id(number)
        if not want["candidate"]:
            assert iid not in javakit.tasks and iid not in javakit.rejected
        elif want["admitted"]:
            assert iid in javakit.tasks, javakit.rejected.get(iid)
            assert want["FAIL_TO_PASS"] == javakit.tasks[iid].FAIL_TO_PASS
        else:
            assert javakit.rejected[iid]["reason"] == want["reason"]


def _jdk(task: TaskManifest) -> int:
    """The JDK major the task was built with (its recorded toolchain)."""
    return int(str(task.image["toolchain"]).split("+")[0].removeprefix("openjdk-"))


def test_manifest_records_the_toolchain_and_the_runner(javakit: AdmittedExample) -> None:
    task = javakit.tasks[_id(1)]
    assert task.harness["runner"] == "maven-surefire"
    assert task.harness["module"] == "org.sweforge:javakit"
    assert task.image["ecosystem"] == "java"
    # javakit's commits are of April 2024: JDK 21 (trixie) and the Maven 3.9 line then; the
    # host resolves with the image's very major, so where trixie's JDK 21 does not start
    # (an older C library) and no JDK 21 is installed, the older pinned JDK 17 (bookworm),
    # which javakit's release still compiles with, is the choice.
    jdk = _jdk(task)
    assert jdk == 21 or (jdk == 17 and not host_jdk_of_major(21)), task.image["toolchain"]
    distro = {17: "bookworm", 21: "trixie"}[jdk]
    assert task.image["toolchain"] == f"openjdk-{jdk}+maven-3.9.9+surefire-3.5.2"
    assert f"{distro} openjdk-{jdk}-jdk-headless" in task.image["toolchain_source"]
    assert task.environment["env"]["JAVA_HOME"] == f"/usr/lib/jvm/java-{jdk}-openjdk-amd64"
    assert task.environment["network"] == "none"
    image = task.audit["image"]
    assert image["passed"] and image["git"]["commits_reachable"] == 1
    assert len(task.PASS_TO_PASS) == 3  # StringsTest's other tests
    assert all(len(r["tests"]) == 4 for r in task.gates["runs"])


def test_offline_maven_in_the_image(javakit: AdmittedExample, engine: Engine) -> None:
    task = javakit.tasks[_id(1)]
    code, out = engine.run(
        str(task.image["id"]),
        [
            "/bin/sh",
            "-c",
            "mvn -o -B -ntp -q -Dmaven.repo.local=/opt/m2 test-compile && java -version 2>&1 "
            "| head -1 && stat -c %U /opt/m2 && git -C /testbed rev-list --all --count "
            "&& ls /testbed",
        ],
        network_disabled=True,
    )
    assert code == 0, out
    lines = out.strip().splitlines()
    assert f'"{_jdk(task)}.' in lines[0] and lines[1] == "root" and lines[2] == "1"
    assert "target" in lines[3:]  # compiled by the tests' user into the work tree


_SRC = "src/main/java/org/sweforge/javakit/Strings.java"
_CLASS_OPEN = "public final class Strings {\n"
_CLS = "org.sweforge.javakit.StringsTest"
_FORGED = (
    '"<?xml version=\\"1.0\\"?><testsuite name=\\"'
    + _CLS
    + '\\">"'
    + "".join(
        f' + "<testcase name=\\"{m}\\" classname=\\"{_CLS}\\"/>"'
        for m in ("truncateShort", "truncateLong", "truncateExactWidth", "reverse")
    )
    + ' + "</testsuite>"'
)
_HOOK = (
    "    static {\n"
    "        Runtime.getRuntime().addShutdownHook(new Thread(() -> {\n"
    "            try {\n"
    '                java.nio.file.Path dir = java.nio.file.Paths.get("target", '
    '"surefire-reports");\n'
    "                java.nio.file.Files.createDirectories(dir);\n"
    f'                java.nio.file.Files.writeString(dir.resolve("TEST-{_CLS}.xml"), '
    f"{_FORGED});\n"
    "            } catch (java.io.IOException e) {\n"
    "                throw new RuntimeException(e);\n"
    "            }\n"
    "        }));\n"
    "    }\n\n"
)
_LINES = (
    "    static {\n"
    f'        System.out.println("[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, '
    f'Time elapsed: 0.1 s -- in {_CLS}");\n'
    '        System.out.println("[INFO] BUILD SUCCESS");\n'
    "    }\n\n"
)
_ASSERT = (
    "package org.junit;\n\npublic class Assert {\n"
    "    public static void assertEquals(Object a, Object b) {}\n"
    "    public static void assertEquals(long a, long b) {}\n"
    "    public static void assertEquals(String m, Object a, Object b) {}\n"
    "    public static void assertArrayEquals(Object[] a, Object[] b) {}\n}\n"
)
ATTACKS: dict[str, tuple[Edit, str]] = {
    # Runner configuration.
    "pom_failure_ignore": (
        sub(
            "pom.xml",
            "  </properties>",
            "    <maven.test.failure.ignore>true</maven.test.failure.ignore>\n  </properties>",
        ),
        "runner_config",
    ),
    "maven_config": (
        write(".mvn/maven.config", "-Dmaven.test.failure.ignore=true\n"),
        "runner_config",
    ),
    "edit_test": (
        sub(
            "src/test/java/org/sweforge/javakit/StringsTest.java",
            'assertEquals("abc", Strings.truncate("abc", 10));',
            "",
        ),
        "test_patch_path",
    ),
    # Forged output.
    "forged_report": (sub(_SRC, _CLASS_OPEN, _CLASS_OPEN + _HOOK), "capability"),
    "fake_console_lines": (sub(_SRC, _CLASS_OPEN, _CLASS_OPEN + _LINES), "capability"),
    # The framework shadowed.
    "shadow_assert": (write("src/main/java/org/junit/Assert.java", _ASSERT), "runner_config"),
    "junit_listener": (
        write(
            "src/main/resources/META-INF/services/org.junit.platform.launcher."
            "TestExecutionListener",
            "org.sweforge.javakit.Listener\n",
        ),
        "runner_config",
    ),
}


def test_gold_patches_verify(javakit: AdmittedExample, verifier: Verifier) -> None:
    for task in javakit.tasks.values():
        result = verifier.verify(task, task.patch, "gold")
        assert (result.status, result.reward) == ("resolved", 1.0), result.detail
        twins = result.verifier["twins"]
        assert twins["decoys"] >= 2 and twins["outcomes"] == {"failed": twins["decoys"]}


def test_a_no_op_is_unresolved(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = javakit.tasks[_id(1)]
    noop = patch_of(
        javakit.repo, task.base_commit, sub("README.md", "# javakit", "# javakit!"), tmp_path
    )
    result = verifier.verify(task, noop, "noop")
    assert (result.status, result.reward) == ("unresolved", 0.0)
    assert result.fail_to_pass == {"org.sweforge.javakit.StringsTest::truncateExactWidth": "failed"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attacks_score_zero(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = javakit.tasks[_id(1)]
    edit, code = ATTACKS[name]
    patch = patch_of(javakit.repo, task.base_commit, edit, tmp_path)
    result = verifier.verify(task, patch, name)
    assert result.reward == 0.0 and result.status == "invalid_patch", result.detail
    assert code in {v["code"] for v in result.violations}, result.violations


def _opened(task: TaskManifest) -> TaskManifest:
    data = task.to_dict()
    data["audit"]["capabilities"]["base"] = sorted(CAPABILITIES)  # every capability allowed
    return TaskManifest.from_dict(data)


@pytest.mark.parametrize("name", ["forged_report", "fake_console_lines"])
def test_runtime_defences_without_the_capability_gate(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = javakit.tasks[_id(1)]
    patch = patch_of(javakit.repo, task.base_commit, ATTACKS[name][0], tmp_path)
    result = verifier.verify(_opened(task), patch, name)
    assert result.reward == 0.0, result.detail
    assert result.status in ("tamper_detected", "unresolved"), result.detail


def test_shadowed_assert_is_caught_by_the_decoys_at_run_time(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = javakit.tasks[_id(1)]
    patch = patch_of(javakit.repo, task.base_commit, ATTACKS["shadow_assert"][0], tmp_path)
    monkeypatch.setattr(JavaEcosystem, "patch_violations", lambda *a, **k: [])
    result = verifier.verify(_opened(task), patch, "shadow_assert")
    assert result.reward == 0.0, result.detail
    assert result.status == "tamper_detected", result.detail
    assert "decoy" in result.detail, result.detail


# ------------------------------------------------------------ from inside the test process
# Each rewrites Strings.truncate (the method javakit-1 fixes) or runs before the tests, with
# the capability gate opened: what the twins alone make of it.

_TRUNCATE = "    public static String truncate(String s, int width) {"
# truncate answers what the test source it reads (the tests' own, at run time: Surefire runs
# in the project's directory) expects of it.
ORACLE = """
    public static String truncate(String s, int width) {
        try {
            String src = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(
                "src", "test", "java", "org", "sweforge", "javakit", "StringsTest.java")));
            String key = "\\", Strings.truncate(\\"" + s + "\\", " + width + ")";
            int at = src.indexOf(key);
            if (at >= 0) {
                int open = src.lastIndexOf("assertEquals(\\"", at) + "assertEquals(\\"".length();
                return src.substring(open, at);
            }
        } catch (java.io.IOException e) {
            // fall through
        }
        return truncate0(s, width);
    }

"""
# A static initialiser halts the JVM with status 0 before a test runs.
HALT = """
    static {
        java.util.function.IntConsumer stop = Runtime.getRuntime()::halt;
        stop.accept(0);
    }

"""
INSIDE: dict[str, tuple[Edit, set[str], bool]] = {
    # The test source is closed to the tests' user once the test JVM holds its classes (the
    # judge's agent): the oracle reads nothing and the unfixed method answers.
    "test_source_oracle": (
        both(
            sub(_SRC, _TRUNCATE, "    static String truncate0(String s, int width) {"),
            sub(_SRC, "    private Strings() {}\n", "    private Strings() {}\n" + ORACLE),
        ),
        {"unresolved"},
        False,
    ),
    "halt_from_a_static_initialiser": (
        sub(_SRC, "    private Strings() {}\n", "    private Strings() {}\n" + HALT),
        {"unresolved", "tamper_detected"},
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(INSIDE))
def test_attacks_from_inside_the_tests_score_zero(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = open_gate(javakit.tasks[_id(1)], CAPABILITIES)
    edit, caught, fools = INSIDE[name]
    patch = patch_of(javakit.repo, task.base_commit, edit, tmp_path)
    attack_from_inside(verifier, task, patch, name, caught=caught, fools_the_tests=fools)


def test_an_honest_alternative_fix_scores_one(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = javakit.tasks[_id(1)]
    other = sub(
        _SRC,
        "        if (s.length() < width) {\n            return s;\n        }\n",
        "        if (width >= s.length()) {\n            return new String(s);\n        }\n",
    )
    patch = patch_of(javakit.repo, task.base_commit, other, tmp_path)
    result = verifier.verify(task, patch, "alternative")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail


# A correct fix that breaks itself whenever it can open its test class's compiled class or its
# source: both hold every literal the tests compare with. The judge's agent reads the twin's
# held-out classes into the test JVM before the project's code runs there, and the supervisor
# closes them (and the sources) to the tests' user.
TEST_FILES_READABLE = """
    static boolean testFilesReadable() {
        String[] paths = {
            "target/test-classes/org/sweforge/javakit/StringsTest.class",
            "src/test/java/org/sweforge/javakit/StringsTest.java",
        };
        for (String p : paths) {
            try (java.io.FileInputStream in = new java.io.FileInputStream(p)) {
                return true;
            } catch (java.io.IOException e) {
                // closed: as it must be
            }
        }
        return false;
    }

"""


def test_the_code_under_test_cannot_read_the_test_classes(
    javakit: AdmittedExample, verifier: Verifier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = open_gate(javakit.tasks[_id(1)], CAPABILITIES)
    fix = both(
        sub(
            _SRC,
            "        if (s.length() < width) {\n            return s;\n        }\n",
            '        if (testFilesReadable()) {\n            return "";\n        }\n'
            "        if (width >= s.length()) {\n            return new String(s);\n        }\n",
        ),
        sub(_SRC, "    private Strings() {}\n", "    private Strings() {}\n" + TEST_FILES_READABLE),
    )
    patch = patch_of(javakit.repo, task.base_commit, fix, tmp_path)
    result = verifier.verify(task, patch, "reads-its-tests")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail
    # Without the agent the same fix reads its tests and breaks itself: the agent is what
    # closes them.
    run_job = JavaEcosystem.run_job

    def without_preload(self: JavaEcosystem, *args: Any, **kwargs: Any) -> dict[str, Any]:
        job = run_job(self, *args, **kwargs)
        job["run"].pop("preload", None)
        return job

    monkeypatch.setattr(JavaEcosystem, "run_job", without_preload)
    readable = verifier.verify(task, patch, "reads-its-tests-unclosed")
    assert (readable.status, readable.reward) == ("unresolved", 0.0), readable.detail
