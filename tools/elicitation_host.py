"""Atomic rows of the elicitation set: the host applies effects at both boundaries.

docs/ELICITATION.md, "What the host (client) does for an atomic row": at the
request boundary `deny` and `return` (a valid MCP result, the requested
schema for an accepted form, no content otherwise), at the result boundary
`modify` of `content` (replace, shallow merge) on an accepted form result,
then the effective content against the requested schema; any failure
rejects the whole reply. Every `actual` (the published result written out,
merged or replaced) and every receipt list is literal. The receiver records
the result the host sent: the effective result before result-boundary edits.
"""

from __future__ import annotations

from elicitation_common import ACCEPT, CARD_CHECK, DECLINE
from elicitation_wire import (
    ABSENT,
    DENIED,
    JSON,
    REJECTED_AT_REQUEST,
    REQUEST_CAPABILITIES,
    RESULT_CAPABILITIES,
    actual,
    atomic,
    body,
    deny,
    give,
    intercept,
    modify,
    note,
    rejected_at_result,
    reply,
    request_event,
    seen_request,
    seen_result,
)

TRANSFER: JSON = {
    "mode": "form",
    "message": "How many bags will you check in for the hotel transfer?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "bags": {"type": "integer", "minimum": 0, "maximum": 4},
            "pickup": {"type": "string", "enum": ["terminal-1", "terminal-2"]},
            "note": {"type": "string", "maxLength": 60},
        },
        "required": ["bags", "pickup"],
    },
}
# The same kind of form without `mode` (a form request by default).
TOUR: JSON = {
    "message": "Which walking tour would you like?",
    "requestedSchema": {
        "type": "object",
        "properties": {"tour": {"type": "string", "enum": ["old-town", "harbour"]}},
        "required": ["tour"],
    },
}
USER_ACCEPT: JSON = {
    "action": "accept",
    "content": {"bags": 1, "pickup": "terminal-2", "note": "one stroller"},
}
RETURNED: JSON = {"action": "accept", "content": {"bags": 2, "pickup": "terminal-1"}}
REPLACE_ONLY_CAPABILITIES: JSON = {
    "effects": ["modify"],
    "modify": {"content": {"replace": True, "merge": False}},
}


def _request(rid: str, params: JSON, mode: str = "form", capabilities: JSON = ABSENT) -> JSON:
    caps = REQUEST_CAPABILITIES if capabilities is ABSENT else capabilities
    event = request_event(
        f"{rid}:request", f"{rid}:session", body(f"{rid}:request-body", params), mode=mode
    )
    return intercept(event, caps)


def _row(
    rid: str,
    *,
    params: JSON = TRANSFER,
    mode: str = "form",
    user: JSON = USER_ACCEPT,
    request_caps: JSON = ABSENT,
    result_caps: JSON = RESULT_CAPABILITIES,
    at_request: list[JSON] | None = None,
    at_result: list[JSON] | None = None,
    request_reply: JSON = ABSENT,
    result_reply: JSON = ABSENT,
    outcome: JSON,
    receipts: list[JSON],
) -> JSON:
    """An atomic row; `at_request` / `at_result` are the effects of a canonical reply."""
    if at_request is not None:
        request_reply = reply(f"{rid}:request", *at_request)
    if at_result is not None:
        result_reply = reply(f"{rid}:result", *at_result)
    return atomic(
        rid,
        request=_request(rid, params, mode, request_caps),
        user_result=user,
        result_capabilities=result_caps,
        request_reply=request_reply,
        result_reply=result_reply,
        outcome=outcome,
        receipts=receipts,
    )


def rows() -> list[JSON]:
    return [*request_boundary(), *result_boundary()]


