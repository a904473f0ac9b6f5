"""Fixture bodies and shorthands the elicitation rows share (no rule is applied here).

The bodies are MCP 2025-11-25 `elicitation/create` params and `ElicitResult`
values of our own (a travel desk asking about shuttles, rooms and payment
checks). `ask(...)` / `answer(...)` build a row's request and result
messages with the row's ids; every outcome and receipt stays in the rows.
"""

from __future__ import annotations

from elicitation_wire import (
    ABSENT,
    JSON,
    NO_EFFECTS,
    SERVER,
    SOURCE,
    intercept,
    part_for,
    request_event,
    result_event,
    send,
)

# ---------------------------------------------------------------- form requests

SHUTTLE: JSON = {
    "mode": "form",
    "message": "Which day should the airport shuttle pick you up?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "day": {"type": "string", "enum": ["monday", "tuesday", "wednesday"]},
            "seats": {"type": "integer", "minimum": 1, "maximum": 6},
        },
        "required": ["day"],
    },
}
SHUTTLE_ACCEPT: JSON = {"action": "accept", "content": {"day": "tuesday", "seats": 2}}

# The same form without `mode` (MCP: optional for form requests).
SHUTTLE_NO_MODE: JSON = {
    "message": "Which day should the airport shuttle pick you up?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "day": {"type": "string", "enum": ["monday", "tuesday", "wednesday"]},
            "seats": {"type": "integer", "minimum": 1, "maximum": 6},
        },
        "required": ["day"],
    },
}

# The constraint rows' form: one property per constraint the suite exercises.
BOOKING: JSON = {
    "mode": "form",
    "message": "A few details for the hotel booking, please.",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "guest": {"type": "string", "minLength": 2, "maxLength": 24},
            "nights": {"type": "integer", "minimum": 1, "maximum": 14},
            "budget": {"type": "number", "minimum": 40, "maximum": 900},
            "breakfast": {"type": "boolean"},
            "room": {"type": "string", "enum": ["single", "double", "twin"]},
            "extras": {
                "type": "array",
                "items": {"type": "string", "enum": ["parking", "late-checkout", "crib"]},
                "maxItems": 2,
            },
        },
        "required": ["guest", "nights"],
    },
}
BOOKING_ACCEPT: JSON = {
    "action": "accept",
    "content": {
        "guest": "Ines Okafor",
        "nights": 3,
        "budget": 420,
        "breakfast": True,
        "room": "twin",
        "extras": ["parking"],
    },
}

# A form with defaults and annotations; only `contact` is required.
REMINDER: JSON = {
    "mode": "form",
    "message": "How should we remind you before check-in?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "contact": {
                "type": "string",
                "title": "Contact address",
                "description": "Where the reminder goes.",
            },
            "channel": {
                "type": "string",
                "title": "Channel",
                "description": "How the reminder is delivered.",
                "enum": ["email", "sms"],
                "default": "email",
            },
            "hoursBefore": {
                "type": "integer",
                "title": "Hours before check-in",
                "minimum": 1,
                "maximum": 72,
                "default": 24,
            },
        },
        "required": ["contact"],
    },
}
REMINDER_ACCEPT: JSON = {"action": "accept", "content": {"contact": "ines@example.test"}}

# A form with no required field (a missing `content` counts as {}).
NEWSLETTER: JSON = {
    "mode": "form",
    "message": "Anything you would like in the trip newsletter?",
    "requestedSchema": {
        "type": "object",
        "properties": {"topics": {"type": "array", "items": {"type": "string"}}},
    },
}

# ---------------------------------------------------------------- url requests

CARD_CHECK: JSON = {
    "mode": "url",
    "message": "Confirm the card for the deposit on your bank's page.",
    "elicitationId": "eli-deposit-check-31",
    "url": "https://bank.example.test/confirm/deposit-31",
}

# ---------------------------------------------------------------- results

ACCEPT: JSON = {"action": "accept"}
DECLINE: JSON = {"action": "decline"}
CANCEL: JSON = {"action": "cancel"}

# ---------------------------------------------------------------- messages


def ask(
    rid: str,
    params: JSON,
    *,
    name: str = "request",
    session: JSON = None,
    selection: str = "body",
    mode: str = "form",
    part: JSON = None,
    items: JSON = ABSENT,
    server: str = SERVER,
    source: str = SOURCE,
) -> JSON:
    """The send step of a request event `<rid>:<name>` in `<rid>:session` (by default).

    `session` ABSENT leaves it out; `part` replaces the request part whole
    (ABSENT: no part); otherwise the part is `params` with `selection`.
    """
    eid = f"{rid}:{name}"
    where = f"{rid}:session" if session is None else session
    piece = part_for(f"{eid}-body", selection, params) if part is None else part
    event = request_event(eid, where, piece, mode=mode, server=server, source=source, items=items)
    return send(intercept(event))


def answer(
    rid: str,
    result: JSON,
    *,
    action: str,
    name: str = "result",
    parent: JSON = None,
    session: JSON = None,
    selection: str = "body",
    mode: str = "form",
    part: JSON = None,
    server: str = SERVER,
    source: str = SOURCE,
    capabilities: JSON = NO_EFFECTS,
) -> JSON:
    """The send step of a result event `<rid>:<name>` answering `<rid>:request` (by default)."""
    eid = f"{rid}:{name}"
    where = f"{rid}:session" if session is None else session
    to = f"{rid}:request" if parent is None else parent
    piece = part_for(f"{eid}-body", selection, result) if part is None else part
    event = result_event(
        eid, where, to, piece, action=action, mode=mode, server=server, source=source
    )
    return send(intercept(event, capabilities))
