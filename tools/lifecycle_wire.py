"""Envelopes of the lifecycle set: requests, replies, notifications, steps, rows.

Builders only. They pack the values a row gives them into the upstream
lifecycle format (docs/LIFECYCLE.md) in a fixed key order; they never apply
an effect. Every value that is an answer (the effective input after a call,
the permission carried to the next call, which subscriptions are called or
observed, what each state publishes) is written literally by the row.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

JSON = Any


class _Absent:
    """A field the row leaves out (an event without `items`, a step without them)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

PROTOCOL = "draft"
SOURCE = "urn:ahp:interop"
TIME = "2026-03-02T08:15:00Z"
SESSION = "lc-session"
CALL = "lc-call-1"
OCTETS = "application/octet-stream"

# Step rows advertise no `return` and no `inject`: a `return` effect is the
# unadvertised effect the core rules reject at accept.
STEP_CAPABILITIES: JSON = {
    "effects": ["allow", "deny", "ask", "modify", "message", "flow"],
    "modify": {"input": {"replace": True, "merge": True}},
    "flow": {"operations": ["stop"]},
}
# Chain rows: the upstream chain advertisement plus `ask` (a carried ask).
CHAIN_CAPABILITIES: JSON = {
    "effects": ["allow", "deny", "ask", "modify", "flow"],
    "modify": {"input": {"replace": True, "merge": True}},
    "flow": {"operations": ["stop"]},
}

UNAUTHORIZED_UPLOAD: JSON = {
    "auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"},
    "timeoutMs": 5000,
    "maxBytes": 1048576,
}

TWO_OUTSTANDING = (
    "stdio allows one outstanding intercept request per persistent backend "
    "(spec/draft/base/transports/stdio.md); this schedule keeps two outstanding."
)
STDIO_FRAMES = (
    "emit writes an unsolicited frame on the server's stdout; only the stdio "
    "transport has a stream a reply can be slipped into."
)


def _clone(value: JSON) -> JSON:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def v(text: str) -> JSON:
    """A tool input of the set's shape, `{"value": text}`."""
    return {"value": text}


def state(permission: str) -> JSON:
    """`params.state` as a chain carries it: the permission, no candidate."""
    return {"permission": permission, "candidate": None}


NO_STATE: JSON = state("none")


# ---------------------------------------------------------------- content items


def text_meta(ident: str) -> JSON:
    return {"id": ident, "kind": "text", "mediaType": "text/plain", "selection": "metadata"}


def text_body(ident: str, text: str) -> JSON:
    return {
        "id": ident,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
    }


def attachment(ident: str, ref: str) -> JSON:
    """An attachment whose body is the bytes an upload step bound to the alias `ref`."""
    return {
        "id": ident,
        "kind": "attachment",
        "mediaType": OCTETS,
        "selection": "body",
        "body": {"ref": ref},
    }


def attachment_meta(ident: str, size: int, sha256: str) -> JSON:
    return {
        "id": ident,
        "kind": "attachment",
        "mediaType": OCTETS,
        "selection": "metadata",
        "size": size,
        "sha256": sha256,
    }


def attachment_gap(ident: str, reason: str) -> JSON:
    return {
        "id": ident,
        "kind": "attachment",
        "mediaType": OCTETS,
        "selection": "body",
        "gap": {"reason": reason, "path": f"items.{ident}"},
    }


# ---------------------------------------------------------------- messages


def event(event_id: str, value: JSON, items: JSON = ABSENT) -> JSON:
    """A `tool.before` event for the tool `task` with input `value`."""
    packed: JSON = {
        "id": event_id,
        "source": SOURCE,
        "type": "tool.before",
        "time": TIME,
        "session": {"id": SESSION},
        "call": {"id": CALL},
        "path": "native",
        "tool": {"origin": "native", "name": "task", "kind": "task", "input": _clone(value)},
    }
    if items is not ABSENT:
        packed["items"] = _clone(items)
    return packed


def intercept(
    request_id: str,
    value: JSON,
    *,
    capabilities: JSON,
    state: JSON = NO_STATE,
    items: JSON = ABSENT,
) -> JSON:
    """A canonical `hooks/intercept` request; its event id is the request id."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": PROTOCOL,
            "event": event(request_id, value, items),
            "capabilities": _clone(capabilities),
            "state": _clone(state),
        },
    }


def observe(event_id: str, value: JSON, items: JSON = ABSENT) -> JSON:
    """A canonical `hooks/observe` notification of the event with input `value`."""
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": PROTOCOL, "event": event(event_id, value, items)},
    }


def reply(request_id: str, *effects: JSON) -> JSON:
    """A canonical intercept response with these effects, in order."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"protocolVersion": PROTOCOL, "effects": [_clone(e) for e in effects]},
    }


def error_reply(request_id: str, code: int, message: str) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def fault(kind: str) -> JSON:
    """A scripted operational failure in `responseSequences` (docs/LIFECYCLE.md [ext])."""
    return {"fault": kind}


# ---------------------------------------------------------------- effects


def replace(value: JSON) -> JSON:
    return {"type": "modify", "target": "input", "operation": "replace", "value": _clone(value)}


def merge(value: JSON) -> JSON:
    return {"type": "modify", "target": "input", "operation": "merge", "value": _clone(value)}


def note(text: str) -> JSON:
    return {"type": "message", "text": text}


def allow() -> JSON:
    return {"type": "allow"}


def ask() -> JSON:
    return {"type": "ask"}


def deny(reason: str) -> JSON:
    return {"type": "deny", "reason": reason}


def stop(reason: str) -> JSON:
    return {"type": "flow", "operation": "stop", "reason": reason}