def request_boundary() -> list[JSON]:
    def asked(rid: str, params: JSON = TRANSFER) -> JSON:
        return seen_request(f"{rid}:request", params)

    def sent(rid: str, result: JSON, params: JSON = TRANSFER) -> JSON:
        return seen_result(f"{rid}:result", params, result)

    r = "eli-atomic-no-effects"
    built = [
        # No effects at either boundary: the user's answer is published.
        _row(
            r,
            outcome=actual("allowed", "accepted", USER_ACCEPT, "user"),
            receipts=[asked(r), sent(r, USER_ACCEPT)],
        ),
    ]
    r = "eli-atomic-deny-form"
    built.append(
        # A deny: the user is never asked, no result is sent.
        _row(
            r,
            at_request=[deny("transfers are booked by the front desk only")],
            outcome=DENIED,
            receipts=[asked(r)],
        )
    )
    r = "eli-atomic-deny-url"
    built.append(
        _row(
            r,
            params=CARD_CHECK,
            mode="url",
            user=ACCEPT,
            at_request=[deny("card checks are paused during maintenance")],
            outcome=DENIED,
            receipts=[asked(r, CARD_CHECK)],
        )
    )
    r = "eli-atomic-return-form"
    built.append(
        # A valid returned form result replaces the user's answer (hook).
        _row(
            r,
            at_request=[give(RETURNED)],
            outcome=actual("allowed", "accepted", RETURNED, "hook"),
            receipts=[asked(r), sent(r, RETURNED)],
        )
    )
    r = "eli-atomic-return-url"
    built.append(
        # A URL return: accept without content.
        _row(
            r,
            params=CARD_CHECK,
            mode="url",
            user=DECLINE,
            at_request=[give(ACCEPT)],
            outcome=actual("allowed", "accepted", {"action": "accept"}, "hook"),
            receipts=[asked(r, CARD_CHECK), sent(r, ACCEPT, CARD_CHECK)],
        )
    )
    r = "eli-atomic-two-returns"
    built.append(
        # The last accepted return is the effective result.
        _row(
            r,
            at_request=[
                give(DECLINE),
                give({"action": "accept", "content": {"bags": 0, "pickup": "terminal-2"}}),
            ],
            outcome=actual(
                "allowed",
                "accepted",
                {"action": "accept", "content": {"bags": 0, "pickup": "terminal-2"}},
                "hook",
            ),
            receipts=[
                asked(r),
                sent(r, {"action": "accept", "content": {"bags": 0, "pickup": "terminal-2"}}),
            ],
        )
    )
    r = "eli-atomic-return-then-deny"
    built.append(
        # A deny decides the boundary, also after a valid return.
        _row(
            r,
            at_request=[give(RETURNED), deny("the transfer desk is closed tonight")],
            outcome=DENIED,
            receipts=[asked(r)],
        )
    )
    r = "eli-atomic-message-only"
    built.append(
        # A message changes nothing: the user is asked and answers.
        _row(
            r,
            at_request=[note("Bags over 23 kg are charged at the desk.")],
            outcome=actual("allowed", "accepted", USER_ACCEPT, "user"),
            receipts=[asked(r), sent(r, USER_ACCEPT)],
        )
    )
    # Rejected replies at the request boundary: nothing more is sent.
    rejected = [
        # The returned content breaks the requested schema (pickup is required).
        ("eli-atomic-return-breaks-schema", [give({"action": "accept", "content": {"bags": 2}})]),
        # The returned value is not an MCP result (no action).
        (
            "eli-atomic-return-not-mcp",
            [give({"content": {"bags": 2, "pickup": "terminal-1"}})],
        ),
        # An accepted form without content counts as {}: bags and pickup are required.
        ("eli-atomic-return-no-content", [give({"action": "accept"})]),
        # A declined result carries no content.
        (
            "eli-atomic-return-decline-content",
            [give({"action": "decline", "content": {"bags": 1, "pickup": "terminal-1"}})],
        ),
        # A valid message before an invalid return: the whole reply is rejected.
        (
            "eli-atomic-message-then-bad-return",
            [
                note("Checking the transfer booking."),
                give({"action": "accept", "content": {"bags": 7, "pickup": "terminal-1"}}),
            ],
        ),
    ]
    for rid, effects in rejected:
        built.append(
            _row(rid, at_request=effects, outcome=REJECTED_AT_REQUEST, receipts=[asked(rid)])
        )
    r = "eli-atomic-return-url-content"
    built.append(
        # A URL result carries no content.
        _row(
            r,
            params=CARD_CHECK,
            mode="url",
            user=ACCEPT,
            at_request=[give({"action": "accept", "content": {"confirmed": True}})],
            outcome=REJECTED_AT_REQUEST,
            receipts=[asked(r, CARD_CHECK)],
        )
    )
    r = "eli-atomic-return-not-advertised"
    built.append(
        # `return` is not in the request's capabilities.
        _row(
            r,
            request_caps={"effects": ["deny", "message"]},
            at_request=[give(RETURNED)],
            outcome=REJECTED_AT_REQUEST,
            receipts=[asked(r)],
        )
    )
    r = "eli-atomic-default-mode-return-checked"
    built.append(
        # A body without `mode` is a form: the return is checked against its
        # schema ("lagoon" is not a tour).
        _row(
            r,
            params=TOUR,
            user={"action": "accept", "content": {"tour": "harbour"}},
            at_request=[give({"action": "accept", "content": {"tour": "lagoon"}})],
            outcome=REJECTED_AT_REQUEST,
            receipts=[asked(r, TOUR)],
        )
    )
    r = "eli-atomic-request-error-reply"
    built.append(
        # A JSON-RPC error instead of a result (core envelope rules).
        _row(
            r,
            request_reply={
                "jsonrpc": "2.0",
                "id": f"{r}:request",
                "error": {"code": -32000, "message": "transfer backend unavailable"},
            },
            outcome=REJECTED_AT_REQUEST,
            receipts=[asked(r)],
        )
    )
    r = "eli-atomic-url-user-accept"
    built.append(
        _row(
            r,
            params=CARD_CHECK,
            mode="url",
            user=ACCEPT,
            outcome=actual("allowed", "accepted", {"action": "accept"}, "user"),
            receipts=[asked(r, CARD_CHECK), sent(r, ACCEPT, CARD_CHECK)],
        )
    )
    return built


