"""Decontamination: keep repositories and PRs of public benchmarks out of our tasks.

``blocklists/`` holds YAML files:

- ``benchmark_repos.yaml``: ``benchmarks: {name: {kind, source, confidence, repos: [owner/name]}}``
  where ``kind`` is ``evaluation`` (the default) or ``training``;
- ``root_commits.yaml``: ``roots: {owner/name: [sha, ...]}``: the parentless commits of blocked
  repositories, so a fork or a renamed copy is caught whatever it is called;
- ``prs.yaml`` (optional): ``prs: {owner/name: [pr numbers]}`` for single PRs.

``kinds`` selects which benchmarks count, and it selects for both ways of matching: a root
commit takes the kinds of the benchmarks that list its repository, so a training set's roots
do not block when only evaluation sets are asked for. A root whose repository no benchmark
lists has no known kind and blocks whatever ``kinds`` says (the safe side: nobody can tell
which set it came from).

Names are compared case-insensitively, with a trailing ``.git`` ignored.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from swe_forge.config import load_yaml
from swe_forge.errors import ConfigError


def normalize_repo(name: str) -> str:
    """``Owner/Name.git`` -> ``owner/name``."""
    name = name.strip().strip("/").lower()
    return name.removesuffix(".git")


@dataclass(frozen=True)
class BlockMatch:
    """Why a repository or PR is blocked."""

    reason: str  # "name" | "root_commit" | "pr"
    detail: str


@dataclass
class Blocklist:
    """Blocked repositories (by name and root commit) and blocked (repository, PR) pairs."""

    repos: dict[str, list[str]] = field(default_factory=dict)  # repo -> benchmarks
    roots: dict[str, list[str]] = field(default_factory=dict)  # root sha -> repos (sorted)
    prs: dict[str, frozenset[int]] = field(default_factory=dict)
    digest: str = ""

    @classmethod
    def load(cls, directory: Path, kinds: tuple[str, ...] | None = None) -> Blocklist:
        """Read every list in ``directory``; a missing directory is an empty blocklist.

        ``kinds`` limits which benchmarks count (``evaluation``, ``training``), for names and
        root commits alike; None means all.
        """
        out = cls()
        # Roots are resolved after every file is read: the benchmark that gives a root's
        # repository its kind may live in another file.
        root_entries: list[tuple[str, str]] = []
        listed_kinds: dict[str, set[str]] = {}
        h = hashlib.sha256(repr(sorted(kinds) if kinds is not None else None).encode())
        if not directory.is_dir():
            out.digest = h.hexdigest()
            return out
        for path in sorted(directory.glob("*.yaml")):
            raw = path.read_bytes()
            h.update(path.name.encode() + b"\0" + raw)
            try:
                data = load_yaml(raw) or {}
            except yaml.YAMLError as exc:
                raise ConfigError(f"blocklist {path} is not valid YAML: {exc}") from exc
            if not isinstance(data, dict):
                raise ConfigError(f"blocklist {path} must be a mapping")
            for bench, spec in (data.get("benchmarks") or {}).items():
                kind = str((spec or {}).get("kind", "evaluation"))
                for repo in (spec or {}).get("repos") or []:
                    key = normalize_repo(str(repo))
                    listed_kinds.setdefault(key, set()).add(kind)
                    if kinds is None or kind in kinds:
                        out.repos.setdefault(key, []).append(str(bench))
            for repo, shas in (data.get("roots") or {}).items():
                for sha in shas or []:
                    root_entries.append((str(sha).lower(), normalize_repo(str(repo))))
            for repo, numbers in (data.get("prs") or {}).items():
                key = normalize_repo(str(repo))
                out.prs[key] = out.prs.get(key, frozenset()) | frozenset(
                    int(n) for n in numbers or []
                )
        for sha, repo in root_entries:
            known = listed_kinds.get(repo)
            if kinds is not None and known is not None and not known & set(kinds):
                continue
            hits = out.roots.setdefault(sha, [])
            if repo not in hits:
                hits.append(repo)
                hits.sort()
        out.digest = h.hexdigest()
        return out

    def match_repo(self, name: str, root_commits: tuple[str, ...] = ()) -> BlockMatch | None:
        """Is this repository blocked, by name or by one of its root commits?"""
        key = normalize_repo(name)
        if key in self.repos:
            return BlockMatch("name", f"{key} is in {', '.join(sorted(set(self.repos[key])))}")
        for sha in root_commits:
            hits = self.roots.get(sha.lower())
            if hits:
                return BlockMatch(
                    "root_commit", f"root commit {sha[:12]} is the root of {', '.join(hits)}"
                )
        return None

    def match_pr(self, name: str, pr_number: int) -> BlockMatch | None:
        """Is this single PR blocked?"""
        if pr_number in self.prs.get(normalize_repo(name), frozenset()):
            return BlockMatch("pr", f"{normalize_repo(name)}#{pr_number} is blocklisted")
        return None
