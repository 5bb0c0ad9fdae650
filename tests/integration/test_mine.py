"""`mine` on real git repositories built by fixtures."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.mining.miner import MineOptions
from swe_forge.records import Candidate
from tests.conftest import GPL_TEXT, RepoBuilder

FIX = {"pkg/core.py": "def add(a, b):\n    return a + b\n"}
TEST = {
    "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
}


def mine(
    tmp_path: Path, *sources: str, **opts: object
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    out = tmp_path / "cands.jsonl"
    rej = tmp_path / "rej.jsonl"
    run_mine(list(sources), out, config=load_config(), options=MineOptions(**opts), rejected=rej)  # type: ignore[arg-type]
    cands = [json.loads(x) for x in out.read_text().splitlines()]
    rejs = [json.loads(x) for x in rej.read_text().splitlines()]
    return cands, rejs


def git_apply_reproduces(repo: Path, cand: dict[str, object], merge: str) -> None:
    """Cross-check with git itself: base + patch + test_patch == merge tree (temp index)."""
    index = repo / ".git" / "swe-forge-check-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}

    def run(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, input=data
        )

    run("read-tree", str(cand["base_commit"]))
    for key in ("patch", "test_patch"):
        run("apply", "--cached", "-", data=str(cand[key]).encode())
    tree = run("write-tree").stdout.decode().strip()
    merged = run("rev-parse", f"{merge}^{{tree}}").stdout.decode().strip()
    index.unlink()
    assert tree == merged


def test_merge_and_squash_prs(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    m1 = repo.pr(1, {**FIX, **TEST}, "Fix add", "add() subtracted.")
    repo.pr(
        2,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
            "tests/test_sub.py": "from pkg.core import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
        },
        "Add sub",
        "We need subtraction.",
        squash=True,
    )
    cands, rejs = mine(tmp_path, str(repo.path))
    # No origin remote: the repository is named after its directory.
    assert [c["instance_id"] for c in cands] == ["local__repo-1-1", "local__repo-1-2"]
    assert {c["repo"] for c in cands} == {"local/repo-1"}
    c1, c2 = cands
    assert c1["provenance"]["merge_kind"] == "merge" and c2["provenance"]["merge_kind"] == "squash"  # type: ignore[index]
    assert c1["problem_statement"] == "Fix add\n\nadd() subtracted.\n"
    assert "pkg/core.py" in str(c1["patch"]) and "tests/" not in str(c1["patch"])
    assert "tests/test_core.py" in str(c1["test_patch"]) and "pkg/core.py" not in str(
        c1["test_patch"]
    )
    assert c1["license"]["expression"] == "MIT"  # type: ignore[index]
    assert c1["created_at"] == "2024-03-01T15:00:00Z"
    assert rejs == []
    git_apply_reproduces(repo.path, c1, m1)
    Candidate.from_dict(c2)  # the record reads back


def test_rejection_reasons(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.pr(1, {"docs/index.md": "# Docs\n", "README.md": "# demo!\n"}, "Docs")
    repo.pr(2, TEST, "More tests")
    repo.pr(3, FIX, "Fix without tests")
    repo.pr(4, {".github/workflows/ci.yml": "on: push\n"}, "CI")
    repo.pr(
        5,
        {
            "pkg/extra.py": "X = 1\n",
            "tests/test_extra.py": "def test_x():\n    pass\n",
            "pkg/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
        },
        "Binary",
    )
    repo.commit({"CHANGELOG.md": "x\n"}, "A direct commit, not a PR")
    cands, rejs = mine(tmp_path, str(repo.path))
    assert cands == []
    got = {r["pr_number"]: r["reason"] for r in rejs}
    assert got == {
        1: "no_code_change",
        2: "test_only",
        3: "no_test_change",
        4: "no_code_change",
        5: "binary_change",
    }
    assert all(r["stage"] == "mine" and r["instance_id"] for r in rejs)


def test_licence_changes_over_history(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    repo.commit({"LICENSE": GPL_TEXT.read_text()}, "Relicense under GPL-3.0")
    repo.pr(
        2,
        {
            "pkg/core.py": "def add(a, b):\n    return b + a\n",
            "tests/test_more.py": "def test_x():\n    pass\n",
        },
        "Tweak",
    )
    cands, rejs = mine(tmp_path, str(repo.path))
    assert [c["provenance"]["pr_number"] for c in cands] == [1]  # type: ignore[index]
    assert [(r["pr_number"], r["reason"]) for r in rejs] == [(2, "license_not_permissive")]


def test_licence_unknown_then_added(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo(license_text="All rights reserved by nobody in particular.\n")
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    cands, rejs = mine(tmp_path, str(repo.path))
    assert cands == [] and rejs[0]["reason"] == "license_unknown"


def test_rename_roundtrips(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(20))
    repo.commit({"pkg/old_name.py": body}, "Add module")
    merge = repo.pr(
        1,
        {
            "pkg/old_name.py": None,
            "pkg/new_name.py": body.replace("return 3\n", "return 33\n"),
            "tests/test_core.py": "def test_renamed():\n    from pkg.new_name import f3\n    assert f3() == 33\n",
        },
        "Rename module and fix f3",
    )
    cands, _ = mine(tmp_path, str(repo.path))
    (cand,) = cands
    assert "rename from pkg/old_name.py" in str(cand["patch"])
    git_apply_reproduces(repo.path, cand, merge)


def test_deletion_and_test_data(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.commit({"pkg/legacy.py": "X = 1\n", "tests/data/in.json": "{}\n"}, "Add legacy")
    merge = repo.pr(
        1,
        {"pkg/legacy.py": None, **FIX, "tests/data/in.json": '{"a": 1}\n', **TEST},
        "Drop legacy, fix add",
    )
    (cand,), _ = mine(tmp_path, str(repo.path))
    assert cand["files"]["test_files"] == ["tests/data/in.json", "tests/test_core.py"]  # type: ignore[index]
    assert "deleted file mode" in str(cand["patch"])
    git_apply_reproduces(repo.path, cand, merge)


def test_window_budget_and_duplicates(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    for n in (1, 2, 3):
        repo.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n",
                "tests/test_core.py": f"def test_{n}():\n    pass\n",
            },
            f"Fix {n}",
        )
    repo.pr(
        2,
        {
            "pkg/core.py": "def add(a, b):\n    return b + a\n",
            "tests/test_core.py": "def test_again():\n    pass\n",
        },
        "Reused number",
        squash=True,
    )
    cands, rejs = mine(tmp_path, str(repo.path))
    assert [c["provenance"]["pr_number"] for c in cands] == [1, 2, 3]  # type: ignore[index]
    assert [(r["pr_number"], r["reason"]) for r in rejs] == [(2, "duplicate_pr")]
    cands, _ = mine(tmp_path, str(repo.path), max_candidates=2)
    assert len(cands) == 2
    from datetime import UTC, datetime

    cands, _ = mine(
        tmp_path,
        str(repo.path),
        since=datetime(2024, 3, 1, 17, tzinfo=UTC),
        until=datetime(2024, 3, 1, 18, 30, tzinfo=UTC),
    )
    assert [c["provenance"]["pr_number"] for c in cands] == [2]  # type: ignore[index]


@pytest.mark.parametrize("jobs", [1, 2])
def test_candidates_sorted_by_pr_number_not_walk_order(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, jobs: int
) -> None:
    # PRs are merged in another order than they were numbered (a long-lived PR lands late):
    # the walk (newest first) meets 9, 3, 12, 5.
    repo = make_repo()
    for n in (5, 12, 3, 9):
        repo.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n",
                "tests/test_core.py": f"def test_{n}():\n    pass\n",
            },
            f"Change {n}",
        )
    repo.pr(7, {"pkg/core.py": "def add(a, b):\n    return b + a\n"}, "No tests")
    repo.pr(1, {"tests/test_core.py": "def test_only():\n    pass\n"}, "Tests only")
    cands, rejs = mine(tmp_path, str(repo.path), jobs=jobs)
    assert [c["provenance"]["pr_number"] for c in cands] == [3, 5, 9, 12]  # type: ignore[index]
    assert [r["pr_number"] for r in rejs] == [1, 7]
    # --max-candidates keeps the newest PRs the walk meets first, then sorts them.
    cands, _ = mine(tmp_path, str(repo.path), jobs=jobs, max_candidates=2)
    assert [c["provenance"]["pr_number"] for c in cands] == [3, 9]  # type: ignore[index]


def test_output_is_deterministic(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    for out in (a, b):
        run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 0


def test_clone_url_and_list_file(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWE_FORGE_CACHE", str(tmp_path / "cache"))
    repo = make_repo("upstream", owner="octo")
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    url = f"file://{repo.path}"
    cands, _ = mine(tmp_path, url)
    assert str(cands[0]["repo"]).endswith("/upstream-1")
    listing = tmp_path / "repos.txt"
    listing.write_text(f"# our repositories\n{repo.path}  octo/widgets\n\n")
    cands, _ = mine(tmp_path, str(listing))
    assert cands[0]["instance_id"] == "octo__widgets-1" and cands[0]["repo"] == "octo/widgets"
    # The second run reuses the cached mirror, and works offline.
    cands, _ = mine(tmp_path, url, offline=True)
    assert len(cands) == 1


def test_origin_remote_names_the_repo(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.writer.add_remote("origin", "git@github.com:Some-Org/some.lib.git")
    repo.pr(7, {**FIX, **TEST}, "Fix add")
    (cand,), _ = mine(tmp_path, str(repo.path))
    assert cand["repo"] == "Some-Org/some.lib" and cand["instance_id"] == "Some-Org__some.lib-7"


def test_blocklisted_by_root_commit(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    root = subprocess.run(
        ["git", "-C", str(repo.path), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "roots.yaml").write_text(f"schema_version: 1\nroots:\n  famous/project: [{root}]\n")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"blocklist:\n  dir: {lists}\n")
    out = tmp_path / "c.jsonl"
    rej = tmp_path / "r.jsonl"
    result = run_mine(
        [str(repo.path)], out, config=load_config(cfg), options=MineOptions(), rejected=rej
    )
    assert result.candidates == 0
    (r,) = [json.loads(x) for x in rej.read_text().splitlines()]
    assert (
        r["reason"] == "blocklisted_repo"
        and "famous/project" in r["detail"]
        and r["pr_number"] is None
    )


def test_training_set_root_blocks_only_when_training_is_asked(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    root = subprocess.run(
        ["git", "-C", str(repo.path), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "benchmarks.yaml").write_text(
        "schema_version: 1\nbenchmarks:\n  some-gym:\n    kind: training\n"
        "    repos: [trainco/corpus-project]\n"
    )
    (lists / "roots.yaml").write_text(
        f"schema_version: 1\nroots:\n  trainco/corpus-project: [{root}]\n"
    )

    def run(kinds: str) -> tuple[int, list[dict[str, object]]]:
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(f"blocklist:\n  dir: {lists}\n  kinds: {kinds}\n")
        out, rej = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
        result = run_mine(
            [str(repo.path)], out, config=load_config(cfg), options=MineOptions(), rejected=rej
        )
        return result.candidates, [json.loads(x) for x in rej.read_text().splitlines()]

    # The default (evaluation sets only) and an explicit [evaluation] mine it.
    assert load_config().blocklist.kinds == ("evaluation",)
    assert run("[evaluation]") == (1, [])
    count, rejs = run("[evaluation, training]")
    assert count == 0
    assert [r["reason"] for r in rejs] == ["blocklisted_repo"]
    assert "trainco/corpus-project" in str(rejs[0]["detail"])
    assert str(rejs[0]["detail"]).startswith("root commit")


def test_newest_non_empty_commit_of_a_pr_number_wins(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(5, {**FIX, **TEST}, "Fix add")
    repo.writer.commit("Fix add (#5)", repo.when(), allow_empty=True)  # an empty re-merge
    cands, rejs = mine(tmp_path, str(repo.path))
    assert [c["provenance"]["pr_number"] for c in cands] == [5]
    assert [(r["pr_number"], r["reason"]) for r in rejs] == [(5, "empty_diff")]


def test_helpers_only_test_side(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.pr(
        1,
        {**FIX, "tests/conftest.py": "import pytest\n", "tests/helpers.py": "X = 1\n"},
        "Fix with fixtures only",
    )
    cands, rejs = mine(tmp_path, str(repo.path))
    assert cands == [] and rejs[0]["reason"] == "no_test_module"


def test_version_from_nearest_tag(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    repo.writer.tag("v2.7.1")
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    (cand,), _ = mine(tmp_path, str(repo.path))
    assert cand["version"] == "2.7"


def test_statement_quality_is_recorded(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(
        1,
        {
            **FIX,
            "tests/test_core.py": "import pytest\n\nfrom pkg.core import add\n\n\n"
            "def test_add_text():\n"
            "    with pytest.raises(TypeError, match='numbers only, got str'):\n"
            "        add('1', 2)\n",
        },
        "Fix add",
        "Co-authored-by: Helper Bot <bot@example.com>\n"
        "* [pre-commit.ci] auto fixes from pre-commit.com hooks\n",
        squash=True,
    )
    repo.pr(
        2,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n",
            "tests/test_neg.py": "from pkg.core import neg\n\n\ndef test_neg():\n"
            "    assert neg(2) == -2\n",
        },
        "Add neg() for symmetric arithmetic helpers",
        "The package has add() but nothing to negate a number, so callers write their own "
        "lambda every time and get the sign of zero wrong. neg() returns the additive "
        "inverse of any number the package accepts.",
    )
    cands, _ = mine(tmp_path, str(repo.path))
    first, second = (Candidate.from_dict(c) for c in cands)
    assert first.problem_statement == "Fix add\n"
    q1 = first.statement_quality
    assert q1 is not None and q1.cleaned and not q1.generated
    assert q1.flags == ("exact_string", "thin") and q1.words == 2
    assert "exact_string: 'numbers only, got str'" in q1.evidence
    q2 = second.statement_quality
    assert q2 is not None and q2.flags == () and not q2.cleaned and q2.score > q1.score
    assert cands[0]["statement_quality"]["version"] == 1  # type: ignore[index]
    # A record from before the block existed still reads (as None); ours round-trips.
    older = {k: v for k, v in cands[0].items() if k != "statement_quality"}
    assert Candidate.from_dict(older).statement_quality is None
    assert Candidate.from_dict(json.loads(first.to_json())) == first


def test_sample_keeps_newest_and_spread(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    """--sample newest:2,spread:2 keeps the 2 newest and 2 evenly spread older candidates."""
    from swe_forge.mining.sample import parse_sample

    repo = make_repo()
    for n in range(1, 10):
        repo.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n",
                "tests/test_core.py": f"def test_{n}():\n    pass\n",
            },
            f"Change {n}",
        )
    out = tmp_path / "s.jsonl"
    result = run_mine(
        [str(repo.path)],
        out,
        config=load_config(),
        options=MineOptions(sample=parse_sample("newest:2,spread:2")),
    )
    kept = [json.loads(x)["provenance"]["pr_number"] for x in out.read_text().splitlines()]
    # Older ones 1..7: a third (index 2 -> PR 3) and two thirds (index 4 -> PR 5) through.
    assert kept == [3, 5, 8, 9]
    assert result.summary()["not_sampled"] == 5
    # With a budget, the sample's newest are kept.
    run_mine(
        [str(repo.path)],
        out,
        config=load_config(),
        options=MineOptions(sample=parse_sample("spread:2,newest:2"), max_candidates=3),
    )
    assert [json.loads(x)["provenance"]["pr_number"] for x in out.read_text().splitlines()] == [
        5,
        8,
        9,
    ]


@pytest.mark.parametrize("text", ["newest", "newest:2,newest:3", "oldest:1", "newest:0", ""])
def test_sample_text_refused(text: str) -> None:
    from swe_forge.errors import InputError
    from swe_forge.mining.sample import parse_sample

    with pytest.raises(InputError, match="--sample"):
        parse_sample(text)


def test_name_for_a_single_source(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    from swe_forge.errors import InputError

    repo = make_repo()
    repo.pr(7, {**FIX, **TEST}, "Fix add")
    out = tmp_path / "n.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions(), name="acme/w")
    (cand,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert cand["repo"] == "acme/w" and cand["instance_id"] == "acme__w-7"
    with pytest.raises(InputError, match="not a repository name"):
        run_mine([str(repo.path)], out, config=load_config(), options=MineOptions(), name="w")
    with pytest.raises(InputError, match="names one repository"):
        run_mine(
            [str(repo.path), str(make_repo().path)],
            out,
            config=load_config(),
            options=MineOptions(),
            name="acme/w",
        )


def test_history_without_prs_says_why(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    from swe_forge.progress import RecordingReporter

    repo = make_repo()
    out = tmp_path / "e.jsonl"
    reporter = RecordingReporter()
    result = run_mine(
        [str(repo.path)], out, config=load_config(), options=MineOptions(), reporter=reporter
    )
    (stats,) = result.summary()["per_repo"]
    assert stats["prs_found"] == 0 and "no merged pull request" in stats["note"]
    assert any("Merge pull request #N" in n for n in reporter.notes)


def test_cloning_a_url_shows_gits_progress(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swe_forge.progress import RecordingReporter

    monkeypatch.setenv("SWE_FORGE_CACHE", str(tmp_path / "cache"))
    repo = make_repo("upstream", owner="octo")
    repo.pr(1, {**FIX, **TEST}, "Fix add")
    reporter = RecordingReporter()
    url = f"file://{repo.path}"
    run_mine(
        [url], tmp_path / "c.jsonl", config=load_config(), options=MineOptions(), reporter=reporter
    )
    assert any(n.startswith(f"{url}: Receiving objects 100% (") for n in reporter.notes), (
        reporter.notes
    )
