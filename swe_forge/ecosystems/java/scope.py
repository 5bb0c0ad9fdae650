"""Which Java tests a test patch defines or changes: test methods by their annotations, helpers by
their callers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: A method declaration's first line. Its type starts with a word character and is no keyword:
#: an indented call continued on the next line (`assertEquals("...",`) or `return f(` is no
#: declaration (first contact, jhy/jsoup-2579: a call read as a changed helper put all 60
#: tests of its class into FAIL_TO_PASS).
_METHOD = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|protected|private|static|final|synchronized|"
    r"abstract|default)\s+)*(?:<[^>]+>\s+)?(?!(?:return|new|throw|else|case|yield)\b)"
    r"\w[\w.<>\[\], ?]*\s+(\w+)\s*\([^;]*$"
)


def method_base(name: str) -> str:
    """``check[2]`` / ``check(String)[1]`` -> ``check``."""
    return re.split(r"[\[(]", name, maxsplit=1)[0]


@dataclass(frozen=True)
class JavaScope:
    """The tests a test patch defines or changes: methods its changed lines fall in, and every
    test of a test class it creates."""

    names: frozenset[tuple[str, str]]  # (class FQN, method)
    new_classes: frozenset[str]

    def covers(self, test: str) -> bool:
        """Is ``test`` (``Class::method``) defined or changed by the test patch?"""
        cls, _, name = test.partition("::")
        outer = cls.split("$", 1)[0]
        if outer in self.new_classes:
            return True
        return (cls, method_base(name)) in self.names or (outer, method_base(name)) in self.names


_NOT_METHODS = ("if", "for", "while", "switch", "catch", "return", "synchronized", "new")


_TEST_ANNOTATION = re.compile(
    r"@(?:org\.junit\.(?:jupiter\.api\.|jupiter\.params\.)?)?(Test|ParameterizedTest|"
    r"RepeatedTest|TestFactory|TestTemplate|Theory)\b"
)


#: Lexer states at a line's start: in code, in a block comment, in a text block.
CODE, BLOCK, TEXT = "", "block", "text"


def code_only(line: str, state: str = CODE) -> tuple[str, str]:
    """``line`` with what javac does not read as code blanked (comments, and the contents of
    string, character and text-block literals; their quotes stay), and the lexer's state at
    the line's end. The declarations are read on this: a licence line such as ``documentation
    files (the "Software")`` or a string holding ``foo(`` is no method."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if state == BLOCK:
            end = line.find("*/", i)
            if end < 0:
                out.append(" " * (n - i))
                return "".join(out), BLOCK
            out.append(" " * (end + 2 - i))
            i, state = end + 2, CODE
            continue
        if state == TEXT:
            j = i
            while j < n:
                if line[j] == "\\":
                    j += 2
                    continue
                if line.startswith('"""', j):
                    break
                j += 1
            if j >= n:
                out.append(" " * (n - i))
                return "".join(out), TEXT
            out.append(" " * (j - i) + '"""')
            i, state = j + 3, CODE
            continue
        ch = line[i]
        if line.startswith("//", i):
            out.append(" " * (n - i))
            break
        if line.startswith("/*", i):
            out.append("  ")
            i, state = i + 2, BLOCK
        elif line.startswith('"""', i):
            out.append('"""')
            i, state = i + 3, TEXT
        elif ch in "\"'":
            j = i + 1
            while j < n and line[j] != ch:
                j += 2 if line[j] == "\\" else 1
            out.append(ch + " " * (min(j, n) - i - 1) + (ch if j < n else ""))
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), state


def code_lines(lines: list[str], state: str = CODE) -> tuple[list[str], list[str]]:
    """Each line read as code (:func:`code_only`), and the lexer's state at each line's
    start (what a hunk that starts there starts in)."""
    code, starts = [], []
    for line in lines:
        starts.append(state)
        text, state = code_only(line, state)
        code.append(text)
    return code, starts


def _enclosing(lines: list[str], index: int) -> tuple[str, int]:
    """(name, line index) of the nearest method declared at or above ``lines[index]``."""
    for i in range(min(index, len(lines) - 1), -1, -1):
        m = _METHOD.match(lines[i])
        if m and m.group(1) not in _NOT_METHODS:
            return m.group(1), i
    return "", -1


def _is_helper(lines: list[str], name: str) -> bool:
    """Is ``name`` declared in ``lines`` as a method without a test annotation?"""
    for i, line in enumerate(lines):
        m = _METHOD.match(line)
        if not m or m.group(1) != name:
            continue
        if name.startswith("test"):  # JUnit 3
            return False
        j = i - 1
        head = [line]
        while j >= 0 and (
            not lines[j].strip() or lines[j].lstrip().startswith(("@", "//", "*", "/*"))
        ):
            head.append(lines[j])
            j -= 1
        return not any(_TEST_ANNOTATION.search(h) for h in head)
    return False
