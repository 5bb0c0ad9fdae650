"""Parse git-style unified diffs strictly, and apply them to bytes without fuzz.

Used to prove that a split round-trips (the text libgit2 wrote is read back by this
independent parser) and, later, to inspect candidate patches before anything applies them.
The parser is strict: anything it does not understand is an error, never skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}


class DiffParseError(ValueError):
    """The text is not a diff this parser accepts."""


class PatchApplyError(ValueError):
    """A hunk does not match the content it is applied to."""


@dataclass
class Hunk:
    """One ``@@`` block: where it applies and its lines (tag byte + content, EOL kept)."""

    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[tuple[int, bytes]] = field(default_factory=list)  # tag: ' ', '-', '+'


@dataclass
class FilePatch:
    """One file's part of a diff."""

    old_path: str | None  # None when the file is created
    new_path: str | None  # None when the file is deleted
    header_old: str | None = None  # paths from the "diff --git a/X b/Y" line
    header_new: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    is_binary: bool = False
    is_rename: bool = False
    is_copy: bool = False
    old_index: str = ""  # abbreviated blob ids from the "index a..b" line
    new_index: str = ""
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The path after the change (before it, for a deletion)."""
        return self.new_path or self.old_path or self.header_new or self.header_old or ""


def unquote_path(raw: bytes) -> str:
    """Undo git's C-style quoting of a path (``"a/f\\303\\251.py"``); decode as UTF-8."""
    if not raw.startswith(b'"'):
        return raw.decode("utf-8")
    if not raw.endswith(b'"') or len(raw) < 2:
        raise DiffParseError(f"badly quoted path: {raw!r}")
    body = raw[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != 0x5C:  # backslash
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise DiffParseError(f"badly quoted path: {raw!r}")
        nxt = body[i + 1]
        if 0x30 <= nxt <= 0x37:
            digits = body[i + 1 : i + 4]
            if len(digits) != 3 or not all(0x30 <= d <= 0x37 for d in digits):
                raise DiffParseError(f"bad octal escape in path: {raw!r}")
            out.append(int(digits, 8))
            i += 4
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            raise DiffParseError(f"unknown escape in path: {raw!r}")
    return bytes(out).decode("utf-8")


def _strip_prefix(path: str, prefix: str) -> str:
    if not path.startswith(prefix):
        raise DiffParseError(f"path {path!r} lacks the {prefix!r} prefix")
    return path[len(prefix) :]


def _side(raw: bytes, prefix: str) -> str | None:
    raw = raw.rstrip(b"\n").split(b"\t", 1)[0] if not raw.startswith(b'"') else raw.rstrip(b"\n")
    if raw == b"/dev/null":
        return None
    return _strip_prefix(unquote_path(raw), prefix)


def _git_header_paths(line: bytes) -> tuple[str | None, str | None]:
    rest = line[len(b"diff --git ") :].rstrip(b"\n")
    if rest.startswith(b'"'):
        end = rest.index(b'"', 1)
        while rest[end - 1] == 0x5C and rest[end - 2] != 0x5C:
            end = rest.index(b'"', end + 1)
        a, b = rest[: end + 1], rest[end + 2 :]
    else:
        # Unquoted: "a/X b/X"; for a rename the sides differ, and the ---/+++ or rename lines
        # give the exact paths, so an ambiguous split here is only advisory.
        mid = rest.find(b" b/")
        if mid < 0:
            return None, None
        a, b = rest[:mid], rest[mid + 1 :]
    try:
        return _strip_prefix(unquote_path(a), "a/"), _strip_prefix(unquote_path(b), "b/")
    except (DiffParseError, UnicodeDecodeError):
        return None, None


def parse_diff(text: str | bytes) -> list[FilePatch]:
    """Parse a git diff into file patches.

    Raises:
        DiffParseError: the text is empty, has content outside a file section, a malformed
            hunk header, hunk line counts that do not add up, or undecodable paths.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not data.strip():
        raise DiffParseError("empty diff")
    lines = data.splitlines(keepends=True)
    files: list[FilePatch] = []
    cur: FilePatch | None = None
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith(b"diff --git "):
            a, b = _git_header_paths(line)
            cur = FilePatch(old_path=a, new_path=b, header_old=a, header_new=b)
            files.append(cur)
            i += 1
            continue
        if cur is None:
            raise DiffParseError(f"line {i + 1}: content before the first 'diff --git' header")
        if line.startswith(b"@@"):
            m = _HUNK.match(line)
            if not m:
                raise DiffParseError(f"line {i + 1}: malformed hunk header")
            hunk = Hunk(
                int(m.group(1)),
                int(m.group(2)) if m.group(2) is not None else 1,
                int(m.group(3)),
                int(m.group(4)) if m.group(4) is not None else 1,
            )
            i += 1
            old_left, new_left = hunk.old_len, hunk.new_len
            while (old_left > 0 or new_left > 0) and i < n:
                body = lines[i]
                tag = body[:1]
                if tag == b" ":
                    old_left -= 1
                    new_left -= 1
                elif tag == b"-":
                    old_left -= 1
                elif tag == b"+":
                    new_left -= 1
                elif tag == b"\\":
                    _no_eol(hunk, i)
                    i += 1
                    continue
                elif body in (b"\n", b"\r\n"):
                    # Some tools drop the space of an empty context line.
                    old_left -= 1
                    new_left -= 1
                    hunk.lines.append((0x20, body))
                    i += 1
                    continue
                else:
                    raise DiffParseError(f"line {i + 1}: unexpected line inside a hunk")
                hunk.lines.append((tag[0], body[1:]))
                i += 1
            if old_left != 0 or new_left != 0:
                raise DiffParseError(f"hunk at line {hunk.old_start} is truncated")
            if i < n and lines[i].startswith(b"\\"):
                _no_eol(hunk, i)
                i += 1
            cur.hunks.append(hunk)
            continue
        _header_line(cur, line, i)
        i += 1
    return files


def _no_eol(hunk: Hunk, index: int) -> None:
    if not hunk.lines:
        raise DiffParseError(f"line {index + 1}: 'No newline' marker without a line")
    tag, body = hunk.lines[-1]
    if body.endswith(b"\n"):
        hunk.lines[-1] = (tag, body[:-1])


def _header_line(cur: FilePatch, line: bytes, index: int) -> None:
    text = line.rstrip(b"\n")
    if text.startswith(b"--- "):
        cur.old_path = _side(text[4:], "a/")
    elif text.startswith(b"+++ "):
        cur.new_path = _side(text[4:], "b/")
    elif text.startswith(b"old mode "):
        cur.old_mode = text[9:].decode("ascii", "replace")
    elif text.startswith(b"new mode "):
        cur.new_mode = text[9:].decode("ascii", "replace")
    elif text.startswith(b"deleted file mode "):
        cur.old_mode = text[18:].decode("ascii", "replace")
        cur.new_path = None
    elif text.startswith(b"new file mode "):
        cur.new_mode = text[14:].decode("ascii", "replace")
        cur.old_path = None
    elif text.startswith(b"rename from "):
        cur.is_rename = True
        cur.old_path = unquote_path(text[12:])
    elif text.startswith(b"rename to "):
        cur.is_rename = True
        cur.new_path = unquote_path(text[10:])
    elif text.startswith(b"copy from "):
        cur.is_copy = True
        cur.old_path = unquote_path(text[10:])
    elif text.startswith(b"copy to "):
        cur.is_copy = True
        cur.new_path = unquote_path(text[8:])
    elif text.startswith((b"similarity index ", b"dissimilarity index ")):
        pass
    elif text.startswith(b"index "):
        ids, _, mode = text[6:].partition(b" ")
        old, sep, new = ids.partition(b"..")
        if not sep:
            raise DiffParseError(f"line {index + 1}: malformed index line")
        cur.old_index = old.decode("ascii", "replace")
        cur.new_index = new.decode("ascii", "replace")
        if mode:
            cur.old_mode = cur.old_mode or mode.decode("ascii", "replace")
            cur.new_mode = cur.new_mode or cur.old_mode
    elif text.startswith(b"Binary files ") or text == b"GIT binary patch":
        cur.is_binary = True
    elif text.startswith((b"literal ", b"delta ")) and cur.is_binary:
        pass
    elif cur.is_binary:
        pass  # base85 lines of a binary patch
    else:
        raise DiffParseError(f"line {index + 1}: unexpected line {text[:60]!r}")


def apply_file_patch(original: bytes, patch: FilePatch) -> bytes:
    """Apply one file's hunks to its original content: exact context, no offsets, no fuzz.

    Raises:
        PatchApplyError: a context or removed line differs from the original, or hunks are
            out of order or out of range.
    """
    if patch.is_binary:
        raise PatchApplyError(f"{patch.path}: binary patches are not applied")
    src = original.splitlines(keepends=True)
    out: list[bytes] = []
    pos = 0
    for hunk in patch.hunks:
        start = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        if start < pos or start > len(src):
            raise PatchApplyError(f"{patch.path}: hunk at line {hunk.old_start} is out of order")
        out.extend(src[pos:start])
        pos = start
        for tag, body in hunk.lines:
            if tag == 0x2B:  # '+'
                out.append(body)
                continue
            if pos >= len(src) or src[pos] != body:
                raise PatchApplyError(
                    f"{patch.path}: line {pos + 1} does not match the hunk at line {hunk.old_start}"
                )
            if tag == 0x20:
                out.append(body)
            pos += 1
    out.extend(src[pos:])
    return b"".join(out)
