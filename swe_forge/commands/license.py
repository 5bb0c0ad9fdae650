"""``swe-forge license``: the licence verdict of a repository at one commit."""

from __future__ import annotations

from pathlib import Path

from swe_forge.config import Config
from swe_forge.errors import LicenseError
from swe_forge.git.repo import GitRepository
from swe_forge.mining.license import LicenseJudge, LicensePolicy, default_identity_cache
from swe_forge.records import LicenseVerdict, Reason


def run_license(
    path: Path, *, config: Config, rev: str | None = None
) -> tuple[str, LicenseVerdict]:
    """Judge the licence of the repository at ``path`` at ``rev`` (default: its default branch).

    Returns the commit judged and the verdict.

    Raises:
        InputError / RepositoryError: the path is missing or not a repository.
        LicenseError: a licence file is binary or too large to be a licence text.
    """
    repo = GitRepository(path)
    commit = repo.branch_head(rev or repo.default_branch())
    judge = LicenseJudge(
        config.license,
        LicensePolicy.load(Path(config.license.allowlist_file)),
        list_root=repo.list_root,
        list_dir=repo.list_dir,
        read_blob=repo.read_blob,
        identity_cache=default_identity_cache(),
    )
    verdict = judge.judge(commit)
    judge.identity_cache.save()
    if verdict.reason == Reason.LICENSE_UNREADABLE.value:
        raise LicenseError(verdict.detail, hint="a licence must be a UTF-8 text file")
    return commit, verdict
