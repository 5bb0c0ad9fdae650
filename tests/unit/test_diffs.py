"""The strict diff parser and applier."""

from __future__ import annotations

import pytest

from swe_forge.diffs import (
    DiffParseError,
    PatchApplyError,
    apply_file_patch,
    parse_diff,
    unquote_path,
)


def one(text: str) -> object:
    (fp,) = parse_diff(text)
    return fp


def test_modify_with_no_newline_at_end() -> None:
    text = "diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    (fp,) = parse_diff(text)
    assert (fp.old_path, fp.new_path, fp.old_mode) == ("f", "f", "100644")
    assert apply_file_patch(b"a\nb", fp) == b"a\nc"
    text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    assert apply_file_patch(b"a\nb", parse_diff(text)[0]) == b"a\nb\n"


def test_apply_is_strict() -> None:
    text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    (fp,) = parse_diff(text)
    with pytest.raises(PatchApplyError):
        apply_file_patch(b"a\nX\n", fp)
    # No offsets: the same hunk one line lower does not apply.
    with pytest.raises(PatchApplyError):
        apply_file_patch(b"z\na\nb\n", fp)


def test_multiple_hunks_and_crlf() -> None:
    text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-1\r\n+one\r\n@@ -5,1 +5,2 @@\n-5\r\n+five\r\n+5b\r\n"
    src = b"".join(f"{i}\r\n".encode() for i in range(1, 7))
    assert (
        apply_file_patch(src, parse_diff(text)[0]) == b"one\r\n2\r\n3\r\n4\r\nfive\r\n5b\r\n6\r\n"
    )


def test_new_deleted_renamed_and_mode() -> None:
    text = (
        "diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100755\nindex 1..0\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
        "diff --git a/old name.py b/new name.py\nsimilarity index 100%\nrename from old name.py\nrename to new name.py\n"
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    )
    new, gone, moved, mode = parse_diff(text)
    assert (new.old_path, new.new_path, new.new_mode) == (None, "new.py", "100644")
    assert apply_file_patch(b"", new) == b"x\n"
    assert (gone.old_path, gone.new_path, gone.old_mode) == ("gone.py", None, "100755")
    assert apply_file_patch(b"y\n", gone) == b""
    assert (moved.old_path, moved.new_path, moved.is_rename) == ("old name.py", "new name.py", True)
    assert (mode.old_mode, mode.new_mode, mode.hunks) == ("100644", "100755", [])


def test_quoted_paths() -> None:
    assert unquote_path(b'"a/caf\\303\\251.py"') == "a/café.py"
    assert unquote_path(b'"a/tab\\there"') == "a/tab\there"
    text = 'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n--- "a/caf\\303\\251.py"\n+++ "b/caf\\303\\251.py"\n@@ -1 +1 @@\n-a\n+b\n'
    (fp,) = parse_diff(text)
    assert fp.path == "café.py"


def test_binary_marked() -> None:
    (fp,) = parse_diff(
        "diff --git a/x.png b/x.png\nindex 1..2 100644\nBinary files a/x.png and b/x.png differ\n"
    )
    assert fp.is_binary
    with pytest.raises(PatchApplyError):
        apply_file_patch(b"", fp)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",  # no diff --git header
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n",  # truncated hunk
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -x +1 @@\n",  # malformed header
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n*a\n",  # bad line tag
        "diff --git a/f b/f\nwhat is this\n",
        'diff --git a/f b/f\n--- "a/unterminated\n',
    ],
)
def test_malformed(text: str) -> None:
    with pytest.raises(DiffParseError):
        parse_diff(text)
