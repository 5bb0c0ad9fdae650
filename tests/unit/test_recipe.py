"""Static install-recipe detection (nothing of the repository is executed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from swe_forge.config import RepoOverride
from swe_forge.ecosystems.python.recipe import (
    choose_python,
    detect_recipe,
    imported_modules,
    recipe_digest,
)
from swe_forge.ecosystems.python.recipe_metadata import cfg_requirements
from swe_forge.ecosystems.python.recipe_poetry import dependency_table, python_constraint
from swe_forge.ecosystems.python.recipe_requirements import (
    Adjustment,
    applies,
    below_floor,
    harness_pytest_floor,
    merge_requirements,
    raise_pytest_floor,
)
from swe_forge.images.base import pythons_available

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


def test_setup_requires_are_build_requirements() -> None:
    # setuptools fetches setup_requires itself while the project installs: offline, they must
    # be vendored with the build requirements.
    r = recipe(
        {"setup.py": "setup(name='p', setup_requires=['setuptools_scm', 'pbr>=1'])\n"}, T2020
    )
    assert {"setuptools_scm", "pbr>=1"} <= set(r.build_requirements)
    r = recipe(
        {
            "setup.py": "setup()\n",
            "setup.cfg": "[metadata]\nname = q\n[options]\nsetup_requires =\n    setuptools_scm\n",
        },
        T2020,
    )
    assert "setuptools_scm" in r.build_requirements


def test_setup_cfg_lists_on_one_line_are_semicolon_separated() -> None:
    # setuptools reads `install_requires = a>=1; b` as two requirements (environs did this).
    cfg = (
        "[metadata]\nname = environs\n[options]\n"
        "install_requires = marshmallow>=3.0.0; python-dotenv\n"
        "[options.extras_require]\ntests = pytest; freezegun\n"
        "lint =\n    flake8==7.0.0\n    # a comment\n    mypy; python_version>'3.8'\n"
    )
    r = recipe({"setup.py": "setup()\n", "setup.cfg": cfg}, T2024)
    assert {"marshmallow>=3.0.0", "python-dotenv", "pytest", "freezegun"} <= set(r.requirements)
    assert cfg_requirements("\n    mypy; python_version>'3.8'\n    # no\n") == [
        "mypy; python_version>'3.8'"
    ]


def test_old_commit_pins_on_pytest_internals_are_relaxed() -> None:
    # 2018: pytest resolves at the harness floor's date (5.4.0 needs pluggy>=0.12), so the
    # project's pluggy==0.6.0 of that day is relaxed, and said so.
    t2018 = int(datetime(2018, 10, 14, tzinfo=UTC).timestamp())
    files = {
        "setup.py": "setup(name='old', python_requires='>=3.6')\n",
        "requirements-dev.txt": "pytest==3.8.2\npluggy==0.6.0\npy==1.6.0\nattrs==18.2.0\n",
    }
    r = recipe(files, t2018)
    assert (
        "pluggy" in r.requirements and "py" in r.requirements and "attrs==18.2.0" in r.requirements
    )
    assert {a.original for a in r.adjusted} >= {"pluggy==0.6.0", "py==1.6.0"}
    # A commit after the floor's release keeps its pins.
    assert "pluggy==0.6.0" in recipe(files, T2024).requirements


def test_pdm_and_uv_development_groups() -> None:
    pdm = (
        '[project]\nname = "p"\n[tool.pdm.dev-dependencies]\nlint = ["ruff"]\n'
        'test = ["hypothesis>=6", "pytest>=7", "-e file:///${PROJECT_ROOT}/#egg=p"]\n'
    )
    r = recipe({"pyproject.toml": pdm}, T2024)
    assert "hypothesis>=6" in r.requirements and "ruff" not in r.requirements
    assert "group:test" in r.extras
    uv = '[project]\nname = "q"\n[tool.uv]\ndev-dependencies = ["freezegun", "pytest"]\n'
    assert "freezegun" in recipe({"pyproject.toml": uv}, T2024).requirements


def test_dependency_groups_include_other_groups() -> None:
    text = (
        '[project]\nname = "e"\n[dependency-groups]\ndjango = ["dj-database-url"]\n'
        'tests = [{ include-group = "Django" }, "pytest", { include-group = "tests" }]\n'
    )
    r = recipe({"pyproject.toml": text}, T2024)
    assert "dj-database-url" in r.requirements and "pytest" in r.requirements


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


def at(day: str) -> int:
    return int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp())


# ---------------------------------------------------------------- requirement merge (issue 1)
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # Marker branches stay apart: the target Python takes the one that applies.
        (
            ['pytest<8; python_version < "3.8"', "pytest>=8"],
            ['pytest<8; python_version < "3.8"', "pytest>=8"],
        ),
        (
            ["freezegun==1.1.0; python_version<'3.8'", "freezegun==1.5.0; python_version>='3.8'"],
            [
                'freezegun==1.1.0; python_version < "3.8"',
                'freezegun==1.5.0; python_version >= "3.8"',
            ],
        ),
        (
            ["colorama>=0.3.4; sys_platform=='win32'", "colorama>=0.3.4"],
            ["colorama>=0.3.4", 'colorama>=0.3.4; sys_platform == "win32"'],
        ),
        # The same marker (however it is spelled) merges: specifiers meet, extras join.
        (
            ["pytest>=7; python_version<'3.8'", 'pytest<8 ; python_version < "3.8"'],
            ['pytest<8,>=7; python_version < "3.8"'],
        ),
        (["pytest>=7", "PyTest<9"], ["pytest<9,>=7"]),
        (["requests[socks]>=2", "Requests[security]"], ["requests[security,socks]>=2"]),
    ],
)
def test_merge_keeps_marker_branches(given: list[str], expected: list[str]) -> None:
    from swe_forge.ecosystems.python.recipe_requirements import _render

    merged = merge_requirements(Requirement(g) for g in given)
    assert sorted(_render(r) for r in merged) == expected


def test_marker_branches_survive_detection_and_pytest_is_added_for_this_python() -> None:
    r = recipe(
        {
            "setup.py": (
                "setup(name='logs', extras_require={'dev': [\n"
                "  \"pytest==6.1.2 ; python_version<'3.8'\",\n"
                "  \"freezegun==1.1.0 ; python_version<'3.8'\",\n"
                "  \"freezegun==1.5.0 ; python_version>='3.8'\",\n"
                "  'colorama>=0.3.4'],\n"
                "  'other': []},\n"
                "  install_requires=[\"colorama>=0.3.4 ; sys_platform=='win32'\"])\n"
            )
        }
    )
    assert r.python == "3.11"
    assert r.requirements == (
        "colorama>=0.3.4",
        'colorama>=0.3.4; sys_platform == "win32"',
        'freezegun==1.1.0; python_version < "3.8"',
        'freezegun==1.5.0; python_version >= "3.8"',
        "pytest",
        'pytest==6.1.2; python_version < "3.8"',
    )
    assert any("pytest added" in n for n in r.notes)


@pytest.mark.parametrize(
    ("req", "python", "expected"),
    [
        ("x", "3.9", True),
        ('x; python_version < "3.8"', "3.11", False),
        ('x; python_version >= "3.10"', "3.11", True),
        ('x; python_version >= "3.10"', "3.9", False),
        ('x; python_full_version >= "3.9.1"', "3.9", False),
        ('x; sys_platform == "win32"', "3.11", False),
        ('x; platform_python_implementation == "PyPy"', "3.11", False),
        ('x; extra == "docs"', "3.11", False),
    ],
)
def test_applies_on_the_target(req: str, python: str, expected: bool) -> None:
    assert applies(Requirement(req), python) is expected


# ---------------------------------------------------------------- Poetry (issue 2)
@pytest.mark.parametrize(
    ("constraint", "rendered", "inside", "outside"),
    [
        ("^1.2.3", "x<2.0.0,>=1.2.3", ["1.2.3", "1.9"], ["1.2.2", "2.0.0"]),
        ("^0.2.3", "x<0.3.0,>=0.2.3", ["0.2.9"], ["0.3.0"]),
        ("^0.0.3", "x<0.0.4,>=0.0.3", ["0.0.3"], ["0.0.4"]),
        ("^1.0.0b1", "x<2.0.0,>=1.0.0b1", ["1.0.0b1", "1.0.0", "1.5"], ["0.9", "2.0.0"]),
        ("~1.2", "x<1.3,>=1.2", ["1.2.9"], ["1.3"]),
        ("~1", "x<2,>=1", ["1.9"], ["2"]),
        ("~=1.4.2", "x<1.5.0,>=1.4.2", ["1.4.9"], ["1.5"]),
        ("1.2.*", "x==1.2.*", ["1.2.0", "1.2.7"], ["1.3"]),
        ("*", "x", ["0.1", "99"], []),
        (">=1.2,<2", "x<2,>=1.2", ["1.5"], ["2.0"]),
        (">=1.2 <2", "x<2,>=1.2", ["1.5"], ["2.0"]),
        ("1.2.3", "x==1.2.3", ["1.2.3"], ["1.2.4"]),
        ("==1.2.3", "x==1.2.3", ["1.2.3"], ["1.2.4"]),
        ("!=1.5", "x!=1.5", ["1.4", "1.6"], ["1.5"]),
        (">=2.7,!=3.0.*,!=3.1.*", "x!=3.0.*,!=3.1.*,>=2.7", ["2.7", "3.2"], ["3.1.5"]),
        # PEP 440 has no "or": a union becomes its hull (the newest release is in the last range).
        ("^2.7 || ^3.4", "x<4.0,>=2.7", ["2.7.3", "3.4", "3.9"], ["2.6", "4.0"]),
        ("^1.2 || 2.0.*", "x<2.1,>=1.2", ["1.3", "2.0.5"], ["2.1"]),
    ],
)
def test_poetry_constraints_mean_what_poetry_means(
    constraint: str, rendered: str, inside: list[str], outside: list[str]
) -> None:
    table = dependency_table({"x": constraint}, "t")
    assert len(table.required) == 1, table.notes
    req = Requirement(table.required[0])
    assert f"{req.name}{req.specifier}" == rendered
    for v in inside:
        assert req.specifier.contains(v, prereleases=True), v
    for v in outside:
        assert not req.specifier.contains(v, prereleases=True), v


def test_poetry_tables_markers_alternatives_and_sources() -> None:
    table = dependency_table(
        {
            "python": "^3.8",
            "dataclasses": {"version": "^0.7", "python": "~3.6"},
            "typing-extensions": {"version": ">=3.7", "python": "<3.8"},
            "tomli": [
                {"version": "^1.2", "python": "<3.7"},
                {"version": "^2.0", "python": ">=3.7", "extras": ["x"]},
            ],
            "pywin": {"version": "*", "markers": "sys_platform == 'win32'"},
            "ujson": {"version": "^5", "optional": True},
            "local": {"path": "../local"},
            "fork": {"git": "https://example.invalid/fork.git"},
            "bad": "^not-a-version",
            "worse": {"version": "^1", "markers": "not a marker ==="},
            "odd": 5,
        },
        "poetry dependencies",
    )
    assert table.required == [
        'dataclasses (>=0.7,<0.8) ; python_version == "3.6"',
        'pywin ; sys_platform == "win32"',
        'tomli (>=1.2,<2.0) ; python_version < "3.7"',
        'tomli[x] (>=2.0,<3.0) ; python_version >= "3.7"',
        'typing-extensions (>=3.7) ; python_version < "3.8"',
    ]
    assert table.optional == {"ujson": ["ujson (>=5,<6)"]}
    assert sorted(n.split(": ", 1)[1] for n in table.notes) == [
        "bad dropped (ParseConstraintError)",
        "fork dropped (not from the package index)",
        "local dropped (not from the package index)",
        "odd dropped (malformed constraint)",
        "worse dropped (UnexpectedCharacters)",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("^3.8", ">=3.8,<4.0"),
        ("~3.9", ">=3.9,<3.10"),
        ("3.9.*", "==3.9.*"),
        ("3.9", "==3.9"),
        (">=3.7,<4.0", ">=3.7,<4.0"),
        ("^2.7 || ^3.4", ">=2.7,<3.0 || >=3.4,<4.0"),
        ("*", None),
        ("not a version", None),
        (3.9, None),
    ],
)
def test_poetry_python_key(spec: object, expected: str | None) -> None:
    assert python_constraint(spec) == expected


def test_poetry_project_python_groups_extras_and_dev_dependencies() -> None:
    pyproject = """
