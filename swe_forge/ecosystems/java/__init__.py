"""Java with Maven: Debian's JDKs, Maven from Maven Central, Surefire's XML reports.

Gradle-only projects are not supported (no ``pom.xml`` at the root: not Java to us). A
multi-module Maven build is run from the root; its test files' modules give the report
directories (``<module>/target/surefire-reports``).

- **Toolchain.** A JDK from Debian's packages, the LTS release that was newest when the base
  commit was made (11 on bullseye, 17 on bookworm, 21 on trixie), raised to the pom's
  ``maven.compiler.release``/``source``/``target`` (and lowered to 11 for sources older than
  JDK 17 still compiles). Maven is the pinned patch release of the line that was newest then,
  the ``apache-maven`` bin tarball from Maven Central checked against a sha512 pinned in
  :data:`MAVEN_RELEASES` (and Central's own checksum). Surefire is one pinned version
  (:data:`SUREFIRE`) run by its coordinates, whatever the pom's own version, so every task's
  reports, random order and test filters behave alike.
- **Dependencies.** The real build, once on the host with the pinned Maven, into a local
  repository made for the candidate: ``test-compile`` and Surefire (on a probe test class of
  ours, so that Surefire's providers are fetched without running the project's tests) on the
  tree with the test and gold patches, then ``test-compile`` on the base tree. The repository
  is copied into the env image at ``/opt/m2`` (root-owned, read-only to the tests: Maven
  offline only reads it) and the instance image proves ``mvn -o test-compile`` works with no
  network. Plugins the pom binds to early phases run on the host: the repository's own
  history is trusted as much as its merged code, candidate patches never run there.
- **Tests.** ``mvn -o test-compile`` and Surefire with ``-Dtest=`` (classes in the gate,
  ``Class#m1+m2`` in the verifier), ``-Dsurefire.runOrder=random`` with a seed. Test output
  goes to files, not the console. The supervisor empties the report directories before the
  run and reads the XML reports after it; each is checked against the per-class line Maven
  itself prints (see ``parse_surefire`` in the harness). Test ids are
  ``<class FQN>::<method>``. Classes compile in every run (``/testbed`` is made anew at start
  and compiling a small project takes seconds).
- **Judge's files.** ``src/test/**`` are tests; ``.mvn/``, ``mvnw*``, any pom.xml line the
  gold patch does not change (but names, descriptions and comments), ``META-INF/services``
  files and ``junit-platform.properties`` are runner configuration; a source file in a test
  framework's package (``org/junit/...``) shadows the framework.
- **Capabilities.** A candidate's main Java code may not newly use what reaches the process,
  the JVM or the runner (``System.exit``/``halt``, ``System.out``/``setOut``, reflection,
  ``Unsafe``, processes, shutdown hooks, instrumentation, ``ServiceLoader``, annotation
  processing, file writes, JUnit/Surefire packages, text shaped like Surefire's reports)
  unless the base code or the gold patch already does. Plain threads are allowed: they die
  with the test JVM, before its reports are read. Read on the syntax tree, Unicode escapes
  translated first, names and expression types resolved, strings folded
  (:mod:`swe_forge.ecosystems.java.scan`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    digest_text,
    file_lines,
    git_apply,
    parse_patch,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    source_capabilities,
    touched_paths,
    tree_source_capabilities,
    verify_job,
)
from swe_forge.ecosystems.java.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.java.scan import scan
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError

if TYPE_CHECKING:
    from swe_forge.images.build import ImageBuilder, ImageRecord
    from swe_forge.records import Candidate, TaskManifest

#: LTS JDKs: (feature release, its release date, the Debian release whose packages carry it).
JDK_RELEASES: tuple[tuple[int, str, str], ...] = (
    (11, "2018-09-25", "bullseye"),
    (17, "2021-09-14", "bookworm"),
    (21, "2023-09-19", "trixie"),
)
#: Maven lines: (line, first release date, pinned patch release, sha512 of its bin tarball).
MAVEN_RELEASES: tuple[tuple[str, str, str, str], ...] = (
    (
        "3.6",
        "2018-10-24",
        "3.6.3",
        "c35a1803a6e70a126e80b2b3ae33eed961f83ed74d18fcd16909b2d44d7dada3"
        "203f1ffe726c17ef8dcca2dcaa9fca676987befeadc9b9f759967a8cb77181c0",
    ),
    (
        "3.8",
        "2021-04-04",
        "3.8.8",
        "332088670d14fa9ff346e6858ca0acca304666596fec86eea89253bd496d3c90"
        "deae2be5091be199f48e09d46cec817c6419d5161fb4ee37871503f472765d00",
    ),
    (
        "3.9",
        "2023-01-31",
        "3.9.9",
        "a555254d6b53d267965a3404ecb14e53c3827c09c3b94b5678835887ab40455"
        "6bfaf78dcfe03ba76fa2508649dca8531c74bca4d5846513522404d48e8c4ac8b",
    ),
)
#: The Surefire run by its coordinates in every task (random order with a seed: >= 3.0.0-M6).
SUREFIRE = "3.5.2"
SUREFIRE_GOAL = f"org.apache.maven.plugins:maven-surefire-plugin:{SUREFIRE}:test"
CENTRAL = "https://repo.maven.apache.org/maven2"
MAVEN_HOME = "/opt/maven"
M2 = "/opt/m2"
JAVA_PATH_ENV = f"{MAVEN_HOME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
REPORTS = "target/surefire-reports"
TEST_ROOT = "src/test/java/"
#: Test source roots: ``src/test/java`` and the release-specific roots multi-release projects
#: add with build-helper (``src/test/java11``: jsoup).
_TEST_ROOT = re.compile(r"(?:^|/)(src/test/java\d*/)")
ENV_DOCKERFILE = """\
FROM {base}
COPY maven {maven_home}
COPY m2 {m2}
RUN chmod -R a+rX {maven_home} {m2}
ENV PATH={path} {env}
"""
#: Options of every Maven command in an image: offline, the image's repository, quiet about
#: downloads, no colours.
MVN_OPTIONS = ("-o", "-B", "-ntp", f"-Dmaven.repo.local={M2}", "-Dstyle.color=never")
#: The instance's build step: the base tree compiles offline (a missing artifact fails the
#: image build, not a test); its outputs go (/testbed is made anew at every start).
INSTALL = (
    "cd /testbed && HOME=/root mvn {opts} -q test-compile -DskipTests "
    "&& rm -rf /testbed/target /testbed/*/target && chmod -R a+rX {m2}"
)

_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_METHOD = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|protected|private|static|final|synchronized|"
    r"abstract|default)\s+)*(?:<[^>]+>\s+)?[\w.<>\[\], ?]+\s+(\w+)\s*\([^;]*$"
)
_TEST_NAME = re.compile(r"(^|/)(Test\w*|\w+Tests?|\w+TestCase)\.java$")

#: Packages of the test frameworks and the runner: a candidate's source in them shadows them.
FRAMEWORK_DIRS = (
    "org/junit/",
    "org/opentest4j/",
    "junit/",
    "org/testng/",
    "org/hamcrest/",
    "org/apache/maven/",
    "org/assertj/",
    "java/",
    "javax/",
    "jdk/",
    "sun/",
)
#: pom.xml lines a candidate may change although the gold patch does not (metadata).
_POM_FREE = re.compile(
    r"^\s*(<(name|description|url|inceptionYear)>.*</\2>|<!--.*-->|<!--.*|.*-->|)\s*$"
)


# ------------------------------------------------------------------------------ toolchain
def _text(el: ET.Element | None) -> str:
    return (el.text or "").strip() if el is not None else ""


def pom_info(text: str) -> dict[str, Any]:
    """groupId, artifactId, the Java release asked for, modules and whether the pom has a
    ``<build>`` section, from a pom.xml's text."""
    out: dict[str, Any] = {"group": "", "artifact": "", "release": "", "modules": []}
    try:
        root = ET.fromstring(text.encode("utf-8", "replace"))
    except ET.ParseError:
        return out
    ns = ""
    if root.tag.startswith("{"):
        ns = root.tag[: root.tag.index("}") + 1]

    def find(el: ET.Element, path: str) -> ET.Element | None:
        return el.find("/".join(ns + p for p in path.split("/")))

    out["artifact"] = _text(find(root, "artifactId"))
    out["group"] = _text(find(root, "groupId")) or _text(find(root, "parent/groupId"))
    props: dict[str, str] = {}
    pel = find(root, "properties")
    if pel is not None:
        for child in pel:
            props[child.tag.removeprefix(ns)] = _text(child)

    def resolve(value: str) -> str:
        m = re.fullmatch(r"\$\{([^}]+)\}", value)
        return props.get(m.group(1), "") if m else value

    release = ""
    for key in ("maven.compiler.release", "maven.compiler.target", "maven.compiler.source"):
        if props.get(key):
            release = resolve(props[key])
            break
    plugins = find(root, "build/plugins")
    if plugins is not None:
        for plugin in plugins:
            if _text(find(plugin, "artifactId")) != "maven-compiler-plugin":
                continue
            conf = find(plugin, "configuration")
            if conf is None:
                continue
            for key in ("release", "target", "source"):
                got = resolve(_text(find(conf, key)))
                if got:
                    release = got
                    break
    out["release"] = release
    mods = find(root, "modules")
    if mods is not None:
        out["modules"] = [_text(m) for m in mods if _text(m)]
    return out


