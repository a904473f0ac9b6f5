"""Named gates: a scenario's ``barrier`` holds its reply until ``POST /release``.

A release is sticky (a later request naming the same barrier passes at once)
until ``reset``; ``release_all`` (shutdown) opens every gate, also those named
later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..sdk import rpc


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


class HeldReplies:
    """Replies held at named gates, counted so shutdown can wait for them.

    ``answer`` gives the reply at once when its gate is open (a release is
    sticky), else held until the gate opens; ``before`` runs just before the
    reply is written either way. ``drain`` waits (bounded) until every held
    reply is written.
    """

    def __init__(self, barriers: Barriers) -> None:
        self.barriers = barriers
        self._held = 0
        self._changed = threading.Condition()

    def answer(
        self,
        name: str,
        reply: Any,
        before: Callable[[], None] | None = None,
        status: int | None = None,
        raw: bytes | None = None,
    ) -> rpc.Answer:
        """``status`` and ``raw`` as ``rpc.Answer`` has them (HTTP status, verbatim bytes)."""
        gate = self.barriers.gate(name)
        if gate.is_set():
            return rpc.Answer(reply, before=before, status=status, raw=raw)
        with self._changed:
            self._held += 1
        return rpc.Answer(reply, gate=gate, sent=self._sent, before=before, status=status, raw=raw)

    def _sent(self) -> None:
        with self._changed:
            self._held -= 1
            self._changed.notify_all()

    def drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._held > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._changed.wait(remaining)
