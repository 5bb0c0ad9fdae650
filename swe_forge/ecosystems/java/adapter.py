"""The adapter, :class:`JavaEcosystem`: what the package's modules answer, behind the protocol
(the package's docstring says how; :mod:`swe_forge.ecosystems.java`)."""

from __future__ import annotations

import posixpath
import random
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems import syntax
from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    file_lines,
    parse_patch,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    touched_paths,
    verify_job,
)
from swe_forge.ecosystems.decoys import HostCanaries
from swe_forge.ecosystems.java.detect import GRADLE_MARKERS, MARKER
from swe_forge.ecosystems.java.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.java.scan import scan, unicode_escapes
from swe_forge.ecosystems.scanning import source_capabilities, tree_source_capabilities

if TYPE_CHECKING:
    from swe_forge.diffs import FilePatch
    from swe_forge.ecosystems.base import Builder
    from swe_forge.ecosystems.canaries import CanaryWriter
    from swe_forge.records import Candidate, ImageRecord, TaskManifest

from swe_forge.ecosystems.java.deps import probe_source as probe_source
from swe_forge.ecosystems.java.image import build_images
from swe_forge.ecosystems.java.runner import (
    JAVA_ENV_RUN,
    SurefireRunner,
    class_of,
    module_of,
    report_spec,
)
from swe_forge.ecosystems.java.scope import (
    _METHOD,
    _NOT_METHODS,
    CODE,
    JavaScope,
    _enclosing,
    _is_helper,
    code_lines,
    code_only,
    method_base,
)

# Re-exported: the toolchain's choices, asked of the adapter's package.
from swe_forge.ecosystems.java.toolchain import choose_jdk as choose_jdk
from swe_forge.ecosystems.java.toolchain import choose_maven as choose_maven
from swe_forge.ecosystems.java.toolchain import ci_java_versions as ci_java_versions
from swe_forge.ecosystems.java.toolchain import image_jdk_on_host as image_jdk_on_host
from swe_forge.ecosystems.java.toolchain import pom_info as pom_info

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
    "org/mockito/",
    "org/easymock/",
    "org/powermock/",
    "org/jmock/",
    "org/xmlunit/",
    "org/custommonkey/xmlunit/",
    "org/skyscreamer/jsonassert/",
    "net/javacrumbs/jsonunit/",
    "com/google/common/truth/",
    "com/google/common/testing/",
    "org/spockframework/",
    "io/kotest/",
    "java/",
    "javax/",
    "jdk/",
    "sun/",
)


#: pom.xml lines a candidate may change although the gold patch does not (metadata).
#: A comment's lines only: one whole comment, the first line of one (nothing closes it), or
#: its last (no markup before the close): `<x>true</x> <!-- -->` is a setting, not a comment.
_POM_FREE = re.compile(
    r"^\s*(<(name|description|url|inceptionYear)>[^<]*</\2>|<!--(?:(?!-->).)*-->"
    r"|<!--(?:(?!-->).)*|[^<]*-->|)\s*$"
)


#: TestNG releases whose ``ITestResult.getName()`` is ``""`` for the methods of a class
#: annotated ``@Test`` (``TestResult`` takes the class annotation's empty ``testName`` for a
#: name): Surefire's reports then name every such test ``""`` (failsafe-lib/failsafe, first
#: contact: 3 of 3 read as a test reported twice).
UNNAMED_TESTNG = frozenset({"6.9.10", "6.9.11", "6.9.13", "6.9.13.1"})


