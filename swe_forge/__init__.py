"""swe-forge: SWE-bench-style tasks from git history, and a verifier that cannot be fooled.

For trainers: ``swe_forge.verify_patch(task, patch)`` grades one patch and
``swe_forge.compute_score(data_source, solution_str, ground_truth, extra_info)`` is a reward
function in the shape RL trainers call (see :mod:`swe_forge.api`);
``swe_forge.VerifierPool(size=N, address=...)`` grades on Ray actors with back-pressure and
returns rewards as they finish (the ``ray`` extra; see :mod:`swe_forge.executors.pool`).
"""

from typing import Any

__version__ = "0.1.0"

__all__ = ["VerifierPool", "__version__", "compute_score", "verify_patch"]


def __getattr__(name: str) -> Any:
    # Lazily: the command line and the harness must not pay for the API's imports.
    if name in ("verify_patch", "compute_score"):
        from swe_forge import api

        return getattr(api, name)
    if name == "VerifierPool":
        # Its module imports no Ray either: Ray is imported when a pool starts.
        from swe_forge.executors.pool import VerifierPool

        return VerifierPool
    raise AttributeError(f"module 'swe_forge' has no attribute {name!r}")
