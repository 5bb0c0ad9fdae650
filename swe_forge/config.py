"""Configuration: ``configs/default.yaml`` merged with an optional user file.

The effective configuration is a tree of frozen dataclasses. Loading is strict: an unknown key
is refused with the closest valid key suggested (a typo must never silently fall back to a
default), and a value of the wrong type is refused with its dotted path. The configuration's
hash is recorded in every emitted record so that outputs made under different settings can be
told apart (and refused when merged).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from swe_forge.errors import ConfigError

#: The project root of a source checkout (where ``configs/`` and ``blocklists/`` live).
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = PROJECT_ROOT / "configs" / "default.yaml"


@dataclass(frozen=True)
class MineConfig:
    """Settings of ``swe-forge mine``."""

    max_files_changed: int = 40
    max_lines_changed: int = 3000
    context_lines: int = 3
    detect_renames: bool = True
    min_problem_statement_chars: int = 1
    #: Statements with fewer words than this (after cleaning) are flagged ``thin``.
    thin_statement_words: int = 12
    #: Worker processes that diff, split and prove candidate PRs (0: one per CPU).
    jobs: int = 0


@dataclass(frozen=True)
class ClassifyConfig:
    """Settings of the test/source path classifier."""

    test_dirs: tuple[str, ...] = ("tests", "test")
    top_level_test_dirs: tuple[str, ...] = ("testing",)
    docs_dirs: tuple[str, ...] = ("docs", "doc")


@dataclass(frozen=True)
class LicenseConfig:
    """Settings of the licence policy."""

    allowlist_file: str = "licenses.yaml"
    file_score_threshold: float = 0.9
    weak_file_score_threshold: float = 0.8
    accept_metadata_only: bool = False


#: The kinds a benchmark in ``blocklists/`` may have.
BLOCKLIST_KINDS = ("evaluation", "training")


@dataclass(frozen=True)
class BlocklistConfig:
    """Where the decontamination lists live and how they match."""

    dir: str = "../blocklists"
    match_root_commits: bool = True
    #: Benchmark kinds that block (``evaluation``, ``training``); evaluation only by default:
    #: add ``training`` when building an evaluation set.
    kinds: tuple[str, ...] = ("evaluation",)


@dataclass(frozen=True)
class GitHubConfig:
    """The optional GitHub REST API source."""

    api_url: str = "https://api.github.com"
    timeout_seconds: float = 30.0
    max_retries: int = 3


@dataclass(frozen=True)
class ImagesConfig:
    """Base images and builds."""

    # Debian releases to bootstrap base images from (each gives one Python version).
    distros: tuple[str, ...] = ("bullseye", "bookworm", "trixie")
    debian_mirror: str = "http://deb.debian.org/debian"
    # Python version -> an image to use instead of bootstrapping (e.g. "python:3.11-slim");
    # it must provide python3 -m venv and git.
    base_overrides: dict[str, str] = field(default_factory=dict)
    # Per-repository install overrides (relative to this file's directory).
    repos_file: str = "repos.yaml"
    #: Ecosystem name -> extra options its adapter passes to the project's own build tool when
    #: it resolves dependencies and runs tests (Maven's ``-Drat.skip=true``...): checks that
    #: do not change a test's outcome but fail a build in an environment they were not written
    #: for. Each adapter documents what it passes these to; an ecosystem not named gets none.
    build_options: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class StrengthConfig:
    """The test-strength gate of admission (``admit.test_strength``): wrong variants of the
    gold fix (mutants) graded by the verifier; the share its tests reject is the task's score."""

    enabled: bool = True
    #: Mutants graded per task at most.
    max_mutants: int = 8
    #: Seconds per task: no mutant is started after them (``budget_exhausted``).
    seconds: float = 600.0
    #: The mutation engine's seed (the same seed makes the same mutants).
    seed: int = 0
    #: A score under this rejects the task (``weak_tests``); 0 measures and records only.
    min_score: float = 0.0


