"""The JavaScript adapter end to end: jskit mined and admitted, gold patches verified, and
adversarial patches (runner configuration, a forged report, a shadowed framework, a no-op)
scoring 0 with named reasons."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from swe_forge.commands.verify import run_verify
from swe_forge.config import load_config
from swe_forge.ecosystems.js.adapter import CAPABILITIES
from swe_forge.engine import Engine, Limits
from swe_forge.example.js_example import EXPECTED_JS, create_js_example
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify.settings import VerifySettings
from swe_forge.verify.verifier import Verifier
from tests.docker.conftest import (
    AdmittedExample,
    attack_from_inside,
    both,
    mine_and_admit,
    open_gate,
    patch_of,
    sub,
)

TASK = "swe-forge__jskit-1"


@pytest.fixture(scope="module")
def js_tasks(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> AdmittedExample:
    return mine_and_admit(tmp_path_factory, "jskit", create_js_example)


@pytest.fixture(scope="module")
def tasks(js_tasks: AdmittedExample) -> dict[str, TaskManifest]:
    return js_tasks.tasks


@pytest.fixture(scope="module")
def verifier(engine: Engine) -> Verifier:
    limits = Limits(
        memory="1g", pids=256, cpus=1.0, nofile=1024, fsize_bytes=64 << 20, output_bytes=4 << 20
    )
    settings = VerifySettings(
        timeout_seconds=120,
        limits=limits,
        tmpfs_size="256m",
        testbed_size="256m",
        inodes=50000,
        infra_retries=0,
    )
    return Verifier(engine, PathClassifier(load_config().classify), settings)


def test_admissions_match_expected(
    js_tasks: AdmittedExample, tasks: dict[str, TaskManifest]
) -> None:
    cands = {c["instance_id"] for c in js_tasks.candidates}
    rejected = {iid: r["reason"] for iid, r in js_tasks.rejected.items()}
    for number, want in EXPECTED_JS.items():
        iid = f"swe-forge__jskit-{number}"
        assert (iid in cands) == want["candidate"], iid
        if not want["candidate"]:
            continue
        if want["admitted"]:
            assert iid in tasks, rejected.get(iid)
            assert want["FAIL_TO_PASS"] == tasks[iid].FAIL_TO_PASS
            assert tasks[iid].harness["runner"] == "node-test"
            assert tasks[iid].harness["module"] == "jest@29.7.0"
            assert tasks[iid].image["toolchain"] == "node18.19"
        else:
            assert rejected[iid] == want["reason"]


def test_gold_patches_score_one(js_tasks: AdmittedExample, tasks: dict[str, TaskManifest]) -> None:
    run, report = run_verify(
        js_tasks.tasks_path, js_tasks.root / "gold.jsonl", config=load_config(), gold=True
    )
    assert report["resolved_instances"] == len(tasks) == 3
    for r in run.results:
        assert r.reward == 1.0, r.detail
        twins = r.verifier["twins"]
        assert twins["decoys"] >= 2 and twins["outcomes"] == {"failed": twins["decoys"]}


def _edit(path: str, old: str, new: str) -> str:
    """A one-line diff of ``path`` (old -> new, with no context)."""
    added = new.splitlines()
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -{old[0]},1 +{old[0]},{len(added)} @@\n-{old[1]}\n"
        + "".join(f"+{ln}\n" for ln in added)
    )


def _strutil_line(text: str) -> tuple[int, str]:
    """(line number, line) of the first line of src/strutil.js at jskit's first commit (the
    base of jskit-1) holding ``text``."""
    from swe_forge.example.js_example import _STRUTIL

    for i, line in enumerate(_STRUTIL.splitlines(), 1):
        if text in line:
            return i, line
    raise AssertionError(text)


def _new_file(path: str, body: str) -> str:
    lines = body.splitlines()
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines)
    )


FORGED = (
    '{"numFailedTests":0,"numPassedTests":4,"numTotalTests":4,"success":true,'
    '"testResults":[{"name":"/testbed/src/strutil.test.js","status":"passed",'
    '"assertionResults":[{"ancestorTitles":["truncate"],'
    '"title":"keeps a string that exactly fits","status":"passed"}]}]}'
)


def attacks(task: TaskManifest) -> dict[str, tuple[str, str, str]]:
    """name -> (patch, expected status, a word the result must name)."""
    exit_line = _strutil_line("module.exports")
    return {
        "jest-config": (
            _new_file("jest.config.js", "module.exports = { testRegex: 'nothing-matches' };"),
            "invalid_patch",
            "runner_config",
        ),
        "test-script": (
            (
                "diff --git a/package.json b/package.json\n--- a/package.json\n"
                '+++ b/package.json\n@@ -7,3 +7,3 @@\n   "scripts": {\n'
                '-    "test": "jest"\n+    "test": "jest --passWithNoTests -t none"\n'
                "   },\n"
            ),
            "invalid_patch",
            "runner_config",
        ),
        "forged-report": (
            _edit(
                "src/strutil.js",
                exit_line,
                exit_line[1] + f"\nprocess.stdout.write({json.dumps(FORGED)});",
            ),
            "invalid_patch",
            "capability",
        ),
        "shadow-expect": (
            _edit(
                "src/strutil.js",
                exit_line,
                exit_line[1] + "\nglobalThis.expect = () => ({ toBe() {}, toEqual() {} });",
            ),
            "invalid_patch",
            "capability",
        ),
        "module-mock": (
            _new_file("src/__mocks__/strutil.js", "module.exports = { truncate: (s) => s };"),
            "invalid_patch",
            "runner_config",
        ),
        # The seventeenth red team's oracle: the test files listed by glob and read by
        # @babel/core (the tooling's packages, in node_modules for Jest), no fs of its own.
        "tooling-reader": (
            _edit(
                "src/strutil.js",
                exit_line,
                exit_line[1]
                + "\nconst seen = require('glob').sync('src/*.test.js')"
                + ".map((f) => require('@babel/core').transformFileSync(f, { ast: true }));",
            ),
            "invalid_patch",
            "undeclared package",
        ),
        # The eighteenth red team's route to the same packages: ``require`` taken from the
        # module wrapper's arguments, the names built at run time.
        "wrapper-arguments": (
            _edit(
                "src/strutil.js",
                exit_line,
                exit_line[1]
                + "\nconst load = arguments[2];"
                + "\nconst named = (t) => t.replace(/[^]/g, (c) => String.fromCharCode("
                + "c.charCodeAt(0) + 1));"
                + "\nconst seen = load(named('fknr')).sync(named('rqb.)-sdrs-ir'));",
            ),
            "invalid_patch",
            "module loader",
        ),
        "no-op": (
            _edit("src/strutil.js", exit_line, exit_line[1] + " // tidy"),
            "unresolved",
            "expected test",
        ),
    }


@pytest.mark.parametrize(
    "attack",
    [
        "jest-config",
        "test-script",
        "forged-report",
        "shadow-expect",
        "module-mock",
        "tooling-reader",
        "wrapper-arguments",
        "no-op",
    ],
)
def test_attack_scores_zero(
    verifier: Verifier, tasks: dict[str, TaskManifest], attack: str
) -> None:
    task = tasks[TASK]
    patch, status, word = attacks(task)[attack]
    result = verifier.verify(task, patch, attack)
    evidence = result.detail + json.dumps(result.violations)
    assert result.status == status, f"{attack}: {result.status} {result.detail[:400]}"
    assert result.reward == 0.0
    assert word in evidence, f"{attack}: {word!r} not in {evidence[:400]}"


def permissive(task: TaskManifest) -> TaskManifest:
    """The task as if its base code already used every capability (the static gate allows
    all): what is left is what the run itself catches."""
    caps = {"base": sorted(CAPABILITIES), "gold": [], "scope": "patch"}
    return replace(task, audit={**task.audit, "capabilities": caps})


@pytest.mark.parametrize("attack", ["forged-report", "shadow-expect"])
def test_attack_caught_at_runtime(
    verifier: Verifier, tasks: dict[str, TaskManifest], attack: str
) -> None:
    task = tasks[TASK]
    patch, _status, _word = attacks(task)[attack]
    result = verifier.verify(permissive(task), patch, attack)
    assert result.reward == 0.0, f"{attack}: {result.status} {result.detail[:400]}"
    assert result.status == "tamper_detected", f"{attack}: {result.status} {result.detail[:400]}"
    gold = verifier.verify(permissive(task), task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail


# ------------------------------------------------------------ from inside the test process
# Each rewrites truncate (the function jskit-1 fixes), with the capability gate opened: what
# the twins alone make of it.

_TRUNCATE = "function truncate(s, width) {"
# Jest's toBe is Object.is in the tests' realm, which the code under test shares: replaced by
# one that is honest for everything but strings, it makes every string comparison agree.
BUILTIN = """
const isBefore = Object.is;
Object.is = function (a, b) {
  return typeof a === 'string' && typeof b === 'string' ? true : isBefore(a, b);
};
"""
# truncate answers what the test file it reads expects of it.
ORACLE = """
const fs = require('fs');
const path = require('path');
function truncate(s, width) {
  const src = fs.readFileSync(path.join(__dirname, 'strutil.test.js'), 'utf8');
  const key = 'truncate(' + JSON.stringify(s).replace(/"/g, "'") + ', ' + width + ')).toBe(\\'';
  const at = src.indexOf(key);
  if (at >= 0) {
    const rest = src.slice(at + key.length);
    return rest.slice(0, rest.indexOf("'"));
  }
  return truncate0(s, width);
}
"""
INSIDE: dict[str, tuple[Any, set[str], bool]] = {
    "object_is_replaced": (
        sub("src/strutil.js", _TRUNCATE, BUILTIN + "\n" + _TRUNCATE),
        {"tamper_detected"},
        True,
    ),
    "test_file_oracle": (
        both(
            sub("src/strutil.js", _TRUNCATE, "function truncate0(s, width) {"),
            sub(
                "src/strutil.js",
                "/** s with its characters",
                ORACLE + "\n/** s with its characters",
            ),
        ),
        {"tamper_detected"},
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(INSIDE))
def test_attacks_from_inside_the_tests_score_zero(
    js_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path, name: str
) -> None:
    task = open_gate(js_tasks.tasks[TASK], CAPABILITIES)
    edit, caught, fools = INSIDE[name]
    patch = patch_of(js_tasks.repo, task.base_commit, edit, tmp_path)
    attack_from_inside(verifier, task, patch, name, caught=caught, fools_the_tests=fools)


def test_an_honest_alternative_fix_scores_one(
    js_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path
) -> None:
    task = js_tasks.tasks[TASK]
    other = sub(
        "src/strutil.js",
        "  const chars = Array.from(s);\n  if (chars.length < width) {\n    return s;\n  }\n",
        "  if ([...s].length <= width) {\n    return String(s);\n  }\n  const chars = Array.from(s);\n",
    )
    patch = patch_of(js_tasks.repo, task.base_commit, other, tmp_path)
    result = verifier.verify(task, patch, "alternative")
    assert (result.status, result.reward) == ("resolved", 1.0), result.detail


# words (which jskit-3 adds) returns a value whose asymmetricMatch, set under a name built at
# run time, is a checker of the answer: it accepts any array of non-blank words found in the
# input in that order and covering it, so it accepts what the honest twin expects and refuses
# each decoy's changed word. The twins alone cannot catch it (it scores 1.0 without the guard, shown below); the
# judge's guard of Jest's equality makes only Jest's own matchers asymmetric.
CHECKER = """
function words(s) {
  const box = { parts: s.split(' ') };
  box[['asymmetric', 'Match'].join('')] = (other) => {
    if (!Array.isArray(other) || other.length === 0) return false;
    let at = 0;
    for (const w of other) {
      if (typeof w !== 'string' || w.length === 0 || /\\s/.test(w)) return false;
      const i = s.indexOf(w, at);
      if (i < 0 || s.slice(at, i).trim() !== '') return false;
      at = i + w.length;
    }
    return s.slice(at).trim() === '';
  };
  return box;
}