def java_release(value: str) -> int:
    """``1.8`` -> 8, ``11`` -> 11, anything else -> 0."""
    m = re.fullmatch(r"(?:1\.)?(\d+)", value.strip())
    return int(m.group(1)) if m else 0


#: Keys of CI configurations that name the JDKs a project is tested with (GitHub Actions'
#: ``setup-java`` and matrices, Travis' ``jdk``).
_CI_JAVA_KEY = re.compile(
    r"^(\s*)(?:-\s+)?['\"]?(java[-_]?version|java|jdk|jdk[-_]?version|java[-_]?versions?)"
    r"['\"]?\s*:\s*(.*)$",
    re.I,
)
_CI_JAVA_VALUE = re.compile(
    r"(?<![\w.$])(?:openjdk|oraclejdk|jdk|temurin|zulu|java)?[-_]?"
    r"(?:1\.)?(\d{1,2})(?:\.[\dx]+)*(?![\w.])",
    re.I,
)


def ci_java_versions(files: dict[str, str]) -> list[int]:
    """The Java feature releases a project's CI configurations (GitHub workflows, Travis)
    test with: the values of ``java-version``/``java``/``jdk`` keys, inline (``17``,
    ``[8, 11]``, ``'1.8'``, ``openjdk11``) or as the YAML list under the key."""
    found: set[int] = set()

    def take(value: str) -> None:
        value = value.split("#", 1)[0]
        if "${{" in value:
            return
        for m in _CI_JAVA_VALUE.finditer(value):
            n = int(m.group(1))
            if 6 <= n <= 40:
                found.add(n)

    for text in files.values():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            m = _CI_JAVA_KEY.match(line)
            if not m:
                continue
            if m.group(3).strip():
                take(m.group(3))
                continue
            indent = len(m.group(1))
            for nxt in lines[i + 1 :]:
                stripped = nxt.strip()
                if not stripped or stripped.startswith("#"):
                    continue
                if len(nxt) - len(nxt.lstrip()) < indent or not stripped.startswith("-"):
                    break
                take(stripped[1:])
    return sorted(found)


