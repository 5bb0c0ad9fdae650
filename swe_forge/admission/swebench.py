"""Task manifests as SWE-bench 5 instances that its harness can grade with our images.

SWE-bench 5 (``swebench==5.0.2``) no longer builds an environment from a repository's
specification when an instance names its own: ``make_test_spec`` reads ``image``,
``eval_script``, ``log_parser`` and ``eval_type`` from the instance, and ``run_evaluation``
starts a container from ``image`` (pulling only when it is not on the machine), applies the
prediction with ``git apply`` (then ``--3way``, ``--reject``, ``patch --fuzz=5``) as root in
``/testbed``, copies ``eval_script`` to ``/eval.sh``, runs it with bash, and parses what the
tests printed between its start and end markers with the named log parser.

The eval script and its log parser are the task's ecosystem's to write
(:meth:`~swe_forge.ecosystems.base.Ecosystem.swebench_eval`; pytest's:
:mod:`swe_forge.ecosystems.python.swebench`).

This export is for comparison with SWE-bench's numbers, not for rewards: SWE-bench's harness
runs as root, with network, applies patches with fuzz, and believes what the test process
prints. ``swe-forge verify`` is the judge (see README, "Grading with SWE-bench 5").
"""

from __future__ import annotations

import json
import re
from typing import Any

from swe_forge.ecosystems import for_runner
from swe_forge.errors import InputError
from swe_forge.records import TaskManifest

#: ``swebench.harness.constants.EvalType.PASS_AND_FAIL``: FAIL_TO_PASS must pass, PASS_TO_PASS
#: must pass (or skip); a test missing from the log counts as failed.
EVAL_TYPE = "pass_and_fail"

_PINNED = re.compile(r"^[^\s@]+@sha256:[0-9a-f]{64}$")


def swebench_image(image: dict[str, Any]) -> str:
    """The image SWE-bench starts: the registry reference pinned by digest
    (``image["reference"]``, ``host/ns/name@sha256:...``) when the task has one, else the
    local image id (``sha256:...``), else the tag.

    SWE-bench pulls only what ``docker images`` does not have, so a local id is used as is and
    never pulled; a pinned reference is pulled by digest where it is missing.

    Raises:
        InputError: the manifest names no image.
    """
    ref = str(image.get("reference") or "")
    if _PINNED.match(ref):
        return ref
    for key in ("id", "tag"):
        value = str(image.get(key) or "")
        if value:
            return value
    raise InputError("the task manifest names no image (image.id, image.tag)")


def swebench_row(task: TaskManifest) -> dict[str, Any]:
    """One SWE-bench 5 instance: SWE-bench's fields (FAIL_TO_PASS/PASS_TO_PASS as JSON
    strings) plus ``image``, ``eval_script``, ``log_parser`` and ``eval_type``, and our
    ``test_strength`` (the score of ``audit.test_strength``, null when unmeasured).

    Raises:
        InputError: the task names no image, does not run pytest, or its test patch does not
            parse.
    """
    row = task.to_swebench()
    # Pushed (`images push`): the instance image's reference pinned by digest.
    pinned = task.image_reference()
    row["image"] = pinned if _PINNED.match(pinned) else swebench_image(task.image)
    row["eval_script"], row["log_parser"] = for_runner(
        str(task.harness.get("runner") or "")
    ).swebench_eval(task)
    row["eval_type"] = EVAL_TYPE
    # Not SWE-bench's: the share of wrong variants of the gold fix the tests reject (null when
    # unmeasured). SWE-bench's harness ignores fields it does not read.
    row["test_strength"] = task.test_strength()
    return row


def swebench_line(task: TaskManifest) -> str:
    """:func:`swebench_row` as one deterministic JSON line (sorted keys, no newline)."""
    return json.dumps(swebench_row(task), sort_keys=True)
