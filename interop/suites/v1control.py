"""The control calls our clients make, served in front of a contract v1 receiver.

A contract v1 receiver (an SDK's own non-core adapter) has no control listener
of ours. This one answers `/health`, `/receipts` (the receiver's own record,
read by `Record.receipts`, with every mark placed where that record stood when
the mark came), `/mark`, `/release` and `/wait-observed` (nothing is held, and a
v1 receiver records no notification to wait for: both end at once, and the
verdict finds what the record lacks) and `/shutdown`. Standard library only: the
compaction suite's stdio bridge (a process of its own) serves it too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Entries = tuple[list[dict[str, Any]] | None, str | None]  # (entries, or why there are none)


@dataclass
class Record:
    receipts: Callable[[], Entries]
    marks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def merged(self) -> Entries:
        """The receiver's entries with the marks in their places."""
        entries, problem = self.receipts()
        if entries is None:
            return None, problem
        with self.lock:
            marks = list(self.marks)
        merged: list[Any] = []
        for position, entry in enumerate([*entries, None]):
            merged += [mark for at, mark in marks if at == position]
            if entry is not None:
                merged.append(entry)
        return merged, None


def serve(record: Record) -> tuple[ThreadingHTTPServer, str]:
    """The control listener on loopback, served by a thread, and its URL."""

    class Control(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def _answer(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self._answer(200, {"ready": True})
            elif self.path == "/receipts":
                merged, problem = record.merged()
                if merged is None:
                    self._answer(502, {"error": problem})
                else:
                    self._answer(200, {"entries": merged})
            else:
                self._answer(404, {"error": "unknown"})

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size) if 0 < size <= 65536 else b"{}"
            if self.path == "/mark":
                try:
                    mark = json.loads(body)
                except ValueError:
                    self._answer(400, {"error": "not JSON"})
                    return
                entries, problem = record.receipts()
                if entries is None:
                    self._answer(502, {"error": problem})
                    return
                entry = {k: mark.get(k) for k in ("kind", "id", "scenario")}
                with record.lock:
                    record.marks.append((len(entries), entry))
                self._answer(200, {"ok": True})
            elif self.path == "/shutdown":
                self._answer(200, {"shutdown": True})
            elif self.path in ("/release", "/wait-observed"):
                self._answer(200, {"ok": True})
            else:
                self._answer(404, {"error": "unknown"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
