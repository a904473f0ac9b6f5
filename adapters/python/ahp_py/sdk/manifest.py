"""The discovery manifest this server answers ``hooks/capabilities`` with."""

from __future__ import annotations

from typing import Any

from .boundaries import BOUNDARIES, Boundary

PROTOCOL_VERSION = "draft"
_EFFECT_ORDER = (
    "deny",
    "allow",
    "ask",
    "modify",
    "message",
    "return",
    "flow",
    "inject",
)


def _capabilities(boundary: Boundary) -> dict[str, Any]:
    effects = [name for name in _EFFECT_ORDER if name in boundary.effects]
    capabilities: dict[str, Any] = {"effects": effects}
    if "modify" in boundary.effects:
        capabilities["modify"] = {boundary.target: {"replace": True, "merge": True}}
    if "flow" in boundary.effects:
        operations = [op for op in ("stop", "continue") if op in boundary.flow_operations]
        flow: dict[str, Any] = {"operations": operations}
        if "continue" in operations:
            flow.update(remainingContinuations=1, continuationCount=0, maxContinuations=1)
        capabilities["flow"] = flow
    if "inject" in boundary.effects:
        capabilities["inject"] = {"context": {"append": True, "deliverAt": ["now", "next_turn"]}}
    return capabilities


def discovery_manifest() -> dict[str, Any]:
    events = [
        {"event": name, "modes": ["intercept"], "capabilities": _capabilities(boundary)}
        for name, boundary in sorted(BOUNDARIES.items())
    ]
    return {
        "events": events,
        "gaps": [],
        "transports": ["http", "stdio"],
        "authentication": ["bearer", "oauth"],
        "toolPaths": ["native"],
        "contentCategories": ["text"],
        "limits": {},
        "managedPolicy": {"scopes": ["user"], "disableable": True},
        "correlationIdentityFields": ["session.id", "call.id"],
    }


def discovery_result() -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "manifest": discovery_manifest()}
