"""Licence identification and the allowlist policy."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from swe_forge.config import load_config
from swe_forge.mining.license import (
    IdentityCache,
    LicenseJudge,
    LicensePolicy,
    is_license_file,
    licence_body,
)

DATA = Path(__file__).resolve().parents[2] / "swe_forge" / "example" / "data"
MIT = (DATA / "MIT.txt").read_text()
GPL = (DATA / "GPL-3.0.txt").read_text()


class FakeTree:
    """A one-commit tree: name -> bytes."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.blobs = {hashlib.sha1(v).hexdigest(): v for v in files.values()}
        self.root = {n: (hashlib.sha1(v).hexdigest(), 0o100644) for n, v in files.items()}
        self.reads = 0

    def list_root(self, commit: str) -> dict[str, tuple[str, int]]:
        return {n: e for n, e in self.root.items() if "/" not in n}

    def list_dir(self, commit: str, d: str) -> dict[str, tuple[str, int]]:
        return {n.split("/", 1)[1]: e for n, e in self.root.items() if n.startswith(d + "/")}

    def read_blob(self, blob: str) -> bytes:
        self.reads += 1
        return self.blobs[blob]


@pytest.fixture(scope="module")
def policy() -> LicensePolicy:
    return LicensePolicy.load(Path(load_config().license.allowlist_file))


def judge_for(
    files: dict[str, bytes], policy: LicensePolicy, **overrides: object
) -> tuple[LicenseJudge, FakeTree]:
    import dataclasses

    cfg = dataclasses.replace(load_config().license, **overrides)  # type: ignore[arg-type]
    tree = FakeTree(files)
    return LicenseJudge(
        cfg, policy, list_root=tree.list_root, list_dir=tree.list_dir, read_blob=tree.read_blob
    ), tree


@pytest.mark.parametrize(
    ("expr", "ok"),
    [
        ("MIT", True),
        ("MIT OR GPL-3.0-only", True),
        ("MIT AND GPL-3.0-only", False),
        ("GPL-3.0-or-later", False),
        ("(MIT OR GPL-2.0-only) AND Apache-2.0", True),
        ("(MIT AND GPL-2.0-only) OR LGPL-3.0-only", False),
        ("Apache-2.0 WITH LLVM-exception", True),
        ("GPL-2.0-only WITH Classpath-exception-2.0", False),
        ("LicenseRef-unknown", False),
        ("BSD-3-Clause AND ISC AND 0BSD AND PSF-2.0 AND Unlicense AND Zlib", True),
    ],
)
def test_policy_expressions(policy: LicensePolicy, expr: str, ok: bool) -> None:
    judge, _ = judge_for({}, policy)
    assert judge.allowed(expr) is ok


def test_mit_file_is_allowed(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"LICENSE": MIT.encode()}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "MIT"
    assert verdict.evidence[0].source == "file" and verdict.evidence[0].score > 0.9


def test_gpl_file_is_not_permissive(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"COPYING": GPL.encode()}, policy)
    verdict = judge.judge("c1")
    assert not verdict.allowed and verdict.reason == "license_not_permissive"
    assert verdict.expression.startswith("GPL-3.0")


def test_no_licence_is_unknown(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"README.md": b"hello"}, policy)
    verdict = judge.judge("c1")
    assert not verdict.allowed and verdict.reason == "license_unknown"


def test_unrecognisable_text_is_unknown(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"LICENSE": b"You may do whatever the author feels like today.\n"}, policy)
    verdict = judge.judge("c1")
    assert verdict.reason == "license_unknown"


def test_binary_licence_is_unreadable(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"LICENSE": b"\x00\x01\x02MIT"}, policy)
    verdict = judge.judge("c1")
    assert not verdict.allowed and verdict.reason == "license_unreadable"
    assert "binary" in verdict.detail


