"""Splitting a PR's changes and proving the split round-trips."""

from __future__ import annotations

import hashlib

import pytest

from swe_forge.config import load_config
from swe_forge.git.repo import MODE_SUBMODULE, MODE_SYMLINK, FileChange
from swe_forge.mining.classify import PathClassifier
from swe_forge.mining.split import (
    Split,
    SplitRejection,
    split_changes,
    verify_roundtrip,
)

CLASSIFIER = PathClassifier(load_config().classify)


def _sha(data: bytes) -> str:
    # git's blob ids: the round-trip proof compares the patched result's id with the merge's.
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def change(
    path: str,
    old: bytes,
    new: bytes,
    patch: str,
    *,
    status: str = "M",
    binary: bool = False,
    old_mode: int = 0o100644,
    new_mode: int = 0o100644,
) -> FileChange:
    return FileChange(
        status=status,
        old_path=None if status == "A" else path,
        new_path=None if status == "D" else path,
        old_mode=old_mode,
        new_mode=new_mode,
        old_blob=_sha(old) if old else "0" * 40,
        new_blob=_sha(new) if new else "0" * 40,
        is_binary=binary,
        additions=patch.count("\n+"),
        deletions=patch.count("\n-"),
        patch=patch.encode(),
    )


SRC_OLD = b"def f():\n    return 1\n"
SRC_NEW = b"def f():\n    return 2\n"
SRC_PATCH = (
    "diff --git a/pkg/m.py b/pkg/m.py\nindex 1..2 100644\n--- a/pkg/m.py\n+++ b/pkg/m.py\n"
    "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
)
TEST_NEW = b"def test_f():\n    assert f() == 2\n"
TEST_PATCH = (
    "diff --git a/tests/test_m.py b/tests/test_m.py\nnew file mode 100644\nindex 0..3\n"
    "--- /dev/null\n+++ b/tests/test_m.py\n@@ -0,0 +1,2 @@\n+def test_f():\n+    assert f() == 2\n"
)


def blobs(*pairs: bytes) -> dict[str, bytes]:
    return {_sha(b): b for b in pairs} | {"0" * 40: b""}


def good() -> list[FileChange]:
    return [
        change("pkg/m.py", SRC_OLD, SRC_NEW, SRC_PATCH),
        change("tests/test_m.py", b"", TEST_NEW, TEST_PATCH, status="A"),
    ]


def test_split_and_roundtrip() -> None:
    changes = good()
    split = split_changes(changes, CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(split, Split)
    assert split.patch == SRC_PATCH and split.test_patch == TEST_PATCH
    assert split.source_files == ("pkg/m.py",) and split.test_files == ("tests/test_m.py",)
    store = blobs(SRC_OLD, SRC_NEW, TEST_NEW)
    assert verify_roundtrip(split, changes, store.__getitem__) is None


def test_roundtrip_catches_a_wrong_patch() -> None:
    changes = good()
    split = split_changes(changes, CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(split, Split)
    bad = Split(
        split.patch.replace("return 2", "return 3"),
        split.test_patch,
        split.source_files,
        split.test_files,
        1,
        1,
    )
    store = blobs(SRC_OLD, SRC_NEW, TEST_NEW)
    assert "does not give the merged file" in (
        verify_roundtrip(bad, changes, store.__getitem__) or ""
    )
    dropped = Split(split.patch, "", split.source_files, split.test_files, 1, 1)
    assert "absent from the emitted diffs" in (
        verify_roundtrip(dropped, changes, store.__getitem__) or ""
    )


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ([], "empty_diff"),
        ([change("pkg/m.py", SRC_OLD, SRC_NEW, SRC_PATCH)], "no_test_change"),
        ([change("tests/test_m.py", b"", TEST_NEW, TEST_PATCH, status="A")], "test_only"),
        (
            [change("docs/x.rst", b"a\n", b"b\n", "diff --git a/docs/x.rst b/docs/x.rst\n")],
            "no_code_change",
        ),
        (
            [
                *good(),
                change(
                    "pkg/logo.png", b"\x89PNG", b"\x89PNG2", "Binary files differ\n", binary=True
                ),
            ],
            "binary_change",
        ),
        ([*good(), change("pkg/link", b"a", b"b", "", new_mode=MODE_SYMLINK)], "symlink_change"),
        (
            [*good(), change("vendor/lib", b"a", b"b", "", new_mode=MODE_SUBMODULE)],
            "submodule_change",
        ),
    ],
)
def test_rejections(changes: list[FileChange], reason: str) -> None:
    got = split_changes(changes, CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(got, SplitRejection) and got.reason.value == reason


def test_caps() -> None:
    got = split_changes(good(), CLASSIFIER, max_files=1, max_lines=100)
    assert isinstance(got, SplitRejection) and got.reason.value == "too_many_files"
    got = split_changes(good(), CLASSIFIER, max_files=10, max_lines=2)
    assert isinstance(got, SplitRejection) and got.reason.value == "too_many_lines"


def test_non_utf8_diff() -> None:
    bad = FileChange(
        "M",
        "pkg/m.py",
        "pkg/m.py",
        0o100644,
        0o100644,
        "a" * 40,
        "b" * 40,
        False,
        1,
        1,
        b"diff --git a/pkg/m.py b/pkg/m.py\n+\xff\xfe\n",
    )
    got = split_changes([bad, good()[1]], CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(got, SplitRejection) and got.reason.value == "non_utf8_diff"


def test_docs_ride_along_in_the_gold_patch() -> None:
    doc = change(
        "docs/x.rst",
        b"a\n",
        b"b\n",
        "diff --git a/docs/x.rst b/docs/x.rst\n--- a/docs/x.rst\n+++ b/docs/x.rst\n@@ -1 +1 @@\n-a\n+b\n",
    )
    got = split_changes([doc, *good()], CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(got, Split)
    assert got.patch.startswith("diff --git a/docs/x.rst") and "docs/x.rst" in got.source_files
    assert "docs" not in got.test_patch


def test_ci_and_runner_config_are_held_out_with_the_tests() -> None:
    ci = change(
        ".github/workflows/ci.yml",
        b"a\n",
        b"b\n",
        "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-a\n+b\n",
    )
    tox = change(
        "tox.ini",
        b"a\n",
        b"b\n",
        "diff --git a/tox.ini b/tox.ini\n--- a/tox.ini\n+++ b/tox.ini\n@@ -1 +1 @@\n-a\n+b\n",
    )
    got = split_changes([ci, *good(), tox], CLASSIFIER, max_files=10, max_lines=100)
    assert isinstance(got, Split)
    assert got.source_files == ("pkg/m.py",)
    assert set(got.test_files) == {".github/workflows/ci.yml", "tests/test_m.py", "tox.ini"}
    assert "tox.ini" in got.test_patch and "tox.ini" not in got.patch
