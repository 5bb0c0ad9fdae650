"""The mining stage: merged PRs of one repository -> candidates and rejections.

For each repository: resolve its name and default branch; check the blocklist (by name and by
root commit); walk the first-parent history of the default branch; for every commit that is a
merged PR, judge the licence at the base commit (the first parent), diff base..merge, classify
and split, check the caps and the statement, and prove the split round-trips.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import signal
import sys
import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import get_context
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge import __version__
from swe_forge.config import Config
from swe_forge.errors import SweForgeError
from swe_forge.git.repo import CommitInfo, GitRepository
from swe_forge.mining.blocklist import Blocklist
from swe_forge.mining.classify import PathClassifier
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

if TYPE_CHECKING:
    # Imported only when --github is used (it pulls in an HTTP stack).
    from swe_forge.mining.github import GitHubClient

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
    #: Worker processes for building candidates; None takes ``mine.jobs`` from the config.
    jobs: int | None = None


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
        # One walk serves the progress total, the tags and the loop (walks are cheap, but a
        # repeated one shows on large histories).
        history = list(repo.first_parent_history(head))
        ctx = _BuildContext(
            miner=self,
            path=repo.path,
            name=name,
            source=source,
            branch=branch,
            tags=repo.first_parent_tags([c.sha for c in history]),
            repo=repo,
        )
        jobs = self._jobs(options)
        candidates: list[Candidate] = []
        rejections: list[Rejection] = []
        # PR number -> the reason its newer commit was rejected ("" once it went on to be built).
        seen_prs: dict[int, str] = {}
        # Results in walk order. Screening (licence, file kinds) happens here as the history is
        # walked; building (diff text, split, proof) happens in worker processes when jobs > 1.
        # Results are taken strictly in walk order, so the output, and where --max-candidates
        # cuts it, is the same for any number of jobs.
        slots: deque[_Slot] = deque()
        batch: list[tuple[_Slot, PullRequest, CommitInfo, LicenseVerdict]] = []
        inflight: deque[tuple[AsyncResult[list[Candidate | Rejection]], list[_Slot]]] = deque()
        pool = _start_pool(ctx, jobs) if jobs > 1 else None
        jobs = jobs if pool is not None else 1
        scanned = prs = 0
        done = False

        def submit() -> None:
            items = [(pr, commit, verdict) for _slot, pr, commit, verdict in batch]
            chunk = [slot for slot, *_ in batch]
            batch.clear()
            if pool is None:
                for slot, made in zip(chunk, _build_items(ctx, items), strict=True):
                    slot.result = made
            else:
                inflight.append((pool.apply_async(_build_chunk, (items,)), chunk))

        def collect(block: bool) -> None:
            # Keep a bounded number of chunks in flight (memory) and pick up finished ones.
            while inflight and (block or inflight[0][0].ready() or len(inflight) > 4 * jobs):
                result, chunk = inflight.popleft()
                for slot, made in zip(chunk, result.get(), strict=True):
                    slot.result = made

        def emit() -> bool:
            """Record finished results in walk order; True once the budget is spent."""
            while slots and slots[0].result is not None:
                slot = slots.popleft()
                made = slot.result
                stats.commits_scanned, stats.prs_found = slot.scanned, slot.prs
                if isinstance(made, Candidate):
                    candidates.append(made)
                    stats.candidates += 1
                    if budget is not None and len(candidates) >= budget:
                        return True
                else:
                    assert made is not None
                    rejections.append(made)
                    stats.rejections[made.reason] += 1
            return False

        self.reporter.start(name, len(history))
        try:
            for index, commit in enumerate(history):
                self.reporter.advance()
                scanned += 1
                if not self._in_window(commit, options):
                    continue
                pr = parse_pr(commit.message, len(commit.parents))
                if pr is None:
                    continue
                prs += 1
                slot = _Slot(scanned, prs)
                slots.append(slot)
                # A number seen on a newer commit is a reused number (a project that moved)
                # or a re-merge; the newest commit wins, unless it changed nothing.
                if seen_prs.get(pr.number, Reason.EMPTY_DIFF.value) != Reason.EMPTY_DIFF.value:
                    slot.result = self._reject(
                        name, pr, commit, Reason.DUPLICATE_PR, "PR number seen on a newer commit"
                    )
                else:
                    # On the first-parent chain the next commit is this one's base.
                    following = history[index + 1] if index + 1 < len(history) else None
                    base_tree = (
                        following.tree
                        if following is not None and following.sha == commit.parents[0]
                        else None
                    )
                    screened = self._screen(repo, judge, name, pr, commit, base_tree)
                    if isinstance(screened, Rejection):
                        seen_prs[pr.number] = screened.reason
                        slot.result = screened
                    else:
                        seen_prs[pr.number] = ""
                        batch.append((slot, pr, commit, screened))
                        if pool is None or len(batch) >= BUILD_CHUNK:
                            submit()
                collect(block=False)
                if emit():
                    done = True
                    break
            if not done:
                if batch:
                    submit()
                collect(block=True)
                if not emit():
                    stats.commits_scanned, stats.prs_found = scanned, prs
        finally:
            if pool is not None:
                _stop_pool(pool)
            self.reporter.finish()
            self.identity_cache.save()
        candidates.sort(key=lambda c: c.provenance.pr_number)
        rejections.sort(key=lambda r: (r.pr_number or 0, r.commit or ""))
        return candidates, rejections

    def _jobs(self, options: MineOptions) -> int:
        # The GitHub client keeps rate-limit state and a session: statements are fetched from
        # this process, one PR at a time.
        if self.github is not None:
            return 1
        jobs = options.jobs if options.jobs is not None else self.config.mine.jobs
        return jobs if jobs > 0 else max(1, min(os.cpu_count() or 1, 8))

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

    def _screen(
        self,
        repo: GitRepository,
        judge: LicenseJudge,
        name: str,
        pr: PullRequest,
        commit: CommitInfo,
        base_tree: str | None,
    ) -> LicenseVerdict | Rejection:
        """The checks made in walk order: blocklisted PR, licence, an empty diff.

        Returns the licence verdict of a PR worth building, else its rejection.
        """
        base = commit.parents[0]
        hit = self.blocklist.match_pr(name, pr.number)
        if hit is not None:
            return self._reject(name, pr, commit, Reason.BLOCKLISTED_PR, hit.detail)
        verdict: LicenseVerdict = judge.judge(base)
        if not verdict.allowed:
            return self._reject(name, pr, commit, Reason(verdict.reason), verdict.detail)
        try:
            if (base_tree or repo.tree_of(base)) == commit.tree:
                # Decided here, not in a worker: whether a PR number's newer commit changed
                # anything decides how an older commit with that number is treated.
                return self._reject(name, pr, commit, Reason.EMPTY_DIFF, "the PR changes no files")
        except SweForgeError as exc:
            return self._reject(name, pr, commit, Reason.DIFF_UNPARSEABLE, str(exc))
        return verdict

    def _build(
        self,
        ctx: _BuildContext,
        pr: PullRequest,
        commit: CommitInfo,
        verdict: LicenseVerdict,
    ) -> Candidate | Rejection:
        """The expensive part, for a PR that passed :meth:`_screen`: file kinds, diff text,
        split, the statement and the round-trip proof. Runs in a worker process when jobs > 1."""
        repo = ctx.open()
        name = ctx.name
        base = commit.parents[0]
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
            ctx.versions,
            ctx.tags,
            name,
            ctx.source,
            ctx.branch,
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


#: PRs handed to a worker at a time: large enough to amortise the hand-over, small enough that
#: both workers stay busy and --max-candidates does not build much it then throws away.
BUILD_CHUNK = 8


@dataclass
class _Slot:
    """One PR's place in walk order, with the walk's counters when it was reached."""

    scanned: int
    prs: int
    result: Candidate | Rejection | None = None


@dataclass
class _BuildContext:
    """What building a candidate needs besides the PR itself (inherited by forked workers)."""

    miner: Miner
    path: Path
    name: str
    source: RepoSource
    branch: str
    tags: dict[str, str]
    repo: GitRepository | None = None
    versions: dict[str, str] = field(default_factory=dict)

    def open(self) -> GitRepository:
        """This process's handle on the repository (a worker opens its own)."""
        if self.repo is None:
            self.repo = GitRepository(self.path)
        return self.repo


