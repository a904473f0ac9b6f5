"""The control calls our clients make, served in front of a contract v1 receiver.

A contract v1 receiver (an SDK's own non-core adapter) has no control listener
of ours. This one answers `/health`, `/receipts` (the receiver's own record,
read by `Record.receipts`, with every mark placed where that record stood when
the mark came), `/mark`, `/release` and `/wait-observed` (nothing is held, and a
v1 receiver records no notification to wait for: both end at once, and the
verdict finds what the record lacks) and `/shutdown`, on runtime/listener.py's
`serve`. Standard library and runtime/listener.py only: the compaction suite's
stdio bridge (a process of its own) serves it too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from interop.runtime import listener
from interop.runtime.listener import Reply, Request

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


def _reply(status: int, value: Any) -> Reply:
    return Reply(status, json.dumps(value).encode())


def _mark(record: Record, body: bytes) -> Reply:
    """A mark, placed where the receiver's record stands now."""
    try:
        mark = json.loads(body)
    except ValueError:
        return _reply(400, {"error": "not JSON"})
    entries, problem = record.receipts()
    if entries is None:
        return _reply(502, {"error": problem})
    entry = {k: mark.get(k) for k in ("kind", "id", "scenario")}
    with record.lock:
        record.marks.append((len(entries), entry))
    return _reply(200, {"ok": True})


def answer(record: Record, request: Request) -> Reply:
    """A control call, answered from `record` (see the module's text)."""
    if request.method == "GET":
        if request.path == "/health":
            return _reply(200, {"ready": True})
        if request.path == "/receipts":
            merged, problem = record.merged()
            if merged is None:
                return _reply(502, {"error": problem})
            return _reply(200, {"entries": merged})
        return _reply(404, {"error": "unknown"})
    body = request.body if request.body is not None else b"{}"
    if request.path == "/mark":
        return _mark(record, body)
    if request.path == "/shutdown":
        return _reply(200, {"shutdown": True})
    if request.path in ("/release", "/wait-observed"):
        return _reply(200, {"ok": True})
    return _reply(404, {"error": "unknown"})


def serve(record: Record) -> tuple[listener.Listener, str]:
    """The control listener on loopback, served by a thread, and its URL."""
    control = listener.serve(
        lambda request: answer(record, request), methods=("GET", "POST"), body_limit=65536
    )
    return control, control.url()