def test_metadata_or_expression_wins_when_it_covers_the_files(policy: LicensePolicy) -> None:
    pyproject = b'[project]\nname = "x"\nlicense = "MIT OR GPL-3.0-only"\n'
    judge, _ = judge_for({"LICENSE": MIT.encode(), "pyproject.toml": pyproject}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "MIT OR GPL-3.0-only"


def test_metadata_conflict_is_conservative(policy: LicensePolicy) -> None:
    setup_cfg = b"[metadata]\nname = x\nlicense = GPL-3.0-only\n"
    judge, _ = judge_for({"LICENSE": MIT.encode(), "setup.cfg": setup_cfg}, policy)
    verdict = judge.judge("c1")
    assert not verdict.allowed and verdict.expression == "MIT AND GPL-3.0-only"


def test_classifiers_are_a_second_signal(policy: LicensePolicy) -> None:
    setup_py = b'setup(name="x", classifiers=["License :: OSI Approved :: MIT License"])\n'
    judge, _ = judge_for({"setup.py": setup_py}, policy)
    assert judge.judge("c1").reason == "license_unknown"  # metadata alone is not enough by default
    judge, _ = judge_for({"setup.py": setup_py}, policy, accept_metadata_only=True)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "MIT"


def test_dual_licence_files(policy: LicensePolicy) -> None:
    judge, _ = judge_for(
        {"LICENSE-MIT": MIT.encode(), "LICENSES/GPL-3.0.txt": GPL.encode()}, policy
    )
    verdict = judge.judge("c1")
    assert not verdict.allowed and "AND" in verdict.expression


def test_identification_is_cached_by_blob(policy: LicensePolicy) -> None:
    judge, tree = judge_for({"LICENSE": MIT.encode()}, policy)
    judge.judge("c1")
    reads = tree.reads
    judge.judge("c2")
    assert tree.reads == reads


@pytest.mark.parametrize(
    "name",
    [
        "LICENSE",
        "LICENCE.md",
        "license.txt",
        "COPYING",
        "LICENSE-MIT",
        "UNLICENSE",
        "COPYING.LESSER",
    ],
)
def test_licence_file_names(name: str) -> None:
    assert is_license_file(name)


@pytest.mark.parametrize("name", ["licenses.py", "README", "copyright_check.py", "LICENSEE"])
def test_not_licence_file_names(name: str) -> None:
    assert not is_license_file(name)


def test_variant_without_its_word_is_the_base_licence(
    policy: LicensePolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # askalono names the Apache-2.0 text without its appendix "Pixar"; the word decides.
    import swe_forge.mining.license as lic

    monkeypatch.setattr(lic, "identify_text", lambda text: ("Pixar", 0.983))
    judge, _ = judge_for({"LICENSE": b"Apache License\nVersion 2.0, January 2004\n..."}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "Apache-2.0"
    judge, _ = judge_for({"LICENSE": b"Modified Apache 2.0 License ... Pixar ..."}, policy)
    assert judge.judge("c1").expression == "Pixar"


def test_unknown_detail_marks_weak_matches(policy: LicensePolicy) -> None:
    judge, _ = judge_for({"LICENSE": b"You may do whatever the author feels like today.\n"}, policy)
    assert "unidentified (best" in judge.judge("c1").detail


MIT_BODY = (
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this "
    'software and associated documentation files (the "Software"), to deal in the Software '
    "without restriction, including without limitation the rights to use, copy, modify, merge, "
    "publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons "
    "to whom the Software is furnished to do so, subject to the following conditions:\n"
)


def test_licence_body_drops_only_dated_copyright_notices() -> None:
    text = (
        "MIT License\n\nCopyright (c) 2019-2024 Ada Lovelace\n(c) 2020 Bob\n© 2021 Carol\n"
        "  copyright 1999 Dan\ncopyright license to reproduce, in the sense of clause 2\n"
        "Copyright [yyyy] [name of copyright owner]\n"
    )
    body = licence_body(text)
    assert "Ada" not in body and "Bob" not in body and "Carol" not in body and "Dan" not in body
    # Lines of a licence's own text (no year) stay, even when they start with "copyright".
    assert "copyright license to reproduce" in body
    assert "Copyright [yyyy] [name of copyright owner]" in body
    assert body.startswith("MIT License\n")


def test_same_licence_body_is_identified_once(
    policy: LicensePolicy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import swe_forge.mining.license as lic

    seen: list[str] = []

    def identify(text: str) -> tuple[str, float]:
        seen.append(text)
        return ("MIT", 0.99)

    monkeypatch.setattr(lic, "identify_text", identify)
    cache = IdentityCache(tmp_path / "ids.json")
    verdicts = []
    for holder in ("Copyright (c) 2015 Ada", "Copyright (c) 2016-2024 Bob and others"):
        tree = FakeTree({"LICENSE": f"MIT License\n\n{holder}\n\n{MIT_BODY}".encode()})
        judge = LicenseJudge(
            load_config().license,
            policy,
            list_root=tree.list_root,
            list_dir=tree.list_dir,
            read_blob=tree.read_blob,
            identity_cache=cache,
        )
        verdicts.append(judge.judge("c1"))
    assert len(seen) == 1 and "Ada" not in seen[0]
    assert [v.expression for v in verdicts] == ["MIT", "MIT"]
    # The cache on disk serves a later run without askalono.
    cache.save()
    assert len(IdentityCache(tmp_path / "ids.json").data) == 1


def _holder(text: str, holder: str, year: int) -> str:
    # The example's MIT text with its notice replaced: another holder, another year.
    lines = [ln for ln in text.splitlines() if not ln.lower().startswith("copyright")]
    return f"{holder}\nCopyright (c) {year} {holder}\n" + "\n".join(lines) + "\n"


def test_a_file_of_several_permissive_texts_is_their_licence(policy: LicensePolicy) -> None:
    # A fork keeps its upstream's notice and text beside its own: three MIT texts in one file
    # match no template as a whole, each part does.
    text = "\n\n".join(_holder(MIT, f"Holder {i}", 2010 + i) for i in range(3))
    judge, _ = judge_for({"LICENSE": text.encode()}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "MIT", verdict.detail
    assert verdict.evidence[0].score >= 0.9


def test_a_copyleft_part_keeps_the_file_refused(policy: LicensePolicy) -> None:
    text = _holder(MIT, "Holder", 2015) + "\n\nCopyright (C) 2007 Someone Else\n" + GPL
    judge, _ = judge_for({"LICENSE": text.encode()}, policy)
    verdict = judge.judge("c1")
    assert not verdict.allowed, verdict.expression
    assert verdict.reason in ("license_not_permissive", "license_unknown")


@pytest.mark.parametrize(
    ("name", "text", "expression"),
    [
        ("Cargo.toml", b'[package]\nname = "x"\nlicense = "MIT OR GPL-3.0-only"\n', None),
        # Cargo's old "/" spelling of OR.
        ("Cargo.toml", b'[package]\nname = "x"\nlicense = "MIT/GPL-3.0-only"\n', None),
        # license.workspace = true: the workspace's own table says it.
        (
            "Cargo.toml",
            b'[package]\nname = "x"\nlicense.workspace = true\n'
            b'[workspace.package]\nlicense = "MIT OR GPL-3.0-only"\n',
            None,
        ),
        ("package.json", b'{"name": "x", "license": "MIT OR GPL-3.0-only"}', None),
        ("package.json", b'{"name": "x", "licenses": [{"type": "MIT"}]}', "MIT"),
        (
            "pom.xml",
            b"<project><licenses><license><name>MIT License</name></license>"
            b"<license><name>GPL-3.0-only</name></license></licenses></project>",
            None,
        ),
    ],
)
def test_other_ecosystems_manifests_are_licence_metadata(
    policy: LicensePolicy, name: str, text: bytes, expression: str | None
) -> None:
    """Cargo.toml, package.json and pom.xml name the licence like pyproject.toml does: an OR
    there wins over the AND the files alone would give."""
    judge, _ = judge_for({"LICENSE": MIT.encode(), name: text}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed
    assert verdict.expression == (expression or "MIT OR GPL-3.0-only")
    assert any(e.path == name for e in verdict.evidence)


def test_cargo_license_file_is_identified_wherever_it_is(policy: LicensePolicy) -> None:
    """``license-file`` names the crate's licence text, under any name and directory."""
    cargo = b'[package]\nname = "x"\nlicense-file = "docs/TERMS.txt"\n'
    judge, _ = judge_for({"Cargo.toml": cargo, "docs/TERMS.txt": MIT.encode()}, policy)
    verdict = judge.judge("c1")
    assert verdict.allowed and verdict.expression == "MIT"
    assert [e.path for e in verdict.evidence if e.source == "file"] == ["docs/TERMS.txt"]
    # A path out of the tree is not followed.
    cargo = b'[package]\nname = "x"\nlicense-file = "../TERMS.txt"\n'
    judge, _ = judge_for({"Cargo.toml": cargo}, policy)
    assert judge.judge("c1").reason == "license_unknown"
