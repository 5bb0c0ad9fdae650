"""The JS adapter's environments: npm by date and its fallback, pnpm/yarn locks read for npm,
the tool caches under a read-only node_modules, Mocha's options by version, the start probe."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from swe_forge.ecosystems.js import deps, image
from swe_forge.ecosystems.js.locks import pin_package_json, read_pnpm, read_yarn
from swe_forge.ecosystems.js.runner import JsRunner
from swe_forge.errors import BuildError

COMMON = ["--ignore-scripts"]


def _fake_npm(monkeypatch: pytest.MonkeyPatch, failures: list[str]) -> list[list[str]]:
    """Replace npm: each call takes the next failure text ('' succeeds)."""
    calls: list[list[str]] = []

    def npm(args: list[str], *, cwd: Path, cache: Path, timeout: float = 0) -> None:
        calls.append(args)
        text = failures.pop(0) if failures else ""
        if text:
            raise BuildError(f"npm {args[0]} failed:\n{text}")
        (cwd / "node_modules").mkdir(exist_ok=True)

    monkeypatch.setattr(deps, "_npm", npm)
    return calls


@pytest.mark.parametrize(
    "message",
    [
        "npm error code ENOVERSIONS\nnpm error No versions available for tape",
        "npm ERR! code ETARGET\nnpm ERR! No matching version found for tape@^4.0.0 with a "
        "date before 1/1/2016",
    ],
)
def test_js_install_by_date_falls_back_when_registry_dates_are_later(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, message: str
) -> None:
    calls = _fake_npm(monkeypatch, [message, ""])
    (tmp_path / "package-lock.json").write_text("{}")  # the failed attempt's: not kept
    resolver = deps._install_by_date(tmp_path, COMMON, tmp_path, "2016-01-01")
    assert calls[0][1].startswith("--before=2016-01-01")
    assert not any(a.startswith("--before") for a in calls[1])
    assert "newest versions the ranges allow" in resolver
    assert "tape" in resolver
    assert not (tmp_path / "package-lock.json").exists()


def test_js_install_by_date_keeps_the_date_when_it_resolves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _fake_npm(monkeypatch, [""])
    assert deps._install_by_date(tmp_path, COMMON, tmp_path, "2020-05-01") == (
        "npm install --before=2020-05-01"
    )
    assert len(calls) == 1


def test_js_install_by_date_raises_other_npm_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_npm(monkeypatch, ["npm error code ERESOLVE\nunable to resolve dependency tree"])
    with pytest.raises(BuildError, match="ERESOLVE"):
        deps._install_by_date(tmp_path, COMMON, tmp_path, "2020-05-01")


PNPM9 = """\
lockfileVersion: '9.0'
importers:
  .:
    devDependencies:
      jest:
        specifier: ^30.0.0
        version: 30.0.5(ts-node@10.9.2(typescript@5.8.3))
      typescript:
        specifier: 5.8.3
        version: 5.8.3
      local:
        specifier: link:../local
        version: link:../local
packages:
  '@jest/core@30.0.5':
    resolution: {integrity: sha512-x}
  jest-config@30.0.5:
    peerDependencies:
      ts-node: '>=9.0.0'
    peerDependenciesMeta:
      ts-node:
        optional: true
  jest@30.0.5:
    resolution: {integrity: sha512-y}
  ts-node@10.9.2:
    resolution: {integrity: sha512-z}
  typescript@5.8.3:
    resolution: {integrity: sha512-w}
  semver@6.3.1:
    resolution: {integrity: sha512-a}
  semver@7.7.2:
    resolution: {integrity: sha512-b}
