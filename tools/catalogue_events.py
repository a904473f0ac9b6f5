"""Execution rows of the catalogue set: every event type, encoded and received.

For each of the 32 event types (common.schema.json#/$defs/eventType) the
table below gives, by hand:

* `minimal`: only the required fields: a `notify` the receiver accepts;
* `rich`: optional fields (session, turn, items, gaps, extensions with
  reverse-DNS keys, synthesized markers, other enum values): a `notify` the
  receiver accepts;
* `variants`: further accepted `notify` rows (other enum branches);
* `invalid`: schema-invalid variants, each tagged with the kind of breakage
  (`missing`, `enum`, `forbidden`, `closed`, `type`, `pattern`, `format`,
  `conditional`, `min-items`, `min-length`), sent by `rawNotify` and rejected
  `schema`; `(kind, fields)` is row `cat-<type>-invalid-<kind>`, and a second
  one of a kind is `(kind, name, fields)`, row `cat-<type>-invalid-<kind>-<name>`.

The shapes are the spec's (its schemas are the wire grammar; schemas/README.md
decisions 15 to 17 and 25): non-empty strings where it asks for them (a change
`summary`, a switch or session-end `reason`, an error `message` and `code`,
`expandedFrom`, `recovery`), `settings` names, `suggestions` and `mcpServers`
objects, closed `tool.batch.after` calls and `context.compact.after` removed
ids, part lists in `turn.progress` and `model.error` `items`, an open
`session`, `tool` (not `call`) forbidden at session events.

The list a variant is in is its verdict; nothing here validates a message.
Every event has its own id, `<scenario id>:event`; only `hook.failure` (which
must have one) and a few rich rows name a parent, never one that is delivered,
so the coverage rows leave the receiver's lineage state alone.
"""

from __future__ import annotations

import json
from typing import Any

from catalogue_wire import (
    EVENTS,
    JSON,
    OFFSET_TIME,
    OK,
    SCHEMA,
    Row,
    attachment_gap,
    attachment_meta,
    attachment_omit,
    event,
    message,
    note,
    notify,
    raw,
    refused,
    row,
    text_body,
    text_gap,
    text_meta,
    text_omit,
)

# ---------------------------------------------------------------- shared values

SESSION: JSON = {"id": "cat-session-0007"}
RICH_SESSION: JSON = {
    "id": "cat-session-0008",
    "cwd": "/home/ines/orchard",
    "workspaceRoots": ["/home/ines/orchard", "/home/ines/shared-libs"],
    "model": "tern-large-2",
    "agent": {"id": "cat-agent-reviewer", "type": "subagent", "synthesized": True},
    "synthesized": False,
}
RICH_TURN: JSON = {"id": "cat-turn-0031", "synthesized": True}
EXTENSIONS: JSON = {
    "org.ahp-interop.catalogue": {"lane": "rich", "attempt": 2},
    "test.ahp-interop.trace_id": "c0ffee42",
}
GAPS: JSON = [{"path": "session.cwd", "reason": "withheld by policy"}]

NATIVE_TOOL: JSON = {"name": "grep_files", "input": {}, "origin": "native"}
SHELL_TOOL: JSON = {
    "name": "shell",
    "input": {"command": "git status --short", "timeoutSeconds": 30},
    "origin": "native",
    "kind": "shell",
}
MCP_STDIO_TOOL: JSON = {
    "name": "notes_lookup",
    "input": {"query": "quarterly plan", "limit": 5, "filters": {"archived": False}},
    "origin": "mcp",
    "kind": "search",
    "mcp": {
        "server": {"id": "cat-mcp-notes", "name": "Notes"},
        "toolName": "lookup",
        "provenance": "runtime",
        "connection": {
            "transport": "stdio",
            "command": "notes-mcp",
            "args": ["--read-only"],
            "cwd": "/srv/notes",
        },
    },
}
MCP_HTTP_GAP_TOOL: JSON = {
    "name": "tickets_search",
    "input": {"text": "flaky build"},
    "origin": "mcp",
    "mcp": {
        "server": {"id": "cat-mcp-tickets"},
        "toolName": "search",
        "provenance": "inferred",
        "connection": {
            "transport": "http",
            "gaps": [{"path": "url", "reason": "the URL carries a credential"}],
        },
    },
}
MCP_EXTENSION_TOOL: JSON = {
    "name": "pipe_echo",
    "input": {"payload": "ping"},
    "origin": "mcp",
    "mcp": {
        "server": {"id": "cat-mcp-pipe"},
        "toolName": "echo",
        "provenance": "runtime",
        "connection": {
            "transport": "_org.ahp-interop.pipe",
            "addressForm": "pipe-name",
            "address": "catalogue-7",
        },
    },
}

MODEL: JSON = {"id": "tern-large-2", "provider": "tern"}
SMALL_MODEL: JSON = {"id": "tern-small-1", "provider": "tern"}
OTHER_MODEL: JSON = {"id": "kestrel-9", "provider": "kestrel-labs"}
ATTEMPT: JSON = {"id": "cat-attempt-01", "number": 1}
SECOND_ATTEMPT: JSON = {"id": "cat-attempt-02", "number": 2, "synthesized": True}

MANIFEST: JSON = {
    "events": [{"event": "tool.before", "modes": ["observe"]}],
    "gaps": [],
    "transports": ["stdio"],
    "authentication": [],
    "toolPaths": ["native"],
    "contentCategories": ["text"],
    "limits": {},
    "managedPolicy": {"scopes": ["user"], "disableable": True},
    "correlationIdentityFields": ["session.id"],
}
RICH_MANIFEST: JSON = {
    "events": [
        {
            "event": "tool.before",
            "modes": ["intercept", "observe"],
            "capabilities": {
                "effects": ["deny", "modify", "message"],
                "modify": {"input": {"replace": True, "merge": False}},
            },
        },
        {"event": "tool.after", "modes": ["observe"]},
        {"event": "session.end", "modes": ["observe"]},
    ],
    "gaps": [{"path": "events.turn.progress", "reason": "not emitted by this harness"}],
    "transports": ["http", "stdio"],
    "authentication": ["bearer", "oauth"],
    "toolPaths": ["native", "mcp"],
    "contentCategories": ["text", "images"],
    "limits": {"maxUploadBytes": 1048576, "minTimeoutMs": 250, "maxTimeoutMs": 10000},
    "managedPolicy": {"scopes": ["user", "project", "managed"], "disableable": False},
    "correlationIdentityFields": ["session.id", "turn.id", "call.id"],
}

