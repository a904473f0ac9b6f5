"""Receipts: every AHP message the server received, by kind, in arrival order.

``request``: a message with an ``id`` other than capability discovery (every
``hooks/intercept``, also one answered with an error); ``discovery``:
``hooks/capabilities``; ``notification``: a message without an ``id``. With a
receipt log, each receipt is appended as one line ``{"kind", "message"}`` and
flushed before the reply is written. The log is append-only: ``clear`` empties
the lists ``GET /receipts`` answers, never the log.
"""

from __future__ import annotations

import threading
from typing import Any, BinaryIO

from ..sdk import codec, rpc

REQUEST = "request"
DISCOVERY = "discovery"
NOTIFICATION = "notification"
LISTS = {REQUEST: "requests", DISCOVERY: "discovery", NOTIFICATION: "notifications"}


def kind_of(message: dict[str, Any]) -> str:
    if rpc.is_notification(message):
        return NOTIFICATION
    return DISCOVERY if message.get("method") == rpc.CAPABILITIES else REQUEST


class Receipts:
    def __init__(self, log_path: str | None) -> None:
        self._lock = threading.Lock()
        self._lists: dict[str, list[Any]] = {kind: [] for kind in LISTS}
        # Kept open for the server's lifetime; every record is flushed at once.
        self._log: BinaryIO | None = open(log_path, "ab") if log_path else None  # noqa: SIM115

    def record(self, kind: str, message: Any) -> None:
        line = codec.dump_bytes({"kind": kind, "message": message}) + b"\n"
        with self._lock:
            self._lists[kind].append(message)
            if self._log is not None:
                self._log.write(line)
                self._log.flush()

    def snapshot(self) -> dict[str, list[Any]]:
        """The ``GET /receipts`` answer."""
        with self._lock:
            return {name: list(self._lists[kind]) for kind, name in LISTS.items()}

    def clear(self) -> None:
        with self._lock:
            for entries in self._lists.values():
                entries.clear()
