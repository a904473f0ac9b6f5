"""The composition engine: one `tool.before` request plus its response -> the outcome.

Implemented: the decision effects (deny > ask > allow; the incoming
`state.permission` carries over: deny is sticky, ask survives allow, allow only
lifts none), messages in order, `modify` of `input` (replace whole; merge
shallow, a null kept as a literal null), and `return` (a supplied result,
which skips execution). Within one response the modifications apply before a
supplied result binds: a changed input drops the incoming `state.candidate`,
the response's last `return` becomes the candidate. A result is published only
when the decision is allow. Not implemented (reported unsupported): other
events, `flow` and `inject` effects, and an incoming `state.flow`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from upstream_emulator import effects, host
from upstream_emulator.jsonequal import same

REJECTED = {"rejected": True}
PERMISSIONS = ("none", "allow", "ask", "deny")


@dataclass
class Outcome:
    actual: Any = None
    unsupported: str | None = None  # why this engine cannot compute the outcome


def _state(params: dict[str, Any]) -> tuple[str, list[Any]] | str:
    """(permission, [candidate value] or []) of the incoming state, or what is unsupported."""
    state = params.get("state")
    if state is None:
        return "none", []
    if not isinstance(state, dict) or state.get("permission") not in PERMISSIONS:
        return "an incoming state this engine does not read"
    flowing = state.get("flow") not in (None, "none")
    if flowing or state.get("instructions") or state.get("injections"):
        return "incoming flow state (flow is not implemented)"
    candidate = state.get("candidate")
    if candidate is None:
        return str(state["permission"]), []
    if not isinstance(candidate, dict) or "value" not in candidate:
        return "an incoming candidate without a value"
    return str(state["permission"]), [candidate["value"]]


def apply(request: dict[str, Any], response: Any) -> Outcome:
    params = request.get("params", {})
    event = params.get("event", {})
    if event.get("type") != "tool.before":
        return Outcome(unsupported=f"event type {event.get('type')!r} is not implemented")
    tool = event.get("tool", {})
    original = tool.get("input")
    if not isinstance(original, dict):
        return Outcome(unsupported="a tool.before event without an input object")
    if effects.envelope_problem(request, response) is not None:
        return Outcome(REJECTED)
    listed = response["result"]["effects"]
    capabilities = params.get("capabilities", {})
    if any(effects.effect_problem(e, capabilities) is not None for e in listed):
        return Outcome(REJECTED)
    used = sorted({e["type"] for e in listed} & {"flow", "inject"})
    if used:
        return Outcome(unsupported=f"effect(s) {', '.join(used)} not implemented")
    state = _state(params)
    if isinstance(state, str):
        return Outcome(unsupported=state)
    permission, candidate = state
    current: dict[str, Any] = copy.deepcopy(original)
    messages: list[str] = []
    supplied: list[Any] = []
    for effect in listed:
        kind = effect["type"]
        if kind == "deny":
            permission = "deny"
        elif kind == "ask" and permission != "deny":
            permission = "ask"
        elif kind == "allow" and permission == "none":
            permission = "allow"
        elif kind == "message":
            messages.append(effect["text"])
        elif kind == "return":
            supplied = [copy.deepcopy(effect["value"])]
        elif kind == "modify":
            value = copy.deepcopy(effect["value"])
            current = value if effect["operation"] == "replace" else {**current, **value}
    if host.input_problem(tool.get("name"), current) is not None:
        return Outcome(REJECTED)
    if not same(current, original):
        candidate = []  # a changed operation invalidates an earlier candidate
    if supplied:
        candidate = supplied
    decision = permission if permission in ("deny", "ask") else "allow"
    actual: dict[str, Any] = {
        "decision": decision,
        "executed": decision == "allow" and not candidate,
        "messages": messages,
        "input": current,
    }
    if decision == "allow" and candidate:
        actual["result"] = candidate[0]
    return Outcome(actual)
