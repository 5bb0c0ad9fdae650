"""Go's dependencies, resolved on the host: the module cache of the base tree and of the tree
with the gold and test patches (``go mod download`` with the chosen toolchain, see
:func:`swe_forge.ecosystems.go.toolchain.download_modules`), which the env image copies in.

go.mod and go.sum pin exact versions, so nothing here resolves by date; the go.sum texts are
the lock the image records. Used by :mod:`swe_forge.ecosystems.go.image`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import touched_paths
from swe_forge.ecosystems.go.toolchain import download_modules
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    from swe_forge.records import Candidate


def fetch_modules(
    repo: Any, candidate: Candidate, goroot: Path, ctx: Path, modcache: Path
) -> list[str]:
    """Modules of the base tree and of the tree with both patches; returns the go.sum
    texts (the lock)."""
    from swe_forge.git.scrub import scrubbed_checkout

    sums: list[str] = []
    tree = ctx / "tree"
    scrubbed_checkout(repo, candidate.base_commit, tree)
    go_bin = goroot / "bin" / "go"
    download_modules(go_bin, tree, modcache)
    sums.append((tree / "go.sum").read_text() if (tree / "go.sum").exists() else "")
    for patch in (candidate.patch, candidate.test_patch):
        apply_to_tree(tree, patch)
    if "go.mod" in touched_paths(candidate.patch) or "go.sum" in touched_paths(candidate.patch):
        download_modules(go_bin, tree, modcache)
    sums.append((tree / "go.sum").read_text() if (tree / "go.sum").exists() else "")
    shutil.rmtree(tree)
    # The cache's own lock files and VCS checkouts are not needed offline.
    shutil.rmtree(modcache / "cache" / "vcs", ignore_errors=True)
    return sums


def apply_to_tree(tree: Path, patch: str) -> None:
    """Apply a unified diff to a checked-out tree with the strict applier (no fuzz)."""
    from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff

    try:
        parsed = parse_diff(patch)
        for fp in parsed:
            old = tree / fp.old_path if fp.old_path else None
            data = old.read_bytes() if old is not None and old.is_file() else b""
            out = apply_file_patch(data, fp)
            if old is not None and fp.new_path != fp.old_path:
                old.unlink(missing_ok=True)
            if fp.new_path:
                target = tree / fp.new_path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(out)
    except (DiffParseError, PatchApplyError, OSError) as exc:
        raise BuildError(f"the patches do not apply to the base tree: {exc}") from exc


def _make_writable(root: Path) -> None:
    """Give back write permission to a module cache (read-only by design) so it can go."""
    for path in [root, *root.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
