"""Image names that can never be pulled from Docker Hub (or anywhere) by accident."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from swe_forge.ecosystems.python.image import env_tag
from swe_forge.engine import LOCAL_REGISTRY, local_name
from swe_forge.images.base import DISTROS, BaseRecipe
from swe_forge.images.instance import instance_tag

PACKAGE = Path(__file__).resolve().parents[2] / "swe_forge"


def registry_of(name: str) -> str:
    """The registry a Docker client pulls ``name`` from (docker/distribution's rule: the
    first component is a registry host when it has a dot or a port, or is localhost)."""
    first, sep, _rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def test_the_rule_itself() -> None:
    # The names swe-forge gave before: a pull would have asked Docker Hub for them.
    assert registry_of("swe-forge/instance:x") == "docker.io"
    assert registry_of("python:3.11-slim") == "docker.io"
    assert registry_of("127.0.0.1:5000/ns/instance@sha256:ab") == "127.0.0.1:5000"
    assert registry_of("localhost/x:y") == "localhost"


def names() -> list[str]:
    out = []
    for distro in DISTROS:
        recipe = BaseRecipe.for_distro(distro)
        out += [recipe.tag, recipe.build().tag]
    env = env_tag(out[0], "3.11", "0" * 64)
    out += [env, instance_tag(env, "owner__repo-12", "a" * 40, True)]
    return out


@pytest.mark.parametrize("name", names())
def test_every_local_name_has_a_registry_that_cannot_resolve(name: str) -> None:
    assert registry_of(name) == LOCAL_REGISTRY
    # RFC 2606 reserves .invalid: no DNS server answers for it, so a pull fails.
    assert LOCAL_REGISTRY.endswith(".invalid")
    # A valid reference: lowercase repository, tag of at most 128 allowed characters.
    repo, _, tag = name.rpartition(":")
    assert re.fullmatch(r"[a-z0-9.-]+(/[a-z0-9._-]+)+", repo), repo
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", tag), tag


def test_kinds_keep_their_names() -> None:
    # `images ls`, `prune` and the audit go by labels; people go by these names.
    assert local_name("base") == "swe-forge.invalid/base"
    assert [registry_of(n) for n in names()] == [LOCAL_REGISTRY] * len(names())


def test_no_unqualified_image_name_is_left_in_the_package() -> None:
    # A name such as "swe-forge/env:..." written by hand anywhere in the code would resolve
    # to Docker Hub again; the only way to name an image is local_name().
    pattern = re.compile(r"""["']swe-forge/(base|env|instance|build)\b""")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
