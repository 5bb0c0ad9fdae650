"""The embedded example repository is deterministic and ``expected.json`` tells the truth.

Real git and real pytest runs (in subprocesses), no Docker. For every pull request the
expectations are checked against the history itself: the merge shape and messages, which
kinds of files changed (what mining must conclude) and, by running the project's tests
before and after each fix, which tests fail before and pass after (what admission must
conclude).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swe_forge.errors import InputError
from swe_forge.example import ExampleInfo, create_example, load_expectations
from swe_forge.example.history import HISTORY, pull_requests
from swe_forge.example.steps import OWNER, DirectCommit, PullRequest

# The after-licence PRs are otherwise good fixes; these are the tests they turn green.
AFTER_LICENSE_F2P = {
    13: {
        "tests/test_slug.py::test_slugify_max_length_never_ends_with_separator[word]",
        "tests/test_slug.py::test_slugify_max_length_never_ends_with_separator[letters]",
    },
    14: {"tests/test_duration.py::test_format_duration_zero"},
}
HASH_SEEDS = range(8)
_WORKERS = min(8, (os.cpu_count() or 2) * 2)

# ----------------------------------------------------------------------------- helpers


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` isolated from the user's configuration; return stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", LC_ALL="C")
    proc = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


def git_bytes(repo: Path, *args: str) -> bytes:
    """Like :func:`git` but returns raw bytes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, check=True
    ).stdout


@dataclass(frozen=True)
class MainCommit:
    """A commit on the first-parent chain of main."""

    sha: str
    parents: tuple[str, ...]
    message: str


def first_parent_chain(repo: Path) -> list[MainCommit]:
    """The first-parent history of HEAD, oldest first."""
    out = git(repo, "log", "--first-parent", "--reverse", "--format=%H %P%x00%B%x1e")
    commits = []
    for record in out.split("\x1e"):
        record = record.lstrip("\n")
        if not record:
            continue
        head, _, message = record.partition("\x00")
        sha, *parents = head.split()
        commits.append(MainCommit(sha, tuple(parents), message))
    return commits


_MERGE_SUBJECT = re.compile(r"^Merge pull request #(\d+) from (\S+)$")
_SQUASH_SUBJECT = re.compile(r"^.*\S \(#(\d+)\)$")


def pr_number(commit: MainCommit) -> int | None:
    """The PR number a main commit merged, from its subject and parent count."""
    subject = commit.message.split("\n", 1)[0]
    m = _MERGE_SUBJECT.match(subject) if len(commit.parents) == 2 else None
    m = m or (_SQUASH_SUBJECT.match(subject) if len(commit.parents) == 1 else None)
    return int(m.group(1)) if m else None


def export_tree(repo: Path, rev: str, dest: Path) -> Path:
    """Write the tree of ``rev`` to ``dest`` (no .git) and return ``dest``."""
    dest.mkdir(parents=True)
    archive = git_bytes(repo, "archive", "--format=tar", rev)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def changed_files(repo: Path, old: str, new: str) -> dict[str, str]:
    """``path -> status letter`` of the files that differ between two commits."""
    out = git(repo, "diff", "--no-renames", "--name-status", "-z", old, new)
    fields = out.split("\x00")
    return {fields[i + 1]: fields[i] for i in range(0, len(fields) - 1, 2)}


def binary_files(repo: Path, old: str, new: str) -> set[str]:
    """Paths whose change git shows as binary."""
    out = git(repo, "diff", "--no-renames", "--numstat", old, new)
    return {line.split("\t", 2)[2] for line in out.splitlines() if line.startswith("-\t-\t")}


def is_test_module(path: str) -> bool:
    """A pytest module under tests/."""
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") and name.startswith("test_") and name.endswith(".py")


@dataclass
class Outcomes:
    """Per-test results of one pytest run, keyed by canonical node id."""

    tests: dict[str, str] = field(default_factory=dict)  # passed | failed | error | skipped
    messages: dict[str, str] = field(default_factory=dict)
    collection_errors: set[str] = field(default_factory=set)
    returncode: int = 0
    output: str = ""


