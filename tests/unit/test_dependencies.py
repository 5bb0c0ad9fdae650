"""Every dependency pyproject.toml declares is used by swe-forge's own code."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: How each declared distribution shows up in the code: its import name, or (uv) the
#: executable the code runs.
USED_AS = {
    "typer": r"^\s*(import|from) typer\b",
    "rich": r"^\s*(import|from) rich\b",
    "pygit2": r"^\s*(import|from) pygit2\b",
    "docker": r"^\s*(import|from) docker\b",
    "unidiff": r"^\s*(import|from) unidiff\b",
    "license-expression": r"^\s*(import|from) license_expression\b",
    "pyaskalono": r"^\s*(import|from) askalono\b",
    "pyyaml": r"^\s*(import|from) yaml\b",
    "packaging": r"^\s*(import|from) packaging\b",
    "poetry-core": r"^\s*(import|from) poetry\.core\b",
    "uv": r"Path\(sys\.executable\)\.parent / \"uv\"",
    "pydantic": r"^\s*(import|from) pydantic\b",
}


def test_every_declared_dependency_is_used() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in declared}
    assert names == set(USED_AS), "a dependency was added or dropped: say how it is used"
    code = "\n".join(p.read_text() for p in (ROOT / "swe_forge").rglob("*.py"))
    unused = [n for n, pattern in USED_AS.items() if not re.search(pattern, code, re.M)]
    assert unused == []
