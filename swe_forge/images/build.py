"""The images stage's builder: the three layers of one candidate (base, env, instance) built
through its ecosystem's adapter (:meth:`swe_forge.ecosystems.base.Ecosystem.build`), which
gets this builder as a :class:`~swe_forge.ecosystems.base.Builder`.

The steps the adapters share are :mod:`swe_forge.ecosystems.image`; the instance image's are
:mod:`swe_forge.images.instance`; the record is :class:`swe_forge.records.ImageRecord`.
"""

from __future__ import annotations

from pathlib import Path

from swe_forge.config import Config, RepoOverride
from swe_forge.engine import Engine
from swe_forge.git.repo import GitRepository
from swe_forge.mining.sources import RepoSource, materialize
from swe_forge.records import Candidate, ImageRecord


def cache_root(config: Config) -> Path:
    """Where wheelhouses, locks, logs and build contexts live."""
    from swe_forge.mining.sources import cache_dir

    return cache_dir()


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

    def repo(self, candidate: Candidate) -> GitRepository:
        """The candidate's source repository, opened once (offline: mined before)."""
        src = candidate.provenance.source
        if src not in self._repos:
            self._repos[src] = GitRepository(materialize(RepoSource(src), offline=True))
        return self._repos[src]

    def ecosystem(self, candidate: Candidate) -> str:
        """The ecosystem of the candidate's repository at its base commit."""
        from swe_forge.ecosystems import detect_ecosystem

        repo = self.repo(candidate)

        def read(path: str) -> bytes | None:
            got = repo.blob_at(candidate.base_commit, path)
            return got[1] if got else None

        return detect_ecosystem(read, repo.list_root(candidate.base_commit))

    def build(self, candidate: Candidate) -> ImageRecord:
        """Build the images of one candidate through its ecosystem's adapter; failures come
        back in the record."""
        from swe_forge.ecosystems import ecosystem_named

        return ecosystem_named(self.ecosystem(candidate)).build(self, candidate)
