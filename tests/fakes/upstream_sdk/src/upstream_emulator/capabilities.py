"""What this server advertises: the bare capabilities object (HTTP `GET /capabilities`)
and the `hooks/capabilities` result (stdio), one `tool.before` intercept entry; and
the catalogue suite's discovery result (`catalogue_result`)."""

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


# The catalogue suite's manifest: observe for these, `hook.failure` left out.
EXECUTION_EVENTS = (
    "tool.before",
    "tool.after",
    "turn.start",
    "turn.finish.before",
    "turn.end",
    "turn.progress",
    "model.request.before",
    "model.response.after",
    "model.error",
    "model.switch.before",
    "model.switch.after",
    "tool.permission.request",
    "tool.permission.resolved",
    "tool.progress",
    "tool.batch.after",
    "context.compact.before",
    "context.compact.after",
)
LINEAGE_EVENTS = (
    "task.change.before",
    "task.change.after",
    "workspace.change.before",
    "workspace.change.after",
    "file.changed",
)


def catalogue_result() -> dict[str, Any]:
    """The catalogue discovery result: every execution and lineage event observable,
    `tool.before` also interceptable (the core capabilities). Transports and
    authentication are what this SDK supports, whatever the run uses (the upstream
    registration vectors expect an http backend with a bearer `tokenEnv` accepted
    in every group, stdio and auth none included); never mtls or workload."""
    events: list[dict[str, Any]] = []
    for name in EXECUTION_EVENTS + LINEAGE_EVENTS:
        if name == "tool.before":
            entry = {"event": name, "modes": ["intercept", "observe"]}
            events.append({**entry, "capabilities": capabilities()})
        else:
            events.append({"event": name, "modes": ["observe"]})
    return {
        "protocolVersion": "draft",
        "manifest": {
            "transports": ["http", "stdio"],
            "authentication": ["bearer", "oauth"],
            "toolPaths": ["native"],
            "contentCategories": [],
            "limits": {},
            "managedPolicy": {"scopes": ["user", "project"], "disableable": True},
            "correlationIdentityFields": ["event.id"],
            "events": events,
            "gaps": [],
        },
    }
