"""Licence identification and policy, judged at each candidate's base commit.

Two signals:

1. Licence files at the top of the tree (``LICENSE*``, ``LICENCE*``, ``COPYING*``,
   ``UNLICENSE``, and the files in ``LICENSES/``), identified with askalono. A file counts when
   its score reaches ``file_score_threshold``; a weaker match counts when the metadata names the
   same licence.
2. Package metadata: ``pyproject.toml`` (PEP 639 ``license`` expression, ``license = {text}``,
   Poetry's ``license``, trove classifiers), ``setup.cfg`` and ``setup.py``; ``Cargo.toml``
   (``license``, its old ``MIT/Apache-2.0`` spelling, ``[workspace.package]``'s, and the file
   ``license-file`` names, identified like a licence file), ``package.json`` (``license``, the
   old ``licenses`` list) and ``pom.xml`` (``<licenses>``' names).

The expression is the metadata's when it is a valid SPDX expression that covers every
identified licence file (it can say ``OR`` where files cannot); otherwise the files' licences
joined with ``AND`` (conservative: a conflict between signals needs both to be allowed).
An expression is allowed when it can be satisfied with allowlisted licences only.

Identification is cached by blob id, so walking thousands of commits costs one askalono call
per distinct licence text.
"""

from __future__ import annotations

import configparser
import hashlib
import itertools
import json
import os
import posixpath
import re
import threading
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import askalono
import yaml
from license_expression import (
    AND,
    OR,
    ExpressionError,
    LicenseSymbol,
    LicenseWithExceptionSymbol,
    get_spdx_licensing,
)

from swe_forge.config import LicenseConfig, load_yaml
from swe_forge.errors import ConfigError, LicenseError
from swe_forge.records import LicenseEvidence, LicenseVerdict, Reason

_LICENSE_FILE = re.compile(r"^(un)?licen[cs]e([-._ ].*)?$|^copying([-._ ].*)?$", re.IGNORECASE)
_SETUP_PY_LICENSE = re.compile(r"""\blicense\s*=\s*(['"])([^'"\n]{1,200})\1""")
_SETUP_PY_CLASSIFIER = re.compile(r"""(['"])(License :: [^'"\n]+)\1""")
_LICENSE_LINE = re.compile(rb"^.*licen[cs]e.*$", re.IGNORECASE | re.MULTILINE)
#: The root manifests whose licence metadata counts, in the order they are read.
_METADATA_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "Cargo.toml",
    "package.json",
    "pom.xml",
)
_POM_LICENSES = re.compile(r"<licenses>(.*?)</licenses>", re.DOTALL)
_POM_NAME = re.compile(r"<name>\s*([^<]{1,200}?)\s*</name>")
#: Licence files larger than this are not licence texts (or not ones we want to score).
_MAX_LICENSE_BYTES = 512 * 1024


@dataclass(frozen=True)
class LicensePolicy:
    """The allowlist and the maps from free text and classifiers to SPDX ids."""

    allow: frozenset[str]
    allow_exceptions: frozenset[str]
    aliases: dict[str, str]
    classifiers: dict[str, str]
    digest: str
    variants: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (word, base id)

    @classmethod
    def load(cls, path: Path) -> LicensePolicy:
        """Read the allowlist file (``configs/licenses.yaml``)."""
        try:
            raw = path.read_bytes()
            data = load_yaml(raw) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read licence allowlist {path}: {exc}") from exc
        valid = {
            "schema_version",
            "allow",
            "allow_exceptions",
            "aliases",
            "classifiers",
            "variants",
        }
        unknown = set(data) - valid
        if unknown:
            raise ConfigError(
                f"unknown key(s) in {path}: {', '.join(sorted(unknown))}",
                hint=f"valid keys: {', '.join(sorted(valid))}",
            )
        variants = {
            str(k): (str(v["requires"]).lower(), str(v["otherwise"]))
            for k, v in (data.get("variants") or {}).items()
        }
        return cls(
            allow=frozenset(data.get("allow", ())),
            allow_exceptions=frozenset(data.get("allow_exceptions", ())),
            aliases={str(k).lower(): str(v) for k, v in (data.get("aliases") or {}).items()},
            classifiers={str(k): str(v) for k, v in (data.get("classifiers") or {}).items()},
            digest=hashlib.sha256(raw).hexdigest(),
            variants=variants,
        )


