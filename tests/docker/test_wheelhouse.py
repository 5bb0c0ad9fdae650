"""Wheelhouses with the real index and engine: the shared store, and a C extension built from
an sdist on the build base, then imported on the runtime base (which has no compiler)."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.ecosystems.python.deps import Lock, _build_sdists, _compile, _Filler, wheelhouse
from swe_forge.ecosystems.python.deps_wheels import WheelStore
from swe_forge.engine import Engine
from swe_forge.images.base import BaseImage, BaseRecipe, ensure_base

GLIBC = "2.36"
AS_OF = "2023-06-01T00:00:00Z"


@pytest.fixture(scope="module")
def bases(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> tuple[BaseImage, BaseImage]:
    work = tmp_path_factory.mktemp("bases")
    mirror = load_config().images.debian_mirror
    recipe = BaseRecipe.for_distro("bookworm")
    runtime = ensure_base(engine, recipe, mirror=mirror, work_dir=work)
    build = ensure_base(engine, recipe.build(), mirror=mirror, work_dir=work)
    return runtime, build


def _lock(text: str) -> Lock:
    return Lock(text, "3.11", f"x86_64-manylinux_{GLIBC.replace('.', '_')}", "t", AS_OF)


def test_the_same_wheel_is_downloaded_once_across_wheelhouses(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = _compile(
        "iniconfig\npip\n",
        python="3.11",
        glibc=GLIBC,
        exclude_newer=AS_OF,
        no_emit=None,
        cache=cache,
        timeout=600,
        what="test",
    )
    first = wheelhouse(_lock(text), GLIBC, cache=cache)
    assert first.wheels == 2 and first.from_store == 0
    # Another lock with the same pins (another digest): every wheel comes from the store.
    other = Lock(text + "\n", "3.11", _lock(text).platform, "t2", AS_OF)
    second = wheelhouse(other, GLIBC, cache=cache)
    assert second.wheels == 2 and second.from_store == 2
    a = sorted(first.path.glob("*.whl"))
    b = sorted(second.path.glob("*.whl"))
    assert [p.name for p in a] == [p.name for p in b]
    assert all(os.stat(x).st_ino == os.stat(y).st_ino for x, y in zip(a, b, strict=True))
    assert (second.path / "bootstrap.txt").read_text().startswith("pip==23.1.2\n")


SETUP = """\
from setuptools import Extension, setup
setup(name="spam", version="1.0", ext_modules=[Extension("spam", ["spam.c"])])
"""
SPAM_C = """\
#include <Python.h>
static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "spam", NULL, -1, methods};
PyMODINIT_FUNC PyInit_spam(void) { return PyModule_Create(&mod); }
"""


def test_a_c_extension_sdist_is_built_offline_on_the_build_base(
    engine: Engine, bases: tuple[BaseImage, BaseImage], tmp_path: Path
) -> None:
    runtime, build = bases
    cache = tmp_path / "cache"
    house = tmp_path / "house"
    house.mkdir()
    text = _compile(
        "pip\nsetuptools\nwheel\n",
        python="3.11",
        glibc=GLIBC,
        exclude_newer=AS_OF,
        no_emit=None,
        cache=cache,
        timeout=600,
        what="test",
    )
    lock = _lock(text)
    filler = _Filler(lock, GLIBC, WheelStore(cache / "wheels"), cache, 600)
    assert filler.wheels(lock.pinned(), house) == []
    (house / "bootstrap.txt").write_text(lock.bootstrap_text())
    # The sdist's build requirements, as the wheelhouse vendors them: setuptools and wheel.
    (house / "build").mkdir()
    for whl in house.glob("*.whl"):
        os.link(whl, house / "build" / whl.name)
    src = tmp_path / "spam-1.0"
    src.mkdir()
    (src / "setup.py").write_text(SETUP)
    (src / "spam.c").write_text(SPAM_C)
    sdists = tmp_path / "sdists"
    sdists.mkdir()
    with tarfile.open(sdists / "spam-1.0.tar.gz", "w:gz") as tf:
        tf.add(src, arcname="spam-1.0")
    built = _build_sdists(engine, build.tag, house, sdists, 900)
    whl = built["spam"]
    assert whl.name.startswith("spam-1.0-cp311-cp311-linux_")
    # The runtime base has no compiler, and the wheel built on the build base works there.
    script = (
        "command -v gcc cc || echo no-compiler; python3 -m venv /tmp/v; "
        "/tmp/v/bin/pip install -q --no-index /w/*.whl; "
        "/tmp/v/bin/python -c 'import json, spam; print(json.dumps(spam.add(2, 40)))'"
    )
    code, out = engine.run(
        runtime.tag,
        ["/bin/sh", "-c", script],
        volumes={str(whl.parent): {"bind": "/w", "mode": "ro"}},
    )
    lines = out.strip().splitlines()
    assert code == 0, out
    assert lines[0] == "no-compiler"
    assert json.loads(lines[-1]) == 42


def test_the_build_base_has_a_toolchain_for_its_own_python(
    engine: Engine, bases: tuple[BaseImage, BaseImage]
) -> None:
    runtime, build = bases
    assert build.tag != runtime.tag and "-build-" in build.tag
    code, out = engine.run(
        build.tag,
        [
            "/bin/sh",
            "-c",
            "gcc --version >/dev/null && g++ --version >/dev/null && "
            "python3 -c 'import sysconfig, os; "
            'print(os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))\'',
        ],
    )
    assert code == 0 and out.strip().endswith("True"), out