@dataclass(frozen=True)
class AdmitConfig:
    """The admission gates and the sufficiency audit."""

    runs_per_phase: int = 3
    hash_seeds: tuple[int, ...] = (0, 1, 2)
    timeout_seconds: float = 600.0
    test_timeout_seconds: float = 120.0
    flaky_policy: str = "drop"
    scope: str = "touched"
    fail_to_pass_scope: str = "patched"
    memory: str = "4g"
    pids: int = 512
    cpus: float = 2.0
    min_statement_chars: int = 40
    reject_flags: tuple[str, ...] = ()
    judge_command: str = ""
    #: A statement mining flagged ``thin``: ``generate`` writes one from the failing tests and
    #: their first failure lines (marked generated, the PR's text kept in the audit), ``keep``
    #: leaves the PR's text.
    thin_statements: str = "generate"
    #: Fewer calibrated decoys than this (perturbations of the FAIL_TO_PASS tests' assertions
    #: that the gold patch fails in place) rejects the task: ``no_decoys``.
    min_decoys: int = 1
    test_strength: StrengthConfig = field(default_factory=StrengthConfig)


@dataclass(frozen=True)
class VerifyConfig:
    """Limits and clocks of the verifier's containers."""

    timeout_seconds: float = 900.0
    test_timeout_seconds: float = 300.0
    memory: str = "4g"
    pids: int = 256
    cpus: float = 2.0
    nofile: int = 1024
    fsize_bytes: int = 256 * 1024 * 1024
    tmpfs_size: str = "256m"
    testbed_size: str = "2g"
    inodes: int = 400_000
    infra_retries: int = 2
    capability_scope: str = "repository"
    canary_limit: int = 40
    decoys: int = 2


