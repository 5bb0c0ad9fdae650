"""Where predictions are graded: in this process (threads, the default) or on a cluster.

The local executor lives in :mod:`swe_forge.commands.verify` (a thread pool). Other executors
are optional extras and are imported only when asked for: nothing here imports them.
"""

from __future__ import annotations

#: The executors ``verify --executor`` accepts.
EXECUTORS = ("local", "ray")
