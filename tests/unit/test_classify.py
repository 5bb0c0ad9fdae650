"""The path classifier behind the split."""

from __future__ import annotations

import pytest

from swe_forge.config import load_config
from swe_forge.mining.classify import FileKind, PathClassifier


@pytest.fixture(scope="module")
def classifier() -> PathClassifier:
    return PathClassifier(load_config().classify)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_core.py",
        "tests/unit/helpers.py",
        "tests/data/sample.json",
        "tests/fixtures/image.png",
        "src/pkg/tests/test_x.py",
        "pkg/test/util.py",
        "test_module.py",
        "pkg/module_test.py",
        "pkg/module_tests.py",
        "conftest.py",
        "pkg/sub/conftest.py",
        "testing/test_terminal.py",
        "testing/plugins_integration/x.py",
        "pytest.ini",
        "pkg/tests.py",
        "Tests/Test_Upper.py",
        "src/clock-test.js",
        "lib/parse_spec.ts",
    ],
)
def test_test_paths(classifier: PathClassifier, path: str) -> None:
    assert classifier.classify(path) is FileKind.TEST


@pytest.mark.parametrize(
    "path",
    [
        "pkg/pytest_plugin.py",
        "latest/module.py",
        "pkg/contest.py",
        "pkg/testing/utils.py",  # `testing` counts only at the top level (numpy.testing)
        "pkg/attestation.py",
        "src/pkg/testimony.py",
        "pkg/latest_tests_helper.txt",
        "pkg/data/words.txt",
        "pkg/core.py",
        "Makefile.py",
        "pkg/protest/core.py",
        "conftest_helpers.py",
        "src/latest.js",
        "src/protest.ts",
        "src/testing.js",
    ],
)
def test_source_paths(classifier: PathClassifier, path: str) -> None:
    assert classifier.classify(path) is FileKind.SOURCE


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("docs/index.rst", FileKind.DOCS),
        ("docs/conf.py", FileKind.DOCS),
        ("README.md", FileKind.DOCS),
        ("CHANGELOG", FileKind.DOCS),
        ("CHANGES.rst", FileKind.DOCS),
        ("changelog.d/123.bugfix", FileKind.DOCS),
        ("pkg/README.md", FileKind.DOCS),
        ("LICENSE", FileKind.DOCS),
        ("examples/demo.py", FileKind.DOCS),
        (".github/workflows/ci.yml", FileKind.CI),
        (".travis.yml", FileKind.CI),
        (".pre-commit-config.yaml", FileKind.CI),
        ("pyproject.toml", FileKind.PACKAGING),
        ("setup.py", FileKind.PACKAGING),
        ("setup.cfg", FileKind.PACKAGING),
        ("tox.ini", FileKind.PACKAGING),
        ("requirements-dev.txt", FileKind.PACKAGING),
        ("requirements/test.txt", FileKind.PACKAGING),
        ("MANIFEST.in", FileKind.PACKAGING),
        (".gitignore", FileKind.PACKAGING),
    ],
)
def test_non_source_paths(classifier: PathClassifier, path: str, kind: FileKind) -> None:
    assert classifier.classify(path) is kind


def test_nested_packaging_name_is_source(classifier: PathClassifier) -> None:
    # Only the top-level setup.py is packaging; a module called setup.py inside a package is code.
    assert classifier.classify("pkg/commands/setup.py") is FileKind.SOURCE


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("scripts/test", FileKind.TOOLING),
        ("scripts/release.py", FileKind.TOOLING),
        ("benchmarks/bench_parse.py", FileKind.TOOLING),
        ("tasks/build.py", FileKind.TOOLING),
        (".devcontainer/devcontainer.json", FileKind.TOOLING),
        (".python-version-default", FileKind.PACKAGING),
        ("tox.toml", FileKind.PACKAGING),
        ("package-lock.json", FileKind.PACKAGING),
        (".gitmodules", FileKind.PACKAGING),
        ("hatch_build.py", FileKind.PACKAGING),
        ("mkdocs.yml", FileKind.CI),
        ("readthedocs.yml", FileKind.CI),
        (".azure-pipelines.yml", FileKind.CI),
        ("typing-examples/mypy_examples.py", FileKind.TEST),
        ("typesafety/test_x.yml", FileKind.TEST),
        ("setup_helpers.py", FileKind.SOURCE),
        ("pkg/config.toml", FileKind.SOURCE),
        ("pkg/scripts/run.py", FileKind.SOURCE),  # `scripts` counts only at the top level
    ],
)
def test_tooling_and_root_config(classifier: PathClassifier, path: str, kind: FileKind) -> None:
    assert classifier.classify(path) is kind


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("tests/test_core.py", True),
        ("tests/core_test.py", True),
        ("pkg/tests.py", True),
        ("tests/conftest.py", False),
        ("tests/helpers.py", False),
        ("tests/data/test_input.json", False),
        ("pkg/test_utils_not_in_tests.py", True),
        ("pkg/core.py", False),
        # JavaScript/TypeScript, by the JS adapter's rule (sinonjs/fake-timers' Mocha suite is
        # test/fake-timers-test.js: every one of its PRs was no_test_module before).
        ("test/lolex-test.js", True),
        ("test/issue-276_spec.mjs", True),
        ("tests/api.tests.ts", True),
        ("test/test.js", True),
        ("src/__tests__/parser.ts", True),
        ("src/parser.test.tsx", True),
        ("test/helpers.js", False),
        ("test/fixtures/latest.js", False),
        ("types/index.test.d.ts", False),
        ("src/contest.js", False),
    ],
)
def test_test_modules(classifier: PathClassifier, path: str, module: bool) -> None:
    assert classifier.is_test_module(path) is module
