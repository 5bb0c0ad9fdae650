"""One candidate's base tree, read once: what every question of its admission reads from git.

Detection, scope, the clock audit and the capability scan each used to open their own reader
on the same commit; a candidate's admission read the same base files from git up to seven
times. A view memoizes each file (and the tree's listings) for the one candidate an
:class:`~swe_forge.admission.admitter.Admitter` works on at a time.
"""

from __future__ import annotations

from swe_forge.git.repo import GitRepository


class BaseView:
    """The files of ``repo`` at ``commit``, each read from git at most once."""

    def __init__(self, repo: GitRepository, commit: str) -> None:
        self.repo = repo
        self.commit = commit
        self._files: dict[str, bytes | None] = {}
        self._root: list[str] | None = None
        self._paths: list[str] | None = None
        #: Reads that went to git (the rest were answered from memory).
        self.reads = 0

    def read(self, path: str) -> bytes | None:
        """The bytes of ``path`` at the base commit, or None when there is no such file."""
        if path not in self._files:
            self.reads += 1
            found = self.repo.blob_at(self.commit, path)
            self._files[path] = found[1] if found else None
        return self._files[path]

    def root_names(self) -> list[str]:
        """The names at the top of the tree."""
        if self._root is None:
            self._root = list(self.repo.list_root(self.commit))
        return self._root

    def paths(self) -> list[str]:
        """Every file path in the tree, sorted."""
        if self._paths is None:
            self._paths = self.repo.paths(self.commit)
        return self._paths
