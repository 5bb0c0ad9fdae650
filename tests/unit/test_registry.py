"""Registry pins, push's rewriting of records and pulls by digest, against an in-memory engine."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swe_forge.engine import LABEL_PREFIX, ImageInfo
from swe_forge.errors import DigestError, InputError, RegistryError, UsageError
from swe_forge.images.registry import (
    Registry,
    needs_of_record,
    needs_of_task,
    provide,
    push_images,
)
from swe_forge.records import ImagePin, ImageRecord, RegistryPins, TaskManifest, read_image_records


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


INSTANCE, ENV, BASE, OTHER = sha("instance"), sha("env"), sha("base"), sha("other")
LOCAL = {
    "instance": "swe-forge.invalid/instance:o__r-1-abc",
    "env": "swe-forge.invalid/env:py3.11-def",
    "base": "swe-forge.invalid/base:bookworm-py3.11-123",
}


@dataclass
class FakeEngine:
    """The engine seam in memory: images by id and by name, a registry's contents."""

    images: dict[str, ImageInfo] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    registry: dict[str, ImageInfo] = field(default_factory=dict)  # reference -> image
    pulled: list[str] = field(default_factory=list)
    pushed: list[tuple[str, str, str]] = field(default_factory=list)
    unreachable: bool = False
    host: str = "fake"

    def add(self, image_id: str, name: str = "", labels: dict[str, str] | None = None) -> None:
        self.images[image_id] = ImageInfo(image_id, (name,) if name else (), labels or {}, 1, "")
        if name:
            self.names[name] = image_id

    def image(self, ref: str) -> ImageInfo | None:
        return self.images.get(self.names.get(ref, ref))

    def tag(self, ref: str, name: str) -> None:
        self.names[name] = self.names.get(ref, ref)

    def pull(self, reference: str, progress: Callable[[str], None] | None = None) -> Any:
        if self.unreachable:
            raise RegistryError("pull failed: connection refused")
        self.pulled.append(reference)
        info = self.registry.get(reference)
        if info is not None:
            self.images[info.id] = info
        return info

    def push(
        self, image: str, repository: str, tag: str, progress: Callable[[str], None] | None = None
    ) -> str:
        self.pushed.append((image, repository, tag))
        if progress:
            progress("abc: Pushed")
        return sha(f"{repository}|{image}")


def pinned_ref(kind: str, image_id: str) -> str:
    return f"127.0.0.1:5000/ns/{kind}@{sha(f'127.0.0.1:5000/ns/{kind}|{image_id}')}"


def task(instance_id: str = "o__r-1", **image: Any) -> TaskManifest:
    block = {
        "id": INSTANCE,
        "tag": LOCAL["instance"],
        "env": LOCAL["env"],
        "env_id": ENV,
        "base": LOCAL["base"],
        "registry": None,
        **image,
    }
    return TaskManifest(
        instance_id, "o/r", "a" * 40, "p", "t", "s", "", "2024", "1", "a" * 40, ["t1"], [],
        block, {}, {}, {}, {}, {},
    )  # fmt: skip


def record(instance_id: str = "o__r-1") -> ImageRecord:
    return ImageRecord(
        instance_id,
        "o/r",
        "a" * 40,
        base_image=LOCAL["base"],
        env_image=LOCAL["env"],
        env_image_id=ENV,
        instance_image=LOCAL["instance"],
        instance_image_id=INSTANCE,
    )


# ---------------------------------------------------------------------------- records
def test_registry_needs_a_host() -> None:
    assert str(Registry.parse("127.0.0.1:5000/swe-forge")) == "127.0.0.1:5000/swe-forge"
    assert Registry.parse("localhost:5000").repository("env") == "localhost:5000/env"
    assert Registry.parse("http://ghcr.io/org/sub/").repository("base") == "ghcr.io/org/sub/base"
    for bad in ("swe-forge", "myname/images", "", "127.0.0.1:5000/Upper", "host.io/a//b"):
        with pytest.raises(UsageError) as err:
            Registry.parse(bad)
        assert err.value.exit_code == 2 and err.value.hint


