"""Short excerpts of long tool output that keep the line that says what went wrong.

Build and test tools print the error first and pages of context, summaries and advice after it
(Maven's ``[ERROR]`` block ends with help links; npm's ``ERR!`` lines with a log path; a Go
panic with goroutine dumps). Keeping only the end of such output keeps the advice and loses the
error. :func:`excerpt` keeps the first error lines and the end, within a size limit.
"""

from __future__ import annotations

import re

#: Lines that say what went wrong, in the words of the tools we run.
_ERROR_LINE = re.compile(
    r"^\s*(?:\[ERROR\]|ERROR\b|error(?:\[E\d+\])?:|E\s{2,}|npm (?:ERR!|error)|FATAL|fatal:"
    r"|panic:|Traceback|\w*(?:Error|Exception)\b[:\s]|Caused by:|FAILED?\b|cannot |Could not )",
    re.IGNORECASE,
)
_GAP = "\n[...]\n"


def excerpt(text: str, limit: int = 4000) -> str:
    """``text`` if it fits in ``limit`` characters; else its first error lines (up to half the
    limit, in order, with the line after each for context) and as much of its end as fits."""
    if len(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    picked: list[int] = []
    budget = limit // 2
    for i, line in enumerate(lines):
        if starts[i] >= len(text) - limit // 2:
            break  # from here on, the end that is kept anyway
        if _ERROR_LINE.match(line):
            for j in (i, i + 1):
                if j < len(lines) and j not in picked and budget - min(len(lines[j]), 500) > 0:
                    picked.append(j)
                    budget -= min(len(lines[j]), 500)
            if budget <= limit // 20:
                break
    if not picked:
        return text[-limit:]
    head = "".join(lines[j][:500].rstrip("\n") + "\n" for j in picked)
    room = max(0, limit - len(head) - 2 * len(_GAP))
    return f"{_GAP.lstrip()}{head}{_GAP.strip()}\n{text[-room:] if room else ''}"