_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def parse_junit(path: Path) -> Outcomes:
    """Parse a pytest JUnit XML report (``junit_family=xunit1``) into :class:`Outcomes`."""
    result = Outcomes()
    for case in ET.parse(path).iter("testcase"):
        file = case.get("file", "")
        classname = case.get("classname", "")
        name = case.get("name", "")
        if not classname:  # a module that could not be collected
            result.collection_errors.add(file)
            continue
        module = file.removesuffix(".py").replace("/", ".")
        assert classname == module or classname.startswith(module + "."), (classname, file)
        classes = classname[len(module) :].strip(".")
        nodeid = "::".join([file, *classes.split(".")] if classes else [file]) + "::" + name
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                tag = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                if _RANK[tag] > _RANK[outcome]:
                    outcome, message = tag, child.get("message", "")
        previous = result.tests.get(nodeid, "passed")
        if _RANK[outcome] >= _RANK[previous]:
            result.tests[nodeid] = outcome
            result.messages[nodeid] = message
    return result


def run_pytest(workdir: Path, targets: Sequence[str] = (), *, hash_seed: int = 0) -> Outcomes:
    """Run the project's pytest in ``workdir`` in a fresh interpreter; return its outcomes."""
    report = workdir.parent / f"{workdir.name}-junit-{hash_seed}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON", "COV_"))}
    env.update(
        PYTHONPATH=str(workdir / "src"),
        PYTHONHASHSEED=str(hash_seed),
        PYTHONDONTWRITEBYTECODE="1",
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=xunit1",
        f"--junitxml={report}",
        "--continue-on-collection-errors",
        "-q",
        *targets,
    ]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert report.exists(), f"pytest wrote no report (exit {proc.returncode}):\n{proc.stdout}"
    outcomes = parse_junit(report)
    outcomes.returncode = proc.returncode
    outcomes.output = proc.stdout + proc.stderr
    return outcomes


@dataclass(frozen=True)
class PrRun:
    """The same test modules run before (base + the PR's tests) and after (merge) a PR."""

    number: int
    targets: tuple[str, ...]
    before: Outcomes
    after: Outcomes

    def fail_to_pass(self) -> set[str]:
        """Tests that pass after and did not pass before (missing counts as failing)."""
        return {
            t
            for t, o in self.after.tests.items()
            if o == "passed" and self.before.tests.get(t) != "passed"
        }


@dataclass(frozen=True)
class PrInfo:
    """A PR as merged into main."""

    pr: PullRequest
    commit: MainCommit

    @property
    def base(self) -> str:
        """The first parent: main before the PR."""
        return self.commit.parents[0]


def with_test_files(repo: Path, info: PrInfo, dest: Path) -> Path:
    """Export the PR's base and copy in the PR's test files as they are after it."""
    export_tree(repo, info.base, dest)
    for path, status in changed_files(repo, info.base, info.commit.sha).items():
        if not path.startswith("tests/"):
            continue
        target = dest / path
        if status == "D":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git_bytes(repo, "show", f"{info.commit.sha}:{path}"))
    return dest


def run_pr(repo: Path, info: PrInfo, workdir: Path) -> PrRun:
    """Run the PR's test modules before and after the PR."""
    targets = tuple(
        sorted(p for p in changed_files(repo, info.base, info.commit.sha) if is_test_module(p))
    )
    assert targets, f"PR #{info.pr.number} changes no test module"
    before_dir = with_test_files(repo, info, workdir / f"pr{info.pr.number}-before")
    after_dir = export_tree(repo, info.commit.sha, workdir / f"pr{info.pr.number}-after")
    with ThreadPoolExecutor(2) as pool:
        before, after = pool.map(lambda d: run_pytest(d, targets), [before_dir, after_dir])
    return PrRun(info.pr.number, targets, before, after)


def parallel(fn: Any, items: Iterable[Any]) -> list[Any]:
    """``list(map(fn, items))`` on a thread pool (the work is in subprocesses)."""
    with ThreadPoolExecutor(_WORKERS) as pool:
        return list(pool.map(fn, items))


