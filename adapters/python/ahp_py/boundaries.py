"""The interceptable boundaries the engine implements (no I/O).

For each event type: its modify target and where that target lives in the
event, the value shape, whether the boundary gates an operation and has
permission semantics, which effects and flow operations the protocol allows
there, and what a ``return`` value must look like (if one is allowed at all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import codec, content

ShapeCheck = Callable[[Any], "str | None"]


def _any_value(_: Any) -> str | None:
    return None


def _always_editable(_: dict[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class Boundary:
    event: str
    target: str
    value_error: ShapeCheck
    original: Callable[[dict[str, Any]], Any]
    gated: bool
    permission: bool
    effects: frozenset[str]
    flow_operations: frozenset[str] = frozenset()
    return_error: ShapeCheck | None = None
    list_target: bool = False
    editable: Callable[[dict[str, Any]], str | None] = field(default=_always_editable)


def _get(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def parse_elicitation_result(event: dict[str, Any]) -> dict[str, Any] | None:
    """The parsed MCP result carried as text in ``elicitation.result``.

    Only a text part with body selection carries one.
    """
    part = _get(event, "elicitation", "result")
    if not isinstance(part, dict) or part.get("selection") != "body":
        return None
    text = part.get("text")
    if part.get("kind") != "text" or "gap" in part or not isinstance(text, str):
        return None
    try:
        parsed = codec.loads(text)
    except codec.JsonDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _elicitation_answer(event: dict[str, Any]) -> Any:
    parsed = parse_elicitation_result(event)
    return codec.clone(parsed.get("content")) if parsed is not None else None


def _elicitation_editable(event: dict[str, Any]) -> str | None:
    elicitation = _get(event, "elicitation")
    if _get(elicitation, "mode") != "form":
        return "content edits need a form elicitation"
    if _get(elicitation, "action") != "accept":
        return "content edits need an accepted elicitation"
    parsed = parse_elicitation_result(event)
    if parsed is None:
        return "content edits need a result part with body selection"
    if parsed.get("action", "accept") != "accept":
        return "the carried result is not an accepted one"
    return content.answer_error(parsed.get("content"))


_PERMISSION = frozenset({"deny", "allow", "ask"})


def _make_table() -> dict[str, Boundary]:
    items = [
        Boundary(
            event="tool.before",
            target="input",
            value_error=content.object_error,
            original=lambda e: codec.clone(_or(_get(e, "tool", "input"), {})),
            gated=True,
            permission=True,
            effects=_PERMISSION | {"modify", "inject", "flow", "return", "message"},
            flow_operations=frozenset({"stop"}),
            return_error=_any_value,
        ),
        Boundary(
            event="tool.after",
            target="output",
            value_error=content.message_list_error,
            original=lambda e: codec.clone(_or(_get(e, "items"), [])),
            gated=False,
            permission=False,
            effects=frozenset({"modify", "inject", "flow", "message"}),
            flow_operations=frozenset({"stop", "continue"}),
            list_target=True,
        ),
        Boundary(
            event="turn.finish.before",
            target="response",
            value_error=content.message_list_error,
            original=lambda e: codec.clone(_or(_get(e, "items"), [])),
            gated=False,
            permission=False,
            effects=frozenset({"modify", "flow", "message"}),
            flow_operations=frozenset({"stop", "continue"}),
            list_target=True,
        ),
        Boundary(
            event="model.request.before",
            target="request",
            value_error=content.message_list_error,
            original=lambda e: codec.clone(_or(_get(e, "items"), [])),
            gated=True,
            permission=True,
            effects=frozenset(
                {"deny", "modify", "inject", "return", "flow", "message"}
            ),
            flow_operations=frozenset({"stop"}),
            return_error=content.message_list_error,
            list_target=True,
        ),
        Boundary(
            event="context.compact.before",
            target="instructions",
            value_error=content.text_part_list_error,
            original=lambda e: codec.clone(_or(_get(e, "instructions"), [])),
            gated=True,
            permission=True,
            effects=frozenset({"deny", "modify", "return", "inject", "message"}),
            return_error=content.text_part_list_error,
            list_target=True,
        ),
        Boundary(
            event="context.compact.after",
            target="summary",
            value_error=content.text_part_list_error,
            original=lambda e: codec.clone(_or(_get(e, "summary"), [])),
            gated=False,
            permission=False,
            effects=frozenset({"inject", "modify", "message"}),
            list_target=True,
        ),
        Boundary(
            event="user.message.outbound",
            target="content",
            value_error=content.message_list_error,
            original=lambda e: codec.clone(_or(_get(e, "message", "messages"), [])),
            gated=True,
            permission=True,
            effects=frozenset({"deny", "modify", "message"}),
            list_target=True,
        ),
        Boundary(
            event="user.elicitation.result",
            target="content",
            value_error=content.answer_error,
            original=_elicitation_answer,
            gated=False,
            permission=False,
            effects=frozenset({"modify", "message"}),
            editable=_elicitation_editable,
        ),
        Boundary(
            event="workspace.change.before",
            target="workspace",
            value_error=content.workspace_change_error,
            original=lambda e: codec.clone(_get(e, "workspace", "change")),
            gated=True,
            permission=True,
            effects=frozenset({"deny", "modify", "message"}),
        ),
    ]
    return {boundary.event: boundary for boundary in items}


BOUNDARIES: dict[str, Boundary] = _make_table()