class JavaEcosystem(HostCanaries):
    """The Java (Maven) adapter (see the module docstring)."""

    name = "java"
    runner_name = "maven-surefire"

    def detect(self, read: Reader) -> bool:
        """A pom.xml at the root, or a Gradle build and nothing of Python's (refused at its
        image build: :data:`~swe_forge.ecosystems.java.detect.GRADLE_MARKERS`)."""
        if read(MARKER) is not None:
            return True
        from swe_forge.ecosystems.python.detect import PYTHON_MARKERS

        return any(read(m) is not None for m in GRADLE_MARKERS) and not any(
            read(m) is not None for m in PYTHON_MARKERS
        )

    def refusal(self, rec: ImageRecord) -> tuple[str, str] | None:
        """A project on a TestNG release whose results name no test method (see
        :data:`UNNAMED_TESTNG`): no test of it could be told from another."""
        bad = sorted(set(rec.recipe.get("testng") or ()) & UNNAMED_TESTNG)
        if bad:
            return (
                "runner_unsupported",
                f"TestNG {', '.join(bad)}: in a class annotated @Test its results carry no "
                "method name (the name TestNG gives them is the class annotation's empty "
                "testName; not in 6.9.12 nor from 6.9.13.2 on), so Surefire's reports cannot tell "
                "one test from another",
            )
        return None

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
            # Declarations are read on code only (comments and literals blanked by a lexer
            # that carries its state across lines): a licence line read as a declaration
            # made a helper of a comment and put every test of its class in scope.
            base_lines, base_states = code_lines(
                base.decode("utf-8", "replace").splitlines() if base else []
            )
            for hunk in fp.hunks:
                # The method a hunk starts in, when its declaration is above the hunk (a long
                # data table): read on the base file.
                at = hunk.old_start - 1
                current = _enclosing(base_lines, at)[0] if base_lines else ""
                # Each side of the hunk lexed from the state the base file is in where the
                # hunk starts (a hunk may start inside a comment).
                start = base_states[at] if 0 <= at < len(base_states) else CODE
                state = {ADDED: start, REMOVED: start}
                for tag, body in hunk.lines:
                    raw = body.decode("utf-8", "replace").rstrip("\r\n")
                    sides = (tag,) if tag in (ADDED, REMOVED) else (ADDED, REMOVED)
                    line = ""
                    for side in sides:
                        line, state[side] = code_only(raw, state[side])
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
        """The gate's runner for the images of ``rec``: its project's name and the build
        options its images were built with (the recipe's ``harness.build_options``)."""
        harness = (rec.recipe or {}).get("harness") or {}
        return SurefireRunner(
            str(rec.project_name or ""), None, _options(harness.get("build_options"))
        )

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
                if rel and rel.startswith(_frameworks(gold_patch)):
                    why = "a class in a test framework's or the JDK's package shadows it"
            elif name in ("build.gradle", "build.gradle.kts", "settings.gradle"):
                why = "build configuration"
            if why:
                out.append(runner_config(f"{path}: {why}"))
        out += _package_violations(patch, gold_patch)
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
        # Every .java file, wherever it lies: javac compiles what the build's source roots
        # hold, and a test-like name or directory is no proof that it is not among them.
        return source_capabilities(patch, read_base, lambda p: p.endswith(".java"), scan)

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
        job = verify_job(
            test_patch_path,
            self.protect(task.test_patch),
            argv=SurefireRunner.argv(
                selection,
                order_seed=rng.randrange(2**31),
                timeout=test_timeout,
                # The options the task's images were built and admitted with.
                options=_options(task.harness.get("build_options")),
            ),
            env=dict(JAVA_ENV_RUN),
            timeout=timeout,
            output_limit=output_limit,
            report=report_spec({c: p for c, p in classes.items() if p}),
            twins=twins,
            files=files,
            canary_map=extra,
        )
        if twins is not None:
            job["run"]["preload"] = {"entries": preload_entries(task.test_patch, self.is_test_file)}
        return job

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """No base file besides the changed ones: the scan reads those alone."""
        return []

    def canary_writer(self) -> CanaryWriter:
        """The decoys' writer (:mod:`swe_forge.ecosystems.java.canary`), one per process."""
        from swe_forge.ecosystems.java.canary import writer

        return writer()

    def unit_of(self, test: str) -> str:
        """Surefire forks one JVM for every class."""
        return ""

    # ------------------------------------------------------------------------------- images
    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """JDK, Maven, local repository, env and instance images (failures in the record):
        :func:`swe_forge.ecosystems.java.image.build_images`."""
        return build_images(builder, candidate, self.test_files)


def _options(value: Any) -> tuple[str, ...]:
    """Build options as a record or manifest holds them (a list of strings; none otherwise)."""
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(v) for v in value)


def preload_entries(test_patch: str, is_test: Any) -> list[dict[str, Any]]:
    """What the judge's Java agent takes into a twin's test JVM before the project's code runs
    there (see ``Preloader`` in the supervisor): per Java test file the test patch adds or
    changes, its module's test classes directory, its class's path prefix (its nested and
    anonymous classes are ``prefix$*``) and its source, all closed to the tests' user once
    the JVM holds them."""
    entries = []
    for path in patched_test_files(test_patch, is_test):
        fqn = class_of(path)
        if not fqn:
            continue
        entries.append(
            {
                "dir": f"/testbed/{module_of(path)}target/test-classes",
                "prefix": fqn.replace(".", "/"),
                "sources": [path],
            }
        )
    return entries


def _source_rel(path: str) -> str:
    """The path of a Java source below its source root (``src/main/java/``, ``src/``...)."""
    m = re.search(r"(?:^|/)src/main/java\d*/", path) or re.search(r"(?:^|/)src/(?:java/)?", path)
    return path[m.end() :] if m else path


