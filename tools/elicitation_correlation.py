"""Wire rows of the elicitation set: correlation of a result to its request, and concurrency.

docs/ELICITATION.md, "The receiver", steps 3-5 and "Readings settled":
`parentEventId` names a live request; `session.id`, `source`,
`elicitation.server` and `elicitation.mode` equal that request's; an answered
request is no longer live; correlation is by the parent's id within the
parent's session. Each mutation row's request is accepted and its mutated
result refused (no receipt). Outcomes and receipts are literal, row by row.
"""

from __future__ import annotations

from elicitation_common import DECLINE, SHUTTLE, SHUTTLE_ACCEPT, answer, ask
from elicitation_wire import (
    ABSENT,
    ACCEPTED,
    JSON,
    OTHER_SOURCE,
    REFUSED,
    clone,
    seen_request,
    seen_result,
    wire,
)

# (row id, selection of both parts, mutation of the result, the request's
# receipt summary, the outcome of every step). "wrong-session" first sends a
# second request in a session of the row's own (`<rid>:session-other`, body
# selection), so the session the result names exists; that request's receipt
# follows the first.
_BODY: JSON = {"request": SHUTTLE}
_META: JSON = {"selection": "metadata"}
_OMIT: JSON = {"selection": "omit"}
_TWO: list[JSON] = [ACCEPTED, REFUSED]
_THREE: list[JSON] = [ACCEPTED, ACCEPTED, REFUSED]
MUTATIONS: list[tuple[str, str, str, JSON, list[JSON]]] = [
    ("eli-corr-body-missing-parent", "body", "missing-parent", _BODY, _TWO),
    ("eli-corr-body-wrong-parent", "body", "wrong-parent", _BODY, _TWO),
    ("eli-corr-body-wrong-source", "body", "wrong-source", _BODY, _TWO),
    ("eli-corr-body-wrong-session", "body", "wrong-session", _BODY, _THREE),
    ("eli-corr-body-missing-session", "body", "missing-session", _BODY, _TWO),
    ("eli-corr-metadata-missing-parent", "metadata", "missing-parent", _META, _TWO),
    ("eli-corr-metadata-wrong-parent", "metadata", "wrong-parent", _META, _TWO),
    ("eli-corr-metadata-wrong-source", "metadata", "wrong-source", _META, _TWO),
    ("eli-corr-metadata-wrong-session", "metadata", "wrong-session", _META, _THREE),
    ("eli-corr-metadata-missing-session", "metadata", "missing-session", _META, _TWO),
    ("eli-corr-omit-missing-parent", "omit", "missing-parent", _OMIT, _TWO),
    ("eli-corr-omit-wrong-parent", "omit", "wrong-parent", _OMIT, _TWO),
    ("eli-corr-omit-wrong-source", "omit", "wrong-source", _OMIT, _TWO),
    ("eli-corr-omit-wrong-session", "omit", "wrong-session", _OMIT, _THREE),
    ("eli-corr-omit-missing-session", "omit", "missing-session", _OMIT, _TWO),
]


def rows() -> list[JSON]:
    return [*mutations(), answered_twice(), *concurrency()]


def _mutated(rid: str, selection: str, mutation: str) -> JSON:
    """The result step of a mutation row: a valid accepted answer, mutated (fixture only)."""
    fields: JSON = {}
    if mutation == "missing-parent":
        fields["parent"] = ABSENT
    elif mutation == "wrong-parent":
        fields["parent"] = f"{rid}:request-unknown"
    elif mutation == "wrong-source":
        fields["source"] = OTHER_SOURCE
    elif mutation == "wrong-session":
        fields["session"] = f"{rid}:session-other"
    elif mutation == "missing-session":
        fields["session"] = ABSENT
    return answer(rid, SHUTTLE_ACCEPT, action="accept", selection=selection, **fields)


def mutations() -> list[JSON]:
    built = []
    for rid, selection, mutation, summary, outcomes in MUTATIONS:
        steps = [ask(rid, SHUTTLE, selection=selection)]
        receipts = [{"eventId": f"{rid}:request", "summary": clone(summary)}]
        if mutation == "wrong-session":
            steps.append(ask(rid, SHUTTLE, name="request-other", session=f"{rid}:session-other"))
            receipts.append(seen_request(f"{rid}:request-other", SHUTTLE))
        steps.append(_mutated(rid, selection, mutation))
        built.append(wire(rid, steps, outcomes, receipts))
    return built


