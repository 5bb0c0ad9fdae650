"""The instance image every ecosystem's build ends with: the repository at its base commit,
history scrubbed to one commit, on the env image, with the project's install step.

Its tag hashes the Dockerfile, the install step, the env image and the commit, so a changed
recipe never reuses a stale image; the work tree is checked out when a container starts
(:data:`MATERIALIZE`), so the layer holds the one-commit ``.git`` and what the install adds.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import time
from pathlib import Path

from swe_forge.engine import LABEL_PREFIX, Engine, local_name
from swe_forge.git.repo import GitRepository
from swe_forge.git.scrub import scrubbed_checkout
from swe_forge.records import Candidate

_TAG_SAFE = re.compile(r"[^a-z0-9_.-]+")

#: The layer holds the one-commit .git and what the install adds, not a second copy of every
#: file: the work tree is checked out when a container starts (tens of milliseconds), so the
#: instance layer is about the size of the compressed objects instead of the tree plus them.
#: Submodules (mode 160000) are directories, not files to remove: they stay, empty.
MATERIALIZE = "git -C /testbed checkout -q -f HEAD -- ."
INSTANCE_DOCKERFILE = """\
FROM {env}
COPY --chown=1000:1000 testbed /testbed
WORKDIR /testbed
RUN git config --system --add safe.directory /testbed \\
 && git -C /testbed checkout -q -f HEAD -- . \\
 && {install} \\
 && git -C /testbed ls-files -z -s | grep -zv '^160000' | cut -z -f2- \\
    | xargs -0 -r rm -f -- \\
 && find /testbed -xdev ! -user 1000 -exec chown -h 1000:1000 {{}} + \\
 && rm -rf /root/.cache /tmp/*
USER 1000:1000
ENV HOME=/home/swe
ENTRYPOINT ["/bin/sh", "-c", "{materialize} && exec \\"$@\\"", "swe-forge-entrypoint"]
CMD ["/bin/bash"]
"""


def sanitize_tag(text: str) -> str:
    """A string usable as a Docker tag (lowercase, [a-z0-9_.-], at most 100 characters)."""
    out = _TAG_SAFE.sub("-", text.lower()).strip("-.")
    return out[:100] or "x"


def install_command(install: bool) -> str:
    """The instance image's install step: the project installed editable, offline."""
    if not install:
        return "true"
    pip = "/opt/venv/bin/pip install --no-index --no-cache-dir --no-deps --no-build-isolation"
    # A setup.py that falls back to pure Python when its C extension cannot be built (task
    # images carry no compiler) runs setup() a second time in the same process, which
    # setuptools' PEP 660 editable build cannot survive (markupsafe); its legacy
    # `setup.py develop` mode can.
    return (
        f"{{ {pip} -e /testbed || {{ test -f /testbed/setup.py "
        f"&& SETUPTOOLS_ENABLE_FEATURES=legacy-editable {pip} -e /testbed; }}; }}"
    )


def instance_tag(
    env: str, instance_id: str, base_commit: str, install: bool, install_cmd: str | None = None
) -> str:
    """``swe-forge.invalid/instance:<instance id>-<hash12>``; the hash covers the Dockerfile's
    text, the install step, the env image and the commit, so a changed recipe never reuses a
    stale image. ``install_cmd`` is another ecosystem's install step (pip's by default)."""
    cmd = install_command(install) if install_cmd is None else install_cmd
    recipe = f"{INSTANCE_DOCKERFILE}\n{env}\n{base_commit}\n{install}\n{cmd}"
    digest = hashlib.sha256(recipe.encode()).hexdigest()
    return f"{local_name('instance')}:{sanitize_tag(instance_id)}-{digest[:12]}"


def build_instance(
    engine: Engine,
    env_image: str,
    repo: GitRepository,
    candidate: Candidate,
    *,
    install: bool,
    work_dir: Path,
    log_dir: Path,
    extra_labels: dict[str, str],
    install_cmd: str | None = None,
) -> tuple[str, str, str, int, int, float]:
    """Build the instance image (``install_cmd``: another ecosystem's install step).

    Returns (tag, id, scrubbed commit, source bytes, .git bytes, seconds).
    """
    start = time.perf_counter()
    cmd = install_command(install) if install_cmd is None else install_cmd
    tag = instance_tag(
        env_image, candidate.instance_id, candidate.base_commit, install, install_cmd
    )
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="instance-") as tmp:
        ctx = Path(tmp)
        scrub = scrubbed_checkout(repo, candidate.base_commit, ctx / "testbed")
        # Only the repository goes into the image; the files come out of it at start-up.
        for item in (ctx / "testbed").iterdir():
            if item.name != ".git":
                shutil.rmtree(item) if item.is_dir() and not item.is_symlink() else item.unlink()
        git_bytes = sum(
            f.stat().st_size for f in (ctx / "testbed" / ".git").rglob("*") if f.is_file()
        )
        existing = engine.image(tag)
        if existing is not None:
            return tag, existing.id, scrub.commit, scrub.bytes, git_bytes, 0.0
        (ctx / "Dockerfile").write_text(
            INSTANCE_DOCKERFILE.format(env=env_image, install=cmd, materialize=MATERIALIZE)
        )
        # Our own .dockerignore at the context root: the repository's own one (inside
        # testbed/) must not decide what the image holds, and it does not at this level.
        (ctx / ".dockerignore").write_text("")
        info = engine.build(
            ctx,
            tag,
            labels={
                f"{LABEL_PREFIX}.kind": "instance",
                f"{LABEL_PREFIX}.instance-id": candidate.instance_id,
                f"{LABEL_PREFIX}.repo": candidate.repo,
                f"{LABEL_PREFIX}.base-commit": candidate.base_commit,
                f"{LABEL_PREFIX}.env": env_image,
                f"{LABEL_PREFIX}.scrubbed-commit": scrub.commit,
                **extra_labels,
            },
            log_path=log_dir / f"instance-{sanitize_tag(candidate.instance_id)}.log",
        )
    return tag, info.id, scrub.commit, scrub.bytes, git_bytes, time.perf_counter() - start


def layer_sizes(engine: Engine, instance_ref: str, env_image: str) -> int:
    """Bytes the instance adds on top of its env image (the sum of its own layers)."""
    inst = engine.history_sizes(instance_ref)
    env = engine.history_sizes(env_image)
    return sum(size for _by, size in inst[: len(inst) - len(env)])
