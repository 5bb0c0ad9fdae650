"""The host end of the harness channel: a Unix socket that accepts exactly one connection.

The harness plugin connects while pytest parses its options (before any code under test runs)
and streams one JSON event per line. Only the first connection is read; later ones are
refused and counted (something besides the harness tried to talk). Input is bounded (line
length, total bytes) and validated; anything malformed is evidence of tampering.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_MAX_LINE = 64 * 1024
_MAX_TOTAL = 16 * 1024 * 1024
_EVENTS = {"hello", "test", "collect_error", "tamper", "end"}
_OUTCOMES = {"passed", "failed", "error", "skipped", "xfailed", "xpassed"}


@dataclass
class ChannelLog:
    """What arrived over the channel."""

    connected: bool = False
    extra_connections: int = 0
    tests: dict[str, str] = field(default_factory=dict)
    collect_errors: list[str] = field(default_factory=list)
    tamper: list[str] = field(default_factory=list)
    ended: bool = False
    exitstatus: int | None = None
    bytes: int = 0


class Channel:
    """Serve one harness connection on ``path`` in a background thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log = ChannelLog()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        os.chmod(path, 0o666)  # the container's user is not the host's
        self._sock.listen(4)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._eof = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        conn: socket.socket | None = None
        while not self._stop.is_set():
            try:
                other, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if conn is None:
                conn = other
                self.log.connected = True
                threading.Thread(target=self._read, args=(conn,), daemon=True).start()
            else:
                self.log.extra_connections += 1
                self.log.tamper.append("a second connection to the harness channel")
                other.close()

    def _read(self, conn: socket.socket) -> None:
        buf = b""
        conn.settimeout(0.5)
        while not self._stop.is_set():
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            self.log.bytes += len(chunk)
            if self.log.bytes > _MAX_TOTAL:
                self.log.tamper.append("the harness channel overflowed")
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self._event(line)
            if len(buf) > _MAX_LINE:
                self.log.tamper.append("an over-long line on the harness channel")
                break
        conn.close()
        self._eof.set()

    def _event(self, line: bytes) -> None:
        try:
            event: Any = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            self.log.tamper.append("a malformed event on the harness channel")
            return
        if not isinstance(event, dict) or event.get("event") not in _EVENTS:
            self.log.tamper.append("an unknown event on the harness channel")
            return
        kind = event["event"]
        if self.log.ended:
            self.log.tamper.append(f"a {kind} event after the session ended")
            return
        if kind == "test":
            nodeid, outcome = event.get("nodeid"), event.get("outcome")
            if not isinstance(nodeid, str) or outcome not in _OUTCOMES:
                self.log.tamper.append("a malformed test event")
                return
            if nodeid in self.log.tests:
                # The harness reports each test once; a second report is forged.
                self.log.tamper.append(f"{nodeid} was reported twice")
                return
            self.log.tests[nodeid] = str(outcome)
        elif kind == "collect_error":
            self.log.collect_errors.append(str(event.get("nodeid")))
        elif kind == "tamper":
            self.log.tamper.append(str(event.get("detail"))[:500])
        elif kind == "end":
            self.log.ended = True
            status = event.get("exitstatus")
            self.log.exitstatus = status if isinstance(status, int) else None
            if event.get("tampered"):
                self.log.tamper.append(str(event["tampered"])[:500])

    def close(self, drain_seconds: float = 2.0) -> ChannelLog:
        """Wait (briefly) for the harness to hang up, stop serving, return what arrived."""
        if self.log.connected:
            self._eof.wait(timeout=drain_seconds)
        self._stop.set()
        self._thread.join(timeout=2)
        try:
            self._sock.close()
        finally:
            if self.path.exists():
                self.path.unlink()
        return self.log
