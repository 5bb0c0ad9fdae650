"""Images that leave the machine, with real engines and a real registry.

The example's images are pushed to the registry ``scripts/ensure-registry.sh`` serves on
loopback, then graded from a *second* Docker engine (its own data root: no image at all) that
pulls the pinned digests; tampered pins are refused there with exit 16. An OCI archive carries
the same images from the shared engine to a second engine, ids kept. The shared engine's
images are only read; each second engine is stopped and its data deleted after its test.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from swe_forge.engine import LABEL_PREFIX, Engine
from swe_forge.records import RegistryPins
from tests.docker.conftest import ExampleImages, ExampleTasks, SecondEngine

NAMESPACE = "swe-forge-tests"
FIRST, SECOND = "swe-forge__textkit-1", "swe-forge__textkit-3"


def swe_forge(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line, as a user runs it (``env`` picks the engine with DOCKER_HOST)."""
    return subprocess.run(
        [sys.executable, "-m", "swe_forge", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=1800,
    )


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return path


def registry_manifest(registry: str, reference: str) -> bytes:
    """The manifest the registry serves for ``repo@digest`` (straight from its v2 API)."""
    repo, _, digest = reference.partition("@")
    name = repo.removeprefix(registry + "/")
    req = urllib.request.Request(
        f"http://{registry}/v2/{name}/manifests/{digest}",
        headers={
            "Accept": "application/vnd.docker.distribution.manifest.v2+json, "
            "application/vnd.oci.image.manifest.v1+json"
        },
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        return bytes(res.read())


@pytest.fixture(scope="module")
def pinned(
    example_tasks: ExampleTasks, registry: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("registry") / "tasks-pinned.jsonl"
    proc = swe_forge(
        "images", "push", example_tasks.tasks, "--registry", f"{registry}/{NAMESPACE}", "-o", out
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_push_pins_every_image_by_digest(
    example_tasks: ExampleTasks, pinned: Path, registry: str, tmp_path: Path
) -> None:
    before, after = read(example_tasks.tasks), read(pinned)
    assert [t["instance_id"] for t in after] == [t["instance_id"] for t in before]
    assert len(after) == 5
    for old, new in zip(before, after, strict=True):
        pins = RegistryPins.from_dict(new["image"].pop("registry"))
        old["image"].pop("registry")
        assert new == old  # nothing but the pins changed
        assert pins.registry == f"{registry}/{NAMESPACE}"
        assert set(pins.images) == {"instance", "env", "base"}
        assert pins.images["instance"].id == old["image"]["id"]
        assert pins.images["env"].id == old["image"]["env_id"]
        assert [pins.images[k].local for k in ("instance", "env", "base")] == [
            old["image"]["tag"],
            old["image"]["env"],
            old["image"]["base"],
        ]
        for kind, pin in pins.images.items():
            assert pin.reference.startswith(f"{registry}/{NAMESPACE}/{kind}@sha256:")
            # The registry serves that manifest; its bytes hash to the pinned digest, and the
            # configuration it names is the image id (what a pull must give).
            body = registry_manifest(registry, pin.reference)
            assert "sha256:" + hashlib.sha256(body).hexdigest() == pin.digest
            assert json.loads(body)["config"]["digest"] == pin.id
    # Pushing again writes the same bytes (the digests are the registry's, and stable).
    again = tmp_path / "again.jsonl"
    proc = swe_forge(
        "images", "push", example_tasks.tasks, "--registry", f"{registry}/{NAMESPACE}", "-o", again
    )
    assert proc.returncode == 0, proc.stderr
    assert again.read_bytes() == pinned.read_bytes()


def test_second_engine_refuses_tampered_pins(
    pinned: Path, second_engine: SecondEngine, tmp_path: Path
) -> None:
    tasks = {t["instance_id"]: t for t in read(pinned)}
    first, other = tasks[FIRST], tasks[SECOND]
    pin = first["image"]["registry"]["images"]["instance"]
    repo = pin["reference"].partition("@")[0]
    forged = "sha256:" + hashlib.sha256(b"never pushed").hexdigest()
    cases = {
        # another task's image, which the registry does have: the wrong image id
        "another image": {
            "reference": other["image"]["registry"]["images"]["instance"]["reference"]
        },
        # a digest the registry never saw
        "unknown digest": {"reference": f"{repo}@{forged}"},
        # a pin that disagrees with the manifest's own image id
        "other id": {"id": other["image"]["id"]},
    }
    want = {
        "another image": f"the manifest pins {first['image']['id']}: refused",
        "unknown digest": "the registry has no image",
        "other id": "refused (an edited manifest?)",
    }
    for case, change in cases.items():
        task = json.loads(json.dumps(first))
        task["image"]["registry"]["images"]["instance"].update(change)
        path = write(tmp_path / f"{case.replace(' ', '-')}.jsonl", [task])
        results = tmp_path / f"{case.replace(' ', '-')}-results.jsonl"
        proc = swe_forge("verify", "--tasks", path, "--gold", "-o", results, env=second_engine.env)
        assert proc.returncode == 16, (case, proc.stdout, proc.stderr)
        assert want[case] in proc.stderr and "hint:" in proc.stderr, (case, proc.stderr)
        assert not results.exists(), case  # refused before anything was graded
    # The pinned image never arrived; only the other task's image, pulled and refused.
    engine2 = second_engine.engine()
    assert engine2.image(first["image"]["id"]) is None
    assert engine2.image(first["image"]["tag"]) is None


def test_second_engine_grades_gold_by_pulling_pinned_digests(
    engine: Engine, pinned: Path, second_engine: SecondEngine, tmp_path: Path
) -> None:
    tasks = read(pinned)
    engine2 = second_engine.engine()
    assert all(engine2.image(t["image"]["id"]) is None for t in tasks)
    results, report = tmp_path / "results.jsonl", tmp_path / "report.json"
    proc = swe_forge(
        "verify", "--tasks", pinned, "--gold", "-o", results, "--report", report,
        env=second_engine.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert (data["resolved_instances"], data["submitted_instances"]) == (5, 5), data
    assert {r["status"] for r in read(results)} == {"resolved"}
    for t in tasks:
        # Pulled by digest, checked, and named again as where it was built.
        got = engine2.image(t["image"]["tag"])
        assert got is not None and got.id == t["image"]["id"]
        assert got.labels[f"{LABEL_PREFIX}.instance-id"] == t["instance_id"]
        assert engine.image(t["image"]["id"]) is not None  # the shared engine still has it
    listed = swe_forge("images", "ls", "--json", env=second_engine.env)
    assert listed.returncode == 0, listed.stderr
    assert {i["id"] for i in json.loads(listed.stdout)} >= {t["image"]["id"] for t in tasks}
    # Graded again: everything is here now, nothing is pulled.
    again = swe_forge(
        "verify", "--tasks", pinned, "--gold", "--instance", FIRST, "-o", tmp_path / "again.jsonl",
        env=second_engine.env,
    )  # fmt: skip
    assert again.returncode == 0 and "pulling" not in again.stderr, again.stderr


def test_admit_pulls_pinned_images_by_digest(
    example_images: ExampleImages, registry: str, second_engine: SecondEngine, tmp_path: Path
) -> None:
    pinned = tmp_path / "images-pinned.jsonl"
    proc = swe_forge(
        "images", "push", example_images.images, "--registry", f"{registry}/{NAMESPACE}",
        "--instance", FIRST, "-o", pinned,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = {r["instance_id"]: r for r in read(pinned)}
    assert records[SECOND]["registry"] is None  # not selected: written back unchanged
    record = records[FIRST]
    # A record whose instance pin names another image: refused before any gate runs.
    tampered = json.loads(json.dumps(record))
    env_ref = record["registry"]["images"]["env"]["reference"]
    tampered["registry"]["images"]["instance"]["reference"] = env_ref
    bad = write(tmp_path / "tampered.jsonl", [tampered])
    proc = swe_forge(
        "admit", example_images.candidates, "--images", bad, "--instance", FIRST,
        "-o", tmp_path / "bad-tasks.jsonl", env=second_engine.env,
    )  # fmt: skip
    assert proc.returncode == 16, proc.stdout + proc.stderr
    assert "refused" in proc.stderr
    # The real pins: instance, env and base are pulled, and the task is admitted.
    tasks = tmp_path / "tasks.jsonl"
    proc = swe_forge(
        "admit", example_images.candidates, "--images", pinned, "--instance", FIRST,
        "-o", tasks, "--json", env=second_engine.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["admitted"] == 1
    (task,) = read(tasks)
    assert task["image"]["registry"] == record["registry"]
    engine2 = second_engine.engine()
    for kind, pin in record["registry"]["images"].items():
        got = engine2.image(pin["local"])
        assert got is not None and got.id == pin["id"], kind


def test_export_import_round_trip_keeps_ids(
    engine: Engine, example_tasks: ExampleTasks, second_engine: SecondEngine, tmp_path: Path
) -> None:
    archive, again = tmp_path / "images.tar", tmp_path / "again.tar"
    for dest in (archive, again):
        proc = swe_forge(
            "images", "export", example_tasks.tasks, "--instance", FIRST, "--instance", SECOND,
            "-o", dest,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert archive.read_bytes() == again.read_bytes()  # deterministic
    # An OCI image layout: every blob is named by the sha256 of its bytes.
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert {"oci-layout", "index.json", "manifest.json"} <= set(names)
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith("blobs/sha256/"):
                fh = tar.extractfile(member)
                assert fh is not None
                assert hashlib.sha256(fh.read()).hexdigest() == member.name.rpartition("/")[2]
        index = json.loads(tar.extractfile("index.json").read())  # type: ignore[union-attr]
    tasks = {t["instance_id"]: t for t in read(example_tasks.tasks)}
    local = {
        name: engine.image(name)
        for t in (tasks[FIRST], tasks[SECOND])
        for name in (t["image"]["tag"], t["image"]["env"], t["image"]["base"])
    }
    assert {m["annotations"]["io.containerd.image.name"] for m in index["manifests"]} == set(local)
    # Into an engine with no image at all.
    proc = swe_forge("images", "import", archive, "--json", env=second_engine.env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    engine2 = second_engine.engine()
    for name, info in local.items():
        assert info is not None
        got = engine2.image(name)
        assert got is not None and got.id == info.id, name  # the same image id
    # Graded there from the imported image: no registry, no pin needed.
    unpinned = write(tmp_path / "tasks.jsonl", [tasks[FIRST]])
    proc = swe_forge(
        "verify", "--tasks", unpinned, "--gold", "-o", tmp_path / "results.jsonl",
        env=second_engine.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["status"] for r in read(tmp_path / "results.jsonl")] == ["resolved"]