def test_pins_round_trip_and_refuse_what_is_not_pinned() -> None:
    pins = RegistryPins(
        "127.0.0.1:5000/ns",
        {"instance": ImagePin(pinned_ref("instance", INSTANCE), INSTANCE, LOCAL["instance"])},
    )
    data = json.loads(json.dumps(pins.to_dict()))
    assert RegistryPins.from_dict(data) == pins
    assert pins.instance is not None and pins.instance.digest.startswith("sha256:")
    assert pins.instance.repository == "127.0.0.1:5000/ns/instance"
    bad_refs = [
        "127.0.0.1:5000/ns/instance:latest",  # a tag moves; a digest does not
        "ns/instance@" + INSTANCE,  # no registry host: Docker Hub
        "127.0.0.1:5000/ns/instance@sha256:abc",
    ]
    for ref in bad_refs:
        broken = json.loads(json.dumps(data))
        broken["images"]["instance"]["reference"] = ref
        with pytest.raises(ValueError, match="not a reference pinned by digest"):
            RegistryPins.from_dict(broken)
    with pytest.raises(ValueError, match="version"):
        RegistryPins.from_dict({**data, "version": 2})
    with pytest.raises(ValueError, match="kind"):
        RegistryPins.from_dict({**data, "images": {"tools": data["images"]["instance"]}})
    broken = json.loads(json.dumps(data))
    broken["images"]["instance"]["id"] = "1088f6d2"
    with pytest.raises(ValueError, match="not an image id"):
        RegistryPins.from_dict(broken)


def test_records_carry_the_pins(tmp_path: Path) -> None:
    rec = record()
    assert rec.to_dict()["registry"] is None
    rec.registry = RegistryPins(
        "127.0.0.1:5000/ns", {"env": ImagePin(pinned_ref("env", ENV), ENV, LOCAL["env"])}
    )
    assert ImageRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    bad = rec.to_dict()
    bad["registry"]["images"]["env"]["reference"] = "x/env:latest"
    path = tmp_path / "images.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"images.jsonl:1: not an image record"):
        read_image_records(path)
    t = task()
    assert t.image_reference() == INSTANCE and t.registry_pins() is None
    t.image["registry"] = RegistryPins(
        "r:1/ns", {"instance": ImagePin(pinned_ref("instance", INSTANCE), INSTANCE)}
    ).to_dict()
    assert t.image_reference() == pinned_ref("instance", INSTANCE)


