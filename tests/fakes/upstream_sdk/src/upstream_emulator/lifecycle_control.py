"""The lifecycle server's control listener ("test control v1"), for both suites.

GET /health, GET /receipts ({entries}); POST /wait {id, count} (received
entries), POST /wait-observed {eventId, count} (observed or rejected entries),
both bounded by 30 s then 408; POST /release {id} (sticky); POST /mark {kind,
id, scenario} (appended as given); POST /emit {response} (stdio only: recorded
`emitted`, then written as a line); POST /shutdown. Anything else is 404.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from upstream_emulator.httpserve import Reply, Request, Route
from upstream_emulator.ledger import Entry, Ledger

WAIT_SECONDS = 30.0
OK = {"ok": True}
NOT_FOUND = Reply(404, {"error": "Not found"})
INVALID = Reply(400, {"error": "Invalid request"})
Emit = Callable[[Any], None]


def _body(request: Request) -> dict[str, Any] | None:
    raw = request.body()
    if raw is not None and not raw.strip():
        return {}  # no body (POST /shutdown)
    try:
        body = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _count(body: dict[str, Any]) -> int | None:
    count = body.get("count", 1)
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _received(ident: str) -> Callable[[Entry], bool]:
    return lambda e: e.get("kind") == "received" and e.get("id") == ident


def _verdict(event_id: str) -> Callable[[Entry], bool]:
    return lambda e: e.get("kind") in ("observed", "rejected") and e.get("eventId") == event_id


def control_route(ledger: Ledger, emit: Emit | None) -> Route:
    """`emit` writes a frame on stdout (stdio servers); None over HTTP."""

    def route(request: Request) -> Reply:
        where = (request.method, request.path)
        if where == ("GET", "/health"):
            return Reply(200, {"ready": True})
        if where == ("GET", "/receipts"):
            return Reply(200, {"entries": ledger.entries()})
        if request.method != "POST" or request.path not in POSTS:
            return NOT_FOUND
        body = _body(request)
        if body is None:
            return INVALID
        return POSTS[request.path](ledger, emit, body)

    return route


def _wait(ledger: Ledger, _emit: Emit | None, body: dict[str, Any]) -> Reply:
    ident, count = body.get("id"), _count(body)
    if not isinstance(ident, str) or count is None:
        return INVALID
    reached = ledger.wait_for(_received(ident), count, WAIT_SECONDS)
    return Reply(200, OK) if reached else Reply(408, {"error": "Timed out"})


def _wait_observed(ledger: Ledger, _emit: Emit | None, body: dict[str, Any]) -> Reply:
    event_id, count = body.get("eventId"), _count(body)
    if not isinstance(event_id, str) or count is None:
        return INVALID
    reached = ledger.wait_for(_verdict(event_id), count, WAIT_SECONDS)
    return Reply(200, OK) if reached else Reply(408, {"error": "Timed out"})


def _release(ledger: Ledger, _emit: Emit | None, body: dict[str, Any]) -> Reply:
    if not isinstance(body.get("id"), str):
        return INVALID
    ledger.release(body["id"])
    return Reply(200, OK)


def _mark(ledger: Ledger, _emit: Emit | None, body: dict[str, Any]) -> Reply:
    fields = {key: body.get(key) for key in ("kind", "id", "scenario")}
    if not all(isinstance(value, str) for value in fields.values()):
        return INVALID
    ledger.record(fields)
    return Reply(200, OK)


def _emit(ledger: Ledger, emit: Emit | None, body: dict[str, Any]) -> Reply:
    if emit is None:
        return Reply(400, {"error": "emit is for stdio servers"})
    response = body.get("response")
    ident = response.get("id") if isinstance(response, dict) else None
    if ident is None:
        return INVALID
    ledger.record({"kind": "emitted", "id": ident})
    emit(response)
    return Reply(200, OK)


def _shutdown(ledger: Ledger, _emit: Emit | None, _body: dict[str, Any]) -> Reply:
    return Reply(200, OK, close=True, then=ledger.stop)


POSTS: dict[str, Callable[[Ledger, Emit | None, dict[str, Any]], Reply]] = {
    "/wait": _wait,
    "/wait-observed": _wait_observed,
    "/release": _release,
    "/mark": _mark,
    "/emit": _emit,
    "/shutdown": _shutdown,
}