# The context of the repository being mined, in a worker process (set by its initializer).
_CONTEXT: _BuildContext | None = None


def _worker_init(ctx: _BuildContext, parent: int) -> None:
    global _CONTEXT
    # A worker must not outlive its parent (a batch job killed with SIGKILL): Linux kills it
    # when the parent dies (PR_SET_PDEATHSIG), and a parent already gone is checked after.
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(0)
    # Ctrl-C is the parent's to handle (it terminates the pool); a worker that took it too
    # would print its own traceback. The parent's repository handle is not shared.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctx.repo = None
    _CONTEXT = ctx


def _start_pool(ctx: _BuildContext, jobs: int) -> Pool | None:
    """Fork ``jobs`` workers that inherit ``ctx`` (passed at fork, never pickled).

    Returns None (build in this process) when other threads are alive: a fork copies locks
    that another thread may hold at that instant, libgit2's global ones included, and a worker
    would hang on them. That is the case under ``swe-forge run``, which already mines several
    repositories at once on threads; the progress bar is started only after this call.
    """
    if threading.active_count() > 1:
        return None
    return get_context("fork").Pool(jobs, initializer=_worker_init, initargs=(ctx, os.getpid()))


def _stop_pool(pool: Pool) -> None:
    pool.terminate()
    pool.join()


def _build_items(
    ctx: _BuildContext, items: list[tuple[PullRequest, CommitInfo, LicenseVerdict]]
) -> list[Candidate | Rejection]:
    return [ctx.miner._build(ctx, pr, commit, verdict) for pr, commit, verdict in items]


def _build_chunk(
    items: list[tuple[PullRequest, CommitInfo, LicenseVerdict]],
) -> list[Candidate | Rejection]:
    """Worker entry point: build a chunk of PRs with the inherited context."""
    if _CONTEXT is None:  # pragma: no cover - the pool is only started with a context
        raise RuntimeError("mining worker started without a context")
    return _build_items(_CONTEXT, items)
