"""The wheel store, locks' pins, installers' pins, and sdists read without being run."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

from swe_forge.ecosystems.python.deps import (
    PIP_PEP660_FLOOR,
    Lock,
    tool_floors,
    with_bootstrap,
)
from swe_forge.ecosystems.python.deps_wheels import WheelStore, build_requirements, selection_key

H1, H2, H3 = "1" * 64, "2" * 64, "3" * 64
LOCK = f"""\
attrs==23.1.0 \\
    --hash=sha256:{H1} \\
    --hash=sha256:{H2}
pip==23.2.1 \\
    --hash=sha256:{H3}
zope-interface==6.0 ; sys_platform == 'linux' \\
    --hash=sha256:{H2}
Setuptools==68.0.0 \\
    --hash=sha256:{H1}
"""


def test_lock_pins_keep_their_hashes_and_lines() -> None:
    lock = Lock(LOCK, "3.11", "x86_64-manylinux_2_36", "d")
    pins = lock.pinned()
    assert [(p.name, p.version) for p in pins] == lock.pins()
    assert [p.key for p in pins] == ["attrs", "pip", "zope-interface", "setuptools"]
    assert pins[0].hashes == {H1, H2} and pins[1].hashes == {H3}
    assert pins[2].text.startswith("zope-interface==6.0 ; sys_platform") and H2 in pins[2].text
    assert H3 not in pins[0].text  # a pin's lines stop where the next pin starts
    assert lock.bootstrap_text() == "pip==23.2.1\nSetuptools==68.0.0\n"


def test_every_lock_asks_for_the_installers_but_never_the_project() -> None:
    assert with_bootstrap("attrs>=21\npytest\n", "demo") == (
        "attrs>=21\npip\npytest\nsetuptools\nwheel\n"
    )
    # Named already (with a constraint): kept as the project asked.
    assert with_bootstrap("setuptools<60\n", None) == "pip\nsetuptools<60\nwheel\n"
    # Mining pip itself: pip must not be pinned from the index.
    assert "pip\n" not in with_bootstrap("attrs\n", "pip")


def test_installers_never_predate_pep_660_or_the_python() -> None:
    old = tool_floors("3.9", "2019-05-01T00:00:00Z")
    assert old["pip"] == PIP_PEP660_FLOOR  # pip 21.3: editable installs of pyproject projects
    assert old["setuptools"] == "2021-02-02T00:00:00Z"  # ~4 months after Python 3.9
    assert old["setuptools"] < old["pip"]
    # A commit newer than every floor resolves every tool as of its own date.
    assert tool_floors("3.9", "2024-01-01T00:00:00Z") == {}
    assert set(tool_floors("3.13", "2024-01-01T00:00:00Z")) >= {"pip", "setuptools", "wheel"}


def test_pytest_never_predates_what_the_harness_runs_on() -> None:
    # A 2019 commit on 3.9: pytest as of the day after 5.4.0 (the harness's floor there).
    old = tool_floors("3.9", "2019-05-01T00:00:00Z")
    assert old["pytest"] == old["pluggy"] == "2020-03-13T00:00:00Z"
    # On 3.11 the floor is 6.2.4; a commit after it keeps its own date for pytest.
    assert tool_floors("3.11", "2021-01-01T00:00:00Z")["pytest"] == "2021-05-05T00:00:00Z"
    assert "pytest" not in tool_floors("3.11", "2022-01-01T00:00:00Z")


def test_build_backends_never_predate_their_editable_hooks() -> None:
    # A 2021 poetry project: poetry-core 1.0.3 has no build_editable, 1.0.8 (2022-02-28) does.
    floors = tool_floors("3.9", "2021-05-17T18:38:51Z")
    assert floors["poetry-core"] == "2022-03-01T00:00:00Z"
    assert floors["flit-core"] == "2021-10-11T00:00:00Z"
    assert "flit-core" not in tool_floors("3.9", "2021-12-01T00:00:00Z")
    assert "poetry-core" in tool_floors("3.9", "2021-12-01T00:00:00Z")


def test_store_keeps_one_file_per_content_and_answers_selections(tmp_path: Path) -> None:
    store = WheelStore(tmp_path / "store")
    src = tmp_path / "demo-1.0-py3-none-any.whl"
    src.write_bytes(b"wheel bytes")
    sha, stored = store.add(src)
    again, stored2 = store.add(src)
    assert sha == again and stored == stored2 and stored.read_bytes() == b"wheel bytes"
    assert os.stat(stored).st_ino == os.stat(src).st_ino  # linked, not copied
    key = selection_key("wheel", "demo", "1.0", "3.11", "x86_64-manylinux_2_36")
    assert store.selected(key) is None
    store.remember(key, sha, src.name)
    assert store.selected(key) == stored
    assert store.selected(key, frozenset({sha})) == stored
    # A lock that does not allow this file's hash gets nothing from the store.
    assert store.selected(key, frozenset({H1})) is None
    other = selection_key("wheel", "demo", "1.0", "3.9", "x86_64-manylinux_2_31")
    assert store.selected(other) is None  # another target may pick another file


def _tar(path: Path, files: dict[str, str], top: str = "demo-1.0") -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_build_requirements_of_a_pyproject_sdist(tmp_path: Path) -> None:
    sdist = _tar(
        tmp_path / "demo-1.0.tar.gz",
        {
            "pyproject.toml": '[build-system]\nrequires = ["hatchling>=1.5", "hatch-vcs"]\n'
            'build-backend = "hatchling.build"\n',
            "setup.py": "setup(setup_requires=['never-read'])",
            "tests/pyproject.toml": '[build-system]\nrequires = ["nested-ignored"]\n',
        },
    )
    assert build_requirements(sdist) == ["hatchling>=1.5", "hatch-vcs"]


def test_build_requirements_of_a_legacy_sdist_include_setup_requires(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    setup = (
        f"import os\nopen({str(marker)!r}, 'w').write('x')\n"
        "from setuptools import setup\n"
        "setup(name='demo', setup_requires=['setuptools_scm>=3', 'cffi'])\n"
    )
    sdist = _tar(
        tmp_path / "demo-1.0.tar.gz",
        {"setup.py": setup, "setup.cfg": "[options]\nsetup_requires =\n    pytest-runner\n"},
    )
    assert build_requirements(sdist) == [
        "setuptools>=40.8.0",
        "wheel",
        "pytest-runner",
        "setuptools_scm>=3",
        "cffi",
    ]
    assert not marker.exists()  # read, never run


def test_build_requirements_of_a_zip_sdist_with_a_setuptools_backend(tmp_path: Path) -> None:
    path = tmp_path / "demo-1.0.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "demo-1.0/pyproject.toml",
            '[build-system]\nrequires = ["setuptools>=61"]\n'
            'build-backend = "setuptools.build_meta"\n',
        )
        zf.writestr("demo-1.0/setup.py", "setup(setup_requires='numpy')")
    assert build_requirements(path) == ["setuptools>=61", "numpy", "wheel"]
