"""The features of an elicitation row: its messages, steps, form/url mode, correlation."""

from __future__ import annotations

from typing import Any

from interop.suites.features import op_features, steps_of, walk, wire_features

SHAPES = ("atomic", "correlation", "form", "url")


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row) | op_features(row)
    if "atomic" in row:
        found.add("elicitation:atomic")
    for obj in walk(row):
        elicitation = obj.get("elicitation")
        if isinstance(elicitation, dict) and elicitation.get("mode") in ("form", "url"):
            found.add(f"elicitation:{elicitation['mode']}")
    sent = [
        s["message"]["params"]["event"]
        for s in steps_of(row)
        if isinstance(s.get("message"), dict)
        and isinstance(s["message"].get("params"), dict)
        and isinstance(s["message"]["params"].get("event"), dict)
    ]
    if any(e.get("type") == "user.elicitation.result" and "parentEventId" in e for e in sent):
        found.add("elicitation:correlation")
    return found
