"""Envelope, schema and correlation negatives (asked at `tool.before`).

Each response here is wrong in exactly one way, and each one carries an
otherwise valid effect first, so a client that applies members one by one
instead of accepting the response whole shows up.
"""

from __future__ import annotations

import scenario_wire as w
from scenario_model import JSON, STAGED, Group, Negative, ResponseFn, rejected_rows
from scenario_tool_before import (
    BLOCK,
    NOW_MSG,
    flow_caps,
    full_caps,
    inject_caps,
    read_call,
)

# The effects of the envelope and correlation rows' responses, valid by themselves.
GOOD = [STAGED, w.allow()]


def _raw(value: JSON) -> ResponseFn:
    """A response that ignores the scenario id (a fixed value)."""
    return lambda _sid: value


def _with_result(result: JSON) -> ResponseFn:
    return lambda sid: {"jsonrpc": "2.0", "id": sid, "result": result}


def envelope_negatives() -> Group:
    s = "tool.before.envelope."
    cases = [
        Negative("response-null", "schema-invalid", [], response=_raw(None)),
        Negative(
            "response-batch", "schema-invalid", [], response=lambda sid: [w.success(sid, GOOD)]
        ),
        Negative(
            "jsonrpc-1-0",
            "schema-invalid",
            [],
            response=lambda sid: {**w.success(sid, GOOD), "jsonrpc": "1.0"},
        ),
        Negative(
            "id-missing",
            "schema-invalid",
            [],
            response=lambda sid: {"jsonrpc": "2.0", "result": w.success(sid, GOOD)["result"]},
        ),
        Negative("result-null", "schema-invalid", [], response=_with_result(None)),
        Negative(
            "error-response",
            "schema-invalid",
            [],
            response=lambda sid: {
                "jsonrpc": "2.0",
                "id": sid,
                "error": {"code": -32004, "message": "backend_internal_error"},
            },
        ),
        Negative(
            "protocol-version-old",
            "schema-invalid",
            [],
            response=_with_result({"protocolVersion": "0.1", "effects": GOOD}),
        ),
        Negative(
            "effects-missing",
            "schema-invalid",
            [],
            response=_with_result({"protocolVersion": "draft"}),
        ),
    ]
    rows = rejected_rows(s, "envelope", read_call(), full_caps(), cases)
    return Group(
        "envelope", "tool.before", "malformed JSON-RPC or result envelopes reject everything", rows
    )


def effect_schema_negatives() -> Group:
    s = "tool.before.schema."
    cases = [
        Negative(
            "unknown-effect-type",
            "schema-invalid",
            [STAGED, {"type": "redact", "fields": ["path"]}],
        ),
        Negative(
            "unknown-effect-after-modify",
            "schema-invalid",
            [w.merge("input", {"encoding": "ascii"}), {"type": "audit"}],
        ),
        Negative(
            "unknown-field-on-deny",
            "schema-invalid",
            [{"type": "deny", "reason": BLOCK, "severity": "high"}],
        ),
        Negative("deny-missing-reason", "schema-invalid", [STAGED, {"type": "deny"}]),
        Negative(
            "message-text-not-string",
            "schema-invalid",
            [w.allow(), {"type": "message", "text": 42}],
        ),
        Negative("return-missing-value", "schema-invalid", [STAGED, {"type": "return"}]),
        Negative(
            "modify-unknown-operation",
            "schema-invalid",
            [STAGED, {"type": "modify", "target": "input", "operation": "patch", "value": {}}],
        ),
        Negative(
            "modify-unknown-target",
            "schema-invalid",
            [STAGED, {"type": "modify", "target": "arguments", "operation": "merge", "value": {}}],
        ),
        Negative(
            "modify-with-path",
            "schema-invalid",
            [STAGED, {**w.merge("input", {"encoding": "ascii"}), "path": "/encoding"}],
        ),
        Negative(
            "input-value-array",
            "schema-invalid",
            [STAGED, w.replace("input", [{"path": "docs/guide.md"}])],
        ),
        Negative(
            "stop-missing-reason",
            "schema-invalid",
            [STAGED, {"type": "flow", "operation": "stop"}],
            caps=flow_caps(),
        ),
        Negative(
            "inject-missing-delivery",
            "schema-invalid",
            [STAGED, _inject_without("deliverAt")],
            caps=inject_caps("now", "next_turn"),
        ),
        Negative(
            "inject-wrong-operation",
            "schema-invalid",
            [STAGED, {**w.inject("now", NOW_MSG), "operation": "prepend"}],
            caps=inject_caps("now", "next_turn"),
        ),
    ]
    rows = rejected_rows(s, "effect-schema", read_call(), full_caps(), cases)
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
    cases = [
        Negative(
            "other-string-id",
            "correlation-invalid",
            [],
            response=lambda sid: w.success(sid + "-retry", GOOD),
        ),
        Negative("integer-id", "correlation-invalid", [], response=lambda sid: w.success(7, GOOD)),
        Negative(
            "id-case-differs",
            "correlation-invalid",
            [],
            response=lambda sid: w.success(sid.upper(), GOOD),
        ),
    ]
    rows = rejected_rows(s, "correlation", read_call(), full_caps(), cases)
    return Group(
        "correlation",
        "tool.before",
        "a response whose id is not the request's id is rejected",
        rows,
    )
