"""Wire rows of the elicitation set: uploads, attachments, selections and gaps.

The upstream's upload cases keep their meaning on the upload route and on
the events' `items` (docs/ELICITATION.md, "Departures"): an attachment the
form presents names an upload alias, which the client rebinds to the
receiver's ref once an upload under it succeeded (an unbound alias is sent as
it is). Outcomes and receipts are literal.
"""

from __future__ import annotations

from elicitation_common import SHUTTLE, answer, ask
from elicitation_wire import (
    ACCEPTED,
    BAD_DIGEST,
    CONFLICT,
    JSON,
    REFUSED,
    STORED,
    UNAUTHORIZED,
    attachment,
    gap,
    seen_request,
    seen_result,
    seen_selection,
    seen_withheld_request,
    upload,
    wire,
)

FLOOR_PLAN = b"%PDF-1.7\neli floor plan, level 2, rooms 201-214"
FLOOR_PLAN_REVISED = b"%PDF-1.7\neli floor plan, level 2, rooms 201-216 (revised)"
# A well-formed digest that is not the floor plan's.
NOT_THE_DIGEST = "0123456789abcdef" * 4


def rows() -> list[JSON]:
    return [*uploads(), *selections(), *gaps()]


def _presenting(rid: str, alias: str) -> JSON:
    """A form request whose event presents the floor plan attachment (alias `alias`)."""
    return ask(rid, SHUTTLE, items=[attachment(f"{rid}:floor-plan", alias)])


def uploads() -> list[JSON]:
    r1 = "eli-attachment-never-uploaded"
    r2 = "eli-upload-bad-digest"
    r3 = "eli-attachment-uploaded"
    r4 = "eli-upload-immutable"
    r5 = "eli-upload-wrong-credential"
    r6 = "eli-upload-no-credential"
    return [
        # Step 2: the attachment names a ref no upload produced: 409.
        wire(r1, [_presenting(r1, f"{r1}:plan")], [CONFLICT], []),
        # Uploads: a declared digest that is not the body's is 400; the alias
        # stays unbound, so the event names bytes never stored: 409.
        wire(
            r2,
            [
                upload(f"{r2}:plan", FLOOR_PLAN, sha256=NOT_THE_DIGEST),
                _presenting(r2, f"{r2}:plan"),
            ],
            [BAD_DIGEST, CONFLICT],
            [],
        ),
        # An uploaded attachment: 201, then the event naming it is accepted.
        wire(
            r3,
            [upload(f"{r3}:plan", FLOOR_PLAN), _presenting(r3, f"{r3}:plan")],
            [STORED, ACCEPTED],
            [seen_request(f"{r3}:request", SHUTTLE)],
        ),
        # Immutability: the same alias with different bytes gets a second,
        # different ref (the alias is rebound to it); the event is accepted.
        wire(
            r4,
            [
                upload(f"{r4}:plan", FLOOR_PLAN),
                upload(f"{r4}:plan", FLOOR_PLAN_REVISED),
                _presenting(r4, f"{r4}:plan"),
            ],
            [STORED, STORED, ACCEPTED],
            [seen_request(f"{r4}:request", SHUTTLE)],
        ),
        # Uploads: a token the server does not accept, and none at all: 401;
        # the alias stays unbound, so the event is a 409.
        wire(
            r5,
            [
                upload(f"{r5}:plan", FLOOR_PLAN, credential="unauthorized"),
                _presenting(r5, f"{r5}:plan"),
            ],
            [UNAUTHORIZED, CONFLICT],
            [],
        ),
        wire(
            r6,
            [upload(f"{r6}:plan", FLOOR_PLAN, credential="none"), _presenting(r6, f"{r6}:plan")],
            [UNAUTHORIZED, CONFLICT],
            [],
        ),
    ]


def selections() -> list[JSON]:
    # Steps 4 and 5 with metadata / omit selections: nothing is uploaded and
    # no body is checked; the summaries take the selection form.
    r1 = "eli-selection-metadata-metadata"
    r2 = "eli-selection-omit-omit"
    r3 = "eli-selection-body-metadata"
    r4 = "eli-selection-metadata-body"
    r5 = "eli-selection-omit-body-decline"
    # The receiver never saw the form schema of r4's request: the answer is
    # checked against the MCP definition only, so "friday" (outside the enum
    # the request had) is accepted.
    friday = {"action": "accept", "content": {"day": "friday"}}
    return [
        wire(
            r1,
            [
                ask(r1, SHUTTLE, selection="metadata"),
                answer(r1, None, action="accept", selection="metadata"),
            ],
            [ACCEPTED, ACCEPTED],
            [
                seen_withheld_request(f"{r1}:request", "metadata"),
                seen_selection(f"{r1}:result", "metadata", "metadata"),
            ],
        ),
        wire(
            r2,
            [
                ask(r2, SHUTTLE, selection="omit"),
                answer(r2, None, action="accept", selection="omit"),
            ],
            [ACCEPTED, ACCEPTED],
            [
                seen_withheld_request(f"{r2}:request", "omit"),
                seen_selection(f"{r2}:result", "omit", "omit"),
            ],
        ),
        wire(
            r3,
            [ask(r3, SHUTTLE), answer(r3, None, action="accept", selection="metadata")],
            [ACCEPTED, ACCEPTED],
            [
                seen_request(f"{r3}:request", SHUTTLE),
                seen_selection(f"{r3}:result", "body", "metadata"),
            ],
        ),
        wire(
            r4,
            [ask(r4, SHUTTLE, selection="metadata"), answer(r4, friday, action="accept")],
            [ACCEPTED, ACCEPTED],
            [
                seen_withheld_request(f"{r4}:request", "metadata"),
                seen_selection(f"{r4}:result", "metadata", "body"),
            ],
        ),
        wire(
            r5,
            [
                ask(r5, SHUTTLE, selection="omit"),
                answer(r5, {"action": "decline"}, action="decline"),
            ],
            [ACCEPTED, ACCEPTED],
            [
                seen_withheld_request(f"{r5}:request", "omit"),
                seen_selection(f"{r5}:result", "omit", "body"),
            ],
        ),
    ]


def gaps() -> list[JSON]:
    # Step 3: a body-selected part with a gap fails closed.
    r1 = "eli-request-gap"
    r2 = "eli-result-gap"
    r3 = "eli-result-gap-after-answer"
    return [
        wire(
            r1,
            [ask(r1, None, part=gap(f"{r1}:request-body", "withheld by the host's redaction"))],
            [REFUSED],
            [],
        ),
        wire(
            r2,
            [
                ask(r2, SHUTTLE),
                answer(
                    r2, None, action="accept", part=gap(f"{r2}:result-body", "answer not captured")
                ),
            ],
            [ACCEPTED, REFUSED],
            [seen_request(f"{r2}:request", SHUTTLE)],
        ),
        # The refused gap result does not answer the request: a complete
        # result afterwards is accepted.
        wire(
            r3,
            [
                ask(r3, SHUTTLE),
                answer(
                    r3, None, action="accept", part=gap(f"{r3}:result-body", "answer not captured")
                ),
                answer(
                    r3,
                    {"action": "accept", "content": {"day": "wednesday"}},
                    action="accept",
                    name="result-complete",
                ),
            ],
            [ACCEPTED, REFUSED, ACCEPTED],
            [
                seen_request(f"{r3}:request", SHUTTLE),
                seen_result(
                    f"{r3}:result-complete",
                    SHUTTLE,
                    {"action": "accept", "content": {"day": "wednesday"}},
                ),
            ],
        ),
    ]