def ci_files(repo: Any, commit: str) -> dict[str, str]:
    """The CI configurations at a commit that may name JDKs (path -> text)."""
    out: dict[str, str] = {}
    paths = [".travis.yml"] + [
        f".github/workflows/{name}"
        for name in sorted(repo.list_dir(commit, ".github/workflows"))
        if name.endswith((".yml", ".yaml"))
    ]
    for path in paths:
        got = repo.blob_at(commit, path)
        if got is not None:
            out[path] = got[1].decode("utf-8", "replace")
    return out


def choose_jdk(base_date: str, release: str = "", ci: Iterable[int] = ()) -> tuple[int, str]:
    """(JDK feature release, Debian release) for a commit made on ``base_date`` whose pom asks
    for Java ``release`` and whose CI tests with the JDKs ``ci``: the newest LTS then, but no
    newer than the newest JDK the CI tests with (the oldest we have when that is older: a
    project tested on Java 8 only often builds with tools, such as an old Error Prone, that
    newer JDKs break), raised to the release asked for, and lowered to 11 for sources older
    than 7 (which JDK 17 no longer compiles)."""
    day = base_date[:10]
    released = [r for r in JDK_RELEASES if r[1] <= day] or [JDK_RELEASES[0]]
    choice = released[-1]
    tested = max(ci, default=0)
    if tested:
        choice = ([r for r in released if r[0] <= tested] or [JDK_RELEASES[0]])[-1]
    wanted = java_release(release)
    if wanted > choice[0]:
        later = [r for r in JDK_RELEASES if r[0] >= wanted]
        if not later:
            raise BuildError(
                f"the pom asks for Java {release}, newer than any JDK we pin",
                hint="add the release to swe_forge/ecosystems/java/__init__.py JDK_RELEASES",
            )
        choice = later[0]
    if wanted and wanted < 7:
        choice = JDK_RELEASES[0]
    return choice[0], choice[2]


def choose_maven(base_date: str) -> tuple[str, str]:
    """(pinned Maven release, its sha512) of the line newest on ``base_date``."""
    day = base_date[:10]
    released = [r for r in MAVEN_RELEASES if r[1] <= day] or [MAVEN_RELEASES[0]]
    return released[-1][2], released[-1][3]


def jdk_package(jdk: int) -> str:
    """Debian's package of a JDK."""
    return f"openjdk-{jdk}-jdk-headless"


def java_home(jdk: int) -> str:
    """JAVA_HOME of Debian's JDK in an image."""
    return f"/usr/lib/jvm/java-{jdk}-openjdk-amd64"


