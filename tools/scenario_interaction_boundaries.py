"""Core scenario groups at `user.message.outbound` (content as messages),
`user.elicitation.result` (content as an MCP answer object) and
`workspace.change.before` (the workspace change object).

Expectations are literal values reasoned from docs/scenarios.md.
"""

from __future__ import annotations

import scenario_wire as w
from scenario_model import (
    JSON,
    STAGED,
    Group,
    Negative,
    accepted,
    expect_target,
    rejected_rows,
)

# ---------------------------------------------------------------- user.message.outbound

REPLY = [w.say("reply-1", "assistant", "Your report is ready.")]
SIGNATURE = w.say("reply-sig", "assistant", "— sent by the release bot")
SOFTENED = [w.say("reply-2", "assistant", "Your report is ready for review.")]
REPLY_WITH_FILE = [
    w.message(
        "reply-1",
        "assistant",
        w.text("reply-1-text", "Your report is attached."),
        w.attachment_metadata("reply-1-file", "application/pdf"),
    )
]

OUTBOUND_CAPS = w.capabilities(["deny", "modify", "message"], modify=w.target_caps("content"))


def outbound(messages: list[JSON] = REPLY) -> JSON:
    return w.outbound_event(messages)


def uo(
    decision: str,
    executed: bool,
    content: list[JSON],
    messages: list[str] | None = None,
    **keys: JSON,
) -> dict[str, JSON]:
    return expect_target("content", content, messages, decision=decision, executed=executed, **keys)


def outbound_message() -> Group:
    s = "user.message.outbound."
    rows = [
        accepted(
            s + "no-effects-delivers",
            outbound(),
            OUTBOUND_CAPS,
            [],
            uo("allow", True, REPLY),
            ["outbound", "no-effect"],
        ),
        accepted(
            s + "merge-appends-message",
            outbound(),
            OUTBOUND_CAPS,
            [w.merge("content", [SIGNATURE])],
            uo("allow", True, [*REPLY, SIGNATURE]),
            ["outbound", "merge"],
        ),
        accepted(
            s + "replace-whole-list",
            outbound(),
            OUTBOUND_CAPS,
            [w.replace("content", SOFTENED), w.note("Reply softened")],
            uo("allow", True, SOFTENED, ["Reply softened"]),
            ["outbound", "replace", "message"],
        ),
        accepted(
            s + "deny-keeps-edit",
            outbound(),
            OUTBOUND_CAPS,
            [w.replace("content", SOFTENED), w.deny("Outbound messages are held")],
            uo("deny", False, SOFTENED),
            ["outbound", "decision", "replace"],
        ),
        accepted(
            s + "incoming-allow-dropped-when-content-changes",
            outbound(),
            OUTBOUND_CAPS,
            [w.merge("content", [SIGNATURE])],
            uo("allow", True, [*REPLY, SIGNATURE], permission="none"),
            ["outbound", "permission", "state", "invalidation"],
            incoming=w.state("allow"),
        ),
        accepted(
            s + "merge-over-withheld-attachment",
            outbound(REPLY_WITH_FILE),
            OUTBOUND_CAPS,
            [w.merge("content", [SIGNATURE])],
            uo("allow", True, [*REPLY_WITH_FILE, SIGNATURE]),
            ["outbound", "merge", "withheld"],
        ),
    ]
    rows += rejected_rows(
        s,
        "outbound",
        outbound(),
        OUTBOUND_CAPS,
        [
            Negative(
                "object-for-list",
                "application-invalid",
                [STAGED, w.merge("content", {"text": "hello"})],
                ["content-shape"],
            ),
            Negative(
                "bare-parts-for-messages",
                "schema-invalid",
                [STAGED, w.replace("content", [w.text("p-1", "hello")])],
                ["content-shape"],
            ),
            Negative(
                "primitive-for-list",
                "schema-invalid",
                [STAGED, w.replace("content", "hello")],
                ["content-shape"],
            ),
            Negative(
                "replace-over-withheld",
                "application-invalid",
                [STAGED, w.replace("content", SOFTENED)],
                ["withheld"],
                event=outbound(REPLY_WITH_FILE),
            ),
            Negative(
                "return-not-allowed",
                "capability-invalid",
                [STAGED, w.give(SOFTENED)],
                ["return-not-allowed"],
            ),
            Negative(
                "user-role-content",
                "application-invalid",
                [STAGED, w.merge("content", [w.say("reply-u", "user", "Sure, send it.")])],
                ["content-shape", "content-schema"],
            ),
            Negative(
                "replace-unadvertised",
                "capability-invalid",
                [STAGED, w.replace("content", SOFTENED)],
                ["modify"],
                caps=w.capabilities(
                    ["deny", "modify", "message"], modify=w.target_caps("content", replace=False)
                ),
            ),
        ],
    )
    return Group(
        "outbound",
        "user.message.outbound",
        "outbound content is a list of assistant messages; deny holds delivery",
        rows,
    )


