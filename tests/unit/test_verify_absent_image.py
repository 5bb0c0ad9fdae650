"""A task whose image is not on this engine and pins no registry is refused before grading
with exit 16 (it was retried as an infrastructure error and ended with exit 21, "run again",
which can never help)."""

from __future__ import annotations

import pytest

from swe_forge.commands.verify import Prediction, _provide
from swe_forge.errors import DigestError
from swe_forge.progress import NullReporter
from swe_forge.records import TaskManifest
from tests import record_samples as samples


class EmptyEngine:
    """An engine that has no image at all (the one call provide() makes of it)."""

    def image(self, ref: str) -> None:
        return None


def test_absent_unpinned_image_is_refused_before_grading() -> None:
    task = TaskManifest.from_dict(samples.task())
    assert task.registry_pins() is None
    preds = [Prediction(task.instance_id, "m", "")]
    with pytest.raises(DigestError, match="have no image on this engine") as err:
        _provide(EmptyEngine(), {task.instance_id: task}, preds, NullReporter())  # type: ignore[arg-type]
    assert err.value.exit_code == 16 and task.instance_id in str(err.value)
    assert "images import" in err.value.hint
