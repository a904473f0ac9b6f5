"""Acceptance of a staged lifecycle reply: a minimal `tool.before` evaluation.

Implemented: no effects (allow), `deny`, `allow`, `ask` (deny > ask > allow,
from the request's `state.permission`), `message` (in order) and `modify` of
`input` (replace; merge shallow). Anything else (`flow`, `return`, `inject`, a
reply that is not an intercept response for the request) is outside this
engine: the row says so (`Unsupported`). The lifecycle host has no tool
contracts of its own (the vectors call `task` with `{value}`).

Like the upstream lifecycle client, an effect whose type the request does not
advertise in `params.capabilities.effects` is not refused but crashes the
client (`UnadvertisedEffect`, never caught).
"""

from __future__ import annotations

import copy
from typing import Any

from upstream_emulator.jsonequal import same

PERMISSIONS = ("none", "allow", "ask", "deny")


class Unsupported(Exception):
    """The reply needs something this engine does not implement."""


class UnadvertisedEffect(RuntimeError):
    """Deliberately uncaught: the client dies with a traceback and writes no report."""


def _effects(request: dict[str, Any], reply: Any) -> list[dict[str, Any]]:
    result = reply.get("result") if isinstance(reply, dict) else None
    listed = result.get("effects") if isinstance(result, dict) else None
    if (
        not isinstance(reply, dict)
        or reply.get("jsonrpc") != "2.0"
        or not same(reply.get("id"), request.get("id"))
        or "error" in reply
        or not isinstance(listed, list)
        or not all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in listed)
    ):
        raise Unsupported("a reply that is not an intercept response for the request")
    return listed


def evaluate(request: dict[str, Any], reply: Any) -> dict[str, Any]:
    """The published state `{decision, executed, input, messages}` of the reply."""
    params = request.get("params") or {}
    listed = _effects(request, reply)
    advertised = (params.get("capabilities") or {}).get("effects") or []
    for effect in listed:
        if effect["type"] not in advertised:
            raise UnadvertisedEffect(
                f"effect {effect['type']!r} is not in the request's capabilities {advertised!r}"
            )
    state = params.get("state") or {}
    permission = state.get("permission", "none") if isinstance(state, dict) else "none"
    if permission not in PERMISSIONS:
        raise Unsupported(f"incoming permission {permission!r}")
    current = copy.deepcopy(((params.get("event") or {}).get("tool") or {}).get("input"))
    messages: list[str] = []
    for effect in listed:
        kind = effect["type"]
        if kind == "deny":
            permission = "deny"
        elif kind == "ask" and permission != "deny":
            permission = "ask"
        elif kind == "allow" and permission == "none":
            permission = "allow"
        elif kind == "message" and isinstance(effect.get("text"), str):
            messages.append(effect["text"])
        elif kind == "modify" and effect.get("target") == "input" and isinstance(current, dict):
            value = effect.get("value")
            if not isinstance(value, dict) or effect.get("operation") not in ("replace", "merge"):
                raise Unsupported("a modify this engine does not read")
            replace = effect["operation"] == "replace"
            current = copy.deepcopy(value) if replace else {**current, **copy.deepcopy(value)}
        elif kind not in ("allow", "ask"):
            raise Unsupported(f"effect {kind!r} is not implemented by this engine")
    decision = permission if permission in ("deny", "ask") else "allow"
    return {
        "decision": decision,
        "executed": decision == "allow",
        "input": current,
        "messages": messages,
    }
