"""Resolution against the real package index: an old commit still gets a pytest the harness
runs on (with the packages that pytest needs), and a new one is left as it is."""

from __future__ import annotations

from pathlib import Path

from swe_forge.ecosystems.python.deps import _compile


def _pins(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, _, version = line.partition("==")
            out[name.strip().lower()] = version.split()[0].rstrip("\\").strip()
    return out


def test_an_old_commit_gets_the_harness_floor_pytest(tmp_path: Path) -> None:
    lock = _compile(
        "pytest>=3\n",
        python="3.9",
        glibc="2.31",
        exclude_newer="2019-05-01T00:00:00Z",
        no_emit=None,
        cache=tmp_path,
        timeout=300,
        what="test",
    )
    pins = _pins(lock)
    # As of 2019-05 alone, pytest 4.4 (and pluggy 0.9) would be chosen: too old to judge by.
    assert pins["pytest"] == "5.4.0", pins
    major, minor = (int(x) for x in pins["pluggy"].split(".")[:2])
    assert (major, minor) >= (0, 12)


def test_a_recent_commit_keeps_its_own_date(tmp_path: Path) -> None:
    lock = _compile(
        "pytest\n",
        python="3.11",
        glibc="2.36",
        exclude_newer="2023-06-01T00:00:00Z",
        no_emit=None,
        cache=tmp_path,
        timeout=300,
        what="test",
    )
    assert _pins(lock)["pytest"] == "7.3.1"