def host_java_home(jdk: int) -> str:
    """A JDK on the host at least as new as ``jdk`` (the newest there otherwise)."""
    found: list[tuple[int, str]] = []
    root = Path("/usr/lib/jvm")
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        m = re.search(r"(?:java|jdk|temurin)-(\d+)", entry.name)
        if m and (entry / "bin" / "java").exists() and not entry.is_symlink():
            found.append((int(m.group(1)), str(entry)))
    if not found:
        home = os.environ.get("JAVA_HOME")
        if home:
            return home
        raise BuildError("no JDK on this machine", hint="install a JDK on the host")
    found.sort()
    for version, home in found:
        if version >= jdk:
            return home
    return found[-1][1]


def image_jdk_on_host(engine: Any, image: str, jdk: int, cache: Path) -> str:
    """JAVA_HOME of the image's own JDK copied to the host ("" when it does not run here).

    The host resolution compiles the project: with another JDK than the image's, build tools
    tied to a JDK (an old Error Prone reading JDK 17's class files, say) fail on the host
    although the image builds. Debian's JDK is relocated: its links into
    ``/etc/java-N-openjdk`` point into the copy; the trust store stays the host's (the
    downloads are the host's). A JDK built for a newer C library than the host's does not
    start; the host's own JDK is used then."""
    name = f"java-{jdk}-openjdk-amd64"
    info = engine.image(image)
    image_id = info.id if info is not None else image
    root = cache / "java" / "jdk" / hashlib.sha256(f"{image_id}:{jdk}".encode()).hexdigest()[:16]
    home = root / "usr" / "lib" / "jvm" / name
    ok, bad = root / ".ok", root / ".does-not-run"
    if bad.exists():
        return ""
    if not ok.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        keep = (f"usr/lib/jvm/{name}/", f"etc/java-{jdk}-openjdk/")
        for member, data in engine.export(image):
            path = member.name.lstrip("./")
            if not path.startswith(keep) or ".." in Path(path).parts:
                continue
            dest = root / path
            if member.isdir():
                dest.mkdir(parents=True, exist_ok=True)
            elif member.issym():
                dest.parent.mkdir(parents=True, exist_ok=True)
                target = member.linkname
                if target.startswith("/") and not target.startswith("/etc/ssl/"):
                    target = os.path.relpath(root / target.lstrip("/"), dest.parent)
                dest.unlink(missing_ok=True)
                dest.symlink_to(target)
            elif member.isfile() and data is not None:
                dest.parent.mkdir(parents=True, exist_ok=True)
                with dest.open("wb") as fh:
                    shutil.copyfileobj(data, fh)
                dest.chmod(member.mode & 0o755 | 0o644)
        try:
            runs = (
                subprocess.run(
                    [str(home / "bin" / "java"), "-version"],
                    capture_output=True,
                    timeout=60,
                    check=False,
                ).returncode
                == 0
            )
        except OSError:
            runs = False
        if not runs:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            bad.touch()
            return ""
        ok.touch()
    return str(home)


def fetch_maven(version: str, sha512: str, cache: Path) -> Path:
    """The extracted Maven ``version`` (fetched once per machine, checked by its sha512)."""
    store = cache / "java" / "maven"
    home = store / f"apache-maven-{version}"
    if (home / "bin" / "mvn").is_file():
        return home
    store.mkdir(parents=True, exist_ok=True)
    url = f"{CENTRAL}/org/apache/maven/apache-maven/{version}/apache-maven-{version}-bin.tar.gz"
    with tempfile.TemporaryDirectory(dir=store) as tmp:
        archive = Path(tmp) / "maven.tar.gz"
        with urllib.request.urlopen(url, timeout=300) as resp, archive.open("wb") as fh:
            shutil.copyfileobj(resp, fh)
        got = hashlib.sha512(archive.read_bytes()).hexdigest()
        if got != sha512:
            raise BuildError(f"apache-maven {version}: sha512 {got[:16]}... is not the pinned one")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        shutil.rmtree(home, ignore_errors=True)
        (Path(tmp) / f"apache-maven-{version}").rename(home)
    return home


def _mvn(
    maven: Path, jhome: str, args: list[str], *, cwd: Path, repo: Path, timeout: float = 1800
) -> str:
    env = {
        "PATH": f"{jhome}/bin:" + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "JAVA_HOME": jhome,
        "MAVEN_OPTS": "-Xmx1g",
        "LANG": "C.UTF-8",
    }
    argv = [
        str(maven / "bin" / "mvn"),
        "-B",
        "-ntp",
        f"-Dmaven.repo.local={repo}",
        "-Dstyle.color=never",
        *args,
    ]
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[ERROR]")]
        tail = "\n".join((lines or proc.stdout.splitlines())[:15])
        raise BuildError(f"mvn {' '.join(args[:3])} failed:\n{tail}")
    return proc.stdout


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


