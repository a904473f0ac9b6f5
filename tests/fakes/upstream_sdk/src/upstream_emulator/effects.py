"""Validation of an intercept response before anything is applied (atomic acceptance).

Envelope: a JSON-RPC 2.0 success answering the request's id, a `result` object
with the request's `protocolVersion` and an `effects` array. Every effect: a
known type, advertised in the request's `params.capabilities`, allowed at the
event, with exactly its fields (effect objects are closed) of the right types.
One problem rejects the whole response.
"""

from __future__ import annotations

import re
from typing import Any

from upstream_emulator.jsonequal import same

REVERSE_DNS = re.compile(r"(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*")
# type -> (required fields, optional fields), besides `type`
FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "deny": (frozenset({"reason"}), frozenset({"code", "extensions"})),
    "allow": (frozenset(), frozenset()),
    "ask": (frozenset(), frozenset()),
    "message": (frozenset({"text"}), frozenset()),
    "return": (frozenset({"value"}), frozenset()),
    "modify": (frozenset({"target", "operation", "value"}), frozenset()),
    "flow": (frozenset({"operation"}), frozenset({"reason", "instruction"})),
    "inject": (frozenset({"target", "operation", "deliverAt", "value"}), frozenset()),
}
MODIFY_OPERATIONS = ("replace", "merge")
# what `tool.before` allows at all (the event's capability definition)
TOOL_BEFORE = {"modify": ("input",), "flow": ("stop",)}


def envelope_problem(request: dict[str, Any], response: Any) -> str | None:
    if not isinstance(response, dict):
        return "the response is not a JSON object"
    if response.get("jsonrpc") != "2.0":
        return "jsonrpc is not '2.0'"
    if "id" not in response or not same(response["id"], request.get("id")):
        return "the response id is not the request id"
    if "error" in response:
        return "the response is a JSON-RPC error"
    result = response.get("result")
    if not isinstance(result, dict):
        return "the response has no result object"
    wanted = request.get("params", {}).get("protocolVersion", "draft")
    if result.get("protocolVersion") != wanted:
        return f"result.protocolVersion is not {wanted!r}"
    if "manifest" in result:
        return "an intercept result carries a manifest"
    if not isinstance(result.get("effects"), list):
        return "result.effects is not an array"
    return None


def effect_problem(effect: Any, capabilities: dict[str, Any]) -> str | None:
    """The first problem of one `tool.before` effect, None when it may be applied."""
    if not isinstance(effect, dict) or not isinstance(effect.get("type"), str):
        return "an effect without a string type"
    kind = effect["type"]
    if kind not in FIELDS:
        return f"unknown effect type {kind!r}"
    advertised = capabilities.get("effects")
    if not isinstance(advertised, list) or kind not in advertised:
        return f"effect {kind!r} was not advertised"
    required, optional = FIELDS[kind]
    present = set(effect) - {"type"}
    if required - present:
        return f"{kind}: missing {', '.join(sorted(required - present))}"
    if present - required - optional:
        return f"{kind}: unknown field(s) {', '.join(sorted(present - required - optional))}"
    return CHECKS[kind](effect, capabilities)


def _deny(effect: dict[str, Any], _caps: dict[str, Any]) -> str | None:
    if not isinstance(effect["reason"], str) or not effect["reason"]:
        return "deny: reason must be a non-empty string"
    code = effect.get("code")
    if code is not None and (not isinstance(code, str) or not REVERSE_DNS.fullmatch(code)):
        return "deny: code must be a reverse-DNS name"
    if "extensions" in effect and not isinstance(effect["extensions"], dict):
        return "deny: extensions must be an object"
    return None


def _nothing(_effect: dict[str, Any], _caps: dict[str, Any]) -> str | None:
    return None


def _message(effect: dict[str, Any], _caps: dict[str, Any]) -> str | None:
    return None if isinstance(effect["text"], str) else "message: text must be a string"


def _modify(effect: dict[str, Any], caps: dict[str, Any]) -> str | None:
    target, operation = effect["target"], effect["operation"]
    if operation not in MODIFY_OPERATIONS:
        return f"modify: unknown operation {operation!r}"
    if target not in TOOL_BEFORE["modify"]:
        return f"modify: target {target!r} is not editable at tool.before"
    granted = caps.get("modify")
    entry = granted.get(target) if isinstance(granted, dict) else None
    if not isinstance(entry, dict) or entry.get(operation) is not True:
        return f"modify: {operation} of {target!r} was not advertised"
    if not isinstance(effect["value"], dict):
        return "modify: an input value must be an object"
    return None


def _flow(effect: dict[str, Any], caps: dict[str, Any]) -> str | None:
    operation = effect["operation"]
    if operation not in TOOL_BEFORE["flow"]:
        return f"flow: operation {operation!r} is not allowed at tool.before"
    granted = caps.get("flow")
    operations = granted.get("operations") if isinstance(granted, dict) else None
    if not isinstance(operations, list) or operation not in operations:
        return f"flow: operation {operation!r} was not advertised"
    if "instruction" in effect:
        return "flow: stop takes no instruction"
    reason = effect.get("reason")
    if not isinstance(reason, str) or not reason:
        return "flow: stop needs a non-empty reason"
    return None


def _inject(effect: dict[str, Any], caps: dict[str, Any]) -> str | None:
    if effect["target"] != "context" or effect["operation"] != "append":
        return "inject: only target context, operation append"
    granted = caps.get("inject")
    context = granted.get("context") if isinstance(granted, dict) else None
    times = context.get("deliverAt") if isinstance(context, dict) else None
    if not isinstance(context, dict) or context.get("append") is not True:
        return "inject: append to context was not advertised"
    if not isinstance(times, list) or effect["deliverAt"] not in times:
        return f"inject: deliverAt {effect['deliverAt']!r} was not advertised"
    if not isinstance(effect["value"], list) or not all(
        isinstance(m, dict) for m in effect["value"]
    ):
        return "inject: value must be a message list"
    return None


CHECKS = {
    "deny": _deny,
    "allow": _nothing,
    "ask": _nothing,
    "message": _message,
    "return": _nothing,
    "modify": _modify,
    "flow": _flow,
    "inject": _inject,
}
