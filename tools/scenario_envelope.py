"""Envelope, schema and correlation negatives (asked at `tool.before`).

Each response here is wrong in exactly one way, and each one carries an
otherwise valid effect first, so a client that applies members one by one
instead of accepting the response whole shows up.
"""

from __future__ import annotations

from typing import Any

import scenario_wire as w
from scenario_model import Group, rejected
from scenario_tool_before import (
    BLOCK,
    NOW_MSG,
    flow_caps,
    full_caps,
    inject_caps,
    read_call,
)

JSON = Any

STAGED = w.note("Visible only if the response is accepted")


def _raw(value: JSON) -> Any:
    """A response that ignores the scenario id (a fixed value)."""
    return lambda _sid: value


def _with_result(result: JSON) -> Any:
    return lambda sid: {"jsonrpc": "2.0", "id": sid, "result": result}


def envelope_negatives() -> Group:
    s = "tool.before.envelope."
    good = [STAGED, w.allow()]
    cases: list[tuple[str, Any]] = [
        ("response-null", _raw(None)),
        ("response-batch", lambda sid: [w.success(sid, good)]),
        ("jsonrpc-1-0", lambda sid: {**w.success(sid, good), "jsonrpc": "1.0"}),
        ("id-missing", lambda sid: {"jsonrpc": "2.0", "result": w.success(sid, good)["result"]}),
        ("result-null", _with_result(None)),
        (
            "error-response",
            lambda sid: {
                "jsonrpc": "2.0",
                "id": sid,
                "error": {"code": -32004, "message": "backend_internal_error"},
            },
        ),
        ("protocol-version-old", _with_result({"protocolVersion": "0.1", "effects": good})),
        ("effects-missing", _with_result({"protocolVersion": "draft"})),
    ]
    rows = [
        rejected(
            s + name,
            read_call(),
            full_caps(),
            [],
            "schema-invalid",
            ["envelope"],
            response=response,
        )
        for name, response in cases
    ]
    return Group(
        "envelope", "tool.before", "malformed JSON-RPC or result envelopes reject everything", rows
    )


def effect_schema_negatives() -> Group:
    s = "tool.before.schema."
    cases: list[tuple[str, JSON, list[JSON]]] = [
        ("unknown-effect-type", full_caps(), [STAGED, {"type": "redact", "fields": ["path"]}]),
        (
            "unknown-effect-after-modify",
            full_caps(),
            [w.merge("input", {"encoding": "ascii"}), {"type": "audit"}],
        ),
        (
            "unknown-field-on-deny",
            full_caps(),
            [{"type": "deny", "reason": BLOCK, "severity": "high"}],
        ),
        ("deny-missing-reason", full_caps(), [STAGED, {"type": "deny"}]),
        ("message-text-not-string", full_caps(), [w.allow(), {"type": "message", "text": 42}]),
        ("return-missing-value", full_caps(), [STAGED, {"type": "return"}]),
        (
            "modify-unknown-operation",
            full_caps(),
            [STAGED, {"type": "modify", "target": "input", "operation": "patch", "value": {}}],
        ),
        (
            "modify-unknown-target",
            full_caps(),
            [STAGED, {"type": "modify", "target": "arguments", "operation": "merge", "value": {}}],
        ),
        (
            "modify-with-path",
            full_caps(),
            [STAGED, {**w.merge("input", {"encoding": "ascii"}), "path": "/encoding"}],
        ),
        (
            "input-value-array",
            full_caps(),
            [STAGED, w.replace("input", [{"path": "docs/guide.md"}])],
        ),
        ("stop-missing-reason", flow_caps(), [STAGED, {"type": "flow", "operation": "stop"}]),
        (
            "inject-missing-delivery",
            inject_caps("now", "next_turn"),
            [STAGED, _inject_without("deliverAt")],
        ),
        (
            "inject-wrong-operation",
            inject_caps("now", "next_turn"),
            [STAGED, {**w.inject("now", NOW_MSG), "operation": "prepend"}],
        ),
    ]
    rows = [
        rejected(s + name, read_call(), caps, effects, "schema-invalid", ["effect-schema"])
        for name, caps, effects in cases
    ]
    return Group(
        "effect-schema",
        "tool.before",
        "an unknown or malformed effect rejects the valid ones beside it",
        rows,
    )


def _inject_without(key: str) -> JSON:
    effect = w.inject("now", NOW_MSG)
    del effect[key]
    return effect


def correlation_negatives() -> Group:
    s = "tool.before.correlation."
    good = [STAGED, w.allow()]
    cases: list[tuple[str, Any]] = [
        ("other-string-id", lambda sid: w.success(sid + "-retry", good)),
        ("integer-id", lambda sid: w.success(7, good)),
        ("id-case-differs", lambda sid: w.success(sid.upper(), good)),
    ]
    rows = [
        rejected(
            s + name,
            read_call(),
            full_caps(),
            [],
            "correlation-invalid",
            ["correlation"],
            response=response,
        )
        for name, response in cases
    ]
    return Group(
        "correlation",
        "tool.before",
        "a response whose id is not the request's id is rejected",
        rows,
    )