def method_base(name: str) -> str:
    """``check[2]`` / ``check(String)[1]`` -> ``check``."""
    return re.split(r"[\[(]", name, maxsplit=1)[0]


@dataclass(frozen=True)
class JavaScope:
    """The tests a test patch defines or changes: methods its changed lines fall in, and every
    test of a test class it creates."""

    names: frozenset[tuple[str, str]]  # (class FQN, method)
    new_classes: frozenset[str]

    def covers(self, test: str) -> bool:
        """Is ``test`` (``Class::method``) defined or changed by the test patch?"""
        cls, _, name = test.partition("::")
        outer = cls.split("$", 1)[0]
        if outer in self.new_classes:
            return True
        return (cls, method_base(name)) in self.names or (outer, method_base(name)) in self.names


class SurefireRunner:
    """``mvn test-compile`` and Surefire on the classes of the test files."""

    name = "maven-surefire"
    #: A test class that uses what the fix adds stops the whole module's test compilation
    #: before the fix: the gate then runs the base's own tests without the test patch too.
    baseline_runs = True

    def __init__(self, module: str, classes: list[str] | None = None) -> None:
        self.module = module
        self.classes = classes

    @staticmethod
    def argv(selection: list[str], *, order_seed: int = 0, timeout: float = 0.0) -> list[str]:
        """The test command for ``-Dtest`` entries (``Class`` or ``Class#m1+m2``); ``timeout``:
        each JUnit 5 test's limit, and (JUnit 4 has none of its own) the forked JVM's, that
        limit per selected test."""
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
        return " ".join(shlex.quote(a) for a in self.argv(sel, order_seed=order_seed))

    def run_spec(
        self, test_files: list[str], *, order_seed: int, hash_seed: int, test_timeout: float = 0.0
    ) -> dict[str, Any]:
        """The supervisor's ``run`` fields for one gate run."""
        classes = {class_of(f): f for f in test_files if class_of(f)}
        return {
            "argv": self.argv(sorted(classes), order_seed=order_seed, timeout=test_timeout),
            "env": dict(JAVA_ENV_RUN),
            "report": report_spec(classes),
        }


def report_spec(classes: dict[str, str]) -> dict[str, Any]:
    """The supervisor's report: Surefire's XML in the modules of the test files."""
    dirs = sorted({module_of(p) + REPORTS for p in classes.values()}) or [REPORTS]
    return {"format": "surefire-xml", "dirs": dirs, "classes": dict(sorted(classes.items()))}


#: The environment of test runs (JAVA_HOME and PATH come from the image).
JAVA_ENV_RUN = {
    # Maven's own JVM with the quick compiler only: a test run takes about half the time.
    "MAVEN_OPTS": "-Xmx1g -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "MAVEN_ARGS": "",
    "JAVA_TOOL_OPTIONS": "",
}