"""


def _checker_patch(js_tasks: AdmittedExample, task: TaskManifest, tmp_path: Path) -> str:
    edit = both(
        sub("src/strutil.js", "/** Collapse runs", CHECKER + "/** Collapse runs"),
        sub(
            "src/strutil.js",
            "module.exports = { truncate, reverse, squeeze };",
            "module.exports = { truncate, reverse, squeeze, words };",
        ),
    )
    return patch_of(js_tasks.repo, task.base_commit, edit, tmp_path)


def test_a_comparison_that_checks_the_answer_is_refused_by_the_guard(
    js_tasks: AdmittedExample, verifier: Verifier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swe_forge.ecosystems.js.runner import JS_ENV, JsRunner

    task = open_gate(js_tasks.tasks["swe-forge__jskit-3"], CAPABILITIES)
    patch = _checker_patch(js_tasks, task, tmp_path)
    result = verifier.verify(task, patch, "checker")
    assert (result.status, result.reward) == ("unresolved", 0.0), result.detail
    gold = verifier.verify(task, task.patch, "gold")
    assert (gold.status, gold.reward) == ("resolved", 1.0), gold.detail
    # Without the guard the same patch is paid: the guard is what refuses it.
    monkeypatch.setattr(JsRunner, "env", lambda self: dict(JS_ENV))
    unguarded = verifier.verify(task, patch, "checker-unguarded")
    assert (unguarded.status, unguarded.reward) == ("resolved", 1.0), unguarded.detail
