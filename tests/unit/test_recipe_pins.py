"""Exact pins older than the image's Python: the nearest release that supports it instead."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from swe_forge.ecosystems.python import deps
from swe_forge.ecosystems.python.image import with_supported_pins
from swe_forge.ecosystems.python.recipe import PYTHON_RELEASES, InstallRecipe, recipe_digest
from swe_forge.ecosystems.python.recipe_pins import (
    PyPIReleases,
    Release,
    ReleaseIndex,
    adjust_stale_pins,
)


class FakeIndex(ReleaseIndex):
    """Releases of made-up distributions: version -> (upload date, Requires-Python, minors)."""

    def __init__(self, table: dict[str, dict[str, tuple[str, str | None, list[str] | None]]]):
        self.table = table

    def releases(self, name: str) -> list[Release]:
        return [Release(v, d, rp) for v, (d, rp, _m) in self.table.get(name, {}).items()]

    def python_minors(self, name: str, version: str) -> frozenset[str] | None:
        minors = self.table[name][version][2]
        return None if minors is None else frozenset(minors)


INDEX = FakeIndex(
    {
        "proptest": {
            "3.1.0": ("2016-03-06T14:58:15Z", None, ["3.4", "3.5"]),
            "4.0.0": ("2019-01-01T00:00:00Z", ">=3.5", ["3.5", "3.6", "3.7"]),
            "5.37.1": ("2020-10-07T02:41:23Z", ">=3.6", ["3.6", "3.7"]),
            "5.38.0": ("2020-10-20T00:00:00Z", ">=3.6", ["3.6", "3.7", "3.8", "3.9"]),
            "6.0.0rc1": ("2020-10-06T00:00:00Z", ">=3.6", ["3.9"]),
            "9.0.0": ("2024-01-01T00:00:00Z", ">=3.12", ["3.12"]),
        },
        # Classifiers one minor short: no evidence against it.
        "lagging": {"1.0": ("2020-01-01T00:00:00Z", None, ["3.7", "3.8"])},
        # No readable metadata: no evidence, no change.
        "opaque": {"0.1": ("2015-01-01T00:00:00Z", None, None)},
        "strict": {
            "1.0": ("2018-01-01T00:00:00Z", "<3.8", ["3.6", "3.7"]),
            "2.0": ("2020-11-01T00:00:00Z", ">=3.6", None),
        },
    }
)


def test_a_pin_declared_for_old_pythons_only_takes_the_nearest_release_that_supports_it() -> None:
    reqs, adjusted, dates = adjust_stale_pins(
        ("proptest==3.1.0", "six", "pytest>=6", "lagging==1.0", "opaque==0.1"),
        "3.9",
        PYTHON_RELEASES,
        INDEX,
    )
    # 5.37.1 came out after Python 3.9, but says 3.6-3.7: 5.38.0 names 3.9 (not the rc).
    assert reqs == ("proptest==5.38.0", "six", "pytest>=6", "lagging==1.0", "opaque==0.1")
    assert [(a.original, a.chosen) for a in adjusted] == [("proptest==3.1.0", "proptest==5.38.0")]
    assert "declares Python 3.4, 3.5 only" in adjusted[0].reason
    # Resolved as of the day after its upload, not the commit's date.
    assert dates == {"proptest": "2020-10-21T00:00:00Z"}


def test_requires_python_excluding_the_python_and_markers() -> None:
    reqs, adjusted, _ = adjust_stale_pins(
        ("strict==1.0", "proptest==3.1.0; python_version < '3'"), "3.9", PYTHON_RELEASES, INDEX
    )
    # No classifier says 3.9 within reach: the first release made once 3.9 was out.
    assert reqs[0] == "strict==2.0" and "requires Python <3.8" in adjusted[0].reason
    # A pin whose marker does not hold on this Python is not installed: left alone.
    assert reqs[1] == "proptest==3.1.0; python_version < '3'"


def _recipe(**kw: Any) -> InstallRecipe:
    base: dict[str, Any] = dict(
        project_name="proj",
        python="3.9",
        python_reason="test",
        requirements=("proptest==3.1.0", "pytest"),
        build_requirements=(),
        extras=(),
        sources=(),
        # After Python 3.9's release, before the replacement's.
        exclude_newer="2020-10-10T00:00:00Z",
    )
    base.update(kw)
    return InstallRecipe(**base)


def test_the_recipe_records_the_adjustment_and_keeps_other_digests() -> None:
    plain = _recipe(requirements=("pytest",))
    assert with_supported_pins(plain, INDEX) is plain
    # A recipe without replaced pins keeps the digest it had before the field existed.
    assert "package_dates" not in json.dumps(
        {k: v for k, v in plain.to_dict().items() if k != "package_dates"}
    )
    fixed = with_supported_pins(_recipe(), INDEX)
    assert fixed.requirements == ("proptest==5.38.0", "pytest")
    assert fixed.package_dates == ("proptest=2020-10-21T00:00:00Z",)
    assert fixed.adjusted[-1].chosen == "proptest==5.38.0"
    assert recipe_digest(fixed) != recipe_digest(_recipe())


def test_the_resolver_takes_a_replaced_pin_as_of_its_own_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "proptest==5.38.0\n", "")

    monkeypatch.setattr(deps.subprocess, "run", run)
    monkeypatch.setattr(deps, "_target_interpreter", lambda v: None)
    recipe = with_supported_pins(_recipe(), INDEX)
    deps.resolve(recipe, "2.31", cache=tmp_path)
    cmd = seen[-1]
    pairs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--exclude-newer-package"]
    assert "proptest=2020-10-21T00:00:00Z" in pairs


def _sdist(name: str, version: str, classifiers: list[str]) -> bytes:
    buf = io.BytesIO()
    info = "Metadata-Version: 1.1\nName: x\n" + "".join(f"Classifier: {c}\n" for c in classifiers)
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = info.encode()
        member = tarfile.TarInfo(f"{name}-{version}/PKG-INFO")
        member.size = len(data)
        tf.addfile(member, io.BytesIO(data))
    return buf.getvalue()


def test_the_index_reads_classifiers_from_metadata_files_and_sdists(tmp_path: Path) -> None:
    page = {
        "files": [
            {
                "filename": "proptest-3.1.0.tar.gz",
                "url": "../../files/proptest-3.1.0.tar.gz",
                "upload-time": "2016-03-06T14:58:15Z",
                "requires-python": None,
                "size": 100,
            },
            {
                "filename": "proptest-5.38.0-py3-none-any.whl",
                "url": "../../files/proptest-5.38.0-py3-none-any.whl",
                "upload-time": "2020-10-20T00:00:00Z",
                "requires-python": ">=3.6",
                "core-metadata": {"sha256": "x"},
                "size": 100,
            },
            {"filename": "proptest-4.0.tar.gz", "url": "x", "yanked": True, "size": 1},
        ]
    }
    bodies = {
        "https://pypi.org/simple/proptest/": json.dumps(page).encode(),
        "https://pypi.org/files/proptest-3.1.0.tar.gz": _sdist(
            "proptest", "3.1.0", ["Programming Language :: Python :: 3.5"]
        ),
        "https://pypi.org/files/proptest-5.38.0-py3-none-any.whl.metadata": (
            b"Metadata-Version: 2.1\nClassifier: Programming Language :: Python :: 3.9\n"
        ),
    }
    index = PyPIReleases(tmp_path, fetch=lambda url: bodies[url])
    assert sorted(r.version for r in index.releases("proptest")) == ["3.1.0", "5.38.0"]
    assert index.python_minors("proptest", "3.1.0") == frozenset({"3.5"})
    assert index.python_minors("proptest", "5.38.0") == frozenset({"3.9"})


def test_what_the_replacement_needs_is_resolved_as_of_its_date_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    hint = (
        "error: No solution found when resolving dependencies\n"
        "hint: `sortedcontainers` was filtered by `exclude-newer` to only include packages "
        "uploaded before 2017-01-26T18:02:32Z.\n"
    )

    def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        dated = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--exclude-newer-package"]
        if not any(d.startswith("sortedcontainers=") for d in dated):
            return subprocess.CompletedProcess(cmd, 1, "", hint)
        return subprocess.CompletedProcess(cmd, 0, "proptest==5.38.0\n", "")

    monkeypatch.setattr(deps.subprocess, "run", run)
    monkeypatch.setattr(deps, "_target_interpreter", lambda v: None)
    deps.resolve(with_supported_pins(_recipe(), INDEX), "2.31", cache=tmp_path)
    assert len(seen) == 2
    dated = [seen[1][i + 1] for i, a in enumerate(seen[1]) if a == "--exclude-newer-package"]
    assert "sortedcontainers=2020-10-21T00:00:00Z" in dated
    # Without replaced pins the resolver's verdict stands: no retry.
    seen.clear()
    with pytest.raises(Exception, match="No solution"):
        deps.resolve(_recipe(requirements=("other==1",)), "2.31", cache=tmp_path / "b")
    assert len(seen) == 1
