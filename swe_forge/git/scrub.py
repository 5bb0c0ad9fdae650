"""Write a commit's tree as a fresh repository holding exactly one commit.

The task image must not hand the agent the future: no other commits, branches, tags,
reflogs, stashes, notes, remotes, hooks, ``ORIG_HEAD``/``FETCH_HEAD``, packs or unreachable
objects. Rather than cleaning a clone (and trusting that nothing was missed), the work tree is
written file by file from the base commit's tree, and a new repository is made from the same
blobs with libgit2: one parentless commit with a fixed author and date, one branch. The new
commit's tree id equals the base commit's tree id, which proves the content is unchanged.
No git filter, attribute or hook of the mined repository is ever run.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pygit2

from swe_forge.errors import GitError
from swe_forge.git.repo import MODE_SUBMODULE, MODE_SYMLINK, GitRepository

#: The identity and time of every scrubbed commit (a fixed date: dates are not evidence).
SCRUB_NAME = "swe-forge"
SCRUB_EMAIL = "swe-forge@localhost"
SCRUB_TIME = 946684800  # 2000-01-01T00:00:00Z
SCRUB_MESSAGE = "swe-forge base\n"
_BAD_NAMES = {"", ".", "..", ".git"}


@dataclass(frozen=True)
class ScrubResult:
    """The scrubbed repository: its one commit, its tree, and the work tree's size."""

    commit: str
    tree: str
    files: int
    bytes: int


def _safe_name(name: str) -> str:
    if name.lower() in _BAD_NAMES or "/" in name or "\\" in name or "\x00" in name:
        raise GitError(f"refusing to write a tree entry named {name!r}")
    return name


def scrubbed_checkout(
    repo: GitRepository, commit: str, dest: Path, branch: str = "main"
) -> ScrubResult:
    """Write ``commit``'s tree to ``dest`` as a repository with a single scrubbed commit.

    Raises:
        GitError: the tree holds an entry that cannot be written safely, an object of it is
            missing from the repository (an incomplete clone), or the new tree differs from
            the original (which would mean the content changed).
    """
    src = repo._repo  # the git package owns its libgit2 handles
    base = src[commit].peel(pygit2.Commit)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    new = pygit2.init_repository(str(dest), bare=False, initial_head=branch)
    files = 0
    size = 0

    def _object(oid: pygit2.Oid, target: Path) -> pygit2.Object:
        try:
            return src[oid]
        except KeyError:  # libgit2's "not found" (a clone without the object: shallow, partial)
            path = target.relative_to(dest).as_posix()
            raise GitError(
                f"{path} at {commit[:12]} is object {oid}, which the repository does not have",
                hint="mine and admit from a complete clone (not shallow, not partial)",
            ) from None

    def copy_tree(tree: pygit2.Tree, where: Path) -> pygit2.Oid:
        nonlocal files, size
        builder = new.TreeBuilder()
        for entry in tree:
            name = _safe_name(entry.name or "")
            mode = int(entry.filemode)
            target = where / name
            if mode == MODE_TREE_INT:
                target.mkdir()
                sub = _object(entry.id, target)
                assert isinstance(sub, pygit2.Tree)
                oid = copy_tree(sub, target)
            elif mode == MODE_SUBMODULE:
                # A gitlink names a commit of another repository; keep the entry, write an
                # empty directory (as a clone without submodules would).
                target.mkdir()
                oid = entry.id
            else:
                data = _object(entry.id, target).read_raw()
                oid = new.create_blob(data)
                if mode == MODE_SYMLINK:
                    os.symlink(os.fsdecode(data), target)
                else:
                    target.write_bytes(data)
                    if mode == 0o100755:
                        target.chmod(0o755)
                files += 1
                size += len(data)
            builder.insert(name, oid, mode)
        return builder.write()

    tree_id = copy_tree(base.tree, dest)
    if tree_id != base.tree_id:
        raise GitError(f"scrubbed tree {tree_id} differs from the base tree {base.tree_id}")
    sig = pygit2.Signature(SCRUB_NAME, SCRUB_EMAIL, SCRUB_TIME, 0)
    sha = new.create_commit(f"refs/heads/{branch}", sig, sig, SCRUB_MESSAGE, tree_id, [])
    new.index.read_tree(new[tree_id].peel(pygit2.Tree))
    new.index.write()
    gitdir = dest / ".git"
    # libgit2 writes reflogs, a description and hook samples; none of them belong here.
    for extra in (
        "logs",
        "hooks",
        "description",
        "info",
        "COMMIT_EDITMSG",
        "ORIG_HEAD",
        "FETCH_HEAD",
    ):
        p = gitdir / extra
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    (gitdir / "hooks").mkdir()
    return ScrubResult(str(sha), str(tree_id), files, size)


MODE_TREE_INT = 0o040000
