"""Ecosystem adapters: the one seam through which languages enter.

Every stage stays language-neutral and asks the adapter of a repository's ecosystem the same
small questions (see :class:`~swe_forge.ecosystems.base.Ecosystem`): is this repository yours
at this commit; which paths are tests and which are runner configuration; which toolchain fits
this date; vendor the dependencies (on the host, as of the base date) and build offline; how to
run tests with structured per-test results; what a candidate patch must not change.

Python (pytest) is the first adapter and keeps its own, older code path (its outputs are
unchanged byte for byte); the others share one generic path: images from a Debian base with
the toolchain and the vendored dependencies, a runner whose per-test outcomes the supervisor
reads from the runner's structured report, canary tests written at run time, and static checks
of runner configuration and capabilities on the patch.
"""

from swe_forge.ecosystems.base import (
    ECOSYSTEM_NAMES,
    Ecosystem,
    detect_ecosystem,
    ecosystem_named,
    for_runner,
)

__all__ = ["ECOSYSTEM_NAMES", "Ecosystem", "detect_ecosystem", "ecosystem_named", "for_runner"]
