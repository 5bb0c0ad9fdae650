"""Every registered adapter answers the whole Ecosystem protocol: no optional methods."""

from __future__ import annotations

import inspect

import pytest

from swe_forge.ecosystems import ECOSYSTEM_NAMES, Ecosystem, ecosystem_named
from swe_forge.images.build import ImageRecord

ADAPTERS = [n for n in ECOSYSTEM_NAMES if n != "python"]

PROTOCOL_METHODS = sorted(
    name
    for name, member in inspect.getmembers(Ecosystem, inspect.isfunction)
    if not name.startswith("_")
)


def test_the_protocol_has_the_methods_stages_call() -> None:
    # A guard on the guard: the lists below are read from the protocol itself.
    assert {"runner", "runner_for", "build", "run_job", "scope", "capabilities"} <= set(
        PROTOCOL_METHODS
    )


@pytest.mark.parametrize("name", ADAPTERS)
def test_each_adapter_defines_every_protocol_method(name: str) -> None:
    eco = ecosystem_named(name)
    missing = [m for m in PROTOCOL_METHODS if not callable(getattr(type(eco), m, None))]
    assert missing == []
    for m in PROTOCOL_METHODS:
        # Defined by the adapter, not inherited from the protocol's empty body.
        assert getattr(type(eco), m) is not getattr(Ecosystem, m), (name, m)


@pytest.mark.parametrize("name", ADAPTERS)
def test_runner_for_an_image_record_runs_its_project(name: str) -> None:
    eco = ecosystem_named(name)
    rec = ImageRecord("o__p-1", "o/p", "0" * 40)
    rec.project_name = "example.com/p"
    runner = eco.runner_for(rec)
    assert type(runner) is type(eco.runner("example.com/p"))
