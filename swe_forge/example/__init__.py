"""The embedded example repository: ``swe-forge/textkit``, built on demand by real git.

``textkit`` is a small pure-Python project (``src/textkit``, a pytest suite, MIT licence)
whose history is an initial commit followed by pull requests merged into ``main`` with
merge commits and squashes. Each PR exercises one path of the pipeline: good bug fixes and a
feature that become tasks, docs/tests/CI-only PRs, a PR whose test already passes, a flaky
test, a binary fixture, a fix without tests, and, after a relicensing to GPL-3.0, good fixes
that must be refused on licence. ``expected.json`` (see :func:`load_expectations`) says what
each stage must conclude about every PR.

Public API: :func:`create_example`, :class:`ExampleInfo`, :func:`load_expectations`.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from swe_forge.example.build import (
    COMMIT_INTERVAL,
    DEFAULT_BRANCH,
    EXAMPLE_REMOTE_URL,
    EXAMPLE_REPO,
    START,
    ExampleInfo,
    create_example,
)

__all__ = [
    "COMMIT_INTERVAL",
    "DEFAULT_BRANCH",
    "EXAMPLE_REMOTE_URL",
    "EXAMPLE_REPO",
    "START",
    "ExampleInfo",
    "create_example",
    "load_expectations",
]


def load_expectations() -> dict[str, Any]:
    """Return the parsed ``expected.json``: what mining and admission must conclude per PR.

    Shape: ``{"schema_version": 1, "repo", "instance_prefix", "prs": [{"number", "title",
    "kind", "mine": {"candidate": bool, "reason"?}, "admit"?: {"admitted": bool,
    "FAIL_TO_PASS"? | "reason"?}}]}``; ``admit`` is present for mining candidates only.
    """
    raw = resources.files(__name__).joinpath("expected.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(raw)
    return data