def run_with_hash_seeds(
    workdir: Path, targets: Sequence[str], seeds: Iterable[int]
) -> list[Outcomes]:
    """Run the same tests once per ``PYTHONHASHSEED`` value, in parallel."""
    return parallel(lambda seed: run_pytest(workdir, targets, hash_seed=seed), seeds)


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> ExampleInfo:
    return create_example(tmp_path_factory.mktemp("example") / "textkit")


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return load_expectations()


@pytest.fixture(scope="module")
def expected_prs(expected: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {pr["number"]: pr for pr in expected["prs"]}


@pytest.fixture(scope="module")
def merged(example: ExampleInfo) -> dict[int, PrInfo]:
    by_number = {pr.number: pr for pr in pull_requests()}
    found: dict[int, PrInfo] = {}
    for commit in first_parent_chain(example.path):
        number = pr_number(commit)
        if number is not None:
            found[number] = PrInfo(by_number[number], commit)
    return found


@pytest.fixture(scope="module")
def pr_runs(
    example: ExampleInfo,
    merged: dict[int, PrInfo],
    expected_prs: dict[int, dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[int, PrRun]:
    """Before/after runs of every PR whose tests are meant to run (all but 2 kinds)."""
    workdir = tmp_path_factory.mktemp("runs")
    numbers = [
        n
        for n, e in expected_prs.items()
        if e["mine"]["candidate"] or e["kind"] == "after_license_change"
    ]
    runs = parallel(lambda n: run_pr(example.path, merged[n], workdir), numbers)
    return {run.number: run for run in runs}


# ----------------------------------------------------------------------------- tests


def test_creation_is_deterministic(example: ExampleInfo, tmp_path: Path) -> None:
    again = create_example(tmp_path / "again")
    assert again.head_sha == example.head_sha
    assert git(again.path, "rev-list", "--all") == git(example.path, "rev-list", "--all")
    assert git(again.path, "log", "--format=%H %P %an %ae %aI %cn %cI") == git(
        example.path, "log", "--format=%H %P %an %ae %aI %cn %cI"
    )


def test_info_and_expected_head(example: ExampleInfo, expected: dict[str, Any]) -> None:
    assert example.repo == expected["repo"] == "swe-forge/textkit"
    assert expected["instance_prefix"] == "swe-forge__textkit"
    assert example.default_branch == "main"
    assert example.num_prs == len(expected["prs"]) == len(pull_requests())
    assert example.head_sha == git(example.path, "rev-parse", "HEAD").strip()
    # The SHAs are the same on every machine; expected.json records HEAD to prove it.
    assert example.head_sha == expected["head_sha"]
    assert git(example.path, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(example.path, "branch", "--format=%(refname:short)").split() == ["main"]
    assert git(example.path, "remote", "get-url", "origin").strip() == (
        "https://github.com/swe-forge/textkit.git"
    )
    assert git(example.path, "status", "--porcelain") == ""


def test_dates_start_fixed_and_advance_evenly(example: ExampleInfo) -> None:
    dates = git(example.path, "log", "--reverse", "--date-order", "--format=%aI %cI").split()
    assert dates[0] == "2024-01-08T09:00:00+00:00"
    assert len(set(dates[1::2])) == len(dates) // 2  # one distinct committer date per commit


def test_history_shape(example: ExampleInfo, merged: dict[int, PrInfo]) -> None:
    chain = first_parent_chain(example.path)
    steps = [s for s in HISTORY]
    assert len(chain) == 1 + len(steps)
    assert chain[0].parents == ()
    for commit, step in zip(chain[1:], steps, strict=True):
        if isinstance(step, DirectCommit):
            assert len(commit.parents) == 1
            assert pr_number(commit) is None
            assert commit.message.strip() == step.message.strip()
            continue
        assert merged[step.number].commit == commit
        if step.strategy == "merge":
            assert len(commit.parents) == 2
            assert commit.message == (
                f"Merge pull request #{step.number} from {step.author.login}/{step.branch}"
                f"\n\n{step.title}\n\n{step.body.strip()}\n"
            )
            branch_commits = git(
                example.path, "rev-list", f"{commit.parents[0]}..{commit.parents[1]}"
            ).split()
            assert len(branch_commits) == len(step.commits)
        else:
            assert len(commit.parents) == 1
            assert commit.message == f"{step.title} (#{step.number})\n\n{step.body.strip()}\n"
    assert sorted(merged) == list(range(1, len(pull_requests()) + 1))
    strategies = {pr.strategy for pr in pull_requests()}
    assert strategies == {"merge", "squash"}
    # At least one PR branch started from an older main than the one it was merged into.
    assert any(pr.based_on is not None for pr in pull_requests())


def test_expected_json_matches_history(expected_prs: dict[int, dict[str, Any]]) -> None:
    reasons = {
        "no_test_change",
        "test_only",
        "no_code_change",
        "binary_change",
        "license_not_permissive",
    }
    for pr in pull_requests():
        entry = expected_prs[pr.number]
        assert entry["title"] == pr.title
        assert entry["kind"] == pr.kind
        mine = entry["mine"]
        if mine["candidate"]:
            assert set(mine) == {"candidate"}
            admit = entry["admit"]
            if admit["admitted"]:
                assert admit["FAIL_TO_PASS"], pr.number
            else:
                assert admit["reason"] in {"no_fail_to_pass", "flaky_test"}
        else:
            assert mine["reason"] in reasons
            assert "admit" not in entry
    kinds = [pr.kind for pr in pull_requests()]
    assert kinds.count("bugfix") >= 3
    for kind in ("feature", "docs", "tests", "ci", "already_passing", "flaky", "binary"):
        assert kind in kinds
    assert "no_tests" in kinds and "after_license_change" in kinds


def test_changed_files_explain_mining_outcome(
    example: ExampleInfo, merged: dict[int, PrInfo], expected_prs: dict[int, dict[str, Any]]
) -> None:
    """A simple classification of each PR's files gives the reason expected.json records."""
    repo = example.path
    for number, info in merged.items():
        files = changed_files(repo, info.base, info.commit.sha)
        binary = binary_files(repo, info.base, info.commit.sha)
        tests = {p for p in files if p.startswith("tests/")}
        source = {p for p in files if p.startswith("src/") and p.endswith(".py")}
        other = set(files) - tests - source
        assert all(p.startswith(("docs/", ".github/", "README")) for p in other), files
        licence = git(repo, "show", f"{info.base}:LICENSE")
        if licence.startswith("MIT License"):
            assert 'license = {text = "MIT"}' in git(repo, "show", f"{info.base}:pyproject.toml")
            if binary:
                reason = "binary_change"
            elif not source and not tests:
                reason = "no_code_change"
            elif not source:
                reason = "test_only"
            elif not tests:
                reason = "no_test_change"
            else:
                reason = None
        else:
            assert "GNU GENERAL PUBLIC LICENSE" in licence.splitlines()[0]
            pyproject = git(repo, "show", f"{info.base}:pyproject.toml")
            assert 'license = {text = "GPL-3.0-or-later"}' in pyproject
            assert "MIT" not in pyproject
            assert source and tests and not binary
            reason = "license_not_permissive"
        mine = expected_prs[number]["mine"]
        assert mine == (
            {"candidate": True} if reason is None else {"candidate": False, "reason": reason}
        )
        if expected_prs[number]["kind"] == "binary":
            blob = git_bytes(repo, "show", f"{info.commit.sha}:{sorted(binary)[0]}")
            assert b"\x00" in blob
            with pytest.raises(UnicodeDecodeError):
                blob.decode("utf-8")


def test_main_is_green_at_every_step(example: ExampleInfo, tmp_path: Path) -> None:
    """The whole suite passes on every first-parent commit (hash seed 0: flaky test passes)."""
    chain = first_parent_chain(example.path)
    dirs = [export_tree(example.path, c.sha, tmp_path / f"c{i}") for i, c in enumerate(chain)]
    for commit, result in zip(chain, parallel(run_pytest, dirs), strict=True):
        failing = {t: o for t, o in result.tests.items() if o != "passed"}
        assert result.returncode == 0 and not failing, (commit.sha, failing, result.output)
        assert not result.collection_errors
        assert len(result.tests) >= 20


def test_admitted_prs_fail_before_and_pass_after(
    pr_runs: dict[int, PrRun], expected_prs: dict[int, dict[str, Any]]
) -> None:
    admitted = {n: e for n, e in expected_prs.items() if e.get("admit", {}).get("admitted")}
    assert len(admitted) >= 4
    for number, entry in admitted.items():
        run = pr_runs[number]
        f2p = set(entry["admit"]["FAIL_TO_PASS"])
        assert len(f2p) == len(entry["admit"]["FAIL_TO_PASS"])
        # Every test of the touched modules passes after the fix...
        assert run.after.tests and set(run.after.tests.values()) == {"passed"}, run.after.output
        assert not run.after.collection_errors
        # ... exactly the expected ones did not pass before ...
        assert run.fail_to_pass() == f2p, (number, run.before.output)
        # ... and those failed or errored, or their module could not even be imported.
        for test in f2p:
            outcome = run.before.tests.get(test)
            if outcome is None:
                assert test.split("::", 1)[0] in run.before.collection_errors, test
            else:
                assert outcome in ("failed", "error"), (test, outcome)
        if entry["kind"] == "bugfix":
            for test in f2p:
                assert run.before.tests[test] == "failed"
                message = run.before.messages[test]
                assert message.startswith(("assert", "AssertionError")), message
        if entry["kind"] == "feature":
            assert run.before.collection_errors
            assert "ImportError" in run.before.output or "cannot import" in run.before.output


def test_already_passing_pr_has_no_fail_to_pass(
    pr_runs: dict[int, PrRun], expected_prs: dict[int, dict[str, Any]]
) -> None:
    numbers = [n for n, e in expected_prs.items() if e["kind"] == "already_passing"]
    assert numbers
    for number in numbers:
        assert expected_prs[number]["admit"] == {"admitted": False, "reason": "no_fail_to_pass"}
        run = pr_runs[number]
        assert set(run.before.tests.values()) == {"passed"}, run.before.output
        assert set(run.after.tests.values()) == {"passed"}
        assert run.before.tests.keys() == run.after.tests.keys()
        assert run.fail_to_pass() == set()


def test_flaky_pr_depends_on_hash_seed(
    example: ExampleInfo,
    merged: dict[int, PrInfo],
    pr_runs: dict[int, PrRun],
    expected_prs: dict[int, dict[str, Any]],
    tmp_path: Path,
) -> None:
    numbers = [n for n, e in expected_prs.items() if e["kind"] == "flaky"]
    assert numbers
    for number in numbers:
        admit = expected_prs[number]["admit"]
        assert admit["admitted"] is False and admit["reason"] == "flaky_test"
        flaky = admit["flaky_tests"]
        run = pr_runs[number]
        # Before the fix the new test fails whatever the seed (it crashes).
        for test in flaky:
            assert run.before.tests[test] == "failed"
        after_dir = export_tree(example.path, merged[number].commit.sha, tmp_path / f"{number}")
        targets = sorted({t.split("::", 1)[0] for t in flaky})
        results = run_with_hash_seeds(after_dir, targets, HASH_SEEDS)
        for test in flaky:
            outcomes = {r.tests[test] for r in results}
            assert outcomes == {"passed", "failed"}, (test, outcomes)
        # String hashing is SipHash-1-3 since CPython 3.11: the outcome per seed is stable.
        by_seed = {
            str(seed): r.tests[flaky[0]] for seed, r in zip(HASH_SEEDS, results, strict=True)
        }
        assert by_seed == admit["outcome_by_PYTHONHASHSEED"]
        # Everything else in the module is stable.
        for r in results:
            others = {t: o for t, o in r.tests.items() if t not in flaky}
            assert set(others.values()) == {"passed"}


def test_after_license_prs_are_otherwise_good(
    pr_runs: dict[int, PrRun], expected_prs: dict[int, dict[str, Any]]
) -> None:
    numbers = [n for n, e in expected_prs.items() if e["kind"] == "after_license_change"]
    assert sorted(numbers) == sorted(AFTER_LICENSE_F2P)
    for number in numbers:
        assert expected_prs[number]["mine"] == {
            "candidate": False,
            "reason": "license_not_permissive",
        }
        run = pr_runs[number]
        assert set(run.after.tests.values()) == {"passed"}
        assert run.fail_to_pass() == AFTER_LICENSE_F2P[number]
        for test in AFTER_LICENSE_F2P[number]:
            assert run.before.tests[test] == "failed"


def test_relicensing_is_a_direct_commit(example: ExampleInfo) -> None:
    chain = first_parent_chain(example.path)
    direct = [c for c in chain[1:] if pr_number(c) is None]
    assert len(direct) == 1
    (commit,) = direct
    assert changed_files(example.path, commit.parents[0], commit.sha).keys() == {
        "LICENSE",
        "README.md",
        "pyproject.toml",
    }
    gpl = git(example.path, "show", f"{commit.sha}:LICENSE")
    assert gpl.splitlines()[0].strip() == "GNU GENERAL PUBLIC LICENSE"
    assert "Version 3, 29 June 2007" in gpl
    pyproject = git(example.path, "show", f"{commit.sha}:pyproject.toml")
    assert "GNU General Public License v3 or later (GPLv3+)" in pyproject
    assert OWNER == "swe-forge"


def test_destination_rules(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("x")
    with pytest.raises(InputError) as excinfo:
        create_example(busy)
    assert excinfo.value.hint
    assert (busy / "keep.txt").exists()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(InputError):
        create_example(a_file, force=True)
    info = create_example(busy, force=True)
    assert not (busy / "keep.txt").exists()
    assert (busy / ".git").is_dir()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert create_example(empty).head_sha == info.head_sha
    shutil.rmtree(empty)


def test_build_ignores_user_git_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expected: dict[str, Any]
) -> None:
    """A hostile ~/.gitconfig and GIT_* variables change nothing: same SHAs."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    hostile = (
        "[user]\n\tname = Someone Else\n\temail = else@example.com\n"
        "[commit]\n\tgpgsign = true\n[core]\n\tautocrlf = true\n\thooksPath = /nonexistent\n"
        "[init]\n\tdefaultBranch = trunk\n[merge]\n\tff = only\n"
    )
    (home / ".gitconfig").write_text(hostile)
    (home / ".config" / "git" / "config").write_text(hostile)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Intruder")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00+0000")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    monkeypatch.setenv("TZ", "America/New_York")
    info = create_example(tmp_path / "repo")
    assert info.head_sha == expected["head_sha"]
    assert not (tmp_path / "elsewhere.git").exists()


def test_writer_merge_squash_and_errors(tmp_path: Path) -> None:
    """The writer's GitHub-style merges, and GitError on a conflict or an empty squash."""
    from datetime import UTC, datetime

    from swe_forge.errors import GitError
    from swe_forge.git.writer import RepoWriter

    when = datetime(2024, 1, 8, 9, tzinfo=UTC)
    repo = RepoWriter.init(tmp_path / "r")
    repo.write_text("a.txt", "one\n")
    root = repo.commit("Root", when)
    repo.create_branch("topic", checkout=True)
    repo.write_text("a.txt", "two\n")
    repo.write_bytes("b.bin", b"\x00\xff")
    repo.commit("Change a", when)
    merge = repo.merge_pr(7, "topic", "Title", "", when=when, owner="octo")
    assert repo.parents(merge)[0] == root
    assert git(repo.path, "log", "-1", "--format=%B", merge) == (
        "Merge pull request #7 from octo/topic\n\nTitle\n\n"
    )
    assert git(repo.path, "log", "-1", "--format=%cn <%ce> %cI", merge) == (
        "GitHub <noreply@github.com> 2024-01-08T09:00:00+00:00\n"
    )
    # A branch with nothing new squashes to nothing: an error, not an empty commit.
    repo.create_branch("empty")
    with pytest.raises(GitError):
        repo.squash_pr(8, "empty", "Nothing", when=when)
    # Conflicting branches: GitError, and main is left clean.
    repo.create_branch("left", root, checkout=True)
    repo.write_text("a.txt", "left\n")
    repo.commit("Left", when)
    with pytest.raises(GitError):
        repo.squash_pr(9, "left", "Conflict", when=when)
    assert repo.current_branch() == "main"
    assert repo.head() == merge
    assert git(repo.path, "status", "--porcelain") == ""
    with pytest.raises(ValueError):
        repo.write_text("../escape.txt", "x")