def result_boundary() -> list[JSON]:
    def both(rid: str, result: JSON = USER_ACCEPT, params: JSON = TRANSFER) -> list[JSON]:
        return [
            seen_request(f"{rid}:request", params),
            seen_result(f"{rid}:result", params, result),
        ]

    built = []
    r = "eli-atomic-result-replace"
    built.append(
        # Replace substitutes the content whole: `note` disappears.
        _row(
            r,
            at_result=[modify({"bags": 0, "pickup": "terminal-1"}, "replace")],
            outcome=actual(
                "allowed",
                "accepted",
                {"action": "accept", "content": {"bags": 0, "pickup": "terminal-1"}},
                "hook",
            ),
            receipts=both(r),
        )
    )
    r = "eli-atomic-result-merge"
    built.append(
        # A shallow merge overwrites `bags` and `note`, keeps `pickup`.
        _row(
            r,
            at_result=[modify({"bags": 2, "note": "two suitcases"}, "merge")],
            outcome=actual(
                "allowed",
                "accepted",
                {
                    "action": "accept",
                    "content": {"bags": 2, "pickup": "terminal-2", "note": "two suitcases"},
                },
                "hook",
            ),
            receipts=both(r),
        )
    )
    r = "eli-atomic-replace-then-merge"
    built.append(
        # Edits apply in reply order to the current content.
        _row(
            r,
            at_result=[
                modify({"bags": 0, "pickup": "terminal-1"}, "replace"),
                modify({"note": "no luggage"}, "merge"),
            ],
            outcome=actual(
                "allowed",
                "accepted",
                {
                    "action": "accept",
                    "content": {"bags": 0, "pickup": "terminal-1", "note": "no luggage"},
                },
                "hook",
            ),
            receipts=both(r),
        )
    )
    r = "eli-atomic-return-then-merge"
    built.append(
        # The returned result is sent (the receiver sees it), then merged.
        _row(
            r,
            at_request=[give(RETURNED)],
            at_result=[modify({"note": "wheelchair at the gate"}, "merge")],
            outcome=actual(
                "allowed",
                "accepted",
                {
                    "action": "accept",
                    "content": {
                        "bags": 2,
                        "pickup": "terminal-1",
                        "note": "wheelchair at the gate",
                    },
                },
                "hook",
            ),
            receipts=both(r, RETURNED),
        )
    )
    r = "eli-atomic-user-decline"
    built.append(
        # The user declines; nothing edits it.
        _row(
            r,
            user=DECLINE,
            outcome=actual("allowed", "accepted", {"action": "decline"}, "user"),
            receipts=both(r, DECLINE),
        )
    )
    r = "eli-atomic-result-message"
    built.append(
        # A message at the result boundary changes nothing.
        _row(
            r,
            at_result=[note("The transfer desk has your answer.")],
            outcome=actual("allowed", "accepted", USER_ACCEPT, "user"),
            receipts=both(r),
        )
    )
    # Rejected replies at the result boundary: nothing is published.
    rejected = [
        # Replace dropping the required `pickup`.
        ("eli-atomic-replace-breaks-schema", USER_ACCEPT, [modify({"bags": 1}, "replace")]),
        # Merge putting `bags` over its maximum of 4.
        ("eli-atomic-merge-breaks-schema", USER_ACCEPT, [modify({"bags": 9}, "merge")]),
        # A nested object is no answer value (answerContent).
        (
            "eli-atomic-merge-nested",
            USER_ACCEPT,
            [modify({"note": {"text": "fragile items"}}, "merge")],
        ),
        # null is a literal value, and no answer value.
        ("eli-atomic-merge-null", USER_ACCEPT, [modify({"note": None}, "merge")]),
        # An edit of a declined result.
        ("eli-atomic-modify-declined", DECLINE, [modify({"bags": 1}, "merge")]),
        # A valid merge, then one breaking the schema: the whole reply fails.
        (
            "eli-atomic-merge-then-bad-merge",
            USER_ACCEPT,
            [modify({"bags": 3}, "merge"), modify({"pickup": "terminal-9"}, "merge")],
        ),
    ]
    for rid, user, effects in rejected:
        built.append(
            _row(
                rid,
                user=user,
                at_result=effects,
                outcome=rejected_at_result(),
                receipts=both(rid, user),
            )
        )
    r = "eli-atomic-merge-not-advertised"
    built.append(
        # The result boundary advertises replace only.
        _row(
            r,
            result_caps=REPLACE_ONLY_CAPABILITIES,
            at_result=[modify({"bags": 2}, "merge")],
            outcome=rejected_at_result(),
            receipts=both(r),
        )
    )
    r = "eli-atomic-modify-url"
    built.append(
        # An edit of a URL result (no content to edit).
        _row(
            r,
            params=CARD_CHECK,
            mode="url",
            user=ACCEPT,
            at_result=[modify({"confirmed": True}, "merge")],
            outcome=rejected_at_result(),
            receipts=both(r, ACCEPT, CARD_CHECK),
        )
    )
    r = "eli-atomic-result-wrong-id"
    built.append(
        # The reply's id is not the result request's (correlation).
        _row(
            r,
            result_reply=reply(f"{r}:result-other", modify({"bags": 2}, "merge")),
            outcome=rejected_at_result(),
            receipts=both(r),
        )
    )
    return built
