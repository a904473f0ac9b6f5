"""Envelopes of the catalogue set: events, notifications, steps, rows, content.

Builders only. They pack the values a row gives them into the catalogue
format (docs/CATALOGUE.md) in a fixed key order. They never judge a message:
whether a notification is schema-valid, whether the receiver accepts it,
whether a registration document is accepted and by which rule, is written by
hand in each row (the `OK`/`SCHEMA`/`LINEAGE` verdicts, the `ACCEPTED` /
`rejected(rule)` entries and the explicit `sent` list). The only bookkeeping
here checks that a row's hand-written `sent` agrees with its hand-marked
steps (a `refused` notify is one the row says the client must not send).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

JSON = Any

PROTOCOL = "draft"
# Our sources (the upstream file uses urn:ahp:catalogue, urn:source:a and urn:source:b).
EVENTS = "urn:ahp-interop:catalogue:events"
A = "urn:ahp-interop:catalogue:a"
B = "urn:ahp-interop:catalogue:b"
# Our times: a plain UTC one, and one with an offset and a fraction.
TIME = "2027-03-14T09:26:53Z"
LATER = "2027-03-14T09:31:07Z"
OFFSET_TIME = "2027-03-14T11:26:53.250+02:00"

OK: JSON = {"accepted": True, "errorKind": None}
SCHEMA: JSON = {"accepted": False, "errorKind": "schema"}
LINEAGE: JSON = {"accepted": False, "errorKind": "lineage"}

ACCEPTED: JSON = {"accepted": True}
RULES = (
    "schema",
    "duplicate-backend",
    "transport",
    "authentication",
    "credential",
    "event",
    "scope",
    "timeout",
    "requirement",
    "interactive",
)
LINEAGE_RULES = ("identity", "cycle", "proposal", "no-op", "unknown-parent")


def rejected(rule: str) -> JSON:
    """A registration expectation: rejected by `rule` (the first failing one, by hand)."""
    if rule not in RULES:
        raise ValueError(f"unknown registration rule {rule!r}")
    return {"accepted": False, "rule": rule}


def _clone(value: JSON) -> JSON:
    return json.loads(json.dumps(value))


# ---------------------------------------------------------------- events


def event(type_: str, eid: str, source: str = EVENTS, time: str = TIME, **fields: JSON) -> JSON:
    """An event: id, source, type, time, then the row's fields in the row's order.

    A field named with a trailing underscore (`from_`) loses it; `parent`
    becomes `parentEventId`.
    """
    out: dict[str, JSON] = {"id": eid, "source": source, "type": type_, "time": time}
    for key, value in fields.items():
        name = "parentEventId" if key == "parent" else key.rstrip("_")
        out[name] = value
    return out


def without(value: JSON, *paths: str) -> JSON:
    """A copy of `value` without the dotted `paths` (to break a message by hand)."""
    out = _clone(value)
    for path in paths:
        *head, last = path.split(".")
        node = out
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node[key]
        del node[last]
    return out


def note(evt: JSON) -> JSON:
    """A hooks/observe notification carrying `evt`."""
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": PROTOCOL, "event": _clone(evt)},
    }


# ---------------------------------------------------------------- content


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_body(pid: str, text: str, **extra: JSON) -> JSON:
    return {
        "id": pid,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
        **extra,
    }


def text_meta(pid: str, text: str, **extra: JSON) -> JSON:
    """A metadata text part describing `text` (size in UTF-8 bytes, its SHA-256)."""
    size = len(text.encode("utf-8"))
    return {
        "id": pid,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "metadata",
        "size": size,
        "sha256": sha(text),
        **extra,
    }


def text_omit(pid: str, **extra: JSON) -> JSON:
    return {"id": pid, "kind": "text", "mediaType": "text/plain", "selection": "omit", **extra}


def text_gap(pid: str, reason: str, **extra: JSON) -> JSON:
    return {
        "id": pid,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "gap": {"reason": reason},
        **extra,
    }


def attachment_meta(pid: str, media: str, size: int, digest_of: str) -> JSON:
    return {
        "id": pid,
        "kind": "attachment",
        "mediaType": media,
        "selection": "metadata",
        "size": size,
        "sha256": sha(digest_of),
    }


def attachment_omit(pid: str, media: str) -> JSON:
    return {"id": pid, "kind": "attachment", "mediaType": media, "selection": "omit"}


def attachment_gap(pid: str, media: str, reason: str, path: str) -> JSON:
    return {
        "id": pid,
        "kind": "attachment",
        "mediaType": media,
        "selection": "body",
        "gap": {"reason": reason, "path": path},
    }


def message(mid: str, role: str, *parts: JSON, **extra: JSON) -> JSON:
    return {"id": mid, "role": role, "parts": list(parts), **extra}


# ---------------------------------------------------------------- steps and rows


@dataclass(frozen=True)
class Step:
    """A step as the row marks it: `refused` notifies are ones the row says are not sent."""

    body: JSON
    refused: bool = False

    @property
    def op(self) -> str:
        op: str = self.body["op"]
        return op


def notify(message_: JSON) -> Step:
    """A notify the row says is schema-valid: the client sends it."""
    return Step({"op": "notify", "message": _clone(message_)})


def refused(message_: JSON) -> Step:
    """A notify the row says is schema-invalid: the client must not send it."""
    return Step({"op": "notify", "message": _clone(message_)}, refused=True)


def raw(message_: JSON) -> Step:
    """A rawNotify: sent unchanged, without the SDK's checks."""
    return Step({"op": "rawNotify", "message": _clone(message_)})


