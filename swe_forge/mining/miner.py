"""The mining stage: merged PRs of one repository -> candidates and rejections.

For each repository: resolve its name and default branch; check the blocklist (by name and by
root commit); walk the first-parent history of the default branch; for every commit that is a
merged PR, judge the licence at the base commit (the first parent), diff base..merge, classify
and split, check the caps and the statement, and prove the split round-trips.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from swe_forge import __version__
from swe_forge.config import Config
from swe_forge.errors import SweForgeError
from swe_forge.git.repo import CommitInfo, GitRepository
from swe_forge.mining.blocklist import Blocklist
from swe_forge.mining.classify import PathClassifier
from swe_forge.mining.github import GitHubClient
from swe_forge.mining.license import (
    IdentityCache,
    LicenseJudge,
    LicensePolicy,
    default_identity_cache,
)
from swe_forge.mining.prs import PullRequest, parse_pr, problem_statement
from swe_forge.mining.sources import RepoSource, materialize, repo_name_from_url
from swe_forge.mining.split import (
    Split,
    SplitRejection,
    check_kinds,
    split_changes,
    verify_roundtrip,
)
from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import (
    Candidate,
    ChangedFiles,
    LicenseVerdict,
    Provenance,
    Reason,
    Rejection,
)

_VERSION = re.compile(r"^\s*(\d+)(?:\.(\d+))?")
_VERSION_LINE = re.compile(rb"^version\s*[=:]\s*[\"']?([0-9][^\"'\s]*)", re.MULTILINE)


@dataclass(frozen=True)
class MineOptions:
    """Per-run options of ``swe-forge mine`` (the rest comes from :class:`Config`)."""

    since: datetime | None = None
    until: datetime | None = None
    max_candidates: int | None = None
    branch: str | None = None
    offline: bool = False


@dataclass
class RepoStats:
    """What mining one repository found; summed into the run's summary."""

    repo: str
    source: str
    commits_scanned: int = 0
    prs_found: int = 0
    candidates: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    exception: SweForgeError | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """Plain data for the JSON summary."""
        return {
            "repo": self.repo,
            "source": self.source,
            "commits_scanned": self.commits_scanned,
            "prs_found": self.prs_found,
            "candidates": self.candidates,
            "rejected": dict(sorted(self.rejections.items())),
            "error": self.error,
        }


