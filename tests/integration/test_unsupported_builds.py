"""Projects refused for what they are, with a fixed reason and no image built: a Gradle build
(no Gradle distribution can be had here) is Java's and refused ``gradle_unavailable``, never
run with pytest as the Python default would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from swe_forge.commands.admit import run_admit
from swe_forge.commands.mine import run_mine
from swe_forge.config import load_config
from swe_forge.ecosystems import detect_ecosystem
from swe_forge.mining.miner import MineOptions
from tests.conftest import RepoBuilder

_BUILD = "plugins { id 'java' }\nrepositories { mavenCentral() }\n"
_CODE = "package demo;\n\npublic class Add {\n  public static int add(int a, int b) { return a %s b; }\n}\n"
_TEST = """package demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import org.junit.jupiter.api.Test;

class AddTest {
  @Test
  void adds() { assertEquals(3, Add.add(1, 2)); }
}
"""


def test_a_gradle_project_is_refused_by_name(
    make_repo: Callable[..., RepoBuilder], tmp_path: Path
) -> None:
    repo = make_repo("gradle")
    repo.commit(
        {
            "pkg/__init__.py": None,
            "pkg/core.py": None,
            "tests/test_core.py": None,
            "build.gradle": _BUILD,
            "settings.gradle": "rootProject.name = 'demo'\n",
            "src/main/java/demo/Add.java": _CODE % "-",
        }
    )
    repo.pr(
        1,
        {
            "src/main/java/demo/Add.java": _CODE % "+",
            "src/test/java/demo/AddTest.java": _TEST,
        },
        "add() subtracts",
        "Add.add(1, 2) gives -1; it must add.",
    )
    files = {"build.gradle": b"", "settings.gradle": b""}
    assert detect_ecosystem(files.get) == "java"
    assert detect_ecosystem({**files, "setup.py": b""}.get) == "python"
    cands = tmp_path / "candidates.jsonl"
    run_mine([str(repo.path)], cands, config=load_config(), options=MineOptions())
    assert len(cands.read_text().splitlines()) == 1
    tasks, rejected = tmp_path / "tasks.jsonl", tmp_path / "rejected.jsonl"
    run_admit(cands, tasks, config=load_config(), rejected=rejected)
    assert tasks.read_text() == ""
    (refusal,) = [json.loads(x) for x in rejected.read_text().splitlines()]
    assert refusal["reason"] == "gradle_unavailable", refusal
    assert "build.gradle" in refusal["detail"] and "no pom.xml" in refusal["detail"]
