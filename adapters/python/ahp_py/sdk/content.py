"""Withheld content in the content model (no I/O).

Shapes are the canonical schema's job (``schemas.py``, slot definitions in
``boundaries.py``); what remains here is the one content rule that is not a
schema rule: a whole-list ``replace`` must not discard content the host
withheld (a part with ``selection`` ``omit`` or ``metadata``, or a ``gap``).
"""

from __future__ import annotations

from typing import Any

WITHHELD_SELECTIONS = frozenset({"metadata", "omit"})


def part_is_withheld(part: Any) -> bool:
    return isinstance(part, dict) and (
        part.get("selection") in WITHHELD_SELECTIONS or "gap" in part
    )


def holds_withheld(value: Any) -> bool:
    """True when a message or part list holds omitted, metadata or gap parts."""
    if not isinstance(value, list):
        return False
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("parts"), list):
            if any(part_is_withheld(part) for part in item["parts"]):
                return True
        elif part_is_withheld(item):
            return True
    return False


def body_refs(items: Any) -> list[str]:
    """Every ``body.ref`` of an event's ``items``: parts, and the parts of messages."""
    refs: list[str] = []
    if not isinstance(items, list):
        return refs
    for item in items:
        if not isinstance(item, dict):
            continue
        parts = item.get("parts")
        for part in [item, *(parts if isinstance(parts, list) else [])]:
            body = part.get("body") if isinstance(part, dict) else None
            if isinstance(body, dict) and isinstance(body.get("ref"), str):
                refs.append(body["ref"])
    return refs


def rebind_refs(value: Any, refs: dict[str, str]) -> Any:
    """A copy of ``value`` with every ``body.ref`` found in ``refs`` replaced by
    what it maps to (a sender's local alias -> the receiver's reference)."""
    if isinstance(value, list):
        return [rebind_refs(item, refs) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: rebind_refs(item, refs) for key, item in value.items()}
    body = out.get("body")
    if isinstance(body, dict) and isinstance(body.get("ref"), str) and body["ref"] in refs:
        out["body"] = {**body, "ref": refs[body["ref"]]}
    return out
