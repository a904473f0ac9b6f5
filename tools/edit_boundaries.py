"""Boundary-specific value-shape rules for edits (modify and return) in an intercept response.

The standalone effect schema can only say what a modify target's value looks
like where that is context-free. Which targets an event exposes, what a
`return` must look like there, whether an elicitation answer may be edited at
all, and what the staged value looks like after `merge` depend on the
boundary. This module checks those rules for a fixture's `editContext`:
`{event, current: {<target>: value}, mode, action}`.

Sources: docs/scenarios.md "Boundaries in the core set" and the digest's
modify-target table (section 3a).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from interop.schema import SchemaSet

MESSAGES = "content-item.schema.json#/$defs/messages"
TEXT_PARTS = "content-item.schema.json#/$defs/textParts"
WORKSPACE_CHANGE = "common.schema.json#/$defs/workspaceChange"
ANSWER = "mcp-elicitation.schema.json#/$defs/answerContent"
ELICIT_RESULT = "mcp-elicitation.schema.json#/$defs/result"


@dataclass(frozen=True)
class Shape:
    """The value a target or a supplied result takes at one boundary."""

    schema: str | None  # None: any JSON value
    is_list: bool
    role: str | None = None  # every message must have this role
    answer: bool = False  # the elicitation answer object
    any_value: bool = False  # no constraint at all


OBJECT = Shape(None, is_list=False)
ANY = Shape(None, is_list=False, any_value=True)

# event -> {target: shape}
EDITABLE: dict[str, dict[str, Shape]] = {
    "tool.before": {"input": OBJECT},
    "tool.permission.request": {"input": OBJECT},
    "tool.after": {"output": Shape(MESSAGES, True)},
    "turn.start": {"prompt": Shape(MESSAGES, True)},
    "user.message.inbound": {"prompt": Shape(MESSAGES, True, role="user")},
    "model.request.before": {"request": Shape(MESSAGES, True)},
    "model.response.after": {"response": Shape(MESSAGES, True)},
    "turn.finish.before": {"response": Shape(MESSAGES, True)},
    "context.compact.before": {"instructions": Shape(TEXT_PARTS, True)},
    "context.compact.after": {"summary": Shape(TEXT_PARTS, True)},
    "user.message.outbound": {"content": Shape(MESSAGES, True, role="assistant")},
    "user.elicitation.result": {"content": Shape(ANSWER, False, answer=True)},
    "workspace.change.before": {"workspace": Shape(WORKSPACE_CHANGE, False)},
}

# event -> shape of a supplied result
RETURNABLE: dict[str, Shape] = {
    "tool.before": ANY,
    "model.request.before": Shape(MESSAGES, True),
    "context.compact.before": Shape(TEXT_PARTS, True),
    "user.elicitation.request": Shape(ELICIT_RESULT, False),
}


def _holds_withheld(value: Any) -> bool:
    """True when a message or part list contains omitted, metadata-only or gap parts."""
    if not isinstance(value, list):
        return False
    for entry in value:
        if not isinstance(entry, dict):
            continue
        parts = entry.get("parts") if "parts" in entry else [entry]
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and (
                part.get("selection") in ("omit", "metadata") or "gap" in part
            ):
                return True
    return False


def _shape_problem(schemas: SchemaSet, shape: Shape, value: Any, what: str) -> str | None:
    if shape.is_list and not isinstance(value, list):
        return f"{what} must be a list"
    if not shape.is_list and not shape.any_value and not isinstance(value, dict):
        return f"{what} must be an object"
    if shape.schema is not None:
        issue = schemas.issue(shape.schema, value)
        if issue is not None:
            return f"{what} {issue}"
    if shape.role is not None:
        for index, message in enumerate(value):
            if message.get("role") != shape.role:
                return f"{what}[{index}] must have role {shape.role!r}"
    return None


def _apply(current: Any, operation: str, value: Any) -> Any:
    if operation == "replace":
        return copy.deepcopy(value)
    if isinstance(current, list) and isinstance(value, list):
        return [*current, *copy.deepcopy(value)]
    if isinstance(current, dict) and isinstance(value, dict):
        return {**current, **copy.deepcopy(value)}
    raise ValueError("merge needs the current value and the edit to be both lists or both objects")


def edit_problem(schemas: SchemaSet, response: Any, context: dict[str, Any]) -> str | None:
    """None when every edit in the response is acceptable at the boundary, else the first reason."""
    event = context["event"]
    result = response.get("result") if isinstance(response, dict) else None
    effects = result.get("effects") if isinstance(result, dict) else None
    if not isinstance(effects, list):
        return "response carries no effects list"
    staged: dict[str, Any] = copy.deepcopy(context["current"])
    editable = EDITABLE.get(event, {})
    for index, effect in enumerate(effects):
        where = f"$.result.effects[{index}]"
        if not isinstance(effect, dict):
            continue
        if effect.get("type") == "return":
            shape = RETURNABLE.get(event)
            if shape is None:
                return f"{where}: no supplied result is allowed at {event}"
            problem = _shape_problem(schemas, shape, effect.get("value"), f"{where}.value")
            if problem:
                return problem
            continue
        if effect.get("type") != "modify":
            continue
        target, operation, value = (
            effect.get("target"),
            effect.get("operation"),
            effect.get("value"),
        )
        if not isinstance(target, str) or target not in editable:
            return f"{where}: target {target!r} is not editable at {event}"
        shape = editable[target]
        if shape.answer and (context.get("mode") != "form" or context.get("action") != "accept"):
            return f"{where}: an elicitation answer is editable only for an accepted form result"
        problem = _shape_problem(schemas, shape, value, f"{where}.value")
        if problem:
            return problem
        current = staged.get(target, [] if shape.is_list else {})
        if operation == "replace" and shape.is_list and _holds_withheld(current):
            return f"{where}: whole-list replace over withheld content"
        try:
            staged[target] = _apply(current, str(operation), value)
        except ValueError as exc:
            return f"{where}: {exc}"
        problem = _shape_problem(schemas, shape, staged[target], f"staged {target}")
        if problem:
            return problem
    return None
