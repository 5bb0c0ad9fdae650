"""Where an image was pushed, pinned by digest."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import asdict
from typing import Any

from pydantic.dataclasses import dataclass

REGISTRY_PINS_VERSION = 1
#: ``host[:port]/path/name@sha256:<64 hex>``: a reference a registry can only answer with one
#: content (the digest is the hash of the image's manifest). The first component must be a
#: registry host (a dot, a port, or localhost): without one the engine would ask Docker Hub.
_PINNED = re.compile(
    r"^(?:localhost(?::[0-9]+)?|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?|[A-Za-z0-9-]+:[0-9]+)"
    r"(?:/[a-z0-9._-]+)+@sha256:[0-9a-f]{64}$"
)
_IMAGE_ID = re.compile(r"^sha256:[0-9a-f]{64}$")
IMAGE_KINDS = ("instance", "env", "base")


@dataclass(frozen=True)
class ImagePin:
    """One image in a registry, pinned by digest.

    ``reference`` is ``registry/ns/name@sha256:<manifest digest>`` (what is pulled); ``id`` is
    the image id a pull must give (the digest of the image's configuration, which names every
    layer's content); ``local`` is the local name it had when it was pushed (given back to it
    after a pull, so that ``images ls``, ``prune`` and the audit find it as if built here).
    """

    reference: str
    id: str
    local: str = ""

    @property
    def digest(self) -> str:
        """The manifest digest (``sha256:...``) of :attr:`reference`."""
        return self.reference.rpartition("@")[2]

    @property
    def repository(self) -> str:
        """:attr:`reference` without its digest (``registry/ns/name``)."""
        return self.reference.rpartition("@")[0]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImagePin:
        """Read a pin; raises ValueError when the reference is not pinned by a digest or the
        id is not an image id."""
        ref, image_id = str(data["reference"]), str(data["id"])
        if not _PINNED.match(ref):
            raise ValueError(f"{ref!r} is not a reference pinned by digest (name@sha256:<hex>)")
        if not _IMAGE_ID.match(image_id):
            raise ValueError(f"{image_id!r} is not an image id (sha256:<hex>)")
        return cls(reference=ref, id=image_id, local=str(data.get("local") or ""))


@dataclass(frozen=True)
class RegistryPins:
    """Where a task's images live in a registry (``swe-forge images push``).

    An optional block with its own ``version`` (``image.registry`` of a task manifest,
    ``registry`` of an image record): a reader that does not know it ignores it, and a record
    written before it existed reads as None. ``registry`` is the ``HOST[:PORT]/NAMESPACE`` the
    images went to; ``images`` maps a kind (instance, env, base) to its pin.
    """

    registry: str
    images: dict[str, ImagePin]
    version: int = REGISTRY_PINS_VERSION

    @property
    def instance(self) -> ImagePin | None:
        """The pin of the instance image (the one the verifier runs)."""
        return self.images.get("instance")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (kinds in a fixed order)."""
        return {
            "version": self.version,
            "registry": self.registry,
            "images": {k: asdict(self.images[k]) for k in sorted(self.images)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegistryPins:
        """Inverse of :meth:`to_dict`; refuses a version this swe-forge does not know, an
        unknown kind, and a reference that is not pinned by digest (ValueError)."""
        version = data.get("version", REGISTRY_PINS_VERSION)
        if version != REGISTRY_PINS_VERSION:
            raise ValueError(f"unsupported registry pins version {version}")
        images = {}
        for kind, pin in dict(data.get("images") or {}).items():
            if kind not in IMAGE_KINDS:
                raise ValueError(f"unknown image kind {kind!r} in registry pins")
            images[kind] = ImagePin.from_dict(pin)
        return cls(registry=str(data["registry"]), images=images)


#: Version of :class:`ImageRecord` (``images build``'s output).
IMAGE_RECORD_SCHEMA_VERSION = 1


@dataclasses.dataclass
class ImageRecord:
    """The images of one candidate (or why they could not be built)."""

    instance_id: str
    repo: str
    base_commit: str
    status: str = "ok"  # "ok" | "failed"
    reason: str = ""  # a machine-readable failure reason
    detail: str = ""
    python: str = ""
    project_name: str | None = None
    base_image: str = ""
    env_image: str = ""
    env_image_id: str = ""
    instance_image: str = ""
    instance_image_id: str = ""
    lock_digest: str = ""
    recipe_digest: str = ""
    recipe: dict[str, Any] = dataclasses.field(default_factory=dict)
    scrubbed_commit: str = ""
    reused: dict[str, bool] = dataclasses.field(default_factory=dict)
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)
    #: Wheels of the wheelhouse: "total", "from_store" (not downloaded), "sdists_built".
    wheels: dict[str, int] = dataclasses.field(default_factory=dict)
    logs: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Where the three images were pushed, pinned by digest (``images push``); None before.
    registry: RegistryPins | None = None
    schema_version: int = IMAGE_RECORD_SCHEMA_VERSION
    record_type: str = "images"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        data = dataclasses.asdict(self)
        data["registry"] = self.registry.to_dict() if self.registry else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImageRecord:
        """Inverse of :meth:`to_dict` (raises ValueError on a malformed ``registry`` block)."""
        known = {f for f in cls.__dataclass_fields__}
        fields = {k: v for k, v in data.items() if k in known}
        if fields.get("registry"):
            fields["registry"] = RegistryPins.from_dict(fields["registry"])
        return cls(**fields)
