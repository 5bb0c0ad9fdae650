"""Python's own parser, one thread at a time.

CPython 3.11 and 3.12 keep the AST converter's recursion depth per interpreter, not per
thread: two threads that parse at once can end in ``SystemError: AST constructor recursion
depth mismatch`` (python/cpython#106905). ``verify --jobs 2`` grades in threads, each reading
the candidate's Python on the host, and did (one gold patch in ten graded ``infra_error``).
Every parse of the host's goes through :func:`parse`.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, holding the parser's lock."""
    with _LOCK:
        return ast.parse(source, filename=filename)


@contextmanager
def parsing() -> Iterator[None]:
    """Hold the parser's lock around code that parses through ``ast`` itself (the judge's
    own modules, shared with the container, which cannot import this one)."""
    with _LOCK:
        yield
