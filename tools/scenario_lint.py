"""Structural checks on generated scenarios, run before anything is written.

Each row is first checked against the core format's schema
(`schemas/scenarios/core.schema.json#/$defs/row`: keys, types, expected or
expectError), then for slips in the hand-written rows the schema cannot see (a
missing expected key, a capability the event does not allow, a wrong id). They
check which keys are present, never what their values are: values come from
the group modules.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenario_model import NEGATIVE_CLASSES

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the harness of this checkout, not another one installed
    sys.path.insert(0, str(ROOT))

from interop.suites.scenario_schema import row_problem  # noqa: E402

JSON = Any


@dataclass(frozen=True)
class Boundary:
    """What an interceptable event allows (AHP-DIGEST §2.2) and how it is reported."""

    effects: frozenset[str]
    target: str
    flow_operations: frozenset[str]
    gated: bool
    permission: bool


BOUNDARIES: dict[str, Boundary] = {
    "tool.before": Boundary(
        frozenset({"deny", "allow", "ask", "modify", "inject", "flow", "return", "message"}),
        "input",
        frozenset({"stop"}),
        gated=True,
        permission=True,
    ),
    "tool.after": Boundary(
        frozenset({"modify", "inject", "flow", "message"}),
        "output",
        frozenset({"stop", "continue"}),
        False,
        False,
    ),
    "turn.finish.before": Boundary(
        frozenset({"modify", "flow", "message"}),
        "response",
        frozenset({"stop", "continue"}),
        False,
        False,
    ),
    "model.request.before": Boundary(
        frozenset({"deny", "modify", "inject", "return", "flow", "message"}),
        "request",
        frozenset({"stop"}),
        True,
        True,
    ),
    "context.compact.before": Boundary(
        frozenset({"deny", "modify", "return", "inject", "message"}),
        "instructions",
        frozenset(),
        True,
        True,
    ),
    "context.compact.after": Boundary(
        frozenset({"inject", "modify", "message"}), "summary", frozenset(), False, False
    ),
    "user.message.outbound": Boundary(
        frozenset({"deny", "modify", "message"}), "content", frozenset(), True, True
    ),
    "user.elicitation.result": Boundary(
        frozenset({"modify", "message"}), "content", frozenset(), False, False
    ),
    "workspace.change.before": Boundary(
        frozenset({"deny", "modify", "message"}), "workspace", frozenset(), True, True
    ),
}

EXPECTED_KEYS = (
    "decision",
    "permission",
    "executed",
    "messages",
    "input",
    "effective",
    "result",
    "flow",
    "continuationInstructions",
    "continuationRemaining",
    "injections",
)


def lint(scenarios: list[dict[str, JSON]]) -> list[str]:
    """Return one line per problem found; empty when the set is well formed."""
    problems: list[str] = []
    seen: set[str] = set()
    for index, row in enumerate(scenarios):
        sid = row.get("id") if isinstance(row, dict) else None
        name = sid if isinstance(sid, str) and sid else f"row {index}"
        shape = row_problem(row, "core")
        if shape is not None:  # the checks below read the row's shape as the schema says
            problems.append(f"{name}: {shape}")
            continue
        if name in seen:
            problems.append(f"{name}: duplicate id")
        seen.add(name)
        problems += [f"{name}: {p}" for p in _lint_row(row)]
        problems += [f"{name}: {p}" for p in number_problems(row)]
    return problems


def _lint_row(row: dict[str, JSON]) -> list[str]:
    problems: list[str] = []
    sid = row["id"]
    request = row["request"]
    params = request["params"]
    event = params["event"]
    if request.get("id") != sid or event.get("id") != sid:
        problems.append("request id, event id and scenario id differ")
    boundary = BOUNDARIES.get(event.get("type", ""))
    if boundary is None:
        return [*problems, f"event type {event.get('type')!r} is not a core boundary"]
    problems += _lint_capabilities(params["capabilities"], boundary)
    tags = row["tags"]
    if "expectError" in row:
        classes = [t for t in tags if t in NEGATIVE_CLASSES]
        if len(classes) != 1 or "negative" not in tags or "atomic-rejection" not in tags:
            problems.append(
                "a rejected row needs negative, atomic-rejection and exactly one negative class"
            )
        if "hostExpected" in row and "application-invalid" not in tags:
            problems.append("hostExpected belongs to application-invalid rows")
        return problems
    if "negative" in tags or "hostExpected" in row:
        problems.append("an accepted row carries negative tags or hostExpected")
    return problems + _lint_expected(row, boundary)


def _lint_capabilities(caps: JSON, boundary: Boundary) -> list[str]:
    problems: list[str] = []
    effects = caps.get("effects", [])
    if not effects or len(set(effects)) != len(effects):
        problems.append("capabilities.effects must be non-empty and unique")
    extra = set(effects) - boundary.effects
    if extra:
        problems.append(f"effects not allowed at this event: {sorted(extra)}")
    for block in ("modify", "flow", "inject"):
        if (block in effects) != (block in caps):
            problems.append(
                f"capabilities.{block} must be present exactly when {block!r} is listed"
            )
    for target, flags in caps.get("modify", {}).items():
        if target != boundary.target:
            problems.append(f"modify target {target!r} not allowed at this event")
        if not (flags.get("replace") or flags.get("merge")):
            problems.append(f"modify target {target!r} grants no operation")
    flow = caps.get("flow")
    if flow is not None:
        operations = set(flow.get("operations", []))
        if not operations or operations - boundary.flow_operations:
            problems.append(f"flow operations {sorted(operations)} not allowed at this event")
        if "continue" in operations and not {"remainingContinuations", "continuationCount"} <= set(
            flow
        ):
            problems.append("continue needs remainingContinuations and continuationCount")
    return problems


def _effects_of(row: dict[str, JSON]) -> list[JSON]:
    response = row["response"]
    return list(response["result"]["effects"])


def _lint_expected(row: dict[str, JSON], boundary: Boundary) -> list[str]:
    problems: list[str] = []
    expected = row["expected"]
    params = row["request"]["params"]
    effects = _effects_of(row)
    kinds = [e["type"] for e in effects]
    incoming = params.get("state") or {}
    if list(expected) != [k for k in EXPECTED_KEYS if k in expected]:
        problems.append("expected keys out of the fixed order")
    for key in ("decision", "executed", "messages", "effective"):
        if key not in expected:
            problems.append(f"missing expected key {key!r}")
    if set(expected.get("effective", {})) != {boundary.target}:
        problems.append(f"effective must hold exactly {boundary.target!r}")
    if ("input" in expected) != (params["event"]["type"] == "tool.before"):
        problems.append("input is expected exactly at tool.before")
    elif "input" in expected and expected["input"] != expected.get("effective", {}).get("input"):
        problems.append("input and effective.input differ")
    continues = "continue" in params["capabilities"].get("flow", {}).get("operations", [])
    for key in ("continuationInstructions", "continuationRemaining"):
        if (key in expected) != continues:
            problems.append(f"{key} is expected exactly when continue is advertised")
    if ("injections" in expected) != ("inject" in kinds):
        problems.append("injections are expected exactly when an inject effect is accepted")
    elif "injections" in expected and len(expected["injections"]) != kinds.count("inject"):
        problems.append("injections count differs from the inject effects")
    can_continue = continues and params["capabilities"]["flow"]["remainingContinuations"] >= 1
    has_flow = (
        "flow" in kinds
        or incoming.get("flow") == "stop"
        or (incoming.get("flow") == "continue" and can_continue)
    )
    if ("flow" in expected) != has_flow:
        problems.append("flow is expected exactly when a flow outcome exists")
    if "result" in expected and "return" not in kinds and not incoming.get("candidate"):
        problems.append("result without a return effect or incoming candidate")
    settles = expected.get("decision") == "allow" and expected.get("flow") != "stop"
    if "result" in expected and not settles:
        problems.append("result is reported only for an allowed, unstopped boundary")
    if "return" in kinds and settles and "result" not in expected:
        problems.append(
            "an accepted return at an allowed, unstopped boundary must be reported as result"
        )
    if "result" in expected and expected.get("executed") is not False:
        problems.append("a reported result means the original operation did not execute")
    if len(expected.get("messages", [])) != kinds.count("message"):
        problems.append("messages count differs from the message effects")
    if not boundary.gated and expected.get("executed") is not False:
        problems.append("executed must be false where no operation is gated")
    if not boundary.permission and expected.get("decision") != "allow":
        problems.append("decision must be allow where there are no permission semantics")
    if "permission" in expected and not boundary.permission:
        problems.append("permission is reported only where there are permission semantics")
    if expected.get("permission") == "none" and expected.get("decision") != "allow":
        problems.append("a permission of none resolves to the decision allow")
    return problems


MAX_EXACT = 2**53 - 1  # the I-JSON profile (docs/scenarios.md, "Numbers")


def number_problems(value: JSON, path: str = "$") -> list[str]:
    """Numbers outside the I-JSON profile anywhere in a row, by JSON path."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [f"{path}: {value!r} is beyond 2^53 - 1 (I-JSON)"] if abs(value) > MAX_EXACT else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in number_problems(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in number_problems(v, f"{path}[{i}]")]
    return []
