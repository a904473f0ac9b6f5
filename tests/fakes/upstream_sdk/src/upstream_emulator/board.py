"""The server's shared state: receipts in arrival order, sticky barriers, the stop signal."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any


class Board:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._receipts: list[dict[str, Any]] = []
        self._barriers: dict[str, threading.Event] = {}
        self._all_released = False
        self.stopping = threading.Event()
        self.on_stop: list[Callable[[], None]] = []

    def record(self, event_id: str, message: dict[str, Any]) -> None:
        """A receipt as the upstream SDK servers keep it: the request wrapped. A test
        that sets UPSTREAM_EMULATOR_FAULT=forget-receipts gets a server that keeps none
        (the harness must notice a server whose own record is wrong)."""
        if os.environ.get("UPSTREAM_EMULATOR_FAULT") == "forget-receipts":
            return
        with self._lock:
            self._receipts.append(
                {"id": event_id, "method": message.get("method"), "message": message}
            )

    def receipts(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._receipts)

    def _barrier(self, name: str) -> threading.Event:
        with self._lock:
            event = self._barriers.setdefault(name, threading.Event())
            if self._all_released:
                event.set()
            return event

    def release(self, name: str) -> None:
        self._barrier(name).set()  # sticky: a later wait passes at once

    def wait(self, name: str, timeout: float) -> None:
        self._barrier(name).wait(timeout)

    def stop(self) -> None:
        """Release every barrier, signal the stop, run the stop hooks."""
        with self._lock:
            self._all_released = True
            events = list(self._barriers.values())
        for event in events:
            event.set()
        self.stopping.set()
        for hook in self.on_stop:
            hook()
