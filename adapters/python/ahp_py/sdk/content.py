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
