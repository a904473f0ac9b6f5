"""The control listener's answers (plain HTTP on loopback, no auth), JSON in and out.

``ControlHandler`` (``contract/server.py``, so a client never imports the
listener) parses each request and asks its app for the answer. Two
apps: ``ControlApp`` is the core contract's (``GET /health``, ``GET
/receipts``, ``POST /release {barrier}``, ``POST /reset``, ``POST
/shutdown``); ``EntryControl`` is the lifecycle contract's (docs/LIFECYCLE.md,
"Control"), over the receipt entries: ``/health``, ``/receipts``, ``/wait``,
``/release {id}``, ``/mark``, ``/wait-observed``, ``/emit`` (stdio) and
``/shutdown``, each answered ``{"ok": true}``; a wait gives up after 30 s
with 408.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..sdk import codec
from ..sdk.record import record
from .backend import Backend
from .barriers import Barriers
from .config import ScenarioFileError
from .entries import EMITTED, MARKS, OBSERVED, RECEIVED, WAIT_SECONDS, EntryLog


@record
class Reply:
    status: int
    body: Any
    after: Callable[[], None] | None = None  # runs once the answer is written
    close: bool = False


def _error(message: str, status: int = 400) -> Reply:
    return Reply(status, {"error": message})


class App(Protocol):
    stop: threading.Event

    def get(self, path: str) -> Reply | None: ...

    def post(self, path: str, payload: dict[str, Any]) -> Reply | None: ...


class ControlApp:
    """The core contract's control answers."""

    def __init__(self, backend: Backend, stop: threading.Event) -> None:
        self.backend = backend
        self.stop = stop

    def get(self, path: str) -> Reply | None:
        if path == "/health":
            return Reply(200, {"ready": True})
        if path == "/receipts":
            return Reply(200, self.backend.receipts.snapshot())
        return None

    def post(self, path: str, payload: dict[str, Any]) -> Reply | None:
        if path == "/release":
            name = payload.get("barrier")
            if not isinstance(name, str):
                return _error("barrier must be a string")
            self.backend.barriers.release(name)
            return Reply(200, {"released": name})
        if path == "/reset":
            scenario_file = payload.get("scenarioFile")
            if scenario_file is not None and not isinstance(scenario_file, str):
                return _error("scenarioFile must be a string")
            try:
                self.backend.reset(scenario_file)
            except ScenarioFileError as exc:
                return _error(str(exc))
            return Reply(200, {"reset": True})
        if path == "/shutdown":
            return Reply(200, {"shutdown": True}, after=self.stop.set, close=True)
        return None


OK = {"ok": True}


class EntryControl:
    """The lifecycle contract's control answers, over the receipt entries.

    ``emit`` writes one frame as a line of the stdio server's stdout; it is
    None over HTTP (``/emit`` is then refused). A suite that reuses these
    answers may offer fewer calls (``calls``: the POST paths besides
    ``/shutdown``; others are 404) and count other entry kinds in
    ``/wait-observed`` (``observed``: the catalogue suite counts ``rejected``
    verdicts too).
    """

    def __init__(
        self,
        entries: EntryLog,
        barriers: Barriers,
        stop: threading.Event,
        wait_seconds: float = WAIT_SECONDS,
        calls: frozenset[str] | None = None,
        observed: tuple[str, ...] = (OBSERVED,),
    ) -> None:
        self.entries = entries
        self.barriers = barriers
        self.stop = stop
        self.wait_seconds = wait_seconds
        self.emit: Callable[[Any], None] | None = None
        self.calls = calls
        self.observed = observed

    def get(self, path: str) -> Reply | None:
        if path == "/health":
            return Reply(200, {"ready": True})
        if path == "/receipts":
            return Reply(200, self.entries.snapshot())
        return None

    def post(self, path: str, payload: dict[str, Any]) -> Reply | None:
        handler = {
            "/wait": self._wait,
            "/release": self._release,
            "/mark": self._mark,
            "/wait-observed": self._wait_observed,
            "/emit": self._emit,
        }.get(path)
        if self.calls is not None and path not in self.calls:
            handler = None
        if handler is not None:
            return handler(payload)
        if path == "/shutdown":
            return Reply(200, OK, after=self.stop.set, close=True)
        return None

    def _count(self, payload: dict[str, Any]) -> int | None:
        count = payload.get("count", 1)
        return int(count) if codec.is_positive_integer(count) else None

    def _wait(self, payload: dict[str, Any]) -> Reply:
        ident, count = payload.get("id"), self._count(payload)
        if not isinstance(ident, str) or count is None:
            return _error("/wait needs a string id and a positive integer count")
        if not self.entries.wait(RECEIVED, ident, count, self.wait_seconds):
            return _error(f"{count} receipt(s) of {ident} did not arrive in time", 408)
        return Reply(200, OK)

    def _wait_observed(self, payload: dict[str, Any]) -> Reply:
        ident, count = payload.get("eventId"), self._count(payload)
        if not isinstance(ident, str) or count is None:
            return _error("/wait-observed needs a string eventId and a positive integer count")
        if not self.entries.wait(self.observed, ident, count, self.wait_seconds):
            return _error(f"{count} observation(s) of {ident} did not arrive in time", 408)
        return Reply(200, OK)

    def _release(self, payload: dict[str, Any]) -> Reply:
        ident = payload.get("id")
        if not isinstance(ident, str):
            return _error("/release needs a string id")
        self.barriers.release(ident)
        return Reply(200, OK)

    def _mark(self, payload: dict[str, Any]) -> Reply:
        scenario, kind, ident = payload.get("scenario"), payload.get("kind"), payload.get("id")
        if not isinstance(scenario, str) or not isinstance(ident, str):
            return _error("/mark needs a string scenario and a string id")
        if kind not in MARKS:
            return _error(f"/mark kind must be one of {', '.join(sorted(MARKS))}")
        self.entries.record({"kind": kind, "id": ident, "scenario": scenario})
        return Reply(200, OK)

    def _emit(self, payload: dict[str, Any]) -> Reply:
        if self.emit is None:
            return _error("/emit is for a stdio server only", 409)
        if "response" not in payload:
            return _error("/emit needs a response")
        frame = payload["response"]
        ident = frame.get("id") if isinstance(frame, dict) else None
        self.entries.record({"kind": EMITTED, "id": ident})
        self.emit(frame)
        return Reply(200, OK)
