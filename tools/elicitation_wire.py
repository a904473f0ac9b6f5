"""Envelopes of the elicitation set: parts, events, messages, steps, outcomes, receipts, rows.

Builders only. They pack the values a row gives them into the format of
docs/ELICITATION.md ("The scenario file") in a fixed key order; they never
validate a body, never apply an effect, never decide an outcome. Which
outcome a step has, which summary form a receipt takes and what a host
publishes is written by each row, literally.

Conventions (every row follows them):

- event ids are `<row id>:request` / `<row id>:result` (with a suffix when a
  row has several), session ids `<row id>:session` (and `<row id>:session-*`),
  part ids `<event id>-body`;
- every `send` message is a `hooks/intercept` envelope advertising no effect,
  unless the row is about a broken envelope;
- a body-selected part's text is the fixture body serialized compactly.
"""

from __future__ import annotations

import base64
import json
from typing import Any

JSON = Any


class _Absent:
    """A field the row leaves out (an event without `session`, a part left out)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

PROTOCOL = "draft"
SOURCE = "urn:ahp-interop:elicitation"
OTHER_SOURCE = "urn:ahp-interop:elicitation:impostor"
TIME = "2026-05-19T14:05:00Z"
SERVER = "eli-travel-desk"
OTHER_SERVER = "eli-expense-desk"
AUTHENTICATED_SOURCE = "authenticated:eli-sender"
PROVENANCE: JSON = {"kind": "mcp", "authenticatedSource": AUTHENTICATED_SOURCE}
NO_EFFECTS: JSON = {"effects": []}
REQUEST_CAPABILITIES: JSON = {"effects": ["deny", "return", "message"]}
RESULT_CAPABILITIES: JSON = {
    "effects": ["modify", "message"],
    "modify": {"content": {"replace": True, "merge": True}},
}


def clone(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def serialize(body: JSON) -> str:
    """A fixture body as the text of a body-selected part (compact JSON)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- parts


def body(ident: str, value: JSON) -> JSON:
    """A body-selected text part carrying `value` serialized."""
    return raw(ident, serialize(value))


def raw(ident: str, text: str) -> JSON:
    """A body-selected text part whose text the row writes as it is (maybe not JSON)."""
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
    }


def withheld(ident: str, selection: str) -> JSON:
    """A text part with `metadata` or `omit` selection (no body)."""
    return {"id": ident, "kind": "text", "mediaType": "text/plain", "selection": selection}


def gap(ident: str, reason: str) -> JSON:
    """A body-selected text part whose body is a gap."""
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "gap": {"reason": reason},
    }


def attachment(ident: str, ref: str, media_type: str = "application/pdf") -> JSON:
    """An attachment part (body selection) naming `ref` (an upload alias)."""
    return {
        "id": ident,
        "kind": "attachment",
        "mediaType": media_type,
        "selection": "body",
        "body": {"ref": ref},
    }


def part_for(ident: str, selection: str, value: JSON) -> JSON:
    """A part of the given selection: `value` as body, or withheld."""
    return body(ident, value) if selection == "body" else withheld(ident, selection)


# ---------------------------------------------------------------- events


def request_event(
    eid: str,
    session: JSON,
    part: JSON,
    *,
    mode: str = "form",
    server: str = SERVER,
    source: str = SOURCE,
    items: JSON = ABSENT,
) -> JSON:
    """A `user.elicitation.request` event; `session` / `part` ABSENT leave them out."""
    event: JSON = {"id": eid, "source": source, "type": "user.elicitation.request", "time": TIME}
    if session is not ABSENT:
        event["session"] = {"id": session}
    if items is not ABSENT:
        event["items"] = clone(items)
    elicitation: JSON = {"server": server, "mode": mode}
    if part is not ABSENT:
        elicitation["request"] = clone(part)
    event["elicitation"] = elicitation
    return event


def result_event(
    eid: str,
    session: JSON,
    parent: JSON,
    part: JSON,
    *,
    action: str,
    mode: str = "form",
    server: str = SERVER,
    source: str = SOURCE,
) -> JSON:
    """A `user.elicitation.result` event; `session` / `parent` / `part` ABSENT leave them out."""
    event: JSON = {"id": eid, "source": source, "type": "user.elicitation.result", "time": TIME}
    if session is not ABSENT:
        event["session"] = {"id": session}
    if parent is not ABSENT:
        event["parentEventId"] = parent
    elicitation: JSON = {"server": server, "mode": mode, "action": action}
    if part is not ABSENT:
        elicitation["result"] = clone(part)
    event["elicitation"] = elicitation
    return event


