"""Java's images: the env image's Dockerfile (Maven at ``/opt/maven``, the local repository
at ``/opt/m2``), the instance's offline build step, and the build of the JDK base, env and
instance images for a candidate (toolchain by date, resolution on the host, then the
images).

The resolution itself is :mod:`swe_forge.ecosystems.java.deps`; the JDK and Maven chosen
are :mod:`swe_forge.ecosystems.java.toolchain`'s. Kept apart from the adapter, whose
``build`` calls :func:`build_images`, because image assembly is a concern of its own.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.ecosystems.base import digest_text
from swe_forge.ecosystems.image import failed, finish_instance, record_env
from swe_forge.ecosystems.java.deps import _tree_digest, resolve
from swe_forge.ecosystems.java.detect import GRADLE_MARKERS
from swe_forge.ecosystems.java.runner import (
    JAVA_ENV_RUN,
    M2,
    MVN_OPTIONS,
    SUREFIRE,
    build_options,
)
from swe_forge.ecosystems.java.toolchain import (
    choose_maven,
    ci_files,
    ci_java_versions,
    compiler_levels,
    fetch_maven,
    host_jdk_of_major,
    image_jdk_on_host,
    java_home,
    jdk_choices,
    jdk_package,
    pom_info,
    runnable_jdk,
)
from swe_forge.engine import LABEL_PREFIX
from swe_forge.errors import BuildError, DockerError, SweForgeError, Unsupported
from swe_forge.records import ImageRecord

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.records import Candidate

MAVEN_HOME = "/opt/maven"


JAVA_PATH_ENV = f"{MAVEN_HOME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


ENV_DOCKERFILE = """\
FROM {base}
COPY maven {maven_home}
COPY m2 {m2}
RUN chmod -R a+rX {maven_home} {m2}
ENV PATH={path} {env}
"""


#: The instance's build step: the base tree compiles offline (a missing artifact fails the
#: image build, not a test); its outputs go (/testbed is made anew at every start).
INSTALL = (
    "cd /testbed && HOME=/root mvn {opts} -q test-compile -DskipTests "
    "&& rm -rf /testbed/target /testbed/*/target && chmod -R a+rX {m2}"
)


def build_images(
    builder: Builder, candidate: Candidate, test_files: Callable[[str], list[str]]
) -> ImageRecord:
    """JDK, Maven, local repository, env and instance images (failures in the record).
    ``test_files``: the adapter's test files of a test patch (see
    :func:`swe_forge.ecosystems.java.deps.resolve`)."""
    from swe_forge.ecosystems.image import ecosystem_base
    from swe_forge.images.base import BaseRecipe

    rec = ImageRecord(candidate.instance_id, candidate.repo, candidate.base_commit)
    stage = "recipe"
    try:
        repo = builder.repo(candidate)
        commit = repo.commit(candidate.base_commit)
        got = repo.blob_at(candidate.base_commit, "pom.xml")
        if got is None:
            gradle = [
                m for m in GRADLE_MARKERS if repo.blob_at(candidate.base_commit, m) is not None
            ]
            if gradle:
                raise Unsupported(
                    f"a Gradle build ({', '.join(gradle)}) and no pom.xml: no Gradle "
                    "distribution can be had on this machine (services.gradle.org is not "
                    "reachable; Debian's gradle is 4.4.1, of 2017)",
                    "gradle_unavailable",
                    hint="Maven projects only; see README's limits",
                )
            raise BuildError("no pom.xml at the base commit")
        pom_text = got[1].decode("utf-8", "replace")
        info = pom_info(pom_text)
        module = f"{info['group']}:{info['artifact']}".strip(":")
        date = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
        ci = ci_java_versions(ci_files(repo, candidate.base_commit))
        choices = jdk_choices(date, info["release"], ci)
        jdk, distro = choices[0]
        maven_version, maven_sha = choose_maven(date)
        options = build_options(builder.config.images.build_options)
        rec.project_name = module

        def describe(jdk: int, distro: str) -> dict[str, str]:
            env = {"JAVA_HOME": java_home(jdk), "MAVEN_HOME": MAVEN_HOME}
            rec.recipe.update(
                {
                    "toolchain": f"openjdk-{jdk}+maven-{maven_version}+surefire-{SUREFIRE}",
                    "toolchain_source": f"debian {distro} {jdk_package(jdk)}; Maven Central "
                    f"org.apache.maven:apache-maven:{maven_version}:bin (sha512 "
                    f"{maven_sha[:16]}...)",
                    "env": {**env, "MAVEN_OPTS": JAVA_ENV_RUN["MAVEN_OPTS"]},
                }
            )
            return env

        rec.recipe = {
            "ecosystem": "java",
            "module": module,
            "java_release": info["release"],
            "ci_java": ci,
            "base_date": date,
            # Into the manifest's harness block: the gate's and the verifier's runs pass the
            # options the images were resolved and built with.
            "harness": {"build_options": list(options)},
        }
        env = describe(jdk, distro)
        stage = "toolchain"
        t = time.perf_counter()
        maven = fetch_maven(maven_version, maven_sha, builder.cache)
        rec.seconds["toolchain"] = round(time.perf_counter() - t, 3)
        stage = "base"
        from dataclasses import replace

        bases: dict[int, str] = {}

        def home_of(jdk: int, distro: str) -> str:
            plain = BaseRecipe.for_distro(distro)
            bases[jdk] = ecosystem_base(
                builder, rec, replace(plain, packages=(*plain.packages, jdk_package(jdk)))
            ).tag
            return image_jdk_on_host(
                builder.engine, bases[jdk], jdk, builder.cache
            ) or host_jdk_of_major(jdk)

        jdk, distro, jhome = runnable_jdk(choices, home_of)
        if jdk != choices[0][0]:
            rec.recipe["jdk_lowered"] = {
                "from": choices[0][0],
                "why": "its JDK does not run on this host, where the dependencies are resolved",
            }
            env = describe(jdk, distro)
        base_tag = bases[jdk]
        # A source/target below what the JDK compiles (an old pom on the compiler plugin's
        # implicit 1.5) is raised for resolution, build, gate and verifier alike: the options
        # go where the configured ones do (the manifest's harness.build_options).
        raised, levels = compiler_levels(pom_text, jdk, maven_version)
        if levels.get("raised") or levels.get("pinned"):
            rec.recipe["compiler_levels"] = levels
        if raised:
            options = (*options, *raised)
            rec.recipe["harness"] = {"build_options": list(options)}
        stage = "resolve"
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=builder.work_dir, prefix="java-") as tmp:
            ctx = Path(tmp)
            m2 = ctx / "m2"
            m2.mkdir()
            try:
                resolve(repo, candidate, maven, jhome, ctx, m2, test_files, options=options)
            except BuildError as exc:
                if levels.get("pinned"):
                    raise BuildError(f"{exc.message}\n{levels['pinned']}", exc.hint) from exc
                raise
            rec.lock_digest = digest_text(
                f"jdk{jdk}", f"maven{maven_version}", SUREFIRE, _tree_digest(m2)
            )
            testng = resolved_versions(m2, "org.testng", "testng")
            if testng:
                rec.recipe["testng"] = testng
            rec.recipe_digest = digest_text(json.dumps(rec.recipe, sort_keys=True))
            rec.seconds["resolve"] = round(time.perf_counter() - t, 3)
            stage = "env"
            env_tag, env_id, env_s = env_image(builder, base_tag, maven, ctx, rec.lock_digest, env)
        record_env(rec, env_tag, env_id, env_s)
        stage = "instance"
        finish_instance(
            rec,
            builder,
            repo,
            candidate,
            install_cmd=INSTALL.format(
                opts=" ".join(shlex.quote(o) for o in (*MVN_OPTIONS, *options)), m2=M2
            ),
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


def resolved_versions(m2: Path, group: str, artifact: str) -> list[str]:
    """The versions of ``group:artifact`` a resolution put into the local repository ``m2``
    (sorted; none when the build does not use it)."""
    root = m2.joinpath(*group.split("."), artifact)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob(f"{artifact}-*.jar")))


def env_image(
    builder: Builder,
    base_tag: str,
    maven: Path,
    ctx: Path,
    lock: str,
    env: dict[str, str],
) -> tuple[str, str, float]:
    """The env image: the ecosystem's base with Maven and the local repository."""
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