class JavaEcosystem:
    """The Java (Maven) adapter (see the module docstring)."""

    name = "java"
    runner_name = "maven-surefire"

    def detect(self, read: Reader) -> bool:
        """A pom.xml at the root."""
        return read("pom.xml") is not None

    def is_test_file(self, path: str) -> bool:
        """Test classes under a ``src/test/java`` root (``*Test``, ``*Tests``, ``Test*``,
        ``*TestCase``; ``*IT`` are failsafe's integration tests, not run)."""
        return bool(class_of(path)) and bool(_TEST_NAME.search(path))

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (not deleted ones)."""
        return patched_test_files(test_patch, self.is_test_file)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> JavaScope:
        """Test methods whose lines the test patch changes (and classes it creates)."""
        names: set[tuple[str, str]] = set()
        new: set[str] = set()
        for fp in parse_patch(test_patch):
            if not fp.new_path or not self.is_test_file(fp.new_path):
                continue
            cls = class_of(fp.new_path)
            if fp.old_path is None:
                new.add(cls)
                continue
            base = read_base(fp.old_path) if read_base is not None else None
            base_lines = base.decode("utf-8", "replace").splitlines() if base else []
            for hunk in fp.hunks:
                # The method a hunk starts in, when its declaration is above the hunk (a long
                # data table): read on the base file.
                current = _enclosing(base_lines, hunk.old_start - 1)[0] if base_lines else ""
                for tag, body in hunk.lines:
                    line = body.decode("utf-8", "replace").rstrip("\r\n")
                    m = _METHOD.match(line)
                    if m and m.group(1) not in _NOT_METHODS:
                        current = m.group(1)
                        if tag == ADDED:
                            names.add((cls, current))
                    elif tag in (ADDED, REMOVED) and current:
                        names.add((cls, current))
            # A changed method of the base file that is not a test (a @Parameters table, a
            # @MethodSource, a helper) changes the tests that use it: every test of the class.
            for owner, name in list(names):
                if owner == cls and base_lines and _is_helper(base_lines, name):
                    new.add(cls)
        return JavaScope(frozenset(names), frozenset(new))

    def runner(self, module: str, packages: list[str] | None = None) -> SurefireRunner:
        """The gate's runner for a project (``groupId:artifactId``)."""
        return SurefireRunner(module, packages)

    def runner_for(self, rec: ImageRecord) -> SurefireRunner:
        """The gate's runner for the images of ``rec`` (its project's name is all it needs)."""
        return self.runner(str(rec.project_name or ""))

    # -------------------------------------------------------------- judge's files, capabilities
    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """Maven's and the test framework's configuration, and sources that shadow a
        framework, that a patch changes and the gold patch does not."""
        out: list[dict[str, str]] = []
        for path in paths_beyond_gold(patch, gold_patch):
            name = path.rsplit("/", 1)[-1]
            why = ""
            if path.startswith(".mvn/") or "/.mvn/" in path or name.startswith("mvnw"):
                why = "Maven's own configuration (extensions, JVM and command-line options)"
            elif "META-INF/services/" in path:
                why = "a service registration (test listeners, annotation processors)"
            elif name in ("junit-platform.properties", "testng.xml", "surefire.properties"):
                why = "the test framework's configuration"
            elif path.endswith(".java") and "/test/" not in f"/{path}":
                rel = _source_rel(path)
                if rel and rel.startswith(FRAMEWORK_DIRS):
                    why = "a class in a test framework's or the JDK's package shadows it"
            elif name in ("build.gradle", "build.gradle.kts", "settings.gradle"):
                why = "build configuration"
            if why:
                out.append(runner_config(f"{path}: {why}"))
        changed: dict[str, list[str]] = {}
        for path, line in sorted(_pom_lines(patch) - _pom_lines(gold_patch)):
            if not _POM_FREE.match(line[1:]):
                changed.setdefault(path, []).append(line)
        for path, lines in changed.items():
            shown = "; ".join(ln[:120] for ln in lines[:3])
            out.append(
                runner_config(
                    f"{path}: {shown} (the build's plugins, dependencies and properties decide "
                    "what runs with the tests; the reference fix does not change these lines)"
                )
            )
        return out

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the patch's main Java files use after it that they did not use
        before (read on their syntax trees, :mod:`swe_forge.ecosystems.java.scan`)."""
        return source_capabilities(patch, read_base, _is_main_source, scan)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's main Java files use."""
        return tree_source_capabilities(paths, read, _is_main_source, scan)

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files locked during a run: the test patch's paths and the root pom.xml; trees:
        ``.mvn`` and the test resources the test patch touches."""
        paths = touched_paths(test_patch)
        files = set(paths) | {"pom.xml"}
        trees = {".mvn"}
        for path in paths:
            i = path.find("src/test/resources/")
            if i >= 0:
                trees.add(path[: i + len("src/test/resources")])
        return {"files": sorted(files), "trees": sorted(trees)}

    # ------------------------------------------------------------------------------ verifying
    def run_job(
        self,
        task: TaskManifest,
        test_patch_path: str,
        *,
        timeout: float,
        output_limit: int,
        twins: list[dict[str, Any]] | None = None,
        files: list[dict[str, str]] | None = None,
        extra: dict[str, dict[str, Any]] | None = None,
        test_timeout: float = 0.0,
        rng: random.Random | None = None,
    ) -> dict[str, Any]:
        """The verifier's run: the expected test methods (the calibration copies ``extra``
        names included), as twins or as one run."""
        rng = rng or random.SystemRandom()
        expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS) + sorted(extra or {})
        sources = {class_of(str(f)): str(f) for f in task.harness.get("test_files", [])}
        sources.pop("", None)
        methods: dict[str, set[str]] = {}
        for test in expected:
            cls, _, name = test.partition("::")
            methods.setdefault(cls, set()).add(name)
        selection = []
        for cls, names in sorted(methods.items()):
            pats = sorted({method_base(n) + ("*" if method_base(n) != n else "") for n in names})
            selection.append(cls + "#" + "+".join(pats))
        classes = {c: sources.get(c.split("$", 1)[0], "") for c in methods}
        return verify_job(
            test_patch_path,
            self.protect(task.test_patch),
            argv=SurefireRunner.argv(
                selection, order_seed=rng.randrange(2**31), timeout=test_timeout
            ),
            env=dict(JAVA_ENV_RUN),
            timeout=timeout,
            output_limit=output_limit,
            report=report_spec({c: p for c, p in classes.items() if p}),
            twins=twins,
            files=files,
            canary_map=extra,
        )

    def unit_of(self, test: str) -> str:
        """Surefire forks one JVM for every class."""
        return ""

    # ------------------------------------------------------------------------------- images
    def build(self, builder: ImageBuilder, candidate: Candidate) -> ImageRecord:
        """JDK, Maven, local repository, env and instance images (failures in the record)."""
        from swe_forge.ecosystems.image import ecosystem_base
        from swe_forge.images.base import BaseRecipe
        from swe_forge.images.build import ImageRecord, failed, finish_instance, record_env

        rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
        stage = "recipe"
        try:
            repo = builder._repo(candidate)
            commit = repo.commit(candidate.base_commit)
            got = repo.blob_at(candidate.base_commit, "pom.xml")
            if got is None:
                raise BuildError("no pom.xml at the base commit")
            info = pom_info(got[1].decode("utf-8", "replace"))
            module = f"{info['group']}:{info['artifact']}".strip(":")
            date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
            ci = ci_java_versions(ci_files(repo, candidate.base_commit))
            jdk, distro = choose_jdk(date, info["release"], ci)
            maven_version, maven_sha = choose_maven(date)
            env = {"JAVA_HOME": java_home(jdk), "MAVEN_HOME": MAVEN_HOME}
            rec.project_name = module
            rec.recipe = {
                "ecosystem": "java",
                "module": module,
                "java_release": info["release"],
                "ci_java": ci,
                "toolchain": f"openjdk-{jdk}+maven-{maven_version}+surefire-{SUREFIRE}",
                "toolchain_source": f"debian {distro} {jdk_package(jdk)}; Maven Central "
                f"org.apache.maven:apache-maven:{maven_version}:bin (sha512 {maven_sha[:16]}...)",
                "base_date": date,
                "env": {**env, "MAVEN_OPTS": JAVA_ENV_RUN["MAVEN_OPTS"]},
            }
            stage = "toolchain"
            t = time.perf_counter()
            maven = fetch_maven(maven_version, maven_sha, builder.cache)
            rec.seconds["toolchain"] = round(time.perf_counter() - t, 3)
            stage = "base"
            plain = BaseRecipe.for_distro(distro)
            from dataclasses import replace

            base = ecosystem_base(
                builder, rec, replace(plain, packages=(*plain.packages, jdk_package(jdk)))
            )
            stage = "resolve"
            t = time.perf_counter()
            with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="java-") as tmp:
                ctx = Path(tmp)
                m2 = ctx / "m2"
                m2.mkdir()
                jhome = image_jdk_on_host(builder.engine, base.tag, jdk, builder.cache)
                self._resolve(repo, candidate, maven, jhome or host_java_home(jdk), ctx, m2)
                rec.lock_digest = digest_text(
                    f"jdk{jdk}", f"maven{maven_version}", SUREFIRE, _tree_digest(m2)
                )
                rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
                rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
                stage = "env"
                env_tag, env_id, env_s = self._env_image(
                    builder, base.tag, maven, ctx, rec.lock_digest, env
                )
            record_env(rec, env_tag, env_id, env_s)
            stage = "instance"
            finish_instance(
                rec,
                builder,
                repo,
                candidate,
                install_cmd=INSTALL.format(opts=" ".join(MVN_OPTIONS), m2=M2),
                extra_labels={
                    f"{LABEL_PREFIX}.lock": rec.lock_digest,
                    f"{LABEL_PREFIX}.ecosystem": "java",
                    f"{LABEL_PREFIX}.toolchain": str(rec.recipe["toolchain"]),
                },
            )
        except DockerError:
            raise
        except (SweForgeError, subprocess.TimeoutExpired, OSError) as exc:
            failed(rec, stage, exc)
        return rec

    def _resolve(
        self, repo: Any, candidate: Candidate, maven: Path, jhome: str, ctx: Path, m2: Path
    ) -> None:
        """Everything the build and Surefire need, for the tree with both patches (with a
        probe test class of ours, so no test of the project runs here) and the base tree."""
        from swe_forge.git.scrub import scrubbed_checkout

        tree = ctx / "tree"
        scrubbed_checkout(repo, candidate.base_commit, tree)
        git_apply(tree, (candidate.test_patch, candidate.patch))
        selection = "-Dtest=SweForgeNoSuchTest"
        for path in self.test_files(candidate.test_patch):
            probe = path.rsplit("/", 1)[0] + "/SweForgeProbeTest.java"
            code = probe_source(tree / probe)
            if code:
                (tree / probe).write_text(code)
                cls = class_of(probe)
                selection = f"-Dtest={cls}"
                break
        _mvn(
            maven,
            jhome,
            [
                "-fae",
                "test-compile",
                SUREFIRE_GOAL,
                selection,
                "-Dsurefire.failIfNoSpecifiedTests=false",
                "-DfailIfNoTests=false",
                "-Dmaven.test.failure.ignore=true",
            ],
            cwd=tree,
            repo=m2,
        )
        shutil.rmtree(tree)
        scrubbed_checkout(repo, candidate.base_commit, tree)
        _mvn(maven, jhome, ["test-compile", "-DskipTests"], cwd=tree, repo=m2)
        shutil.rmtree(tree)
        # Records of failed downloads are not needed offline (and would differ run to run).
        for stale in list(m2.rglob("*.lastUpdated")):
            stale.unlink()

    def _env_image(
        self,
        builder: ImageBuilder,
        base_tag: str,
        maven: Path,
        ctx: Path,
        lock: str,
        env: dict[str, str],
    ) -> tuple[str, str, float]:
        from swe_forge.ecosystems.image import build_ecosystem_env

        env_line = " ".join(f"{k}={v}" for k, v in sorted(env.items()))
        dockerfile = ENV_DOCKERFILE.format(
            base=base_tag, maven_home=MAVEN_HOME, m2=M2, path=JAVA_PATH_ENV, env=env_line
        )
        return build_ecosystem_env(
            builder,
            "java",
            base_tag=base_tag,
            dockerfile=dockerfile,
            lock=lock,
            ctx=ctx,
            copies={"maven": maven},
            dockerignore="tree\n",
        )


_BOOKKEEPING = ("_remote.repositories", "resolver-status.properties")


def _tree_digest(root: Path) -> str:
    """sha256 over the paths and contents of a local repository's artifacts (not the
    resolver's bookkeeping, which records times)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in (
            "_remote.repositories",
            "resolver-status.properties",
        ):
            continue
        if path.name.startswith("maven-metadata") or path.name.endswith(".lastUpdated"):
            continue
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


