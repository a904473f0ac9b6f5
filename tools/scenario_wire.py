"""Small builders for the AHP wire values used by the core scenario set.

Every function returns a fresh JSON value (dicts and lists), so callers may
embed the same logical value in a request and in an expectation without
sharing mutable objects. Nothing here applies effects: these are only the
nouns (parts, messages, events, capabilities, effects, envelopes).
"""

from __future__ import annotations

import copy
import json
from typing import Any

JSON = Any

PROTOCOL_VERSION = "draft"
SOURCE = "urn:ahp-interop:core"
TIME = "2026-04-02T10:15:00Z"
SESSION_ID = "core-session-1"

# ---------------------------------------------------------------- content


def _part(part_id: str, kind: str, media_type: str, selection: str, **extra: JSON) -> JSON:
    """A content part; `extra` (its body, body reference or gap) follows `selection`."""
    part: dict[str, JSON] = {
        "id": part_id,
        "kind": kind,
        "mediaType": media_type,
        "selection": selection,
    }
    part.update(copy.deepcopy(extra))
    return part


def text(part_id: str, body: str) -> JSON:
    """A text part with its body inline."""
    return _part(part_id, "text", "text/plain", "body", text=body)


def text_metadata(part_id: str) -> JSON:
    """A text part whose body is withheld (metadata selection)."""
    return _part(part_id, "text", "text/plain", "metadata")


def text_omitted(part_id: str) -> JSON:
    """A text part that was deliberately omitted."""
    return _part(part_id, "text", "text/plain", "omit")


def text_gap(part_id: str, reason: str) -> JSON:
    """A text part whose requested body is unavailable."""
    return _part(part_id, "text", "text/plain", "body", gap={"reason": reason})


def attachment(part_id: str, media_type: str, ref: str) -> JSON:
    """An attachment part with a body reference."""
    return _part(part_id, "attachment", media_type, "body", body={"ref": ref})


def attachment_metadata(part_id: str, media_type: str) -> JSON:
    """An attachment part whose bytes are withheld."""
    return _part(part_id, "attachment", media_type, "metadata")


def message(message_id: str, role: str, *parts: JSON) -> JSON:
    """A canonical message with the given parts, in order."""
    return {"id": message_id, "role": role, "parts": [copy.deepcopy(p) for p in parts]}


def say(message_id: str, role: str, body: str) -> JSON:
    """A canonical message holding one inline text part."""
    return message(message_id, role, text(f"{message_id}-text", body))


def compact_json(value: JSON) -> str:
    """Serialize a value the way structured data travels inside a text part."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------- effects


def deny(reason: str, code: str | None = None) -> JSON:
    effect: dict[str, JSON] = {"type": "deny", "reason": reason}
    if code is not None:
        effect["code"] = code
    return effect


def allow() -> JSON:
    return {"type": "allow"}


def ask() -> JSON:
    return {"type": "ask"}


def note(body: str) -> JSON:
    """A `message` effect (user-facing text)."""
    return {"type": "message", "text": body}


def give(value: JSON) -> JSON:
    """A `return` effect supplying a result."""
    return {"type": "return", "value": copy.deepcopy(value)}


def modify(target: str, operation: str, value: JSON) -> JSON:
    return {
        "type": "modify",
        "target": target,
        "operation": operation,
        "value": copy.deepcopy(value),
    }


def replace(target: str, value: JSON) -> JSON:
    return modify(target, "replace", value)


def merge(target: str, value: JSON) -> JSON:
    return modify(target, "merge", value)


def stop(reason: str) -> JSON:
    return {"type": "flow", "operation": "stop", "reason": reason}


def proceed(instruction: str | None = None) -> JSON:
    """A flow `continue` effect, with or without an instruction."""
    effect: dict[str, JSON] = {"type": "flow", "operation": "continue"}
    if instruction is not None:
        effect["instruction"] = instruction
    return effect


def inject(deliver_at: str, *messages: JSON) -> JSON:
    return {
        "type": "inject",
        "target": "context",
        "operation": "append",
        "deliverAt": deliver_at,
        "value": [copy.deepcopy(m) for m in messages],
    }


# ---------------------------------------------------------------- capabilities


def target_caps(target: str, *, replace: bool = True, merge: bool = True) -> JSON:
    """One `capabilities.modify` entry."""
    return {target: {"replace": replace, "merge": merge}}


def flow_caps(
    *operations: str,
    remaining: int | None = None,
    count: int | None = None,
    maximum: int | None = None,
) -> JSON:
    block: dict[str, JSON] = {"operations": list(operations)}
    if remaining is not None:
        block["remainingContinuations"] = remaining
    if count is not None:
        block["continuationCount"] = count
    if maximum is not None:
        block["maxContinuations"] = maximum
    return block


def inject_caps(*deliver_at: str) -> JSON:
    return {"context": {"append": True, "deliverAt": list(deliver_at)}}


def capabilities(
    effects: list[str],
    *,
    modify: JSON | None = None,
    flow: JSON | None = None,
    inject: JSON | None = None,
) -> JSON:
    caps: dict[str, JSON] = {"effects": list(effects)}
    if modify is not None:
        caps["modify"] = copy.deepcopy(modify)
    if flow is not None:
        caps["flow"] = copy.deepcopy(flow)
    if inject is not None:
        caps["inject"] = copy.deepcopy(inject)
    return caps


# ---------------------------------------------------------------- state


def state(permission: str = "none", candidate: JSON = None, flow: str | None = None) -> JSON:
    """`params.state`; pass a candidate made by `candidate_of`, or None."""
    value: dict[str, JSON] = {"permission": permission, "candidate": copy.deepcopy(candidate)}
    if flow is not None:
        value["flow"] = flow
    return value


def candidate_of(value: JSON, origin: str = "org.example.cache") -> JSON:
    return {"value": copy.deepcopy(value), "provenance": {"backend": origin}}


# ---------------------------------------------------------------- events
# Each returns the event payload after the envelope fields (id, source, type,
# time), starting with `type` and the session.


def _event(event_type: str, **payload: JSON) -> dict[str, JSON]:
    """An event of `event_type` in this set's session; `payload` keys follow in order."""
    event: dict[str, JSON] = {"type": event_type, "session": {"id": SESSION_ID}}
    event.update(copy.deepcopy(payload))
    return event


