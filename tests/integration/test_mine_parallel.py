"""Mining with worker processes gives byte-identical output to mining in one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.example import create_example
from swe_forge.mining import miner
from swe_forge.mining.miner import MineOptions
from swe_forge.mining.prs import PullRequest


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_example(tmp_path_factory.mktemp("example") / "textkit").path


def _mine(
    repo: Path, out_dir: Path, jobs: int, max_candidates: int | None = None
) -> tuple[bytes, bytes, dict[str, object]]:
    out, rej = out_dir / f"c{jobs}.jsonl", out_dir / f"r{jobs}.jsonl"
    result = run_mine(
        [str(repo)],
        out,
        config=load_config(),
        options=MineOptions(jobs=jobs, max_candidates=max_candidates),
        rejected=rej,
    )
    summary = result.summary()
    summary.pop("seconds")
    summary.pop("output")
    summary.pop("rejected_output")
    return out.read_bytes(), rej.read_bytes(), summary


@pytest.mark.parametrize("max_candidates", [None, 1, 3])
def test_workers_do_not_change_the_output(
    example: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    max_candidates: int | None,
) -> None:
    # Chunks of two PRs: the example's PRs are spread over several workers and chunks, and
    # results come back out of order unless they are put back in walk order.
    monkeypatch.setattr(miner, "BUILD_CHUNK", 2)
    pools: list[object] = []
    workers = miner.Miner._workers

    def spy(self: miner.Miner, jobs: int) -> object:
        pool = workers(self, jobs)
        pools.append(pool)
        return pool

    monkeypatch.setattr(miner.Miner, "_workers", spy)
    one = _mine(example, tmp_path, 1, max_candidates)
    assert pools == [None]
    three = _mine(example, tmp_path, 3, max_candidates)
    # The workers really ran (a pool is not started when other threads are alive).
    assert len(pools) == 2 and pools[1] is not None
    assert one == three
    cands, rejs, summary = one
    assert cands.count(b"\n") == (max_candidates or 7)
    if max_candidates is None:
        assert summary["prs_found"] == 14 and rejs.count(b"\n") == 7
    else:
        # The budget cuts the walk at the same commit in both runs.
        assert isinstance(summary["commits_scanned"], int) and summary["commits_scanned"] < 14


def test_jobs_must_not_be_negative(tmp_path: Path) -> None:
    from swe_forge.errors import ConfigError

    cfg = tmp_path / "c.yaml"
    cfg.write_text("mine:\n  jobs: -1\n")
    with pytest.raises(ConfigError, match=r"mine\.jobs"):
        load_config(cfg)


def test_jobs_do_not_change_the_config_hash(tmp_path: Path) -> None:
    # provenance.config_hash is in every candidate; resumed and merged runs compare it.
    digests = set()
    for jobs in (0, 1, 4):
        cfg = tmp_path / f"j{jobs}.yaml"
        cfg.write_text(f"mine:\n  jobs: {jobs}\n")
        digests.add(load_config(cfg).digest())
    assert len(digests) == 1
    cfg = tmp_path / "other.yaml"
    cfg.write_text("mine:\n  max_files_changed: 7\n")
    assert load_config(cfg).digest() not in digests


def test_an_error_past_the_budget_cut_is_not_raised(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers build PRs ahead of the walk; an error in one the walk never reaches (the
    # budget is spent first) must not fail the run, and one it reaches must, for any --jobs.
    build = miner.Miner._build

    def failing(
        self: miner.Miner, job: object, repo: object, pr: PullRequest, *rest: object
    ) -> object:
        if pr.number == 9:
            raise RuntimeError("boom on PR 9")
        return build(self, job, repo, pr, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(miner.Miner, "_build", failing)
    monkeypatch.setattr(miner, "BUILD_CHUNK", 2)
    for jobs in (1, 3):
        cands, _rejs, _summary = _mine(example, tmp_path, jobs, max_candidates=1)
        assert cands.count(b"\n") == 1
        with pytest.raises(RuntimeError, match="boom on PR 9"):
            _mine(example, tmp_path, jobs)


def test_a_dead_worker_is_an_error_not_a_hang(example: Path, tmp_path: Path) -> None:
    # A worker killed mid-chunk (the OOM killer, a crash in a C library) must end the run
    # with a clear error; multiprocessing.Pool would wait for its result forever.
    script = tmp_path / "die.py"
    script.write_text(
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from swe_forge.commands.mine import run_mine\n"
        "from swe_forge.config import load_config\n"
        "from swe_forge.errors import SweForgeError\n"
        "from swe_forge.mining import miner\n"
        "parent = os.getpid()\n"
        "def die(self, *args):\n"
        "    if os.getpid() != parent:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "miner.Miner._build = die\n"
        "out = Path(sys.argv[2])\n"
        "try:\n"
        "    run_mine([sys.argv[1]], out, config=load_config(),\n"
        "             options=miner.MineOptions(jobs=2))\n"
        "except SweForgeError as exc:\n"
        "    print('error:', exc, '| hint:', exc.hint)\n"
        "    print('partial output left:', out.exists())\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script), str(example), str(tmp_path / "c.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "a mining worker process died" in proc.stdout and "--jobs" in proc.stdout
    assert "partial output left: False" in proc.stdout


def test_batch_mining_uses_worker_processes(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Threads would share one interpreter lock; batch mining goes through the worker
    # processes instead, forked before the batch starts any thread, with the same output.
    from swe_forge.batch.run import BatchOptions, run_batch

    started: list[bool] = []
    start = miner.Miner.start_workers

    def spy(self: miner.Miner, jobs: int) -> bool:
        ok = start(self, jobs)
        started.append(ok)
        return ok

    monkeypatch.setattr(miner.Miner, "start_workers", spy)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{example} acme/textkit\n")
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"run{jobs}"
        run_batch(listing, out, config=load_config(), options=BatchOptions(jobs=jobs, until="mine"))
        outs.append((out / "candidates.jsonl").read_bytes())
    assert started == [False, True]
    assert outs[0] == outs[1] and outs[0].count(b"\n") == 7