class Miner:
    """Mines repositories with one configuration, blocklist and licence policy."""

    def __init__(
        self,
        config: Config,
        *,
        github: GitHubClient | None = None,
        reporter: Reporter | None = None,
        identity_cache: IdentityCache | None = None,
    ) -> None:
        self.config = config
        self.policy = LicensePolicy.load(Path(config.license.allowlist_file))
        self.blocklist = Blocklist.load(Path(config.blocklist.dir), config.blocklist.kinds)
        self.classifier = PathClassifier(config.classify)
        self.github = github
        self.identity_cache = (
            identity_cache if identity_cache is not None else default_identity_cache()
        )
        self.reporter = reporter or NullReporter()
        self.config_hash = config.digest()
        self.policy_hash = hashlib.sha256(
            f"{self.policy.digest}:{self.blocklist.digest}".encode()
        ).hexdigest()

    # ------------------------------------------------------------------ one repository
    def mine(
        self, source: RepoSource, options: MineOptions, budget: int | None = None
    ) -> tuple[list[Candidate], list[Rejection], RepoStats]:
        """Mine one repository. Repository-level failures come back in ``stats.error``.

        ``budget`` caps the number of candidates (for ``--max-candidates`` across repos).
        """
        stats = RepoStats(repo=source.name or source.spec, source=source.spec)
        try:
            path = materialize(source, offline=options.offline)
            repo = GitRepository(path)
            name = self._name(source, repo, path)
            stats.repo = name
            branch = repo.default_branch(options.branch)
            head = repo.branch_head(branch)
        except SweForgeError as exc:
            stats.error = str(exc)
            stats.exception = exc
            return [], [], stats
        roots = repo.root_commits(head) if self.config.blocklist.match_root_commits else ()
        block = self.blocklist.match_repo(name, roots)
        if block is not None:
            rej = Rejection("mine", name, Reason.BLOCKLISTED_REPO.value, block.detail)
            stats.rejections[rej.reason] += 1
            self.reporter.note(f"{name}: blocklisted ({block.detail})")
            return [], [rej], stats
        candidates, rejections = self._walk(
            repo, name, source, branch, head, options, stats, budget
        )
        return candidates, rejections, stats

    def _name(self, source: RepoSource, repo: GitRepository, path: Path) -> str:
        if source.name:
            return source.name
        if source.is_url:
            found = repo_name_from_url(source.spec)
            if found:
                return found
        origin = repo.remote_url("origin")
        if origin:
            found = repo_name_from_url(origin)
            if found:
                return found
        return f"local/{path.resolve().name.removesuffix('.git')}"

    def _walk(
        self,
        repo: GitRepository,
        name: str,
        source: RepoSource,
        branch: str,
        head: str,
        options: MineOptions,
        stats: RepoStats,
        budget: int | None,
    ) -> tuple[list[Candidate], list[Rejection]]:
        judge = LicenseJudge(
            self.config.license,
            self.policy,
            list_root=repo.list_root,
            list_dir=repo.list_dir,
            read_blob=repo.read_blob,
            identity_cache=self.identity_cache,
        )
        versions: dict[str, str] = {}
        tags = repo.first_parent_tags(head)
        candidates: list[Candidate] = []
        rejections: list[Rejection] = []
        # PR number -> the reason its newer commit was rejected ("" for a candidate).
        seen_prs: dict[int, str] = {}
        self.reporter.start(name, repo.count_first_parent(head))
        try:
            for commit in repo.first_parent_history(head):
                self.reporter.advance()
                stats.commits_scanned += 1
                if not self._in_window(commit, options):
                    continue
                pr = parse_pr(commit.message, len(commit.parents))
                if pr is None:
                    continue
                stats.prs_found += 1
                # A number seen on a newer commit is a reused number (a project that moved)
                # or a re-merge; the newest commit wins, unless it changed nothing.
                if seen_prs.get(pr.number, Reason.EMPTY_DIFF.value) != Reason.EMPTY_DIFF.value:
                    rej = self._reject(
                        name, pr, commit, Reason.DUPLICATE_PR, "PR number seen on a newer commit"
                    )
                else:
                    made = self._one(repo, judge, versions, tags, name, source, branch, pr, commit)
                    seen_prs[pr.number] = "" if isinstance(made, Candidate) else made.reason
                    if isinstance(made, Candidate):
                        candidates.append(made)
                        stats.candidates += 1
                        if budget is not None and len(candidates) >= budget:
                            break
                        continue
                    rej = made
                rejections.append(rej)
                stats.rejections[rej.reason] += 1
        finally:
            self.reporter.finish()
            self.identity_cache.save()
        candidates.sort(key=lambda c: c.provenance.pr_number)
        rejections.sort(key=lambda r: (r.pr_number or 0, r.commit or ""))
        return candidates, rejections

    @staticmethod
    def _in_window(commit: CommitInfo, options: MineOptions) -> bool:
        when = datetime.fromtimestamp(commit.commit_time, tz=UTC)
        if options.since is not None and when < options.since:
            return False
        return not (options.until is not None and when > options.until)

    @staticmethod
    def _reject(
        name: str, pr: PullRequest, commit: CommitInfo, reason: Reason, detail: str
    ) -> Rejection:
        return Rejection(
            stage="mine",
            repo=name,
            reason=reason.value,
            detail=detail,
            instance_id=instance_id(name, pr.number),
            pr_number=pr.number,
            commit=commit.sha,
        )

    def _one(
        self,
        repo: GitRepository,
        judge: LicenseJudge,
        versions: dict[str, str],
        tags: dict[str, str],
        name: str,
        source: RepoSource,
        branch: str,
        pr: PullRequest,
        commit: CommitInfo,
    ) -> Candidate | Rejection:
        base = commit.parents[0]
        hit = self.blocklist.match_pr(name, pr.number)
        if hit is not None:
            return self._reject(name, pr, commit, Reason.BLOCKLISTED_PR, hit.detail)
        verdict: LicenseVerdict = judge.judge(base)
        if not verdict.allowed:
            return self._reject(name, pr, commit, Reason(verdict.reason), verdict.detail)
        try:
            # Most PRs are rejected by their file kinds alone: look at paths first, and pay for
            # the diff text only when the PR changes both source and tests.
            kinds = check_kinds(
                repo.diff(
                    base,
                    commit.sha,
                    detect_renames=self.config.mine.detect_renames,
                    patches=False,
                ),
                self.classifier,
            )
            if isinstance(kinds, SplitRejection):
                return self._reject(name, pr, commit, kinds.reason, kinds.detail)
            changes = repo.diff(
                base,
                commit.sha,
                context_lines=self.config.mine.context_lines,
                detect_renames=self.config.mine.detect_renames,
            )
        except SweForgeError as exc:
            return self._reject(name, pr, commit, Reason.DIFF_UNPARSEABLE, str(exc))
        split = split_changes(
            changes,
            self.classifier,
            max_files=self.config.mine.max_files_changed,
            max_lines=self.config.mine.max_lines_changed,
        )
        if isinstance(split, SplitRejection):
            return self._reject(name, pr, commit, split.reason, split.detail)
        statement = problem_statement(pr)
        hints = ""
        statement_source = "commit_message"
        linked: tuple[int, ...] = ()
        if self.github is not None:
            got = self.github.statement_for(name, pr.number, commit.message)
            if got is not None:
                statement, hints = got.problem_statement, got.hints_text
                statement_source, linked = got.source, got.linked_issues
        if len(statement.strip()) < self.config.mine.min_problem_statement_chars:
            return self._reject(
                name, pr, commit, Reason.EMPTY_PROBLEM_STATEMENT, "no title or body"
            )
        mismatch = verify_roundtrip(split, changes, repo.read_blob)
        if mismatch is not None:
            return self._reject(name, pr, commit, Reason.SPLIT_MISMATCH, mismatch)
        return self._candidate(
            repo,
            versions,
            tags,
            name,
            source,
            branch,
            pr,
            commit,
            split,
            verdict,
            statement,
            hints,
            statement_source,
            linked,
        )

    def _candidate(
        self,
        repo: GitRepository,
        versions: dict[str, str],
        tags: dict[str, str],
        name: str,
        source: RepoSource,
        branch: str,
        pr: PullRequest,
        commit: CommitInfo,
        split: Split,
        verdict: LicenseVerdict,
        statement: str,
        hints: str,
        statement_source: str,
        linked: tuple[int, ...],
    ) -> Candidate:
        base = commit.parents[0]
        return Candidate(
            instance_id=instance_id(name, pr.number),
            repo=name,
            base_commit=base,
            patch=split.patch,
            test_patch=split.test_patch,
            problem_statement=statement,
            hints_text=hints,
            created_at=commit.committed_at,
            version=project_version(repo, base, versions, tags),
            environment_setup_commit=base,
            license=verdict,
            provenance=Provenance(
                source=source.spec,
                pr_number=pr.number,
                merge_commit=commit.sha,
                merge_kind=pr.kind,
                default_branch=branch,
                problem_statement_source=statement_source,
                linked_issues=linked,
                tool_version=__version__,
                config_hash=self.config_hash,
                policy_hash=self.policy_hash,
            ),
            files=ChangedFiles(
                patch_files=split.source_files,
                test_files=split.test_files,
                lines_added=split.lines_added,
                lines_removed=split.lines_removed,
            ),
        )