def _tool_event(event_type: str, name: str, kind: str, tool_input: JSON, call_id: str) -> JSON:
    """The fields `tool.before` and `tool.after` share, for a native tool."""
    tool = {"name": name, "kind": kind, "origin": "native", "input": tool_input}
    return _event(event_type, call={"id": call_id}, tool=tool, path="native")


def tool_before_event(name: str, kind: str, tool_input: JSON, call_id: str = "call-1") -> JSON:
    return _tool_event("tool.before", name, kind, tool_input, call_id)


def tool_after_event(
    name: str, kind: str, tool_input: JSON, items: list[JSON], call_id: str = "call-1"
) -> JSON:
    return {
        **_tool_event("tool.after", name, kind, tool_input, call_id),
        "outcome": "ok",
        "execution": {"status": "executed"},
        "durationMs": 42,
        "items": copy.deepcopy(items),
    }


def turn_finish_event(items: list[JSON], continuation_count: int = 0) -> JSON:
    return _event(
        "turn.finish.before",
        turn={"id": "turn-3"},
        outcome="completed",
        continuationCount=continuation_count,
        items=items,
    )


def model_request_event(items: list[JSON]) -> JSON:
    return _event(
        "model.request.before",
        turn={"id": "turn-3"},
        model={"id": "example-model-large", "provider": "example"},
        attempt={"id": "attempt-1", "number": 1},
        params={},
        items=items,
    )


def compact_before_event(items: list[JSON], instructions: list[JSON] | None) -> JSON:
    event = _event("context.compact.before", trigger="auto", items=items)
    if instructions is not None:
        event["instructions"] = copy.deepcopy(instructions)
    return event


def compact_after_event(summary: list[JSON], removed: list[str]) -> JSON:
    return _event(
        "context.compact.after",
        summary=summary,
        removed=[{"id": item_id} for item_id in removed],
        execution={"status": "executed"},
    )


def outbound_event(messages: list[JSON], channel: str = "chat") -> JSON:
    return _event("user.message.outbound", message={"channel": channel, "messages": messages})


def elicitation_result_event(
    *, mode: str, action: str, result: JSON | None, server: str = "calendar"
) -> JSON:
    """`user.elicitation.result`; `result` is one text part (or None)."""
    elicitation: dict[str, JSON] = {"server": server, "mode": mode, "action": action}
    if result is not None:
        elicitation["result"] = result
    return _event(
        "user.elicitation.result",
        parentEventId="core-elicitation-request-1",
        elicitation=elicitation,
    )


def workspace_before_event(kind: str, change: JSON, prior: JSON | None = None) -> JSON:
    workspace: dict[str, JSON] = {"kind": kind, "change": change}
    if prior is not None:
        workspace["prior"] = prior
    workspace["reason"] = "user requested a different project"
    return _event("workspace.change.before", workspace=workspace)


# ---------------------------------------------------------------- envelopes


def intercept_request(
    scenario_id: str, event: JSON, caps: JSON, incoming_state: JSON | None
) -> JSON:
    """The canonical `hooks/intercept` request; `incoming_state` None omits `state`."""
    full_event: dict[str, JSON] = {"id": scenario_id, "source": SOURCE}
    full_event["type"] = event["type"]
    full_event["time"] = TIME
    for key, value in event.items():
        if key != "type":
            full_event[key] = copy.deepcopy(value)
    params: dict[str, JSON] = {
        "protocolVersion": PROTOCOL_VERSION,
        "event": full_event,
        "capabilities": copy.deepcopy(caps),
    }
    if incoming_state is not None:
        params["state"] = copy.deepcopy(incoming_state)
    return {"jsonrpc": "2.0", "id": scenario_id, "method": "hooks/intercept", "params": params}


def success(response_id: JSON, effects: JSON, **result_extra: JSON) -> JSON:
    """A success response carrying `effects` (any JSON, so it can be malformed)."""
    result: dict[str, JSON] = {
        "protocolVersion": PROTOCOL_VERSION,
        "effects": copy.deepcopy(effects),
    }
    result.update(copy.deepcopy(result_extra))
    return {"jsonrpc": "2.0", "id": response_id, "result": result}
