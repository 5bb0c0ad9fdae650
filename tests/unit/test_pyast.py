"""The host's Python parser, one thread at a time (python/cpython#106905)."""

from __future__ import annotations

import ast
import threading
import time

from swe_forge import pyast


def test_parse_is_ast_parse() -> None:
    tree = pyast.parse("def f(x):\n    return x + 1\n", "m.py")
    assert isinstance(tree, ast.Module)
    assert ast.dump(tree) == ast.dump(ast.parse("def f(x):\n    return x + 1\n"))


def test_a_parse_waits_while_another_thread_parses() -> None:
    order: list[str] = []
    held = threading.Event()

    def other() -> None:
        held.wait(5)
        pyast.parse("x = 1\n")
        order.append("other parsed")

    thread = threading.Thread(target=other)
    thread.start()
    with pyast.parsing():
        held.set()
        time.sleep(0.2)  # the other thread is at its parse by now, and must wait
        order.append("holder done")
        # Re-entrant: the holder may parse inside its own hold.
        pyast.parse("y = 2\n")
    thread.join(5)
    assert order == ["holder done", "other parsed"]
