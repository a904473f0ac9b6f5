"""Wire rows of the elicitation set: the exchanges, the envelope and the bodies.

Each row names in a comment the rule of docs/ELICITATION.md ("The receiver",
steps 1-5) it exercises. Outcomes and receipts are literal: a refused
message leaves no receipt; an accepted one leaves the summary the row writes
(the bodies exactly as sent: the fixture objects the row sent).
"""

from __future__ import annotations

from elicitation_common import (
    ACCEPT,
    CANCEL,
    CARD_CHECK,
    DECLINE,
    NEWSLETTER,
    SHUTTLE,
    SHUTTLE_ACCEPT,
    SHUTTLE_NO_MODE,
    answer,
    ask,
)
from elicitation_wire import (
    ABSENT,
    ACCEPTED,
    JSON,
    OTHER_SERVER,
    PROTOCOL,
    REFUSED,
    TIME,
    body,
    raw,
    request_event,
    seen_request,
    seen_result,
    send,
    wire,
)


def rows() -> list[JSON]:
    return [
        *exchanges(),
        *request_refusals(),
        *result_refusals(),
        *envelope_refusals(),
    ]


# ---------------------------------------------------------------- accepted exchanges


def _exchange(rid: str, params: JSON, result: JSON, action: str, mode: str) -> JSON:
    # Steps 3-5 pass for both events: request live, then answered.
    return wire(
        rid,
        [ask(rid, params, mode=mode), answer(rid, result, action=action, mode=mode)],
        [ACCEPTED, ACCEPTED],
        [seen_request(f"{rid}:request", params), seen_result(f"{rid}:result", params, result)],
    )


def exchanges() -> list[JSON]:
    return [
        _exchange("eli-form-accept", SHUTTLE, SHUTTLE_ACCEPT, "accept", "form"),
        _exchange("eli-form-decline", SHUTTLE, DECLINE, "decline", "form"),
        _exchange("eli-form-cancel", SHUTTLE, CANCEL, "cancel", "form"),
        _exchange("eli-url-accept", CARD_CHECK, ACCEPT, "accept", "url"),
        _exchange("eli-url-decline", CARD_CHECK, DECLINE, "decline", "url"),
        _exchange("eli-url-cancel", CARD_CHECK, CANCEL, "cancel", "url"),
        # Step 4: a body without `mode` is a form request (Readings settled).
        _exchange(
            "eli-form-default-mode",
            SHUTTLE_NO_MODE,
            {"action": "accept", "content": {"day": "monday"}},
            "accept",
            "form",
        ),
        # Step 5: an accepted form without `content` counts as {}; this form
        # requires nothing, so it is valid.
        _exchange("eli-form-accept-no-content", NEWSLETTER, ACCEPT, "accept", "form"),
        # Step 5: an empty array is a valid answer value.
        _exchange(
            "eli-form-accept-empty-list",
            NEWSLETTER,
            {"action": "accept", "content": {"topics": []}},
            "accept",
            "form",
        ),
    ]


# ---------------------------------------------------------------- request refusals (steps 3, 4)
# (and eli-request-part-missing, accepted: an absent part is the omit selection)


def _refused_request(rid: str, step: JSON) -> JSON:
    return wire(rid, [step], [REFUSED], [])


