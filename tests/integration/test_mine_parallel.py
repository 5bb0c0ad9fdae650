"""Mining with worker processes gives byte-identical output to mining in one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.example import create_example
from swe_forge.mining import miner
from swe_forge.mining.miner import MineOptions


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
    start = miner._start_pool

    def spy(ctx: miner._BuildContext, jobs: int) -> object:
        pool = start(ctx, jobs)
        pools.append(pool)
        return pool

    monkeypatch.setattr(miner, "_start_pool", spy)
    one = _mine(example, tmp_path, 1, max_candidates)
    assert pools == []
    three = _mine(example, tmp_path, 3, max_candidates)
    # The workers really ran (a pool is not started when other threads are alive).
    assert len(pools) == 1 and pools[0] is not None
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
