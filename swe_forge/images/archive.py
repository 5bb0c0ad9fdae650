"""Image archives for machines without a registry: an OCI image layout that ``docker load`` reads.

The engine's ``docker save`` (Docker 20.10 here) writes its own format: layer directories named
by legacy ids and a ``manifest.json``. :func:`write_archive` turns that stream into one archive
that is at the same time

- an **OCI image layout** (``oci-layout``, ``index.json``, ``blobs/sha256/<digest>``): every
  file is named by the sha256 of its bytes, and OCI tools (skopeo, crane, podman, containerd)
  read it; each name of an image is an ``index.json`` entry annotated with
  ``org.opencontainers.image.ref.name`` (its tag, in OCI's grammar: :func:`ref_name`) and
  ``io.containerd.image.name`` (its full name);
- a **docker archive**: ``manifest.json`` points at the same configuration and layer blobs, so
  ``docker load`` of any engine since 1.10 loads it (Docker 25 and later write this same
  two-in-one layout themselves).

Layers are stored uncompressed, exactly the bytes whose digests the image configuration lists
(its ``diff_ids``), so the image id (the configuration's digest) survives the round trip and
``docker load`` checks every layer against it. Shared layers (the base's) are stored once. The
archive is deterministic: members in a fixed order, times zero, owner root; the same images
give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import re
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_forge.engine import ChunkReader
from swe_forge.errors import DockerError, InputError

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
_COPY = 1 << 20


@dataclass(frozen=True)
class ArchivedImage:
    """One image in an archive: its names, its id (the configuration's digest), its layers."""

    names: tuple[str, ...]
    id: str
    layers: int


def ref_name(name: str) -> str:
    """The ``org.opencontainers.image.ref.name`` of an image name: its tag, written in the
    OCI grammar (alphanumerics joined by one of ``-._:@+`` or ``--``), so a Docker tag such
    as ``owner__repo-1`` becomes ``owner--repo-1`` (OCI tools refuse ``__``)."""
    tag = name.rpartition(":")[2] if ":" in name.rpartition("/")[2] else "latest"
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", tag) if p]
    seps = re.findall(r"[^A-Za-z0-9]+", tag.strip("._-"))
    out = parts[0] if parts else "latest"
    for sep, part in zip(seps, parts[1:], strict=False):
        out += (sep if sep in _OCI_SEPARATORS else "--") + part
    return out


_OCI_SEPARATORS = {"-", ".", "_", ":", "@", "+", "--"}


def _dump(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


class _Blobs:
    """Files of the engine's archive, spooled to disk under their sha256 (shared ones once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.by_name: dict[str, str] = {}  # member name -> hex digest
        self.links: dict[str, str] = {}  # member name -> the member it points at
        self.sizes: dict[str, int] = {}  # hex digest -> bytes

    def add_stream(self, fh: Any) -> str:
        digest = hashlib.sha256()
        spool = self.root / ".spool"
        size = 0
        with spool.open("wb") as out:
            while chunk := fh.read(_COPY):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
        hexdigest = digest.hexdigest()
        target = self.root / hexdigest
        if target.exists():
            spool.unlink()
        else:
            spool.rename(target)
        self.sizes[hexdigest] = size
        return hexdigest

    def add_bytes(self, data: bytes) -> str:
        return self.add_stream(io.BytesIO(data))

    def resolve(self, name: str) -> str:
        """The digest of a member, following the engine's symlinks (a layer the archive holds
        twice is a link to the first copy)."""
        seen = set()
        name = posixpath.normpath(name)
        while name in self.links:
            if name in seen:
                raise DockerError(f"the engine's archive has a symlink loop at {name}")
            seen.add(name)
            name = self.links[name]
        if name not in self.by_name:
            raise DockerError(f"the engine's archive lacks {name}")
        return self.by_name[name]

    def read(self, hexdigest: str) -> bytes:
        return (self.root / hexdigest).read_bytes()


def write_archive(
    chunks: Iterable[bytes],
    dest: Path,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[ArchivedImage]:
    """Write the engine's ``docker save`` stream to ``dest`` as an OCI layout + docker archive.

    The stream is read once; its files are spooled beside ``dest`` under their digests and
    the archive is written from there (``dest`` appears only when complete). Every layer's
    digest is checked against the configuration's ``diff_ids``.

    Raises:
        DockerError: the engine's stream is not a consistent docker archive.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _line: None)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}-") as tmp:
        blobs = _Blobs(Path(tmp) / "blobs")
        with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as tar:
            for member in tar:
                name = posixpath.normpath(member.name)
                if member.issym():
                    blobs.links[name] = posixpath.normpath(
                        posixpath.join(posixpath.dirname(name), member.linkname)
                    )
                elif member.islnk():
                    blobs.links[name] = posixpath.normpath(member.linkname)
                elif member.isfile():
                    fh = tar.extractfile(member)
                    assert fh is not None
                    blobs.by_name[name] = blobs.add_stream(fh)
                    if member.size >= _COPY:
                        say(f"read {name} ({member.size / 1e6:.1f} MB)")
        try:
            entries = json.loads(blobs.read(blobs.resolve("manifest.json")))
        except (ValueError, DockerError) as exc:
            raise DockerError(f"the engine's archive has no readable manifest.json: {exc}") from exc
        images: list[ArchivedImage] = []
        index: list[dict[str, Any]] = []
        docker_manifest: list[dict[str, Any]] = []
        for entry in entries:
            config_hex = blobs.resolve(entry["Config"])
            layers = [blobs.resolve(path) for path in entry["Layers"]]
            config = json.loads(blobs.read(config_hex))
            diff_ids = list((config.get("rootfs") or {}).get("diff_ids") or [])
            if diff_ids != [f"sha256:{h}" for h in layers]:
                raise DockerError(
                    f"the engine's archive of sha256:{config_hex} has layers that do not match "
                    "its configuration"
                )
            manifest = _dump(
                {
                    "schemaVersion": 2,
                    "mediaType": OCI_MANIFEST,
                    "config": {
                        "mediaType": OCI_CONFIG,
                        "digest": f"sha256:{config_hex}",
                        "size": blobs.sizes[config_hex],
                    },
                    "layers": [
                        {"mediaType": OCI_LAYER, "digest": f"sha256:{h}", "size": blobs.sizes[h]}
                        for h in layers
                    ],
                }
            )
            manifest_hex = blobs.add_bytes(manifest)
            names = tuple(sorted(entry.get("RepoTags") or ()))
            descriptor = {
                "mediaType": OCI_MANIFEST,
                "digest": f"sha256:{manifest_hex}",
                "size": len(manifest),
            }
            for name in names or ("",):
                annotations = (
                    {
                        "io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": ref_name(name),
                    }
                    if name
                    else {}
                )
                index.append({**descriptor, **({"annotations": annotations} if name else {})})
            docker_manifest.append(
                {
                    "Config": f"blobs/sha256/{config_hex}",
                    "RepoTags": list(names) or None,
                    "Layers": [f"blobs/sha256/{h}" for h in layers],
                }
            )
            images.append(ArchivedImage(names, f"sha256:{config_hex}", len(layers)))
        index.sort(
            key=lambda d: (
                d.get("annotations", {}).get("io.containerd.image.name", ""),
                d["digest"],
            )
        )
        docker_manifest.sort(key=lambda d: str(d["Config"]))
        keep = sorted(
            {d["Config"].rpartition("/")[2] for d in docker_manifest}
            | {path.rpartition("/")[2] for d in docker_manifest for path in d["Layers"]}
            | {d["digest"].partition(":")[2] for d in index}
        )
        partial = dest.with_name(dest.name + ".partial")
        try:
            _write(partial, blobs, index, docker_manifest, keep)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(dest)
    return sorted(images, key=lambda i: (i.names, i.id))


def _write(
    partial: Path,
    blobs: _Blobs,
    index: list[dict[str, Any]],
    docker_manifest: list[dict[str, Any]],
    keep: list[str],
) -> None:
    """The archive itself: layout files first (a streaming reader meets the index before the
    blobs), then the blobs by digest."""
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as out:
        _add_bytes(out, "oci-layout", _dump({"imageLayoutVersion": "1.0.0"}))
        _add_bytes(
            out,
            "index.json",
            _dump({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": index}),
        )
        _add_bytes(out, "manifest.json", _dump(docker_manifest))
        _add_dir(out, "blobs")
        _add_dir(out, "blobs/sha256")
        for hexdigest in keep:
            path = blobs.root / hexdigest
            info = _info(f"blobs/sha256/{hexdigest}", path.stat().st_size)
            with path.open("rb") as fh:
                out.addfile(info, fh)


def _info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(_info(name, len(data)), io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = _info(name, 0)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    tar.addfile(info)


def read_archive(path: Path) -> list[ArchivedImage]:
    """The images an archive holds (ours, or any ``docker save`` output), with their ids
    computed from the configurations' bytes (not taken from file names).

    Raises:
        InputError: not a tar file, or no ``manifest.json`` (an OCI layout without it is not
            something ``docker load`` of this engine can read).
    """
    try:
        tar = tarfile.open(path)  # noqa: SIM115 - closed by the with below
    except (OSError, tarfile.TarError) as exc:
        raise InputError(f"{path} is not an image archive ({exc})") from exc
    with tar:
        try:
            entries = json.loads(_read(tar, "manifest.json"))
        except (KeyError, ValueError) as exc:
            raise InputError(
                f"{path} has no docker manifest.json ({exc})",
                hint="make archives with `swe-forge images export` or `docker save`",
            ) from exc
        out = []
        for entry in entries:
            config = _read(tar, entry["Config"])
            out.append(
                ArchivedImage(
                    tuple(sorted(entry.get("RepoTags") or ())),
                    "sha256:" + hashlib.sha256(config).hexdigest(),
                    len(entry.get("Layers") or ()),
                )
            )
    return sorted(out, key=lambda i: (i.names, i.id))


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    member = tar.getmember(posixpath.normpath(name))
    for _ in range(8):  # follow the engine's symlinks (a layer stored once, linked twice)
        if not member.issym():
            break
        member = tar.getmember(
            posixpath.normpath(posixpath.join(posixpath.dirname(member.name), member.linkname))
        )
    fh = tar.extractfile(member)
    if fh is None:
        raise KeyError(name)
    return fh.read()