def instance_id(repo: str, pr_number: int) -> str:
    """SWE-bench's instance id: ``owner__name-PR``."""
    return f"{repo.replace('/', '__')}-{pr_number}"


def project_version(
    repo: GitRepository, commit: str, cache: dict[str, str], tags: dict[str, str] | None = None
) -> str:
    """The project's ``major.minor`` at a commit from static metadata, else ``"0.0"``.

    SWE-bench groups environments by this. A ``version = "..."`` line in ``pyproject.toml``
    or ``setup.cfg`` is read with a regular expression (cheap on hot paths); dynamic versions
    (setuptools-scm) give ``"0.0"``.
    """
    found = ""
    for path in ("pyproject.toml", "setup.cfg"):
        got = repo.blob_at(commit, path)
        if got is None:
            continue
        blob_id, data = got
        if blob_id not in cache:
            m = _VERSION_LINE.search(data)
            v = _VERSION.match(m.group(1).decode("ascii", "replace")) if m else None
            cache[blob_id] = f"{v.group(1)}.{v.group(2) or '0'}" if v else ""
        found = cache[blob_id]
        if found:
            break
    if not found:
        # Dynamic versions (setuptools-scm and friends) come from tags: use the nearest one.
        key = f"tag:{commit}"
        if key not in cache:
            tag = tags.get(commit) if tags is not None else repo.nearest_tag(commit)
            v = _VERSION.match(tag.lstrip("vV")) if tag else None
            cache[key] = f"{v.group(1)}.{v.group(2) or '0'}" if v else ""
        found = cache[key]
    return found or "0.0"
