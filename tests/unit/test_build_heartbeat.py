"""A long image build says where it is, spaced out."""

from __future__ import annotations

from swe_forge.commands.images import _Heartbeat
from swe_forge.progress import RecordingReporter


def test_heartbeat_names_candidate_image_and_step() -> None:
    rep = RecordingReporter()
    beat = _Heartbeat(rep, every=0.0)
    beat.begin("acme__w-7")
    beat.step("swe-forge-env:abc", "Step 3/9 : RUN npm ci")
    (note,) = rep.notes
    assert note.startswith("acme__w-7: ") and "swe-forge-env:abc" in note and "Step 3/9" in note


def test_heartbeat_is_spaced() -> None:
    rep = RecordingReporter()
    beat = _Heartbeat(rep, every=3600.0)
    beat.begin("acme__w-7")
    for k in range(1, 10):
        beat.step("t", f"Step {k}/9 : RUN x")
    assert rep.notes == []
