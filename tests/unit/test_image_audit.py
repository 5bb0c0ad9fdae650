"""The image audit's distribution check: installed copies of the project versus vendored ones."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from typing import IO

from swe_forge.images.audit import AuditReport, Needles, _scan, is_installed_dist_dir

SITE = "opt/venv/lib/python3.11/site-packages"


class _TarEngine:
    """An engine whose image is a fixed set of files (path -> bytes)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def export(self, image: str) -> Iterator[tuple[tarfile.TarInfo, IO[bytes] | None]]:
        for name, data in self.files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            yield info, io.BytesIO(data)


def _audit(files: dict[str, bytes], project: str = "platformdirs") -> AuditReport:
    report = AuditReport(image="img", instance_id="x")
    needles = Needles(frozenset(), frozenset(), (), {})
    _scan(_TarEngine(files), "img", needles, project, report, {})  # type: ignore[arg-type]
    return report


def _dist(d: str, url: str | None) -> dict[str, bytes]:
    files = {f"{d}/METADATA": b"Name: platformdirs\n"}
    if url is not None:
        files[f"{d}/direct_url.json"] = json.dumps({"url": url}).encode()
    return files


def test_vendored_copy_inside_another_package_is_not_an_installed_copy() -> None:
    files = {
        **_dist(f"{SITE}/platformdirs-4.2.0.dist-info", "file:///testbed"),
        **_dist(f"{SITE}/setuptools/_vendor/platformdirs-4.2.2.dist-info", None),
        **_dist(f"{SITE}/pip/_vendor/nested/platformdirs-3.0.dist-info", None),
    }
    report = _audit(files)
    assert report.passed, report.findings
    assert report.vendored == [
        f"/{SITE}/setuptools/_vendor/platformdirs-4.2.2.dist-info",
        f"/{SITE}/pip/_vendor/nested/platformdirs-3.0.dist-info",
    ]


def test_a_second_installed_copy_still_fails_the_audit() -> None:
    files = {
        **_dist(f"{SITE}/platformdirs-4.2.0.dist-info", "file:///testbed"),
        **_dist("usr/lib/python3/dist-packages/platformdirs-2.6.dist-info", None),
        **_dist("opt/target/platformdirs-2.6.dist-info", None),
    }
    report = _audit(files)
    assert not report.passed
    assert [f["check"] for f in report.findings] == ["distribution", "distribution"]


def test_installed_dist_dir_rule() -> None:
    assert is_installed_dist_dir(f"{SITE}/packaging-24.0.dist-info")
    assert is_installed_dist_dir("usr/lib/python3/dist-packages/wheel-0.40.dist-info")
    assert not is_installed_dist_dir(f"{SITE}/setuptools/_vendor/packaging-24.0.dist-info")
    assert not is_installed_dist_dir(f"{SITE}/pkg_resources/_vendor/zipp-3.1.dist-info")
    # Outside an import root nothing shows it is vendored: it counts as installed.
    assert is_installed_dist_dir("opt/deps/tomli-2.0.dist-info")


def test_a_generic_added_line_in_a_vendored_dependency_is_chance() -> None:
    """rust-lang/hashbrown: a vendored crate's `let previous_hook = std::panic::take_hook();`
    is third-party code; the same line in the work tree is still a leak."""
    line = b"let previous_hook = std::panic::take_hook();"
    needles = Needles(frozenset(), frozenset({line}), (), {})
    for store, leaks in (
        ("opt/cargo/vendor/zerocopy-0.8.48/src/layout.rs", False),
        ("opt/go/modcache/github.com/x/y@v1.0.0/z.go", False),
        ("opt/node_modules/left-pad/index.js", False),
        ("testbed/src/lib.rs", True),
        ("tmp/cache/leak.rs", True),
    ):
        report = AuditReport(image="img", instance_id="x")
        _scan(
            _TarEngine({store: b"fn f() {\n    " + line + b"\n}\n"}),
            "img",
            needles,
            "p",
            report,
            {},
        )  # type: ignore[arg-type]
        assert (not report.passed) is leaks, (store, report.findings)
