"""Java's dependencies on the host: the real Maven build run once with the pinned Maven into
a local repository made for the candidate (``test-compile`` and Surefire on a probe test
class of ours for the tree with both patches, ``test-compile`` for the base tree), and that
repository's digest.

The env image copies the repository to ``/opt/m2`` and Maven only reads it offline there
(:mod:`swe_forge.ecosystems.java.image`). Kept apart from the adapter because resolution is
a step of the image build of its own, the one that runs the project's build on the host.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import git_apply
from swe_forge.ecosystems.java.runner import SUREFIRE_GOAL, class_of
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    from swe_forge.records import Candidate

_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


def _mvn(
    maven: Path,
    jhome: str,
    args: list[str],
    *,
    cwd: Path,
    repo: Path,
    timeout: float = 1800,
    options: tuple[str, ...] = (),
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
        *options,
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


def resolve(
    repo: Any,
    candidate: Candidate,
    maven: Path,
    jhome: str,
    ctx: Path,
    m2: Path,
    test_files: Callable[[str], list[str]],
    *,
    options: tuple[str, ...] = (),
) -> None:
    """Everything the build and Surefire need, for the tree with both patches (with a
    probe test class of ours, so no test of the project runs here) and the base tree.
    ``test_files``: the adapter's test files of a test patch (the probe goes beside one);
    ``options``: the configured build options, the same the image's runs pass (a plugin
    skipped here but run there would find its artifacts missing offline)."""
    from swe_forge.git.scrub import scrubbed_checkout

    tree = ctx / "tree"
    scrubbed_checkout(repo, candidate.base_commit, tree)
    git_apply(tree, (candidate.test_patch, candidate.patch))
    selection = "-Dtest=SweForgeNoSuchTest"
    for path in test_files(candidate.test_patch):
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
        options=options,
    )
    shutil.rmtree(tree)
    scrubbed_checkout(repo, candidate.base_commit, tree)
    _mvn(maven, jhome, ["test-compile", "-DskipTests"], cwd=tree, repo=m2, options=options)
    shutil.rmtree(tree)
    # Records of failed downloads are not needed offline (and would differ run to run).
    for stale in list(m2.rglob("*.lastUpdated")):
        stale.unlink()


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


def _header(source: str) -> str:
    """The comments a Java file opens with (its licence header), up to its first code."""
    out: list[str] = []
    in_block = False
    for line in source.splitlines(keepends=True):
        stripped = line.strip()
        if in_block:
            out.append(line)
            in_block = "*/" not in stripped
        elif stripped.startswith("/*"):
            out.append(line)
            in_block = "*/" not in stripped[2:]
        elif stripped.startswith("//") or not stripped:
            out.append(line)
        else:
            break
    text = "".join(out).strip("\n")
    return f"{text}\n" if text else ""


def probe_source(path: Path) -> str:
    """A passing test class ``path`` in the package and framework (JUnit 4 or 5, TestNG) of a test
    class beside it ("" when none is found), under that class's own header: a build that
    checks every source file's licence header (Apache RAT in every Apache Commons build,
    license-maven-plugin) failed on a probe without one."""
    for entry in sorted(path.parent.glob("*.java")):
        source = entry.read_text("utf-8", "replace")
        if "org.junit.jupiter" in source:
            imports, decl = "import org.junit.jupiter.api.Test;\n", "class"
        elif "org.junit.Test" in source or "org.junit.*" in source:
            imports, decl = "import org.junit.Test;\n", "public class"
        elif "org.testng" in source:
            # Surefire loads its TestNG provider only when a TestNG class runs: without a
            # probe of that kind the offline repository lacks it (first contact,
            # failsafe-lib/failsafe: 3 of 3 environments ran no test).
            imports, decl = "import org.testng.annotations.Test;\n", "public class"
        else:
            continue
        m = _PACKAGE.search(source)
        head = f"package {m.group(1)};\n\n" if m else ""
        vis = "public " if decl.startswith("public") else ""
        return (
            f"{_header(source)}{head}{imports}\n{decl} {path.stem} {{\n    @Test\n"
            f"    {vis}void probe() {{}}\n}}\n"
        )
    return ""
