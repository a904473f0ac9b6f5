"""The features of a lifecycle row: its messages, step ops, chain and observer faults."""

from __future__ import annotations

from typing import Any

from interop.suites.features import (
    op_features,
    probe_features,
    subscriptions_features,
    wire_features,
)


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row) | op_features(row) | probe_features(row)
    chain = row.get("chain")
    if isinstance(chain, dict):
        found |= subscriptions_features(chain.get("subscriptions"), "chain")
        if chain.get("interrupt") is True:
            found.add("chain:interrupt")
        if chain.get("holdObservers") is True:
            found.add("chain:hold-observers")
    if row.get("observeFaults"):
        found.add("chain:observer-fault")
    return found