_NOT_METHODS = ("if", "for", "while", "switch", "catch", "return", "synchronized", "new")
_TEST_ANNOTATION = re.compile(
    r"@(?:org\.junit\.(?:jupiter\.api\.|jupiter\.params\.)?)?(Test|ParameterizedTest|"
    r"RepeatedTest|TestFactory|TestTemplate|Theory)\b"
)


def _enclosing(lines: list[str], index: int) -> tuple[str, int]:
    """(name, line index) of the nearest method declared at or above ``lines[index]``."""
    for i in range(min(index, len(lines) - 1), -1, -1):
        m = _METHOD.match(lines[i])
        if m and m.group(1) not in _NOT_METHODS:
            return m.group(1), i
    return "", -1


def _is_helper(lines: list[str], name: str) -> bool:
    """Is ``name`` declared in ``lines`` as a method without a test annotation?"""
    for i, line in enumerate(lines):
        m = _METHOD.match(line)
        if not m or m.group(1) != name:
            continue
        if name.startswith("test"):  # JUnit 3
            return False
        j = i - 1
        head = [line]
        while j >= 0 and (
            not lines[j].strip() or lines[j].lstrip().startswith(("@", "//", "*", "/*"))
        ):
            head.append(lines[j])
            j -= 1
        return not any(_TEST_ANNOTATION.search(h) for h in head)
    return False


