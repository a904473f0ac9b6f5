"""One memo for values made once per object: what the speed work's five identity memos share.

The harness reads the same objects many times (a scenario set for every combination,
a scenario request for every receipt, a schema node for every validation); a value
made from one of them is kept under the identity of its owners. Two rules make that
safe, both kept here once:

* the owners are kept alive with the value, so no other object can take their ids
  while the entry exists, and a hit is checked by identity (`is`), never by id alone;
* reads are one `dict.get` (atomic under the interpreter lock) and writes take the
  memo's lock, so job threads share a memo without tearing it: two threads that miss
  at once both make the value, and either result is right (a memo holds only values
  that are a function of their owners).

At `limit` entries the memo forgets everything at once (fuzzing makes new objects
without end); figures for each memo are kept where it is made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """Values made once per tuple of owners (and an optional hashable `variant`)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._found: dict[Hashable, tuple[tuple[object, ...], V]] = {}
        self._lock = threading.Lock()

    def made(
        self, owners: tuple[object, ...], make: Callable[[], V], variant: Hashable = None
    ) -> V:
        """The value kept for exactly these owners (by identity) and variant, made by
        `make` and kept (the owners alive with it) the first time."""
        key = (tuple(map(id, owners)), variant)
        found = self._found.get(key)
        if found is not None and all(k is o for k, o in zip(found[0], owners, strict=True)):
            return found[1]
        value = make()
        with self._lock:
            if self.limit is not None and len(self._found) >= self.limit:
                self._found.clear()
            self._found[key] = (owners, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._found.clear()

    def __len__(self) -> int:
        return len(self._found)

    def values(self) -> list[V]:
        """Every value kept (for tests of a memo's figures)."""
        return [value for _, value in list(self._found.values())]
