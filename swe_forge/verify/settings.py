"""What a verification is configured with (limits, clocks, checks), its statuses, and what
admission's calibration learns for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swe_forge.config import VerifyConfig
from swe_forge.engine import Limits
from swe_forge.gates.sandbox import (
    SandboxSettings,
)
from swe_forge.records import VerifyResult

STATUSES = (
    "resolved",
    "unresolved",
    "invalid_patch",
    "apply_failed",
    "timeout",
    "resource_limit",
    "tamper_detected",
    "infra_error",
)


@dataclass(frozen=True)
class VerifySettings:
    """Limits, clocks and checks of a verification."""

    timeout_seconds: float = 900.0
    limits: Limits = field(default_factory=Limits)
    tmpfs_size: str = "512m"
    testbed_size: str = "2g"
    inodes: int = 400_000
    infra_retries: int = 2
    capability_scope: str = "repository"
    canary_limit: int = 40
    #: Per test (0: none): a test past it fails alone (the run's own limit still holds).
    test_timeout_seconds: float = 300.0
    #: Decoy twins per verification (see :func:`plan_twins`).
    decoys: int = 2

    @classmethod
    def from_config(cls, v: VerifyConfig) -> VerifySettings:
        """The settings of ``configs/default.yaml``'s ``verify`` section."""
        limits = Limits(
            memory=v.memory, pids=v.pids, cpus=v.cpus, nofile=v.nofile, fsize_bytes=v.fsize_bytes
        )
        return cls(
            v.timeout_seconds,
            limits,
            v.tmpfs_size,
            v.testbed_size,
            v.inodes,
            v.infra_retries,
            v.capability_scope,
            v.canary_limit,
            v.test_timeout_seconds,
            v.decoys,
        )

    def sandbox(self) -> SandboxSettings:
        """The judge's container of these settings."""
        return SandboxSettings(
            limits=self.limits,
            testbed_size=self.testbed_size,
            tmp_size=self.tmpfs_size,
            home_size=self.tmpfs_size,
            inodes=self.inodes,
        )


@dataclass
class Calibration:
    """What admission learns by grading the gold patch once with every canary and a scan of
    the whole base tree: the canaries a correct fix fails, and the capabilities in use."""

    #: The decoys the gold patch fails: [{"test", "site", "seed"}, ...] (see verify/twins.py).
    armed: list[dict[str, Any]] = field(default_factory=list)
    made: int = 0
    disarmed: list[dict[str, Any]] = field(default_factory=list)
    base_capabilities: dict[str, list[str]] = field(default_factory=dict)
    gold_capabilities: list[str] = field(default_factory=list)
    result: VerifyResult | None = None
    #: Why every canary was dropped: with them all run before the real tests, a real test
    #: failed that passes without them (a canary stops its test before the test's own
    #: clean-up and leaves state behind). Empty when they were kept.
    leaked: str = ""
    #: Set for the second calibration run, the one without canaries.
    without_canaries: bool = False
    #: Decoys the gold patch fails that the base code passes (its own wrong answer is the
    #: decoy's value), dropped: an unfixed tree would be called tampering with them.
    base_passed: int = 0
    #: Decoys kept although the base code passes them (all of the task's were such).
    base_passes_kept: int = 0