def _is_test_source(path: str) -> bool:
    return "/test/" in f"/{path}" or "/tests/" in f"/{path}"


def _declared_packages(fp: FilePatch) -> list[str]:
    """The packages a Java file's patch declares, read as javac reads them (Unicode escapes
    first, comments skipped): a new file's whole text; for a changed file, whose text is not
    all in view, each added line that starts a package declaration (``?`` for one that
    cannot be read plainly; the capability scan reads the whole file too)."""
    if fp.old_path is None:
        text = b"".join(
            body if body.endswith(b"\n") else body + b"\n"
            for hunk in fp.hunks
            for tag, body in hunk.lines
            if tag == ADDED
        )
        tree = syntax.parse("java", unicode_escapes(text))
        out = []
        for node in syntax.walk(tree.root_node):
            if node.type == "package_declaration":
                name = next((c for c in node.named_children if "identifier" in c.type), None)
                out.append(re.sub(r"\s+", "", syntax.text(name)) if name is not None else "?")
        return out
    found = []
    for hunk in fp.hunks:
        for tag, body in hunk.lines:
            line = unicode_escapes(body).decode("utf-8", "replace")
            if tag == ADDED and re.match(r"\s*package\b", line):
                m = re.match(r"\s*package\s+([\w.]+)\s*;\s*(//.*)?$", line.rstrip("\r\n"))
                found.append(m.group(1) if m else "?")
    return found


def _frameworks(gold_patch: str) -> tuple[str, ...]:
    """:data:`FRAMEWORK_DIRS` but those of the project itself (JSONassert's own package,
    which its reference fixes change)."""
    own = {
        d
        for fp in parse_patch(gold_patch)
        for p in (fp.new_path, fp.old_path)
        if p and p.endswith(".java")
        for d in FRAMEWORK_DIRS
        if _source_rel(p).startswith(d)
    }
    return tuple(d for d in FRAMEWORK_DIRS if d not in own)


def _package_root(package_dir: str) -> str:
    return "/".join(package_dir.split("/")[:2])


def _package_violations(patch: str, gold_patch: str) -> list[dict[str, str]]:
    """Java sources whose class javac would place somewhere else than their path says.

    javac writes a class where its *declared* package puts it: ``package org.junit;`` in
    ``src/main/java/org/sweforge/Assert.java`` compiles to ``org/junit/Assert.class``, ahead of
    JUnit's jar on the tests' class path, and judges every assertion (a tenth red team's
    1.0 on two Java tasks). So a declared package must be the file's directory, must not be a
    test framework's or the JDK's, and a new file must lie among the packages of the project
    (the first two segments of a package the reference fix or the patch's changed files use):
    a library the tests build their expected values with is not the candidate's to replace."""
    gold = {fp.new_path or fp.old_path or "" for fp in parse_patch(gold_patch)}
    frameworks = _frameworks(gold_patch)
    parsed = [fp for fp in parse_patch(patch) if (fp.new_path or "").endswith(".java")]
    roots = {
        _package_root(posixpath.dirname(_source_rel(p)))
        for p in gold | {fp.old_path or "" for fp in parsed}
        if p.endswith(".java")
    }
    out: list[dict[str, str]] = []
    for fp in parsed:
        path = fp.new_path or ""
        if path in gold and fp.old_path is None:
            continue  # the reference fix adds this very file
        directory = posixpath.dirname(path)
        if _source_rel(path).startswith(frameworks):
            continue  # refused by its path already
        for package in _declared_packages(fp):
            folder = package.replace(".", "/")
            if package == "?":
                why = "a package declaration that cannot be read plainly"
            elif (folder + "/").startswith(frameworks):
                why = f"declares package {package}, a test framework's or the JDK's"
            elif not (directory == folder or directory.endswith("/" + folder)):
                why = (
                    f"declares package {package} in {directory or 'the top folder'}/ (javac "
                    "places the class by its package, not by its path)"
                )
            else:
                continue
            out.append(runner_config(f"{path}: {why}"))
        rel_dir = posixpath.dirname(_source_rel(path))
        if fp.old_path is None and roots and rel_dir and _package_root(rel_dir) not in roots:
            out.append(
                runner_config(
                    f"{path}: a new class in {rel_dir.replace('/', '.')}, outside the project's "
                    f"packages ({', '.join(sorted(r.replace('/', '.') for r in roots))}): it "
                    "would take the place of a library's class on the tests' class path"
                )
            )
    return out


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
