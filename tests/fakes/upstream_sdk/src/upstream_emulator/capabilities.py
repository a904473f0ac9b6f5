"""What this server advertises: the bare capabilities object (HTTP `GET /capabilities`)
and the `hooks/capabilities` result (stdio), one `tool.before` intercept entry."""

from __future__ import annotations

from typing import Any


def capabilities() -> dict[str, Any]:
    return {
        "effects": ["deny", "allow", "ask", "modify", "return", "message", "flow", "inject"],
        "modify": {"input": {"replace": True, "merge": True}},
        "flow": {"operations": ["stop"]},
        "inject": {"context": {"append": True, "deliverAt": ["now", "next_turn"]}},
    }


def discovery_result() -> dict[str, Any]:
    return {
        "protocolVersion": "draft",
        "manifest": {
            "transports": ["stdio"],
            "authentication": [],
            "toolPaths": ["native"],
            "contentCategories": [],
            "limits": {},
            "managedPolicy": {"scopes": [], "disableable": True},
            "correlationIdentityFields": ["event.id"],
            "events": [
                {"event": "tool.before", "modes": ["intercept"], "capabilities": capabilities()}
            ],
            "gaps": [],
        },
    }
