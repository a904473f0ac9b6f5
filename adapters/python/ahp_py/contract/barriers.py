"""Named gates: a scenario's ``barrier`` holds its reply until ``POST /release``.

A release is sticky (a later request naming the same barrier passes at once)
until ``reset``; ``release_all`` (shutdown) opens every gate, also those named
later.
"""

from __future__ import annotations

import threading


class Barriers:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}
        self._open = False  # after release_all, every gate is open

    def gate(self, name: str) -> threading.Event:
        with self._lock:
            event = self._events.setdefault(name, threading.Event())
            if self._open:
                event.set()
            return event

    def release(self, name: str) -> None:
        self.gate(name).set()

    def reset(self) -> None:
        """Forget every release; replies still held stay held (their gates are kept)."""
        with self._lock:
            self._events = {name: e for name, e in self._events.items() if not e.is_set()}

    def release_all(self) -> None:
        with self._lock:
            self._open = True
            for event in self._events.values():
                event.set()
