"""Context compaction as a host runs it (no I/O, no contract knowledge).

``outcome`` turns the core rules' result of the settled ``context.compact.before``
boundary into what the host does: apply a supplied summary, compact with the
synthetic compactor, or compact nothing. ``synthetic_summary`` is that
compactor's one text part; ``after_request`` is the ``context.compact.after``
intercept derived from the before event, the summary and the execution.
"""

from __future__ import annotations

from typing import Any

from . import codec, rpc
from .manifest import PROTOCOL_VERSION
from .record import record

BEFORE = "context.compact.before"
AFTER = "context.compact.after"
SUPPLIED, GENERATED = "supplied", "generated"

# What the after boundary advertises (docs/COMPACTION.md, step 4).
AFTER_CAPABILITIES: dict[str, Any] = {
    "effects": ["modify"],
    "modify": {"summary": {"replace": True, "merge": False}},
}
OBSERVE_ONLY_CAPABILITIES: dict[str, Any] = {"effects": []}


@record
class Outcome:
    """What the host did at the before boundary: ``summary`` (a text-part list),
    ``execution`` and ``provenance`` are all None when nothing was compacted."""

    applied: bool
    summary: list[Any] | None = None
    execution: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None


NOT_APPLIED = Outcome(applied=False)


def outcome(
    result: dict[str, Any] | None,
    supplier: str | None,
    summary_id: str,
    item_count: int,
    instructions: Any,
) -> Outcome:
    """The host's outcome from the core rules' ``result`` of the settled before
    boundary (their ``decision``, ``executed`` and, when a supplied summary is
    bound, ``result``), or None for a fail-closed failure (nothing compacted).
    ``supplier``: the subscription whose accepted ``return`` bound the candidate."""
    if result is None:
        return NOT_APPLIED
    if "result" in result and result.get("decision") == "allow" and result.get("flow") != "stop":
        return Outcome(
            applied=True,
            summary=codec.clone(result["result"]),
            execution={"status": "skipped", "reason": "supplied_result"},
            provenance={"kind": SUPPLIED, "supplier": supplier},
        )
    if result.get("executed") is True:
        return Outcome(
            applied=True,
            summary=synthetic_summary(summary_id, item_count, instructions),
            execution={"status": "executed"},
            provenance={"kind": GENERATED},
        )
    return NOT_APPLIED


def instruction_text(instructions: Any) -> str:
    """The texts of the instruction parts (those carrying a string ``text``),
    joined by a single space."""
    parts = instructions if isinstance(instructions, list) else []
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return " ".join(texts)


def synthetic_summary(summary_id: str, item_count: int, instructions: Any) -> list[Any]:
    """The synthetic compactor's summary: one text part ``"Summary of N items."``,
    followed by ``" Instructions: <texts>"`` when the instructions have text."""
    text = f"Summary of {item_count} items."
    joined = instruction_text(instructions)
    if joined:
        text += " Instructions: " + joined
    return [
        {
            "id": summary_id,
            "kind": "text",
            "mediaType": "text/plain",
            "selection": "body",
            "text": text,
        }
    ]


def after_event(
    event_id: str, before: dict[str, Any], summary: Any, execution: Any
) -> dict[str, Any]:
    """The ``context.compact.after`` event: ``source``, ``time`` and (when
    present) ``session`` of the before event, its parent, the summary, the ids of
    the compacted items, and the execution."""
    event: dict[str, Any] = {"id": event_id}
    for key in ("source", "time", "session"):
        if key in before:
            event[key] = codec.clone(before[key])
    items = before.get("items")
    removed = [
        {"id": item.get("id")}
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
    ]
    event.update(
        {
            "type": AFTER,
            "parentEventId": before.get("id"),
            "summary": codec.clone(summary),
            "removed": removed,
            "execution": codec.clone(execution),
        }
    )
    return event


def after_request(
    request_id: str,
    before_request: dict[str, Any],
    summary: Any,
    execution: Any,
    observe_only: bool,
) -> dict[str, Any]:
    """The after boundary's intercept request (its id is also its event's id)."""
    before = (before_request.get("params") or {}).get("event") or {}
    capabilities = OBSERVE_ONLY_CAPABILITIES if observe_only else AFTER_CAPABILITIES
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": rpc.INTERCEPT,
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "event": after_event(request_id, before, summary, execution),
            "capabilities": codec.clone(capabilities),
        },
    }


def carries_body(node: Any) -> bool:
    """Whether any text part in ``node`` (searched throughout) carries ``body``
    (compaction text is inline, never a reference)."""
    if isinstance(node, list):
        return any(carries_body(child) for child in node)
    if not isinstance(node, dict):
        return False
    if node.get("kind") == "text" and "body" in node:
        return True
    return any(carries_body(child) for child in node.values())
