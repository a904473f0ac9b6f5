"""The interceptable boundaries the engine implements (no I/O).

For each event type: its modify target and where that target lives in the
event, the canonical schema definition of the target's value, whether the
boundary gates an operation and has permission semantics, which effects and
flow operations the protocol allows there, and whether (and as what) a
``return`` value is allowed. See docs/scenarios.md, "Boundaries in the core set"
and "Composition rules" (Phase 1, item 4).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import codec
from .record import field, record

Original = Callable[[dict[str, Any]], Any]

# The canonical definition of each slot (schemas/draft/<file>#<JSON pointer>).
MESSAGES = "content-item.schema.json#/$defs/messages"
ASSISTANT_MESSAGES = "interaction-event.schema.json#/$defs/assistantMessages"
TEXT_PARTS = "content-item.schema.json#/$defs/textParts"
WORKSPACE_CHANGE = "common.schema.json#/$defs/workspaceChange"
ANSWER_CONTENT = "mcp-elicitation.schema.json#/$defs/answerContent"
# tool-before.schema.json says no more of the input than the common tool does.
TOOL_INPUT = "common.schema.json#/$defs/tool/properties/input"


def _always_editable(_: dict[str, Any]) -> str | None:
    return None


@record
class Boundary:
    event: str
    target: str
    definition: str  # canonical definition of every value the target holds
    original: Original
    gated: bool
    permission: bool
    effects: frozenset[str]
    flow_operations: frozenset[str] = frozenset()
    returns: bool = False  # whether a ``return`` is allowed at all
    return_definition: str | None = None  # None: any JSON value
    list_target: bool = False
    editable: Callable[[dict[str, Any]], str | None] = field(default=_always_editable)
    # where the target's value lives in the event (None: not a plain field)
    location: tuple[str, ...] | None = None

    def definitions(self) -> tuple[str, ...]:
        """Every canonical definition this boundary validates against."""
        extra = (self.return_definition,) if self.return_definition else ()
        return (self.definition, *extra)

    def with_value(self, event: dict[str, Any], value: Any) -> dict[str, Any]:
        """A copy of ``event`` whose target holds ``value`` (the effective value an
        accepted response left, carried to the next interceptor or an observer).
        Raises ValueError where the target is not a plain field of the event."""
        if self.location is None:
            raise ValueError(f"the {self.target} of {self.event} is not a plain event field")
        copy: dict[str, Any] = codec.clone(event)
        node = copy
        for key in self.location[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        node[self.location[-1]] = codec.clone(value)
        return copy


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
    """Content edits need an accepted form result carried with body selection
    (the carried answer itself is checked against its slot by the engine)."""
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
    return None


def _boundary(
    event: str,
    target: str,
    definition: str,
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
        definition,
        original,
        gated=gated,
        permission=gated,
        effects=frozenset(effects.split()),
        flow_operations=frozenset(flow.split()),
        **row,
    )


def _list_boundary(event: str, target: str, definition: str, *path: str, **row: Any) -> Boundary:
    """A row whose target is a list held at ``path`` (an empty list when absent)."""
    return _boundary(
        event, target, definition, _value_at(path, []), list_target=True, location=path, **row
    )


_TABLE = (
    _boundary(
        "tool.before",
        "input",
        TOOL_INPUT,
        _value_at(("tool", "input"), {}),
        gated=True,
        effects="deny allow ask modify inject flow return message",
        flow="stop",
        returns=True,
        location=("tool", "input"),
    ),
    _list_boundary(
        "tool.after",
        "output",
        MESSAGES,
        "items",
        gated=False,
        effects="modify inject flow message",
        flow="stop continue",
    ),
    _list_boundary(
        "turn.finish.before",
        "response",
        MESSAGES,
        "items",
        gated=False,
        effects="modify flow message",
        flow="stop continue",
    ),
    _list_boundary(
        "model.request.before",
        "request",
        MESSAGES,
        "items",
        gated=True,
        effects="deny modify inject return flow message",
        flow="stop",
        returns=True,
        return_definition=MESSAGES,
    ),
    _list_boundary(
        "context.compact.before",
        "instructions",
        TEXT_PARTS,
        "instructions",
        gated=True,
        effects="deny modify return inject message",
        returns=True,
        return_definition=TEXT_PARTS,
    ),
    _list_boundary(
        "context.compact.after",
        "summary",
        TEXT_PARTS,
        "summary",
        gated=False,
        effects="inject modify message",
    ),
    _list_boundary(
        "user.message.outbound",
        "content",
        ASSISTANT_MESSAGES,
        "message",
        "messages",
        gated=True,
        effects="deny modify message",
    ),
    _boundary(
        "user.elicitation.result",
        "content",
        ANSWER_CONTENT,
        _elicitation_answer,
        gated=False,
        effects="modify message",
        editable=_elicitation_editable,
    ),
    _boundary(
        "workspace.change.before",
        "workspace",
        WORKSPACE_CHANGE,
        _value_at(("workspace", "change")),
        gated=True,
        effects="deny modify message",
        location=("workspace", "change"),
    ),
)

BOUNDARIES: dict[str, Boundary] = {boundary.event: boundary for boundary in _TABLE}

# Every definition the engine validates against (inject values are messages).
DEFINITIONS: tuple[str, ...] = tuple(
    sorted({MESSAGES, *(d for b in _TABLE for d in b.definitions())})
)
