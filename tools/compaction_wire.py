"""Envelopes of the compaction set: events, requests, replies, notifications, rows.

Builders only. They pack the values a row gives them into the format of
docs/COMPACTION.md in a fixed key order; they never apply an effect, never
choose a summary, never decide an outcome. Every answer (the instructions a
call carries, the state carried forward, the summary of the after event and
its text, its execution, which subscriptions are called, failed or observed)
is written literally by the row.
"""

from __future__ import annotations

from typing import Any

JSON = Any


class _Absent:
    """A field the row leaves out (a request without `state`)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

PROTOCOL = "draft"
SOURCE = "urn:ahp-interop:compaction"
TIME = "2026-04-11T09:30:00Z"
SESSION = "cmp-session"

# What every before request advertises: everything context.compact.before may
# carry except `inject` (capabilities.schema.json#/$defs/context.compact.before
# allows deny, modify, return, inject, message; never allow, ask or flow).
BEFORE_CAPABILITIES: JSON = {
    "effects": ["deny", "modify", "return", "message"],
    "modify": {"instructions": {"replace": True, "merge": False}},
}
# COMPACTION.md step 4: CAPS_AFTER, and the observe-only variant.
AFTER_CAPABILITIES: JSON = {
    "effects": ["modify"],
    "modify": {"summary": {"replace": True, "merge": False}},
}
OBSERVE_ONLY_CAPABILITIES: JSON = {"effects": []}

EXECUTED: JSON = {"status": "executed"}
SUPPLIED: JSON = {"status": "skipped", "reason": "supplied_result"}
GENERATED: JSON = {"kind": "generated"}

FAST, SLOW = 250, 10000  # a failing call's deadline (a timeout fault), everyone else's


def _clone(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def state(permission: str = "none", candidate: JSON = None) -> JSON:
    """`params.state` as written by the row: a permission and a candidate (or null)."""
    return {"permission": permission, "candidate": _clone(candidate)}


NO_STATE: JSON = state()


def candidate(value: JSON) -> JSON:
    """A carried `state.candidate`: the value a `return` bound."""
    return {"value": _clone(value)}


def supplied_by(subscription_id: str) -> JSON:
    return {"kind": "supplied", "supplier": subscription_id}


# ---------------------------------------------------------------- content


def text(ident: str, body: str) -> JSON:
    """An inline text part (body selection)."""
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": body,
    }


def message(ident: str, role: str, body: str) -> JSON:
    return {"id": ident, "role": role, "parts": [text(f"{ident}:text", body)]}


def removed(*ids: str) -> list[JSON]:
    """The after event's `removed`: the ids the row lists, as item refs."""
    return [{"id": ident} for ident in ids]


# ---------------------------------------------------------------- events


def before_event(rid: str, items: list[JSON], instructions: JSON = ABSENT) -> JSON:
    packed: JSON = {
        "id": f"{rid}:before",
        "source": SOURCE,
        "type": "context.compact.before",
        "time": TIME,
        "session": {"id": SESSION},
        "trigger": "manual",
        "items": _clone(items),
    }
    if instructions is not ABSENT:
        packed["instructions"] = _clone(instructions)
    return packed


def after_event(rid: str, summary: JSON, removed_items: list[JSON], execution: JSON) -> JSON:
    return {
        "id": f"{rid}:after",
        "source": SOURCE,
        "type": "context.compact.after",
        "time": TIME,
        "session": {"id": SESSION},
        "parentEventId": f"{rid}:before",
        "summary": _clone(summary),
        "removed": _clone(removed_items),
        "execution": _clone(execution),
    }


def intercept(event: JSON, capabilities: JSON, carried: JSON = ABSENT) -> JSON:
    params: JSON = {
        "protocolVersion": PROTOCOL,
        "event": _clone(event),
        "capabilities": _clone(capabilities),
    }
    if carried is not ABSENT:
        params["state"] = _clone(carried)
    return {"jsonrpc": "2.0", "id": event["id"], "method": "hooks/intercept", "params": params}


def observe(event: JSON) -> JSON:
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": PROTOCOL, "event": _clone(event)},
    }


# ---------------------------------------------------------------- replies and effects


def reply(request_id: str, *effects: JSON) -> JSON:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"protocolVersion": PROTOCOL, "effects": [_clone(e) for e in effects]},
    }


def raw_reply(request_id: str, result: JSON) -> JSON:
    """A reply whose result the row writes whole (a deliberately malformed one)."""
    return {"jsonrpc": "2.0", "id": request_id, "result": _clone(result)}


def fault(kind: str) -> JSON:
    return {"fault": kind}


def modify(target: str, value: JSON, operation: str = "replace") -> JSON:
    return {"type": "modify", "target": target, "operation": operation, "value": _clone(value)}


def give(value: JSON) -> JSON:
    return {"type": "return", "value": _clone(value)}


def deny(reason: str) -> JSON:
    return {"type": "deny", "reason": reason}


def ask() -> JSON:
    return {"type": "ask"}


def note(body: str) -> JSON:
    return {"type": "message", "text": body}


# ---------------------------------------------------------------- rows


def sub(
    rid: str,
    name: str,
    mode: str = "intercept",
    *,
    policy: str = "fail-open",
    backend: str = "cmp-main",
    timeout: int | None = None,
) -> JSON:
    """One subscription, id `<row id>:<name>`; observers carry no policy or deadline."""
    packed: JSON = {"id": f"{rid}:{name}", "mode": mode}
    if mode == "intercept":
        packed["failurePolicy"] = policy
        if timeout is not None:
            packed["timeoutMs"] = timeout
    packed["backend"] = backend
    return packed


def boundary(called: list[str], failures: list[str], observations: list[str]) -> JSON:
    return {"called": called, "failures": failures, "observations": observations}


NOT_RUN: JSON = boundary([], [], [])


def expected(
    *,
    applied: bool,
    instructions: JSON,
    summary: JSON,
    execution: JSON,
    provenance: JSON,
    before: JSON,
    after: JSON,
) -> JSON:
    return {
        "applied": applied,
        "instructions": _clone(instructions),
        "summary": _clone(summary),
        "execution": _clone(execution),
        "provenance": _clone(provenance),
        "before": _clone(before),
        "after": _clone(after),
    }


def run(
    rid: str,
    *,
    request: JSON,
    before: list[JSON],
    after: list[JSON],
    before_replies: list[JSON],
    after_replies: list[JSON],
    outcome: JSON,
    before_calls: list[JSON],
    after_calls: list[JSON],
    observations: list[JSON],
    observe_only: bool = False,
    transports: list[str] | None = None,
    reason: str | None = None,
) -> JSON:
    row: JSON = {
        "id": rid,
        "request": _clone(request),
        "before": before,
        "after": after,
        "afterObserveOnly": observe_only,
        "responseSequences": {"before": before_replies, "after": after_replies},
        "expected": outcome,
        "proof": {"before": before_calls, "after": after_calls, "observations": observations},
    }
    if transports is not None:
        row["transports"] = transports
    if reason is not None:
        row["inapplicableReason"] = reason
    return row


def negative(rid: str, request: JSON) -> JSON:
    return {"id": rid, "negative": _clone(request), "expected": {"error": -32602}}
