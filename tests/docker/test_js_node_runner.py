"""Node's own test runner end to end, on an official Node build: a small ES-module project
whose test script is ``node --test`` is mined and admitted on Node 22 (the floor the judge
sets for Node's runner, above its ``engines`` and above any Debian release's Node), its gold
patches score 1.0 with decoys that fail, and a no-op or an early exit scores 0."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.ecosystems.js.adapter import CAPABILITIES
from swe_forge.ecosystems.js.toolchain import NODE_BINARIES
from swe_forge.engine import Engine
from swe_forge.example.polyglot import ExamplePR, build_squash_history
from swe_forge.example.skeleton import data_text
from swe_forge.git.writer import Identity
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import (
    AdmittedExample,
    attack_from_inside,
    mine_and_admit,
    open_gate,
    patch_of,
    sub,
)

NODE = NODE_BINARIES[22][0]
TASK = "swe-forge__nodekit-1"

_PACKAGE = {
    "name": "nodekit",
    "version": "0.1.0",
    "type": "module",
    "main": "src/strutil.js",
    "license": "MIT",
    "scripts": {"test": "node --test"},
    "engines": {"node": ">=18"},
}
_LOCK = {
    "name": "nodekit",
    "version": "0.1.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {
        "": {
            "name": "nodekit",
            "version": "0.1.0",
            "license": "MIT",
            "engines": {"node": ">=18"},
        }
    },
}
_STRUTIL = """\
/** Shorten s to at most width characters, ending with "..." when something was cut. */
export function truncate(s, width) {
  const chars = Array.from(s);
  if (chars.length < width) {
    return s;
  }
  if (width <= 3) {
    return chars.slice(0, width).join('');
  }
  return chars.slice(0, width - 3).join('') + '...';
}

/** s with its characters in reverse order. */
export function reverse(s) {
  return Array.from(s).reverse().join('');
}
"""
_TESTS = """\
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { truncate, reverse } from '../src/strutil.js';

describe('truncate', () => {
  test('keeps a short string', () => {
    assert.equal(truncate('abc', 10), 'abc');
  });

  test('cuts a long string', () => {
    assert.equal(truncate('abcdefghij', 6), 'abc...');
  });
});

test('reverse reverses characters', () => {
  assert.equal(reverse('h\\u00e9llo'), 'oll\\u00e9h');
});
"""
_PRS = (
    ExamplePR(
        1,
        "fix-truncate-exact",
        "truncate cuts strings that exactly fit the width",
        "truncate('abcdef', 6) returns 'abc...' although the string fits.",
        (
            ("src/strutil.js", "  if (chars.length < width) {", "  if (chars.length <= width) {"),
            (
                "tests/strutil.test.js",
                "  test('cuts a long string', () => {",
                "  test('keeps a string that exactly fits', () => {\n"
                "    assert.equal(truncate('abcdef', 6), 'abcdef');\n  });\n\n"
                "  test('cuts a long string', () => {",
            ),
        ),
    ),
    ExamplePR(
        2,
        "words",
        "Add words(), which splits on any run of white space",
        "Callers split on single spaces and get empty words for tabs and runs.",
        (
            (
                "src/words.js",
                "",
                "/** The words of s, separated by any run of white space. */\n"
                "export function words(s) {\n  return s.split(/\\s+/).filter(Boolean);\n}\n",
            ),
            (
                "tests/words.test.js",
                "",
                # Before the fix the module it imports does not exist: the file does not load.
                "import { describe, test } from 'node:test';\n"
                "import assert from 'node:assert/strict';\n"
                "import { words } from '../src/words.js';\n\n"
                "describe('words', () => {\n"
                "  test('splits on any white space', () => {\n"
                "    assert.deepEqual(words(' js\\tis  fun '), ['js', 'is', 'fun']);\n"
                "    assert.equal(words('one').length, 1);\n"
                "  });\n});\n",
            ),
        ),
    ),
)
EXPECTED = {
    "swe-forge__nodekit-1": ["tests/strutil.test.js::truncate keeps a string that exactly fits"],
    "swe-forge__nodekit-2": ["tests/words.test.js::words splits on any white space"],
}


def create_nodekit(dest: Path) -> str:
    """``swe-forge/nodekit``: no dependency at all, Node's runner and assert only."""
    return build_squash_history(
        dest,
        name="nodekit",
        repo="swe-forge/nodekit",
        files={
            "package.json": json.dumps(_PACKAGE, indent=2) + "\n",
            "package-lock.json": json.dumps(_LOCK, indent=2) + "\n",
            ".gitignore": "node_modules/\n",
            "README.md": "# nodekit\n\nString helpers, tested with node --test.\n",
            "LICENSE": data_text("MIT.txt"),
            "src/strutil.js": _STRUTIL,
            "tests/strutil.test.js": _TESTS,
        },
        prs=_PRS,
        start=datetime(2025, 9, 1, 9, 0, 0, tzinfo=UTC),
        step=timedelta(hours=6),
        maintainer=Identity("Noor Haddad", "noor.haddad@nodekit.example.org"),
        contributor=Identity("Lea Brandt", "lea.brandt@nodekit.example.org"),
    )


@pytest.fixture(scope="module")
def nodekit(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "nodekit", create_nodekit)


def test_admitted_on_an_official_node_with_nodes_runner(nodekit: AdmittedExample) -> None:
    rejected = {iid: r["reason"] for iid, r in nodekit.rejected.items()}
    assert sorted(nodekit.tasks) == sorted(EXPECTED), rejected
    for iid, f2p in EXPECTED.items():
        task = nodekit.tasks[iid]
        assert f2p == task.FAIL_TO_PASS
        assert task.harness["module"] == f"node:test@{NODE}"
        assert task.image["toolchain"] == f"node{NODE}"
    # The test that passed before the fix is PASS_TO_PASS: the runner ran the files whole.
    assert "tests/strutil.test.js::reverse reverses characters" in (
        nodekit.tasks[TASK].PASS_TO_PASS
    )


def test_gold_scores_one_and_decoys_fail(nodekit: AdmittedExample) -> None:
    run, report = run_verify(
        nodekit.tasks_path, nodekit.root / "gold.jsonl", config=load_config(), gold=True
    )
    assert report["resolved_instances"] == len(EXPECTED)
    for r in run.results:
        assert r.reward == 1.0, r.detail
        twins = r.verifier["twins"]
        assert twins["decoys"] >= 1 and twins["outcomes"] == {"failed": twins["decoys"]}


def test_noop_and_an_early_exit_score_zero(
    nodekit: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = nodekit.tasks[TASK]
    # A change that leaves truncate as it was (a comment): the held-out test still fails.
    noop = patch_of(
        nodekit.repo,
        task.base_commit,
        sub("src/strutil.js", "/** s with its", "// unchanged\n/** s with its"),
        tmp_path,
    )
    result = verifier.verify(task, noop, "noop")
    assert (result.status, result.reward) == ("unresolved", 0.0), result.detail
    # The code under test ends its process as it loads: Node's runner reports its file as
    # failed to load. With the capability gate opened, the twins alone must not pay it.
    leave = sub(
        "src/strutil.js",
        "/** s with its characters",
        "process.exit(0);\n\n/** s with its characters",
    )
    (tmp_path / "exit").mkdir()
    patch = patch_of(nodekit.repo, task.base_commit, leave, tmp_path / "exit")
    attack_from_inside(
        verifier,
        open_gate(task, CAPABILITIES),
        patch,
        "early_exit",
        caught={"unresolved", "tamper_detected"},
        fools_the_tests=False,
    )
