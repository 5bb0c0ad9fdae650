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
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from multiprocessing import get_context
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
from swe_forge.mining.prs import PullRequest, changed_by_cleaning, parse_pr, problem_statement
from swe_forge.mining.sample import Sample, take_sample
from swe_forge.mining.sources import RepoSource, materialize, repo_name_from_url
from swe_forge.mining.split import (
    Split,
    SplitRejection,
    check_kinds,
    split_changes,
    verify_roundtrip,
)
from swe_forge.mining.statement import assess_statement
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
    #: Keep a per-repository sample of the candidates (``--sample``); None keeps them all.
    sample: Sample | None = None


@dataclass
class RepoStats:
    """What mining one repository found; summed into the run's summary."""

    repo: str
    source: str
    commits_scanned: int = 0
    prs_found: int = 0
    candidates: int = 0
    #: Candidates mined but left out by ``--sample``.
    not_sampled: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    #: Why the history gave no candidate at all, when nothing else says it.
    note: str | None = None
    exception: SweForgeError | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """Plain data for the JSON summary."""
        return {
            "repo": self.repo,
            "source": self.source,
            "commits_scanned": self.commits_scanned,
            "prs_found": self.prs_found,
            "candidates": self.candidates,
            "not_sampled": self.not_sampled,
            "rejected": dict(sorted(self.rejections.items())),
            "error": self.error,
            "note": self.note,
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
        self._pool: ProcessPoolExecutor | None = None
        self._pool_tried = False

    def close(self) -> None:
        """Stop the worker processes (if any were started); the miner can still be used."""
        pool, self._pool, self._pool_tried = self._pool, None, False
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Miner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_workers(self, jobs: int) -> bool:
        """Fork the worker processes now (``jobs`` of them), while the caller knows that no
        other thread exists; later :meth:`mine` calls use them whatever their ``jobs``.
        Returns whether there are workers (not for ``jobs`` <= 1, nor with other threads)."""
        return self._workers(jobs) is not None

    def _workers(self, jobs: int) -> ProcessPoolExecutor | None:
        """The worker processes, forked on first use; None to build in this process.

        They are forked once per miner, before the first progress bar, so that no other
        Python thread of this process (a bar's refresh thread, a fetch thread) exists at the
        fork: a fork copies locks another thread may hold at that instant, and a worker would
        hang on them. When other threads are alive already there are no workers (a caller
        that wants them starts them first: :meth:`start_workers`). askalono's native threads,
        once it has run, are idle pool threads that hold nothing a worker takes (workers read
        git objects and diff; they never identify licences), and malloc is fork-safe.
        """
        if self._pool_tried:
            return self._pool
        self._pool_tried = True
        if jobs <= 1 or threading.active_count() > 1:
            return None
        pool = ProcessPoolExecutor(
            jobs,
            mp_context=get_context("fork"),
            initializer=_worker_init,
            initargs=(self, os.getpid()),
        )
        try:
            # With fork, the first submission starts every worker (from this thread, now).
            pool.submit(os.getpid).result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        self._pool = pool
        return pool

    # ------------------------------------------------------------------ one repository
    def mine(
        self, source: RepoSource, options: MineOptions, budget: int | None = None
    ) -> tuple[list[Candidate], list[Rejection], RepoStats]:
        """Mine one repository. Repository-level failures come back in ``stats.error``.

        ``budget`` caps the number of candidates (for ``--max-candidates`` across repos).
        """
        stats = RepoStats(repo=source.name or source.spec, source=source.spec)
        try:
            label = source.name or source.spec
            path = materialize(
                source,
                offline=options.offline,
                progress=lambda line: self.reporter.note(f"{label}: {line}"),
            )
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
        # A sample is taken from every candidate of the history: the budget applies after it.
        walk_budget = None if options.sample is not None else budget
        candidates, rejections = self._walk(
            repo, name, source, branch, head, options, stats, walk_budget
        )
        if options.sample is not None:
            kept = take_sample(candidates, options.sample)
            if budget is not None and len(kept) > budget:
                newest_first = sorted(
                    kept, key=lambda c: (c.created_at, c.provenance.pr_number), reverse=True
                )
                chosen = {id(c) for c in newest_first[:budget]}
                kept = [c for c in kept if id(c) in chosen]
            stats.not_sampled = len(candidates) - len(kept)
            stats.candidates = len(kept)
            candidates = kept
        if stats.prs_found == 0:
            stats.note = _no_pr_note(stats.commits_scanned, branch, options)
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
        job = _RepoJob(path=repo.path, name=name, source=source, branch=branch)
        # (sha, tree) of the chain only: messages are read as the walk streams, so a history
        # of huge commit messages is never all in memory.
        chain = repo.first_parent_chain(head)
        tags = repo.first_parent_tags([sha for sha, _tree in chain])
        versions: dict[str, str] = {}
        candidates: list[Candidate] = []
        rejections: list[Rejection] = []
        # PR number -> the reason its newer commit was rejected ("" for a candidate).
        seen_prs: dict[int, str] = {}
        # Every PR gets a slot, in walk order. The checks that need the walk's state (the
        # licence at the base) run here; the expensive rest (file kinds, diff text, split,
        # proof) runs in worker processes when there are any. Results are recorded strictly
        # in walk order, and everything that depends on earlier PRs (duplicate numbers, the
        # --max-candidates cut) is decided then: the output is the same for any --jobs.
        slots: deque[_Slot] = deque()
        batch: list[tuple[_Slot, LicenseVerdict]] = []
        inflight: deque[tuple[Future[list[_Built]], list[_Slot]]] = deque()
        scanned = prs = 0

        def submit(pool: ProcessPoolExecutor | None) -> None:
            if not batch:
                return
            items = [(slot.pr, slot.commit, verdict) for slot, verdict in batch]
            chunk = [slot for slot, _verdict in batch]
            batch.clear()
            if pool is None:
                for slot, made in zip(chunk, self._build_items(job, repo, items), strict=True):
                    slot.result = made
            else:
                inflight.append((pool.submit(_build_chunk, job, items), chunk))

        def collect(block: bool, window: int) -> None:
            # A bounded number of chunks in flight (memory); finished ones are picked up.
            while inflight and (block or inflight[0][0].done() or len(inflight) > window):
                future, chunk = inflight.popleft()
                try:
                    built = future.result()
                except BrokenProcessPool as exc:
                    self.close()
                    raise SweForgeError(
                        f"a mining worker process died while building PRs of {name}",
                        hint="it may have run out of memory; run again with fewer --jobs "
                        "(--jobs 1 builds in the main process and shows any error)",
                    ) from exc
                for slot, made in zip(chunk, built, strict=True):
                    slot.result = made

        def emit() -> bool:
            """Record finished slots in walk order; True once the budget is spent."""
            while slots and slots[0].result is not None:
                slot = slots.popleft()
                pr, commit = slot.pr, slot.commit
                stats.commits_scanned, stats.prs_found = slot.scanned, slot.prs
                # A number seen on a newer commit is a reused number (a project that moved)
                # or a re-merge; the newest commit wins, unless it changed nothing.
                if seen_prs.get(pr.number, Reason.EMPTY_DIFF.value) != Reason.EMPTY_DIFF.value:
                    made: Candidate | Rejection = self._reject(
                        name, pr, commit, Reason.DUPLICATE_PR, "PR number seen on a newer commit"
                    )
                else:
                    got = slot.result
                    if isinstance(got, _Failed):
                        raise got.error
                    assert got is not None
                    made = got
                    seen_prs[pr.number] = "" if isinstance(made, Candidate) else made.reason
                if isinstance(made, Candidate):
                    base = made.base_commit
                    made = replace(made, version=project_version(repo, base, versions, tags))
                    candidates.append(made)
                    stats.candidates += 1
                    if budget is not None and len(candidates) >= budget:
                        return True
                else:
                    rejections.append(made)
                    stats.rejections[made.reason] += 1
            return False

        done = False
        try:
            jobs = self._jobs(options)
            pool = self._workers(jobs)
            window = 4 * jobs if pool is not None else 1
            self.reporter.start(name, len(chain))
            for index, commit in enumerate(repo.first_parent_history(head)):
                self.reporter.advance()
                scanned += 1
                if not self._in_window(commit, options):
                    continue
                pr = parse_pr(commit.message, len(commit.parents))
                if pr is None:
                    continue
                prs += 1
                slot = _Slot(scanned, prs, pr, commit)
                slots.append(slot)
                # On the first-parent chain the next commit is this one's base.
                following = chain[index + 1] if index + 1 < len(chain) else None
                base_tree = (
                    following[1]
                    if following is not None and following[0] == commit.parents[0]
                    else None
                )
                screened = self._screen(repo, judge, name, pr, commit, base_tree)
                if isinstance(screened, Rejection):
                    slot.result = screened
                else:
                    batch.append((slot, screened))
                    if pool is None or len(batch) >= BUILD_CHUNK:
                        submit(pool)
                collect(block=False, window=window)
                if emit():
                    done = True
                    break
            if not done:
                submit(pool)
                collect(block=True, window=window)
                if not emit():
                    stats.commits_scanned, stats.prs_found = scanned, prs
        finally:
            for future, _chunk in inflight:
                # Past the --max-candidates cut, or on an error: the results are not needed.
                future.cancel()
            self.reporter.finish()
            self.identity_cache.save()
        # The documented output order (README, "Output order"): by PR number, which does not
        # depend on how history was merged or walked.
        candidates.sort(key=lambda c: c.provenance.pr_number)
        rejections.sort(key=lambda r: (r.pr_number or 0, r.commit or ""))
        return candidates, rejections

    def _jobs(self, options: MineOptions) -> int:
        # The GitHub client keeps rate-limit state and a session: statements are fetched from
        # this process, one PR at a time.
        if self.github is not None:
            return 1
        jobs = options.jobs if options.jobs is not None else self.config.mine.jobs
        if jobs > 0:
            return jobs
        # The CPUs this process may run on (a container's or taskset's share), at most 8.
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(cpus or 1, 8))

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
            if (base_tree or repo.commit(base).tree) == commit.tree:
                # Decided here, not in a worker: whether a PR number's newer commit changed
                # anything decides how an older commit with that number is treated.
                return self._reject(name, pr, commit, Reason.EMPTY_DIFF, "the PR changes no files")
        except SweForgeError as exc:
            return self._reject(name, pr, commit, Reason.DIFF_UNPARSEABLE, str(exc))
        return verdict

    def _build_items(
        self,
        job: _RepoJob,
        repo: GitRepository,
        items: list[tuple[PullRequest, CommitInfo, LicenseVerdict]],
    ) -> list[_Built]:
        """Build a chunk of PRs. An error stays with its PR: it is raised when the walk
        reaches that PR, as it would be without workers (not if --max-candidates stops the
        walk before it)."""
        out: list[_Built] = []
        for pr, commit, verdict in items:
            try:
                out.append(self._build(job, repo, pr, commit, verdict))
            except Exception as exc:  # re-raised in walk order by the caller
                out.append(_Failed(exc))
        return out

    def _build(
        self,
        job: _RepoJob,
        repo: GitRepository,
        pr: PullRequest,
        commit: CommitInfo,
        verdict: LicenseVerdict,
    ) -> Candidate | Rejection:
        """The expensive part, for a PR that passed :meth:`_screen`: file kinds, diff text,
        split, the statement and the round-trip proof. Runs in a worker process when there
        are workers. The candidate's ``version`` is filled in by the walk."""
        name = job.name
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
        cleaned = changed_by_cleaning(f"{pr.title}\n\n{pr.body}", statement)
        hints = ""
        statement_source = "commit_message"
        linked: tuple[int, ...] = ()
        if self.github is not None:
            got = self.github.statement_for(name, pr.number, commit.message)
            if got is not None:
                statement, hints = got.problem_statement, got.hints_text
                statement_source, linked = got.source, got.linked_issues
                cleaned = got.cleaned
        if len(statement.strip()) < self.config.mine.min_problem_statement_chars:
            return self._reject(
                name, pr, commit, Reason.EMPTY_PROBLEM_STATEMENT, "no title or body"
            )
        mismatch = verify_roundtrip(split, changes, repo.read_blob)
        if mismatch is not None:
            return self._reject(name, pr, commit, Reason.SPLIT_MISMATCH, mismatch)
        quality = assess_statement(
            statement,
            test_patch=split.test_patch,
            patch=split.patch,
            thin_words=self.config.mine.thin_statement_words,
            cleaned=cleaned,
        )
        return replace(
            self._candidate(
                name,
                job.source,
                job.branch,
                pr,
                commit,
                split,
                verdict,
                statement,
                hints,
                statement_source,
                linked,
            ),
            statement_quality=quality,
        )

    def _candidate(
        self,
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
            version="",
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


def _no_pr_note(scanned: int, branch: str, options: MineOptions) -> str:
    """Why a history gave no pull request: what mine looked at and what it recognises."""
    window = ""
    if options.since is not None or options.until is not None:
        window = " merged in the --since/--until window"
    return (
        f"no merged pull request{window} among {scanned} first-parent commit(s) of {branch}: "
        "mine recognises merge commits of a pull request ('Merge pull request #N from ...', "
        "GitLab's 'See merge request ...!N', bors' 'Auto merge of #N'), and squash merges whose "
        "subject ends with '(#N)'; a history of direct commits has none (try --branch if the "
        "project merges elsewhere)"
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
#: the workers stay busy and --max-candidates does not build much it then throws away.
BUILD_CHUNK = 8


@dataclass(frozen=True)
class _RepoJob:
    """Which repository a chunk of PRs belongs to (sent with every chunk; small)."""

    path: Path
    name: str
    source: RepoSource
    branch: str


@dataclass(frozen=True)
class _Failed:
    """An error raised while building one PR, kept until the walk reaches that PR."""

    error: Exception


_Built = Candidate | Rejection | _Failed


@dataclass
class _Slot:
    """One PR's place in walk order, with the walk's counters when it was reached."""

    scanned: int
    prs: int
    pr: PullRequest
    commit: CommitInfo
    result: _Built | None = None


# In a worker process: the miner (inherited at the fork) and the repository last opened.
_WORKER_MINER: Miner | None = None
_WORKER_REPO: tuple[Path, GitRepository] | None = None


def _worker_init(miner: Miner, parent: int) -> None:
    global _WORKER_MINER
    # A worker must not outlive its parent (a batch job killed with SIGKILL): Linux kills it
    # when the thread that forked it (the parent's main thread) dies, and a parent already
    # gone is checked after.
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)
    # Ctrl-C is the parent's to handle; a worker that took it too would print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_MINER = miner


def _build_chunk(
    job: _RepoJob, items: list[tuple[PullRequest, CommitInfo, LicenseVerdict]]
) -> list[_Built]:
    """Worker entry point: build a chunk of one repository's PRs."""
    global _WORKER_REPO
    if _WORKER_MINER is None:  # pragma: no cover - workers always start with a miner
        raise RuntimeError("mining worker started without a miner")
    if _WORKER_REPO is None or _WORKER_REPO[0] != job.path:
        # The parent's handle is not used: each process opens its own.
        _WORKER_REPO = (job.path, GitRepository(job.path))
    return _WORKER_MINER._build_items(job, _WORKER_REPO[1], items)
