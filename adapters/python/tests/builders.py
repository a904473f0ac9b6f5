"""Builders of canonical intercept requests and responses for the engine's tests."""

from __future__ import annotations

import copy
import json
from typing import Any

ALL_EFFECTS = ["deny", "allow", "ask", "modify", "message", "return", "flow", "inject"]
BOTH = {"replace": True, "merge": True}
INJECT_CAPS = {"context": {"append": True, "deliverAt": ["now", "next_turn"]}}


def text_part(part_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": part_id,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": text,
        **extra,
    }


def withheld_part(part_id: str, selection: str = "omit") -> dict[str, Any]:
    return {
        "id": part_id,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": selection,
    }


def gap_part(part_id: str) -> dict[str, Any]:
    return {
        "id": part_id,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "gap": {"reason": "unavailable"},
    }


def message(message_id: str, role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": message_id, "role": role, "parts": list(parts)}


def elicitation_result_part(result: dict[str, Any]) -> dict[str, Any]:
    return text_part("mcp-result", json.dumps(result))


PAYLOADS: dict[str, dict[str, Any]] = {
    "tool.before": {
        "session": {"id": "s1"},
        "call": {"id": "c1"},
        "path": "native",
        "tool": {
            "origin": "native",
            "name": "write",
            "kind": "file_write",
            "input": {"path": "a.txt", "mode": "w"},
        },
    },
    "tool.after": {
        "session": {"id": "s1"},
        "call": {"id": "c1"},
        "path": "native",
        "tool": {"origin": "native", "name": "read", "input": {"path": "a.txt"}},
        "outcome": "ok",
        "execution": {"status": "executed"},
        "items": [message("m1", "tool", text_part("p1", "result"))],
    },
    "turn.finish.before": {
        "turn": {"id": "t1"},
        "outcome": "completed",
        "continuationCount": 0,
        "items": [message("m1", "assistant", text_part("p1", "done"))],
    },
    "model.request.before": {
        "model": {"id": "model", "provider": "provider"},
        "attempt": {"id": "a1", "number": 1},
        "params": {},
        "items": [message("m1", "user", text_part("p1", "hello"))],
    },
    "context.compact.before": {
        "trigger": "auto",
        "items": [],
        "instructions": [text_part("i1", "keep decisions")],
    },
    "context.compact.after": {
        "summary": [text_part("s1", "summary")],
        "removed": [],
        "execution": {"status": "executed"},
    },
    "user.message.outbound": {
        "message": {
            "channel": "chat",
            "messages": [message("m1", "assistant", text_part("p1", "How can I help?"))],
        },
    },
    "user.elicitation.result": {
        "elicitation": {
            "server": "srv",
            "mode": "form",
            "action": "accept",
            "result": elicitation_result_part(
                {"action": "accept", "content": {"name": "old", "keep": True}}
            ),
        },
    },
    "workspace.change.before": {
        "workspace": {"kind": "cwd", "change": {"cwd": "/new"}},
    },
}

TARGETS = {
    "tool.before": "input",
    "tool.after": "output",
    "turn.finish.before": "response",
    "model.request.before": "request",
    "context.compact.before": "instructions",
    "context.compact.after": "summary",
    "user.message.outbound": "content",
    "user.elicitation.result": "content",
    "workspace.change.before": "workspace",
}


def request(
    event_type: str,
    effects: list[str],
    *,
    modify: dict[str, Any] | None = None,
    flow: dict[str, Any] | None = None,
    inject: dict[str, Any] | None = None,
    state: dict[str, Any] | None = None,
    event_id: str = "evt-1",
    **event_fields: Any,
) -> dict[str, Any]:
    """A hooks/intercept request; ``event_fields`` replace payload fields.

    A field given as None is removed from the event.
    """
    event: dict[str, Any] = {
        "id": event_id,
        "source": "urn:ahp:test",
        "type": event_type,
        "time": "2026-01-01T00:00:00Z",
    }
    event.update(copy.deepcopy(PAYLOADS[event_type]))
    for name, value in event_fields.items():
        if value is None:
            event.pop(name, None)
        else:
            event[name] = value
    capabilities: dict[str, Any] = {"effects": effects}
    if modify is not None:
        capabilities["modify"] = modify
    if flow is not None:
        capabilities["flow"] = flow
    if inject is not None:
        capabilities["inject"] = inject
    params: dict[str, Any] = {
        "protocolVersion": "draft",
        "event": event,
        "capabilities": capabilities,
    }
    if state is not None:
        params["state"] = state
    return {
        "jsonrpc": "2.0",
        "id": event_id,
        "method": "hooks/intercept",
        "params": params,
    }


def response(req: dict[str, Any], *effects: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": req["id"],
        "result": {"protocolVersion": "draft", "effects": list(effects)},
    }


def modify(target: str, operation: str, value: Any) -> dict[str, Any]:
    return {"type": "modify", "target": target, "operation": operation, "value": value}


def inject(deliver_at: str = "now", text: str = "context") -> dict[str, Any]:
    return {
        "type": "inject",
        "target": "context",
        "operation": "append",
        "deliverAt": deliver_at,
        "value": [message("ctx", "user", text_part("ctx-text", text))],
    }