[build-system]
requires = ["poetry-core>=1.0.0"]
build-backend = "poetry.core.masonry.api"
[tool.poetry]
name = "poet"
[tool.poetry.dependencies]
python = "~2.7 || ^3.10"
black = {version = "^20.8b1", python = "^3.6"}
ujson = {version = "^5", optional = true}
orjson = {version = "^3", optional = true}
[tool.poetry.extras]
test = ["ujson"]
speed = ["orjson"]
[tool.poetry.group.test.dependencies]
pytest = "^6.2"
[tool.poetry.group.docs.dependencies]
sphinx = "^4"
[tool.poetry.dev-dependencies]
pytest-cov = "~2.10"
"""
    r = recipe({"pyproject.toml": pyproject}, at("2023-01-01"))
    assert r.python == "3.11"
    assert "requires >=2.7,<2.8 || >=3.10,<4.0" in r.python_reason
    assert r.requirements == (
        'black<21.0,>=20.8b1; python_version >= "3.6" and python_version < "4.0"',
        "pytest-cov<2.11,>=2.10",
        "pytest<7.0,>=6.2",
        "ujson<6,>=5",
    )
    assert set(r.extras) == {"test", "group:test"}
    assert "poetry-core>=1.0.0" in r.build_requirements


# ---------------------------------------------------------------- Python choice (issue 3)
AVAILABLE = pythons_available(("bullseye", "bookworm", "trixie"))


@pytest.mark.parametrize(
    ("requires", "classifiers", "day", "expected"),
    [
        # Classifiers name versions not yet released at the commit: they do not count.
        ([], {"3.12", "3.13"}, "2024-01-15", "3.11"),
        ([">=3.8"], {"3.13"}, "2024-01-15", "3.11"),
        ([], {"3.13"}, "2024-11-01", "3.13"),
        ([], set(), "2024-11-01", "3.13"),
        ([], set(), "2024-10-06", "3.11"),
        ([], set(), "2024-10-07", "3.13"),  # released that day
        ([], set(), "2022-10-23", "3.9"),
        ([], set(), "2022-10-24", "3.11"),
        ([], set(), "2020-06-01", "3.9"),  # before every available Python: the oldest
        ([], set(), "2018-01-01", "3.9"),
        ([], {"3.8"}, "2024-01-15", "3.9"),  # classifiers stop below: the closest above
        ([], {"3.9", "3.10"}, "2024-01-15", "3.9"),
        ([], {"3.11"}, "2026-01-01", "3.11"),
        ([">=3.10"], set(), "2020-06-01", "3.11"),  # nothing allowed was released: the oldest
        ([">=3.10"], set(), "2023-06-01", "3.11"),
        (["<3.11"], set(), "2025-01-01", "3.9"),
        (["<3"], set(), "2024-01-15", "3.11"),  # impossible constraint: ignored
        (["==3.9.*"], set(), "2025-01-01", "3.9"),
        ([">=3.11.2"], set(), "2023-06-01", "3.11"),  # any 3.11 patch release
        ([">=3.8.1", "<4"], set(), "2025-01-01", "3.13"),
        ([">=2.7,<3.0 || >=3.4,<4.0"], set(), "2023-01-01", "3.11"),
        ([">=2.7,<3.0 || >=3.10,<3.12"], set(), "2025-01-01", "3.11"),
        (["not a spec"], set(), "2025-01-01", "3.13"),
    ],
)
def test_choose_python_newest_released_and_allowed(
    requires: list[str], classifiers: set[str], day: str, expected: str
) -> None:
    python, reason = choose_python(requires, classifiers, at(day), AVAILABLE)
    assert python == expected, reason
    assert day in reason


def test_choose_python_forced_and_deterministic() -> None:
    assert choose_python([">=3.12"], {"3.8"}, T2020, AVAILABLE, "3.9") == (
        "3.9",
        "configs/repos.yaml",
    )
    # The order of the available Pythons does not matter.
    assert choose_python([], {"3.13"}, at("2025-01-01"), tuple(reversed(AVAILABLE))) == (
        choose_python([], {"3.13"}, at("2025-01-01"), AVAILABLE)
    )


def test_recipe_of_a_2024_commit_naming_3_13_gets_3_11() -> None:
    r = recipe(
        {
            "pyproject.toml": '[project]\nname = "c"\nrequires-python = ">=3.9"\nclassifiers = ["Programming Language :: Python :: 3.13"]\ndependencies = ["Cython<3"]\n'
        },
        at("2024-06-01"),
    )
    assert r.python == "3.11" and "2024-06-01" in r.python_reason


# ---------------------------------------------------------------- old pytest (issue 4)
@pytest.mark.parametrize(
    ("spec", "floor", "expected"),
    [
        ("==3.0.7", "5.4.0", True),
        ("<5", "5.4.0", True),
        ("<5.4.0", "5.4.0", True),
        ("<=5.4.0", "5.4.0", False),
        ("<=5.3.5", "5.4.0", True),
        (">3,<4", "5.4.0", True),
        ("~=4.6", "5.4.0", True),  # <5
        ("~=5.4", "5.4.0", False),  # <6
        ("==4.6.*", "5.4.0", True),
        ("==5.4.*", "5.4.0", False),
        (">=4.6", "5.4.0", False),
        ("!=5.4.0", "5.4.0", False),
        ("", "5.4.0", False),
        ("==6.2.3", "6.2.4", True),
        ("~=6.2.0", "6.2.4", False),
        ("==7.0.1", "6.2.4", False),
    ],
)
def test_below_floor(spec: str, floor: str, expected: bool) -> None:
    assert below_floor(SpecifierSet(spec), Version(floor)) is expected


def test_harness_floor_per_python() -> None:
    assert harness_pytest_floor("3.9") == Version("5.4.0")
    assert harness_pytest_floor("3.10") == Version("6.2.4")
    assert harness_pytest_floor("3.13") == Version("6.2.4")


@pytest.mark.parametrize(
    ("given", "python", "expected", "raised"),
    [
        ("pytest==3.0.7", "3.9", "pytest<5.5,>=5.4.0", True),
        ("pytest==3.0.7", "3.11", "pytest<6.3,>=6.2.4", True),
        ("pytest[testing]<4,>=3.6", "3.13", "pytest[testing]<6.3,>=6.2.4", True),
        ("pytest<6.3,>=6.2.4", "3.11", "pytest<6.3,>=6.2.4", False),
        ("pytest>=3", "3.9", "pytest>=3", False),
        ('pytest<4; python_version < "3.8"', "3.11", 'pytest<4; python_version < "3.8"', False),
        (
            'pytest<4; python_version >= "3.8"',
            "3.9",
            'pytest<5.5,>=5.4.0; python_version >= "3.8"',
            True,
        ),
        ("pytest-cov<2", "3.9", "pytest-cov<2", False),
    ],
)
def test_raise_pytest_floor(given: str, python: str, expected: str, raised: bool) -> None:
    from swe_forge.ecosystems.python.recipe_requirements import _render

    out, adjusted = raise_pytest_floor([Requirement(given)], python)
    assert [_render(r) for r in out] == [expected]
    if raised:
        assert adjusted == [Adjustment(given.replace(" ;", ";"), expected, adjusted[0].reason)]
        assert python in adjusted[0].reason
    else:
        assert adjusted == []


def test_recipe_records_a_raised_pytest() -> None:
    files = {
        "setup.py": "setup(name='old', tests_require=['pytest==3.0.7', 'mock'], python_requires='>=2.7')\n"
    }
    r = recipe(files, T2020)
    assert r.python == "3.9"
    assert "pytest<5.5,>=5.4.0" in r.requirements and "pytest==3.0.7" not in r.requirements
    assert [a.original for a in r.adjusted] == ["pytest==3.0.7"]
    assert list(r.to_dict()["adjusted"]) == [
        {
            "original": "pytest==3.0.7",
            "chosen": "pytest<5.5,>=5.4.0",
            "reason": "the harness needs pytest>=5.4.0 on Python 3.9",
        }
    ]
    # The evidence is not an input of resolution: only the requirements are.
    assert recipe_digest(r) == recipe_digest(type(r)(**{**r.__dict__, "adjusted": ()}))


def test_extras_the_tests_import_are_installed() -> None:
    # cattrs: the tests import yaml and msgpack, which only the project's extras install.
    pyproject = (
        '[project]\nname = "cattrs"\ndependencies = ["attrs"]\n'
        "[project.optional-dependencies]\n"
        'pyyaml = ["PyYAML>=6.0"]\nmsgpack = ["msgpack>=1.0.5"]\nbson = ["pymongo>=4.4.0"]\n'
        'docs = ["sphinx"]\ntest = ["pytest"]\n'
    )
    imports = imported_modules(
        ["import yaml\nfrom msgpack import packb\nimport os, bson.codec_options\n"]
    )
    assert {"yaml", "msgpack", "os", "bson"} <= imports
    r = detect_recipe(
        lambda p: pyproject.encode() if p == "pyproject.toml" else None,
        T2024,
        pythons=("3.11", "3.12"),
        test_imports=imports,
    )
    assert {"PyYAML>=6.0", "msgpack>=1.0.5", "pymongo>=4.4.0"} <= set(r.requirements)
    assert "sphinx" not in r.requirements and set(r.extras) >= {"pyyaml", "msgpack", "bson"}
    assert any("the tests import yaml" in n for n in r.notes)
    # Without those imports, only the test extra.
    r = detect_recipe(
        lambda p: pyproject.encode() if p == "pyproject.toml" else None,
        T2024,
        pythons=("3.11", "3.12"),
    )
    assert "PyYAML>=6.0" not in r.requirements and r.extras == ("test",)


def test_test_imports_follow_the_tests_relative_helpers() -> None:
    # cattrs: tests/preconf/test_pyyaml.py imports `from ..test_preconf import everythings`,
    # and that helper imports bson, msgpack... which only the extras install.
    from swe_forge.ecosystems.python.image import relative_import_paths, test_imports
    from swe_forge.records import Candidate
    from tests import record_samples as samples

    files = {
        "tests/preconf/test_pyyaml.py": "import yaml\nfrom ..test_preconf import everythings\n",
        "tests/test_preconf.py": "import bson\nfrom . import helpers\n",
        "tests/helpers.py": "import msgpack\n",
        "tests/conftest.py": "import hypothesis\n",
    }
    data = samples.candidate()
    data["files"] = {**data["files"], "test_files": ["tests/preconf/test_pyyaml.py"]}
    data["test_patch"] = "+++ b/tests/preconf/test_pyyaml.py\n+import ujson\n"
    cand = Candidate.from_dict(data)
    found = test_imports(cand, lambda p: files[p].encode() if p in files else None)
    assert {"yaml", "bson", "msgpack", "hypothesis", "ujson"} <= found
    assert relative_import_paths("a/b/c.py", "from ...x import y\n") == []
    assert relative_import_paths("a/b/c.py", "from .m.n import (y,\n") == [
        "a/b/m/n.py",
        "a/b/m/n/__init__.py",
    ]
