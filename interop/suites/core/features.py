"""The features of a core row: its request, its response, and the class of rejection it expects."""

from __future__ import annotations

from typing import Any

from interop.suites.features import (
    NEGATIVE_CLASSES,
    content_features,
    response_features,
    walk,
    wire_features,
)


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row.get("request"))
    request = row.get("request")
    sent = "draft"
    if isinstance(request, dict) and isinstance(request.get("params"), dict):
        sent = request["params"].get("protocolVersion", "draft")
    response = row.get("response")
    if isinstance(response, dict):
        found |= response_features(response, sent)
        for obj in walk(response.get("result")):
            found |= content_features(obj)
    # The expectation's kind is the feature here: a row that expects rejection names its
    # class among its tags (docs/scenarios.md, "The core scenario set").
    raw_tags = row.get("tags")
    tags: list[Any] = raw_tags if isinstance(raw_tags, list) else []
    if row.get("expectError") is True or "negative" in tags:
        found |= {f"negative:{t}" for t in tags if t in NEGATIVE_CLASSES}
    return found
