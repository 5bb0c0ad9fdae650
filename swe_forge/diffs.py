"""Parse unified diffs strictly, and apply them to bytes without fuzz.

Used to prove that a split round-trips (the text libgit2 wrote is read back by this
independent parser) and to inspect candidate patches before anything applies them. The parser
is strict: anything it does not understand is an error, never skipped.

Two forms of file section are read, each the way ``git apply`` (no ``-p``, at the top of the
work tree) reads it, so the paths found here are the paths git changes:

- git's: ``diff --git a/X b/Y`` and its extended header lines (modes, renames, copies, index);
- traditional: a ``--- X`` line, a ``+++ Y`` line and a hunk right after them, as ``diff -u``,
  ``diff -ur`` (with its ``diff ...`` command line) or a hand-written patch has them: with
  or without ``a/``/``b/`` prefixes, with or without timestamps, LF or CRLF. Git strips one
  leading component unless both names of the first such section have none (then none, for
  the rest of the patch); a name ends at a tab, or before a timestamp; of two different
  names git keeps the new one (the old one when it is a prefix of the new: ``x.orig``), so a
  traditional section never renames. A new or deleted file is named ``/dev/null``; GNU's
  other way of saying it (an epoch timestamp) is refused, and so is a ``diff --git`` header
  after a section that set the strip count to 0 (git would read ``a/``/``b/`` as directories).
  The names as written are kept (``raw_names``) for the guards, which refuse absolute names
  and ``..`` even where git's stripping would hide them.

Text git skips between sections (prose, mail headers) is refused here, as is a ``---``/``+++``
pair with no hunk.
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
    #: A traditional section (``---``/``+++`` with no ``diff --git`` line).
    traditional: bool = False
    #: A traditional section's names as written (timestamps cut, no prefix stripped;
    #: ``/dev/null`` left out): what the guards check beside the paths git will use.
    raw_names: tuple[str, ...] = ()
    #: A traditional section git creates the file of when it is missing (one hunk from
    #: ``-0,0``): nothing in the text says whether it is new.
    may_create: bool = False

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


def _chomp(line: bytes) -> bytes:
    """A header line without its end: ``\\n``, and the ``\\r`` before it (git ends a name there)."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


def _strip_prefix(path: str, prefix: str) -> str:
    if not path.startswith(prefix):
        raise DiffParseError(f"path {path!r} lacks the {prefix!r} prefix")
    return path[len(prefix) :]


def _side(raw: bytes, prefix: str) -> str | None:
    raw = _chomp(raw)
    if not raw.startswith(b'"'):
        # git ends the name at a tab (what follows is a timestamp) or a CR.
        raw = re.split(rb"[\t\v\f\r]", raw, maxsplit=1)[0]
    if raw == b"/dev/null":
        return None
    return _strip_prefix(unquote_path(raw), prefix)


def _git_header_paths(line: bytes) -> tuple[str | None, str | None]:
    rest = _chomp(line[len(b"diff --git ") :])
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


def _lines(data: bytes) -> list[bytes]:
    """Lines as git splits them: at ``\\n`` only (a lone ``\\r`` is part of its line)."""
    out = data.split(b"\n")
    last = out.pop()
    lines = [line + b"\n" for line in out]
    if last:
        lines.append(last)
    return lines


@dataclass
class _Strip:
    """How many leading components git strips from traditional names (``-p``), as it guesses."""

    value: int = 1
    known: bool = False


