"""Audit an instance image from outside: does it hand the agent the answer?

Checks, each a named finding when it fails:

- ``history``: ``/testbed/.git`` (copied out and read with libgit2, never with the image's
  own tools) holds exactly one commit reachable from any ref, that commit has no parents,
  there is one branch and no other ref (tags, remotes, notes, stash), no reflogs, no
  ``ORIG_HEAD``/``FETCH_HEAD``/``MERGE_HEAD``, no packed refs naming other commits, no
  alternates or shallow file, no hooks, no remote in the config; and every object in the
  database is reachable from that commit (no unreachable or packed leftovers). Judged by
  ancestry and object counts, never by dates.
- ``tree``: the commit's tree is the candidate's base tree (when the source repository is
  at hand).
- ``test_files``: files the test patch adds are absent from ``/testbed``; files it modifies
  are at their base version.
- ``test_content``: no file anywhere in the image (outside the OS's own ``/usr`` and dpkg
  data) holds test-patch content: the names of the tests it adds (also inside ``.pyc`` and
  zip/wheel files), or its long added lines.
- ``distribution``: the project's own distribution is installed only from ``/testbed``. A
  ``*.dist-info`` of the project's name nested inside another package (setuptools' and pip's
  ``_vendor`` copies of packaging, platformdirs, tomli, ...) is that package's private copy, not
  an installed distribution: it is listed in ``vendored``, not failed.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from swe_forge.diffs import DiffParseError, parse_diff
from swe_forge.engine import Engine
from swe_forge.git.history_audit import GitAudit, audit_git_dir
from swe_forge.git.objects import blob_id

_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{5,}")
_SKIP_PREFIXES = ("proc/", "sys/", "dev/")
#: An added line is evidence only when it is this long and absent from the whole base tree.
_MIN_LINE = 40
#: A test name this long found alone in an installed library is evidence, a shorter one chance.
_DISTINCT_NAME = 20
_MAX_SCAN = 64 * 1024 * 1024


@dataclass
class AuditReport:
    """The findings of one image's audit."""

    image: str
    instance_id: str
    passed: bool = True
    findings: list[dict[str, str]] = field(default_factory=list)
    git: dict[str, Any] = field(default_factory=dict)
    scanned_files: int = 0
    scanned_bytes: int = 0
    #: ``*.dist-info`` directories of the project's name that another package vendors.
    vendored: list[str] = field(default_factory=list)

    def fail(self, check: str, detail: str) -> None:
        """Record a failed check."""
        self.passed = False
        self.findings.append({"check": check, "detail": detail})

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class Needles:
    """What test-patch content looks like: added test names, added long lines, file states."""

    names: frozenset[bytes]
    lines: frozenset[bytes]
    added_files: tuple[str, ...]
    modified_files: dict[str, str]  # path -> abbreviated base blob id from the index line


def needles_from_test_patch(test_patch: str, base_lines: set[bytes] | None = None) -> Needles:
    """Extract the fingerprints of a test patch.

    ``base_lines``: stripped lines of the touched files at the base commit; added lines that
    also exist there are not evidence of a leak.
    """
    names: set[bytes] = set()
    lines: set[bytes] = set()
    added: list[str] = []
    modified: dict[str, str] = {}
    try:
        files = parse_diff(test_patch)
    except DiffParseError:
        files = []
    for fp in files:
        if fp.old_path is None and fp.new_path:
            added.append(fp.new_path)
        elif fp.old_path:
            # The base version must be in the image: its blob id starts with old_index.
            modified[fp.old_path] = fp.old_index
        for hunk in fp.hunks:
            for tag, body in hunk.lines:
                if tag != 0x2B:
                    continue
                text = body.strip()
                for ident in re.findall(rb"\b(?:def|class)\s+(Test\w+|test\w+)", text):
                    names.add(ident)
                if len(text) >= _MIN_LINE and (base_lines is None or text not in base_lines):
                    lines.add(text)
    if base_lines is not None:
        base_idents = {i for ln in base_lines for i in _IDENT.findall(ln)}
        names -= base_idents
    return Needles(frozenset(names), frozenset(lines), tuple(sorted(added)), modified)


def audit_image(
    engine: Engine,
    image: str,
    *,
    instance_id: str,
    test_patch: str,
    project_name: str | None,
    base_tree: str | None = None,
    base_lines: set[bytes] | None = None,
    unchanged: dict[str, tuple[int, int]] | None = None,
) -> AuditReport:
    """Audit one instance image; the report says which checks failed and why.

    ``base_lines``: the stripped lines of every file of the base tree (from the trusted
    source repository), so added lines that exist at the base are not taken for leaks.
    ``unchanged``: path -> (size, mtime) of the base image's files; identical files in the
    instance come from the OS image we bootstrapped and are not scanned again.
    """
    report = AuditReport(image=image, instance_id=instance_id)
    with tempfile.TemporaryDirectory() as tmp:
        engine.copy_out(image, "/testbed/.git", Path(tmp))
        git: GitAudit = audit_git_dir(Path(tmp) / ".git")
    report.git = asdict(git)
    for problem in git.problems:
        report.fail("history", problem)
    if base_tree is not None and git.tree and git.tree != base_tree:
        report.fail("tree", f"the commit's tree {git.tree} is not the base tree {base_tree}")
    needles = needles_from_test_patch(test_patch, base_lines)
    _scan(engine, image, needles, project_name, report, unchanged or {})
    return report


