"""The catalogue suite's client: one discovery, then each row's notifications.

Discovery: one `hooks/capabilities` request (HTTP: `POST <base>/capabilities`;
stdio: a line), its whole answer reported as `discovery`. Rows: `notify` sends
a message that passes the minimal check below (else it is not sent) and
`rawNotify` sends it unchecked; over HTTP the answer must be 200, else the
client crashes ("Notification transport failure", uncaught, as upstream's
does); then `/wait-observed`. `actual` is `{sent, registrations}`. A row with
a `register` step is unsupported: this client evaluates no registrations.
"""

from __future__ import annotations

import copy
from typing import Any

from upstream_emulator.jsonequal import same
from upstream_emulator.peer import Peer

DISCOVERY = {
    "jsonrpc": "2.0",
    "id": "discovery",
    "method": "hooks/capabilities",
    "params": {"protocolVersion": "draft"},
}
OPS = ("notify", "rawNotify", "register")


class NotificationTransportFailure(RuntimeError):
    """Deliberately uncaught: the client dies with a traceback and writes no report."""


def _event_id(message: Any) -> str | None:
    params = message.get("params") if isinstance(message, dict) else None
    event = params.get("event") if isinstance(params, dict) else None
    ident = event.get("id") if isinstance(event, dict) else None
    return ident if isinstance(ident, str) else None


def _valid(message: Any) -> bool:
    params = message.get("params") if isinstance(message, dict) else None
    event = params.get("event") if isinstance(params, dict) else None
    return (
        isinstance(event, dict)
        and message.get("jsonrpc") == "2.0"
        and message.get("method") == "hooks/observe"
        and "id" not in message
        and isinstance(event.get("id"), str)
        and isinstance(event.get("type"), str)
    )


def run_rows(rows: list[dict[str, Any]], peer: Peer) -> tuple[list[dict[str, Any]], Any]:
    """(the results, the discovery answer)."""
    discovery = peer.discover(copy.deepcopy(DISCOVERY))
    counts: dict[str, int] = {}
    return [_row(row, peer, counts) for row in rows], discovery


def _row(row: dict[str, Any], peer: Peer, counts: dict[str, int]) -> dict[str, Any]:
    sid = row["id"]
    steps = row.get("steps")
    if not isinstance(steps, list):
        return {"id": sid, "status": "unsupported", "actual": None, "error": "no steps array"}
    for step in steps:
        op = step.get("op") if isinstance(step, dict) else None
        if op not in OPS:
            why = f"step op {op!r} is not implemented"
            return {"id": sid, "status": "unsupported", "actual": None, "error": why}
        if op == "register":
            why = "op 'register': registration evaluation is not implemented"
            return {"id": sid, "status": "unsupported", "actual": None, "error": why}
    sent: list[Any] = []
    for step in steps:
        message = step.get("message")
        if step["op"] == "notify" and not _valid(message):
            continue  # the SDK refuses to send it
        status = peer.notify(message)
        if status is not None and status != 200:
            raise NotificationTransportFailure(f"Notification transport failure: HTTP {status}")
        event_id = _event_id(message)
        if event_id is not None:  # the verdict is recorded before the next step
            counts[event_id] = counts.get(event_id, 0) + 1
            peer.control.call("/wait-observed", {"eventId": event_id, "count": counts[event_id]})
        sent.append(copy.deepcopy(message))
    actual = {"sent": sent, "registrations": []}
    # `expected` is read only here, to set this client's own status
    expected = {k: v for k, v in (row.get("expected") or {}).items() if k != "deliveries"}
    if same(actual, expected):
        return {"id": sid, "status": "passed", "actual": actual}
    return {"id": sid, "status": "failed", "actual": actual, "error": "Expected outcome mismatch"}
