"""The admission stage on candidates mined from real repositories: decisions written as they
are made, interrupted runs resumed, progress on stderr. The candidates' gold patches are
refused by the verifier's guards, so every decision here is real and needs no engine."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge.admission.admitter import Admitter
from swe_forge.commands.admit import run_admit
from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.errors import InputError, UsageError
from swe_forge.mining.miner import MineOptions
from swe_forge.progress import RecordingReporter
from swe_forge.records import read_candidates
from tests.conftest import RepoBuilder

N = 4


def mined(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> Path:
    """N candidates whose gold patches ship a ``sitecustomize.py`` (refused: startup hook)."""
    repo = make_repo()
    for n in range(1, N + 1):
        repo.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n",
                "pkg/sitecustomize.py": f"VALUE = {n}\n",
                f"tests/test_core{n}.py": (
                    f"from pkg.core import add\n\n\ndef test_add_{n}():\n    assert add({n}, 1) == {n + 1}\n"
                ),
            },
            f"Fix add, take {n}",
            f"add() subtracted instead of adding (report {n}).",
        )
    out = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    assert len(out.read_text().splitlines()) == N
    return out


def lines(path: Path) -> list[dict[str, object]]:
    """Every line of a JSON Lines file, each required to be a whole JSON object."""
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(x) for x in text.splitlines()]


class Watching(RecordingReporter):
    """Checks the files after every decision; raises Ctrl-C when candidate ``stop`` starts."""

    def __init__(self, tasks: Path, rejected: Path, stop: int | None = None) -> None:
        super().__init__()
        self.tasks, self.rejected, self.stop = tasks, rejected, stop
        self.decisions = 0
        self.on_file_before = 0

    def note(self, message: str) -> None:
        super().note(message)
        if message.startswith("admit:"):
            self.on_file_before = len(lines(self.tasks)) + len(lines(self.rejected))
        if self.stop is not None and message.startswith(f"[{self.stop}/") and "started" in message:
            raise KeyboardInterrupt
        if ": rejected (" in message or ": admitted," in message:
            self.decisions += 1
            on_file = len(lines(self.tasks)) + len(lines(self.rejected))
            assert on_file == self.on_file_before + self.decisions


def test_interrupted_run_resumes_with_only_the_rest(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    cands = mined(make_repo, tmp_path)
    cfg = load_config()
    ref_tasks, ref_rej = tmp_path / "ref" / "tasks.jsonl", tmp_path / "ref" / "rejected.jsonl"
    ref = run_admit(cands, ref_tasks, config=cfg, rejected=ref_rej)
    assert ref.summary()["rejected"] == {"gold_refused": N} and ref.summary()["resumed"] == 0
    assert [r["reason"] for r in lines(ref_rej)] == ["gold_refused"] * N
    assert all("startup_hook" in str(r["detail"]) for r in lines(ref_rej))

    tasks, rej = tmp_path / "run" / "tasks.jsonl", tmp_path / "run" / "rejected.jsonl"
    first = Watching(tasks, rej, stop=3)
    with pytest.raises(KeyboardInterrupt):
        run_admit(cands, tasks, config=cfg, rejected=rej, reporter=first)
    assert first.decisions == 2 and len(lines(rej)) == 2

    second = Watching(tasks, rej)
    result = run_admit(cands, tasks, config=cfg, rejected=rej, reporter=second)
    assert second.decisions == N - 2
    assert [n for n in second.notes if n.endswith(": started")] == [
        f"[{i}/2] {c.instance_id}: started" for i, c in enumerate(read_candidates(cands)[2:], 1)
    ]
    assert "2 already decided on file (skipped" in second.notes[0]
    assert result.summary()["resumed"] == 2 and result.summary()["candidates"] == N
    assert result.summary()["rejected"] == {"gold_refused": N}
    # The same files as a run that was never interrupted.
    assert rej.read_bytes() == ref_rej.read_bytes() and tasks.read_bytes() == b""

    # A line torn by a kill in the middle of a write is cut, and its candidate done again.
    data = rej.read_bytes()
    rej.write_bytes(data[: len(data) - 40])
    third = Watching(tasks, rej)
    run_admit(cands, tasks, config=cfg, rejected=rej, reporter=third)
    assert third.decisions == 1 and rej.read_bytes() == ref_rej.read_bytes()

    # --restart decides everything again.
    again = Watching(tasks, rej)
    run_admit(cands, tasks, config=cfg, rejected=rej, reporter=again, restart=True)
    assert again.decisions == N and rej.read_bytes() == ref_rej.read_bytes()


def test_several_jobs_write_the_same_files_in_candidate_order(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    cands = mined(make_repo, tmp_path)
    cfg = load_config()
    ref_tasks, ref_rej = tmp_path / "ref" / "tasks.jsonl", tmp_path / "ref" / "rejected.jsonl"
    run_admit(cands, ref_tasks, config=cfg, rejected=ref_rej)
    tasks, rej = tmp_path / "jobs" / "tasks.jsonl", tmp_path / "jobs" / "rejected.jsonl"
    seen = RecordingReporter()
    result = run_admit(cands, tasks, config=cfg, rejected=rej, jobs=3, reporter=seen)
    assert result.summary()["rejected"] == {"gold_refused": N}
    assert rej.read_bytes() == ref_rej.read_bytes() and tasks.read_bytes() == b""
    assert [r.instance_id for r in result.rejected] == [
        c.instance_id for c in read_candidates(cands)
    ]
    assert len([n for n in seen.notes if n.endswith(": started")]) == N


def test_files_that_cannot_be_resumed_are_refused(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    cands = mined(make_repo, tmp_path)
    cfg = load_config()
    tasks, rej = tmp_path / "tasks.jsonl", tmp_path / "rejected.jsonl"
    tasks.write_text('{"instance_id": "x", "record_type": "task"}\n')
    with pytest.raises(UsageError, match="other --format"):
        run_admit(cands, tasks, config=cfg, rejected=rej, swebench_format=True)
    tasks.write_text('{"instance_id": "x"}\nnot json\n{"instance_id": "y"}\n')
    with pytest.raises(InputError, match="not valid JSON") as err:
        run_admit(cands, tasks, config=cfg, rejected=rej)
    assert "--restart" in err.value.hint
    with pytest.raises(UsageError, match="one file"):
        run_admit(cands, tasks, config=cfg, rejected=tasks)
    run_admit(cands, tasks, config=cfg, rejected=rej, restart=True)
    assert lines(tasks) == [] and len(lines(rej)) == N


def test_cli_json_summary_on_stdout_progress_on_stderr(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    cands = mined(make_repo, tmp_path)
    tasks = tmp_path / "tasks.jsonl"

    def admit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "swe_forge", "admit", str(cands), "-o", str(tasks), "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )

    out = admit()
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["rejected"] == {"gold_refused": N} and summary["resumed"] == 0
    assert f"[{N}/{N}] " in out.stderr and "rejected (gold_refused)" in out.stderr
    # Rejections went beside the tasks (a resumed run needs them).
    assert len(lines(tmp_path / "tasks-rejected.jsonl")) == N
    out = admit()
    assert out.returncode == 0 and json.loads(out.stdout)["resumed"] == N
    assert f"{N} already decided on file" in out.stderr and "started" not in out.stderr


def test_scope_of_a_mined_candidate(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    repo = make_repo()
    # A test patch that imports a new name at the top of an existing module (so none of its
    # tests can be collected before the fix) and adds one test.
    repo.pr(
        1,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
            "tests/test_core.py": (
                "from pkg.core import add, mul\n\n\ndef test_add_zero():\n    assert add(1, 0) == 1\n"
                "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
            ),
        },
        "Add mul()",
        "There is no way to multiply two numbers; add mul(a, b).",
    )
    out = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    (cand,) = read_candidates(out)
    scope = Admitter(load_config()).scope(cand)
    assert scope.modules == {"tests/test_core.py"} and not scope.unanalysed
    assert scope.covers("tests/test_core.py::test_mul")
    assert not scope.covers("tests/test_core.py::test_add_zero")


def test_thin_statement_is_written_from_the_failures(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    from dataclasses import asdict, replace

    from swe_forge.gates.gate import GateVerdict
    from swe_forge.gates.runner import RunResult

    repo = make_repo()
    repo.pr(
        1,
        {
            "pkg/core.py": "def mul(a, b):\n    return a * b\n",
            "tests/test_core.py": (
                "from pkg.core import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
            ),
        },
        "Fix mul",
        "",
    )
    out = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    (cand,) = read_candidates(out)
    assert cand.statement_quality is not None and "thin" in cand.statement_quality.flags
    test = "tests/test_core.py::test_mul"
    runs = [
        RunResult("before", 0, 1, "ok", 1, 0.1, {test: "failed"}, messages={test: "assert 5 == 6"}),
        RunResult("after", 0, 1, "ok", 0, 0.1, {test: "passed"}),
    ]
    verdict = GateVerdict(True, fail_to_pass=[test], runs=runs)
    text, audit = Admitter(load_config())._statement(cand, verdict)
    assert text.startswith(cand.problem_statement.strip()) and test in text
    assert "assert 5 == 6" in text
    assert audit["source"] == "failure_symptoms" and audit["original"] == cand.problem_statement
    assert audit["quality"]["generated"] is True and audit["messages"] == 1
    # With `keep`, or a statement that is not thin, the PR's text stays.
    cfg = load_config()
    keep = replace(cfg, admit=replace(cfg.admit, thin_statements="keep"))
    assert Admitter(keep)._statement(cand, verdict)[0] == cand.problem_statement
    rich = replace(cand, statement_quality=replace(cand.statement_quality, flags=()))
    assert Admitter(cfg)._statement(rich, verdict) == (
        cand.problem_statement,
        {
            "source": "pull_request",
            "quality": asdict(rich.statement_quality),
        },
    )


def test_tests_reading_the_date_are_recorded(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(
        1,
        {
            "pkg/core.py": "def year(d):\n    return d.year\n",
            "tests/test_core.py": (
                "import datetime\nfrom pkg.core import year\n\n\n"
                "def test_year():\n    assert year(datetime.date.today()) >= 2024\n"
            ),
        },
        "Add year()",
        "There is no way to get a date's year; add year(d).",
    )
    out = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    (cand,) = read_candidates(out)
    got = Admitter(load_config()).clock(cand)
    assert got["sites"] == ["tests/test_core.py:6 date.today()"] and not got["controlled"]


def test_a_candidate_s_base_files_are_read_from_git_once(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo()
    repo.pr(
        1,
        {
            "pkg/core.py": "def year(d):\n    return d.year\n",
            "tests/test_core.py": (
                "import datetime\nfrom pkg.core import year\n\n\n"
                "def test_year():\n    assert year(datetime.date.today()) >= 2024\n"
            ),
        },
        "Add year()",
        "There is no way to get a date's year; add year(d).",
    )
    repo.pr(
        2,
        {
            "pkg/core.py": "def year(d):\n    return int(d.year)\n",
            "tests/test_core.py": (
                "import datetime\nfrom pkg.core import year\n\n\n"
                "def test_year():\n    assert year(datetime.date.today()) >= 2024\n\n\n"
                "def test_int():\n    assert isinstance(year(datetime.date.today()), int)\n"
            ),
        },
        "year() returns an int",
        "year() returns whatever the date holds; make it an int.",
    )
    out = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], out, config=load_config(), options=MineOptions())
    first, second = sorted(read_candidates(out), key=lambda c: c.provenance.pr_number)
    admitter = Admitter(load_config())
    # Detection, scope and the clock audit all ask about the same base files.
    assert admitter.ecosystem(second).name == "python"
    scope = admitter.scope(second)
    admitter.clock(second)
    admitter.scope(second)
    view = admitter.base_view(second)
    assert view is not None and view.commit == second.base_commit
    assert scope.covers("tests/test_core.py::test_int")
    # Each file went to git once, however many questions read it.
    assert view.reads == len(view._files)
    assert view._files["tests/test_core.py"] is not None
    # The next candidate gets its own base tree, never the previous one's.
    other = admitter.base_view(first)
    assert other is not view and other is not None and other.commit == first.base_commit
    assert b"test_year" in (view.read("tests/test_core.py") or b"")
    assert b"test_year" not in (other.read("tests/test_core.py") or b"")