"""


def test_js_pnpm_lock_pins_versions_and_installs_its_optional_peers(tmp_path: Path) -> None:
    pkg = {
        "name": "p",
        "devDependencies": {"jest": "^30.0.0", "typescript": "5.8.3", "local": "link:../local"},
    }
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    (tmp_path / "pnpm-lock.yaml").write_text(PNPM9)
    assert pin_package_json(tmp_path, "pnpm-lock.yaml") > 0
    out = json.loads((tmp_path / "package.json").read_text())
    dev = out["devDependencies"]
    assert dev["jest"] == "30.0.5"
    assert dev["ts-node"] == "10.9.2"  # an optional peer the lock installed
    assert dev["local"] == "link:../local"
    assert out["overrides"]["@jest/core"] == "30.0.5"
    assert "semver" not in out["overrides"]  # two versions: left to the ranges
    assert "jest" not in out["overrides"]  # a direct dependency: pinned where declared


def test_js_pnpm_lock_5_keys() -> None:
    text = (
        "lockfileVersion: 5.4\nspecifiers:\n  mocha: ^10.0.0\ndevDependencies:\n"
        "  mocha: 10.2.0\npackages:\n  /mocha/10.2.0:\n    dev: true\n"
        "  /@babel/core/7.22.1_abc:\n    dev: true\n"
    )
    got = read_pnpm(text)
    assert got.by_spec[("mocha", "^10.0.0")] == "10.2.0"
    assert got.versions["@babel/core"] == {"7.22.1"}


def test_js_yarn_locks_v1_and_berry() -> None:
    v1 = (
        "# yarn lockfile v1\n\n\n"
        '"@babel/core@^7.0.0", "@babel/core@^7.1.0":\n  version "7.2.2"\n'
        '  resolved "https://registry.yarnpkg.com/x"\n\n'
        'ms@^2.1.1:\n  version "2.1.3"\n'
    )
    got = read_yarn(v1)
    assert got.by_spec[("@babel/core", "^7.1.0")] == "7.2.2"
    assert got.versions["ms"] == {"2.1.3"}
    berry = (
        "__metadata:\n  version: 6\n\n"
        '"ms@npm:^2.1.1, ms@npm:^2.1.3":\n  version: 2.1.3\n  resolution: "ms@npm:2.1.3"\n\n'
        '"app@workspace:.":\n  version: 0.0.0-use.local\n  resolution: "app@workspace:."\n'
    )
    got = read_yarn(berry)
    assert got.by_spec[("ms", "^2.1.3")] == "2.1.3"
    assert "app" not in got.versions


def test_js_env_image_links_tool_caches_to_tmp(tmp_path: Path) -> None:
    """Vite bundles its config into node_modules/.vite-temp: in the image that directory is
    a link to /tmp, so it can be written while node_modules stays read-only."""
    modules = tmp_path / "opt-node_modules"
    (modules / "vite").mkdir(parents=True)
    (modules / ".cache").mkdir()  # one already there is replaced
    text = image.env_dockerfile("base:1", 'CI="true"')
    run = next(line for line in text.splitlines() if line.startswith("RUN "))
    script = run[4:].replace(image.NODE_MODULES, str(modules))
    subprocess.run(["sh", "-c", script], check=True)
    for name in (".vite-temp", ".vite", ".cache"):
        assert (modules / name).is_symlink()
        assert str((modules / name).readlink()) == "/tmp"
    assert (modules / "vite").is_dir() and not (modules / "vite").is_symlink()


@pytest.mark.parametrize(
    ("version", "exit_flag"),
    [("2.5.3", False), ("3.5.3", False), ("4.0.0", True), ("10.8.2", True)],
)
def test_js_mocha_exit_option_only_where_mocha_has_it(version: str, exit_flag: bool) -> None:
    argv = JsRunner(f"mocha@{version}").argv(["test/a.js"], order_seed=1)
    assert ("--exit" in argv) is exit_flag


def _builder(code: int, calls: list[Any]) -> Any:
    def run_locked(img: str, argv: list[str], **kw: Any) -> Any:
        calls.append(argv)
        return SimpleNamespace(
            exit_code=code, timed_out=False, output="Error: Jest: 'ts-node' is required"
        )

    return SimpleNamespace(engine=SimpleNamespace(run_locked=run_locked))


def test_js_runner_that_cannot_start_fails_the_environment() -> None:
    calls: list[Any] = []
    with pytest.raises(BuildError, match="jest cannot start"):
        image.runner_starts(_builder(1, calls), "inst:1", "jest")
    assert "--listTests" in calls[0]
    image.runner_starts(_builder(0, calls), "inst:1", "jest")
    image.runner_starts(_builder(1, calls), "inst:1", "mocha")  # no probe for Mocha
    assert len(calls) == 2


FAKE_MOCHA_LOAD_FAILS = r"""
// Mocha loads the reporter, then the test files; one throws while it loads.
require(process.argv[2]);
if (process.argv[3] === "exit") {
  console.error("TypeError: mimeTypes._extensionConflicts is not iterable");
  process.exit(1);  // Mocha 6 and later: the CLI prints the error and exits
}
throw new TypeError("mimeTypes._extensionConflicts is not iterable");  // Mocha before 6
"""


@pytest.mark.parametrize("how", ["exit", "throw"])
def test_js_mocha_file_that_throws_at_load_is_a_collection_error(tmp_path: Path, how: str) -> None:
    """A test file that throws while Mocha loads it ends the run before any reporter is made:
    the run still reports, each expected file a collection error (its tests fail before the
    fix, as a Jest suite that cannot load), rather than no report at all."""
    import shutil

    from tests.unit.test_ecosystem_js import HARNESS, polyglot  # the judge's parser on path

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    script = tmp_path / "fake-mocha.js"
    script.write_text(FAKE_MOCHA_LOAD_FAILS)
    reporter = str(HARNESS / "swe_forge_mocha_reporter.js")
    proc = subprocess.run(
        [node, str(script), reporter, how], capture_output=True, check=False, timeout=60
    )
    assert proc.returncode == 1
    spec = {"format": "mocha-json", "files": ["test/test.js"]}
    ev = polyglot.parse(spec, proc.stdout)
    assert ev["connected"] and ev["ended"]
    assert ev["collect_errors"] == ["test/test.js"]
    assert ev["tests"] == {} and ev["exitstatus"] == 1 and not ev["tamper"]


def test_js_env_image_with_an_official_node(tmp_path: Path) -> None:
    """An official Node build (engines beyond Debian's) is copied into the env image and
    linked onto the PATH; without one the Dockerfile is the Debian-Node one, byte for byte
    (the env images of tasks admitted before keep their tags)."""
    plain = image.env_dockerfile("base:1", 'CI="true"')
    official = image.env_dockerfile("base:1", 'CI="true"', official=True)
    assert "COPY node " not in plain and plain.splitlines()[1].startswith("COPY node_modules")
    lines = official.splitlines()
    assert lines[1] == f"COPY node {image.NODE_HOME}"
    assert f"ln -s {image.NODE_HOME}/bin/node /usr/local/bin/node" in lines[2]
    assert official.replace(image.OFFICIAL_NODE, "") == plain


def test_git_dependencies_are_left_out_when_no_git_host_answers(tmp_path: Path) -> None:
    """janl/mustache.js (first contact, session 21): a devDependency fetched from GitHub
    (`zuul-ngrok`) failed every resolution here, where no git host is reachable. Such
    dependencies are left out of the host copy's package.json and resolution goes on;
    registry versions and local paths stay."""
    from swe_forge.ecosystems.js.deps import GIT_UNREACHABLE, drop_git_dependencies

    pkg = {
        "name": "m",
        "devDependencies": {
            "mocha": "^3.0.0",
            "zuul-ngrok": "nolanlawson/zuul-ngrok#patch-1",
            "tool": "git+https://github.com/a/tool.git",
            "other": "github:a/other",
            "local": "./vendor/local",
            "alias": "npm:chai@4",
            "scoped": "@types/node",
        },
        "dependencies": {"lib": "https://github.com/a/lib/tarball/v1", "ok": "1.x"},
    }
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    assert drop_git_dependencies(tmp_path) == ["lib", "other", "tool", "zuul-ngrok"]
    left = json.loads((tmp_path / "package.json").read_text())
    assert left["devDependencies"] == {
        "mocha": "^3.0.0",
        "local": "./vendor/local",
        "alias": "npm:chai@4",
        "scoped": "@types/node",
    }
    assert left["dependencies"] == {"ok": "1.x"}
    assert drop_git_dependencies(tmp_path) == []
    npm_said = (
        "npm error command git --no-replace-objects ls-remote ssh://git@github.com/x/y.git\n"
        "npm error ssh: Could not resolve hostname github.com"
    )
    assert GIT_UNREACHABLE.search(npm_said)
    assert not GIT_UNREACHABLE.search("npm error code ETARGET No matching version found for x")
