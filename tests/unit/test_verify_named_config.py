"""The runner configuration a task's test script names (``harness.config``, any file name)
is the judge's: a candidate that edits it is refused before anything runs (red team, session
19: a `transform` added to `jest --config jest.unit.config.js` rewrote the held-out test as
Jest loaded it and scored 1.0 without a fix)."""

from __future__ import annotations

from types import SimpleNamespace

from swe_forge.config import load_config
from swe_forge.mining.classify import PathClassifier
from swe_forge.records import TaskManifest
from swe_forge.verify.verifier import Verifier
from tests import record_samples as samples


def _verifier() -> Verifier:
    """A verifier whose engine is never reached (refusals come before any container)."""
    return Verifier(
        SimpleNamespace(reap_orphans=lambda: 0),  # type: ignore[arg-type]
        PathClassifier(load_config().classify),
    )


def _edit(path: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"


def test_a_candidate_editing_the_named_runner_config_is_refused() -> None:
    # No engine is reached: the refusal comes before any image or container.
    verifier = _verifier()
    data = samples.task()
    data["harness"]["runner"] = "node-test"
    data["harness"]["config"] = "config/unit.js"
    task = TaskManifest.from_dict(data)
    result = verifier.verify(task, _edit("config/unit.js"), "m")
    assert result.status == "invalid_patch" and result.reward == 0.0
    assert [v["code"] for v in result.violations] == ["runner_config"]
    assert "config/unit.js" in result.violations[0]["detail"]


def test_a_candidate_editing_a_file_the_config_loads_is_refused_at_verify_time() -> None:
    # Red team, session 19 (left open then): the setup and transform files a configuration
    # loads were refused only where the base tree was in view (admission); the verifier has
    # none. Admission records them as ``harness.judge_files`` and the verifier refuses them.
    verifier = _verifier()
    data = samples.task()
    data["harness"]["runner"] = "node-test"
    data["harness"]["judge_files"] = ["src/env/prepare.js", "tools/transform.js"]
    task = TaskManifest.from_dict(data)
    result = verifier.verify(task, _edit("src/env/prepare.js") + _edit("src/app.js"), "m")
    assert result.status == "invalid_patch" and result.reward == 0.0
    assert [v["code"] for v in result.violations] == ["runner_config"]
    assert "src/env/prepare.js" in result.violations[0]["detail"]
    # A file the gold patch itself changes stays allowed (the reference fix may edit it).
    data["patch"] = _edit("tools/transform.js")
    task = TaskManifest.from_dict(data)
    from swe_forge.verify.verifier import judge_file_violations

    assert judge_file_violations(task, _edit("tools/transform.js")) == []
    assert [
        v["detail"].split(":")[0] for v in judge_file_violations(task, _edit("src/env/prepare.js"))
    ] == ["src/env/prepare.js"]


def test_the_files_a_transform_requires_and_their_shadows_are_the_judges() -> None:
    # Red team, session 20 (1.0 without a fix, end to end with Jest 29.7): a preset folder's
    # jest-preset.js, a helper the transform requires, and a new extensionless file beside the
    # recorded transform each gave a candidate a transform of its own.
    from swe_forge.ecosystems.js.toolchain import configured_files

    base = {
        "package.json": b'{"main": "index.js", "scripts": {"test": "jest"}}',
        "jest.config.js": (
            b"module.exports = { preset: './tools/preset', roots: ['<rootDir>/src'],"
            b" transform: {'\\\\.js$': '<rootDir>/tools/transform'},"
            b" setupFiles: ['./index.js'] };"
        ),
        "tools/preset/jest-preset.js": b"module.exports = { testEnvironment: 'node' };\n",
        "tools/transform.js": b"module.exports = require('./transform-impl');\n",
        "tools/transform-impl.js": b"module.exports = { process: (s) => ({ code: s }) };\n",
        "src/index.js": b"module.exports = 1;\n",
        "index.js": b"module.exports = require('./src');\n",
    }
    found = configured_files(base.get)
    for path in (
        "tools/preset/jest-preset.js",
        "tools/transform.js",
        "tools/transform",  # a new file here would shadow the recorded one
        "tools/transform.cjs",
        "tools/transform-impl.js",
    ):
        assert path in found, path
    # The code under test is never the judge's: the roots, the package's main file.
    assert not {"src/index.js", "index.js", "src"} & found