def intercept(event: JSON, capabilities: JSON = NO_EFFECTS) -> JSON:
    """The `hooks/intercept` envelope of `event` (JSON-RPC id: the event id)."""
    return {
        "jsonrpc": "2.0",
        "id": event["id"],
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": PROTOCOL,
            "event": clone(event),
            "capabilities": clone(capabilities),
        },
    }


# ---------------------------------------------------------------- steps and outcomes


def send(message: JSON) -> JSON:
    return {"op": "send", "message": clone(message)}


def upload(alias: str, data: bytes, credential: str = "upload", sha256: str | None = None) -> JSON:
    step: JSON = {"op": "upload", "alias": alias, "bodyBase64": base64.b64encode(data).decode()}
    if sha256 is not None:
        step["sha256"] = sha256
    step["credential"] = credential
    return step


ACCEPTED: JSON = {"op": "send", "outcome": "accepted", "status": 200}
REFUSED: JSON = {"op": "send", "outcome": "rejected", "status": 400}
CONFLICT: JSON = {"op": "send", "outcome": "rejected", "status": 409}
STORED: JSON = {"op": "upload", "status": 201}
BAD_DIGEST: JSON = {"op": "upload", "status": 400}
UNAUTHORIZED: JSON = {"op": "upload", "status": 401}


# ---------------------------------------------------------------- receipts (the row picks the form)


def seen_request(eid: str, params: JSON) -> JSON:
    """A request receipt, both parts body: the parsed params exactly as sent."""
    return {"eventId": eid, "summary": {"request": clone(params)}}


def seen_withheld_request(eid: str, selection: str) -> JSON:
    """A request receipt for a metadata / omit request part."""
    return {"eventId": eid, "summary": {"selection": selection}}


def seen_result(eid: str, params: JSON, result: JSON) -> JSON:
    """A result receipt, both parts body-selected: parent's params and this result as sent."""
    return {
        "eventId": eid,
        "summary": {
            "request": clone(params),
            "result": clone(result),
            "provenance": clone(PROVENANCE),
            "externalCompletion": False,
        },
    }


def seen_selection(eid: str, request_selection: str, result_selection: str) -> JSON:
    """A result receipt when either part is not body-selected."""
    return {
        "eventId": eid,
        "summary": {
            "selection": {"request": request_selection, "result": result_selection},
            "bodyValidation": "not-selected",
            "provenance": clone(PROVENANCE),
            "externalCompletion": False,
        },
    }


# ---------------------------------------------------------------- rows


def wire(
    rid: str,
    steps: list[JSON],
    outcomes: list[JSON],
    receipts: list[JSON],
    *,
    transports: list[str] | None = None,
    reason: str | None = None,
) -> JSON:
    row: JSON = {"id": rid}
    if transports is not None:
        row["transports"] = transports
    if reason is not None:
        row["inapplicableReason"] = reason
    row["steps"] = steps
    row["expected"] = {"steps": [clone(o) for o in outcomes], "receipts": receipts}
    return row


# ---------------------------------------------------------------- atomic rows


def reply(request_id: str, *effects: JSON) -> JSON:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"protocolVersion": PROTOCOL, "effects": [clone(e) for e in effects]},
    }


def deny(reason: str) -> JSON:
    return {"type": "deny", "reason": reason}


def give(value: JSON) -> JSON:
    return {"type": "return", "value": clone(value)}


def note(text: str) -> JSON:
    return {"type": "message", "text": text}


def modify(value: JSON, operation: str) -> JSON:
    return {"type": "modify", "target": "content", "operation": operation, "value": clone(value)}


def actual(request: str, result: str, published: JSON, provenance: str | None) -> JSON:
    return {
        "request": request,
        "result": result,
        "published": clone(published),
        "provenance": provenance,
    }


DENIED: JSON = actual("denied", "not-sent", None, None)
REJECTED_AT_REQUEST: JSON = actual("rejected", "not-sent", None, None)


def rejected_at_result() -> JSON:
    return actual("allowed", "rejected", None, None)


def atomic(
    rid: str,
    *,
    request: JSON,
    user_result: JSON,
    result_capabilities: JSON,
    request_reply: JSON = ABSENT,
    result_reply: JSON = ABSENT,
    outcome: JSON,
    receipts: list[JSON],
) -> JSON:
    responses: JSON = {}
    if request_reply is not ABSENT:
        responses[f"{rid}:request"] = clone(request_reply)
    if result_reply is not ABSENT:
        responses[f"{rid}:result"] = clone(result_reply)
    return {
        "id": rid,
        "atomic": {
            "request": clone(request),
            "userResult": clone(user_result),
            "resultCapabilities": clone(result_capabilities),
        },
        "responses": responses,
        "expected": {"actual": clone(outcome), "receipts": receipts},
    }
