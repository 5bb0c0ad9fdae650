"""Images that leave this machine: pushed to a registry and pulled back by digest, or carried
as archives.

- :func:`push_images` pushes the base, env and instance images named by an images or tasks
  file to ``HOST[:PORT]/NAMESPACE/<kind>`` and writes the file again with each record's
  :class:`~swe_forge.records.RegistryPins`: ``registry/ns/<kind>@sha256:<digest>`` and the
  image id a pull must give.
- :func:`provide` makes the images a stage needs present: what is already here (by image id)
  is used as it is and the registry is not asked; what is missing is pulled *by digest*, and
  refused (:class:`~swe_forge.errors.DigestError`) unless it is the pinned image id and, for
  an instance image, the image of that task.
- :func:`export_images` and :func:`import_images` carry the same images as one OCI archive
  (:mod:`swe_forge.images.archive`) to machines that reach no registry; ids are kept.

The Docker engine is only reached through :class:`~swe_forge.engine.Engine`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge.engine import LABEL_PREFIX, Engine
from swe_forge.errors import DigestError, InputError, UsageError
from swe_forge.images.archive import ArchivedImage, read_archive, write_archive
from swe_forge.jsonl import read_jsonl, write_jsonl
from swe_forge.progress import NullReporter, Reporter
from swe_forge.records import ImagePin, ImageRecord, RegistryPins, TaskManifest

_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_HOST = re.compile(r"^[A-Za-z0-9.-]+(:[0-9]+)?$")
_REPUSH = "run `swe-forge images push` again, or use the file it wrote"


@dataclass(frozen=True)
class Registry:
    """Where images are pushed: a registry host and a namespace (``HOST[:PORT]/NAMESPACE``).

    The host is required: a name whose first component is not a host (``myname/images``)
    would mean Docker Hub to the engine, the very accident local names are kept from.
    """

    host: str
    namespace: str

    @classmethod
    def parse(cls, text: str) -> Registry:
        """Read ``HOST[:PORT][/NAMESPACE...]``.

        Raises:
            UsageError: no host, or a namespace Docker would refuse.
        """
        value = text.strip().removeprefix("https://").removeprefix("http://").strip("/")
        host, _, namespace = value.partition("/")
        is_host = "." in host or ":" in host or host == "localhost"
        if not value or not is_host or not _HOST.match(host):
            raise UsageError(
                f"--registry {text!r} does not start with a registry host",
                hint="give HOST[:PORT]/NAMESPACE, e.g. 127.0.0.1:5000/swe-forge "
                "(scripts/ensure-registry.sh starts one there)",
            )
        if namespace and not all(_COMPONENT.match(c) for c in namespace.split("/")):
            raise UsageError(
                f"--registry {text!r}: the namespace must be lowercase letters, digits and "
                "separators (. _ -), in /-separated parts",
                hint="e.g. 127.0.0.1:5000/swe-forge",
            )
        return cls(host, namespace)

    def __str__(self) -> str:
        return f"{self.host}/{self.namespace}" if self.namespace else self.host

    def repository(self, kind: str) -> str:
        """The repository images of one kind go to: ``HOST/NAMESPACE/<kind>``."""
        return f"{self}/{kind}"


@dataclass(frozen=True)
class ImageRef:
    """An image a record names: its kind, its local name, and its id ("" when the record does
    not say: base images are named by their recipe's hash only)."""

    kind: str
    local: str
    id: str = ""


def refs_of_record(rec: ImageRecord) -> list[ImageRef]:
    """The images of an image record (none when its build failed)."""
    if rec.status != "ok":
        return []
    out = [ImageRef("instance", rec.instance_image, rec.instance_image_id)]
    if rec.env_image:
        out.append(ImageRef("env", rec.env_image, rec.env_image_id))
    if rec.base_image:
        out.append(ImageRef("base", rec.base_image))
    return out


def refs_of_task(task: TaskManifest) -> list[ImageRef]:
    """The images of a task manifest's ``image`` block."""
    image = task.image
    out = [ImageRef("instance", str(image.get("tag") or ""), str(image.get("id") or ""))]
    if image.get("env"):
        out.append(ImageRef("env", str(image["env"]), str(image.get("env_id") or "")))
    if image.get("base"):
        out.append(ImageRef("base", str(image["base"])))
    return out


@dataclass
class _Line:
    """One line of an images or tasks file, and the typed record it holds (if any)."""

    data: dict[str, Any]
    record: ImageRecord | TaskManifest | None

    @property
    def refs(self) -> list[ImageRef]:
        if isinstance(self.record, ImageRecord):
            return refs_of_record(self.record)
        if isinstance(self.record, TaskManifest):
            return refs_of_task(self.record)
        return []

    @property
    def instance_id(self) -> str:
        return str(self.data.get("instance_id") or "")

    def with_pins(self, pins: RegistryPins) -> str:
        if isinstance(self.record, ImageRecord):
            self.record.registry = pins
            return json.dumps(self.record.to_dict(), sort_keys=True)
        assert isinstance(self.record, TaskManifest)
        self.record.image = {**self.record.image, "registry": pins.to_dict()}
        return self.record.to_json()

    def unchanged(self) -> str:
        # As the stage that wrote the line writes it.
        if isinstance(self.record, ImageRecord):
            return json.dumps(self.record.to_dict(), sort_keys=True)
        if isinstance(self.record, TaskManifest):
            return self.record.to_json()
        return json.dumps(self.data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _read_lines(path: Path) -> list[_Line]:
    """Every line of an images file (``images build``) or a tasks file (``admit``); lines of
    other kinds (rejections) are kept and passed through.

    Raises:
        InputError: a record cannot be read, or the file names no image at all.
    """
    lines = []
    for lineno, data in enumerate(read_jsonl(path), 1):
        kind = data.get("record_type")
        record: ImageRecord | TaskManifest | None = None
        try:
            if kind == "images":
                record = ImageRecord.from_dict(data)
            elif kind == "task" or (kind is None and isinstance(data.get("image"), dict)):
                record = TaskManifest.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: not a {kind} record ({exc})") from exc
        lines.append(_Line(data, record))
    if not any(line.refs for line in lines):
        raise InputError(
            f"{path} names no image",
            hint="give an images.jsonl from `images build` or a tasks.jsonl from `admit` "
            "(--format swe-forge: SWE-bench's format has no image block)",
        )
    return lines


def _selected(lines: list[_Line], only: Iterable[str], path: Path) -> set[int]:
    wanted = set(only)
    chosen = {i for i, line in enumerate(lines) if line.refs}
    if wanted:
        chosen = {i for i in chosen if lines[i].instance_id in wanted}
        missing = wanted - {lines[i].instance_id for i in chosen}
        if missing:
            raise InputError(f"no images for {', '.join(sorted(missing))} in {path}")
    return chosen


def _here(engine: Engine, ref: ImageRef, where: str) -> str:
    """The id of ``ref`` on this engine (checked against the record's id when it has one).

    Raises:
        InputError: the image is not here.
        DigestError: the local name is another image than the record's id.
    """
    if ref.id:
        if engine.image(ref.id) is None:
            raise InputError(
                f"{where}: the {ref.kind} image {ref.id} ({ref.local}) is not on this engine "
                f"({engine.host})",
                hint="run this where the images were built, or `swe-forge images import` them",
            )
        return ref.id
    info = engine.image(ref.local)
    if info is None:
        raise InputError(
            f"{where}: the {ref.kind} image {ref.local} is not on this engine ({engine.host})",
            hint="run this where the images were built, or `swe-forge images import` them",
        )
    return info.id


# ---------------------------------------------------------------------------------- push
@dataclass
class Pushed:
    """One image pushed: where it went and how long it took."""

    kind: str
    local: str
    pin: ImagePin
    seconds: float
    layers: dict[str, int] = field(default_factory=dict)


@dataclass
class PushResult:
    """What ``images push`` did."""

    registry: str
    records: int = 0
    pushed: list[Pushed] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Counts and every pinned reference (deterministic order)."""
        return {
            "registry": self.registry,
            "records": self.records,
            "images": len(self.pushed),
            "pinned": sorted(
                ({"kind": p.kind, "local": p.local, **p.pin.__dict__} for p in self.pushed),
                key=lambda d: (d["kind"], d["local"], d["reference"]),
            ),
            "seconds": round(self.seconds, 2),
        }


def push_images(
    engine: Engine,
    path: Path,
    registry: Registry,
    output: Path,
    *,
    only: Iterable[str] = (),
    reporter: Reporter | None = None,
) -> PushResult:
    """Push the base, env and instance images named by ``path`` (an images or tasks file) to
    ``registry`` and write the file to ``output`` with each record's pins.

    Each image is pushed once (records share env and base images), by its recorded id, as
    ``registry/<kind>:<its local tag>``; the digest the registry answers is checked against
    the image (a pull of ``repository@digest`` must be that id). Records of other instances
    (``only``), failed builds and other lines are written back unchanged.

    Raises:
        InputError: the file names no image, or an image is not on this engine.
        RegistryError: the registry cannot be reached or refused a push.
        DigestError: the digest the registry answered does not name the pushed image.
    """
    start = time.perf_counter()
    reporter = reporter or NullReporter()
    lines = _read_lines(path)
    chosen = _selected(lines, only, path)
    todo: dict[str, ImageRef] = {}  # image id -> the first record's name for it
    ids: dict[tuple[int, str], str] = {}
    for i in sorted(chosen):
        for ref in lines[i].refs:
            image_id = _here(engine, ref, f"{path}: {lines[i].instance_id}")
            ids[(i, ref.kind)] = image_id
            todo.setdefault(image_id, ref)
    result = PushResult(str(registry), records=len(chosen))
    pins: dict[str, ImagePin] = {}
    # Bases first, then envs, then instances: each push finds the layers below it there.
    order = {"base": 0, "env": 1, "instance": 2}
    reporter.start("push", len(todo))
    try:
        for image_id, ref in sorted(todo.items(), key=lambda kv: (order[kv[1].kind], kv[1].local)):
            t = time.perf_counter()
            layers: dict[str, int] = {}

            def count(line: str, layers: dict[str, int] = layers) -> None:
                status = line.partition(": ")[2]
                said = "pushed" if status == "Pushed" else "already there"
                said = "mounted" if status.startswith("Mounted") else said
                layers[said] = layers.get(said, 0) + 1

            repository = registry.repository(ref.kind)
            tag = ref.local.rpartition(":")[2] if ":" in ref.local else image_id[7:19]
            digest = engine.push(image_id, repository, tag, progress=count)
            pin = ImagePin(f"{repository}@{digest}", image_id, ref.local)
            pins[image_id] = pin
            seconds = time.perf_counter() - t
            result.pushed.append(Pushed(ref.kind, ref.local, pin, seconds, layers))
            done = ", ".join(f"{n} {said}" for said, n in sorted(layers.items()))
            reporter.note(
                f"{ref.kind} {ref.local} -> {pin.reference} "
                f"({sum(layers.values())} layers: {done}; {seconds:.1f}s)"
            )
            reporter.advance()
    finally:
        reporter.finish()
    out = []
    for i, line in enumerate(lines):
        if i not in chosen:
            out.append(line.unchanged())
            continue
        kinds = {ref.kind: pins[ids[(i, ref.kind)]] for ref in line.refs}
        out.append(line.with_pins(RegistryPins(str(registry), kinds)))
    write_jsonl(output, out)
    result.seconds = time.perf_counter() - start
    return result


# ---------------------------------------------------------------------------------- pull
@dataclass(frozen=True)
class Need:
    """An image a stage needs on this engine: whose it is (for messages and the label check),
    its kind, the id it must have, and the pin to pull it by (None: not pushed)."""

    owner: str
    kind: str
    id: str
    pin: ImagePin | None
    local: str = ""


def needs_of_task(task: TaskManifest) -> list[Need]:
    """What ``verify`` needs of a task: its instance image (env and base are its layers).

    Raises:
        DigestError: the ``image.registry`` block is malformed, or pins another image than
            the manifest's own ``image.id``.
    """
    try:
        pins = task.registry_pins()
    except (KeyError, TypeError, ValueError) as exc:
        raise DigestError(
            f"{task.instance_id}: the manifest's image.registry block is not valid ({exc})",
            hint=_REPUSH,
        ) from exc
    image_id = str(task.image.get("id") or "")
    pin = pins.instance if pins else None
    if pin is not None and pin.id != image_id:
        raise DigestError(
            f"{task.instance_id}: the manifest pins the image {pin.id} in the registry but "
            f"names {image_id} as its image: refused (an edited manifest?)",
            hint=_REPUSH,
        )
    return [Need(task.instance_id, "instance", image_id, pin, str(task.image.get("tag") or ""))]


def needs_of_record(rec: ImageRecord) -> list[Need]:
    """What ``admit`` needs of an image record: every image it names (the gates run the
    instance, the audit reads the base).

    Raises:
        DigestError: a pin names another image than the record's own id for that kind.
    """
    pins = rec.registry.images if rec.registry else {}
    out = []
    for ref in refs_of_record(rec):
        pin = pins.get(ref.kind)
        if pin is not None and ref.id and pin.id != ref.id:
            raise DigestError(
                f"{rec.instance_id}: the record pins the {ref.kind} image {pin.id} in the "
                f"registry but names {ref.id}: refused (an edited record?)",
                hint=_REPUSH,
            )
        image_id = ref.id or (pin.id if pin else "")
        out.append(Need(rec.instance_id, ref.kind, image_id, pin, ref.local))
    return out


@dataclass
class Provided:
    """What :func:`provide` did: images already here, images pulled (with seconds), and
    images missing that nothing pins (the stage reports those as it always has)."""

    present: list[str] = field(default_factory=list)
    pulled: list[tuple[str, float]] = field(default_factory=list)
    unpinned: list[str] = field(default_factory=list)


def provide(engine: Engine, needs: Iterable[Need], reporter: Reporter | None = None) -> Provided:
    """Make the needed images present: use what is here, pull the rest by digest.

    An image already on this engine (by id: a hash of its content) is used as it is, and the
    registry is not asked. A missing one is pulled as ``repository@sha256:<digest>``: the
    engine only accepts the content that digest names, and the image it gives must have the
    pinned id and, for an instance image, be labelled with the task's instance id. The
    pulled image gets back its local name (when that name is free).

    Raises:
        DigestError: the registry has no image with the pinned digest, or the image it has is
            not the pinned one (another id, another task's).
        RegistryError: the registry cannot be reached or refused the pull.
    """
    reporter = reporter or NullReporter()
    out = Provided()
    missing: list[Need] = []
    for need in dict.fromkeys(needs):  # the same need once, in order
        if need.id and engine.image(need.id) is not None:
            _name(engine, need)
            out.present.append(need.id)
        elif need.pin is None:
            out.unpinned.append(need.id or need.local)
        else:
            missing.append(need)
    if not missing:
        return out
    reporter.start("pull", len(missing))
    try:
        for need in sorted(missing, key=lambda n: (n.pin.reference if n.pin else "", n.owner)):
            assert need.pin is not None
            reference = need.pin.reference
            if need.id and engine.image(need.id) is not None:  # another need brought it
                _name(engine, need)
                out.present.append(need.id)
                reporter.advance()
                continue
            t = time.perf_counter()
            layers = [0]

            def count(_line: str, layers: list[int] = layers) -> None:
                layers[0] += 1

            reporter.note(f"{need.owner}: pulling the {need.kind} image {reference}")
            info = engine.pull(reference, progress=count)
            if info is None:
                raise DigestError(
                    f"{need.owner}: the registry has no image {reference} (a digest never "
                    "pushed there: an edited manifest, or an image deleted from the registry)",
                    hint=_REPUSH,
                )
            if info.id != need.id:
                raise DigestError(
                    f"{need.owner}: {reference} is the image {info.id}, the manifest pins "
                    f"{need.id}: refused",
                    hint=_REPUSH,
                )
            owner_label = info.labels.get(f"{LABEL_PREFIX}.instance-id")
            if need.kind == "instance" and owner_label != need.owner:
                raise DigestError(
                    f"{need.owner}: {reference} is the instance image of {owner_label!r}, "
                    "not of this task: refused",
                    hint=_REPUSH,
                )
            _name(engine, need)
            seconds = time.perf_counter() - t
            out.pulled.append((reference, seconds))
            reporter.note(
                f"{need.owner}: {need.kind} image {info.id[:19]} verified "
                f"({layers[0]} layers, {seconds:.1f}s)"
            )
            reporter.advance()
    finally:
        reporter.finish()
    return out


def _name(engine: Engine, need: Need) -> None:
    """Give an image its local name back when that name is free (a pull by digest leaves it
    nameless; ``images ls``, ``prune`` and the audit find it by that name)."""
    if need.local and engine.image(need.local) is None:
        engine.tag(need.id, need.local)


# ---------------------------------------------------------------------------------- archives
def export_images(
    engine: Engine,
    path: Path,
    dest: Path,
    *,
    only: Iterable[str] = (),
    reporter: Reporter | None = None,
) -> list[ArchivedImage]:
    """Write the images named by ``path`` (an images or tasks file) into one OCI archive.

    Every image is saved under its local name; the archive's image ids are checked against
    the ids the records pin.

    Raises:
        InputError: the file names no image, or an image is not on this engine.
        DigestError: a local name is another image than the record pins.
    """
    reporter = reporter or NullReporter()
    lines = _read_lines(path)
    chosen = _selected(lines, only, path)
    names: dict[str, str] = {}  # local name -> id
    for i in sorted(chosen):
        for ref in lines[i].refs:
            where = f"{path}: {lines[i].instance_id}"
            image_id = _here(engine, ref, where)
            named = engine.image(ref.local)
            if named is None:
                engine.tag(image_id, ref.local)  # the id is here under another name
            elif named.id != image_id:
                raise DigestError(
                    f"{where}: {ref.local} is the image {named.id} on this engine, the record "
                    f"pins {image_id}",
                    hint="rebuild (`images build`) or import the record's own images",
                )
            names[ref.local] = image_id
    reporter.note(f"saving {len(names)} image(s) into {dest}")
    images = write_archive(engine.save(sorted(names)), dest, progress=reporter.note)
    got = {name: image.id for image in images for name in image.names}
    wrong = sorted(n for n, i in names.items() if got.get(n) != i)
    if wrong:
        dest.unlink(missing_ok=True)
        raise DigestError(f"the engine saved other images than pinned for {', '.join(wrong)}")
    return images


def import_images(
    engine: Engine, archive: Path, reporter: Reporter | None = None
) -> list[ArchivedImage]:
    """Load an archive (``images export``, or any ``docker save`` output) into this engine and
    check that every image has the id the archive's configuration gives and every name points
    at it.

    Raises:
        InputError: not an image archive.
        DockerError: the engine refused it.
        DigestError: an image is missing after the load, or a name points elsewhere.
    """
    reporter = reporter or NullReporter()
    images = read_archive(archive)
    reporter.note(f"loading {len(images)} image(s) from {archive}")
    with archive.open("rb") as fh:
        engine.load(fh)
    for image in images:
        if engine.image(image.id) is None:
            raise DigestError(f"{archive}: the image {image.id} is not here after the load")
        for name in image.names:
            info = engine.image(name)
            if info is None or info.id != image.id:
                raise DigestError(
                    f"{archive}: {name} is {info.id if info else 'missing'} after the load, "
                    f"the archive holds {image.id}"
                )
    return images
