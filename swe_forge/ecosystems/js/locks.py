"""The exact versions a pnpm or yarn lock (yarn 1 and berry) resolved, for npm to install.

npm reads neither lock, and resolving package.json's ranges afresh misses what the lock
installs (newer versions, and optional peers a pnpm lock holds, such as ``ts-node`` for a
``jest.config.ts``). :func:`pin_package_json` rewrites a scratch tree's package.json so that
npm installs the lock's versions: each direct dependency pinned to the version the lock gives
it, every package the lock holds in one version pinned through npm's ``overrides``, and the
peers the lock installed added as development dependencies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Other package managers' locks npm can be told the versions of.
PINNABLE_LOCKS = ("pnpm-lock.yaml", "yarn.lock")

_DEP_KEYS = ("dependencies", "devDependencies", "optionalDependencies")
_EXACT = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")


@dataclass
class LockVersions:
    """What a lock resolved: versions by package name, the version of a (name, range) pair,
    and the names some locked package takes as a peer."""

    versions: dict[str, set[str]] = field(default_factory=dict)
    by_spec: dict[tuple[str, str], str] = field(default_factory=dict)
    peers: set[str] = field(default_factory=set)

    def add(self, name: str, version: str, spec: str = "") -> None:
        """Record ``name@version`` (resolved for ``spec`` when given); others are ignored."""
        version = version.strip().strip("\"'")
        if not name or not _EXACT.match(version):
            return  # a link:, file:, workspace: or git dependency: nothing npm can pin
        self.versions.setdefault(name, set()).add(version)
        if spec:
            self.by_spec[(name, spec)] = version


def split_key(key: str) -> tuple[str, str]:
    """``@scope/name@range`` -> (``@scope/name``, ``range``)."""
    key = key.strip().strip("\"'")
    at = key.find("@", 1)
    return (key, "") if at < 0 else (key[:at], key[at + 1 :])


def _pnpm_version(raw: Any) -> str:
    """A pnpm lock's version field without its peer suffix (``1.2.3(peer@4)``, ``1.2.3_x``)."""
    text = str(raw.get("version") if isinstance(raw, dict) else raw or "")
    return re.split(r"[(_]", text, maxsplit=1)[0]


def _pnpm_name_version(key: str) -> tuple[str, str]:
    """(name, version) of a pnpm ``packages`` key: ``/name/1.2.3_x`` (lock 5),
    ``/name@1.2.3(x)`` (6), ``name@1.2.3`` (9)."""
    key = re.split(r"\(", key.lstrip("/"), maxsplit=1)[0]
    if "@" in key[1:]:
        return split_key(key)
    name, _, version = key.rpartition("/")
    return name, version.split("_", 1)[0]


def read_pnpm(text: str) -> LockVersions:
    """The versions in a ``pnpm-lock.yaml`` (lock formats 5 to 9)."""
    import yaml

    out = LockVersions()
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        return out
    for key, info in (data.get("packages") or {}).items():
        name, version = _pnpm_name_version(str(key))
        out.add(name, version)
        if isinstance(info, dict) and isinstance(info.get("peerDependencies"), dict):
            out.peers |= set(info["peerDependencies"])
    importers = data.get("importers") or {}
    root = importers.get(".") if isinstance(importers, dict) else None
    root = root if isinstance(root, dict) else data
    specifiers = root.get("specifiers") or {}
    for dep_key in _DEP_KEYS:
        for name, raw in (root.get(dep_key) or {}).items():
            spec = raw.get("specifier") if isinstance(raw, dict) else specifiers.get(name)
            out.add(str(name), _pnpm_version(raw), str(spec or ""))
    return out


def read_yarn(text: str) -> LockVersions:
    """The versions in a ``yarn.lock`` of yarn 1 (its own format) or berry (YAML)."""
    out = LockVersions()
    if "__metadata:" in text:
        import yaml

        data = yaml.safe_load(text) or {}
        for key, info in data.items() if isinstance(data, dict) else ():
            if key == "__metadata" or not isinstance(info, dict):
                continue
            resolution = str(info.get("resolution") or "")
            if "@npm:" not in resolution:
                continue  # workspace:, patch:, git: nothing npm installs from the registry
            version = str(info.get("version") or "")
            for one in str(key).split(","):
                name, spec = split_key(one)
                out.add(name, version, spec.removeprefix("npm:"))
            if isinstance(info.get("peerDependencies"), dict):
                out.peers |= set(info["peerDependencies"])
        return out
    keys: list[str] = []
    for line in text.splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith(":"):
            keys = [k for k in line.rstrip()[:-1].split(",") if k.strip()]
        elif keys and line.strip().startswith("version "):
            version = line.strip()[len("version ") :]
            for one in keys:
                name, spec = split_key(one)
                out.add(name, version, spec)
            keys = []
    return out


def read_lock(name: str, text: str) -> LockVersions:
    """The versions in the lock file ``name`` (one of :data:`PINNABLE_LOCKS`)."""
    return read_pnpm(text) if name == "pnpm-lock.yaml" else read_yarn(text)


def pin_package_json(tree: Path, lock: str) -> int:
    """Rewrite ``tree``'s package.json so that npm installs ``lock``'s versions (see the
    module's docstring); the number of packages pinned (0: the lock gave nothing usable)."""
    locked = read_lock(lock, (tree / lock).read_text(errors="replace"))
    path = tree / "package.json"
    pkg = json.loads(path.read_text(encoding="utf-8-sig"))
    single = {n: next(iter(v)) for n, v in locked.versions.items() if len(v) == 1}
    direct: set[str] = set()
    pinned = 0
    for dep_key in _DEP_KEYS:
        deps = pkg.get(dep_key)
        if not isinstance(deps, dict):
            continue
        for name, spec in list(deps.items()):
            direct.add(name)
            version = locked.by_spec.get((name, str(spec))) or single.get(name)
            if version and isinstance(spec, str) and not spec.startswith(_NOT_REGISTRY):
                deps[name] = version
                pinned += 1
    # npm installs required peers itself, never optional ones; a peer the lock installed is
    # one the project's tools may need (ts-node for Jest's TypeScript config).
    dev = pkg.setdefault("devDependencies", {})
    for name in sorted(locked.peers & set(single)):
        if name not in direct and isinstance(dev, dict):
            dev[name] = single[name]
            direct.add(name)
            pinned += 1
    overrides = pkg.get("overrides") if isinstance(pkg.get("overrides"), dict) else {}
    for name, version in sorted(single.items()):
        if name not in direct and name not in overrides:
            overrides[name] = version
            pinned += 1
    if overrides:
        pkg["overrides"] = overrides
    path.write_text(json.dumps(pkg, indent=2) + "\n")
    return pinned


#: package.json specs that are not registry ranges (left as they are).
_NOT_REGISTRY = ("npm:", "file:", "link:", "workspace:", "git", "http:", "https:", "github:")
