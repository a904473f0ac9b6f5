"""The receipt entries of a lifecycle-style server: one ordered log under one lock.

Each entry is an object with a ``kind`` (docs/LIFECYCLE.md): ``received``,
``replied``, ``upload``, ``observed``, ``emitted`` (the server's own) and the
client's marks (``acquired``, ``accepted``, ``cancelled``, ``discarded``,
``chain-settled``, ``observer-blocked``); the lifecycle server also records
``observer-blocked`` itself (``{kind, id: event id}``, no ``scenario``) just
before each ``observed`` entry of a held-observer chain. ``GET /receipts`` answers
``{"entries": [...]}`` in the order recorded; ``wait`` blocks (bounded) until
enough entries of one kind name one id.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from ..sdk import codec

RECEIVED = "received"
REPLIED = "replied"
UPLOAD = "upload"
OBSERVED = "observed"
OBSERVER_BLOCKED = "observer-blocked"
EMITTED = "emitted"
MARKS = frozenset(
    {"acquired", "accepted", "cancelled", "discarded", "chain-settled", "observer-blocked"}
)
WAIT_SECONDS = 30.0  # a control wait gives up after this long (408)


def _id_key(value: Any) -> str:
    return codec.dumps(value)


class EntryLog:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._entries: list[dict[str, Any]] = []
        self._counts: Counter[tuple[str, str]] = Counter()

    def record(
        self, entry: dict[str, Any], key: str = "id", before: dict[str, Any] | None = None
    ) -> int:
        """Append ``entry`` (``before`` first, when given, under the same lock, so
        nothing comes between them); returns how many entries of its kind name the
        same ``key`` value (this one included)."""
        counted = (entry["kind"], _id_key(entry.get(key)))
        with self._changed:
            if before is not None:
                self._entries.append(before)
                self._counts[(before["kind"], _id_key(before.get("id")))] += 1
            self._entries.append(entry)
            self._counts[counted] += 1
            self._changed.notify_all()
            return self._counts[counted]

    def count(self, kind: str, ident: Any) -> int:
        with self._changed:
            return self._counts[(kind, _id_key(ident))]

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """The ``GET /receipts`` answer."""
        with self._changed:
            return {"entries": codec.clone(self._entries)}

    def wait(
        self, kind: str | tuple[str, ...], ident: Any, count: int, timeout: float = WAIT_SECONDS
    ) -> bool:
        """True once ``count`` entries of ``kind`` (of any of several kinds, added
        up) name ``ident``; False on timeout."""
        deadline = time.monotonic() + timeout
        kinds = (kind,) if isinstance(kind, str) else kind
        counted = [(name, _id_key(ident)) for name in kinds]
        with self._changed:
            while sum(self._counts[key] for key in counted) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True
