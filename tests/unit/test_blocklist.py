"""Decontamination by name, by root commit and by PR."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.config import PROJECT_ROOT
from swe_forge.errors import ConfigError
from swe_forge.mining.blocklist import Blocklist, normalize_repo


def _write(tmp_path: Path) -> Blocklist:
    (tmp_path / "benchmark_repos.yaml").write_text(
        "schema_version: 1\nbenchmarks:\n  swe-bench:\n    repos: [Django/Django, psf/requests]\n"
        "  other:\n    repos: [psf/requests]\n"
    )
    (tmp_path / "root_commits.yaml").write_text(
        "schema_version: 1\nroots:\n  django/django: [" + "a" * 40 + "]\n"
    )
    (tmp_path / "prs.yaml").write_text("schema_version: 1\nprs:\n  acme/app: [7, 9]\n")
    return Blocklist.load(tmp_path)


def test_match_by_name_is_case_insensitive(tmp_path: Path) -> None:
    bl = _write(tmp_path)
    hit = bl.match_repo("django/DJANGO.git")
    assert hit is not None and hit.reason == "name"
    hit = bl.match_repo("psf/requests")
    assert hit is not None and "other" in hit.detail and "swe-bench" in hit.detail
    assert bl.match_repo("acme/app") is None


def test_fork_caught_by_root_commit(tmp_path: Path) -> None:
    bl = _write(tmp_path)
    hit = bl.match_repo("someone/renamed-copy", ("b" * 40, "A" * 40))
    assert hit is not None and hit.reason == "root_commit" and "django/django" in hit.detail
    assert bl.match_repo("someone/other", ("c" * 40,)) is None


def test_pr_pairs(tmp_path: Path) -> None:
    bl = _write(tmp_path)
    assert bl.match_pr("Acme/App", 7) is not None
    assert bl.match_pr("acme/app", 8) is None


def test_digest_changes_with_content(tmp_path: Path) -> None:
    first = _write(tmp_path).digest
    (tmp_path / "prs.yaml").write_text("schema_version: 1\nprs:\n  acme/app: [7]\n")
    assert Blocklist.load(tmp_path).digest != first


def test_missing_dir_is_empty(tmp_path: Path) -> None:
    bl = Blocklist.load(tmp_path / "nope")
    assert bl.match_repo("django/django") is None


def test_invalid_yaml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("benchmarks: [unclosed\n")
    with pytest.raises(ConfigError):
        Blocklist.load(tmp_path)


def test_shipped_blocklist_covers_swe_bench() -> None:
    bl = Blocklist.load(PROJECT_ROOT / "blocklists")
    for repo in ("django/django", "sympy/sympy", "astropy/astropy", "pytest-dev/pytest"):
        assert bl.match_repo(repo) is not None, repo
    assert normalize_repo(" Foo/Bar.git/ ") == "foo/bar"


def test_kinds_filter(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(
        "benchmarks:\n  evalset:\n    kind: evaluation\n    repos: [a/one]\n"
        "  trainset:\n    kind: training\n    repos: [b/two]\n"
    )
    only_eval = Blocklist.load(tmp_path, ("evaluation",))
    assert only_eval.match_repo("a/one") is not None and only_eval.match_repo("b/two") is None
    both = Blocklist.load(tmp_path)
    assert both.match_repo("b/two") is not None
    assert only_eval.digest != both.digest


def test_root_commits_honour_kinds(tmp_path: Path) -> None:
    # The benchmark that gives a root its kind lives in another file than the root.
    (tmp_path / "b.yaml").write_text(
        "benchmarks:\n  evalset:\n    kind: evaluation\n    repos: [a/one]\n"
        "  trainset:\n    kind: training\n    repos: [b/two]\n"
    )
    (tmp_path / "r.yaml").write_text(
        f"roots:\n  a/one: [{'a' * 40}]\n  b/two: [{'b' * 40}]\n  c/unlisted: [{'c' * 40}]\n"
    )
    only_eval = Blocklist.load(tmp_path, ("evaluation",))
    assert only_eval.match_repo("x/fork-of-one", ("a" * 40,)) is not None
    assert only_eval.match_repo("x/fork-of-two", ("b" * 40,)) is None
    # A root no benchmark lists has no known kind: it blocks whatever kinds are asked for.
    assert only_eval.match_repo("x/fork-of-unlisted", ("c" * 40,)) is not None
    only_train = Blocklist.load(tmp_path, ("training",))
    assert only_train.match_repo("x/fork-of-one", ("a" * 40,)) is None
    assert only_train.match_repo("x/fork-of-two", ("b" * 40,)) is not None
    both = Blocklist.load(tmp_path)
    hit = both.match_repo("x/fork-of-two", ("B" * 40,))
    assert hit is not None and hit.reason == "root_commit" and "b/two" in hit.detail


def test_shared_root_names_every_repository(tmp_path: Path) -> None:
    # Two blocked projects with one history (a fork that became its own project).
    (tmp_path / "r.yaml").write_text(f"roots:\n  z/new: [{'d' * 40}]\n  a/old: [{'d' * 40}]\n")
    hit = Blocklist.load(tmp_path).match_repo("x/copy", ("d" * 40,))
    assert hit is not None and hit.detail.endswith("the root of a/old, z/new")


def test_shipped_training_roots_block_only_when_asked() -> None:
    # python/mypy is listed by training sets only (SWE-Gym, SWE-smith); django by SWE-bench.
    mypy_root = "5088f037c2b35a69a093bd41907d1c30bff85d5e"
    django_root = "d6ded0e91bcdd2a8f7a221f6a5552a33fe545359"
    only_eval = Blocklist.load(PROJECT_ROOT / "blocklists", ("evaluation",))
    assert only_eval.match_repo("x/typechecker", (mypy_root,)) is None
    assert only_eval.match_repo("x/webframework", (django_root,)) is not None
    both = Blocklist.load(PROJECT_ROOT / "blocklists", ("evaluation", "training"))
    assert both.match_repo("x/typechecker", (mypy_root,)) is not None
