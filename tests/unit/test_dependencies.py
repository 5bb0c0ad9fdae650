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
    # The grammars are loaded by module name (ecosystems/syntax.py's table).
    "tree-sitter": r"^\s*import tree_sitter\b",
    "tree-sitter-go": r"\"tree_sitter_go\"",
    "tree-sitter-rust": r"\"tree_sitter_rust\"",
    "tree-sitter-java": r"\"tree_sitter_java\"",
    "tree-sitter-javascript": r"\"tree_sitter_javascript\"",
    "tree-sitter-typescript": r"\"tree_sitter_typescript\"",
}


def test_every_declared_dependency_is_used() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in declared}
    assert names == set(USED_AS), "a dependency was added or dropped: say how it is used"
    code = "\n".join(p.read_text() for p in (ROOT / "swe_forge").rglob("*.py"))
    unused = [n for n, pattern in USED_AS.items() if not re.search(pattern, code, re.M)]
    assert unused == []


#: The optional extras: how each of their distributions shows up in the code.
EXTRAS_USED_AS = {
    "parquet": {"pyarrow": r"^\s*(import|from) pyarrow\b"},
    "hub": {"huggingface_hub": r"^\s*(import|from) huggingface_hub\b"},
    "ray": {"ray": r"^\s*(import|from) ray\b"},
}


def test_every_extra_is_used() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(extras) == {"dev", *EXTRAS_USED_AS}, "an extra was added or dropped"
    code = "\n".join(p.read_text() for p in (ROOT / "swe_forge").rglob("*.py"))
    for extra, used_as in EXTRAS_USED_AS.items():
        names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in extras[extra]}
        assert names - {"swe-forge"} == set(used_as), extra
        assert all(re.search(pattern, code, re.M) for pattern in used_as.values()), extra
    # The dev extra installs every other, so their code is tested in CI.
    assert "swe-forge[parquet,hub,ray]" in extras["dev"]
