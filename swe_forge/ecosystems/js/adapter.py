"""The adapter, :class:`JsEcosystem`: what the package's modules answer, behind the protocol
(the package's docstring says how; :mod:`swe_forge.ecosystems.js`)."""

from __future__ import annotations

import json
import os
import posixpath
import random
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from swe_forge.ecosystems.base import (
    ADDED,
    REMOVED,
    Reader,
    file_lines,
    line_violations,
    patched_test_files,
    paths_beyond_gold,
    runner_config,
    signed,
    touched_paths,
    verify_job,
)
from swe_forge.ecosystems.decoys import HostCanaries
from swe_forge.ecosystems.js.deps import LOCKS, OTHER_LOCKS
from swe_forge.ecosystems.js.detect import JS_EXTS, is_js_test_file
from swe_forge.ecosystems.js.image import build_images
from swe_forge.ecosystems.js.scan import CAPABILITIES as CAPABILITIES
from swe_forge.ecosystems.js.scan import (
    UNDECLARED,
    is_builtin_module,
    module_specifiers,
    scan,
    scan_with_specifiers,
)
from swe_forge.ecosystems.scanning import (
    UNPARSABLE,
    Findings,
    post_images,
    source_capabilities,
    tree_source_capabilities,
)

if TYPE_CHECKING:
    from swe_forge.ecosystems.base import Builder
    from swe_forge.ecosystems.canaries import CanaryWriter
    from swe_forge.records import Candidate, ImageRecord, TaskManifest

from swe_forge.ecosystems.js.runner import (
    JsRunner,
    _full_name,
    _grep,
)
from swe_forge.ecosystems.js.scope import (
    JsScope,
)
from swe_forge.ecosystems.js.toolchain import choose_node as choose_node
from swe_forge.ecosystems.js.toolchain import (
    configured_files,
    detect_framework,
    read_package_json,
)

_TEST_DIRS = ("__tests__", "test", "tests", "__test__", "spec")


#: Runner configuration by file name (any directory).
_CONFIG_NAME = re.compile(
    r"^(jest|vitest|vite)[\w.-]*[.-]config(\.[\w.]+)?$|"
    r"^(jest\.config|vitest\.config|vitest\.workspace|vitest\.projects|vite\.config|"
    r"babel\.config|\.babelrc|\.mocharc|\.swcrc|jest\.setup|jest\.preset|setupTests|"
    r"vitest\.setup|test-setup|jest-setup|\.nycrc|karma\.conf)(\.[\w.]+)?$|"
    r"^(tsconfig|jsconfig)([.\w-]*)\.json$|^\.npmrc$|^\.yarnrc(\.yml)?$|^\.pnpmfile\.cjs$|"
    r"^(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?)$"
)


_CONFIG_DIRS = ("node_modules", "__mocks__", ".yarn", ".pnp")


