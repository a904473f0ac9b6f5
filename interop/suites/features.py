"""The features every suite's rows share, and the helpers a suite's own feature reader uses.

A feature is a name `family:value` from a closed vocabulary (docs/coverage.md): the
families here are the wire's (methods, events, effects, state, content, versions, the
step ops and chain shapes of the step engine), the transport and the authentication
mode; each suite declares its own families and its reader beside it
(`interop/suites/<name>/features.py`, `Declaration.features`). Features are read from
what a row sends, never from what it expects (`ANSWER_KEYS`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

TRANSPORTS = ("http", "stdio")
AUTH_MODES = ("bearer", "mtls", "none", "oauth", "workload")

EVENT_TYPES = (
    # interceptable (19)
    "config.change.before",
    "context.compact.after",
    "context.compact.before",
    "model.request.before",
    "model.response.after",
    "model.switch.before",
    "session.start",
    "task.change.before",
    "tool.after",
    "tool.batch.after",
    "tool.before",
    "tool.permission.request",
    "turn.finish.before",
    "turn.start",
    "user.elicitation.request",
    "user.elicitation.result",
    "user.message.inbound",
    "user.message.outbound",
    "workspace.change.before",
    # observe-only (13)
    "config.change.after",
    "file.changed",
    "hook.failure",
    "model.error",
    "model.switch.after",
    "session.end",
    "task.change.after",
    "tool.permission.resolved",
    "tool.progress",
    "turn.end",
    "turn.progress",
    "user.attention",
    "workspace.change.after",
)
EFFECT_TYPES = ("allow", "ask", "deny", "flow", "inject", "message", "modify", "return")
MODIFY_TARGETS = (
    "content",
    "input",
    "instructions",
    "output",
    "prompt",
    "request",
    "response",
    "summary",
    "workspace",
)
MODIFY_OPERATIONS = ("merge", "replace")
FLOW_OPERATIONS = ("continue", "stop")
METHODS = ("hooks/capabilities", "hooks/intercept", "hooks/observe")
NEGATIVE_CLASSES = (
    "application-invalid",
    "capability-invalid",
    "correlation-invalid",
    "schema-invalid",
)
STEP_OPS = (
    "accept",
    "cancel",
    "emit",
    "failOpen",
    "notify",
    "observe",
    "rawNotify",
    "receive",
    "register",
    "release",
    "send",
    "upload",
    "wait",
)
STATE_SHAPES = ("candidate", "flow", "initial", "omitted", "permission")
CONTENT_SHAPES = ("attachment", "gap", "message", "metadata", "omit", "text")
CHAIN_SHAPES = (
    "fail-closed",
    "fail-open",
    "hold-observers",
    "interrupt",
    "observer",
    "observer-fault",
    "serial",
    "timeout",
)


def family(prefix: str, names: tuple[str, ...]) -> set[str]:
    """Every name of one family: `prefix:name`."""
    return {f"{prefix}:{name}" for name in names}


SHARED_VOCABULARY: frozenset[str] = frozenset(
    family("transport", TRANSPORTS)
    | family("auth", AUTH_MODES)
    | family("method", METHODS)
    | family("event", (*EVENT_TYPES, "unknown"))
    | family("effect", (*EFFECT_TYPES, "none", "unknown"))
    | {f"modify:{t}/{o}" for t in MODIFY_TARGETS for o in MODIFY_OPERATIONS}
    | {"modify:unknown"}
    | family("flow", (*FLOW_OPERATIONS, "unknown"))
    | family("state", STATE_SHAPES)
    | family("content", CONTENT_SHAPES)
    | {"envelope:extensions", "version:mismatch"}
    | family("negative", NEGATIVE_CLASSES)
    | family("op", STEP_OPS)
    | family("chain", CHAIN_SHAPES)
)

# Keys of a row that hold answers or proofs (what the harness expects), never what the
# row sends: features are never read from them.
ANSWER_KEYS = frozenset(
    {"expected", "expectError", "hostExpected", "chainProof", "proof", "inapplicableReason"}
)


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every object inside `value`, depth first, skipping the answer keys of a row."""
    if isinstance(value, dict):
        yield value
        for key, child in value.items():
            if key not in ANSWER_KEYS:
                yield from walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk(child)


def _state_features(params: dict[str, Any]) -> set[str]:
    if "state" not in params:
        return {"state:omitted"}
    state = params["state"]
    if not isinstance(state, dict):
        return {"state:omitted"}
    found: set[str] = set()
    if state.get("permission", "none") != "none":
        found.add("state:permission")
    if state.get("candidate") is not None:
        found.add("state:candidate")
    if state.get("flow", "none") != "none":
        found.add("state:flow")
    return found or {"state:initial"}


