"""Every terminating signal ends a run the same way, and never in the middle of cleanup.

While `handled()` is active, SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt
in the main thread, so a closed terminal or a CI runner's SIGTERM cleans up
like Ctrl-C. Inside `deferred()` (creating the temp dir and registering its
removal, tearing everything down) a signal only marks itself and is raised
when the block ends; after `hold()` it is only marked, so the report can be
written in peace, and `arrived()` says whether one came.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _State:
    installed = 0
    depth = 0
    pending: int | None = None
    seen = False


_state = _State()


def _handler(signum: int, frame: FrameType | None) -> None:
    _state.seen = True
    if _state.depth > 0:
        _state.pending = signum
        return
    raise KeyboardInterrupt


@contextmanager
def handled() -> Iterator[None]:
    """Turn every terminating signal into KeyboardInterrupt (nests; main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = None
    if _state.installed == 0:
        previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
        _state.depth, _state.pending, _state.seen = 0, None, False
        for sig in SIGNALS:
            signal.signal(sig, _handler)
    _state.installed += 1
    try:
        yield
    finally:
        _state.installed -= 1
        if previous is not None:
            for sig, old in previous.items():
                signal.signal(sig, old)
            _state.depth, _state.pending = 0, None


@contextmanager
def deferred() -> Iterator[None]:
    """A signal inside the block waits until the block is over."""
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if _state.depth == 0 and _state.pending is not None:
            _state.pending = None
            raise KeyboardInterrupt


def hold() -> None:
    """From now until `handled()` ends, signals are only recorded."""
    _state.depth += 1


def arrived() -> bool:
    """Whether a signal came while `handled()` was active."""
    return _state.seen
