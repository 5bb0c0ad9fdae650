"""The capability gate: what a candidate patch newly *can* do, judged against the reference.

The code under test runs in the same interpreter as the tests, so a patch that reaches frames,
code objects, the garbage collector, pytest's internals, file descriptors or the test files can
forge a verdict from inside. Text patterns are easy to dodge; this gate works on the syntax
tree (``harness/swe_forge_capabilities.py``, run inside the task's container with the task's
own Python, as the task's user, before any test runs).

A capability counts as *introduced* by a patch in a file when the file uses it after the patch
and did not before. An introduced capability is a violation unless the gold patch introduces
it too, or (scope ``repository``, the default) the base code already uses it somewhere
outside the tests. Scope ``file`` is stricter: only the gold patch excuses it.
"""

from __future__ import annotations

from typing import Any

#: Scanner errors that mean "Python cannot compile this file either": nothing in it can run.
_BENIGN_ERRORS = ("SyntaxError", "IndentationError", "TabError", "ValueError")


def introduced(scan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """path -> {capability: evidence} the post-image uses and the pre-image does not.

    ``scan`` is the supervisor's ``capabilities`` block for one patch:
    ``{path: {"pre": [names], "post": {name: [[line, detail], ...]}, "error": str}}``.
    """
    out: dict[str, dict[str, Any]] = {}
    for path, entry in sorted(scan.items()):
        if not isinstance(entry, dict):
            continue
        pre = set(entry.get("pre") or ())
        post = entry.get("post") or {}
        new = {cap: post[cap] for cap in sorted(post) if cap not in pre}
        error = str(entry.get("error") or "")
        if error and not error.startswith(_BENIGN_ERRORS):
            # The scanner could not finish (hostile nesting, a crash): what cannot be read
            # cannot be allowed.
            new["unscannable"] = [[0, error[:200]]]
        if new:
            out[path] = new
    return out


def introduced_names(scan: dict[str, Any]) -> list[str]:
    """Every capability a patch introduces, in any file (sorted)."""
    return sorted({cap for caps in introduced(scan).values() for cap in caps})


def violations(
    scan: dict[str, Any], *, base: set[str], gold: set[str], scope: str = "repository"
) -> list[dict[str, str]]:
    """Named violations of a candidate's capability scan (empty: the gate passes)."""
    allowed = set(gold) | (set(base) if scope == "repository" else set())
    allowed.discard("unscannable")
    found: list[dict[str, str]] = []
    for path, caps in introduced(scan).items():
        for cap, evidence in caps.items():
            if cap in allowed:
                continue
            where = ", ".join(
                f"line {e[0]}: {e[1]}" for e in evidence[:3] if isinstance(e, list | tuple)
            )
            found.append(
                {
                    "code": f"capability_{cap}",
                    "detail": f"{path} introduces {cap} ({where}), which neither the base code "
                    "nor the reference fix uses",
                }
            )
    return found


def base_capabilities(per_file: dict[str, list[str]], is_source: Any) -> list[str]:
    """The union of capabilities used by the base tree's *source* files: tests, docs,
    tooling and runner files (``noxfile.py``, ``docs/conf.py``, ``tasks/``) never run inside
    the test process, so they excuse nothing."""
    caps: set[str] = set()
    for path, names in per_file.items():
        if is_source(path):
            caps.update(names)
    return sorted(caps)
