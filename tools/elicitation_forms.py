"""Wire rows of the elicitation set: submitted forms against the requested schema.

docs/ELICITATION.md, "The receiver", step 5: for an accepted form whose
request had a body, `content` (absent: `{}`) is valid against that
request's `requestedSchema` as a Draft 2020-12 schema, no default filled in,
formats not asserted, whatever the schema's own `$schema` says (Readings).
Each constraint row sends the booking form (accepted), then an answer valid
against the MCP definition that breaks exactly one constraint of the form
(refused, no receipt); the request stays live. Outcomes are literal.
"""

from __future__ import annotations

from elicitation_common import BOOKING, REMINDER, REMINDER_ACCEPT, answer, ask
from elicitation_wire import ACCEPTED, JSON, REFUSED, seen_request, seen_result, wire


def rows() -> list[JSON]:
    return [*constraint_failures(), *defaults(), *dialects()]


def _breaks(rid: str, content: JSON) -> JSON:
    return wire(
        rid,
        [ask(rid, BOOKING), answer(rid, {"action": "accept", "content": content}, action="accept")],
        [ACCEPTED, REFUSED],
        [seen_request(f"{rid}:request", BOOKING)],
    )


def constraint_failures() -> list[JSON]:
    return [
        # `required`: guest is missing.
        _breaks("eli-form-required-missing", {"nights": 2, "room": "double"}),
        # `maximum`: nights at most 14.
        _breaks("eli-form-above-maximum", {"guest": "Tomas Lindqvist", "nights": 15}),
        # `minimum`: budget at least 40.
        _breaks("eli-form-below-minimum", {"guest": "Tomas Lindqvist", "nights": 2, "budget": 39}),
        # `type: integer`: 2.5 nights is a number, not an integer.
        _breaks("eli-form-not-integer", {"guest": "Tomas Lindqvist", "nights": 2.5}),
        # `maxLength`: 27 characters, the form allows 24.
        _breaks("eli-form-over-max-length", {"guest": "Maximiliana Oyelaran-Foster", "nights": 1}),
        # `minLength`: one character, the form asks for two.
        _breaks("eli-form-under-min-length", {"guest": "Q", "nights": 1}),
        # `enum`: no such room.
        _breaks("eli-form-outside-enum", {"guest": "Tomas Lindqvist", "nights": 4, "room": "loft"}),
        # `type: boolean`: a string where a boolean is asked (still a valid
        # MCP answer value).
        _breaks(
            "eli-form-wrong-type", {"guest": "Tomas Lindqvist", "nights": 4, "breakfast": "please"}
        ),
        # `items.enum` of a multi-select: "spa" is not an extra.
        _breaks(
            "eli-form-multi-item-outside-enum",
            {"guest": "Tomas Lindqvist", "nights": 4, "extras": ["parking", "spa"]},
        ),
        # `maxItems`: three extras, the form allows two.
        _breaks(
            "eli-form-too-many-items",
            {
                "guest": "Tomas Lindqvist",
                "nights": 4,
                "extras": ["parking", "late-checkout", "crib"],
            },
        ),
        # `type: string` for a number: "3" is a string, not an integer.
        _breaks("eli-form-number-as-string", {"guest": "Tomas Lindqvist", "nights": "3"}),
    ]


def defaults() -> list[JSON]:
    r1 = "eli-form-defaults-kept"
    r2 = "eli-form-required-not-defaulted"
    r3 = "eli-form-accept-no-content-required"
    # The defaulted fields are not required and the answer leaves them out:
    # accepted, and both summaries are the bodies exactly as sent (defaults,
    # titles and descriptions kept in the request, nothing filled in the result).
    kept = wire(
        r1,
        [ask(r1, REMINDER), answer(r1, REMINDER_ACCEPT, action="accept")],
        [ACCEPTED, ACCEPTED],
        [
            seen_request(f"{r1}:request", REMINDER),
            seen_result(f"{r1}:result", REMINDER, REMINDER_ACCEPT),
        ],
    )
    # A required field with a default, left out of the answer: no default is
    # filled in, so `required` fails.
    required_default = {
        "mode": "form",
        "message": "Which language should the tour guide speak?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "language": {
                    "type": "string",
                    "title": "Language",
                    "enum": ["en", "fr", "pt"],
                    "default": "en",
                }
            },
            "required": ["language"],
        },
    }
    not_defaulted = wire(
        r2,
        [
            ask(r2, required_default),
            answer(r2, {"action": "accept", "content": {}}, action="accept"),
        ],
        [ACCEPTED, REFUSED],
        [seen_request(f"{r2}:request", required_default)],
    )
    # An accepted form without `content` counts as {}: the booking form
    # requires guest and nights.
    no_content = wire(
        r3,
        [ask(r3, BOOKING), answer(r3, {"action": "accept"}, action="accept")],
        [ACCEPTED, REFUSED],
        [seen_request(f"{r3}:request", BOOKING)],
    )
    return [kept, not_defaulted, no_content]


def dialects() -> list[JSON]:
    r1 = "eli-form-schema-draft-07-format-not-asserted"
    # MCP lets requestedSchema name its dialect in `$schema`; the receiver
    # applies every form schema as Draft 2020-12 with formats not asserted,
    # whatever `$schema` says. Here it says draft-07 (whose validators commonly
    # assert `format`), and the answer's contact is no email address: still
    # valid, so accepted, and both summaries are the bodies exactly as sent.
    draft_07 = {
        "mode": "form",
        "message": "Where should the booking confirmation go?",
        "requestedSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "contact": {"type": "string", "format": "email", "title": "Email address"}
            },
            "required": ["contact"],
        },
    }
    not_an_email = {"action": "accept", "content": {"contact": "front desk, ask for Ines"}}
    return [
        wire(
            r1,
            [ask(r1, draft_07), answer(r1, not_an_email, action="accept")],
            [ACCEPTED, ACCEPTED],
            [
                seen_request(f"{r1}:request", draft_07),
                seen_result(f"{r1}:result", draft_07, not_an_email),
            ],
        )
    ]
