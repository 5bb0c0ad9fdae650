"""Go's toolchain by date: the release current at a base commit (raised to go.mod's go and toolchain
lines), fetched from the module proxy's golang.org/toolchain and checksummed; modules downloaded on
the host.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge.errors import BuildError
from swe_forge.locks import file_lock

if TYPE_CHECKING:
    pass


#: Minor releases: (minor, first release date, the patch release pinned for it). The patch
#: is the last of its line on the proxy: bug and security fixes only, and fixed for good.
GO_RELEASES: tuple[tuple[str, str, str], ...] = (
    ("1.17", "2021-08-16", "1.17.13"),
    ("1.18", "2022-03-15", "1.18.10"),
    ("1.19", "2022-08-02", "1.19.13"),
    ("1.20", "2023-02-01", "1.20.14"),
    ("1.21", "2023-08-08", "1.21.13"),
    ("1.22", "2024-02-06", "1.22.12"),
    ("1.23", "2024-08-13", "1.23.12"),
    ("1.24", "2025-02-11", "1.24.13"),
    ("1.25", "2025-08-12", "1.25.14"),
    ("1.26", "2026-02-10", "1.26.11"),
)


_GO_DIRECTIVE = re.compile(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", re.M)


_TOOLCHAIN_DIRECTIVE = re.compile(r"^toolchain\s+go(\d+\.\d+(?:\.\d+)?)\s*$", re.M)


_MODULE = re.compile(r"^module\s+(\S+)", re.M)


def go_mod_info(text: str) -> dict[str, str]:
    """module, go and toolchain lines of a go.mod."""
    out: dict[str, str] = {}
    pairs = (("module", _MODULE), ("go", _GO_DIRECTIVE), ("toolchain", _TOOLCHAIN_DIRECTIVE))
    for key, rx in pairs:
        m = rx.search(text)
        if m:
            out[key] = m.group(1)
    return out


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def choose_toolchain(base_date: str, go_line: str = "", toolchain_line: str = "") -> str:
    """The pinned Go release for a commit made on ``base_date`` (ISO date), no older than the
    ``go`` and ``toolchain`` lines of its go.mod ask for."""
    day = base_date[:10]
    released = [r for r in GO_RELEASES if r[1] <= day] or [GO_RELEASES[0]]
    choice = released[-1]
    floor = max((v for v in (go_line, toolchain_line) if v), key=_vkey, default="")
    if floor:
        minor = ".".join(floor.split(".")[:2])
        if _vkey(minor) > _vkey(choice[0]):
            later = [r for r in GO_RELEASES if _vkey(r[0]) >= _vkey(minor)]
            if not later:
                raise BuildError(
                    f"go.mod asks for Go {floor}, newer than any pinned toolchain",
                    hint="add the release to swe_forge/ecosystems/go/__init__.py GO_RELEASES",
                )
            choice = later[0]
    return choice[2]


def host_go() -> str:
    """The host's go command (used only to fetch and check modules)."""
    found = shutil.which("go")
    if not found:
        raise BuildError("the go command is not on this machine", hint="install Go on the host")
    return found


def _go(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 1800) -> str:
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",
        **{k: v for k, v in os.environ.items() if k in ("GOPROXY", "GOSUMDB", "GONOSUMDB")},
        **env,
    }
    proc = subprocess.run(
        argv, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise BuildError(f"{' '.join(argv[:4])} failed:\n{tail}")
    return proc.stdout


def fetch_toolchain(version: str, cache: Path) -> Path:
    """The extracted toolchain ``go<version>`` for linux/amd64 (fetched once per machine)."""
    store = cache / "go" / "toolchains"
    store.mkdir(parents=True, exist_ok=True)
    module = f"golang.org/toolchain@v0.0.1-go{version}.linux-amd64"
    with tempfile.TemporaryDirectory(dir=store) as tmp:
        out = _go(
            [host_go(), "mod", "download", "-json", module],
            cwd=Path(tmp),
            env={"GOMODCACHE": str(store)},
        )
    data = json.loads(out)
    extracted = Path(data["Dir"])
    if not (extracted / "bin" / "go").is_file():
        raise BuildError(f"the toolchain module {module} has no bin/go")
    # Module zips keep no file modes: the SDK is copied out once, its programs made executable
    # (as the go command does when it switches toolchains itself).
    sdk = cache / "go" / "sdk" / f"go{version}"
    if (sdk / "bin" / "go").is_file():
        return sdk
    # One process copies it out; another run on the machine waits and finds it there.
    with file_lock(sdk.with_name(f".go{version}.lock")):
        if (sdk / "bin" / "go").is_file():
            return sdk
        tmp_sdk = sdk.with_name(f".go{version}-{os.getpid()}")
        shutil.rmtree(tmp_sdk, ignore_errors=True)
        shutil.copytree(extracted, tmp_sdk, symlinks=True)
        for path in tmp_sdk.rglob("*"):
            if path.is_symlink():
                continue
            mode = 0o755 if path.is_dir() else 0o644
            rel = path.relative_to(tmp_sdk).parts
            if path.is_file() and (rel[0] == "bin" or rel[:2] == ("pkg", "tool")):
                mode = 0o755
            path.chmod(mode)
        tmp_sdk.chmod(0o755)
        shutil.rmtree(sdk, ignore_errors=True)
        tmp_sdk.rename(sdk)
    return sdk


def download_modules(go_bin: Path, tree: Path, modcache: Path) -> None:
    """Every module the packages and tests of ``tree`` need, into ``modcache``."""
    env = {"GOMODCACHE": str(modcache), "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    _go([str(go_bin), "mod", "download"], cwd=tree, env=env)
    # ``download`` alone misses what only tests of dependencies import on old go.mod files.
    _go([str(go_bin), "list", "-e", "-deps", "-test", "./..."], cwd=tree, env=env)
