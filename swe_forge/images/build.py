"""Instance images, the image record, and the build of all three layers for one candidate
(through its ecosystem's adapter: Python's env image is :mod:`swe_forge.ecosystems.python.image`).

- **instance**: FROM the env image; the repository at the base commit in ``/testbed`` as a
  scrubbed one-commit repository owned by the non-root user, the project installed from it
  (editable, offline, no dependencies). Built with no network.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge.config import Config, RepoOverride
from swe_forge.engine import LABEL_PREFIX, Engine, local_name
from swe_forge.errors import BuildError, SweForgeError
from swe_forge.git.repo import GitRepository
from swe_forge.git.scrub import scrubbed_checkout
from swe_forge.mining.sources import RepoSource, materialize
from swe_forge.records import Candidate, RegistryPins

IMAGE_RECORD_SCHEMA_VERSION = 1
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


def cache_root(config: Config) -> Path:
    """Where wheelhouses, locks, logs and build contexts live."""
    from swe_forge.mining.sources import cache_dir

    return cache_dir()


@dataclass
class ImageRecord:
    """The images of one candidate (or why they could not be built)."""

    instance_id: str
    repo: str
    base_commit: str
    status: str = "ok"  # "ok" | "failed"
    reason: str = ""  # a machine-readable failure reason
    detail: str = ""
    python: str = ""
    project_name: str | None = None
    base_image: str = ""
    env_image: str = ""
    env_image_id: str = ""
    instance_image: str = ""
    instance_image_id: str = ""
    lock_digest: str = ""
    recipe_digest: str = ""
    recipe: dict[str, Any] = field(default_factory=dict)
    scrubbed_commit: str = ""
    reused: dict[str, bool] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    #: Wheels of the wheelhouse: "total", "from_store" (not downloaded), "sdists_built".
    wheels: dict[str, int] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    #: Where the three images were pushed, pinned by digest (``images push``); None before.
    registry: RegistryPins | None = None
    schema_version: int = IMAGE_RECORD_SCHEMA_VERSION
    record_type: str = "images"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        from dataclasses import asdict

        data = asdict(self)
        data["registry"] = self.registry.to_dict() if self.registry else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageRecord:
        """Inverse of :meth:`to_dict` (raises ValueError on a malformed ``registry`` block)."""
        known = {f for f in cls.__dataclass_fields__}
        fields = {k: v for k, v in data.items() if k in known}
        if fields.get("registry"):
            fields["registry"] = RegistryPins.from_dict(fields["registry"])
        return cls(**fields)


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


def record_env(
    rec: ImageRecord, tag: str, image_id: str, seconds: float, *, reused: bool | None = None
) -> None:
    """Fill ``rec`` with the env image: its tag, id, whether it was reused (by default: it
    took no time to build) and the seconds its build took."""
    rec.env_image, rec.env_image_id = tag, image_id
    rec.reused["env"] = seconds == 0.0 if reused is None else reused
    rec.seconds["env"] = round(seconds, 3)


def finish_instance(
    rec: ImageRecord,
    builder: ImageBuilder,
    repo: GitRepository,
    candidate: Candidate,
    *,
    extra_labels: dict[str, str],
    install: bool = True,
    install_cmd: str | None = None,
) -> None:
    """Build the instance image on the env image of ``rec`` (:func:`build_instance`) and fill
    ``rec`` with it: tag, id, scrubbed commit, reuse, seconds and sizes."""
    engine, env_tag = builder.engine, rec.env_image
    tag, image_id, scrubbed, source_bytes, git_bytes, inst_s = build_instance(
        engine,
        env_tag,
        repo,
        candidate,
        install=install,
        install_cmd=install_cmd,
        work_dir=builder.work_dir,
        log_dir=builder.log_dir,
        extra_labels=extra_labels,
    )
    rec.instance_image, rec.instance_image_id, rec.scrubbed_commit = tag, image_id, scrubbed
    rec.reused["instance"] = inst_s == 0.0
    rec.seconds["instance"] = round(inst_s, 3)
    rec.sizes["source_tree"] = source_bytes
    rec.sizes["git_dir"] = git_bytes
    rec.sizes["instance_layer"] = layer_sizes(engine, tag, env_tag)
    env_info = engine.image(env_tag)
    rec.sizes["env_image"] = env_info.size if env_info else 0


def failed(rec: ImageRecord, stage: str, exc: BaseException) -> ImageRecord:
    """Mark ``rec`` failed at ``stage`` (reason ``<stage>_failed``): a swe-forge error's
    message (and a build error's hint), or another exception's type and message."""
    rec.status = "failed"
    rec.reason = f"{stage}_failed"
    if isinstance(exc, SweForgeError):
        rec.detail = str(exc)[-4000:]
        if isinstance(exc, BuildError) and exc.hint:
            rec.detail += f"\n{exc.hint}"
    else:
        rec.detail = f"{type(exc).__name__}: {exc}"[-4000:]
    return rec


class ImageBuilder:
    """Builds base, env and instance images for candidates, reusing everything it can."""

    def __init__(
        self, config: Config, engine: Engine, *, overrides: dict[str, RepoOverride] | None = None
    ) -> None:
        self.config = config
        self.engine = engine
        self.cache = cache_root(config)
        self.work_dir = self.cache / "build"
        self.log_dir = self.cache / "logs"
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.overrides = overrides or {}
        self.distros = tuple(config.images.distros)
        self._repos: dict[str, GitRepository] = {}

    def _repo(self, candidate: Candidate) -> GitRepository:
        src = candidate.provenance.source
        if src not in self._repos:
            self._repos[src] = GitRepository(materialize(RepoSource(src), offline=True))
        return self._repos[src]

    def ecosystem(self, candidate: Candidate) -> str:
        """The ecosystem of the candidate's repository at its base commit."""
        from swe_forge.ecosystems import detect_ecosystem

        repo = self._repo(candidate)

        def read(path: str) -> bytes | None:
            got = repo.blob_at(candidate.base_commit, path)
            return got[1] if got else None

        return detect_ecosystem(read, repo.list_root(candidate.base_commit))

    def build(self, candidate: Candidate) -> ImageRecord:
        """Build the images of one candidate through its ecosystem's adapter; failures come
        back in the record."""
        from swe_forge.ecosystems import ecosystem_named

        return ecosystem_named(self.ecosystem(candidate)).build(self, candidate)