# ---------------------------------------------------------------------------- push
def test_push_pins_each_record_and_keeps_the_rest(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.add(INSTANCE, LOCAL["instance"])
    engine.add(ENV, LOCAL["env"])
    engine.add(BASE, LOCAL["base"])
    engine.add(OTHER, "swe-forge.invalid/instance:o__r-2-xyz")
    second = task("o__r-2", id=OTHER, tag="swe-forge.invalid/instance:o__r-2-xyz")
    rejection = {"record_type": "rejection", "instance_id": "o__r-3", "reason": "flaky_test"}
    src = tmp_path / "tasks.jsonl"
    src.write_text("\n".join([task().to_json(), second.to_json(), json.dumps(rejection)]) + "\n")
    out = tmp_path / "pinned.jsonl"
    result = push_images(
        engine,
        src,
        Registry.parse("127.0.0.1:5000/ns"),
        out,
        only=["o__r-1"],
    )
    # The selected record's three images, each once, bases first.
    assert [p[1:] for p in engine.pushed] == [
        ("127.0.0.1:5000/ns/base", "bookworm-py3.11-123"),
        ("127.0.0.1:5000/ns/env", "py3.11-def"),
        ("127.0.0.1:5000/ns/instance", "o__r-1-abc"),
    ]
    assert [p[0] for p in engine.pushed] == [BASE, ENV, INSTANCE]
    lines = out.read_text().splitlines()
    first = TaskManifest.from_dict(json.loads(lines[0]))
    pins = first.registry_pins()
    assert pins is not None and pins.registry == "127.0.0.1:5000/ns"
    assert {k: (p.reference, p.id, p.local) for k, p in pins.images.items()} == {
        kind: (pinned_ref(kind, image_id), image_id, LOCAL[kind])
        for kind, image_id in (("instance", INSTANCE), ("env", ENV), ("base", BASE))
    }
    assert lines[1] == second.to_json()  # not selected: unchanged
    assert json.loads(lines[2]) == rejection
    assert result.summary()["images"] == 3 and result.records == 1


def test_push_refuses_an_image_that_is_not_here(tmp_path: Path) -> None:
    engine = FakeEngine()
    engine.add(ENV, LOCAL["env"])
    engine.add(BASE, LOCAL["base"])
    src = tmp_path / "images.jsonl"
    src.write_text(json.dumps(record().to_dict()) + "\n")
    with pytest.raises(InputError, match=r"the instance image .* is not on this engine") as err:
        push_images(engine, src, Registry.parse("r.io/ns"), tmp_path / "o.jsonl")
    assert err.value.exit_code == 4 and engine.pushed == []
    src.write_text(json.dumps({"record_type": "rejection", "instance_id": "x"}) + "\n")
    with pytest.raises(InputError, match="names no image"):
        push_images(engine, src, Registry.parse("r.io/ns"), tmp_path / "o.jsonl")


# ---------------------------------------------------------------------------- pull
def pinned_task(reference: str | None = None, pin_id: str = INSTANCE) -> TaskManifest:
    t = task()
    pin = ImagePin(reference or pinned_ref("instance", INSTANCE), pin_id, LOCAL["instance"])
    t.image["registry"] = RegistryPins("127.0.0.1:5000/ns", {"instance": pin}).to_dict()
    return t


def label(instance_id: str) -> dict[str, str]:
    return {f"{LABEL_PREFIX}.instance-id": instance_id}


def test_an_image_already_here_is_not_pulled() -> None:
    engine = FakeEngine()
    engine.add(INSTANCE)  # here by id, nameless (imported, or pulled by another tool)
    got = provide(engine, needs_of_task(pinned_task()))
    assert engine.pulled == [] and got.present == [INSTANCE]
    assert engine.names[LOCAL["instance"]] == INSTANCE  # named again


def test_a_missing_image_is_pulled_by_digest_and_checked() -> None:
    engine = FakeEngine()
    ref = pinned_ref("instance", INSTANCE)
    engine.registry[ref] = ImageInfo(INSTANCE, (), label("o__r-1"), 1, "")
    got = provide(engine, needs_of_task(pinned_task()))
    assert engine.pulled == [ref] and [r for r, _s in got.pulled] == [ref]
    assert engine.image(LOCAL["instance"]) is not None


def test_tampered_pins_are_refused() -> None:
    ref = pinned_ref("instance", INSTANCE)
    cases = {
        # the registry has no such digest
        "has no image": (FakeEngine(), pinned_task()),
        # the digest names another image (another task's)
        "the manifest pins": (
            FakeEngine(registry={ref: ImageInfo(OTHER, (), label("o__r-1"), 1, "")}),
            pinned_task(),
        ),
        # the right id, but labelled as another task's instance image
        "not of this task": (
            FakeEngine(registry={ref: ImageInfo(INSTANCE, (), label("o__r-2"), 1, "")}),
            pinned_task(),
        ),
    }
    for said, (engine, t) in cases.items():
        with pytest.raises(DigestError, match=said) as err:
            provide(engine, needs_of_task(t))
        assert err.value.exit_code == 16 and err.value.hint, said
        assert engine.image(LOCAL["instance"]) is None  # never named as the task's image
    # The pin and the manifest's own id disagree: refused before the registry is asked.
    with pytest.raises(DigestError, match="an edited manifest"):
        needs_of_task(pinned_task(pin_id=OTHER))
    bad = task()
    bad.image["registry"] = {"version": 1, "registry": "r", "images": {"instance": {"id": 1}}}
    with pytest.raises(DigestError, match="not valid"):
        needs_of_task(bad)


def test_an_unreachable_registry_is_a_registry_error() -> None:
    engine = FakeEngine(unreachable=True)
    with pytest.raises(RegistryError) as err:
        provide(engine, needs_of_task(pinned_task()))
    assert err.value.exit_code == 15


def test_unpinned_missing_images_are_left_to_the_stage() -> None:
    engine = FakeEngine()
    got = provide(engine, needs_of_task(task()))
    assert got.unpinned == [INSTANCE] and engine.pulled == []


def test_admit_needs_every_pinned_image_of_a_record() -> None:
    rec = record()
    rec.registry = RegistryPins(
        "127.0.0.1:5000/ns",
        {
            kind: ImagePin(pinned_ref(kind, image_id), image_id, LOCAL[kind])
            for kind, image_id in (("instance", INSTANCE), ("env", ENV), ("base", BASE))
        },
    )
    needs = needs_of_record(rec)
    assert [(n.kind, n.id) for n in needs] == [("instance", INSTANCE), ("env", ENV), ("base", BASE)]
    engine = FakeEngine()
    for need in needs:
        assert need.pin is not None
        labels = label("o__r-1") if need.kind == "instance" else {}
        engine.registry[need.pin.reference] = ImageInfo(need.id, (), labels, 1, "")
    provide(engine, needs)
    assert {engine.names[LOCAL[k]] for k in LOCAL} == {INSTANCE, ENV, BASE}
    rec.registry.images["env"] = ImagePin(pinned_ref("env", OTHER), OTHER)
    with pytest.raises(DigestError, match="an edited record"):
        needs_of_record(rec)
