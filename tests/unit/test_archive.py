"""OCI archives from the engine's ``docker save`` stream, without an engine: a stream in the
engine's format (legacy layer directories, a layer stored once and linked twice) is built here."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest

from swe_forge.errors import DockerError, InputError
from swe_forge.images.archive import read_archive, ref_name, write_archive

#: The OCI image-layout grammar of org.opencontainers.image.ref.name.
OCI_REF = re.compile(
    r"^[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*(?:/[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*)*$"
)
BASE, INSTANCE = "swe-forge.invalid/base:bookworm-1", "swe-forge.invalid/instance:o__r-1-abc"


def layer(name: str, text: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text.encode()))
    return buf.getvalue()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def docker_save(*, break_diff_ids: bool = False) -> tuple[bytes, dict[str, str]]:
    """Two images sharing their first layer, as Docker 20.10's save writes them."""
    a, b = layer("etc/os", "debian"), layer("testbed/x.py", "x = 1")
    cfg_base = json.dumps({"rootfs": {"type": "layers", "diff_ids": [f"sha256:{digest(a)}"]}})
    diff_b = digest(b"tampered" if break_diff_ids else b)
    cfg_inst = json.dumps(
        {"rootfs": {"type": "layers", "diff_ids": [f"sha256:{digest(a)}", f"sha256:{diff_b}"]}}
    )
    ids = {BASE: digest(cfg_base.encode()), INSTANCE: digest(cfg_inst.encode())}
    manifest = [
        {"Config": f"{ids[BASE]}.json", "RepoTags": [BASE], "Layers": ["v1a/layer.tar"]},
        {
            "Config": f"{ids[INSTANCE]}.json",
            "RepoTags": [INSTANCE],
            "Layers": ["v1c/layer.tar", "v1b/layer.tar"],
        },
    ]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        files = {
            "v1a/layer.tar": a,
            "v1a/json": b"{}",
            "v1b/layer.tar": b,
            f"{ids[BASE]}.json": cfg_base.encode(),
            f"{ids[INSTANCE]}.json": cfg_inst.encode(),
            "manifest.json": json.dumps(manifest).encode(),
            "repositories": b"{}",
        }
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("v1c/layer.tar")  # the same layer in another chain: a link
        link.type = tarfile.SYMTYPE
        link.linkname = "../v1a/layer.tar"
        tar.addfile(link)
    return buf.getvalue(), {k: f"sha256:{v}" for k, v in ids.items()}


def chunks(data: bytes, size: int = 1000) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_an_oci_layout_that_docker_load_also_reads(tmp_path: Path) -> None:
    stream, ids = docker_save()
    dest = tmp_path / "images.tar"
    images = write_archive(chunks(stream), dest)
    assert {i.names: i.id for i in images} == {(BASE,): ids[BASE], (INSTANCE,): ids[INSTANCE]}
    with tarfile.open(dest) as tar:
        names = tar.getnames()
        assert names[:3] == ["oci-layout", "index.json", "manifest.json"]
        blobs = {}
        for member in tar.getmembers():
            assert member.mtime == 0 and member.uid == 0
            if member.isfile() and member.name.startswith("blobs/sha256/"):
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                assert digest(data) == member.name.rpartition("/")[2]  # content-addressed
                blobs[member.name] = data

        def read(name: str) -> Any:
            return json.loads(tar.extractfile(name).read())  # type: ignore[union-attr]

        assert read("oci-layout") == {"imageLayoutVersion": "1.0.0"}
        index, docker = read("index.json"), read("manifest.json")
    # The shared layer is stored once; configs, two layers and two OCI manifests.
    assert len(blobs) == 2 + 2 + 2
    by_name = {m["annotations"]["io.containerd.image.name"]: m for m in index["manifests"]}
    assert set(by_name) == {BASE, INSTANCE}
    for name, entry in by_name.items():
        ref = entry["annotations"]["org.opencontainers.image.ref.name"]
        assert OCI_REF.match(ref), ref  # OCI tools refuse "__"
        oci = json.loads(blobs[f"blobs/sha256/{entry['digest'][7:]}"])
        assert oci["config"]["digest"] == ids[name]  # the image id is kept
        config = json.loads(blobs[f"blobs/sha256/{ids[name][7:]}"])
        assert [layer["digest"] for layer in oci["layers"]] == config["rootfs"]["diff_ids"]
    for entry in docker:  # docker load's view: paths into the same blobs
        assert all(f"blobs/sha256/{p.rpartition('/')[2]}" in blobs for p in entry["Layers"])
    assert read_archive(dest) == images
    # Deterministic: the same stream gives the same bytes.
    again = tmp_path / "again.tar"
    write_archive(chunks(stream, 777), again)
    assert again.read_bytes() == dest.read_bytes()


def test_an_inconsistent_stream_writes_nothing(tmp_path: Path) -> None:
    stream, _ids = docker_save(break_diff_ids=True)
    dest = tmp_path / "images.tar"
    with pytest.raises(DockerError, match="do not match its configuration"):
        write_archive(chunks(stream), dest)
    assert list(tmp_path.iterdir()) == []


def test_read_archive_refuses_what_docker_cannot_load(tmp_path: Path) -> None:
    not_tar = tmp_path / "x.tar"
    not_tar.write_text("hello")
    with pytest.raises(InputError, match="not an image archive"):
        read_archive(not_tar)
    oci_only = tmp_path / "oci.tar"
    with tarfile.open(oci_only, "w") as tar:
        info = tarfile.TarInfo("index.json")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(InputError, match=r"no docker manifest\.json"):
        read_archive(oci_only)


def test_ref_names_follow_the_oci_grammar() -> None:
    assert ref_name(INSTANCE) == "o--r-1-abc"
    assert ref_name("a/b:py3.11-x_y") == "py3.11-x_y"
    assert ref_name("127.0.0.1:5000/ns/x") == "latest"
    for name in ("x:_a__b._c-", "x:a..b", "x:A.B", INSTANCE, BASE):
        assert OCI_REF.match(ref_name(name)), name
