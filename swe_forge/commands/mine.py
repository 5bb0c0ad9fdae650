"""``swe-forge mine``: repositories -> candidates.jsonl (+ rejected.jsonl)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from swe_forge import __version__
from swe_forge.config import Config
from swe_forge.errors import InputError
from swe_forge.jsonl import AtomicWriter
from swe_forge.mining.miner import MineOptions, Miner, RepoStats
from swe_forge.mining.sources import check_repo_name, expand_sources
from swe_forge.progress import NullReporter, Reporter


@dataclass
class MineResult:
    """The outcome of a mine run, for the summary and the exit code."""

    output: Path
    rejected_output: Path | None
    repos: list[RepoStats] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def candidates(self) -> int:
        """Candidates written."""
        return sum(r.candidates for r in self.repos)

    @property
    def failed(self) -> list[RepoStats]:
        """Repositories that could not be mined at all."""
        return [r for r in self.repos if r.error]

    def summary(self) -> dict[str, Any]:
        """The ``--json`` summary: totals, rejections by reason, per repository."""
        reasons: Counter[str] = Counter()
        for r in self.repos:
            reasons.update(r.rejections)
        return {
            "schema_version": 1,
            "tool_version": __version__,
            "output": str(self.output),
            "rejected_output": str(self.rejected_output) if self.rejected_output else None,
            "repos": len(self.repos),
            "repos_failed": len(self.failed),
            "commits_scanned": sum(r.commits_scanned for r in self.repos),
            "prs_found": sum(r.prs_found for r in self.repos),
            "candidates": self.candidates,
            "not_sampled": sum(r.not_sampled for r in self.repos),
            "rejected": dict(sorted(reasons.items())),
            "seconds": round(self.seconds, 3),
            "per_repo": [r.to_dict() for r in self.repos],
        }


def run_mine(
    sources: list[str],
    output: Path,
    *,
    config: Config,
    options: MineOptions,
    rejected: Path | None = None,
    github: bool = False,
    reporter: Reporter | None = None,
    name: str | None = None,
) -> MineResult:
    """Mine every source; write candidates (and rejections) atomically.

    A repository that cannot be mined (missing, not a repository, unreachable) is reported in
    the result and the others are still mined; the caller turns that into an exit code.

    ``name`` (``--name``) is the ``owner/name`` to record for a single source (a local path is
    otherwise named from its ``origin`` remote, or ``local/<folder>``).

    Raises:
        InputError: a source path does not exist (checked for all before any work starts), or
            ``name`` is not ``owner/name`` or is given with several sources.
    """
    started = time.perf_counter()
    repos = expand_sources(sources)
    if name is not None:
        if len(repos) != 1:
            raise InputError(
                f"--name {name} names one repository, but {len(repos)} sources were given",
                hint="give --name with a single source, or name each repository in a list file "
                "('PATH owner/name' per line)",
            )
        repos = [replace(repos[0], name=check_repo_name(name))]
    reporter = reporter or NullReporter()
    client = None
    if github:
        from swe_forge.mining.github import GitHubClient

        client = GitHubClient(config.github)
    miner = Miner(config, github=client, reporter=reporter)
    result = MineResult(output=output, rejected_output=rejected)
    out = AtomicWriter(output)
    rej = AtomicWriter(rejected) if rejected else None
    try:
        budget = options.max_candidates
        for source in repos:
            if budget is not None and budget <= 0:
                break
            candidates, rejections, stats = miner.mine(source, options, budget)
            result.repos.append(stats)
            if stats.error:
                reporter.note(f"{stats.repo}: {stats.error}")
            elif stats.note:
                reporter.note(f"{stats.repo}: {stats.note}")
            for cand in candidates:
                out.write(cand.to_json())
            if rej is not None:
                for r in rejections:
                    rej.write(r.to_json())
            if budget is not None:
                budget -= len(candidates)
    except BaseException:
        out.abort()
        if rej is not None:
            rej.abort()
        raise
    finally:
        miner.close()
    out.commit()
    if rej is not None:
        rej.commit()
    result.seconds = time.perf_counter() - started
    return result
