"""Split a PR's diff into the gold ``patch`` and the held-out ``test_patch``, and prove it.

The proof: parse the emitted text back with :mod:`swe_forge.diffs` (a different parser from
libgit2, which wrote it), apply every hunk to the base version of its file with a strict
applier (context must match exactly, no fuzz, no offsets), and check that the result is the
file at the merge commit: its git blob id (a hash of the content) must be the merged file's.
Every touched file must round-trip, or the PR is rejected with ``split_mismatch``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from swe_forge.diffs import DiffParseError, PatchApplyError, apply_file_patch, parse_diff
from swe_forge.git.objects import blob_id
from swe_forge.git.repo import MODE_SUBMODULE, MODE_SYMLINK, FileChange
from swe_forge.mining.classify import FileKind, PathClassifier
from swe_forge.records import Reason


@dataclass(frozen=True)
class Split:
    """The result of splitting a PR's diff."""

    patch: str
    test_patch: str
    source_files: tuple[str, ...]
    test_files: tuple[str, ...]
    lines_added: int
    lines_removed: int


@dataclass(frozen=True)
class SplitRejection:
    """A PR that cannot be split into a usable pair of patches."""

    reason: Reason
    detail: str


def _kind(change: FileChange, classifier: PathClassifier) -> FileKind:
    kinds = [classifier.classify(p) for p in change.paths]
    # A rename that touches a test path on either side belongs with the tests: the candidate
    # must never see, and the verifier must own, anything on the test side.
    if FileKind.TEST in kinds:
        return FileKind.TEST
    if FileKind.SOURCE in kinds:
        return FileKind.SOURCE
    return kinds[-1] if kinds else FileKind.SOURCE


def check_kinds(
    changes: Sequence[FileChange], classifier: PathClassifier
) -> list[FileKind] | SplitRejection:
    """Reject PRs that are not source + tests; needs paths only (no diff text).

    Returns each change's kind when the PR changes at least one source and one test file.
    """
    if not changes:
        return SplitRejection(Reason.EMPTY_DIFF, "the PR changes no files")
    kinds = [_kind(ch, classifier) for ch in changes]
    has_source = FileKind.SOURCE in kinds
    has_test = FileKind.TEST in kinds
    if not has_source and not has_test:
        found = sorted({k.value for k in kinds})
        return SplitRejection(Reason.NO_CODE_CHANGE, f"only {', '.join(found)} files changed")
    if not has_source:
        return SplitRejection(Reason.TEST_ONLY, "only test files changed")
    if not has_test:
        return SplitRejection(Reason.NO_TEST_CHANGE, "no test file changed")
    test_paths = [
        p for ch, k in zip(changes, kinds, strict=True) if k is FileKind.TEST for p in ch.paths
    ]
    sources = [
        p for ch, k in zip(changes, kinds, strict=True) if k is FileKind.SOURCE for p in ch.paths
    ]
    if not any(classifier.is_test_module(p) for p in test_paths) and not any(
        classifier.is_test_data(p, sources) for p in test_paths
    ):
        # Helpers, fixtures or conftest.py alone cannot hold a failing-then-passing test; the
        # case files of data-driven tests can (their test directory's modules run them).
        return SplitRejection(Reason.NO_TEST_MODULE, "the test side changes no test module")
    return kinds


def split_changes(
    changes: Sequence[FileChange],
    classifier: PathClassifier,
    *,
    max_files: int,
    max_lines: int,
) -> Split | SplitRejection:
    """Classify each change and build the two patches, or say why not.

    Checks in order: file kinds (source + tests), submodules, symlinks, binary files, UTF-8,
    then the caps on files and lines.
    """
    kinds = check_kinds(changes, classifier)
    if isinstance(kinds, SplitRejection):
        return kinds
    for ch in changes:
        modes = (ch.old_mode, ch.new_mode)
        if MODE_SUBMODULE in modes:
            return SplitRejection(Reason.SUBMODULE_CHANGE, f"submodule change: {ch.path}")
        if MODE_SYMLINK in modes:
            return SplitRejection(Reason.SYMLINK_CHANGE, f"symlink change: {ch.path}")
        if ch.is_binary:
            return SplitRejection(Reason.BINARY_CHANGE, f"binary file change: {ch.path}")
    texts: list[str] = []
    for ch in changes:
        try:
            texts.append(ch.patch.decode("utf-8"))
        except UnicodeDecodeError:
            return SplitRejection(Reason.NON_UTF8_DIFF, f"diff of {ch.path} is not valid UTF-8")
    if len(changes) > max_files:
        return SplitRejection(
            Reason.TOO_MANY_FILES, f"{len(changes)} files changed (cap {max_files})"
        )
    added = sum(ch.additions for ch in changes)
    removed = sum(ch.deletions for ch in changes)
    if added + removed > max_lines:
        return SplitRejection(
            Reason.TOO_MANY_LINES, f"{added + removed} lines changed (cap {max_lines})"
        )
    # Docs and packaging changes ride along in the gold patch: they are part of the fix as
    # merged, and the candidate is never asked to reproduce them. What the verifier forbids a
    # candidate to touch (tests, CI, runner configuration) is held out with the tests, so the
    # gold patch is itself a patch the verifier accepts.
    held = [
        k is FileKind.TEST or any(classifier.is_harness_owned(p) for p in ch.paths)
        for ch, k in zip(changes, kinds, strict=True)
    ]
    return Split(
        patch="".join(t for t, h in zip(texts, held, strict=True) if not h),
        test_patch="".join(t for t, h in zip(texts, held, strict=True) if h),
        source_files=tuple(ch.path for ch, h in zip(changes, held, strict=True) if not h),
        test_files=tuple(ch.path for ch, h in zip(changes, held, strict=True) if h),
        lines_added=added,
        lines_removed=removed,
    )


def verify_roundtrip(
    split: Split,
    changes: Sequence[FileChange],
    read_blob: Callable[[str], bytes],
) -> str | None:
    """Check that base + patch + test_patch reproduces the merge for every touched file.

    Returns None when it does, else a description of the first mismatch.
    """
    by_path = {ch.path: ch for ch in changes}
    seen: set[str] = set()
    for text in (split.patch, split.test_patch):
        if not text:
            continue
        try:
            parsed = parse_diff(text)
        except (DiffParseError, UnicodeDecodeError) as exc:
            return f"emitted diff does not parse: {exc}"
        for fp in parsed:
            ch = by_path.get(fp.path)
            if ch is None:
                return f"emitted diff names {fp.path!r}, which the PR does not change"
            if (fp.old_path, fp.new_path) != (ch.old_path, ch.new_path):
                return f"paths of {fp.path!r} do not round-trip: {(fp.old_path, fp.new_path)}"
            if fp.path in seen:
                return f"{fp.path!r} appears twice in the emitted diffs"
            try:
                result = apply_file_patch(read_blob(ch.old_blob), fp)
            except PatchApplyError as exc:
                return str(exc)
            # The merged file is known by its object id: hashing the result the way git does
            # proves the same as reading the merged blob back, at a fraction of the cost.
            if not ch.new_path:
                same = result == b""
            elif len(ch.new_blob) == 40:
                same = blob_id(result) == ch.new_blob
            else:  # not a SHA-1 object id: compare with the content itself
                same = result == read_blob(ch.new_blob)
            if not same:
                return f"{fp.path}: applying the emitted hunks does not give the merged file"
            seen.add(fp.path)
    missing = sorted(set(by_path) - seen)
    if missing:
        return f"{missing[0]}: changed by the PR but absent from the emitted diffs"
    return None
