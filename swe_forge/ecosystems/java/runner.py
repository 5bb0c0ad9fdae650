"""Java's runner: Surefire on the test classes of the test files, its XML reports per class, and the
environment of a run.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from swe_forge.errors import BuildError

if TYPE_CHECKING:
    pass


#: The Surefire run by its coordinates in every task (random order with a seed: >= 3.0.0-M6).
SUREFIRE = "3.5.2"


SUREFIRE_GOAL = f"org.apache.maven.plugins:maven-surefire-plugin:{SUREFIRE}:test"


M2 = "/opt/m2"


REPORTS = "target/surefire-reports"


TEST_ROOT = "src/test/java/"


#: Test source roots: ``src/test/java`` and the release-specific roots multi-release projects
#: add with build-helper (``src/test/java11``: jsoup).
_TEST_ROOT = re.compile(r"(?:^|/)(src/test/java\d*/)")


#: Options of every Maven command in an image: offline, the image's repository, quiet about
#: downloads, no colours.
MVN_OPTIONS = ("-o", "-B", "-ntp", f"-Dmaven.repo.local={M2}", "-Dstyle.color=never")


# ------------------------------------------------------------------------------ test files
def class_of(path: str) -> str:
    """The class FQN of a test source file (``""`` outside a ``src/test/java`` root)."""
    m = _TEST_ROOT.search(path)
    if m is None or not path.endswith(".java"):
        return ""
    return path[m.end() : -len(".java")].replace("/", ".")


def module_of(path: str) -> str:
    """The module directory of a source file (``""`` at the root)."""
    m = _TEST_ROOT.search(path)
    return path[: m.start(1)] if m is not None else ""


class SurefireRunner:
    """``mvn test-compile`` and Surefire on the classes of the test files."""

    name = "maven-surefire"
    #: A test class that uses what the fix adds stops the whole module's test compilation
    #: before the fix: the gate then runs the base's own tests without the test patch too.
    baseline_runs = True

    def __init__(
        self, module: str, classes: list[str] | None = None, options: tuple[str, ...] = ()
    ) -> None:
        self.module = module
        self.classes = classes
        #: The configured build options (``images.build_options.java``) the image was built
        #: with: the runs use the same (a check skipped at resolution must not run here).
        self.options = tuple(options)

    @staticmethod
    def argv(
        selection: list[str],
        *,
        order_seed: int = 0,
        timeout: float = 0.0,
        options: tuple[str, ...] | list[str] = (),
    ) -> list[str]:
        """The test command for ``-Dtest`` entries (``Class`` or ``Class#m1+m2``); ``timeout``:
        each JUnit 5 test's limit, and (JUnit 4 has none of its own) the forked JVM's, that
        limit per selected test; ``options``: the configured build options (before ours, so
        that none of them can undo a setting of the judge's)."""
        limits = []
        if timeout > 0:
            methods = sum(max(1, entry.count("+") + 1) for entry in selection)
            limits = [
                f"-Djunit.jupiter.execution.timeout.default={int(timeout)} s",
                f"-Dsurefire.timeout={int(timeout) * max(1, methods)}",
            ]
        return [
            "mvn",
            *MVN_OPTIONS,
            *options,
            "-fae",
            "test-compile",
            SUREFIRE_GOAL,
            "-Dtest=" + ",".join(selection),
            "-Dsurefire.failIfNoSpecifiedTests=false",
            "-DfailIfNoTests=false",
            "-Dsurefire.runOrder=random",
            f"-Dsurefire.runOrder.random.seed={order_seed}",
            "-Dmaven.test.redirectTestOutputToFile=true",
            "-Dmaven.test.failure.ignore=false",
            "-DtrimStackTrace=true",
            "-DskipTests=false",
            "-Dmaven.test.skip=false",
            *limits,
        ]

    def command(self, test_files: list[str], *, order_seed: int) -> str:
        """The command as one shell line (recorded in manifests)."""
        sel = [class_of(f) for f in test_files if class_of(f)]
        argv = self.argv(sel, order_seed=order_seed, options=self.options)
        return " ".join(shlex.quote(a) for a in argv)

    def run_spec(
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        classes = {class_of(f): f for f in test_files if class_of(f)}
        return {
            "argv": self.argv(
                sorted(classes), order_seed=order_seed, timeout=test_timeout, options=self.options
            ),
            "env": dict(JAVA_ENV_RUN),
            "report": report_spec(classes),
        }


def report_spec(classes: dict[str, str]) -> dict[str, Any]:
    """The supervisor's report: Surefire's XML in the modules of the test files."""
    dirs = sorted({module_of(p) + REPORTS for p in classes.values()}) or [REPORTS]
    return {"format": "surefire-xml", "dirs": dirs, "classes": dict(sorted(classes.items()))}


def build_options(configured: dict[str, tuple[str, ...]] | None) -> tuple[str, ...]:
    """The Maven options configured for Java (``images.build_options.java``), checked: each
    must be an option (a word without a dash would be a goal or a phase Maven runs)."""
    options = tuple(str(o) for o in (configured or {}).get("java", ()))
    for option in options:
        if not option.startswith("-") or "\n" in option:
            raise BuildError(
                f"images.build_options.java: {option!r} is not a Maven option",
                hint="give options such as -Drat.skip=true (goals and phases are ours to choose)",
            )
    return options


#: The environment of test runs (JAVA_HOME and PATH come from the image).
JAVA_ENV_RUN = {
    # Maven's own JVM with the quick compiler only: a test run takes about half the time.
    "MAVEN_OPTS": "-Xmx1g -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "MAVEN_ARGS": "",
    "JAVA_TOOL_OPTIONS": "",
}
