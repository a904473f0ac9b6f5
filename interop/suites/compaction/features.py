"""The features of a compaction row: its messages, both boundaries' chains, its negatives."""

from __future__ import annotations

from typing import Any

from interop.suites.features import subscriptions_features, wire_features

SHAPES = ("after-observe-only", "chain", "negative", "observer", "supplied")


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row)
    if "negative" in row:
        found.add("compaction:negative")
    for boundary in ("before", "after"):
        found |= subscriptions_features(row.get(boundary), "compaction")
    if row.get("afterObserveOnly") is True:
        found.add("compaction:after-observe-only")
    sequences = row.get("responseSequences")
    before = sequences.get("before") if isinstance(sequences, dict) else None
    if "effect:return" in wire_features(before):
        found.add("compaction:supplied")
    return found