ELICIT_URL = json.dumps(
    {
        "mode": "url",
        "message": "Sign in to the ticket tracker to continue",
        "elicitationId": "cat-elicit-0011",
        "url": "https://auth.catalogue.ahp-interop.test/start",
    },
    separators=(",", ":"),
)
ELICIT_FORM = json.dumps(
    {
        "mode": "form",
        "message": "How many seats does the team need?",
        "requestedSchema": {
            "type": "object",
            "properties": {"team": {"type": "string"}, "seats": {"type": "integer"}},
            "required": ["team"],
        },
    },
    separators=(",", ":"),
)
ELICIT_ANSWER = json.dumps(
    {"action": "accept", "content": {"team": "platform", "seats": 3}}, separators=(",", ":")
)


def p(sid: str, n: int) -> str:
    """A content id local to a row."""
    return f"{sid}:part-{n}"


# ---------------------------------------------------------------- the table

Fields = dict[str, Any]
Spec = dict[str, Any]


def specs() -> dict[str, Spec]:
    """Per event type: minimal, rich, variants [(name, fields)], invalid [(kind, fields)]."""
    s: dict[str, Spec] = {}

    call = {"id": "cat-call-0101"}
    s["tool.before"] = {
        "minimal": {"call": call, "tool": NATIVE_TOOL, "path": "native"},
        "rich": {
            "time": OFFSET_TIME,
            "session": RICH_SESSION,
            "turn": RICH_TURN,
            "parent": "cat-tool.before-rich:undelivered-turn-start",
            "call": {"id": "cat-call-0102", "synthesized": True},
            "tool": MCP_STDIO_TOOL,
            "path": "mcp",
            "items": [
                text_body(p("tb", 1), "Looking up the quarterly plan"),
                attachment_meta(p("tb", 2), "image/png", 20480, "tb screenshot"),
            ],
            "gaps": GAPS,
            "extensions": EXTENSIONS,
            "synthesized": True,
            "native": {"hook": "PreToolUse", "raw": {"tool_name": "lookup", "seq": 7}},
        },
        "variants": [
            (
                "mcp-http-gap",
                {"call": {"id": "cat-call-0103"}, "tool": MCP_HTTP_GAP_TOOL, "path": "mcp"},
            ),
            (
                "mcp-extension-transport",
                {"call": {"id": "cat-call-0104"}, "tool": MCP_EXTENSION_TOOL, "path": "mcp"},
            ),
        ],
        "invalid": [
            # tool.before forbids outcome.
            (
                "forbidden",
                {"call": call, "tool": NATIVE_TOOL, "path": "native", "outcome": "ok"},
            ),
            # origin mcp requires the mcp object.
            (
                "conditional",
                {
                    "call": call,
                    "tool": {"name": "notes_lookup", "input": {}, "origin": "mcp"},
                    "path": "mcp",
                },
            ),
        ],
    }

    write = {
        "name": "write_file",
        "input": {"path": "notes/q3.md", "mode": "overwrite"},
        "origin": "native",
        "kind": "file_write",
    }
    s["tool.after"] = {
        "minimal": {
            "outcome": "ok",
            "execution": {"status": "executed"},
            "call": {"id": "cat-call-0201"},
            "tool": NATIVE_TOOL,
            "path": "native",
            "items": [],
        },
        "rich": {
            "session": RICH_SESSION,
            "turn": {"id": "cat-turn-0032"},
            "outcome": "error",
            "execution": {"status": "executed"},
            "call": {"id": "cat-call-0202", "synthesized": True},
            "tool": write,
            "path": "native",
            "items": [
                message(
                    "cat-msg-0201",
                    "tool",
                    text_body(p("ta", 1), "permission denied: notes/q3.md"),
                    text_gap(p("ta", 2), "stderr not captured"),
                )
            ],
            "batch": {"id": "cat-batch-0201", "callIds": ["cat-call-0202", "cat-call-0203"]},
            "error": {
                "message": "permission denied",
                "class": "io",
                "code": "EACCES",
                "status": 13,
            },
            "durationMs": 412,
            "fileChanges": [
                {"path": "notes/q2.md", "change": "moved", "previousPath": "notes/q2-draft.md"},
                {
                    "path": "notes/q3.md",
                    "change": "modified",
                    "before": text_meta(p("ta", 3), "q3 v1"),
                    "after": text_meta(p("ta", 4), "q3 v2"),
                },
            ],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "denied",
                {
                    "outcome": "denied",
                    "execution": {"status": "skipped", "reason": "policy"},
                    "call": {"id": "cat-call-0204"},
                    "tool": SHELL_TOOL,
                    "path": "native",
                    "items": [],
                },
            ),
            (
                "supplied-result",
                {
                    "outcome": "ok",
                    "execution": {"status": "skipped", "reason": "supplied_result"},
                    "call": {"id": "cat-call-0205"},
                    "tool": MCP_STDIO_TOOL,
                    "path": "mcp",
                    "items": [
                        message("cat-msg-0202", "tool", text_body(p("ta", 5), "cached answer"))
                    ],
                },
            ),
            (
                "timeout",
                {
                    "outcome": "timeout",
                    "execution": {"status": "skipped", "reason": "timeout", "detail": "30 s"},
                    "call": {"id": "cat-call-0206"},
                    "tool": SHELL_TOOL,
                    "path": "native",
                    "items": [],
                },
            ),
        ],
        "invalid": [
            (
                "enum",
                {
                    "outcome": "failed",
                    "execution": {"status": "executed"},
                    "call": {"id": "cat-call-0201"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "items": [],
                },
            ),
            # denied requires execution skipped with reason policy.
            (
                "conditional",
                {
                    "outcome": "denied",
                    "execution": {"status": "executed"},
                    "call": {"id": "cat-call-0201"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "items": [],
                },
            ),
            # skipped execution forbids durationMs.
            (
                "forbidden",
                {
                    "outcome": "cancelled",
                    "execution": {"status": "skipped", "reason": "cancelled"},
                    "call": {"id": "cat-call-0201"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "items": [],
                    "durationMs": 15,
                },
            ),
        ],
    }

    harness = {"name": "orchard-cli", "version": "4.2.0"}
    s["session.start"] = {
        "minimal": {
            "session": SESSION,
            "trigger": "startup",
            "harness": harness,
            "permissionMode": "default",
            "manifest": MANIFEST,
            "items": [],
        },
        "rich": {
            "time": OFFSET_TIME,
            "session": RICH_SESSION,
            "trigger": "fork",
            "resumedFrom": {"id": "cat-session-0006", "synthesized": True},
            "harness": harness,
            "permissionMode": "acceptEdits",
            "manifest": RICH_MANIFEST,
            "items": [
                message(
                    "cat-msg-0301",
                    "system",
                    text_body(p("ss", 1), "You are the orchard reviewer."),
                    synthesized=True,
                )
            ],
            "gaps": GAPS,
            "extensions": EXTENSIONS,
            "synthesized": False,
        },
        "variants": [
            (
                "resume",
                {
                    "session": {"id": "cat-session-0009", "cwd": "/tmp/orchard"},
                    "trigger": "resume",
                    "harness": harness,
                    "permissionMode": "plan",
                    "manifest": MANIFEST,
                    "items": [message("cat-msg-0302", "developer", text_omit(p("ss", 2)))],
                },
            ),
        ],
        "invalid": [
            # clear requires resumedFrom.
            (
                "conditional",
                {
                    "session": SESSION,
                    "trigger": "clear",
                    "harness": harness,
                    "permissionMode": "default",
                    "manifest": MANIFEST,
                    "items": [],
                },
            ),
            (
                "missing",
                {
                    "session": SESSION,
                    "trigger": "startup",
                    "harness": {"name": "orchard-cli"},
                    "permissionMode": "default",
                    "manifest": MANIFEST,
                    "items": [],
                },
            ),
            # outcome belongs to session.end: session.start forbids it.
            (
                "forbidden",
                {
                    "session": SESSION,
                    "trigger": "startup",
                    "harness": harness,
                    "permissionMode": "default",
                    "manifest": MANIFEST,
                    "items": [],
                    "outcome": "completed",
                },
            ),
        ],
    }

    settings = {
        "source": "user-settings",
        "scope": "user",
        "settings": [],
        "summary": "user settings reloaded",
    }
    rich_change = {
        "source": "project-settings",
        "scope": "project",
        "settings": ["editor.tabSize", "telemetry.enabled"],
        "summary": "Two project settings change",
        "path": ".orchard/settings.json",
    }
    s["config.change.before"] = {
        "minimal": {"change": settings},
        "rich": {
            "session": RICH_SESSION,
            "change": rich_change,
            "items": [text_body(p("cb", 1), "tabSize 4 -> 2")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # mcpServers belongs to config.change.after only; change is closed.
            ("closed", {"change": {**settings, "mcpServers": []}}),
            # summary is a non-empty string.
            ("min-length", {"change": {**settings, "summary": ""}}),
            # path, when present, is a non-empty string.
            ("min-length", "path", {"change": {**settings, "path": ""}}),
            # settings holds setting names (strings), not key/value objects.
            ("type", {"change": {**settings, "settings": [{"key": "editor.tabSize", "value": 2}]}}),
        ],
    }

    s["turn.start"] = {
        "minimal": {"turn": {"id": "cat-turn-0501"}, "trigger": "user", "items": []},
        "rich": {
            "session": RICH_SESSION,
            "turn": {"id": "cat-turn-0502", "synthesized": True},
            "trigger": "hook",
            "items": [
                message("cat-msg-0501", "user", text_body(p("ts", 1), "/summarize --brief")),
                message("cat-msg-0502", "user", attachment_omit(p("ts", 2), "image/jpeg")),
            ],
            "expandedFrom": "/summarize",
            "extensions": EXTENSIONS,
            "gaps": [{"path": "items.1.parts.0", "reason": "images are omitted"}],
        },
        "variants": [
            (
                "continuation",
                {"turn": {"id": "cat-turn-0503"}, "trigger": "continuation", "items": []},
            )
        ],
        "invalid": [
            ("enum", {"turn": {"id": "cat-turn-0501"}, "trigger": "timer", "items": []}),
            # turn is closed at turn events.
            (
                "closed",
                {"turn": {"id": "cat-turn-0501", "index": 3}, "trigger": "user", "items": []},
            ),
            # expandedFrom is a string (what the prompt was expanded from), not an object.
            (
                "type",
                {
                    "turn": {"id": "cat-turn-0501"},
                    "trigger": "user",
                    "items": [],
                    "expandedFrom": {"command": "/summarize"},
                },
            ),
        ],
    }

    s["turn.finish.before"] = {
        "minimal": {
            "turn": {"id": "cat-turn-0601"},
            "outcome": "completed",
            "continuationCount": 0,
            "items": [],
        },
        "rich": {
            "session": {"id": "cat-session-0010", "agent": {"id": "cat-agent-main"}},
            "turn": {"id": "cat-turn-0602", "synthesized": False},
            "outcome": "max_iterations",
            "continuationCount": 3,
            "items": [message("cat-msg-0601", "assistant", text_body(p("tf", 1), "Out of steps."))],
            "lastAssistantItem": {"id": "cat-msg-0601"},
            "usage": {
                "kind": "total",
                "scope": "turn",
                "completeness": "partial",
                "provenance": "mixed",
                "inputTokens": 18250,
                "outputTokens": 2210,
                "cacheReadTokens": 9000,
                "cost": {"amount": 1, "currency": "USD", "basis": "estimated"},
            },
            "extensions": EXTENSIONS,
        },
        "variants": [
            # turn.finish.before defines no error and is open: an unknown member is
            # ignored (AHP-CORE-003), so the event is accepted.
            (
                "error-ignored",
                {
                    "turn": {"id": "cat-turn-0601"},
                    "outcome": "failed",
                    "continuationCount": 0,
                    "items": [],
                    "error": {"message": "stopped", "class": "hook"},
                },
            ),
        ],
        "invalid": [
            (
                "type",
                {
                    "turn": {"id": "cat-turn-0601"},
                    "outcome": "completed",
                    "continuationCount": -1,
                    "items": [],
                },
            ),
        ],
    }

    s["model.request.before"] = {
        "minimal": {"model": MODEL, "attempt": ATTEMPT, "params": {}, "items": []},
        "rich": {
            "session": RICH_SESSION,
            "turn": RICH_TURN,
            "model": MODEL,
            "attempt": SECOND_ATTEMPT,
            "params": {"maxOutputTokens": 4096, "toolChoice": "auto", "stop": ["END"]},
            "items": [
                message("cat-msg-0701", "system", text_body(p("mq", 1), "Be terse.")),
                message("cat-msg-0702", "user", text_body(p("mq", 2), "Summarize the plan")),
                message("cat-msg-0703", "assistant", text_meta(p("mq", 3), "plan draft")),
                message("cat-msg-0704", "tool", text_gap(p("mq", 4), "tool output withheld")),
            ],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # model.request.before forbids latencyMs.
            (
                "forbidden",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "params": {},
                    "items": [],
                    "latencyMs": 120,
                },
            ),
            (
                "type",
                {
                    "model": MODEL,
                    "attempt": {"id": "cat-attempt-01", "number": 0},
                    "params": {},
                    "items": [],
                },
            ),
        ],
    }

    s["model.response.after"] = {
        "minimal": {
            "model": MODEL,
            "attempt": ATTEMPT,
            "execution": {"status": "executed"},
            "items": [],
            "finishReason": "stop",
        },
        "rich": {
            "session": RICH_SESSION,
            "model": MODEL,
            "attempt": SECOND_ATTEMPT,
            "execution": {"status": "executed"},
            "items": [message("cat-msg-0801", "assistant", text_body(p("mr", 1), "Plan: ship."))],
            "finishReason": "tool_use",
            "usage": {
                "kind": "amount",
                "scope": "attempt",
                "completeness": "complete",
                "provenance": "provider",
                "inputTokens": 5120,
                "outputTokens": 640,
                "cacheWriteTokens": 128,
                "cost": {"amount": 0, "currency": "USD", "basis": "billed"},
            },
            "latencyMs": 830,
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "supplied-result",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "skipped", "reason": "supplied_result"},
                    "items": [],
                    "finishReason": "end_turn",
                },
            )
        ],
        "invalid": [
            # a skipped model response must be a supplied result.
            (
                "conditional",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "skipped", "reason": "policy"},
                    "items": [],
                    "finishReason": "stop",
                },
            ),
            # attempt usage is kind amount.
            (
                "enum",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "executed"},
                    "items": [],
                    "finishReason": "stop",
                    "usage": {
                        "kind": "total",
                        "scope": "attempt",
                        "completeness": "complete",
                        "provenance": "provider",
                    },
                },
            ),
        ],
    }

    s["model.switch.before"] = {
        "minimal": {"current": MODEL, "proposed": SMALL_MODEL, "reason": "cheaper model"},
        "rich": {
            "session": RICH_SESSION,
            "current": MODEL,
            "proposed": OTHER_MODEL,
            "reason": "the context window is nearly full",
            "pricing": {
                "currency": "EUR",
                "inputPerMillionTokens": 3,
                "outputPerMillionTokens": 15,
            },
            "items": [text_body(p("ms", 1), "switching to a larger window")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            (
                "pattern",
                {
                    "current": MODEL,
                    "proposed": SMALL_MODEL,
                    "reason": "cheaper model",
                    "pricing": {"currency": "eur"},
                },
            ),
            # reason is a non-empty string.
            ("min-length", {"current": MODEL, "proposed": SMALL_MODEL, "reason": ""}),
        ],
    }

    s["tool.permission.request"] = {
        "minimal": {
            "call": {"id": "cat-call-1001"},
            "tool": NATIVE_TOOL,
            "path": "native",
            "suggestions": [],
            "sandboxBypass": False,
        },
        "rich": {
            "session": RICH_SESSION,
            "turn": RICH_TURN,
            "call": {"id": "cat-call-1002", "synthesized": True},
            "tool": SHELL_TOOL,
            "path": "native",
            "suggestions": [
                {"type": "allowAlways", "pattern": "git status*"},
                {"type": "allowOnce"},
            ],
            "sandboxBypass": True,
            "items": [text_body(p("pq", 1), "git status --short wants to run outside the sandbox")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            (
                "missing",
                {
                    "call": {"id": "cat-call-1001"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "suggestions": [],
                },
            ),
            # a suggestion is a host-native rule object, not a string.
            (
                "type",
                {
                    "call": {"id": "cat-call-1001"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "suggestions": ["allow once"],
                    "sandboxBypass": False,
                },
            ),
        ],
    }

    batch_call = {
        "call": {"id": "cat-call-1101"},
        "tool": NATIVE_TOOL,
        "path": "native",
        "outcome": "ok",
        "execution": {"status": "executed"},
    }
    s["tool.batch.after"] = {
        "minimal": {"batch": {"id": "cat-batch-1101"}, "calls": [batch_call]},
        "rich": {
            "session": RICH_SESSION,
            "batch": {"id": "cat-batch-1102", "synthesized": True},
            "calls": [
                {
                    "call": {"id": "cat-call-1102"},
                    "tool": SHELL_TOOL,
                    "path": "native",
                    "outcome": "error",
                    "execution": {"status": "executed"},
                },
                {
                    "call": {"id": "cat-call-1103", "synthesized": True},
                    "tool": MCP_STDIO_TOOL,
                    "path": "mcp",
                    "outcome": "cancelled",
                    "execution": {
                        "status": "skipped",
                        "reason": "cancelled",
                        "detail": "the user pressed stop",
                    },
                },
                {
                    "call": {"id": "cat-call-1104"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "outcome": "denied",
                    "execution": {"status": "skipped", "reason": "policy"},
                },
            ],
            "items": [text_omit(p("ba", 1))],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            ("min-items", {"batch": {"id": "cat-batch-1101"}, "calls": []}),
            (
                "closed",
                {"batch": {"id": "cat-batch-1101"}, "calls": [{**batch_call, "fileChanges": []}]},
            ),
            # a call carries no error of its own ...
            (
                "closed",
                "call-error",
                {
                    "batch": {"id": "cat-batch-1101"},
                    "calls": [
                        {
                            **batch_call,
                            "outcome": "error",
                            "error": {"message": "exit status 2", "class": "process"},
                        }
                    ],
                },
            ),
            # ... and no duration.
            (
                "closed",
                "call-duration",
                {"batch": {"id": "cat-batch-1101"}, "calls": [{**batch_call, "durationMs": 95}]},
            ),
            # a denied call was skipped by policy, not executed.
            (
                "conditional",
                {"batch": {"id": "cat-batch-1101"}, "calls": [{**batch_call, "outcome": "denied"}]},
            ),
        ],
    }

    s["context.compact.before"] = {
        "minimal": {"trigger": "auto", "items": []},
        "rich": {
            "session": RICH_SESSION,
            "trigger": "manual",
            "items": [message("cat-msg-1201", "user", text_meta(p("cc", 1), "long history"))],
            "instructions": [text_body(p("cc", 2), "Keep every decision and its reason.")],
            "tokenCounts": {"before": 120000},
            "extensions": EXTENSIONS,
        },
        "variants": [("hook", {"trigger": "hook", "items": []})],
        "invalid": [
            # context.compact.before forbids summary.
            ("forbidden", {"trigger": "auto", "items": [], "summary": []}),
            ("enum", {"trigger": "scheduled", "items": []}),
        ],
    }

    s["context.compact.after"] = {
        "minimal": {"summary": [], "removed": [], "execution": {"status": "executed"}},
        "rich": {
            "session": RICH_SESSION,
            "summary": [text_body(p("ca", 1), "Decided to ship on Friday.")],
            "removed": [{"id": "cat-msg-1201"}, {"id": "cat-msg-1202"}],
            "execution": {"status": "executed"},
            "tokenCounts": {"before": 120000, "after": 18000},
            "items": [message("cat-msg-1301", "system", text_body(p("ca", 2), "Summary above."))],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "supplied-result",
                {
                    "summary": [text_meta(p("ca", 3), "hook summary")],
                    "removed": [],
                    "execution": {"status": "skipped", "reason": "supplied_result"},
                },
            )
        ],
        "invalid": [
            ("missing", {"summary": [], "execution": {"status": "executed"}}),
            # a skipped compaction must be a supplied result.
            (
                "conditional",
                {
                    "summary": [],
                    "removed": [],
                    "execution": {"status": "skipped", "reason": "timeout"},
                },
            ),
            # a removed entry is exactly {id}: no synthesized marker.
            (
                "closed",
                {
                    "summary": [],
                    "removed": [{"id": "cat-msg-1202", "synthesized": True}],
                    "execution": {"status": "executed"},
                },
            ),
        ],
    }

    s["task.change.before"] = {
        "minimal": {
            "task": {
                "id": "cat-task-1401",
                "operation": "create",
                "change": {"title": "Rotate staging keys"},
            }
        },
        "rich": {
            "session": RICH_SESSION,
            "task": {
                "id": "cat-task-1402",
                "operation": "update",
                "change": {"status": "in_review", "assignee": "ines"},
                "prior": {"status": "open"},
                "description": "Rotate the staging API keys",
                "synthesized": True,
            },
            "items": [text_body(p("tq", 1), "moving to review")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "remove",
                {"task": {"id": "cat-task-1403", "operation": "remove", "change": {}}},
            )
        ],
        "invalid": [
            (
                "enum",
                {"task": {"id": "cat-task-1401", "operation": "rename", "change": {}}},
            ),
        ],
    }

    s["user.elicitation.request"] = {
        "minimal": {"elicitation": {"server": "cat-mcp-forms", "mode": "form"}},
        "rich": {
            "session": RICH_SESSION,
            "elicitation": {
                "server": "cat-mcp-tickets",
                "mode": "url",
                "request": text_body(p("eq", 1), ELICIT_URL),
            },
            "items": [text_body(p("eq", 2), "The ticket tracker asks you to sign in")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "form-request",
                {
                    "elicitation": {
                        "server": "cat-mcp-forms",
                        "mode": "form",
                        "request": text_body(p("eq", 3), ELICIT_FORM),
                    }
                },
            )
        ],
        "invalid": [
            ("enum", {"elicitation": {"server": "cat-mcp-forms", "mode": "prompt"}}),
        ],
    }

    s["user.elicitation.result"] = {
        "minimal": {"elicitation": {"server": "cat-mcp-forms", "mode": "form", "action": "cancel"}},
        "rich": {
            "session": RICH_SESSION,
            "elicitation": {
                "server": "cat-mcp-forms",
                "mode": "form",
                "action": "accept",
                "result": text_body(p("er", 1), ELICIT_ANSWER),
            },
            "items": [text_meta(p("er", 2), "form answer")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "decline",
                {"elicitation": {"server": "cat-mcp-tickets", "mode": "url", "action": "decline"}},
            )
        ],
        "invalid": [
            ("missing", {"elicitation": {"server": "cat-mcp-forms", "mode": "form"}}),
        ],
    }

    s["user.message.inbound"] = {
        "minimal": {"message": {"channel": "cli", "sender": "ines", "messages": []}},
        "rich": {
            "session": RICH_SESSION,
            "message": {
                "channel": "chat:orchard-dev",
                "sender": "cat-user-0044",
                "messages": [
                    message("cat-msg-1701", "user", text_body(p("mi", 1), "Can you ship it?")),
                    message(
                        "cat-msg-1702",
                        "user",
                        attachment_meta(p("mi", 2), "image/jpeg", 48213, "mi photo"),
                        synthesized=True,
                    ),
                ],
            },
            "items": [text_omit(p("mi", 3))],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # inbound messages have role user.
            (
                "conditional",
                {
                    "message": {
                        "channel": "cli",
                        "sender": "ines",
                        "messages": [
                            message("cat-msg-1703", "assistant", text_body(p("mi", 4), "hi"))
                        ],
                    }
                },
            ),
        ],
    }

    s["user.message.outbound"] = {
        "minimal": {"message": {"channel": "cli", "messages": []}},
        "rich": {
            "session": RICH_SESSION,
            "message": {
                "channel": "chat:orchard-dev",
                "messages": [
                    message(
                        "cat-msg-1801",
                        "assistant",
                        text_body(p("mo", 1), "Shipped."),
                        text_gap(p("mo", 2), "the diff is too large"),
                    )
                ],
            },
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # outbound message has no sender: closed.
            ("closed", {"message": {"channel": "cli", "sender": "ines", "messages": []}}),
        ],
    }

    s["workspace.change.before"] = {
        "minimal": {"workspace": {"kind": "cwd", "change": {"cwd": "/home/ines/orchard/api"}}},
        "rich": {
            "session": RICH_SESSION,
            "workspace": {
                "kind": "roots",
                "change": {"workspaceRoots": ["/home/ines/orchard", "/home/ines/shared-libs"]},
                "prior": {"workspaceRoots": ["/home/ines/orchard"]},
                "reason": "the shared libraries are needed",
            },
            "items": [text_body(p("wq", 1), "adding a root")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "switch",
                {
                    "workspace": {
                        "kind": "switch",
                        "change": {"cwd": "/srv/other", "workspaceRoots": ["/srv/other"]},
                    }
                },
            )
        ],
        "invalid": [
            ("min-items", {"workspace": {"kind": "cwd", "change": {}}}),
        ],
    }

    s["session.end"] = {
        "minimal": {"session": SESSION, "outcome": "completed", "reason": "user quit"},
        "rich": {
            "time": OFFSET_TIME,
            "session": RICH_SESSION,
            "outcome": "error",
            "reason": "the harness process crashed",
            "counters": {"turns": 12, "toolCalls": 40, "hookFailures": 0},
            "items": [text_body(p("se", 1), "segfault in the renderer")],
            "gaps": GAPS,
            "extensions": EXTENSIONS,
        },
        "variants": [
            ("cancelled", {"session": SESSION, "outcome": "cancelled", "reason": "user quit"}),
            (
                "unknown",
                {
                    "session": SESSION,
                    "outcome": "unknown",
                    "reason": "the harness lost the session",
                },
            ),
            # session is open: a member the protocol does not define is ignored.
            (
                "session-unknown-member",
                {
                    "session": {"id": "cat-session-2002", "user": "ines"},
                    "outcome": "completed",
                    "reason": "user quit",
                },
            ),
        ],
        "invalid": [
            (
                "type",
                {
                    "session": SESSION,
                    "outcome": "completed",
                    "reason": "user quit",
                    "counters": {"turns": -1},
                },
            ),
            # session.end forbids tool (it is no tool event).
            (
                "forbidden",
                {
                    "session": SESSION,
                    "outcome": "completed",
                    "reason": "user quit",
                    "tool": NATIVE_TOOL,
                },
            ),
            # reason is a non-empty string.
            ("min-length", {"session": SESSION, "outcome": "completed", "reason": ""}),
        ],
    }

    s["config.change.after"] = {
        "minimal": {"change": settings},
        "rich": {
            "session": RICH_SESSION,
            "change": {
                **rich_change,
                "mcpServers": [
                    {"id": "cat-mcp-notes", "enabled": True},
                    {"id": "cat-mcp-tickets", "transport": "http"},
                ],
            },
            "items": [text_body(p("ca2", 1), "applied")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            (
                "missing",
                {"change": {"source": "user-settings", "scope": "user", "settings": []}},
            ),
            # summary is a non-empty string.
            ("min-length", {"change": {**settings, "summary": ""}}),
            # a setting name is a non-empty string.
            ("min-length", "setting-name", {"change": {**settings, "settings": [""]}}),
            # mcpServers holds descriptor objects, not server names.
            ("type", {"change": {**settings, "mcpServers": ["cat-mcp-tickets"]}}),
        ],
    }

    s["turn.end"] = {
        "minimal": {
            "turn": {"id": "cat-turn-2201"},
            "outcome": "completed",
            "continuationCount": 0,
            "items": [],
        },
        "rich": {
            "session": RICH_SESSION,
            "turn": {"id": "cat-turn-2202", "synthesized": True},
            "outcome": "failed",
            "continuationCount": 1,
            "items": [
                message("cat-msg-2201", "assistant", text_body(p("te", 1), "I hit a quota."))
            ],
            "lastAssistantItem": {"id": "cat-msg-2201", "synthesized": False},
            "usage": {
                "kind": "total",
                "scope": "turn",
                "completeness": "unknown",
                "provenance": "estimate",
                "outputTokens": 75,
            },
            "error": {
                "message": "model quota exhausted",
                "class": "quota",
                "code": "quota_exhausted",
                "status": 429,
            },
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "cancelled",
                {
                    "turn": {"id": "cat-turn-2203"},
                    "outcome": "cancelled",
                    "continuationCount": 0,
                    "items": [],
                },
            )
        ],
        "invalid": [
            # a completed turn.end forbids error.
            (
                "conditional",
                {
                    "turn": {"id": "cat-turn-2201"},
                    "outcome": "completed",
                    "continuationCount": 0,
                    "items": [],
                    "error": {"message": "late", "class": "internal"},
                },
            ),
            # an error code is a string.
            (
                "type",
                {
                    "turn": {"id": "cat-turn-2201"},
                    "outcome": "failed",
                    "continuationCount": 0,
                    "items": [],
                    "error": {"message": "model quota exhausted", "class": "quota", "code": 429},
                },
            ),
        ],
    }

    s["turn.progress"] = {
        "minimal": {
            "turn": {"id": "cat-turn-2301"},
            "item": {"id": "cat-msg-2301"},
            "delta": message("cat-msg-2301", "assistant", text_body(p("tp", 1), "Par")),
            "final": False,
        },
        "rich": {
            "session": RICH_SESSION,
            "turn": {"id": "cat-turn-2302", "synthesized": True},
            "item": {"id": "cat-msg-2302", "synthesized": True},
            "delta": message(
                "cat-msg-2302",
                "assistant",
                text_body(p("tp", 2), "tial answer"),
                text_body(p("tp", 3), "reasoning step", category="reasoning"),
                synthesized=True,
            ),
            "final": True,
            "items": [text_meta(p("tp", 4), "Partial answer")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # delta is a message, not a part.
            (
                "type",
                {
                    "turn": {"id": "cat-turn-2301"},
                    "item": {"id": "cat-msg-2301"},
                    "delta": text_body(p("tp", 5), "Par"),
                    "final": False,
                },
            ),
            # turn.progress items are parts, not messages (the spec's schema).
            (
                "type",
                "items",
                {
                    "turn": {"id": "cat-turn-2301"},
                    "item": {"id": "cat-msg-2301"},
                    "delta": message("cat-msg-2301", "assistant", text_body(p("tp", 6), "Par")),
                    "final": False,
                    "items": [message("cat-msg-2304", "assistant", text_meta(p("tp", 7), "Par"))],
                },
            ),
        ],
    }

    s["model.error"] = {
        "minimal": {
            "model": MODEL,
            "attempt": ATTEMPT,
            "execution": {"status": "executed"},
            "error": {"message": "rate limited", "class": "rate_limit"},
        },
        "rich": {
            "session": RICH_SESSION,
            "model": OTHER_MODEL,
            "attempt": SECOND_ATTEMPT,
            "execution": {"status": "executed"},
            "error": {
                "message": "overloaded",
                "class": "server",
                "code": "overloaded_error",
                "status": 529,
                "native": {"type": "error", "retryable": True},
            },
            "usage": {
                "kind": "amount",
                "scope": "attempt",
                "completeness": "partial",
                "provenance": "estimate",
                "inputTokens": 900,
            },
            "latencyMs": 2500,
            "recovery": "retry after 2 s",
            "items": [text_omit(p("me", 1))],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # model.error requires an executed attempt.
            (
                "conditional",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "skipped", "reason": "supplied_result"},
                    "error": {"message": "rate limited", "class": "rate_limit"},
                },
            ),
            (
                "forbidden",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "executed"},
                    "error": {"message": "rate limited", "class": "rate_limit"},
                    "finishReason": "error",
                },
            ),
            # an error message is a non-empty string.
            (
                "min-length",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "executed"},
                    "error": {"message": "", "class": "rate_limit"},
                },
            ),
            # recovery is a string, not an object.
            (
                "type",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "executed"},
                    "error": {"message": "rate limited", "class": "rate_limit"},
                    "recovery": {"action": "retry"},
                },
            ),
            # model.error items are parts, not messages (the spec's schema).
            (
                "type",
                "items",
                {
                    "model": MODEL,
                    "attempt": ATTEMPT,
                    "execution": {"status": "executed"},
                    "error": {"message": "rate limited", "class": "rate_limit"},
                    "items": [message("cat-msg-2401", "user", text_omit(p("me", 2)))],
                },
            ),
        ],
    }

    s["model.switch.after"] = {
        "minimal": {"previous": MODEL, "current": SMALL_MODEL, "reason": "cheaper model"},
        "rich": {
            "session": RICH_SESSION,
            "previous": SMALL_MODEL,
            "current": OTHER_MODEL,
            "reason": "the user selected kestrel-9",
            "items": [text_body(p("ma", 1), "now using kestrel-9")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            (
                "missing",
                {"previous": MODEL, "current": {"id": "tern-small-1"}, "reason": "cheaper model"},
            ),
            # reason is a non-empty string.
            ("min-length", {"previous": MODEL, "current": SMALL_MODEL, "reason": ""}),
        ],
    }

    s["tool.permission.resolved"] = {
        "minimal": {
            "call": {"id": "cat-call-2601"},
            "tool": NATIVE_TOOL,
            "path": "native",
            "decision": "allow",
            "decidedBy": "user",
        },
        "rich": {
            "session": RICH_SESSION,
            "turn": RICH_TURN,
            "call": {"id": "cat-call-2602", "synthesized": True},
            "tool": SHELL_TOOL,
            "path": "native",
            "decision": "deny",
            "decidedBy": "classifier",
            "items": [text_body(p("pr", 1), "blocked: writes outside the workspace")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "auto",
                {
                    "call": {"id": "cat-call-2603"},
                    "tool": MCP_HTTP_GAP_TOOL,
                    "path": "mcp",
                    "decision": "allow",
                    "decidedBy": "auto",
                },
            ),
            (
                "policy",
                {
                    "call": {"id": "cat-call-2604"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "decision": "deny",
                    "decidedBy": "policy",
                },
            ),
        ],
        "invalid": [
            (
                "enum",
                {
                    "call": {"id": "cat-call-2601"},
                    "tool": NATIVE_TOOL,
                    "path": "native",
                    "decision": "allow",
                    "decidedBy": "admin",
                },
            ),
        ],
    }

    s["tool.progress"] = {
        "minimal": {
            "call": {"id": "cat-call-2701"},
            "tool": SHELL_TOOL,
            "path": "native",
            "partialOutput": message("cat-msg-2701", "tool", text_body(p("tg", 1), "Compiling")),
            "backgrounded": False,
        },
        "rich": {
            "session": RICH_SESSION,
            "call": {"id": "cat-call-2702"},
            "tool": SHELL_TOOL,
            "path": "native",
            "partialOutput": message(
                "cat-msg-2702",
                "tool",
                text_body(p("tg", 2), "Compiling 41/120"),
                text_meta(p("tg", 3), "full build log so far"),
            ),
            "backgrounded": True,
            "items": [text_omit(p("tg", 4))],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            (
                "type",
                {
                    "call": {"id": "cat-call-2701"},
                    "tool": SHELL_TOOL,
                    "path": "native",
                    "partialOutput": message("cat-msg-2701", "tool"),
                    "backgrounded": "yes",
                },
            ),
        ],
    }

    s["task.change.after"] = {
        "minimal": {
            "task": {
                "id": "cat-task-2801",
                "operation": "create",
                "change": {"title": "Write the release notes"},
            }
        },
        "rich": {
            "session": RICH_SESSION,
            "task": {
                "id": "cat-task-2802",
                "operation": "update",
                "change": {"status": "done"},
                "prior": {"status": "in_review", "assignee": "ines"},
                "description": "Rotate the production API keys",
                "synthesized": True,
            },
            "items": [text_body(p("tk", 1), "closed")],
            "extensions": EXTENSIONS,
        },
        "variants": [
            (
                "remove",
                {
                    "task": {
                        "id": "cat-task-2803",
                        "operation": "remove",
                        "change": {},
                        "prior": {"title": "Old chore"},
                    }
                },
            )
        ],
        "invalid": [
            (
                "closed",
                {
                    "task": {
                        "id": "cat-task-2801",
                        "operation": "create",
                        "change": {"title": "Write the release notes"},
                        "status": "open",
                    }
                },
            ),
        ],
    }

    s["user.attention"] = {
        "minimal": {"attention": {"kind": "idle", "message": [], "title": []}},
        "rich": {
            "session": RICH_SESSION,
            "attention": {
                "kind": "permission",
                "message": [
                    text_body(p("ua", 1), "The agent waits for your approval."),
                    text_meta(p("ua", 2), "command preview"),
                ],
                "title": [text_body(p("ua", 3), "Approval needed")],
            },
            "items": [attachment_gap(p("ua", 4), "image/png", "not captured", "screen")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            # parts carry no role.
            (
                "closed",
                {
                    "attention": {
                        "kind": "idle",
                        "message": [text_body(p("ua", 5), "waiting", role="user")],
                        "title": [],
                    }
                },
            ),
        ],
    }

    s["workspace.change.after"] = {
        "minimal": {"workspace": {"kind": "cwd", "change": {"cwd": "/home/ines/orchard/web"}}},
        "rich": {
            "session": RICH_SESSION,
            "workspace": {
                "kind": "switch",
                "change": {"cwd": "/srv/orchard-next", "workspaceRoots": ["/srv/orchard-next"]},
                "prior": {"cwd": "/home/ines/orchard"},
                "reason": "the user opened another checkout",
            },
            "items": [text_body(p("wa", 1), "switched")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            ("enum", {"workspace": {"kind": "folder", "change": {"cwd": "/tmp"}}}),
        ],
    }

    s["file.changed"] = {
        "minimal": {
            "changes": [{"path": "src/main.rs", "operation": "create", "agentCaused": False}]
        },
        "rich": {
            "session": RICH_SESSION,
            "changes": [
                {
                    "path": "src/lib.rs",
                    "operation": "update",
                    "agentCaused": True,
                    "before": text_meta(p("fc", 1), "lib v1"),
                    "after": text_meta(p("fc", 2), "lib v2"),
                },
                {
                    "path": "src/old.rs",
                    "operation": "remove",
                    "agentCaused": True,
                    "before": text_omit(p("fc", 3)),
                },
                {
                    "path": "assets/logo.png",
                    "operation": "create",
                    "agentCaused": False,
                    "after": attachment_meta(p("fc", 4), "image/png", 5120, "logo"),
                },
            ],
            "items": [text_body(p("fc", 5), "three files")],
            "extensions": EXTENSIONS,
        },
        "variants": [],
        "invalid": [
            ("missing", {"changes": [{"path": "src/main.rs", "operation": "create"}]}),
            ("min-items", {"changes": []}),
        ],
    }

    failure = {
        "backendId": "org.ahp-interop.catalogue.alpha",
        "reason": "timeout",
        "policy": "fail-open",
    }
    s["hook.failure"] = {
        "minimal": {"failure": failure, "parent": "cat-hook.failure-minimal:intercepted"},
        "rich": {
            "session": RICH_SESSION,
            "turn": RICH_TURN,
            "failure": {
                "backendId": "org.ahp-interop.catalogue.beta",
                "reason": "the backend answered HTTP 503",
                "policy": "fail-closed",
            },
            "parent": "cat-hook.failure-rich:intercepted",
            "items": [text_body(p("hf", 1), "the tool call was blocked")],
            "extensions": EXTENSIONS,
            "synthesized": True,
        },
        "variants": [],
        "invalid": [
            ("missing", {"failure": failure}),
            (
                "enum",
                {
                    "failure": {**failure, "policy": "fail-silent"},
                    "parent": "cat-hook.failure-invalid-enum:intercepted",
                },
            ),
        ],
    }
    return s


# ---------------------------------------------------------------- rows


def _message(type_: str, sid: str, fields: Fields) -> JSON:
    return note(event(type_, f"{sid}:event", **fields))


def accepted(tag: str, sid: str, type_: str, fields: Fields) -> Row:
    m = _message(type_, sid, fields)
    return row(tag, sid, "execution", [notify(m)], sent=[m], deliveries=[OK])


def schema_rejected(tag: str, sid: str, m: JSON) -> Row:
    return row(tag, sid, "execution", [raw(m)], sent=[m], deliveries=[SCHEMA])


def type_rows(type_: str, spec: Spec) -> list[Row]:
    rows = [
        accepted("minimal", f"cat-{type_}-minimal", type_, spec["minimal"]),
        accepted("rich", f"cat-{type_}-rich", type_, spec["rich"]),
    ]
    for name, fields in spec["variants"]:
        rows.append(accepted("variant", f"cat-{type_}-{name}", type_, fields))
    for entry in spec["invalid"]:
        kind, *name, fields = entry
        sid = "-".join([f"cat-{type_}-invalid-{kind}", *name])
        rows.append(schema_rejected(f"invalid:{kind}", sid, _message(type_, sid, fields)))
    return rows


def envelope_rows() -> list[Row]:
    """Schema-invalid envelopes: the event's own fields are fine, a shared one is not."""
    rows = []
    sid = "cat-envelope-invalid-extension-key"
    m = note(
        event(
            "tool.before",
            f"{sid}:event",
            call={"id": "cat-call-3101"},
            tool=NATIVE_TOOL,
            path="native",
            extensions={"catalogue": {"lane": "bad"}},
        )
    )
    rows.append(schema_rejected("invalid:pattern", sid, m))
    sid = "cat-envelope-invalid-compact-time"
    m = note(
        event(
            "turn.end",
            f"{sid}:event",
            time="20270314T092653Z",
            turn={"id": "cat-turn-3101"},
            outcome="completed",
            continuationCount=0,
            items=[],
        )
    )
    rows.append(schema_rejected("invalid:format", sid, m))
    sid = "cat-envelope-invalid-source"
    m = note(
        event(
            "user.attention",
            f"{sid}:event",
            source="ahp interop catalogue",
            attention={"kind": "idle", "message": [], "title": []},
        )
    )
    rows.append(schema_rejected("invalid:format", sid, m))
    sid = "cat-envelope-invalid-removed-type"
    m = note(
        event(
            "tool.error",
            f"{sid}:event",
            call={"id": "cat-call-3102"},
            tool=NATIVE_TOOL,
            path="native",
        )
    )
    rows.append(schema_rejected("invalid:enum", sid, m))
    sid = "cat-envelope-invalid-session-id"
    m = note(
        event(
            "session.end",
            f"{sid}:event",
            session={"id": ""},
            outcome="completed",
            reason="user quit",
        )
    )
    rows.append(schema_rejected("invalid:min-length", sid, m))
    sid = "cat-envelope-invalid-gap"
    m = note(
        event(
            "file.changed",
            f"{sid}:event",
            changes=[{"path": "README.md", "operation": "create", "agentCaused": True}],
            gaps=[{"path": "changes.0.after"}],
        )
    )
    rows.append(schema_rejected("invalid:missing", sid, m))
    sid = "cat-envelope-invalid-no-time"
    m = note(
        {
            "id": f"{sid}:event",
            "source": EVENTS,
            "type": "model.switch.after",
            "previous": MODEL,
            "current": SMALL_MODEL,
            "reason": "cheaper model",
        }
    )
    rows.append(schema_rejected("invalid:missing", sid, m))
    return rows


def refused_rows() -> list[Row]:
    """notify with a schema-invalid message: the client refuses it, nothing is sent."""
    sid = "cat-notify-refused"
    bad = note(
        event(
            "model.error",
            f"{sid}:event",
            model=MODEL,
            attempt=ATTEMPT,
            execution={"status": "executed"},
        )
    )
    first = row("refused", sid, "execution", [refused(bad)], sent=[], deliveries=[])
    sid = "cat-notify-refused-then-sent"
    bad = note(
        event(
            "turn.progress",
            f"{sid}:refused",
            turn={"id": "cat-turn-3201"},
            item={"id": "cat-msg-3201"},
            delta=message("cat-msg-3201", "assistant"),
        )
    )
    good = note(
        event(
            "tool.progress",
            f"{sid}:sent",
            call={"id": "cat-call-3201"},
            tool=SHELL_TOOL,
            path="native",
            partialOutput=message("cat-msg-3202", "tool", text_body(p("rf", 1), "Linking")),
            backgrounded=False,
        )
    )
    second = row(
        "refused",
        sid,
        "execution",
        [refused(bad), notify(good)],
        sent=[good],
        deliveries=[OK],
    )
    return [first, second]


def rows() -> list[Row]:
    out: list[Row] = []
    for type_, spec in specs().items():
        out += type_rows(type_, spec)
    out += envelope_rows()
    out += refused_rows()
    return out