def file_index(engine: Engine, image: str) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime) of every regular file of an image (to skip unchanged files)."""
    return {
        m.name.lstrip("./"): (m.size, int(m.mtime)) for m, _fh in engine.export(image) if m.isfile()
    }


def _scan(
    engine: Engine,
    image: str,
    needles: Needles,
    project: str | None,
    report: AuditReport,
    unchanged: dict[str, tuple[int, int]],
) -> None:
    added = {f"testbed/{p}" for p in needles.added_files}
    modified = {f"testbed/{p}": blob for p, blob in needles.modified_files.items()}
    seen_modified: set[str] = set()
    norm = canonicalize_name(project) if project else None
    dist_dirs: dict[str, dict[str, bytes]] = {}
    for member, fh in engine.export(image):
        name = member.name.lstrip("./")
        if name in added:
            report.fail("test_files", f"/{name} is added by the test patch but exists in the image")
        if name in modified and fh is not None:
            data = fh.read()
            seen_modified.add(name)
            if modified[name] and not blob_id(data).startswith(modified[name]):
                report.fail("test_files", f"/{name} is not at its base version")
            _check_content(name, data, needles, report)
            continue
        if (
            norm
            and ".dist-info/" in name
            and name.rsplit("/", 1)[-1] in ("METADATA", "direct_url.json")
        ):
            d = name.rsplit("/", 1)[0]
            dist = d.rsplit("/", 1)[-1].removesuffix(".dist-info").rsplit("-", 1)[0]
            if canonicalize_name(dist) == norm and fh is not None:
                if is_installed_dist_dir(d):
                    dist_dirs.setdefault(d, {})[name.rsplit("/", 1)[-1]] = fh.read()
                elif f"/{d}" not in report.vendored:
                    report.vendored.append(f"/{d}")
            continue
        if fh is None or name.startswith(_SKIP_PREFIXES) or member.size > _MAX_SCAN:
            continue
        if unchanged.get(name) == (member.size, int(member.mtime)):
            continue
        _check_content(name, fh.read(), needles, report)
    for d, files in sorted(dist_dirs.items()):
        raw = files.get("direct_url.json")
        url = ""
        if raw:
            try:
                url = str(json.loads(raw).get("url", ""))
            except ValueError:
                url = ""
        if url.rstrip("/") != "file:///testbed":
            report.fail(
                "distribution",
                f"/{d} is a copy of the project not installed from /testbed "
                f"({url or 'no direct_url.json'})",
            )


_PATH_ROOTS = ("site-packages", "dist-packages")


def is_installed_dist_dir(path: str) -> bool:
    """Is the ``*.dist-info`` directory ``path`` an installed distribution, not a vendored one?

    An installer writes ``NAME-VER.dist-info`` directly into an import root (``site-packages``,
    ``dist-packages``). One nested deeper below such a root lives inside another package
    (``setuptools/_vendor/platformdirs-4.2.2.dist-info``): that package's private copy, imported
    under its own namespace, not a copy of the project the agent could import in its place.
    Outside any import root nothing tells the two apart, so such a directory counts as installed.
    """
    parts = path.strip("/").split("/")
    roots = [i for i, p in enumerate(parts[:-1]) if p in _PATH_ROOTS]
    if not roots:
        return True
    return roots[-1] == len(parts) - 2


#: Where the other ecosystems' images keep their vendored dependencies (crates, Go modules,
#: Maven's repository, npm packages): third-party code, where a generic added line (Rust's
#: ``let previous_hook = std::panic::take_hook();``) recurs by chance as it does in Python's
#: installed libraries (rust-lang/hashbrown: zerocopy's layout.rs failed the audit).
_DEPENDENCY_STORES = (
    "opt/cargo/vendor/",
    "opt/go/modcache/",
    "opt/m2/",
    "opt/maven/",
    "opt/node_modules/",
)


def _check_content(name: str, data: bytes, needles: Needles, report: AuditReport) -> None:
    report.scanned_files += 1
    report.scanned_bytes += len(data)
    if name.endswith((".whl", ".zip", ".egg")):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for info in zf.infolist():
                    if info.file_size <= _MAX_SCAN:
                        _check_content(f"{name}!/{info.filename}", zf.read(info), needles, report)
        except (zipfile.BadZipFile, OSError, RuntimeError):
            pass
        return
    in_libraries = (
        name.startswith(("usr/lib/python", "usr/local/lib/python", *_DEPENDENCY_STORES))
        or "/site-packages/" in name
        or "/node_modules/" in name
    )
    if needles.names:
        hits = needles.names.intersection(_IDENT.findall(data))
        if in_libraries and len(hits) < 2:
            # Installed libraries ship their own tests: a short, generic name (`test_run`) in
            # one of them is chance; a leaked copy carries a distinctive name or several.
            hits = frozenset(h for h in hits if len(h) >= _DISTINCT_NAME)
        if hits:
            report.fail(
                "test_content",
                f"/{name} holds test names from the test patch: "
                f"{sorted(h.decode() for h in hits)[:3]}",
            )
            return
    # Long added lines are evidence in the repository and the writable places around it; in
    # interpreters and installed libraries, generic lines (a `with warnings...` idiom) recur by
    # chance, and a leaked copy there still carries the tests' names, checked above.
    if needles.lines and not in_libraries and b"\n" in data[:65536]:
        stripped = {ln.strip() for ln in data.splitlines()}
        hits_l = needles.lines.intersection(stripped)
        if hits_l:
            sample = next(iter(hits_l)).decode("utf-8", "replace")[:60]
            report.fail("test_content", f"/{name} holds lines added by the test patch ({sample!r})")