# ---------------------------------------------------------------- user.elicitation.result

ANSWER: JSON = {"slot": "09:30", "attendees": 3, "remind": True}


def form_result(action: str = "accept", content: JSON = ANSWER, selection: str = "body") -> JSON:
    """A form elicitation result whose part holds the serialized MCP ElicitResult."""
    result_value: dict[str, JSON] = {"action": action}
    if action == "accept":
        result_value["content"] = content
    part = (
        w.text("elicit-result", w.compact_json(result_value))
        if selection == "body"
        else w.text_metadata("elicit-result")
    )
    return w.elicitation_result_event(mode="form", action=action, result=part)


def url_result() -> JSON:
    """An accepted URL-mode result: consent to open a URL, no answer content."""
    return w.elicitation_result_event(
        mode="url",
        action="accept",
        result=w.text("elicit-result", w.compact_json({"action": "accept"})),
    )


ELICIT_CAPS = w.capabilities(["modify", "message"], modify=w.target_caps("content"))


def ue(content: JSON, messages: list[str] | None = None) -> dict[str, JSON]:
    return expect_target("content", content, messages, decision="allow", executed=False)


def elicitation_result() -> Group:
    s = "user.elicitation.result."
    rows = [
        accepted(
            s + "no-effects",
            form_result(),
            ELICIT_CAPS,
            [],
            ue(ANSWER),
            ["elicitation", "no-effect"],
        ),
        accepted(
            s + "merge-overwrites-answer",
            form_result(),
            ELICIT_CAPS,
            [w.merge("content", {"slot": "10:00"})],
            ue({"slot": "10:00", "attendees": 3, "remind": True}),
            ["elicitation", "merge"],
        ),
        accepted(
            s + "merge-adds-string-array",
            form_result(),
            ELICIT_CAPS,
            [w.merge("content", {"rooms": ["north", "east"]})],
            ue({"slot": "09:30", "attendees": 3, "remind": True, "rooms": ["north", "east"]}),
            ["elicitation", "merge"],
        ),
        accepted(
            s + "replace-drops-omitted-answers",
            form_result(),
            ELICIT_CAPS,
            [w.replace("content", {"slot": "11:15", "remind": False})],
            ue({"slot": "11:15", "remind": False}),
            ["elicitation", "replace"],
        ),
        accepted(
            s + "replace-then-merge",
            form_result(),
            ELICIT_CAPS,
            [
                w.replace("content", {"slot": "11:15"}),
                w.merge("content", {"attendees": 5}),
                w.note("Adjusted"),
            ],
            ue({"slot": "11:15", "attendees": 5}, ["Adjusted"]),
            ["elicitation", "ordered", "message"],
        ),
    ]
    rows += rejected_rows(
        s,
        "elicitation",
        form_result(),
        ELICIT_CAPS,
        [
            Negative(
                "list-for-object",
                "application-invalid",
                [STAGED, w.replace("content", [w.say("m-1", "user", "10:00")])],
                ["content-shape"],
            ),
            Negative(
                "nested-object-value",
                "application-invalid",
                [STAGED, w.merge("content", {"slot": {"start": "10:00"}})],
                ["content-shape"],
            ),
            Negative(
                "null-value",
                "application-invalid",
                [STAGED, w.merge("content", {"slot": None})],
                ["content-shape"],
            ),
            Negative(
                "number-array-value",
                "application-invalid",
                [STAGED, w.merge("content", {"rooms": [1, 2]})],
                ["content-shape"],
            ),
            Negative(
                "primitive-for-object",
                "schema-invalid",
                [STAGED, w.replace("content", "10:00")],
                ["content-shape"],
            ),
            Negative(
                "edit-on-decline",
                "application-invalid",
                [STAGED, w.merge("content", {})],
                ["elicitation-state"],
                event=form_result("decline"),
            ),
            Negative(
                "edit-on-cancel",
                "application-invalid",
                [w.merge("content", {"slot": "10:00"})],
                ["elicitation-state"],
                event=form_result("cancel"),
            ),
            Negative(
                "edit-on-url-mode",
                "application-invalid",
                [STAGED, w.merge("content", {"slot": "10:00"})],
                ["elicitation-state"],
                event=url_result(),
            ),
            Negative(
                "edit-on-withheld-result",
                "application-invalid",
                [STAGED, w.merge("content", {"slot": "10:00"})],
                ["elicitation-state", "withheld"],
                event=form_result(selection="metadata"),
            ),
            Negative(
                "return-not-allowed",
                "capability-invalid",
                [STAGED, w.give({"action": "decline"})],
                ["return-not-allowed"],
            ),
            Negative(
                "deny-not-allowed", "capability-invalid", [w.deny("Answer rejected")], ["decision"]
            ),
        ],
    )
    return Group(
        "elicitation",
        "user.elicitation.result",
        "content is the flat answer object of an accepted form result",
        rows,
    )


