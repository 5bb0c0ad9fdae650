"""The CPU ceiling of a container that runs untrusted code (engine.locked_options)."""

from __future__ import annotations

import os

import pytest

from swe_forge.engine import Engine, Limits


def _options(cpus: float) -> dict[str, object]:
    engine = object.__new__(Engine)  # no engine needed to compute options
    return engine.locked_options(Limits(cpus=cpus), user="1000:1000", working_dir="/testbed")


def test_the_ceiling_is_the_setting_within_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert _options(2.0)["nano_cpus"] == 2_000_000_000
    assert _options(0.5)["nano_cpus"] == 500_000_000
    # The engine refuses more CPUs than the machine has: cut to the machine.
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert _options(2.0)["nano_cpus"] == 1_000_000_000


def test_verification_runs_with_admission_s_allowance() -> None:
    from swe_forge.config import load_config

    cfg = load_config()
    assert cfg.verify.cpus == cfg.admit.cpus == 2.0
