"""Strict configuration loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.errors import ConfigError


def test_defaults_load() -> None:
    cfg = load_config()
    assert cfg.mine.max_files_changed > 0
    assert Path(cfg.license.allowlist_file).is_file()
    assert Path(cfg.blocklist.dir).is_dir()


def test_override_only_changes_given_keys(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("mine:\n  max_files_changed: 5\n")
    cfg = load_config(f)
    assert cfg.mine.max_files_changed == 5
    assert cfg.mine.max_lines_changed == load_config().mine.max_lines_changed
    assert cfg.digest() != load_config().digest()


def test_unknown_key_suggests_closest(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("mine:\n  max_file_changed: 5\n")
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "mine.max_file_changed" in err.value.message
    assert "max_files_changed" in err.value.hint
    assert err.value.exit_code == 3


def test_gate_policies(tmp_path: Path) -> None:
    cfg = load_config()
    # Flaky tests only PASS_TO_PASS could hold are dropped; FAIL_TO_PASS comes from the tests
    # the test patch adds or changes.
    assert cfg.admit.flaky_policy == "drop" and cfg.admit.fail_to_pass_scope == "patched"
    f = tmp_path / "c.yaml"
    f.write_text("admit:\n  flaky_policy: reject\n  fail_to_pass_scope: all\n")
    strict = load_config(f)
    assert strict.admit.flaky_policy == "reject" and strict.admit.fail_to_pass_scope == "all"
    assert strict.digest() != cfg.digest()
    f.write_text("admit:\n  fail_to_pass: all\n")
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "fail_to_pass_scope" in err.value.hint


def test_unknown_section(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("minning: {}\n")
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert "mine" in err.value.hint


@pytest.mark.parametrize(
    "text",
    [
        "mine:\n  max_files_changed: many\n",
        "mine:\n  detect_renames: 1\n",
        "classify:\n  test_dirs: tests\n",
        "- a\n",
        "mine: [\n",
        "admit:\n  flaky_policy: ignore\n",
        "admit:\n  fail_to_pass_scope: touched\n",
    ],
)
def test_bad_values_are_refused(tmp_path: Path, text: str) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError):
        load_config(f)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_config(tmp_path / "nope.yaml")


def test_relative_paths_resolve_against_their_file(tmp_path: Path) -> None:
    (tmp_path / "lists").mkdir()
    f = tmp_path / "c.yaml"
    f.write_text("blocklist:\n  dir: lists\n")
    assert load_config(f).blocklist.dir == str(tmp_path / "lists")


def test_digest_independent_of_checkout_paths(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(f"blocklist:\n  dir: {tmp_path}\n")
    assert load_config(f).digest() == load_config().digest()


def test_unknown_blocklist_kind_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("blocklist:\n  kinds: [evaluation, trainig]\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert "trainig" in str(info.value) and "training" in info.value.hint


def test_build_options_by_ecosystem(tmp_path: Path) -> None:
    """Extra build-tool options are keyed by a known ecosystem and change the digest."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("images:\n  build_options: {java: [-Drat.skip=true]}\n")
    loaded = load_config(cfg)
    assert loaded.images.build_options["java"] == ("-Drat.skip=true",)
    assert loaded.digest() != load_config().digest()
    cfg.write_text("images:\n  build_options: {jav: [-Drat.skip=true]}\n")
    with pytest.raises(ConfigError, match="unknown ecosystem 'jav'"):
        load_config(cfg)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("verify:\n  timeout_seconds: -5\n", "verify.timeout_seconds must be > 0, not -5"),
        ("verify:\n  cpus: 0\n", "verify.cpus must be > 0"),
        ("admit:\n  pids: 0\n", "admit.pids must be >= 1"),
        ("verify:\n  decoys: -1\n", "verify.decoys must be >= 0"),
        ("mine:\n  max_files_changed: 0\n", "mine.max_files_changed must be >= 1"),
        ("verify:\n  memory: lots\n", "verify.memory: cannot read 'lots'"),
    ],
)
def test_out_of_range_values_are_refused(tmp_path: Path, text: str, message: str) -> None:
    """A limit out of range is a configuration error, not a patch graded as failing."""
    f = tmp_path / "c.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert message in str(err.value)


def test_zero_test_timeout_means_none(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("admit:\n  test_timeout_seconds: 0\nverify:\n  test_timeout_seconds: 0\n")
    assert load_config(f).verify.test_timeout_seconds == 0
