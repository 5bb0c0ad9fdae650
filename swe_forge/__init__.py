"""swe-forge: SWE-bench-style tasks from git history, and a verifier that cannot be fooled."""

__version__ = "0.1.0"