def request_refusals() -> list[JSON]:
    no_message = {
        "mode": "form",
        "requestedSchema": {"type": "object", "properties": {"day": {"type": "string"}}},
    }
    no_url = {
        "mode": "url",
        "message": "Open the check-in page.",
        "elicitationId": "eli-checkin-page-4",
    }
    no_elicitation_id = {
        "mode": "url",
        "message": "Open the check-in page.",
        "url": "https://hotel.example.test/check-in/4",
    }
    renamed = {
        "mode": "form",
        "message": "Which terminal do you leave from?",
        "requested_schema": {"type": "object", "properties": {"terminal": {"type": "string"}}},
    }
    nested = {
        "mode": "form",
        "message": "Where should the driver wait?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "spot": {
                    "type": "object",
                    "properties": {"door": {"type": "string"}, "level": {"type": "integer"}},
                }
            },
        },
    }
    not_object = {
        "mode": "form",
        "message": "List the luggage pieces.",
        "requestedSchema": {"type": "array", "properties": {"piece": {"type": "string"}}},
    }
    explicit_form = {
        "mode": "form",
        "message": "Which day should the airport shuttle pick you up?",
        "requestedSchema": {
            "type": "object",
            "properties": {"day": {"type": "string"}},
            "required": ["day"],
        },
    }
    return [
        # Step 3: the request event has no `request` part. An absent part is
        # the omit selection (interaction-payloads.md, "MCP elicitation
        # binding": "Omission has no part"): accepted, summarized as omit.
        wire(
            "eli-request-part-missing",
            [ask("eli-request-part-missing", SHUTTLE, part=ABSENT)],
            [ACCEPTED],
            [
                {
                    "eventId": "eli-request-part-missing:request",
                    "summary": {"selection": "omit"},
                }
            ],
        ),
        # Step 4: `message` is required by both request forms.
        _refused_request("eli-body-no-message", ask("eli-body-no-message", no_message)),
        # Step 4: a URL request needs `url` and `elicitationId`.
        _refused_request("eli-url-no-url", ask("eli-url-no-url", no_url, mode="url")),
        _refused_request(
            "eli-url-no-elicitation-id",
            ask("eli-url-no-elicitation-id", no_elicitation_id, mode="url"),
        ),
        # Step 4: `requestedSchema` is required; a renamed key is not it.
        _refused_request(
            "eli-requested-schema-renamed", ask("eli-requested-schema-renamed", renamed)
        ),
        # Step 4: the body says url, the event says form (and the reverse,
        # with an explicit form body under a url event).
        _refused_request(
            "eli-body-mode-url-event-form", ask("eli-body-mode-url-event-form", CARD_CHECK)
        ),
        _refused_request(
            "eli-body-mode-form-event-url",
            ask("eli-body-mode-form-event-url", explicit_form, mode="url"),
        ),
        # Step 4: a body without `mode` is form, which a url event is not.
        _refused_request(
            "eli-default-mode-event-url",
            ask("eli-default-mode-event-url", SHUTTLE_NO_MODE, mode="url"),
        ),
        # Step 4: a form property must be a primitive schema.
        _refused_request("eli-form-schema-nested", ask("eli-form-schema-nested", nested)),
        # Step 4: the requested schema's type is `object`.
        _refused_request(
            "eli-requested-schema-not-object", ask("eli-requested-schema-not-object", not_object)
        ),
        # Step 4: the text does not parse as JSON.
        _refused_request(
            "eli-request-text-not-json",
            ask(
                "eli-request-text-not-json",
                None,
                part=raw(
                    "eli-request-text-not-json:request-body",
                    "message: Which day should the shuttle come?",
                ),
            ),
        ),
        # Step 4: strict parsing refuses a duplicate key.
        _refused_request(
            "eli-request-text-duplicate-key",
            ask(
                "eli-request-text-duplicate-key",
                None,
                part=raw(
                    "eli-request-text-duplicate-key:request-body",
                    '{"mode":"form","message":"Pick a day.","message":"Pick a night.",'
                    '"requestedSchema":{"type":"object","properties":{"day":{"type":"string"}}}}',
                ),
            ),
        ),
        # Step 4: the text is JSON but not one object.
        _refused_request(
            "eli-request-text-array",
            ask(
                "eli-request-text-array",
                None,
                part=raw("eli-request-text-array:request-body", '["Which day?"]'),
            ),
        ),
        # Step 3: every event needs `session.id`.
        _refused_request(
            "eli-request-no-session", ask("eli-request-no-session", SHUTTLE, session=ABSENT)
        ),
    ]


# ---------------------------------------------------------------- result refusals (steps 3, 5)
# (and the two absent-part rows first, accepted: an absent part is the omit selection)


def _refused_result(rid: str, params: JSON, step: JSON, mode: str = "form") -> JSON:
    # The request is accepted and stays live; the result is refused.
    return wire(
        rid,
        [ask(rid, params, mode=mode), step],
        [ACCEPTED, REFUSED],
        [seen_request(f"{rid}:request", params)],
    )