def answered_twice() -> JSON:
    # Step 5: the first result answers the request; the second names a
    # request that is no longer live.
    rid = "eli-answered-twice"
    return wire(
        rid,
        [
            ask(rid, SHUTTLE),
            answer(rid, SHUTTLE_ACCEPT, action="accept"),
            answer(rid, DECLINE, action="decline", name="result-again"),
        ],
        [ACCEPTED, ACCEPTED, REFUSED],
        [
            seen_request(f"{rid}:request", SHUTTLE),
            seen_result(f"{rid}:result", SHUTTLE, SHUTTLE_ACCEPT),
        ],
    )


SEAT: JSON = {
    "mode": "form",
    "message": "Aisle or window on the outbound flight?",
    "requestedSchema": {
        "type": "object",
        "properties": {"seat": {"type": "string", "enum": ["aisle", "window"]}},
        "required": ["seat"],
    },
}
MEAL: JSON = {
    "mode": "form",
    "message": "Which meal on the return flight?",
    "requestedSchema": {
        "type": "object",
        "properties": {"meal": {"type": "string", "enum": ["vegetarian", "fish", "chicken"]}},
        "required": ["meal"],
    },
}
SEAT_ANSWER: JSON = {"action": "accept", "content": {"seat": "window"}}
MEAL_ANSWER: JSON = {"action": "accept", "content": {"meal": "fish"}}


def concurrency() -> list[JSON]:
    r1 = "eli-concurrent-two-live"
    r2 = "eli-concurrent-crossed-answers"
    # Two requests live in one session. A second request with A's id while A
    # is live is refused (step 4); B's result in another session is refused
    # (step 5); then B's and A's results are accepted, each content valid
    # only against its own request's schema.
    two_live = wire(
        r1,
        [
            ask(r1, SEAT, name="request-a"),
            ask(r1, MEAL, name="request-b"),
            ask(r1, SEAT, name="request-a"),
            answer(
                r1,
                MEAL_ANSWER,
                action="accept",
                name="result-b-elsewhere",
                parent=f"{r1}:request-b",
                session=f"{r1}:session-elsewhere",
            ),
            answer(r1, MEAL_ANSWER, action="accept", name="result-b", parent=f"{r1}:request-b"),
            answer(r1, SEAT_ANSWER, action="accept", name="result-a", parent=f"{r1}:request-a"),
        ],
        [ACCEPTED, ACCEPTED, REFUSED, REFUSED, ACCEPTED, ACCEPTED],
        [
            seen_request(f"{r1}:request-a", SEAT),
            seen_request(f"{r1}:request-b", MEAL),
            seen_result(f"{r1}:result-b", MEAL, MEAL_ANSWER),
            seen_result(f"{r1}:result-a", SEAT, SEAT_ANSWER),
        ],
    )
    # Each answer sent to the other request first: refused by that request's
    # schema (a required field missing); the refused results answer nothing,
    # so the right answers are accepted afterwards.
    crossed = wire(
        r2,
        [
            ask(r2, SEAT, name="request-a"),
            ask(r2, MEAL, name="request-b"),
            answer(
                r2, MEAL_ANSWER, action="accept", name="result-a-crossed", parent=f"{r2}:request-a"
            ),
            answer(
                r2, SEAT_ANSWER, action="accept", name="result-b-crossed", parent=f"{r2}:request-b"
            ),
            answer(r2, SEAT_ANSWER, action="accept", name="result-a", parent=f"{r2}:request-a"),
            answer(r2, MEAL_ANSWER, action="accept", name="result-b", parent=f"{r2}:request-b"),
        ],
        [ACCEPTED, ACCEPTED, REFUSED, REFUSED, ACCEPTED, ACCEPTED],
        [
            seen_request(f"{r2}:request-a", SEAT),
            seen_request(f"{r2}:request-b", MEAL),
            seen_result(f"{r2}:result-a", SEAT, SEAT_ANSWER),
            seen_result(f"{r2}:result-b", MEAL, MEAL_ANSWER),
        ],
    )
    return [two_live, crossed]