@dataclass(frozen=True)
class Config:
    """The whole effective configuration.

    Path settings (``license.allowlist_file``, ``blocklist.dir``) are absolute once loaded:
    each was resolved against the directory of the file that set it.
    """

    schema_version: int = 1
    mine: MineConfig = field(default_factory=MineConfig)
    classify: ClassifyConfig = field(default_factory=ClassifyConfig)
    license: LicenseConfig = field(default_factory=LicenseConfig)
    blocklist: BlocklistConfig = field(default_factory=BlocklistConfig)
    github: GitHubConfig = field(default_factory=GitHubConfig)
    images: ImagesConfig = field(default_factory=ImagesConfig)
    admit: AdmitConfig = field(default_factory=AdmitConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain data."""
        return dataclasses.asdict(self)

    def digest(self) -> str:
        """sha256 of the canonical JSON of the settings.

        Path settings are left out: the same settings must hash the same in every checkout.
        The *content* behind those paths (allowlist, blocklists) is hashed by the stages that
        read it.
        """
        data = self.to_dict()
        for section, key in _PATH_KEYS:
            data[section].pop(key, None)
        data.pop("github", None)  # where the API lives does not change what is mined
        data["mine"].pop("jobs", None)  # how many processes mine does not change the output
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


#: (section, key, lowest value, whether the lowest value itself is refused) of numeric settings:
#: a negative timeout or no CPU at all made every run fail and was graded as the patch's fault.
_RANGES: tuple[tuple[str, str, float, bool], ...] = (
    ("mine", "max_files_changed", 1, False),
    ("mine", "max_lines_changed", 1, False),
    ("mine", "context_lines", 0, False),
    ("mine", "min_problem_statement_chars", 0, False),
    ("admit", "timeout_seconds", 0, True),
    ("admit", "test_timeout_seconds", 0, False),
    ("admit", "cpus", 0, True),
    ("admit", "pids", 1, False),
    ("admit", "min_statement_chars", 0, False),
    ("admit", "min_decoys", 0, False),
    ("admit.test_strength", "max_mutants", 1, False),
    ("admit.test_strength", "seconds", 0, True),
    ("admit.test_strength", "seed", 0, False),
    ("admit.test_strength", "min_score", 0, False),
    ("verify", "timeout_seconds", 0, True),
    ("verify", "test_timeout_seconds", 0, False),
    ("verify", "cpus", 0, True),
    ("verify", "pids", 1, False),
    ("verify", "nofile", 16, False),
    ("verify", "fsize_bytes", 1, False),
    ("verify", "inodes", 1, False),
    ("verify", "infra_retries", 0, False),
    ("verify", "canary_limit", 0, False),
    ("verify", "decoys", 0, False),
    ("github", "timeout_seconds", 0, True),
    ("github", "max_retries", 0, False),
)
_MEMORY = re.compile(r"\d+(?:\.\d+)?[bkmgBKMG]?")

#: (section, key) of settings that are file-system paths, relative to their file.
_PATH_KEYS = (("license", "allowlist_file"), ("blocklist", "dir"), ("images", "repos_file"))


def _absolutize(data: dict[str, Any], base: Path) -> dict[str, Any]:
    for section, key in _PATH_KEYS:
        sub = data.get(section)
        if isinstance(sub, dict) and isinstance(sub.get(key), str):
            sub[key] = str((base / sub[key]).resolve())
    return data


#: libyaml's loader when PyYAML was built with it (about 8x faster on the blocklists), else
#: the pure-Python one; both are "safe" (plain data only, no Python objects).
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | bytes) -> Any:
    """Parse YAML as plain data (``yaml.safe_load``, with libyaml when available)."""
    return yaml.load(text, Loader=_YAML_LOADER)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(
            f"configuration file not found: {path}", hint="check the --config path"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"configuration {path} is not valid YAML: {exc}",
            hint="fix the YAML syntax (indentation, colons, quotes)",
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"configuration {path} must be a mapping at the top level")
    return data


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _coerce(value: Any, tp: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        tp = next(a for a in args if a is not type(None))
        origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, got {type(value).__name__}")
        return _build(tp, value, where)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, got {type(value).__name__}")
        key_tp, val_tp = typing.get_args(tp)
        return {
            _coerce(k, key_tp, f"{where}"): _coerce(v, val_tp, f"{where}.{k}")
            for k, v in value.items()
        }
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be a list, got {type(value).__name__}")
        (item_tp, _ellipsis) = typing.get_args(tp)
        return tuple(_coerce(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a string, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported setting type {tp!r}")  # pragma: no cover


def _build(cls: type[Any], data: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in fields:
            close = difflib.get_close_matches(str(key), sorted(fields), n=1, cutoff=0.5)
            hint = (
                f"did you mean '{close[0]}'?"
                if close
                else f"valid keys: {', '.join(sorted(fields))}"
            )
            raise ConfigError(f"unknown configuration key '{path}'", hint=hint)
        kwargs[key] = _coerce(value, hints[key], path)
    return cls(**kwargs)


@dataclass(frozen=True)
class RepoOverride:
    """Per-repository settings from ``configs/repos.yaml`` (all optional)."""

    python: str | None = None
    extras: tuple[str, ...] | None = None
    requirement_files: tuple[str, ...] | None = None
    requirements: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    build_requirements: tuple[str, ...] = ()
    test_command: str | None = None


@dataclass(frozen=True)
class _RepoOverrides:
    schema_version: int = 1
    repos: dict[str, RepoOverride] = field(default_factory=dict)


def load_repo_overrides(path: Path) -> dict[str, RepoOverride]:
    """Read ``configs/repos.yaml``: ``owner/name`` (lowercased) -> :class:`RepoOverride`.

    A missing file means no overrides; unknown keys are refused like in the main config.
    """
    if not path.is_file():
        return {}
    data = _read_yaml(path)
    loaded: _RepoOverrides = _build(_RepoOverrides, data, path.name)
    return {k.lower(): v for k, v in loaded.repos.items()}


def load_config(path: Path | None = None) -> Config:
    """Load ``configs/default.yaml`` and, if given, overlay the user's file on it.

    Raises:
        ConfigError: a file is missing or unreadable, a key is unknown, a value has the wrong
            type, or the schema version is not supported.
    """
    data = _absolutize(_read_yaml(DEFAULT_CONFIG), DEFAULT_CONFIG.parent)
    if path is not None:
        data = _merge(data, _absolutize(_read_yaml(path), path.resolve().parent))
    config: Config = _build(Config, data, "")
    if config.admit.flaky_policy not in ("reject", "drop"):
        raise ConfigError(
            f"admit.flaky_policy must be 'reject' or 'drop', not {config.admit.flaky_policy!r}"
        )
    if config.admit.fail_to_pass_scope not in ("patched", "all"):
        raise ConfigError(
            "admit.fail_to_pass_scope must be 'patched' or 'all', "
            f"not {config.admit.fail_to_pass_scope!r}"
        )
    if config.admit.scope not in ("touched", "suite"):
        raise ConfigError(f"admit.scope must be 'touched' or 'suite', not {config.admit.scope!r}")
    if config.verify.capability_scope not in ("repository", "file"):
        raise ConfigError(
            "verify.capability_scope must be 'repository' or 'file', "
            f"not {config.verify.capability_scope!r}"
        )
    if config.admit.thin_statements not in ("generate", "keep"):
        raise ConfigError(
            f"admit.thin_statements: unknown value {config.admit.thin_statements!r}",
            hint="generate (write one from the failing tests) or keep (the PR's text)",
        )
    if config.admit.runs_per_phase < 1 or not config.admit.hash_seeds:
        raise ConfigError("admit.runs_per_phase must be >= 1 and admit.hash_seeds non-empty")
    unknown_kinds = sorted(set(config.blocklist.kinds) - set(BLOCKLIST_KINDS))
    if unknown_kinds:
        # A misspelt kind would silently block nothing of that kind.
        raise ConfigError(
            f"blocklist.kinds: unknown kind {unknown_kinds[0]!r}",
            hint=f"valid kinds: {', '.join(BLOCKLIST_KINDS)}",
        )
    if config.mine.thin_statement_words < 0:
        raise ConfigError(
            f"mine.thin_statement_words must be >= 0, not {config.mine.thin_statement_words}",
            hint="0 flags no statement as thin",
        )
    if config.mine.jobs < 0:
        raise ConfigError(
            f"mine.jobs must be >= 0, not {config.mine.jobs}", hint="0 means one per CPU"
        )
    for section, key, low, strict in _RANGES:
        block: Any = config
        for name in section.split("."):
            block = getattr(block, name)
        value = getattr(block, key)
        if value < low or (strict and value == low):
            bound = f"> {low:g}" if strict else f">= {low:g}"
            raise ConfigError(
                f"{section}.{key} must be {bound}, not {value:g}",
                hint="a limit out of range would be graded as the model's failure, not refused",
            )
    min_score = config.admit.test_strength.min_score
    if min_score > 1:
        raise ConfigError(
            f"admit.test_strength.min_score must be <= 1, not {min_score:g}",
            hint="a score is killed / (killed + survived) mutants: 0 to 1",
        )
    for section in ("admit", "verify"):
        memory = getattr(config, section).memory
        if not _MEMORY.fullmatch(str(memory)):
            raise ConfigError(
                f"{section}.memory: cannot read {memory!r}",
                hint="a number of bytes with an optional unit: 512m, 4g",
            )
    from swe_forge.ecosystems.naming import ECOSYSTEM_NAMES  # a table; loads no adapter

    unknown_ecosystems = sorted(set(config.images.build_options) - set(ECOSYSTEM_NAMES))
    if unknown_ecosystems:
        # A misspelt ecosystem would silently pass its options to nobody.
        raise ConfigError(
            f"images.build_options: unknown ecosystem {unknown_ecosystems[0]!r}",
            hint=f"valid ecosystems: {', '.join(sorted(ECOSYSTEM_NAMES))}",
        )
    if config.schema_version != 1:
        raise ConfigError(
            f"configuration schema_version {config.schema_version} is not supported",
            hint="this swe-forge reads schema_version 1",
        )
    return config
