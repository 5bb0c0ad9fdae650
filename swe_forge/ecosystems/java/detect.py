"""What Java's files are called: ``pom.xml`` at the root, test classes named as Surefire and
Failsafe find them (read by the miner's classifier without loading the adapter)."""

from __future__ import annotations

from swe_forge.ecosystems.naming import Naming

#: The file at the root that makes a repository Java's (Maven).
MARKER = "pom.xml"

#: Files at the root of a Gradle build: such a repository (with no pom.xml and nothing of
#: Python's) is Java's too, and refused as ``gradle_unavailable`` (no Gradle distribution can
#: be had here: services.gradle.org is not reachable, Debian's gradle is 4.4.1 of 2017).
GRADLE_MARKERS = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")

NAMING = Naming(
    # Test classes (under a test directory, e.g. src/test/java/; *IT are failsafe's).
    test_modules=("*Test.java", "*Tests.java", "Test*.java", "*TestCase.java"),
    code_extensions=(".java",),
)
