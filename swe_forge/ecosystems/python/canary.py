"""Python's decoys as the host sees them: which of a calibration's copies are kept.

The copies themselves are written in the container by the task's own Python (the judge's
``swe_forge_canaries``); here, on the host, the same module is loaded by name to find where a
site is and how natural its decoy reads, so that the kept decoys are those on lines the test
patch wrote and as plain as the values they replace.
"""

from __future__ import annotations

import importlib
from typing import Any

from swe_forge import pyast
from swe_forge.ecosystems.decoys import added_lines, natural_first, test_texts

Key = tuple[str, int, int, str]


def kept_decoys(
    copies: dict[str, dict[str, Any]],
    outcomes: dict[str, str],
    test_patch: str,
    shown: dict[str, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(armed, disarmed) of a Python calibration: the copies the gold patch failed, on lines
    the test patch wrote (:func:`fresh`) and read as naturally as the tests (:func:`plain`)."""
    armed: set[Key] = set()
    disarmed: set[Key] = set()
    for node, spec in sorted(copies.items()):
        # The kind of assertion (compare, raises, approx, ...) goes with the entry: an
        # attack on one mechanism (a patched pytest.raises) is seen only by its decoys.
        key = (
            str(spec["test"]),
            int(spec["site"]),
            int(spec.get("seed") or 0),
            str(spec.get("kind") or ""),
        )
        (armed if outcomes.get(node) == "failed" else disarmed).add(key)
    with pyast.parsing():  # the judge's canary writer parses with ast itself
        kept_fresh = fresh(armed, test_patch, shown)
        disarmed |= armed - kept_fresh
        armed = plain(kept_fresh, test_patch, shown)
        disarmed |= kept_fresh - armed
    return (
        [{"test": t, "site": k, "seed": n, "kind": c} for t, k, n, c in sorted(armed)],
        [{"test": t, "site": k, "seed": n, "kind": c} for t, k, n, c in sorted(disarmed)],
    )


def fresh(armed: set[Key], test_patch: str, shown: dict[str, str]) -> set[Key]:
    """Python's armed decoys on lines the test patch wrote, per test where it has any (see
    :func:`swe_forge.ecosystems.decoys.fresh_sites`: the base's version of a test file is in the
    judge's one commit). A site's line is found as the judge's canary writer finds it."""
    # The judge's own module (plain 3.6 Python, outside the type checking), loaded by name.
    find_sites = importlib.import_module("swe_forge.gates.harness.swe_forge_canaries").find_sites
    texts = test_texts(test_patch, shown)
    added = added_lines(test_patch)
    by_test: dict[str, list[Key]] = {}
    for key in sorted(armed):
        by_test.setdefault(key[0], []).append(key)
    out: set[Key] = set()
    for test, keys in by_test.items():
        path, _, name = test.partition("::")
        text = texts.get(path)
        if text is None:
            out.update(keys)
            continue
        sites = find_sites(text.decode("utf-8", "replace"), [name.split("[", 1)[0]])
        lines = {int(s["site"]): int(s["line"]) for s in sites}
        fresh = [k for k in keys if lines.get(k[1]) in added.get(path, set())]
        out.update(fresh or keys)
    return out


def plain(armed: set[Key], test_patch: str, shown: dict[str, str]) -> set[Key]:
    """Python's armed decoys that read as naturally as the tests they change.

    A decoy whose expected value has no literal to change wraps it in the helpers every twin
    defines (``_value_<token>(expr, seed)``); a call of one is in no honest twin, so code
    that reads the test file tells such a decoy at a glance. It is kept only for a kind of
    assertion (compare, raises, approx, ...) that has no decoy written as plain code: an
    attack on that mechanism must still meet a decoy. Of the plain ones, those about as
    natural as the values they replace are kept when there are enough of them
    (:func:`swe_forge.ecosystems.decoys.natural_first`, the judge's own measure)."""
    module = importlib.import_module("swe_forge.gates.harness.swe_forge_canaries")
    texts = test_texts(test_patch, shown)
    strangeness: dict[Key, float | None] = {}
    for key in sorted(armed):
        test, site, seed, _kind = key
        path, _, name = test.partition("::")
        text = texts.get(path)
        strangeness[key] = (
            0.0
            if text is None
            else module.decoy_strangeness(
                text.decode("utf-8", "replace"), name.split("[", 1)[0], site, seed
            )
        )
    plain = sorted(k for k, d in strangeness.items() if d is not None)
    plain_kinds = {key[3] for key in plain}
    kept = {plain[i] for i in natural_first([float(strangeness[k] or 0.0) for k in plain])}
    # A kind whose plain decoys all went keeps its most natural one.
    for kind in plain_kinds - {k[3] for k in kept}:
        kept.add(min((k for k in plain if k[3] == kind), key=lambda k: (strangeness[k] or 0.0, k)))
    return kept | {k for k, d in strangeness.items() if d is None and k[3] not in plain_kinds}
