"""Run SWE-bench 5's ``run_evaluation`` with every container it creates cut off the network.

Usage, in a venv with ``swebench==5.0.2`` (``scripts/swebench-venv.sh`` makes one and prints
its python)::

    PY=$(scripts/swebench-venv.sh)
    $PY scripts/swebench_eval.py -d tasks-swebench.jsonl -p gold -id run1 --max_workers 2

The arguments are ``python -m swebench.harness.run_evaluation``'s. SWE-bench creates its
evaluation containers on Docker's default bridge network; grading our tasks needs no network,
so this wrapper adds ``network_mode="none"`` to every container SWE-bench creates and changes
nothing else. (It also lets SWE-bench run on an engine without a usable bridge.) It runs in
SWE-bench's venv and imports nothing of swe-forge's.
"""

from __future__ import annotations

import runpy
from typing import Any

import docker.models.containers as containers

_create = containers.ContainerCollection.create


def _offline_create(self: Any, image: Any, command: Any = None, **kwargs: Any) -> Any:
    kwargs.pop("network", None)
    kwargs["network_mode"] = "none"
    return _create(self, image, command, **kwargs)


containers.ContainerCollection.create = _offline_create

if __name__ == "__main__":
    runpy.run_module("swebench.harness.run_evaluation", run_name="__main__", alter_sys=True)
