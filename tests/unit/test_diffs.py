"""The strict diff parser and applier."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

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
        "--- a/f\n+++ b/f\n",  # a traditional header without a hunk
        "--- a/f\n+++ b/f\nhello\n@@ -1 +1 @@\n-a\n+b\n",  # ... nor right after it
        "Here is the fix:\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",  # prose (git skips it)
        "@@ -1 +1 @@\n-a\n+b\n",  # a hunk before any header
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


# ----------------------------------------------------------------------------------------------
# Traditional diffs (no "diff --git" line), read as `git apply` reads them: checked against the
# real git, in a real repository, with the options the supervisor applies with.

_ABC = b"a\nb\nc\n"
_HUNK = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


@dataclass(frozen=True)
class Form:
    """A way to write a diff git applies, the files it applies to, and what git changes."""

    name: str
    files: dict[str, bytes]
    patch: bytes
    changed: list[str]  # what `git apply --numstat` names (both sides of renames)


def _form(name: str, files: dict[str, bytes], patch: str, changed: list[str]) -> Form:
    return Form(name, files, patch.encode(), changed)


STAMP_OLD = "\t2024-01-01 10:00:00.000000000 +0100"
STAMP_NEW = "\t2024-01-02 11:30:00.123456789 +0100"
FORMS = [
    _form(
        "a/ b/ prefixes",
        {"pkg/core.py": _ABC},
        "--- a/pkg/core.py\n+++ b/pkg/core.py\n" + _HUNK,
        ["pkg/core.py"],
    ),
    _form(
        "no prefixes, top level",
        {"core.py": _ABC},
        "--- core.py\n+++ core.py\n" + _HUNK,
        ["core.py"],
    ),
    # git strips one component unless both names have none: "--- pkg/core.py" changes core.py.
    _form(
        "no prefixes, in a directory",
        {"core.py": _ABC, "pkg/core.py": b"other\n"},
        "--- pkg/core.py\n+++ pkg/core.py\n" + _HUNK,
        ["core.py"],
    ),
    _form(
        "diff -u with timestamps",
        {"core.py": _ABC},
        f"--- core.py.orig{STAMP_OLD}\n+++ core.py{STAMP_NEW}\n" + _HUNK,
        ["core.py"],
    ),
    _form(
        "diff -ur with command lines and timestamps",
        {"pkg/core.py": _ABC, "pkg/util.py": _ABC},
        f"diff -ur old/pkg/core.py new/pkg/core.py\n--- old/pkg/core.py{STAMP_OLD}\n"
        f"+++ new/pkg/core.py{STAMP_NEW}\n"
        + _HUNK
        + f"diff -ur old/pkg/util.py new/pkg/util.py\n--- old/pkg/util.py{STAMP_OLD}\n"
        f"+++ new/pkg/util.py{STAMP_NEW}\n" + _HUNK,
        ["pkg/core.py", "pkg/util.py"],
    ),
    _form(
        "POSIX timestamps, a zone with a colon",
        {"pkg/core.py": _ABC},
        "--- a/pkg/core.py\t2024-01-01 10:00:00\n+++ b/pkg/core.py\t2024-01-01 10:00:01 +01:00\n"
        + _HUNK,
        ["pkg/core.py"],
    ),
    _form(
        "timestamps after spaces (the tab lost)",
        {"pkg/core.py": _ABC},
        "--- a/pkg/core.py  2024-01-01 10:00:00.000000000 +0100\n"
        "+++ b/pkg/core.py  2024-01-02 11:30:00.123456789 +0100\n" + _HUNK,
        ["pkg/core.py"],
    ),
    _form(
        "a date git does not read, after a tab",
        {"pkg/core.py": _ABC},
        "--- a/pkg/core.py\tMon Jan  1 10:00:00 2024\n+++ b/pkg/core.py\tTue Jan  2 10:00:00 2024\n"
        + _HUNK,
        ["pkg/core.py"],
    ),
    _form(
        "a space in the name, with timestamps",
        {"pkg/my core.py": _ABC},
        f"--- a/pkg/my core.py{STAMP_OLD}\n+++ b/pkg/my core.py{STAMP_NEW}\n" + _HUNK,
        ["pkg/my core.py"],
    ),
    _form(
        "a space in the name, no timestamps",
        {"pkg/my core.py": _ABC},
        "--- a/pkg/my core.py\n+++ b/pkg/my core.py\n" + _HUNK,
        ["pkg/my core.py"],
    ),
    _form(
        "CRLF throughout, on a CRLF file",
        {"pkg/win.txt": b"a\r\nb\r\nc\r\n"},
        ("--- a/pkg/win.txt\n+++ b/pkg/win.txt\n" + _HUNK).replace("\n", "\r\n"),
        ["pkg/win.txt"],
    ),
    _form(
        "CRLF throughout, git's own headers",
        {"pkg/win.txt": b"a\r\nb\r\nc\r\n"},
        (
            "diff --git a/pkg/win.txt b/pkg/win.txt\nindex 1111111..2222222 100644\n"
            "--- a/pkg/win.txt\n+++ b/pkg/win.txt\n" + _HUNK
        ).replace("\n", "\r\n"),
        ["pkg/win.txt"],
    ),
    _form(
        "new and deleted files named /dev/null",
        {"pkg/old.py": b"q\n"},
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+n\n"
        f"--- a/pkg/old.py{STAMP_OLD}\n+++ /dev/null{STAMP_NEW}\n@@ -1 +0,0 @@\n-q\n",
        ["pkg/new.py", "pkg/old.py"],
    ),
    _form(
        "a new file without prefixes",
        {},
        "--- /dev/null\n+++ new.txt\n@@ -0,0 +1 @@\n+n\n",
        ["new.txt"],
    ),
    _form(
        "quoted names",
        {"pkg/café.py": _ABC},
        '--- "a/pkg/caf\\303\\251.py"\n+++ "b/pkg/caf\\303\\251.py"\n' + _HUNK,
        ["pkg/café.py"],
    ),
    # Of two different names git keeps the shorter when it is a prefix of the other.
    _form("x and x.new", {"core.py": _ABC}, "--- core.py\n+++ core.py.new\n" + _HUNK, ["core.py"]),
    _form(
        "no newline at the end",
        {"pkg/core.py": b"a\nb"},
        "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n",
        ["pkg/core.py"],
    ),
    _form(
        "git's sections, then a traditional one",
        {"pkg/core.py": _ABC, "util.py": _ABC},
        "diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n"
        + _HUNK
        + "--- util.py\n+++ util.py\n"
        + _HUNK,
        ["pkg/core.py", "util.py"],
    ),
    _form(
        "several traditional sections, no prefixes",
        {"core.py": _ABC, "util.py": _ABC},
        "--- core.py\n+++ core.py\n" + _HUNK + "--- util.py\n+++ util.py\n" + _HUNK,
        ["core.py", "util.py"],
    ),
]


def git_repo(tmp: Path, files: dict[str, bytes]) -> Path:
    """A repository whose one commit holds ``files``."""
    repo = tmp / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for rel, data in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "base",
            "--allow-empty",
        ],
        check=True,
    )
    return repo


def git_apply(repo: Path, patch: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``git apply`` as the supervisor runs it (no -p: git guesses), on stdin."""
    return subprocess.run(
        ["git", "-C", str(repo), "apply", "--whitespace=nowarn", *args, "-"],
        input=patch,
        capture_output=True,
    )


