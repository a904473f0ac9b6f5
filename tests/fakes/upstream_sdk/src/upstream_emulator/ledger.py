"""The lifecycle server's shared state: receipt entries in record order, sticky gates,
the stop signal (the `lifecycle` and `catalogue` suites; core keeps `board.py`).

Entries are appended under one lock and every append wakes the control waits
(`/wait`, `/wait-observed`). A gate is a named barrier: a held reply or a held
observer waits on it until `/release` opens it (sticky: later waits pass at
once) or the server stops (every gate opens).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Entry = dict[str, Any]


class Ledger:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._entries: list[Entry] = []
        self._gates: dict[str, threading.Event] = {}
        self._all_open = False
        self.stopping = threading.Event()
        self.on_stop: list[Callable[[], None]] = []

    def record(self, entry: Entry) -> None:
        with self._changed:
            self._entries.append(entry)
            self._changed.notify_all()

    def entries(self) -> list[Entry]:
        with self._changed:
            return list(self._entries)

    def count(self, test: Callable[[Entry], bool]) -> int:
        with self._changed:
            return sum(1 for entry in self._entries if test(entry))

    def wait_for(self, test: Callable[[Entry], bool], count: int, timeout: float) -> bool:
        """True once `count` entries pass `test` (False at the timeout or the stop)."""
        with self._changed:
            reached = self._changed.wait_for(
                lambda: (
                    self.stopping.is_set()
                    or sum(1 for entry in self._entries if test(entry)) >= count
                ),
                timeout,
            )
            return bool(reached) and not self.stopping.is_set()

    def _gate(self, name: str) -> threading.Event:
        with self._changed:
            gate = self._gates.setdefault(name, threading.Event())
            if self._all_open:
                gate.set()
            return gate

    def release(self, name: str) -> None:
        self._gate(name).set()

    def hold(self, name: str) -> None:
        """Wait until the gate opens: a release, or the stop (no other bound)."""
        self._gate(name).wait()

    def stop(self) -> None:
        """Open every gate, wake every wait, signal the stop, run the stop hooks."""
        with self._changed:
            self._all_open = True
            gates = list(self._gates.values())
            self.stopping.set()
            self._changed.notify_all()
        for gate in gates:
            gate.set()
        for hook in self.on_stop:
            hook()
