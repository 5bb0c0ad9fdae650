"""Fixtures for tests that need the real Docker engine (marker: docker).

They never skip: without an engine they fail, so a CI run without Docker is red. Locally,
deselect them with ``-m "not docker"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from swe_forge.commands.admit import run_admit
from swe_forge.commands.images import run_build
from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.engine import Engine
from swe_forge.example import create_example
from swe_forge.mining.miner import MineOptions


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()  # raises DockerError (a failure, not a skip) without an engine


@dataclass
class ExampleImages:
    root: Path
    repo: Path
    candidates: Path
    images: Path
    records: dict[str, dict[str, object]]


@pytest.fixture(scope="session")
def example_images(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ExampleImages]:
    root = tmp_path_factory.mktemp("docker-example")
    info = create_example(root / "textkit")
    cands = root / "candidates.jsonl"
    run_mine([str(info.path)], cands, config=load_config(), options=MineOptions())
    images = root / "images.jsonl"
    run_build(cands, images, config=load_config())
    records = {json.loads(x)["instance_id"]: json.loads(x) for x in images.read_text().splitlines()}
    yield ExampleImages(root, info.path, cands, images, records)


@dataclass
class ExampleTasks:
    tasks: Path
    rejected: Path


@pytest.fixture(scope="session")
def example_tasks(example_images: ExampleImages) -> ExampleTasks:
    """The example's candidates admitted once (full manifests), for every module that reads
    tasks without admitting them itself."""
    tasks = example_images.root / "tasks.jsonl"
    rejected = example_images.root / "admit-rejected.jsonl"
    run_admit(
        example_images.candidates,
        tasks,
        config=load_config(),
        rejected=rejected,
        images_path=example_images.images,
    )
    return ExampleTasks(tasks, rejected)
