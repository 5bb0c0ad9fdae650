"""git object ids computed locally (no repository needed)."""

from __future__ import annotations

import hashlib

#: The id git shows for "no object" (the old side of an added file, the new side of a deletion).
NULL_ID = "0" * 40


def blob_id(data: bytes) -> str:
    """git's object id of a blob with this content: SHA-1 of ``blob <size>\\0<data>``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
