"""The discovery manifest this server answers ``hooks/capabilities`` with, and the
bare capabilities object ``GET /capabilities`` answers (``get_capabilities``)."""

from __future__ import annotations

from typing import Any

from . import codec
from .boundaries import BOUNDARIES, Boundary

PROTOCOL_VERSION = "draft"
# The entry whose capabilities ``GET /capabilities`` answers.
GET_CAPABILITIES_EVENT = "tool.before"
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


def get_capabilities(manifest: dict[str, Any]) -> dict[str, Any]:
    """What ``GET /capabilities`` answers: the ``capabilities`` object of the
    ``tool.before`` entry of ``manifest`` whose ``modes`` include ``intercept``, as
    it is (a copy), not a JSON-RPC envelope: upstream clients validate the answer
    against ``capabilities.schema.json``. A manifest without such an entry answers
    its first intercept entry's capabilities (every manifest of ours has one)."""
    intercepts = [entry for entry in manifest["events"] if "intercept" in entry.get("modes", ())]
    chosen = next((e for e in intercepts if e.get("event") == GET_CAPABILITIES_EVENT), None)
    if chosen is None:
        if not intercepts:
            raise ValueError("the manifest has no intercept entry")
        chosen = intercepts[0]
    capabilities: dict[str, Any] = codec.clone(chosen["capabilities"])
    return capabilities