def parse_diff(text: str | bytes) -> list[FilePatch]:
    """Parse a unified diff (git's sections or traditional ones) into file patches.

    Raises:
        DiffParseError: the text is empty, has content outside a file section, a ``---``/
            ``+++`` pair without a hunk, a malformed hunk header, hunk line counts that do not
            add up, undecodable paths, or a creation or deletion not named ``/dev/null``.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    if not data.strip():
        raise DiffParseError("empty diff")
    lines = _lines(data)
    files: list[FilePatch] = []
    cur: FilePatch | None = None
    in_header = False  # cur is a git section still in its extended header
    strip = _Strip()
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith(b"diff --git "):
            if strip.known and strip.value != 1:
                raise DiffParseError(
                    f"line {i + 1}: a 'diff --git' header after traditional names without a/ "
                    "and b/ prefixes (git would keep the prefixes as directories)"
                )
            a, b = _git_header_paths(line)
            cur = FilePatch(old_path=a, new_path=b, header_old=a, header_new=b)
            files.append(cur)
            in_header = True
            i += 1
            continue
        if line.startswith(b"@@"):
            if cur is None:
                raise DiffParseError(f"line {i + 1}: a hunk before any file header")
            in_header = False
            i = _hunk(cur, lines, i)
            continue
        traditional = line.startswith(b"--- ") and lines[i + 1 : i + 2] != []
        if not in_header and traditional and lines[i + 1].startswith(b"+++ "):
            if i + 2 >= n or not lines[i + 2].startswith(b"@@ -"):
                raise DiffParseError(f"line {i + 1}: a ---/+++ header with no hunk after it")
            cur = _traditional(line, lines[i + 1], strip, i)
            files.append(cur)
            i += 2
            continue
        if (
            not in_header
            and line.startswith(b"diff ")
            and i + 1 < n
            and lines[i + 1].startswith(b"--- ")
        ):
            i += 1  # the command line "diff -ur old/x new/x" writes before each file
            continue
        if cur is None:
            raise DiffParseError(f"line {i + 1}: content before the first file header")
        if not in_header:
            raise DiffParseError(f"line {i + 1}: unexpected line {_chomp(line)[:60]!r}")
        _header_line(cur, line, i)
        i += 1
    for fp in files:
        # git creates the file of a traditional section when it is missing and the one hunk
        # has no old lines: the text does not say which, so the guards must assume it might.
        fp.may_create = bool(
            fp.traditional
            and fp.old_path is not None
            and len(fp.hunks) == 1
            and fp.hunks[0].old_len == 0
        )
    return files


def _hunk(cur: FilePatch, lines: list[bytes], i: int) -> int:
    """Parse the hunk at ``lines[i]`` into ``cur``; return the index after it."""
    n = len(lines)
    m = _HUNK.match(lines[i])
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
    return i


# ------------------------------------------------------------------ traditional names, as git
# Ported from git's apply.c (parse_traditional_patch and its helpers) so that a traditional
# section names exactly the file ``git apply`` changes.

_C_SPACE = frozenset(b" \t\n\v\f\r")
_TERM_SPACE, _TERM_TAB = 1, 2


def _is_digit(line: bytes, i: int) -> bool:
    return 0 <= i < len(line) and 0x30 <= line[i] <= 0x39


def _is_dev_null(rest: bytes) -> bool:
    return rest.startswith(b"/dev/null") and len(rest) > 9 and rest[9] in _C_SPACE


def _squash(name: bytes | None) -> bytes | None:
    return None if name is None else re.sub(rb"/+", b"/", name)


def _unquote_c(line: bytes) -> bytes | None:
    """The C-quoted string at the start of ``line`` (git's unquote_c_style), or None."""
    out = bytearray()
    i = 1
    while i < len(line):
        c = line[i]
        if c == 0x22:
            return bytes(out)
        if c == 0x0A:
            return None
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        nxt = line[i + 1] if i + 1 < len(line) else -1
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif 0x30 <= nxt <= 0x33:
            digits = line[i + 1 : i + 4]
            if len(digits) != 3 or not all(0x30 <= d <= 0x37 for d in digits):
                return None
            out.append(int(digits, 8))
            i += 4
        else:
            return None
    return None


def _name_gnu(rest: bytes, p: int) -> bytes:
    name = _unquote_c(rest)
    if name is None:
        raise DiffParseError(f"badly quoted path: {_chomp(rest)[:80]!r}")
    for _ in range(p):
        cut = name.find(b"/")
        if cut < 0:
            raise DiffParseError(f"quoted path {_chomp(rest)[:80]!r} has no component to strip")
        name = name[cut + 1 :]
    return _squash(name) or b""


def _sane_tz_len(line: bytes, end: int) -> int:
    if end < 6 or line[end - 6] != 0x20 or line[end - 5] not in b"+-":
        return 0
    return 6 if all(_is_digit(line, k) for k in range(end - 4, end)) else 0


def _tz_with_colon_len(line: bytes, end: int) -> int:
    if end < 7 or line[end - 3] != 0x3A:
        return 0
    tz = end - 7
    if line[tz] != 0x20 or line[tz + 1] not in b"+-":
        return 0
    ok = all(_is_digit(line, k) for k in (tz + 2, tz + 3, tz + 5, tz + 6))
    return 7 if ok else 0


def _date_len(line: bytes, end: int) -> int:
    if end < 8 or line[end - 3] != 0x2D:
        return 0
    date = end - 8
    if not (
        all(_is_digit(line, date + k) for k in (0, 1, 3, 4, 6, 7))
        and line[date + 2] == 0x2D
        and line[date + 5] == 0x2D
    ):
        return 0
    if date >= 2 and _is_digit(line, date - 1) and _is_digit(line, date - 2):
        date -= 2  # a 4-digit year
    return end - date


def _short_time_len(line: bytes, end: int) -> int:
    if end < 9 or line[end - 3] != 0x3A:
        return 0
    t = end - 9
    ok = (
        line[t] == 0x20
        and all(_is_digit(line, t + k) for k in (1, 2, 4, 5, 7, 8))
        and line[t + 3] == 0x3A
        and line[t + 6] == 0x3A
    )
    return 9 if ok else 0


def _fractional_time_len(line: bytes, end: int) -> int:
    if not end or not _is_digit(line, end - 1):
        return 0
    k = end - 1
    while k > 0 and _is_digit(line, k):
        k -= 1
    if line[k] != 0x2E:
        return 0
    short = _short_time_len(line, k)
    return end - k + short if short else 0


def _trailing_spaces_len(line: bytes, end: int) -> int:
    if not end or line[end - 1] != 0x20:
        return 0
    k = end
    while k:
        k -= 1
        if line[k] != 0x20:
            return end - (k + 1)
    return end


def _timestamp_len(line: bytes) -> int:
    """Length of the timestamp ``diff -u`` put after a name, with the blank before it."""
    total = end = len(line)
    if not _is_digit(line, end - 1):
        return 0
    end -= _sane_tz_len(line, end) or _tz_with_colon_len(line, end)
    end -= _short_time_len(line, end) or _fractional_time_len(line, end)
    date = _date_len(line, end)
    if not date:
        return 0
    end -= date
    if end == 0:
        return 0
    if line[end - 1] == 0x09:
        return total - (end - 1)
    if line[end - 1] != 0x20:
        return 0
    end -= _trailing_spaces_len(line, end)
    return total - end


def _name_common(
    line: bytes, default: bytes | None, p: int, end: int | None, terminate: int
) -> bytes | None:
    start = 0 if p == 0 else None
    i = 0
    stop = len(line) if end is None else end
    while i < stop:
        c = line[i]
        if end is None and c in _C_SPACE:
            if c == 0x0A:
                break
            if not (c == 0x20 and not terminate & _TERM_SPACE) and not (
                c == 0x09 and not terminate & _TERM_TAB
            ):
                break
        i += 1
        if c == 0x2F:
            p -= 1
            if p == 0:
                start = i
    if start is None or i == start:
        return _squash(default)
    if default is not None and len(default) < i - start and line.startswith(default, start):
        return _squash(default)  # git prefers "x" to "x.orig" or "x~"
    return _squash(line[start:i])


def _name_traditional(rest: bytes, default: bytes | None, p: int) -> bytes | None:
    if rest.startswith(b'"'):
        return _name_gnu(rest, p)
    body = rest.split(b"\n", 1)[0]
    stamp = _timestamp_len(body)
    if not stamp:
        return _name_common(rest, default, p, None, _TERM_TAB)
    return _name_common(rest, default, p, len(body) - stamp, 0)


def _guess_p(rest: bytes) -> int:
    if _is_dev_null(rest):
        return -1
    name = _name_traditional(rest, None, 0)
    if not name:
        return -1
    return -1 if b"/" in name else 0


_EPOCH = re.compile(rb"([0-2][0-9]):([0-5][0-9]):00(?:\.0+)? ([-+])([0-2][0-9]):?([0-5][0-9])\n")


def _has_epoch_timestamp(rest: bytes) -> bool:
    """GNU diff's way to say "this side does not exist": the epoch after the last tab."""
    body = rest.split(b"\n", 1)[0] + b"\n"
    tab = body.rfind(b"\t")
    if tab < 0:
        return False
    stamp = body[tab + 1 :]
    if stamp.startswith(b"1969-12-31 "):
        epoch_hour = 24
    elif stamp.startswith(b"1970-01-01 "):
        epoch_hour = 0
    else:
        return False
    m = _EPOCH.match(stamp, 11)
    if not m:
        return False
    zone = int(m.group(4)) * 60 + int(m.group(5))
    if m.group(3) == b"-":
        zone = -zone
    return int(m.group(1)) * 60 + int(m.group(2)) - zone == epoch_hour * 60


def _decode_name(name: bytes, index: int) -> str:
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DiffParseError(f"line {index + 1}: a path that is not UTF-8") from exc


def _traditional(first: bytes, second: bytes, strip: _Strip, index: int) -> FilePatch:
    """A ``---``/``+++`` pair, read as git reads it (parse_traditional_patch)."""
    old, new = first[4:], second[4:]
    if not strip.known:
        p, q = _guess_p(old), _guess_p(new)
        if p < 0:
            p = q
        if p >= 0 and p == q:
            strip.value, strip.known = p, True
    pv = strip.value
    raw = [
        _decode_name(r, index)
        for side in (old, new)
        if not _is_dev_null(side) and (r := _name_traditional(side, None, 0))
    ]
    if _is_dev_null(old):
        name = _name_traditional(new, None, pv)
    elif _is_dev_null(new):
        name = _name_traditional(old, None, pv)
    else:
        name = _name_traditional(new, _name_traditional(old, None, pv), pv)
        if _has_epoch_timestamp(old) or _has_epoch_timestamp(new):
            raise DiffParseError(
                f"line {index + 1}: a file created or deleted by an epoch timestamp; "
                "name the missing side /dev/null"
            )
    if not name:
        raise DiffParseError(f"line {index + 1}: no file name git can use in this header")
    path = _decode_name(name, index)
    old_path = None if _is_dev_null(old) else path
    new_path = None if _is_dev_null(new) and not _is_dev_null(old) else path
    return FilePatch(old_path=old_path, new_path=new_path, traditional=True, raw_names=tuple(raw))


def _no_eol(hunk: Hunk, index: int) -> None:
    if not hunk.lines:
        raise DiffParseError(f"line {index + 1}: 'No newline' marker without a line")
    tag, body = hunk.lines[-1]
    if body.endswith(b"\n"):
        hunk.lines[-1] = (tag, body[:-1])


def _header_line(cur: FilePatch, line: bytes, index: int) -> None:
    text = _chomp(line)
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
    src = _lines(original)
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


def touched_lines(fp: FilePatch) -> set[int]:
    """Post-patch line numbers the patch adds, or next to which it removes lines."""
    lines: set[int] = set()
    for hunk in fp.hunks:
        new = hunk.new_start
        for tag, _body in hunk.lines:
            if tag == 0x2B:  # '+'
                lines.add(new)
                new += 1
            elif tag == 0x2D:  # '-': gone from the new file; mark both neighbours
                lines.update((new - 1, new))
            else:
                new += 1
    return lines