class JsEcosystem(HostCanaries):
    """The JavaScript/TypeScript adapter (see the module docstring)."""

    name = "js"
    runner_name = "node-test"

    def detect(self, read: Reader) -> bool:
        """A package.json at the root naming a test framework, and no Python packaging."""
        if any(read(p) is not None for p in ("pyproject.toml", "setup.py", "setup.cfg")):
            return False
        pkg = read_package_json(read)
        return pkg is not None and bool(detect_framework(pkg))

    def is_test_file(self, path: str) -> bool:
        """``*.test.*``/``*.spec.*``/``*-test.*`` files, and JS/TS files under ``__tests__``
        (the miner's rule too: :mod:`swe_forge.ecosystems.js.detect`)."""
        return is_js_test_file(path)

    def test_files(self, test_patch: str) -> list[str]:
        """Test files the test patch adds or changes (not deleted ones)."""
        return patched_test_files(test_patch, self.is_test_file)

    def scope(self, test_patch: str, read_base: Reader | None = None) -> JsScope:
        """Every test of the test files the test patch touches."""
        return JsScope(frozenset(self.test_files(test_patch)))

    def runner(self, module: str, packages: list[str] | None = None) -> JsRunner:
        """The gate's runner (``module``: ``<framework>@<version>``)."""
        return JsRunner(module, packages)

    def runner_for(self, rec: ImageRecord) -> JsRunner:
        """The gate's runner for the images of ``rec``: its project's name and the runner's
        configuration file its test script names (the recipe's ``harness.config``)."""
        harness = (rec.recipe or {}).get("harness") or {}
        return JsRunner(str(rec.project_name or ""), None, str(harness.get("config") or ""))

    # -------------------------------------------------------------- judge's files, capabilities
    def patch_violations(
        self, patch: str, *, gold_patch: str, read_base: Reader | None
    ) -> list[dict[str, str]]:
        """Runner configuration, locks, node_modules, __mocks__ and package.json lines the
        gold patch does not change; and the configuration file the test script names (any
        name) with the repository files it and the root configurations name (transforms,
        setup files, presets): each decides how the held-out tests are loaded."""
        out: list[dict[str, str]] = []
        judge_files = configured_files(read_base)
        for path in paths_beyond_gold(patch, gold_patch):
            parts = path.split("/")
            name = parts[-1]
            if path in judge_files:
                out.append(
                    runner_config(
                        f"{path}: the test runner's configuration, or a file it loads "
                        "(transform, setup, preset): it decides how the tests are read and run"
                    )
                )
            elif any(d in _CONFIG_DIRS for d in parts[:-1]) or name in _CONFIG_DIRS:
                out.append(
                    runner_config(
                        f"{path}: installed packages and module mocks decide what code the "
                        "tests run against"
                    )
                )
            elif _CONFIG_NAME.match(name):
                out.append(
                    runner_config(
                        f"{path}: test framework, transpiler, package manager or lock configuration"
                    )
                )
        out += line_violations(
            patch,
            gold_patch,
            _package_json_lines,
            "package.json decides the test script, the framework's settings and how modules "
            "resolve; only the reference fix's changes to it are allowed",
        )
        return out

    def _source(self, path: str) -> bool:
        parts = path.split("/")
        if not path.endswith(JS_EXTS) or self.is_test_file(path) or path.endswith(".min.js"):
            return False
        if any(p in ("node_modules", "dist", "build", "coverage", "vendor") for p in parts[:-1]):
            return False
        if any(p in _TEST_DIRS or p in ("__mocks__", "fixtures", "__fixtures__") for p in parts):
            return False
        return not _CONFIG_NAME.match(parts[-1])

    def capabilities(self, patch: str, read_base: Reader | None = None) -> list[str]:
        """Capabilities the files a patch adds or changes use after it that they did not use
        before (read on their syntax trees, :mod:`swe_forge.ecosystems.js.scan`).

        Every file the runner could load is read, wherever it lies: a module under
        ``vendor/``, ``dist/`` or ``fixtures/``, or one named like a test, runs as soon as a
        source file requires it, and Node and Jest run a required file of any extension as
        JavaScript (``require('./fit.txt')``). So a file of another extension that the
        patch's code names is code, whole; any other text file the patch touches is read as
        JavaScript too and counts when it parses as such (nothing can run one that does
        not)."""
        code = _loaded_as_code(patch, read_base)

        def read(source: bytes, path: str, *, fragment: bool = False) -> Findings:
            if path in code or (path.endswith(JS_EXTS) and not path.endswith(_DECLARATIONS)):
                return scan(source, path, fragment=fragment)
            if path.endswith(_DECLARATIONS):
                return {}  # types only, unless some code requires it by name
            if fragment or _json(source):
                # Prose read without its file names no code; JSON (an ``.eslintrc``) is data
                # (an object where a statement starts is no script Node would run).
                return {}
            found = scan(source, path)
            return {} if UNPARSABLE in found else found

        found = set(source_capabilities(patch, read_base, lambda _path: True, read))
        if read_base is not None and _requires_undeclared(patch, read_base, code):
            found.add(UNDECLARED)
        return sorted(found)

    def base_capabilities(self, paths: Iterable[str], read: Reader) -> list[str]:
        """Capabilities the base tree's non-test JS/TS source files use."""
        specifiers: dict[str, set[str]] = {}

        def scan_keeping(source: bytes, path: str, *, fragment: bool = False) -> Findings:
            found, specs = scan_with_specifiers(source, path, fragment=fragment)
            specifiers[path] = specs
            return found

        caps = set(tree_source_capabilities(paths, read, self._runs, scan_keeping))
        if any(undeclared(path, specs, read) for path, specs in sorted(specifiers.items())):
            caps.add(UNDECLARED)
        return sorted(caps)

    def _runs(self, path: str) -> bool:
        """A source file whose code can run (a ``.d.ts`` holds types only)."""
        return self._source(path) and not path.endswith((".d.ts", ".d.mts", ".d.cts"))

    def protect(self, test_patch: str) -> dict[str, list[str]]:
        """Files locked during a run: the test patch's paths, package.json, locks, configs."""
        files = set(touched_paths(test_patch)) | {"package.json", *LOCKS, *OTHER_LOCKS}
        files |= {
            f"{stem}.{ext}"
            for stem in ("jest.config", "vitest.config", "vite.config", "babel.config")
            for ext in ("js", "ts", "mjs", "cjs", "mts", "cts", "json")
        }
        files |= {".mocharc", ".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.yml"}
        files |= {".mocharc.yaml", ".mocharc.jsonc", ".babelrc", ".babelrc.js", "tsconfig.json"}
        trees = set()
        for path in touched_paths(test_patch):
            parts = path.split("/")
            for marker in ("__tests__", "__fixtures__", "fixtures", "__snapshots__"):
                if marker in parts[:-1]:
                    trees.add("/".join(parts[: parts.index(marker) + 1]))
        return {"files": sorted(files), "trees": sorted(trees)}

    # ------------------------------------------------------------------------------ verifying
    def run_job(
        self,
        task: TaskManifest,
        test_patch_path: str,
        *,
        timeout: float,
        output_limit: int,
        twins: list[dict[str, Any]] | None = None,
        files: list[dict[str, str]] | None = None,
        extra: dict[str, dict[str, Any]] | None = None,
        test_timeout: float = 0.0,
        rng: random.Random | None = None,
    ) -> dict[str, Any]:
        """The verifier's run: the expected tests' files with a name filter (the calibration
        copies ``extra`` names included), as twins or as one run."""
        rng = rng or random.SystemRandom()
        module = str(task.harness.get("module") or "jest")
        runner = JsRunner(module, None, str(task.harness.get("config") or ""))
        expected = list(task.FAIL_TO_PASS) + list(task.PASS_TO_PASS) + sorted(extra or {})
        test_files = sorted({t.split("::", 1)[0] for t in expected if "::" in t})
        names = {_full_name(t.split("::", 1)[1], runner.framework) for t in expected if "::" in t}
        grep = _grep(names, runner.framework)
        if len(grep) > 60_000:
            grep = ""  # too long for one argument: every test of the files runs
        protect = self.protect(task.test_patch)
        if runner.config:
            # The configuration the test script names is the judge's as much as a root one.
            protect["files"] = sorted({*protect["files"], runner.config})
        return verify_job(
            test_patch_path,
            protect,
            argv=runner.argv(
                test_files, order_seed=rng.randrange(2**31 - 1), grep=grep, timeout=test_timeout
            ),
            env=runner.env(),
            timeout=timeout,
            output_limit=output_limit,
            report=runner.report(test_files),
            twins=twins,
            files=files,
            canary_map=extra,
        )

    def scan_context(self, paths: Iterable[str]) -> list[str]:
        """The ``package.json`` files above the changed files (the nearest one says which
        packages a file may require: :func:`undeclared`)."""
        out: set[str] = set()
        for path in paths:
            folder = posixpath.dirname(path)
            while True:
                out.add(posixpath.join(folder, "package.json") if folder else "package.json")
                if not folder:
                    break
                folder = posixpath.dirname(folder)
        return sorted(out)

    def canary_writer(self) -> CanaryWriter:
        """The decoys' writer (:mod:`swe_forge.ecosystems.js.canary`), one per process."""
        from swe_forge.ecosystems.js.canary import writer

        return writer()

    def unit_of(self, test: str) -> str:
        """One process (the runner's, in band) runs every test."""
        return ""

    # ------------------------------------------------------------------------------- images
    def build(self, builder: Builder, candidate: Candidate) -> ImageRecord:
        """Node, node_modules, env and instance images (failures come back in the record)."""
        return build_images(builder, candidate)