def give(value: JSON) -> JSON:
    """A `return` effect (a supplied result)."""
    return {"type": "return", "value": _clone(value)}


# ---------------------------------------------------------------- steps


def send(key: str, slot: str | None = None, *, bypass: bool = False) -> JSON:
    step: JSON = {"op": "send", "key": key, "slot": slot if slot is not None else key}
    if bypass:
        step["bypassSDK"] = True
    return step


def wait(key: str, count: int = 1) -> JSON:
    return {"op": "wait", "key": key, "count": count}


def release(key: str) -> JSON:
    return {"op": "release", "key": key}


def receive(slot: str) -> JSON:
    return {"op": "receive", "slot": slot}


def accept(key: str) -> JSON:
    return {"op": "accept", "key": key}


def cancel(key: str) -> JSON:
    return {"op": "cancel", "key": key}


def fail_open(key: str) -> JSON:
    return {"op": "failOpen", "key": key}


def observe_step(key: str, subscription: str, items: JSON = ABSENT) -> JSON:
    step: JSON = {"op": "observe", "key": key, "subscription": subscription}
    if items is not ABSENT:
        step["items"] = _clone(items)
    return step


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def upload(
    subscription: str,
    ref: str,
    body: bytes,
    *,
    size: int | None = None,
    sha256: str | None = None,
    settings: JSON = ABSENT,
) -> JSON:
    """An upload step. `size` and `sha256` default to the truth about `body`;
    a row that declares a wrong one passes it."""
    step: JSON = {
        "op": "upload",
        "subscription": subscription,
        "ref": ref,
        "bodyBase64": base64.b64encode(body).decode("ascii"),
        "size": len(body) if size is None else size,
        "sha256": digest(body) if sha256 is None else sha256,
    }
    if settings is not ABSENT:
        step["upload"] = _clone(settings)
    return step


def emit(response: JSON) -> JSON:
    return {"op": "emit", "response": _clone(response)}


# ---------------------------------------------------------------- expectations


def published(decision: str, executed: bool, value: JSON, messages: list[str]) -> JSON:
    """`states[id]`: the core keys a published reply leaves (no flow outcome)."""
    return {
        "decision": decision,
        "executed": executed,
        "input": _clone(value),
        "messages": messages,
    }


def stopped(decision: str, value: JSON, messages: list[str]) -> JSON:
    """`states[id]` of a published flow stop: the call does not proceed."""
    return {
        "decision": decision,
        "executed": False,
        "input": _clone(value),
        "messages": messages,
        "flow": "stop",
    }


def seen(event_id: str, subscription: str, value: JSON) -> JSON:
    """One entry of `observations`: the event, the subscription, the input it carried."""
    return {"eventId": event_id, "subscription": subscription, "input": _clone(value)}


def outcome(
    *,
    published: list[str],
    cancelled: list[str],
    ignored: list[str],
    states: JSON,
    observations: list[JSON],
    uploads: list[int],
) -> JSON:
    return {
        "published": published,
        "cancelled": cancelled,
        "ignored": ignored,
        "states": states,
        "observations": observations,
        "uploadStatuses": uploads,
    }


def chain_outcome(
    *, called: list[str], failures: list[str], observations: list[str], input: JSON
) -> JSON:
    return {
        "called": called,
        "failures": failures,
        "observations": observations,
        "input": _clone(input),
    }


# ---------------------------------------------------------------- rows


def step_row(
    sid: str,
    *,
    requests: JSON,
    responses: JSON,
    steps: list[JSON],
    expected: JSON,
    sequences: JSON = ABSENT,
    transports: list[str] | None = None,
    reason: str | None = None,
) -> JSON:
    row: JSON = {"id": sid, "requests": requests, "responses": responses}
    if sequences is not ABSENT:
        row["responseSequences"] = sequences
    row["steps"] = steps
    row["expected"] = expected
    if transports is not None:
        row["transports"] = transports
    if reason is not None:
        row["inapplicableReason"] = reason
    return row


def subscription(
    sid: str,
    name: str,
    mode: str,
    *,
    backend: str,
    policy: str = "fail-open",
    content: str = "metadata",
    timeout: int | None = None,
) -> JSON:
    """One chain subscription, id `<scenario id>:<name>`."""
    sub: JSON = {
        "id": f"{sid}:{name}",
        "backend": backend,
        "mode": mode,
        "failurePolicy": policy,
        "content": content,
    }
    if timeout is not None:
        sub["timeoutMs"] = timeout
    return sub


def chain_row(
    sid: str,
    *,
    subscriptions: list[JSON],
    request: JSON,
    sequence: list[JSON],
    expected: JSON,
    requests: list[JSON],
    observations: list[JSON],
    interrupt: bool = False,
    hold_observers: bool = False,
    observe_faults: JSON = ABSENT,
) -> JSON:
    """A chain scenario. `sequence` is one entry per call the server receives
    (empty: none, so no `responseSequences`); `responses.a` is its first
    response, or a reply without effects when it has none (never sent)."""
    rid = request["id"]
    responses = [e for e in sequence if "fault" not in e]
    row: JSON = {
        "id": sid,
        "chain": {
            "subscriptions": subscriptions,
            "interrupt": interrupt,
            "holdObservers": hold_observers,
        },
        "requests": {"a": request},
        "responses": {"a": _clone(responses[0]) if responses else reply(rid)},
    }
    if sequence:
        row["responseSequences"] = {"a": sequence}
    if observe_faults is not ABSENT:
        row["observeFaults"] = observe_faults
    row["steps"] = []
    row["expected"] = expected
    row["chainProof"] = {"requests": requests, "observations": observations}
    return row
