"""A Python API for trainers: grade one patch, or score a policy's answer, in-process.

``verify_patch(task, patch)`` grades a patch exactly as ``swe-forge verify`` does (a fresh
judge's container per call, the same guards, canaries and checks) and returns the
:class:`~swe_forge.records.VerifyResult`. ``compute_score`` has the shape RL trainers call a
reward function with (verl's ``compute_score(data_source, solution_str, ground_truth,
extra_info)``): the ground truth is the task manifest, the solution is the policy's text (a
unified diff, bare or in a fenced ``diff`` block), and the score is the reward, 1.0 or 0.0.

One :class:`~swe_forge.verify.verifier.Verifier` (and Docker client) is made per process and
configuration and reused; calls may come from several threads at once.

For many rewards at once, off this process: :class:`swe_forge.VerifierPool` (the ``ray``
extra) grades on Ray actors with bounded in-flight work and returns rewards as they finish;
its ``compute_score`` is this one's, awaited (same arguments, same result).
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from swe_forge.config import Config, load_config
from swe_forge.records import TaskManifest, VerifyResult

_LOCK = threading.Lock()
_VERIFIERS: dict[str, Any] = {}

#: A fenced block holding a diff (```diff ... ``` or ```patch ... ```).
_FENCED = re.compile(r"```(?:diff|patch)?[ \t]*\n(.*?)```", re.S)


def _verifier(config: Config | None) -> Any:
    """The process's verifier for this configuration (made on first use)."""
    from swe_forge.engine import Engine
    from swe_forge.mining.classify import PathClassifier
    from swe_forge.verify.settings import VerifySettings
    from swe_forge.verify.verifier import Verifier

    cfg = config or load_config()
    key = cfg.digest()
    with _LOCK:
        if key not in _VERIFIERS:
            _VERIFIERS[key] = Verifier(
                Engine(), PathClassifier(cfg.classify), VerifySettings.from_config(cfg.verify)
            )
        return _VERIFIERS[key]


def verifier_engine(config: Config | None = None) -> Any:
    """The :class:`~swe_forge.engine.Engine` this process's verifier (for ``config``) grades
    on: where a task's image must be present (see :mod:`swe_forge.images.registry`)."""
    return _verifier(config).engine


def as_task(task: TaskManifest | dict[str, Any] | str | Path) -> TaskManifest:
    """A task manifest from a manifest, its dict, its JSON text, or a file holding one line."""
    if isinstance(task, TaskManifest):
        return task
    if isinstance(task, dict):
        return TaskManifest.from_dict(task)
    if isinstance(task, str) and not task.lstrip().startswith("{") and not Path(task).is_file():
        # A string that is neither a manifest's JSON nor a file: say so (it was read as a
        # path and failed with FileNotFoundError).
        raise ValueError(f"not a task manifest: neither JSON text nor a file: {task[:80]!r}")
    if isinstance(task, Path) or (isinstance(task, str) and not task.lstrip().startswith("{")):
        lines = [ln for ln in Path(task).read_text(encoding="utf-8").splitlines() if ln.strip()]
        if len(lines) != 1:
            raise ValueError(f"{task}: expected one task manifest, found {len(lines)} lines")
        return TaskManifest.from_dict(json.loads(lines[0]))
    return TaskManifest.from_dict(json.loads(task))


def extract_patch(text: str) -> str:
    """The diff in a policy's answer: the last fenced ``diff`` block if there is one, else
    the text from its first ``diff --git`` / ``--- a/`` line; "" when there is none."""
    blocks = [b for b in _FENCED.findall(text) if "@@" in b]
    if blocks:
        body = str(blocks[-1])
        return body if body.endswith("\n") else body + "\n"
    m = re.search(r"^(diff --git |--- (a/|/dev/null))", text, re.M)
    if not m:
        return ""
    body = text[m.start() :]
    return body if body.endswith("\n") else body + "\n"


def verify_patch(
    task: TaskManifest | dict[str, Any] | str | Path,
    patch: str,
    *,
    model: str = "policy",
    config: Config | None = None,
) -> VerifyResult:
    """Grade ``patch`` against ``task`` in a fresh judge's container (as ``swe-forge verify``).

    Never raises for a bad patch: the result's ``status`` says what happened (``resolved`` is
    the only status with reward 1.0; ``infra_error`` is never the patch's fault: retry it).
    A ``patch`` that is not text (None, a number) is graded as the empty patch; bytes are read
    as UTF-8. A ``task`` that is not a manifest raises ``ValueError`` (the caller's error).
    """
    if isinstance(patch, bytes):
        patch = patch.decode("utf-8", "replace")
    elif not isinstance(patch, str):
        patch = ""
    return _verifier(config).verify(as_task(task), patch, model)  # type: ignore[no-any-return]


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: TaskManifest | dict[str, Any] | str,
    extra_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A reward function in the shape RL trainers call (verl's ``compute_score``).

    ``ground_truth`` is the task manifest (object, dict or JSON text); ``solution_str`` is the
    policy's answer holding a unified diff. Returns ``{"score": reward, "status": ...,
    "infra_error": bool}``: trainers read ``score``; an ``infra_error`` should be dropped from
    the batch, not learned from (it is never the policy's doing). ``data_source`` and
    ``extra_info`` are accepted for the trainer's signature (``extra_info["model"]`` names the
    policy in the results).
    """
    del data_source
    patch = extract_patch(solution_str)
    result = verify_patch(ground_truth, patch, model=model_of(extra_info))
    return score_of(result)


def model_of(extra_info: dict[str, Any] | None) -> str:
    """The policy's name in the results: ``extra_info["model"]``, else ``policy``."""
    return str((extra_info or {}).get("model") or "policy")


def score_of(result: VerifyResult) -> dict[str, Any]:
    """A result as a trainer's reward: ``{"score", "status", "infra_error"}`` (what
    :func:`compute_score` and :meth:`swe_forge.VerifierPool.compute_score` return)."""
    return {
        "score": float(result.reward),
        "status": result.status,
        "infra_error": result.status == "infra_error",
    }
