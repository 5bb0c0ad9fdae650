"""A JS project with a dependency fetched from a git host: no git host is reachable here, so
resolution leaves it out and installs the rest from the registry (real npm, real packages)."""

from __future__ import annotations

import json
from pathlib import Path

from swe_forge.ecosystems.js import deps


def test_resolution_goes_on_without_an_unreachable_git_dependency(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    pkg = {
        "name": "m",
        "version": "1.0.0",
        "devDependencies": {"ms": "2.1.3", "zuul-ngrok": "nolanlawson/zuul-ngrok#patch-1"},
    }
    (tree / "package.json").write_text(json.dumps(pkg))
    common = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    done = deps.install_without_git_hosts(tree, common, tmp_path / "cache", "2024-01-01")
    assert done.endswith("git dependencies left out (no git host is reachable): zuul-ngrok")
    assert json.loads((tree / "node_modules" / "ms" / "package.json").read_text())["version"] == (
        "2.1.3"
    )
    assert not (tree / "node_modules" / "zuul-ngrok").exists()