def result_refusals() -> list[JSON]:
    r = "eli-result-part-missing"
    missing = answer(r, None, action="accept", part=ABSENT)
    r2 = "eli-result-text-not-json"
    not_json = answer(
        r2, None, action="accept", part=raw(f"{r2}:result-body", "accept day=tuesday")
    )
    r3 = "eli-result-text-duplicate-key"
    duplicate = answer(
        r3,
        None,
        action="accept",
        part=raw(
            f"{r3}:result-body",
            '{"action":"accept","content":{"day":"monday"},"content":{"day":"tuesday"}}',
        ),
    )
    r4 = "eli-parts-absent-decline"
    return [
        # Step 3: the result event has no `result` part: the omit selection
        # (interaction-payloads.md, "MCP elicitation binding"), accepted. It
        # answers its body-selected request; nothing of the result is checked.
        wire(
            r,
            [ask(r, SHUTTLE), missing],
            [ACCEPTED, ACCEPTED],
            [
                seen_request(f"{r}:request", SHUTTLE),
                {
                    "eventId": "eli-result-part-missing:result",
                    "summary": {
                        "selection": {"request": "body", "result": "omit"},
                        "bodyValidation": "not-selected",
                        "provenance": {
                            "kind": "mcp",
                            "authenticatedSource": "authenticated:eli-sender",
                        },
                        "externalCompletion": False,
                    },
                },
            ],
        ),
        # Steps 3 and 5: a request without its part (omit) is live, and a
        # decline without its part (omit) correlates to it and answers it.
        wire(
            r4,
            [
                ask(r4, SHUTTLE, part=ABSENT),
                answer(r4, None, action="decline", part=ABSENT),
            ],
            [ACCEPTED, ACCEPTED],
            [
                {
                    "eventId": "eli-parts-absent-decline:request",
                    "summary": {"selection": "omit"},
                },
                {
                    "eventId": "eli-parts-absent-decline:result",
                    "summary": {
                        "selection": {"request": "omit", "result": "omit"},
                        "bodyValidation": "not-selected",
                        "provenance": {
                            "kind": "mcp",
                            "authenticatedSource": "authenticated:eli-sender",
                        },
                        "externalCompletion": False,
                    },
                },
            ],
        ),
        # Step 5: the result text does not parse / has a duplicate key.
        _refused_result(r2, SHUTTLE, not_json),
        _refused_result(r3, SHUTTLE, duplicate),
        # Step 5: `content` values are primitives or arrays of strings.
        _refused_result(
            "eli-result-content-nested",
            SHUTTLE,
            answer(
                "eli-result-content-nested",
                {"action": "accept", "content": {"day": "monday", "seats": {"adults": 2}}},
                action="accept",
            ),
        ),
        # Step 5: an array of numbers is not an answer value.
        _refused_result(
            "eli-result-content-number-list",
            NEWSLETTER,
            answer(
                "eli-result-content-number-list",
                {"action": "accept", "content": {"topics": [3, 4]}},
                action="accept",
            ),
        ),
        # Step 5: the body's `action` is not one of the three.
        _refused_result(
            "eli-result-body-action-invalid",
            SHUTTLE,
            answer(
                "eli-result-body-action-invalid",
                {"action": "postpone"},
                action="decline",
            ),
        ),
        # Step 5: the body's action is not the event's.
        _refused_result(
            "eli-result-action-mismatch",
            SHUTTLE,
            answer("eli-result-action-mismatch", DECLINE, action="accept"),
        ),
        # Step 5: only an accepted form carries content.
        _refused_result(
            "eli-decline-with-content",
            SHUTTLE,
            answer(
                "eli-decline-with-content",
                {"action": "decline", "content": {"day": "monday"}},
                action="decline",
            ),
        ),
        _refused_result(
            "eli-cancel-with-content",
            SHUTTLE,
            answer(
                "eli-cancel-with-content",
                {"action": "cancel", "content": {"day": "wednesday"}},
                action="cancel",
            ),
        ),
        _refused_result(
            "eli-url-accept-with-content",
            CARD_CHECK,
            answer(
                "eli-url-accept-with-content",
                {"action": "accept", "content": {"confirmed": True}},
                action="accept",
                mode="url",
            ),
            mode="url",
        ),
        # Step 5: the result's mode is not its request's (the body is a valid
        # url result: the mode is the only fault).
        _refused_result(
            "eli-result-mode-mismatch",
            SHUTTLE,
            answer("eli-result-mode-mismatch", ACCEPT, action="accept", mode="url"),
        ),
        # Step 5: the result's server is not its request's.
        _refused_result(
            "eli-result-server-mismatch",
            SHUTTLE,
            answer(
                "eli-result-server-mismatch", SHUTTLE_ACCEPT, action="accept", server=OTHER_SERVER
            ),
        ),
        # Step 5: a parent the receiver refused was never live.
        wire(
            "eli-parent-was-refused",
            [
                ask(
                    "eli-parent-was-refused",
                    {
                        "mode": "form",
                        "message": "Which day?",
                        "requestedSchema": {"type": "object"},
                    },
                ),
                answer("eli-parent-was-refused", DECLINE, action="decline"),
            ],
            [REFUSED, REFUSED],
            [],
        ),
    ]


