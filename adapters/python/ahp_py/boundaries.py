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
Original = Callable[[dict[str, Any]], Any]


def _any_value(_: Any) -> str | None:
    return None


def _always_editable(_: dict[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class Boundary:
    event: str
    target: str
    value_error: ShapeCheck
    original: Original
    gated: bool
    permission: bool
    effects: frozenset[str]
    flow_operations: frozenset[str] = frozenset()
    return_error: ShapeCheck | None = None
    list_target: bool = False
    editable: Callable[[dict[str, Any]], str | None] = field(default=_always_editable)


def get_path(node: Any, *path: str) -> Any:
    """The value at ``path`` through nested objects, or None where one is missing."""
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _value_at(path: tuple[str, ...], default: Any = None) -> Original:
    """The original value: a copy of what the event holds at ``path``, else ``default``."""

    def original(event: dict[str, Any]) -> Any:
        value = get_path(event, *path)
        return codec.clone(default if value is None else value)

    return original


def parse_elicitation_result(event: dict[str, Any]) -> dict[str, Any] | None:
    """The parsed MCP result carried as text in ``elicitation.result``.

    Only a text part with body selection carries one.
    """
    part = get_path(event, "elicitation", "result")
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
    elicitation = get_path(event, "elicitation")
    if get_path(elicitation, "mode") != "form":
        return "content edits need a form elicitation"
    if get_path(elicitation, "action") != "accept":
        return "content edits need an accepted elicitation"
    parsed = parse_elicitation_result(event)
    if parsed is None:
        return "content edits need a result part with body selection"
    if parsed.get("action", "accept") != "accept":
        return "the carried result is not an accepted one"
    return content.answer_error(parsed.get("content"))


def _boundary(
    event: str,
    target: str,
    value_error: ShapeCheck,
    original: Original,
    *,
    gated: bool,
    effects: str,
    flow: str = "",
    **row: Any,
) -> Boundary:
    """One table row; a gated boundary is exactly one with permission semantics."""
    return Boundary(
        event,
        target,
        value_error,
        original,
        gated=gated,
        permission=gated,
        effects=frozenset(effects.split()),
        flow_operations=frozenset(flow.split()),
        **row,
    )


def _list_boundary(
    event: str, target: str, value_error: ShapeCheck, *path: str, **row: Any
) -> Boundary:
    """A row whose target is a list held at ``path`` (an empty list when absent)."""
    return _boundary(
        event, target, value_error, _value_at(path, []), list_target=True, **row
    )


_MESSAGES = content.message_list_error
_TEXT_PARTS = content.text_part_list_error
_TABLE = (
    _boundary(
        "tool.before",
        "input",
        content.object_error,
        _value_at(("tool", "input"), {}),
        gated=True,
        effects="deny allow ask modify inject flow return message",
        flow="stop",
        return_error=_any_value,
    ),
    _list_boundary(
        "tool.after",
        "output",
        _MESSAGES,
        "items",
        gated=False,
        effects="modify inject flow message",
        flow="stop continue",
    ),
    _list_boundary(
        "turn.finish.before",
        "response",
        _MESSAGES,
        "items",
        gated=False,
        effects="modify flow message",
        flow="stop continue",
    ),
    _list_boundary(
        "model.request.before",
        "request",
        _MESSAGES,
        "items",
        gated=True,
        effects="deny modify inject return flow message",
        flow="stop",
        return_error=_MESSAGES,
    ),
    _list_boundary(
        "context.compact.before",
        "instructions",
        _TEXT_PARTS,
        "instructions",
        gated=True,
        effects="deny modify return inject message",
        return_error=_TEXT_PARTS,
    ),
    _list_boundary(
        "context.compact.after",
        "summary",
        _TEXT_PARTS,
        "summary",
        gated=False,
        effects="inject modify message",
    ),
    _list_boundary(
        "user.message.outbound",
        "content",
        _MESSAGES,
        "message",
        "messages",
        gated=True,
        effects="deny modify message",
    ),
    _boundary(
        "user.elicitation.result",
        "content",
        content.answer_error,
        _elicitation_answer,
        gated=False,
        effects="modify message",
        editable=_elicitation_editable,
    ),
    _boundary(
        "workspace.change.before",
        "workspace",
        content.workspace_change_error,
        _value_at(("workspace", "change")),
        gated=True,
        effects="deny modify message",
    ),
)

BOUNDARIES: dict[str, Boundary] = {boundary.event: boundary for boundary in _TABLE}