def git_changed(repo: Path, patch: bytes) -> list[str]:
    """The paths ``git apply --numstat -z`` names (both sides of renames), as the supervisor reads them."""
    out = git_apply(repo, patch, "--numstat", "-z")
    assert out.returncode == 0, out.stderr.decode()
    items = out.stdout.split(b"\0")
    paths: list[str] = []
    i = 0
    while i < len(items):
        parts = items[i].split(b"\t")
        i += 1
        if len(parts) == 3 and parts[2]:
            paths.append(parts[2].decode())
        elif len(parts) == 3:
            paths += [items[i].decode(), items[i + 1].decode()]
            i += 2
    return sorted(set(paths))


def parsed_paths(patch: bytes) -> list[str]:
    return sorted({p for fp in parse_diff(patch) for p in (fp.old_path, fp.new_path) if p})


@pytest.mark.parametrize("form", FORMS, ids=[f.name for f in FORMS])
def test_traditional_forms_read_as_git_reads_them(form: Form, tmp_path: Path) -> None:
    repo = git_repo(tmp_path, form.files)
    check = git_apply(repo, form.patch, "--check")
    assert check.returncode == 0, check.stderr.decode()
    assert git_changed(repo, form.patch) == form.changed
    assert parsed_paths(form.patch) == form.changed
    # The hunks too: applied here, each file is what git makes of it.
    assert git_apply(repo, form.patch).returncode == 0
    for fp in parse_diff(form.patch):
        assert not fp.is_rename
        if fp.old_path and fp.new_path:
            assert (
                apply_file_patch(form.files[fp.old_path], fp) == (repo / fp.new_path).read_bytes()
            )
        elif fp.new_path:
            assert apply_file_patch(b"", fp) == (repo / fp.new_path).read_bytes()
        else:
            assert fp.old_path and not (repo / fp.old_path).exists()


def test_traditional_names_as_written_are_kept() -> None:
    (fp,) = parse_diff(f"--- old/pkg/core.py{STAMP_OLD}\n+++ new/pkg/core.py{STAMP_NEW}\n" + _HUNK)
    assert fp.traditional and fp.raw_names == ("old/pkg/core.py", "new/pkg/core.py")
    assert (fp.old_path, fp.new_path) == ("pkg/core.py", "pkg/core.py")
    (new,) = parse_diff("--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+n\n")
    assert (new.old_path, new.new_path, new.raw_names) == (None, "n.py", ("b/n.py",))