# ---------------------------------------------------------------- envelope refusals (step 1)


def envelope_refusals() -> list[JSON]:
    # Step 1: schema-invalid event mode and event action.
    r1 = "eli-event-mode-invalid"
    r2 = "eli-event-action-invalid"
    r3 = "eli-envelope-wrong-protocol"
    r4 = "eli-envelope-no-capabilities"
    r5 = "eli-not-elicitation"
    r6 = "eli-not-interceptable"
    bad_mode = ask(r1, SHUTTLE, mode="dialog")
    bad_action = answer(r2, SHUTTLE_ACCEPT, action="submit")
    wrong_protocol = ask(r3, SHUTTLE)
    wrong_protocol["message"]["params"]["protocolVersion"] = "2025-11-25"
    no_capabilities = ask(r4, SHUTTLE)
    del no_capabilities["message"]["params"]["capabilities"]
    outbound = {
        "id": f"{r5}:request",
        "source": "urn:ahp-interop:elicitation",
        "type": "user.message.outbound",
        "time": TIME,
        "session": {"id": f"{r5}:session"},
        "message": {
            "channel": "chat",
            "messages": [
                {
                    "id": f"{r5}:message",
                    "role": "assistant",
                    "parts": [body(f"{r5}:message-body", SHUTTLE)],
                }
            ],
        },
    }
    attention = {
        "id": f"{r6}:request",
        "source": "urn:ahp-interop:elicitation",
        "type": "user.attention",
        "time": TIME,
        "session": {"id": f"{r6}:session"},
        "attention": {
            "kind": "elicitation",
            "message": [body(f"{r6}:message-body", SHUTTLE)],
            "title": [raw(f"{r6}:title", "Shuttle day")],
        },
    }
    return [
        wire(r1, [bad_mode], [REFUSED], []),
        wire(
            r2,
            [ask(r2, SHUTTLE), bad_action],
            [ACCEPTED, REFUSED],
            [seen_request(f"{r2}:request", SHUTTLE)],
        ),
        wire(r3, [wrong_protocol], [REFUSED], []),
        wire(r4, [no_capabilities], [REFUSED], []),
        # Step 1: a schema-valid intercept whose event is not an elicitation.
        wire(r5, [send(_envelope(outbound))], [REFUSED], []),
        # Step 1: an event type hooks/intercept cannot carry (schema-invalid).
        wire(r6, [send(_envelope(attention))], [REFUSED], []),
        # Step 1: the request event's `elicitation` lacks `server`.
        wire(
            "eli-event-no-server",
            [send(_envelope(_without_server("eli-event-no-server")))],
            [REFUSED],
            [],
        ),
        # Step 1: the JSON-RPC id is not the event's id (the intercept-request
        # schema states the rule; it is checked outside the schema).
        wire(
            "eli-envelope-id-not-event-id",
            [_other_id("eli-envelope-id-not-event-id")],
            [REFUSED],
            [],
        ),
    ]


def _other_id(rid: str) -> JSON:
    step = ask(rid, SHUTTLE)
    step["message"]["id"] = f"{rid}:another-id"
    return step


def _envelope(event: JSON) -> JSON:
    return {
        "jsonrpc": "2.0",
        "id": event["id"],
        "method": "hooks/intercept",
        "params": {"protocolVersion": PROTOCOL, "event": event, "capabilities": {"effects": []}},
    }


def _without_server(rid: str) -> JSON:
    event = request_event(f"{rid}:request", f"{rid}:session", body(f"{rid}:request-body", SHUTTLE))
    del event["elicitation"]["server"]
    return event
