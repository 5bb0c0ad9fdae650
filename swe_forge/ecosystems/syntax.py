"""Real parsers for the languages the adapters judge (tree-sitter grammars from PyPI).

Every adapter reads code by its syntax tree, never by text patterns: the capability scanners
(``<language>/scan.py``) resolve aliases, renamed imports and folded strings on the tree, and
the canary writers (``<language>/canary.py``) find the literals of a test's assertions on it.
This module only loads the grammars and offers what every reader of a tree needs; what a tree
*means* stays in each adapter.

The parsers run on the host, on text that comes from hostile repositories and patches:
tree-sitter never executes anything, recovers from syntax errors (``ERROR`` nodes), and is
walked here iteratively so that no nesting depth can exhaust the stack.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from typing import Any

from swe_forge.errors import UsageError

#: Grammar name -> (module, function returning the language pointer).
_GRAMMARS = {
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
}

#: Bytes of a file the readers parse at most (a larger file is read as unscannable).
MAX_PARSE_BYTES = 4 << 20


@cache
def language(name: str) -> Any:
    """The tree-sitter ``Language`` of a grammar (loaded once)."""
    import importlib

    import tree_sitter

    try:
        module, attr = _GRAMMARS[name]
    except KeyError:
        raise UsageError(f"no grammar {name!r}", hint=", ".join(sorted(_GRAMMARS))) from None
    return tree_sitter.Language(getattr(importlib.import_module(module), attr)())


def parse(name: str, source: bytes) -> Any:
    """The syntax tree of ``source`` in grammar ``name`` (a new parser each time: parsers are
    not shared between threads)."""
    import tree_sitter

    return tree_sitter.Parser(language(name)).parse(source)


def grammar_for_path(path: str) -> str:
    """The JavaScript-family grammar of a file by its extension."""
    if path.endswith(".tsx"):
        return "tsx"
    if path.endswith((".ts", ".mts", ".cts")):
        return "typescript"
    return "javascript"


def walk(node: Any) -> Iterator[Any]:
    """Every node under ``node`` (itself included), in source order, iteratively."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def text(node: Any) -> str:
    """A node's source text."""
    return bytes(node.text or b"").decode("utf-8", "replace")


def has_errors(tree: Any) -> bool:
    """Did the parser have to recover from a syntax error anywhere?"""
    return bool(tree.root_node.has_error)


def line(node: Any) -> int:
    """A node's 1-based line."""
    return int(node.start_point[0]) + 1


def ancestors(node: Any) -> Iterator[Any]:
    """The parents of ``node``, nearest first."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


# ------------------------------------------------------------------ perturbed literal values
#
# A canary's value must be of the same type and shape as the value it replaces (a string for a
# string, of the same length and made of the same kinds of characters; a number near the
# number), so that code which sees it (a comparison it replaced, a test file it read) cannot
# tell it from the value the real test holds.

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"


def perturb_text(value: str, rng: random.Random) -> str:
    """``value`` with one character changed to another of the same kind (a letter for a
    letter of the same case, a digit for a digit), length kept; "" becomes one letter."""
    if not value:
        return rng.choice(_LOWER)
    positions = [i for i, ch in enumerate(value) if ch.isalnum() and ch.isascii()]
    if not positions:
        positions = list(range(len(value)))
    i = rng.choice(positions)
    ch = value[i]
    pool = _LOWER if ch in _LOWER else _UPPER if ch in _UPPER else _DIGITS if ch in _DIGITS else ""
    if not pool:
        # Punctuation or other characters: another printable character of the same width.
        pool = "".join(c for c in "-_.:,;!?#%&*+=/" if c != ch) if ch.isascii() else "x"
    choices = [c for c in pool if c != ch]
    return value[:i] + rng.choice(choices) + value[i + 1 :]


def perturb_int(value: int, rng: random.Random) -> int:
    """A different integer near ``value`` (0 and 1 stay non-negative)."""
    step = rng.choice((1, 1, 1, 2, 3))
    if value <= 0 and value > -step:
        return value + step
    return value + rng.choice((-step, step))


def perturb_float(value: float, rng: random.Random) -> float:
    """A different float near ``value``, far outside any approximate comparison's tolerance."""
    scale = max(1.0, abs(value)) * rng.choice((0.1, 0.25, 0.5))
    return value + rng.choice((-scale, scale))