def canary_path(test_file: str, stem: str) -> str:
    """A canary file beside ``test_file``, named like it (``.test.ts``, ``.spec.js``, or a
    plain name under ``__tests__``/``test``)."""
    directory, _, name = test_file.rpartition("/")
    m = re.search(r"([._-](?:test|spec)s?)(\.[cm]?[jt]sx?)$", name)
    new = stem + m.group(1) + m.group(2) if m else stem + os.path.splitext(name)[1]
    return f"{directory}/{new}" if directory else new


def _package_json_lines(patch: str) -> set[tuple[str, str]]:
    """(path, "+line"/"-line") of the lines a patch changes in package.json files."""
    out: set[tuple[str, str]] = set()
    for path, lines in file_lines(patch, "package.json"):
        for tag, body in lines:
            if tag in (ADDED, REMOVED):
                line = body.strip().rstrip(",")
                if line:
                    out.add((path, signed(tag, line)))
    return out


#: TypeScript's declaration files: types only, unless code requires one by its name.
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
#: Files Node and Jest never run as JavaScript (parsed as data, or binary addons).
_DATA_EXTS = (".json", ".node")
#: Assets a project's Jest maps or transforms when its code imports them (nothing loads them
#: as JavaScript where tests run at all): read as code, but no syntax error refuses them.
_ASSET_EXTS = (
    ".css",
    ".scss",
    ".sass",
    ".less",
    ".styl",
    ".svg",
    ".html",
    ".htm",
    ".graphql",
    ".gql",
)


def package_of(spec: str) -> str | None:
    """The registry package a module specifier names (``@scope/name`` or ``name``); None for
    a relative or absolute path, one of Node's own modules or a URL."""
    head = spec.split("/", 1)[0]
    if not spec or spec.startswith((".", "/")) or ":" in head or is_builtin_module(spec):
        return None
    parts = spec.split("/")
    if head.startswith("@"):
        return "/".join(parts[:2]) if len(parts) > 1 else None
    return head