def test_mismatched_names_are_not_a_rename(tmp_path: Path) -> None:
    # Without a git header git renames nothing: it patches the new name (the old one only
    # when it is a prefix of the new), and the old name is not touched.
    patch = ("--- a/pkg/core.py\n+++ b/pkg/other.py\n" + _HUNK).encode()
    repo = git_repo(tmp_path, {"pkg/core.py": _ABC, "pkg/other.py": _ABC})
    assert git_changed(repo, patch) == ["pkg/other.py"]
    (fp,) = parse_diff(patch)
    assert (fp.old_path, fp.new_path, fp.is_rename) == ("pkg/other.py", "pkg/other.py", False)
    assert fp.raw_names == ("a/pkg/core.py", "b/pkg/other.py")
    assert git_apply(repo, patch).returncode == 0
    assert (repo / "pkg/core.py").read_bytes() == _ABC
    assert (repo / "pkg/other.py").read_bytes() == b"a\nB\nc\n"


def test_a_header_without_hunks_is_refused_as_git_refuses_it(tmp_path: Path) -> None:
    patch = b"--- a/core.py\n+++ b/core.py\n"
    repo = git_repo(tmp_path, {"core.py": _ABC})
    assert git_apply(repo, patch, "--check").returncode != 0
    with pytest.raises(DiffParseError, match="no hunk"):
        parse_diff(patch)


def test_creation_by_epoch_timestamp_is_refused(tmp_path: Path) -> None:
    # GNU diff -N names a missing file with the epoch; git creates the file. The guards know
    # new and deleted files by /dev/null only, so this way of saying it is refused.
    patch = b"--- a/new.py\t1970-01-01 00:00:00.000000000 +0000\n+++ b/new.py\t2024-01-01 00:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+n\n"
    repo = git_repo(tmp_path, {})
    assert git_changed(repo, patch) == ["new.py"]
    with pytest.raises(DiffParseError, match="/dev/null"):
        parse_diff(patch)
    west = b"--- a/gone.py\t2024-01-01 00:00:00 +0000\n+++ b/gone.py\t1969-12-31 19:00:00 -0500\n@@ -1 +0,0 @@\n-q\n"
    with pytest.raises(DiffParseError, match="/dev/null"):
        parse_diff(west)
    # A timestamp that is not the epoch is just a timestamp.
    (fp,) = parse_diff(west.replace(b"19:00:00 -0500", b"19:00:01 -0500"))
    assert (fp.old_path, fp.new_path) == ("gone.py", "gone.py")


def test_a_hunk_from_nothing_may_create_the_file(tmp_path: Path) -> None:
    # No /dev/null, one hunk from -0,0: git creates the file when it is missing, modifies it
    # when it is there (empty). The parser cannot tell; it says so.
    patch = b"--- a/pkg/new.py\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+n\n"
    repo = git_repo(tmp_path, {})
    assert git_apply(repo, patch).returncode == 0 and (repo / "pkg/new.py").exists()
    (fp,) = parse_diff(patch)
    assert fp.may_create and fp.old_path == "pkg/new.py"
    (two,) = parse_diff(b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert not two.may_create


def test_git_headers_after_names_without_prefixes_are_refused(tmp_path: Path) -> None:
    # "--- core.py" makes git strip nothing for the rest of the patch, so a later git section's
    # "a/pkg/x.py" means a directory named "a": refused rather than guessed.
    patch = (
        "--- core.py\n+++ core.py\n"
        + _HUNK
        + "diff --git a/pkg/x.py b/pkg/x.py\n--- a/pkg/x.py\n+++ b/pkg/x.py\n"
        + _HUNK
    ).encode()
    repo = git_repo(tmp_path, {"core.py": _ABC, "pkg/x.py": _ABC})
    assert "b/pkg/x.py" in git_changed(repo, patch)
    with pytest.raises(DiffParseError, match="prefixes"):
        parse_diff(patch)
    # A traditional section with prefixes after one without: git keeps them too, and so here.
    later = (
        "--- core.py\n+++ core.py\n" + _HUNK + "--- a/pkg/x.py\n+++ b/pkg/x.py\n" + _HUNK
    ).encode()
    assert git_changed(repo, later) == ["b/pkg/x.py", "core.py"]
    assert parsed_paths(later) == ["b/pkg/x.py", "core.py"]


@pytest.mark.parametrize(
    ("raw", "git_path"),
    [
        ("a/../x.py", "../x.py"),  # git keeps the escape
        ("../x.py", "x.py"),  # git strips it: the guards look at the name as written
        ("/x.py", "x.py"),
        ("/etc/passwd", "etc/passwd"),
        ("a//etc/passwd", "/etc/passwd"),
    ],
)
def test_escaping_names_are_read_as_git_reads_them(raw: str, git_path: str, tmp_path: Path) -> None:
    patch = f"--- {raw}\n+++ {raw}\n{_HUNK}".encode()
    repo = git_repo(tmp_path, {"x.py": _ABC})
    assert git_changed(repo, patch) == [git_path]
    (fp,) = parse_diff(patch)
    written = raw.replace("//", "/")  # git squashes runs of slashes
    assert (fp.new_path, fp.raw_names) == (git_path, (written, written))


def test_a_lone_carriage_return_stays_in_its_line() -> None:
    (fp,) = parse_diff(b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\rb\n-c\n+d\n")
    assert apply_file_patch(b"a\rb\nc\n", fp) == b"a\rb\nd\n"