def context(interactive: bool = False, environment: dict[str, str] | None = None) -> JSON:
    return {"interactive": interactive, "environment": dict(environment or {})}


def register(
    registration: JSON, requirements: list[JSON] | None = None, ctx: JSON | None = None
) -> Step:
    return Step(
        {
            "op": "register",
            "registration": _clone(registration),
            "requirements": _clone(requirements or []),
            "context": _clone(ctx if ctx is not None else context()),
        }
    )


@dataclass(frozen=True)
class Row:
    """One scenario and the tag the set's own tests count it by (never written to the file).

    `tag` is the execution variant (`minimal`, `rich`, `variant`, `invalid:<kind>`,
    `refused`), the lineage rule, or one registration rule per register step.
    """

    tag: str | tuple[str, ...]
    scenario: JSON
    marks: tuple[Step, ...]

    @property
    def id(self) -> str:
        sid: str = self.scenario["id"]
        return sid


def row(
    tag: str | tuple[str, ...],
    sid: str,
    category: str,
    steps: list[Step],
    *,
    sent: list[JSON],
    deliveries: list[JSON],
    registrations: list[JSON] | None = None,
) -> Row:
    scenario = {
        "id": sid,
        "category": category,
        "steps": [_clone(s.body) for s in steps],
        "expected": {
            "sent": _clone(sent),
            "registrations": _clone(registrations or []),
            "deliveries": _clone(deliveries),
        },
        "requests": {},
        "responses": {},
    }
    return Row(tag, scenario, tuple(steps))


def bookkeeping(r: Row) -> list[str]:
    """Where a row's hand-written expectation disagrees with its hand-marked steps."""
    sid = r.id
    problems = []
    expected = r.scenario["expected"]
    marked = [
        s.body["message"] for s in r.marks if s.op in ("notify", "rawNotify") and not s.refused
    ]
    if expected["sent"] != marked:
        problems.append(
            f"{sid}: sent must be the rawNotify and unrefused notify messages, in order"
        )
    if len(expected["deliveries"]) != len(expected["sent"]):
        problems.append(f"{sid}: one delivery per sent message")
    sending = [s for s in r.marks if s.op in ("notify", "rawNotify") and not s.refused]
    for step, verdict in zip(sending, expected["deliveries"], strict=False):
        if verdict not in (OK, SCHEMA, LINEAGE):
            problems.append(f"{sid}: unknown verdict {verdict!r}")
        # The set's convention: notify carries what the receiver accepts, rawNotify what
        # it rejects (CATALOGUE.md: "the receiver must reject it").
        if (step.op == "notify") != (verdict == OK):
            problems.append(f"{sid}: a notify is accepted and a rawNotify rejected")
    registers = [s for s in r.marks if s.op == "register"]
    if len(registers) != len(expected["registrations"]):
        problems.append(f"{sid}: one registration entry per register step")
    for entry in expected["registrations"]:
        if entry != ACCEPTED and entry.get("rule") not in RULES:
            problems.append(f"{sid}: a rejected registration names its rule")
    for step in r.marks:
        if step.op in ("notify", "rawNotify"):
            eid = step.body["message"].get("params", {}).get("event", {}).get("id")
            if not isinstance(eid, str):
                problems.append(f"{sid}: every message has a string params.event.id")
    return problems