def message_features(message: dict[str, Any]) -> set[str]:
    """A JSON-RPC request or notification: its method, event type, state, version."""
    found: set[str] = set()
    method = message.get("method")
    if method in METHODS:
        found.add(f"method:{method}")
    params = message.get("params")
    if not isinstance(params, dict):
        return found
    if params.get("protocolVersion", "draft") != "draft":
        found.add("version:mismatch")
    if isinstance(params.get("extensions"), dict):
        found.add("envelope:extensions")
    event = params.get("event")
    if isinstance(event, dict):
        kind = event.get("type")
        found.add(f"event:{kind}" if kind in EVENT_TYPES else "event:unknown")
        if isinstance(event.get("extensions"), dict):
            found.add("envelope:extensions")
    if method == "hooks/intercept":
        found |= _state_features(params)
    return found


def effect_features(effect: Any) -> set[str]:
    if not isinstance(effect, dict) or effect.get("type") not in EFFECT_TYPES:
        return {"effect:unknown"}
    kind = effect["type"]
    found = {f"effect:{kind}"}
    if kind == "modify":
        target, operation = effect.get("target"), effect.get("operation")
        if target in MODIFY_TARGETS and operation in MODIFY_OPERATIONS:
            found.add(f"modify:{target}/{operation}")
        else:
            found.add("modify:unknown")
    elif kind == "flow":
        operation = effect.get("operation")
        found.add(f"flow:{operation}" if operation in FLOW_OPERATIONS else "flow:unknown")
    return found


def response_features(response: dict[str, Any], sent_version: str = "draft") -> set[str]:
    """A JSON-RPC response carrying a `result`: its effects (or none), its version."""
    found: set[str] = set()
    result = response.get("result")
    if not isinstance(result, dict):
        return found
    if "protocolVersion" in result and result["protocolVersion"] != sent_version:
        found.add("version:mismatch")
    if isinstance(result.get("extensions"), dict):
        found.add("envelope:extensions")
    effects = result.get("effects")
    if isinstance(effects, list):
        if not effects:
            found.add("effect:none")
        for effect in effects:
            found |= effect_features(effect)
    return found


def content_features(part: dict[str, Any]) -> set[str]:
    """A content part (`kind` text or attachment with a `selection`) or a message."""
    found: set[str] = set()
    if isinstance(part.get("role"), str) and isinstance(part.get("parts"), list):
        found.add("content:message")
    if part.get("kind") in ("text", "attachment") and "selection" in part:
        found.add(f"content:{part['kind']}")
        if part["selection"] in ("metadata", "omit"):
            found.add(f"content:{part['selection']}")
        if "gap" in part:
            found.add("content:gap")
    return found


def wire_features(row: Any) -> set[str]:
    """What every suite's rows share: the messages, responses and content they carry."""
    found: set[str] = set()
    for obj in walk(row):
        if obj.get("jsonrpc") is not None and isinstance(obj.get("method"), str):
            found |= message_features(obj)
        elif "result" in obj and ("jsonrpc" in obj or "id" in obj):
            found |= response_features(obj)
        found |= content_features(obj)
    return found


def steps_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    steps = row.get("steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def op_features(row: dict[str, Any]) -> set[str]:
    return {f"op:{s['op']}" for s in steps_of(row) if s.get("op") in STEP_OPS}


def subscriptions_features(subscriptions: Any, prefix: str) -> set[str]:
    """A chain of subscriptions (lifecycle `chain`, compaction `before`/`after`)."""
    if not isinstance(subscriptions, list):
        return set()
    subs = [s for s in subscriptions if isinstance(s, dict)]
    intercepts = [s for s in subs if s.get("mode") == "intercept"]
    found: set[str] = set()
    if len(intercepts) >= 2:
        found.add(f"{prefix}:serial" if prefix == "chain" else f"{prefix}:chain")
    if any(s.get("mode") == "observe" for s in subs):
        found.add(f"{prefix}:observer")
    if prefix == "chain":
        for sub in intercepts:
            if sub.get("failurePolicy") in ("fail-open", "fail-closed"):
                found.add(f"chain:{sub['failurePolicy']}")
            if "timeoutMs" in sub:
                found.add("chain:timeout")
    return found


def probe_features(row: dict[str, Any]) -> set[str]:
    """A receiver probe built in code (lifecycle and catalogue `*-probes` sets): the report
    carries only its id, whose first word names what it sends."""
    if set(row) - {"id", "expected"}:
        return set()
    head = str(row.get("id", "")).split("-", 1)[0]
    return {
        "upload": {"op:upload"},
        "changed": {"op:upload"},
        "observe": {"method:hooks/observe"},
        "capabilities": {"method:hooks/capabilities"},
    }.get(head, set())
