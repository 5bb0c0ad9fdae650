"""Static install-recipe detection (nothing of the repository is executed)."""

from __future__ import annotations

from datetime import UTC, datetime

from swe_forge.config import RepoOverride
from swe_forge.images.recipe import choose_python, detect_recipe

PYTHONS = ("3.9", "3.11", "3.13")
T2020 = int(datetime(2020, 6, 1, tzinfo=UTC).timestamp())
T2024 = int(datetime(2024, 1, 15, tzinfo=UTC).timestamp())


def recipe(files: dict[str, str], when: int = T2024, override: RepoOverride | None = None):  # type: ignore[no-untyped-def]
    data = {k: v.encode() for k, v in files.items()}
    return detect_recipe(lambda p: data.get(p), when, pythons=PYTHONS, override=override)


def test_pyproject_with_test_extra() -> None:
    r = recipe(
        {
            "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n[project]\nname = "Demo-Pkg"\nrequires-python = ">=3.8"\ndependencies = ["attrs>=21"]\n[project.optional-dependencies]\ntest = ["pytest>=7", "demo-pkg[extra]"]\nextra = ["rich"]\ndocs = ["sphinx"]\n'
        }
    )
    assert r.project_name == "Demo-Pkg"
    assert r.requirements == ("attrs>=21", "pytest>=7", "rich")
    assert (
        "hatchling" in r.build_requirements
        and "editables" in r.build_requirements
        and "wheel" in r.build_requirements
    )
    assert (
        r.extras == ("test",) and r.python == "3.11" and r.exclude_newer == "2024-01-15T00:00:00Z"
    )


def test_setup_py_is_read_not_run() -> None:
    setup = (
        "import os\nos.system('touch /tmp/pwned')\n"
        'BASE = ["six"]\nEXTRAS = {"tests_base": ["hypothesis"]}\nEXTRAS["tests"] = EXTRAS["tests_base"] + ["mock"]\n'
        "setup(name='legacy', install_requires=BASE + ['requests<3'], extras_require=EXTRAS, python_requires='>=3.6',\n"
        "      classifiers=['Programming Language :: Python :: 3.8'])\n"
    )
    r = recipe({"setup.py": setup}, T2020)
    assert r.project_name == "legacy"
    assert set(r.requirements) == {"six", "requests<3", "hypothesis", "mock", "pytest"}
    assert r.python == "3.9"  # classifiers stop at 3.8: the closest available above


def test_requirement_files_tox_and_self_extras() -> None:
    r = recipe(
        {
            "pyproject.toml": '[project]\nname = "x"\n[project.optional-dependencies]\ncli = ["click"]\nfast = ["orjson"]\n',
            "requirements-dev.txt": "-r requirements/base.txt\n-e .[cli]\n--index-url https://evil.example/simple\ngit+https://example.com/x.git\npytest-cov  # comment\n",
            "requirements/base.txt": "idna\n",
            "tox.ini": "[tox]\nenvlist = py39,py311\n[testenv]\nextras = fast\ndeps =\n    pytest\n    {env:EXTRA}\n",
        }
    )
    assert set(r.requirements) == {"idna", "pytest-cov", "click", "orjson", "pytest"}
    assert r.python == "3.11"


def test_poetry_and_overrides() -> None:
    r = recipe(
        {
            "pyproject.toml": '[tool.poetry]\nname = "poet"\n[tool.poetry.dependencies]\npython = "^3.9"\nrequests = "^2.28"\nlocal = {path = "../x"}\n[tool.poetry.group.dev.dependencies]\npytest = "~7.2"\n'
        },
        override=RepoOverride(python="3.13", requirements=("pytest-mock",), exclude=("requests",)),
    )
    assert r.project_name == "poet" and r.python == "3.13"
    assert set(r.requirements) == {"pytest<7.3,>=7.2", "pytest-mock"}


def test_choose_python() -> None:
    assert choose_python([">=3.10"], set(), T2020, PYTHONS)[0] == "3.11"
    assert choose_python([], set(), T2020, PYTHONS)[0] == "3.9"
    assert choose_python([], set(), T2024, PYTHONS)[0] == "3.11"
    assert choose_python([], {"3.12", "3.13"}, T2024, PYTHONS)[0] == "3.13"
    assert (
        choose_python(["<3"], set(), T2024, PYTHONS)[0] == "3.11"
    )  # impossible constraint: ignored
