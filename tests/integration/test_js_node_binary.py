"""An official Node build from the npm registry (engines beyond Debian's Node): fetched with
the host's npm, checked against its pinned integrity, and runnable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swe_forge.ecosystems.js import deps
from swe_forge.ecosystems.js.toolchain import NODE_BINARIES
from swe_forge.errors import BuildError


def test_an_official_node_is_fetched_checked_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    version, integrity = NODE_BINARIES[22]
    home = deps.fetch_node(version, integrity, tmp_path)
    out = subprocess.run(
        [str(home / "bin" / "node"), "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"v{version}"
    assert (home / "LICENSE").is_file()
    # Fetched once per machine: a second call does not ask npm again.
    monkeypatch.setattr(deps, "_npm", lambda *a, **k: pytest.fail("fetched twice"))
    assert deps.fetch_node(version, integrity, tmp_path) == home
    monkeypatch.undo()
    # Another archive than the pinned one is refused, and nothing is left behind for it.
    wrong = "sha512-" + "A" * 86 + "=="
    with pytest.raises(BuildError, match="is not the pinned one"):
        deps.fetch_node(version, wrong, tmp_path / "other")
    assert not (tmp_path / "other" / "node-binaries" / f"node-{version}").exists()
