"""Audit a ``.git`` directory taken out of an image: exactly one commit, nothing else.

Read with libgit2 on the host: the image's own git (or anything else in it) is never trusted
to report on itself. Judged by ancestry and object counts, never by dates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pygit2

#: Files whose presence means state beyond a single scrubbed commit.
_FORBIDDEN_FILES = (
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "BISECT_LOG",
    "shallow",
    "objects/info/alternates",
    "objects/info/http-alternates",
)


@dataclass
class GitAudit:
    """What a ``.git`` directory holds."""

    refs: list[str] = field(default_factory=list)
    commits_reachable: int = 0
    objects_total: int = 0
    objects_reachable: int = 0
    head: str = ""
    tree: str = ""
    problems: list[str] = field(default_factory=list)


def audit_git_dir(git_dir: Path) -> GitAudit:
    """Check that ``git_dir`` holds one parentless commit, one branch, and nothing else."""
    out = GitAudit()
    if not git_dir.is_dir():
        out.problems.append("/testbed/.git is missing")
        return out
    try:
        repo = pygit2.Repository(str(git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError as exc:
        out.problems.append(f"/testbed/.git is not a repository: {exc}")
        return out
    for rel in _FORBIDDEN_FILES:
        if (git_dir / rel).exists():
            out.problems.append(f".git/{rel} exists")
    logs = git_dir / "logs"
    if logs.exists() and any(p.is_file() for p in logs.rglob("*")):
        out.problems.append(".git/logs holds reflogs")
    hooks = git_dir / "hooks"
    if hooks.exists() and any(hooks.iterdir()):
        out.problems.append(".git/hooks is not empty")
    config = (
        (git_dir / "config").read_text(errors="replace") if (git_dir / "config").exists() else ""
    )
    if "[remote" in config or "[submodule" in config or "[include" in config:
        out.problems.append(".git/config names a remote, submodule or include")
    if (git_dir / "modules").exists():
        out.problems.append(".git/modules holds submodule repositories")
    out.refs = sorted(repo.references)
    branches = [r for r in out.refs if r.startswith("refs/heads/")]
    others = [r for r in out.refs if not r.startswith("refs/heads/")]
    if len(branches) != 1:
        out.problems.append(f"expected one branch, found {len(branches)}: {branches}")
    if others:
        out.problems.append(f"refs other than the branch: {others}")
    packed = git_dir / "packed-refs"
    if packed.exists() and packed.read_text(errors="replace").strip():
        lines = [
            ln
            for ln in packed.read_text(errors="replace").splitlines()
            if ln and not ln.startswith("#")
        ]
        if lines:
            out.problems.append(f"packed-refs lists {len(lines)} ref(s)")
    # Every commit reachable from any ref (and HEAD).
    tips: set[pygit2.Oid] = set()
    for name in out.refs:
        try:
            tips.add(repo.references[name].peel(pygit2.Commit).id)
        except (pygit2.GitError, ValueError, KeyError):
            out.problems.append(f"ref {name} does not point to a commit")
    try:
        head = repo.head.peel(pygit2.Commit)
        tips.add(head.id)
        out.head = str(head.id)
        out.tree = str(head.tree_id)
    except (pygit2.GitError, ValueError, KeyError):
        out.problems.append("HEAD does not point to a commit")
    commits: set[pygit2.Oid] = set()
    for tip in tips:
        for c in repo.walk(tip, pygit2.enums.SortMode.NONE):
            commits.add(c.id)
            if c.parent_ids:
                # The walk itself would fail on a missing parent; a present one is a leak.
                pass
    out.commits_reachable = len(commits)
    if len(commits) != 1:
        out.problems.append(f"{len(commits)} commits are reachable (expected 1)")
    reachable: set[pygit2.Oid] = set(commits)
    for cid in commits:
        commit = repo[cid]
        assert isinstance(commit, pygit2.Commit)
        if commit.parent_ids:
            out.problems.append(f"commit {cid} has parents")
        _collect_tree(repo, commit.tree, reachable)
    all_objects = set(repo.odb)
    out.objects_total = len(all_objects)
    out.objects_reachable = len(reachable & all_objects)
    extra = all_objects - reachable
    if extra:
        out.problems.append(f"{len(extra)} unreachable object(s) in the database")
    return out


def _collect_tree(repo: pygit2.Repository, tree: pygit2.Tree, seen: set[pygit2.Oid]) -> None:
    if tree.id in seen:
        return
    seen.add(tree.id)
    for entry in tree:
        if entry.filemode == 0o160000:  # a gitlink names a commit elsewhere, not an object here
            continue
        if entry.type_str == "tree":
            sub = repo[entry.id]
            assert isinstance(sub, pygit2.Tree)
            _collect_tree(repo, sub, seen)
        else:
            seen.add(entry.id)