# ---------------------------------------------------------------- workspace.change.before

CHANGE: JSON = {"cwd": "/srv/app/api", "workspaceRoots": ["/srv/app"]}
PRIOR: JSON = {"cwd": "/srv/site", "workspaceRoots": ["/srv/site"]}
CWD_ONLY: JSON = {"cwd": "/srv/app"}

WORKSPACE_CAPS = w.capabilities(["deny", "modify", "message"], modify=w.target_caps("workspace"))


def switch(change: JSON = CHANGE, kind: str = "switch") -> JSON:
    return w.workspace_before_event(kind, change, PRIOR)


def wc(
    decision: str,
    executed: bool,
    workspace: JSON,
    messages: list[str] | None = None,
    **keys: JSON,
) -> dict[str, JSON]:
    return expect_target(
        "workspace", workspace, messages, decision=decision, executed=executed, **keys
    )


def workspace_change() -> Group:
    s = "workspace.change.before."
    rows = [
        accepted(
            s + "no-effects-switches",
            switch(),
            WORKSPACE_CAPS,
            [],
            wc("allow", True, CHANGE),
            ["workspace", "no-effect"],
        ),
        accepted(
            s + "merge-overwrites-cwd",
            switch(),
            WORKSPACE_CAPS,
            [w.merge("workspace", {"cwd": "/srv/app/web"})],
            wc("allow", True, {"cwd": "/srv/app/web", "workspaceRoots": ["/srv/app"]}),
            ["workspace", "merge"],
        ),
        accepted(
            s + "merge-adds-roots",
            switch(CWD_ONLY, "cwd"),
            WORKSPACE_CAPS,
            [w.merge("workspace", {"workspaceRoots": ["/srv/app", "/srv/lib"]})],
            wc("allow", True, {"cwd": "/srv/app", "workspaceRoots": ["/srv/app", "/srv/lib"]}),
            ["workspace", "merge"],
        ),
        accepted(
            s + "replace-drops-roots",
            switch(),
            WORKSPACE_CAPS,
            [w.replace("workspace", {"cwd": "/srv/app"}), w.note("Roots left unchanged")],
            wc("allow", True, {"cwd": "/srv/app"}, ["Roots left unchanged"]),
            ["workspace", "replace"],
        ),
        accepted(
            s + "incoming-allow-kept-when-change-restated",
            switch(),
            WORKSPACE_CAPS,
            [w.merge("workspace", {"cwd": "/srv/app/web"}), w.replace("workspace", CHANGE)],
            wc("allow", True, CHANGE, permission="allow"),
            ["workspace", "permission", "state", "deep-equal", "restored"],
            incoming=w.state("allow"),
        ),
        accepted(
            s + "deny-blocks-switch",
            switch(),
            WORKSPACE_CAPS,
            [w.note("Stay in this project"), w.deny("Workspace is pinned")],
            wc("deny", False, CHANGE, ["Stay in this project"]),
            ["workspace", "decision"],
        ),
    ]
    rows += rejected_rows(
        s,
        "workspace",
        switch(),
        WORKSPACE_CAPS,
        [
            Negative(
                "replace-with-empty-object",
                "schema-invalid",
                [STAGED, w.replace("workspace", {})],
                ["content-shape"],
            ),
            Negative(
                "unknown-key",
                "schema-invalid",
                [STAGED, w.merge("workspace", {"env": {"DEBUG": "1"}})],
                ["content-shape"],
            ),
            Negative(
                "cwd-null",
                "schema-invalid",
                [STAGED, w.merge("workspace", {"cwd": None})],
                ["content-shape"],
            ),
            Negative(
                "empty-cwd",
                "schema-invalid",
                [STAGED, w.merge("workspace", {"cwd": ""})],
                ["content-shape", "content-schema"],
            ),
            Negative(
                "roots-not-list",
                "schema-invalid",
                [w.merge("workspace", {"workspaceRoots": "/srv/app"})],
                ["content-shape"],
            ),
            Negative(
                "list-for-object",
                "schema-invalid",
                [STAGED, w.replace("workspace", [CHANGE])],
                ["content-shape"],
            ),
            Negative(
                "return-not-allowed",
                "capability-invalid",
                [STAGED, w.give(CHANGE)],
                ["return-not-allowed"],
            ),
            Negative(
                "merge-unadvertised",
                "capability-invalid",
                [STAGED, w.merge("workspace", {"cwd": "/srv/app/web"})],
                ["modify"],
                caps=w.capabilities(
                    ["deny", "modify", "message"], modify=w.target_caps("workspace", merge=False)
                ),
            ),
            Negative(
                "correlation-integer-id",
                "correlation-invalid",
                [],
                ["correlation"],
                response=lambda _sid: w.success(1, [STAGED]),
            ),
        ],
    )
    return Group(
        "workspace",
        "workspace.change.before",
        "the workspace change object: cwd and roots only",
        rows,
    )