def declared_packages(path: str, read: Reader) -> set[str] | None:
    """The packages the nearest ``package.json`` above ``path`` declares for its users
    (dependencies, peer, optional and bundled ones, and its own name); None when there is
    none or it is no JSON object."""
    folder = posixpath.dirname(path)
    while True:
        data = read(posixpath.join(folder, "package.json") if folder else "package.json")
        if data is not None:
            try:
                doc = json.loads(data)
            except ValueError:
                return None
            if not isinstance(doc, dict):
                return None
            out: set[str] = set()
            for key in ("dependencies", "peerDependencies", "optionalDependencies"):
                if isinstance(doc.get(key), dict):
                    out |= {str(k) for k in doc[key]}
            for key in ("bundleDependencies", "bundledDependencies"):
                if isinstance(doc.get(key), list):
                    out |= {str(k) for k in doc[key]}
            if isinstance(doc.get("name"), str):
                out.add(doc["name"])
            return out
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def undeclared(path: str, specs: Iterable[str], read: Reader) -> bool:
    """Does a file at ``path`` name a package its ``package.json`` does not declare?

    Code shipped to a package's users can only require what they install with it; the rest
    of ``node_modules`` is the tooling's (``@babel/core`` reads and parses any file,
    ``glob`` lists them: a seventeenth red team's test-file oracle, through no ``fs`` of
    its own)."""
    wanted = {p for p in (package_of(s) for s in specs) if p}
    if not wanted:
        return False
    declared = declared_packages(path, read)
    return declared is not None and bool(wanted - declared)


def _requires_undeclared(patch: str, read_base: Reader, code: set[str]) -> bool:
    """Does a JS/TS file the patch adds or changes newly name an undeclared package?"""
    for path, (text, whole) in sorted(post_images(patch, read_base).items()):
        if path not in code and not path.endswith(JS_EXTS):
            continue
        if path.endswith(_DECLARATIONS):
            continue
        after = module_specifiers(text, path, fragment=not whole)
        before_text = read_base(path) if whole else None
        before = module_specifiers(before_text, path) if before_text else set()
        if undeclared(path, after - before, read_base):
            return True
    return False


def _loaded_as_code(patch: str, read_base: Reader | None) -> set[str]:
    """Files of other extensions than JS/TS that a patch adds or changes and that a JS/TS
    file it adds or changes (or one of these, in turn) names in ``require``/``import``: the
    runner would load them as JavaScript. An asset's name is left out (see ``_ASSET_EXTS``)
    unless it parses as JavaScript."""
    images = post_images(patch, read_base)
    others = {
        p for p in images if p.endswith(_DECLARATIONS) or not p.endswith((*JS_EXTS, *_DATA_EXTS))
    }
    if not others:
        return set()
    loaded: set[str] = set()
    queue = sorted((p for p in images if p not in others and p.endswith(JS_EXTS)), reverse=True)
    seen: set[str] = set()
    while queue:
        path = queue.pop()
        if path in seen:
            continue
        seen.add(path)
        text, whole = images[path]
        for spec in sorted(module_specifiers(text, path, fragment=not whole)):
            for target in sorted(_named_files(spec, path, others)):
                if target.endswith(_ASSET_EXTS) and UNPARSABLE in scan(images[target][0], target):
                    continue
                if target not in loaded:
                    loaded.add(target)
                    queue.append(target)
    return loaded


def _json(source: bytes) -> bool:
    """The text is one JSON value."""
    try:
        json.loads(source)
    except ValueError:
        return False
    return True


def _named_files(spec: str, importer: str, files: set[str]) -> set[str]:
    """Which of ``files`` a module specifier in ``importer`` may load: a relative or
    absolute path (as written, or with an extension the project's resolver may add), or a
    bare name found through the resolver's module directories or the package's own name."""
    spec = spec.split("?", 1)[0].split("#", 1)[0]
    if not spec:
        return set()
    if spec.startswith(("./", "../")) or spec in (".", ".."):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        return {f for f in files if f == target or _with_extension(f, target)}
    if spec.startswith("/"):
        return {f for f in files if spec == "/" + f or spec.endswith("/" + f)}
    parts = [p for p in spec.split("/") if p not in ("", ".")]
    tails = {"/".join(parts[k:]) for k in range(len(parts))}
    return {f for f in files for t in tails if f == t or f.endswith("/" + t)}


def _with_extension(path: str, stem: str) -> bool:
    """``path`` is ``stem`` with one more extension (``./fit`` loads ``fit.txt`` where a
    project's Jest lists ``txt`` among its module file extensions)."""
    rest = path[len(stem) :] if path.startswith(stem) else ""
    return rest.startswith(".") and "/" not in rest