def is_license_file(name: str) -> bool:
    """True for top-level file names that hold a licence text."""
    return bool(_LICENSE_FILE.match(name))


# A copyright notice with a year: the part of a licence file that differs between projects
# (and between a project's own years) while the licence stays the same.
_COPYRIGHT_NOTICE = re.compile(
    r"^[ \t]*(?:copyright\b|\(c\)|©)[^\n]*\b(?:1[89]|2[0-9])[0-9]{2}\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


#: A licence file is split into at most this many parts, each at least this long (a part is a
#: licence text, not a notice line).
_MAX_SECTIONS = 8
_MIN_SECTION_CHARS = 400


def licence_body(text: str) -> str:
    """A licence text without its copyright notices (lines naming a year).

    askalono identifies this body rather than the whole file: the result is the same (the
    notices are not part of any licence's template), and every MIT file with another holder
    or another year is then the same body, so one identification serves them all.
    """
    return _COPYRIGHT_NOTICE.sub("", text)


def identify_text(text: str) -> tuple[str, float]:
    """askalono's best SPDX id for a licence text, and its score (0..1)."""
    result = askalono.identify(text)
    return str(result.name), float(result.score)


class IdentityCache:
    """askalono results on disk, keyed by a hash of the licence body (:func:`licence_body`).

    One identification costs about a tenth of a second (askalono loads its whole store each
    time); the same licence bodies recur across commits, runs, forks and projects, so a
    content-addressed cache makes mining cheap. The askalono version is part of the file
    name: a new version starts a new cache.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, list[Any]] = {}
        self.dirty = False
        # Batch runs mine repositories in threads that share one cache.
        self._lock = threading.Lock()
        if path is not None and path.is_file():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self.data = loaded
            except (OSError, ValueError):
                self.data = {}  # a damaged cache is only a slower run

    def get(self, blob: str) -> tuple[str, float] | None:
        """A cached (SPDX id, score), or None."""
        with self._lock:
            hit = self.data.get(blob)
        return (str(hit[0]), float(hit[1])) if hit else None

    def put(self, blob: str, value: tuple[str, float]) -> None:
        """Remember a result."""
        with self._lock:
            self.data[blob] = [value[0], value[1]]
            self.dirty = True

    def save(self) -> None:
        """Write the cache atomically (best effort)."""
        if self.path is None or not self.dirty:
            return
        with self._lock:
            text = json.dumps(self.data, sort_keys=True)
            self.dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Unique per writer: processes and threads may save at the same time.
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def default_identity_cache() -> IdentityCache:
    """The shared on-disk cache in the swe-forge cache directory."""
    from importlib import metadata

    from swe_forge.mining.sources import cache_dir

    try:
        version = metadata.version("pyaskalono")
    except metadata.PackageNotFoundError:  # pragma: no cover
        version = "unknown"
    # "bodies": keyed by licence body; earlier caches were keyed by blob id.
    return IdentityCache(cache_dir() / f"askalono-{version}-bodies.json")


class LicenseJudge:
    """Judges a repository's licence at a commit; caches askalono results by blob id.

    ``list_root(commit)`` gives the top-level tree entries ``name -> (blob id, mode)``;
    ``list_dir(commit, dir)`` a directory's; ``read_blob(id)`` a blob's bytes. Passing these
    in keeps this module free of git.
    """

    def __init__(
        self,
        config: LicenseConfig,
        policy: LicensePolicy,
        *,
        list_root: Callable[[str], dict[str, tuple[str, int]]],
        list_dir: Callable[[str, str], dict[str, tuple[str, int]]],
        read_blob: Callable[[str], bytes],
        identity_cache: IdentityCache | None = None,
    ) -> None:
        self.config = config
        self.identity_cache = identity_cache or IdentityCache(None)
        self.policy = policy
        self._list_root = list_root
        self._list_dir = list_dir
        self._read_blob = read_blob
        self._file_cache: dict[str, tuple[str, float]] = {}
        self._meta_cache: dict[tuple[str, str], list[LicenseEvidence]] = {}
        self._fingerprints: dict[str, str] = {}
        self._verdict_cache: dict[str, LicenseVerdict] = {}
        self._licensing = get_spdx_licensing()

    # ------------------------------------------------------------------ signals
    def _text(self, blob: str, path: str) -> str:
        data = self._read_blob(blob)
        if len(data) > _MAX_LICENSE_BYTES:
            raise LicenseError(f"licence file {path} is too large ({len(data)} bytes)")
        if b"\x00" in data:
            raise LicenseError(
                f"licence file {path} is binary",
                hint="a licence must be a text file; this repository cannot be judged",
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            try:
                return data.decode("latin-1")
            except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes anything
                raise LicenseError(f"licence file {path} is not text") from exc

    def _identify_file(self, blob: str, path: str) -> tuple[str, float]:
        cached = self._file_cache.get(blob)
        if cached is not None:
            return cached
        text = self._text(blob, path)
        body = licence_body(text)
        key = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
        raw = self.identity_cache.get(key)
        if raw is None:
            raw = identify_text(body)
            self.identity_cache.put(key, raw)
        spdx, score = raw
        variant = self.policy.variants.get(spdx)
        if variant is not None and variant[0] not in text.lower():
            spdx = variant[1]
        if score < self.config.file_score_threshold:
            # One file holding several licence texts (a fork keeps its upstream's notice
            # beside its own; vendored code's licence is appended): the whole matches no
            # template well, each part may. The parts' licences all apply (AND), so a
            # copyleft part keeps the file refused.
            sections = self._identify_sections(text)
            if sections is not None:
                spdx, score = sections
        self._file_cache[blob] = (spdx, score)
        return spdx, score

    def _identify_sections(self, text: str) -> tuple[str, float] | None:
        """Identify a licence file part by part, split at its dated copyright notices.

        None unless there are at least two parts of licence size and every part is
        identified strongly; else the parts' licences joined with AND and the weakest score.
        """
        starts = [m.start() for m in _COPYRIGHT_NOTICE.finditer(text)]
        if len(starts) < 2 or len(starts) > _MAX_SECTIONS:
            return None
        # A title before the first notice belongs to the first part.
        bounds = [0, *starts[1:], len(text)]
        found: list[str] = []
        scores: list[float] = []
        for a, b in itertools.pairwise(bounds):
            body = licence_body(text[a:b])
            if len(body.strip()) < _MIN_SECTION_CHARS:
                return None
            key = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
            raw = self.identity_cache.get(key)
            if raw is None:
                raw = identify_text(body)
                self.identity_cache.put(key, raw)
            if raw[1] < self.config.file_score_threshold:
                return None
            found.append(raw[0])
            scores.append(raw[1])
        ids = sorted(set(found))
        expression = ids[0] if len(ids) == 1 else " AND ".join(ids)
        return expression, min(scores)

    def _spdx_from_text(self, text: str) -> str | None:
        """Normalise a metadata licence string to a valid SPDX expression, or None."""
        text = text.strip()
        if not text or len(text) > 200 or "\n" in text:
            return None
        alias = self.policy.aliases.get(text.lower())
        if alias:
            return alias
        try:
            parsed = self._licensing.parse(text, validate=False)
        except ExpressionError:
            return None
        if parsed is None or self._licensing.unknown_license_keys(parsed):
            return None
        return str(parsed.render())

    def _fingerprint(self, blob: str) -> str:
        """The licence-relevant lines of a metadata file, hashed (cached by blob id).

        Metadata files change far more often than their licence lines; keying the parsed
        evidence on these lines means a new ``pyproject.toml`` is parsed only when a line
        mentioning a licence changed.
        """
        found = self._fingerprints.get(blob)
        if found is None:
            lines = _LICENSE_LINE.findall(self._read_blob(blob))
            found = hashlib.sha1(b"\n".join(lines)).hexdigest() if lines else ""
            self._fingerprints[blob] = found
        return found

    def _metadata(self, root: dict[str, tuple[str, int]]) -> list[LicenseEvidence]:
        out: list[LicenseEvidence] = []
        parsers: dict[str, Callable[[str, str], list[LicenseEvidence]]] = {
            "pyproject.toml": self._pyproject,
            "setup.cfg": self._setup_cfg,
            "setup.py": self._setup_py,
            "Cargo.toml": self._cargo,
            "package.json": self._package_json,
            "pom.xml": self._pom,
        }
        for name in _METADATA_FILES:
            parse = parsers[name]
            entry = root.get(name)
            if entry is None:
                continue
            fingerprint = self._fingerprint(entry[0])
            if not fingerprint:
                continue
            key = (name, fingerprint)
            cached = self._meta_cache.get(key)
            if cached is None:
                try:
                    text = self._read_blob(entry[0]).decode("utf-8")
                except UnicodeDecodeError:
                    text = ""
                try:
                    cached = parse(text, entry[0])
                except Exception:
                    cached = []
                self._meta_cache[key] = cached
            out.extend(cached)
        return out

    def _classifier_evidence(
        self, classifiers: list[str], path: str, blob: str
    ) -> list[LicenseEvidence]:
        out = []
        for c in classifiers:
            spdx = self.policy.classifiers.get(c.strip())
            if spdx:
                out.append(LicenseEvidence("classifier", path, spdx, 1.0))
        return out

    def _pyproject(self, text: str, blob: str) -> list[LicenseEvidence]:
        data: dict[str, Any] = tomllib.loads(text)
        out: list[LicenseEvidence] = []
        project = data.get("project") or {}
        lic = project.get("license")
        candidates: list[str] = []
        if isinstance(lic, str):
            candidates.append(lic)
        elif isinstance(lic, dict) and isinstance(lic.get("text"), str):
            candidates.append(lic["text"])
        poetry = (data.get("tool") or {}).get("poetry") or {}
        if isinstance(poetry.get("license"), str):
            candidates.append(poetry["license"])
        for cand in candidates:
            spdx = self._spdx_from_text(cand)
            if spdx:
                out.append(LicenseEvidence("pyproject", "pyproject.toml", spdx, 1.0))
        classifiers = [c for c in project.get("classifiers") or [] if isinstance(c, str)]
        classifiers += [c for c in poetry.get("classifiers") or [] if isinstance(c, str)]
        out.extend(self._classifier_evidence(classifiers, "pyproject.toml", blob))
        return out

    def _setup_cfg(self, text: str, blob: str) -> list[LicenseEvidence]:
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        if not parser.has_section("metadata"):
            return []
        out: list[LicenseEvidence] = []
        lic = parser.get("metadata", "license", fallback="")
        spdx = self._spdx_from_text(lic)
        if spdx:
            out.append(LicenseEvidence("setup.cfg", "setup.cfg", spdx, 1.0))
        raw = parser.get("metadata", "classifiers", fallback="")
        out.extend(self._classifier_evidence(raw.splitlines(), "setup.cfg", blob))
        return out

    def _setup_py(self, text: str, blob: str) -> list[LicenseEvidence]:
        out: list[LicenseEvidence] = []
        m = _SETUP_PY_LICENSE.search(text)
        if m:
            spdx = self._spdx_from_text(m.group(2))
            if spdx:
                out.append(LicenseEvidence("setup.py", "setup.py", spdx, 1.0))
        classifiers = [m.group(2) for m in _SETUP_PY_CLASSIFIER.finditer(text)]
        out.extend(self._classifier_evidence(classifiers, "setup.py", blob))
        return out

    def _cargo(self, text: str, blob: str) -> list[LicenseEvidence]:
        data: dict[str, Any] = tomllib.loads(text)
        out: list[LicenseEvidence] = []
        for table in (data.get("package"), (data.get("workspace") or {}).get("package")):
            lic = table.get("license") if isinstance(table, dict) else None
            if not isinstance(lic, str):
                continue  # absent, or ``license.workspace = true`` (the workspace's is read)
            # Cargo long accepted "/" for OR ("MIT/Apache-2.0"); SPDX has no such operator.
            spdx = self._spdx_from_text(re.sub(r"\s*/\s*", " OR ", lic))
            if spdx:
                out.append(LicenseEvidence("cargo", "Cargo.toml", spdx, 1.0))
        return out

    def _package_json(self, text: str, blob: str) -> list[LicenseEvidence]:
        data = json.loads(text)
        if not isinstance(data, dict):
            return []
        found: list[Any] = [data.get("license")]
        if isinstance(data.get("licenses"), list):
            found += data["licenses"]  # npm's deprecated list of {type, url}
        out: list[LicenseEvidence] = []
        for lic in found:
            if isinstance(lic, dict):
                lic = lic.get("type")
            spdx = self._spdx_from_text(lic) if isinstance(lic, str) else None
            if spdx:
                out.append(LicenseEvidence("package.json", "package.json", spdx, 1.0))
        return out

    def _pom(self, text: str, blob: str) -> list[LicenseEvidence]:
        block = _POM_LICENSES.search(text)
        if block is None:
            return []
        names = [self._spdx_from_text(n) for n in _POM_NAME.findall(block.group(1))]
        # Several <license> entries are the project's choices, as Maven documents them.
        spdx = [n for n in names if n]
        if not spdx or len(spdx) != len(names):
            return []  # a name we cannot read: no evidence rather than half of it
        expr = spdx[0] if len(spdx) == 1 else " OR ".join(f"({e})" for e in spdx)
        parsed = self._spdx_from_text(expr)
        return [LicenseEvidence("pom.xml", "pom.xml", parsed, 1.0)] if parsed else []

    def _declared_files(
        self, commit: str, root: dict[str, tuple[str, int]]
    ) -> dict[str, tuple[str, int]]:
        """The licence file Cargo.toml's ``license-file`` names, wherever it is in the tree
        and whatever its name (``docs/COPYRIGHT``): it is the crate's licence text."""
        entry = root.get("Cargo.toml")
        if entry is None or not self._fingerprint(entry[0]):
            return {}
        try:
            data = tomllib.loads(self._read_blob(entry[0]).decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            return {}
        out: dict[str, tuple[str, int]] = {}
        for table in (data.get("package"), (data.get("workspace") or {}).get("package")):
            path = table.get("license-file") if isinstance(table, dict) else None
            if not isinstance(path, str):
                continue
            path = posixpath.normpath(path.strip())
            if path.startswith(("..", "/")) or path == ".":
                continue
            parent, _, name = path.rpartition("/")
            found = (self._list_dir(commit, parent) if parent else root).get(name)
            if found is not None and found[1] in (0o100644, 0o100755):
                out[path] = found
        return out

    # ------------------------------------------------------------------ verdict
    def judge(self, commit: str) -> LicenseVerdict:
        """The licence verdict for the tree of ``commit`` (cached by the licence blobs)."""
        root = self._list_root(commit)
        files = {
            n: e for n, e in root.items() if is_license_file(n) and e[1] in (0o100644, 0o100755)
        }
        for name, entry in self._list_dir(commit, "LICENSES").items():
            if entry[1] in (0o100644, 0o100755):
                files[f"LICENSES/{name}"] = entry
        files.update(self._declared_files(commit, root))
        meta_keys = [self._fingerprint(root[n][0]) for n in _METADATA_FILES if n in root]
        cache_key = json.dumps([sorted((n, e[0]) for n, e in files.items()), meta_keys])
        cached = self._verdict_cache.get(cache_key)
        if cached is not None:
            return cached
        try:
            verdict = self._judge(commit, root, files)
        except LicenseError as exc:
            verdict = LicenseVerdict("", False, Reason.LICENSE_UNREADABLE.value, str(exc))
        self._verdict_cache[cache_key] = verdict
        return verdict

    def _judge(
        self, commit: str, root: dict[str, tuple[str, int]], files: dict[str, tuple[str, int]]
    ) -> LicenseVerdict:
        evidence: list[LicenseEvidence] = []
        strong: list[str] = []
        weak: list[str] = []
        for path in sorted(files):
            blob = files[path][0]
            spdx, score = self._identify_file(blob, path)
            evidence.append(LicenseEvidence("file", path, spdx, round(score, 4), blob))
            if score >= self.config.file_score_threshold:
                strong.append(spdx)
            elif score >= self.config.weak_file_score_threshold:
                weak.append(spdx)
        meta = self._metadata(root)
        evidence.extend(meta)
        meta_exprs = sorted({e.spdx for e in meta if e.source != "classifier"})
        meta_symbols: set[str] = set()
        for m in meta:
            meta_symbols |= self._symbols(m.spdx)
        # A weak file match counts when the metadata names the same licence.
        strong += [w for w in weak if w in meta_symbols]
        strong = sorted(set(strong))
        expression = ""
        if strong:
            covering = [e for e in meta_exprs if set(strong) <= self._symbols(e)]
            if len(meta_exprs) == 1 and covering:
                expression = covering[0]
            else:
                extra = sorted(meta_symbols - set(strong))
                expression = " AND ".join(f"({s})" if " " in s else s for s in strong + extra)
        elif meta and self.config.accept_metadata_only:
            parts = meta_exprs or sorted(meta_symbols)
            expression = " AND ".join(f"({p})" if " " in p else p for p in parts)
        if not expression:
            detail = "no licence file identified"
            if evidence:
                detail += ": " + ", ".join(
                    f"{e.path}={e.spdx}@{e.score:.4f}"
                    if e.score >= self.config.weak_file_score_threshold or e.source != "file"
                    else f"{e.path}=unidentified (best {e.spdx}@{e.score:.4f})"
                    for e in evidence
                )
            return LicenseVerdict("", False, Reason.LICENSE_UNKNOWN.value, detail, tuple(evidence))
        try:
            parsed = self._licensing.parse(expression, validate=False)
        except ExpressionError as exc:
            return LicenseVerdict(
                expression,
                False,
                Reason.LICENSE_UNKNOWN.value,
                f"unparseable: {exc}",
                tuple(evidence),
            )
        expression = str(parsed.render())
        if self.allowed(parsed):
            return LicenseVerdict(expression, True, "", "", tuple(evidence))
        return LicenseVerdict(
            expression,
            False,
            Reason.LICENSE_NOT_PERMISSIVE.value,
            f"{expression} is not satisfiable with the allowlist",
            tuple(evidence),
        )

    def _symbols(self, expression: str) -> set[str]:
        try:
            parsed = self._licensing.parse(expression, validate=False)
        except ExpressionError:
            return set()
        if parsed is None:
            return set()
        return {str(s.key) for s in self._licensing.license_symbols(parsed, decompose=True)}

    def allowed(self, expr: Any) -> bool:
        """Can this parsed expression be satisfied using allowlisted licences only?"""
        if isinstance(expr, str):
            expr = self._licensing.parse(expr, validate=False)
        if isinstance(expr, LicenseWithExceptionSymbol):
            return (
                expr.license_symbol.key in self.policy.allow
                and expr.exception_symbol.key in self.policy.allow_exceptions
            )
        if isinstance(expr, LicenseSymbol):
            return str(expr.key) in self.policy.allow
        if isinstance(expr, OR):
            return any(self.allowed(a) for a in expr.args)
        if isinstance(expr, AND):
            return all(self.allowed(a) for a in expr.args)
        return False