def probe_source(path: Path) -> str:
    """A passing test class ``path`` in the package and framework (JUnit 4 or 5) of a test
    class beside it ("" when none is found)."""
    for entry in sorted(path.parent.glob("*.java")):
        source = entry.read_text("utf-8", "replace")
        if "org.junit.jupiter" in source:
            imports, decl = "import org.junit.jupiter.api.Test;\n", "class"
        elif "org.junit.Test" in source or "org.junit.*" in source:
            imports, decl = "import org.junit.Test;\n", "public class"
        else:
            continue
        m = _PACKAGE.search(source)
        head = f"package {m.group(1)};\n\n" if m else ""
        vis = "public " if decl.startswith("public") else ""
        return (
            f"{head}{imports}\n{decl} {path.stem} {{\n    @Test\n    {vis}void probe() {{}}\n}}\n"
        )
    return ""


def _source_rel(path: str) -> str:
    """The path of a Java source below its source root (``src/main/java/``, ``src/``...)."""
    m = re.search(r"(?:^|/)src/main/java\d*/", path) or re.search(r"(?:^|/)src/(?:java/)?", path)
    return path[m.end() :] if m else path


def _is_test_source(path: str) -> bool:
    return "/test/" in f"/{path}" or "/tests/" in f"/{path}"


def _is_main_source(path: str) -> bool:
    return path.endswith(".java") and not _is_test_source(path)


def _pom_lines(patch: str) -> set[tuple[str, str]]:
    """(pom path, "+line"/"-line") of every line a patch adds to or removes from a pom.xml."""
    out: set[tuple[str, str]] = set()
    for path, lines in file_lines(patch, "pom.xml"):
        for tag, body in lines:
            line = body.strip()
            # A line removed and added again (moved) still counts: moving <skip> into another
            # plugin's section is a change of configuration.
            if line and tag in (ADDED, REMOVED):
                out.add((path, signed(tag, line)))
    return out
