"""The catalogue suite's receiver: one discovery, then a verdict per notification.

Discovery: a `hooks/capabilities` request is answered with the catalogue
manifest and recorded `{kind: "discovery", request, response}` first.
Notifications are checked minimally (an object, `jsonrpc` "2.0", method
`hooks/observe`, no `id`, a string `params.event.id` and `params.event.type`):
a failure is recorded `{kind: "rejected", eventId, message, errorKind: "schema"}`,
anything else `{kind: "observed", eventId, event, message}`. The event schemas
and source-local lineage are not checked here (no `lineage` verdict is ever
given): this receiver accepts what a full one would reject on those grounds.
"""

from __future__ import annotations

from typing import Any

from upstream_emulator.capabilities import catalogue_result
from upstream_emulator.ledger import Ledger


def _problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "not an object"
    if message.get("jsonrpc") != "2.0" or message.get("method") != "hooks/observe":
        return "not a hooks/observe message"
    if "id" in message:
        return "a notification has no id"
    params = message.get("params")
    event = params.get("event") if isinstance(params, dict) else None
    if not isinstance(event, dict):
        return "no params.event object"
    if not isinstance(event.get("id"), str) or not isinstance(event.get("type"), str):
        return "params.event needs a string id and type"
    return None


def is_discovery(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("method") == "hooks/capabilities"
        and isinstance(message.get("id"), str | int)
        and not isinstance(message.get("id"), bool)
    )


class CatalogueReceiver:
    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._result = catalogue_result()

    def discover(self, request: Any) -> dict[str, Any]:
        """Answer a request `is_discovery` accepted, recording it first."""
        response = {"jsonrpc": "2.0", "id": request["id"], "result": self._result}
        self._ledger.record({"kind": "discovery", "request": request, "response": response})
        return response

    def notify(self, message: Any) -> bool:
        """Record the verdict; True when the notification is accepted."""
        params = message.get("params") if isinstance(message, dict) else None
        event = params.get("event") if isinstance(params, dict) else None
        event_id = event.get("id") if isinstance(event, dict) else None
        event_id = event_id if isinstance(event_id, str) else None
        if _problem(message) is not None:
            self._ledger.record(
                {"kind": "rejected", "eventId": event_id, "message": message, "errorKind": "schema"}
            )
            return False
        self._ledger.record(
            {"kind": "observed", "eventId": event_id, "event": event, "message": message}
        )
        return True
