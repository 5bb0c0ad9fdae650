"""The git module's work-tree helpers that tests and scripts write patches with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from swe_forge.diffs import parse_diff
from swe_forge.git.cli import checkout_clean, run_git, staged_diff


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qm", "first"], check=True)
    first = run_git(["rev-parse", "HEAD"], cwd=repo).stdout.decode().strip()
    (repo / "a.txt").write_text("two\n")
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qam", "second"], check=True)
    second = run_git(["rev-parse", "HEAD"], cwd=repo).stdout.decode().strip()
    return repo, first, second


def test_a_work_tree_is_cloned_once_and_cleaned_at_each_checkout(tmp_path: Path) -> None:
    repo, first, second = _repo(tmp_path)
    work = checkout_clean(repo, tmp_path / "work", first)
    assert (work / "a.txt").read_text() == "one\n"
    (work / "left.txt").write_text("from an earlier use\n")
    (work / "a.txt").write_text("changed\n")
    checkout_clean(repo, work, second)
    assert (work / "a.txt").read_text() == "two\n"
    assert not (work / "left.txt").exists()


def test_staged_diff_holds_new_and_changed_files_and_puts_the_tree_back(tmp_path: Path) -> None:
    repo, first, second = _repo(tmp_path)
    work = checkout_clean(repo, tmp_path / "work", second)
    (work / "a.txt").write_text("three\n")
    (work / "sub").mkdir()
    (work / "sub" / "new.txt").write_text("new\n")
    diff = staged_diff(work)
    assert sorted(fp.new_path for fp in parse_diff(diff)) == ["a.txt", "sub/new.txt"]
    assert "+three" in diff and "+new" in diff
    assert (work / "a.txt").read_text() == "two\n"
    assert not (work / "sub" / "new.txt").exists()
    # Against another commit, and kept in the tree when asked.
    (work / "a.txt").write_text("three\n")
    diff = staged_diff(work, first, reset=False)
    assert "-one" in diff and "+three" in diff
    assert (work / "a.txt").read_text() == "three\n"
