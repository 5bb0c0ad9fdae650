"""Batch runs without Docker (mining stage): sharding, resume after SIGKILL, merge, sharing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swe_forge.batch.shard import parse_shard, select
from swe_forge.errors import UsageError
from tests.conftest import RepoBuilder


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_sharding_is_a_balanced_partition(n: int) -> None:
    rng = random.Random(n)
    units = [f"repo-{rng.randrange(10**9)}" for _ in range(rng.randrange(1, 200))]
    units = list(dict.fromkeys(units))
    shards = [select(units, str, k, n) for k in range(1, n + 1)]
    seen = [u for s in shards for u in s]
    assert sorted(seen) == sorted(units)  # every unit in exactly one shard
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    # Deterministic, and independent of the input order.
    assert [select(list(reversed(units)), str, k, n) for k in range(1, n + 1)] == [
        list(reversed(s)) for s in shards
    ]


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "a/b", "1", "1/2/3"])
def test_bad_shard_specs(spec: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(spec)


def many_repos(make_repo: Callable[..., RepoBuilder], tmp_path: Path, count: int = 8) -> Path:
    lines = []
    for i in range(count):
        repo = make_repo(f"proj{i}")
        for n in range(1, 4):
            repo.pr(
                n,
                {
                    "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}  # {i}\n",
                    f"tests/test_{n}.py": f"def test_{n}():\n    pass\n",
                },
                f"Fix {n} of {i}",
            )
        repo.pr(4, {"docs/x.md": f"doc {i}\n"}, "Docs")
        lines.append(f"{repo.path}  acme/proj{i}")
    listing = tmp_path / "repos.txt"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swe_forge", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def outputs(folder: Path) -> dict[str, bytes]:
    return {
        name: (folder / name).read_bytes()
        for name in ("candidates.jsonl", "rejected.jsonl", "tasks.jsonl")
    }


def test_killed_and_resumed_equals_uninterrupted(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    listing = many_repos(make_repo, tmp_path)
    env = dict(os.environ, SWE_FORGE_CACHE=str(tmp_path / "cache"))
    straight = tmp_path / "straight"
    done = cli("run", str(listing), "--out", str(straight), "--until", "mine", "-q", env=env)
    assert done.returncode == 20, done.stderr  # done, with rejections (the docs PRs)
    summary = json.loads((straight / "summary.json").read_text())
    assert summary["candidates"] == 24 and summary["repos"] == 8
    killed = tmp_path / "killed"
    rng = random.Random(7)
    kills = 0
    for _ in range(12):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "swe_forge",
                "run",
                str(listing),
                "--out",
                str(killed),
                "--until",
                "mine",
                "-q",
                "--jobs",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        time.sleep(rng.uniform(0.05, 1.2))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        # Whatever was finished is whole: every unit file parses.
        for unit in (
            (killed / "units" / "mine").glob("*.jsonl")
            if (killed / "units" / "mine").exists()
            else []
        ):
            for line in unit.read_text().splitlines():
                json.loads(line)
    assert kills >= 3
    final = cli("run", str(listing), "--out", str(killed), "--until", "mine", "-q", env=env)
    assert final.returncode == 20, final.stderr
    assert outputs(killed) == outputs(straight)
    # Finished work is not redone: a further run finds everything done.
    again = cli("run", str(listing), "--out", str(killed), "--until", "mine", env=env)
    assert "mine: 8 units, 8 done already" in again.stderr


def test_shards_merge_to_the_whole(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    listing = many_repos(make_repo, tmp_path, count=5)
    env = dict(os.environ, SWE_FORGE_CACHE=str(tmp_path / "cache"))
    whole = tmp_path / "whole"
    cli("run", str(listing), "--out", str(whole), "--until", "mine", "-q", env=env)
    parts = []
    for k in (1, 2, 3):
        part = tmp_path / f"shard{k}"
        res = cli(
            "run",
            str(listing),
            "--out",
            str(part),
            "--until",
            "mine",
            "--shard",
            f"{k}/3",
            "-q",
            env=env,
        )
        assert res.returncode in (0, 20), res.stderr
        parts.append(str(part))
    merged = tmp_path / "merged"
    res = cli("merge", *parts, "--out", str(merged), env=env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["complete"] is True
    assert outputs(merged) == outputs(whole)
    # A shard made with another configuration is refused.
    cfg = tmp_path / "other.yaml"
    cfg.write_text("mine:\n  max_files_changed: 3\n")
    odd = tmp_path / "odd"
    cli(
        "--config",
        str(cfg),
        "run",
        str(listing),
        "--out",
        str(odd),
        "--until",
        "mine",
        "--shard",
        "1/3",
        "-q",
        env=env,
    )
    res = cli("merge", parts[1], parts[2], str(odd), "--out", str(tmp_path / "bad"), env=env)
    assert res.returncode == 2 and "config_hash" in res.stderr


def test_rerun_with_other_settings_is_refused(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    listing = many_repos(make_repo, tmp_path, count=1)
    out = tmp_path / "out"
    cli("run", str(listing), "--out", str(out), "--until", "mine", "-q")
    res = cli("run", str(listing), "--out", str(out), "--until", "mine", "--shard", "1/2", "-q")
    assert res.returncode == 2 and "other settings" in res.stderr


def test_concurrent_runs_share_a_cache(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    # Clone URLs: both runs clone into (and read from) one cache at the same time.
    repos = [make_repo(f"shared{i}") for i in range(4)]
    for i, repo in enumerate(repos):
        repo.pr(
            1,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b  # {i}\n",
                "tests/test_x.py": "def test_x():\n    pass\n",
            },
            "Fix",
        )
    listing = tmp_path / "urls.txt"
    listing.write_text("".join(f"file://{r.path}  acme/shared{i}\n" for i, r in enumerate(repos)))
    env = dict(os.environ, SWE_FORGE_CACHE=str(tmp_path / "shared-cache"))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "swe_forge",
                "run",
                str(listing),
                "--out",
                str(tmp_path / f"c{i}"),
                "--until",
                "mine",
                "-q",
                "--jobs",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for i in range(3)
    ]
    codes = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(code == 0 for code, _ in codes), codes
    first = outputs(tmp_path / "c0")
    assert all(outputs(tmp_path / f"c{i}") == first for i in (1, 2))
    # The cache is intact: one mirror per URL, no half-finished clone left behind.
    mirrors = sorted((tmp_path / "shared-cache" / "repos").glob("*.git"))
    assert len(mirrors) == 4 and not list((tmp_path / "shared-cache" / "repos").glob("*.partial"))
    for m in mirrors:
        assert (
            subprocess.run(
                ["git", "--git-dir", str(m), "fsck", "--no-dangling"], capture_output=True
            ).returncode
            == 0
        )


def test_unreachable_remote_is_an_infrastructure_error(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    # One remote cannot be fetched: the others are still mined, the run exits 21 (run it
    # again), and the missing unit is not marked done.
    good = make_repo("good")
    good.pr(
        1,
        {
            "pkg/core.py": "def add(a, b):\n    return a + b\n",
            "tests/test_x.py": "def test_x():\n    pass\n",
        },
        "Fix",
    )
    listing = tmp_path / "repos.txt"
    listing.write_text(
        f"file://{tmp_path / 'missing.git'}  acme/missing\nfile://{good.path}  acme/good\n"
    )
    env = dict(os.environ, SWE_FORGE_CACHE=str(tmp_path / "cache"))
    out = tmp_path / "out"
    done = cli("run", str(listing), "--out", str(out), "--until", "mine", "-q", "-j", "2", env=env)
    assert done.returncode == 21, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["candidates"] == 1
    assert any("acme/missing" in e for e in summary["infra_errors"]), summary
    again = cli("run", str(listing), "--out", str(out), "--until", "mine", env=env)
    assert "mine: 2 units, 1 done already" in again.stderr


def test_shard_by_candidate_balances_one_large_repository(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One repository, three shards: by repository one shard gets all the work (and the
    summary says so); by candidate each shard admits a third of the candidates, no candidate
    twice, and the merged folder is the whole run."""
    from swe_forge import engine
    from swe_forge.batch import run as batch_run
    from swe_forge.batch.run import BatchOptions, merge_runs, run_batch
    from swe_forge.config import load_config

    class NoEngine:
        def remove_containers(self, label: str) -> None:
            pass

        def reap_orphans(self) -> None:
            pass

    admitted: dict[str, list[str]] = {}

    def fake_admit(state, config, options, reporter, result, todo, images, labels):  # type: ignore[no-untyped-def]
        # A stand-in for Docker admission: the decision of each candidate is a rejection
        # naming the shard that made it, saved as a real one is.
        admitted[str(state.root)] = [c.instance_id for c in todo]
        for c in todo:
            line = json.dumps(
                {
                    "record_type": "rejection",
                    "stage": "admit",
                    "repo": c.repo,
                    "instance_id": c.instance_id,
                    "pr_number": c.provenance.pr_number,
                    "reason": "stand_in",
                    "detail": state.root.name,
                }
            )
            batch_run._record(state, reporter, c.instance_id, line)

    monkeypatch.setattr(engine, "Engine", NoEngine)
    monkeypatch.setattr(batch_run, "_admit_here", fake_admit)
    repo = make_repo("big")
    for n in range(1, 8):
        repo.pr(
            n,
            {
                "pkg/core.py": f"def add(a, b):\n    return a + b + {n} - {n}\n",
                f"tests/test_{n}.py": f"def test_{n}():\n    pass\n",
            },
            f"Fix {n}",
        )
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{repo.path}  acme/big\n")
    config = load_config()

    by_repo = run_batch(listing, tmp_path / "r1", config=config, options=BatchOptions(shard=(1, 3)))
    assert "--shard-by candidate" in by_repo.summary()["notes"][0]

    parts = []
    for k in (1, 2, 3):
        part = tmp_path / f"c{k}"
        options = BatchOptions(shard=(k, 3), shard_by="candidate")
        result = run_batch(listing, part, config=config, options=options)
        assert result.candidates == 7 and result.shard_candidates == len(admitted[str(part)])
        parts.append(part)
    slices = [admitted[str(p)] for p in parts]
    assert sorted(len(s) for s in slices) == [2, 2, 3]
    every = [i for s in slices for i in s]
    assert len(every) == len(set(every)) == 7
    summary = merge_runs(parts, tmp_path / "merged")
    assert summary["complete"] is True and summary["rejected"]["stand_in"] == 7
    made_by = {
        json.loads(line)["instance_id"]: json.loads(line)["detail"]
        for line in (tmp_path / "merged" / "rejected.jsonl").read_text().splitlines()
        if json.loads(line)["reason"] == "stand_in"
    }
    assert {i: made_by[i] for i in every} == {
        i: p.name for p, s in zip(parts, slices, strict=True) for i in s
    }
    # Mining the same for every shard is the point of slicing admission only.
    with pytest.raises(UsageError, match="until mine"):
        run_batch(
            listing,
            tmp_path / "m",
            config=config,
            options=BatchOptions(shard=(1, 3), shard_by="candidate", until="mine"),
        )
