"""Core scenario groups at `tool.before` (the tool-interception boundary).

Expectations are literal values reasoned from docs/scenarios.md; a reader
should be able to check each one by hand against the rules.
"""

from __future__ import annotations

import scenario_wire as w
from scenario_model import (
    ABSENT,
    JSON,
    NO_STATE,
    Group,
    Negative,
    accepted,
    expect_target,
    rejected,
    rejected_rows,
)

# The `read_file` call used by most rows, and the `task` call that the host
# rule (a positive integer `task`) applies to.
READ_INPUT: JSON = {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "utf-8"}
TASK_INPUT: JSON = {"task": 4, "queue": {"name": "builds", "priority": 2}, "note": "nightly"}

CACHED: JSON = {"content": "cached guide", "lines": 51}
FRESH: JSON = {"content": "fresh guide", "lines": 50}

BASE_EFFECTS = ["deny", "allow", "ask", "modify", "message", "return"]


def read_call(tool_input: JSON = READ_INPUT) -> JSON:
    return w.tool_before_event("read_file", "file_read", tool_input)


def task_call(tool_input: JSON = TASK_INPUT) -> JSON:
    return w.tool_before_event("task", "task", tool_input, call_id="call-7")


def full_caps(*, replace: bool = True, merge: bool = True) -> JSON:
    return w.capabilities(BASE_EFFECTS, modify=w.target_caps("input", replace=replace, merge=merge))


def flow_caps() -> JSON:
    return w.capabilities(
        [*BASE_EFFECTS, "flow"], modify=w.target_caps("input"), flow=w.flow_caps("stop")
    )


def inject_caps(*deliver_at: str) -> JSON:
    return w.capabilities(
        [*BASE_EFFECTS, "inject"], modify=w.target_caps("input"), inject=w.inject_caps(*deliver_at)
    )


def tb(
    decision: str,
    executed: bool,
    tool_input: JSON = READ_INPUT,
    messages: list[str] | None = None,
    *,
    permission: JSON = ABSENT,
    result: JSON = ABSENT,
    flow: JSON = ABSENT,
    injections: JSON = ABSENT,
) -> dict[str, JSON]:
    """Expected keys at tool.before; `input` and `effective.input` are the same value."""
    return expect_target(
        "input",
        tool_input,
        messages,
        decision=decision,
        executed=executed,
        input=tool_input,
        permission=permission,
        result=result,
        flow=flow,
        injections=injections,
    )


BLOCK = "Reading documentation is paused"
NOW_MSG = w.say("ctx-now", "user", "The guide was revised yesterday.")
LATER_MSG = w.say("ctx-later", "user", "Remind the user to review the guide.")


def decisions() -> Group:
    s = "tool.before.decision."
    rows = [
        accepted(
            s + "no-effects-runs-tool",
            read_call(),
            full_caps(),
            [],
            tb("allow", True),
            ["decision", "no-effect"],
        ),
        accepted(
            s + "allow-runs-tool",
            read_call(),
            full_caps(),
            [w.allow()],
            tb("allow", True),
            ["decision"],
        ),
        accepted(
            s + "deny-blocks-tool",
            read_call(),
            full_caps(),
            [w.deny(BLOCK, code="org.example.policy.read-freeze")],
            tb("deny", False),
            ["decision"],
        ),
        accepted(
            s + "ask-defers-to-user",
            read_call(),
            full_caps(),
            [w.ask()],
            tb("ask", False),
            ["decision"],
        ),
        accepted(
            s + "messages-keep-response-order",
            read_call(),
            full_caps(),
            [w.note("first"), w.allow(), w.note("Prüfung läuft — 検査中 ✓"), w.note("third")],
            tb("allow", True, messages=["first", "Prüfung läuft — 検査中 ✓", "third"]),
            ["decision", "message"],
        ),
        accepted(
            s + "empty-message-text-kept",
            read_call(),
            full_caps(),
            [w.note("")],
            tb("allow", True, messages=[""]),
            ["decision", "message"],
        ),
        accepted(
            s + "omitted-state-ask",
            read_call(),
            full_caps(),
            [w.ask()],
            tb("ask", False),
            ["decision", "state", "omitted-state"],
            incoming=NO_STATE,
        ),
        accepted(
            s + "omitted-state-return",
            read_call(),
            full_caps(),
            [w.give(FRESH)],
            tb("allow", False, result=FRESH),
            ["decision", "state", "omitted-state", "return"],
            incoming=NO_STATE,
        ),
        accepted(
            s + "unknown-envelope-fields-ignored",
            read_call(),
            full_caps(),
            [w.note("kept")],
            tb("allow", True, messages=["kept"]),
            ["decision", "extensions"],
            response=lambda sid: {
                **w.success(
                    sid,
                    [w.note("kept")],
                    traceHint={"span": "a1"},
                    extensions={"org.example.audit": {"ticket": 17}},
                ),
                "serverHint": "ignored",
            },
        ),
    ]
    return Group(
        "decision",
        "tool.before",
        "allow, deny, ask and messages; omitted state; ignored envelope fields",
        rows,
    )


def returns() -> Group:
    s = "tool.before.return."
    cases: list[tuple[str, JSON]] = [
        ("null", None),
        ("false", False),
        ("zero", 0),
        ("empty-string", ""),
        ("empty-array", []),
        ("empty-object", {}),
    ]
    rows = [
        accepted(
            s + name,
            read_call(),
            full_caps(),
            [w.give(value)],
            tb("allow", False, result=value),
            ["return"],
        )
        for name, value in cases
    ]
    rows += [
        accepted(
            s + "later-replaces-earlier",
            read_call(),
            full_caps(),
            [w.give(CACHED), w.give(FRESH)],
            tb("allow", False, result=FRESH),
            ["return"],
        ),
        accepted(
            s + "later-falsy-replaces-earlier",
            read_call(),
            full_caps(),
            [w.give(CACHED), w.give(0)],
            tb("allow", False, result=0),
            ["return"],
        ),
        accepted(
            s + "largest-exact-integer",
            read_call(),
            full_caps(),
            [w.give({"lines": 9007199254740991, "offset": -9007199254740991, "ratio": 0.5})],
            tb(
                "allow",
                False,
                result={"lines": 9007199254740991, "offset": -9007199254740991, "ratio": 0.5},
            ),
            ["return", "i-json"],
        ),
    ]
    return Group(
        "return",
        "tool.before",
        "a supplied result replaces the call; falsy values are results too",
        rows,
    )


def modifications() -> Group:
    s = "tool.before.modify."
    r = READ_INPUT
    rows = [
        accepted(
            s + "merge-adds-key",
            read_call(),
            full_caps(),
            [w.merge("input", {"followLinks": False})],
            tb(
                "allow",
                True,
                {
                    "path": "docs/guide.md",
                    "range": {"start": 10, "end": 60},
                    "encoding": "utf-8",
                    "followLinks": False,
                },
            ),
            ["modify", "merge"],
        ),
        accepted(
            s + "merge-null-is-literal",
            read_call(),
            full_caps(),
            [w.merge("input", {"encoding": None})],
            tb(
                "allow",
                True,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": None},
            ),
            ["modify", "merge", "null-literal"],
        ),
        accepted(
            s + "merge-replaces-nested-object-whole",
            read_call(),
            full_caps(),
            [w.merge("input", {"range": {"start": 20}})],
            tb(
                "allow",
                True,
                {"path": "docs/guide.md", "range": {"start": 20}, "encoding": "utf-8"},
            ),
            ["modify", "merge", "shallow"],
        ),
        accepted(
            s + "merge-empty-object-changes-nothing",
            read_call(),
            full_caps(),
            [w.merge("input", {})],
            tb("allow", True, r),
            ["modify", "merge"],
        ),
        accepted(
            s + "replace-drops-omitted-keys",
            read_call(),
            full_caps(),
            [w.replace("input", {"path": "docs/other.md"})],
            tb("allow", True, {"path": "docs/other.md"}),
            ["modify", "replace"],
        ),
        accepted(
            s + "merges-apply-in-order",
            read_call(),
            full_caps(),
            [
                w.merge("input", {"encoding": "ascii"}),
                w.merge("input", {"encoding": "utf-16", "bom": True}),
            ],
            tb(
                "allow",
                True,
                {
                    "path": "docs/guide.md",
                    "range": {"start": 10, "end": 60},
                    "encoding": "utf-16",
                    "bom": True,
                },
            ),
            ["modify", "merge", "ordered"],
        ),
        accepted(
            s + "replace-then-merge",
            read_call(),
            full_caps(),
            [
                w.replace("input", {"path": "a.md"}),
                w.merge("input", {"range": {"start": 1, "end": 5}}),
            ],
            tb("allow", True, {"path": "a.md", "range": {"start": 1, "end": 5}}),
            ["modify", "replace", "merge", "ordered"],
        ),
        accepted(
            s + "kept-when-denied",
            read_call(),
            full_caps(),
            [w.merge("input", {"path": "docs/private.md"}), w.deny(BLOCK)],
            tb(
                "deny",
                False,
                {"path": "docs/private.md", "range": {"start": 10, "end": 60}, "encoding": "utf-8"},
            ),
            ["modify", "decision"],
        ),
    ]
    return Group(
        "modify",
        "tool.before",
        "ordered replace/merge of the input; shallow merge; null is a value",
        rows,
    )


def candidates() -> Group:
    s = "tool.before.candidate."
    held = w.state(candidate=w.candidate_of(CACHED))
    rows = [
        accepted(
            s + "kept-without-effects",
            read_call(),
            full_caps(),
            [],
            tb("allow", False, result=CACHED),
            ["candidate", "state"],
            incoming=held,
        ),
        accepted(
            s + "replaced-by-return",
            read_call(),
            full_caps(),
            [w.give(FRESH)],
            tb("allow", False, result=FRESH),
            ["candidate", "state", "return"],
            incoming=held,
        ),
        accepted(
            s + "unused-on-deny",
            read_call(),
            full_caps(),
            [w.deny(BLOCK)],
            tb("deny", False),
            ["candidate", "state", "decision"],
            incoming=held,
        ),
        accepted(
            s + "dropped-when-input-changes",
            read_call(),
            full_caps(),
            [w.merge("input", {"encoding": "ascii"})],
            tb(
                "allow",
                True,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"},
            ),
            ["candidate", "state", "modify", "invalidation"],
            incoming=held,
        ),
        accepted(
            s + "kept-when-merge-restates-value",
            read_call(),
            full_caps(),
            [w.merge("input", {"encoding": "utf-8"})],
            tb("allow", False, READ_INPUT, result=CACHED),
            ["candidate", "state", "modify", "deep-equal"],
            incoming=held,
        ),
        accepted(
            s + "kept-when-replace-reorders-keys",
            read_call(),
            full_caps(),
            [
                w.replace(
                    "input",
                    {
                        "encoding": "utf-8",
                        "range": {"end": 60, "start": 10},
                        "path": "docs/guide.md",
                    },
                )
            ],
            tb("allow", False, READ_INPUT, result=CACHED),
            ["candidate", "state", "modify", "deep-equal"],
            incoming=held,
        ),
        accepted(
            s + "changed-input-then-new-return",
            read_call(),
            full_caps(),
            [w.merge("input", {"encoding": "ascii"}), w.give(FRESH)],
            tb(
                "allow",
                False,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"},
                result=FRESH,
            ),
            ["candidate", "state", "modify", "return"],
            incoming=held,
        ),
        accepted(
            s + "return-survives-later-modify",
            read_call(),
            full_caps(),
            [w.give(FRESH), w.merge("input", {"encoding": "ascii"})],
            tb(
                "allow",
                False,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"},
                result=FRESH,
            ),
            ["candidate", "modify", "return"],
        ),
        accepted(
            s + "kept-when-input-restored",
            read_call(),
            full_caps(),
            [
                w.merge("input", {"encoding": "ascii"}),
                w.replace(
                    "input",
                    {
                        "range": {"end": 60, "start": 10},
                        "encoding": "utf-8",
                        "path": "docs/guide.md",
                    },
                ),
            ],
            tb("allow", False, READ_INPUT, result=CACHED),
            ["candidate", "state", "modify", "deep-equal", "restored"],
            incoming=held,
        ),
        accepted(
            s + "kept-when-merge-undoes-merge",
            read_call(),
            full_caps(),
            [
                w.merge("input", {"range": {"start": 1, "end": 5}}),
                w.note("Range restored"),
                w.merge("input", {"range": {"start": 10, "end": 60}}),
            ],
            tb("allow", False, READ_INPUT, ["Range restored"], result=CACHED),
            ["candidate", "state", "modify", "deep-equal", "restored"],
            incoming=held,
        ),
        accepted(
            s + "null-value-is-a-result",
            read_call(),
            full_caps(),
            [],
            tb("allow", False, result=None),
            ["candidate", "state"],
            incoming=w.state(candidate=w.candidate_of(None)),
        ),
    ]
    return Group(
        "candidate",
        "tool.before",
        "a candidate survives only a final input deep-equal to the original; returns bind last",
        rows,
    )


def permissions() -> Group:
    s = "tool.before.permission."
    in_order: list[tuple[str, list[JSON], str]] = [
        ("ask-then-allow", [w.ask(), w.allow()], "ask"),
        ("allow-then-ask", [w.allow(), w.ask()], "ask"),
        ("deny-then-allow", [w.deny(BLOCK), w.allow()], "deny"),
        ("ask-then-deny", [w.ask(), w.deny(BLOCK)], "deny"),
        ("return-then-deny", [w.give(FRESH), w.deny(BLOCK)], "deny"),
    ]
    rows = [
        accepted(
            s + name,
            read_call(),
            full_caps(),
            effects,
            tb(decision, False),
            ["permission", "precedence"],
        )
        for name, effects, decision in in_order
    ]
    incoming: list[tuple[str, str, list[JSON], str, bool]] = [
        ("incoming-ask-survives-allow", "ask", [w.allow()], "ask", False),
        (
            "incoming-deny-survives-allow-and-return",
            "deny",
            [w.allow(), w.give(FRESH)],
            "deny",
            False,
        ),
        ("incoming-allow-yields-to-ask", "allow", [w.ask()], "ask", False),
    ]
    rows += [
        accepted(
            s + name,
            read_call(),
            full_caps(),
            effects,
            tb(decision, executed),
            ["permission", "state"],
            incoming=w.state(permission),
        )
        for name, permission, effects, decision, executed in incoming
    ]
    rows.append(
        accepted(
            s + "incoming-allow-keeps-return",
            read_call(),
            full_caps(),
            [w.give(FRESH)],
            tb("allow", False, result=FRESH),
            ["permission", "state", "return"],
            incoming=w.state("allow"),
        )
    )
    rows.append(
        accepted(
            s + "incoming-ask-survives-rewrite-and-allow",
            read_call(),
            full_caps(),
            [w.merge("input", {"path": "docs/public.md"}), w.allow()],
            tb(
                "ask",
                False,
                {"path": "docs/public.md", "range": {"start": 10, "end": 60}, "encoding": "utf-8"},
            ),
            ["permission", "state", "modify"],
            incoming=w.state("ask"),
        )
    )
    ascii_input = {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"}
    to_ascii = w.merge("input", {"encoding": "ascii"})
    # The pipeline permission this response leaves (`permission`), before the host
    # resolves `none`: a changed input invalidates an incoming allow, nothing else.
    invalidation: list[tuple[str, JSON, list[JSON], dict[str, JSON]]] = [
        (
            "incoming-allow-dropped-when-input-changes",
            w.state("allow"),
            [to_ascii],
            tb("allow", True, ascii_input, permission="none"),
        ),
        (
            "incoming-allow-kept-when-input-restored",
            w.state("allow"),
            [to_ascii, w.merge("input", {"encoding": "utf-8"})],
            tb("allow", True, READ_INPUT, permission="allow"),
        ),
        (
            "incoming-allow-kept-when-input-restated",
            w.state("allow"),
            [w.merge("input", {"path": "docs/guide.md"})],
            tb("allow", True, READ_INPUT, permission="allow"),
        ),
        (
            "own-allow-dropped-when-input-changes",
            w.state("none"),
            [to_ascii, w.allow()],
            tb("allow", True, ascii_input, permission="none"),
        ),
        (
            "own-allow-kept-when-input-unchanged",
            w.state("none"),
            [w.allow(), w.note("Allowed as it is")],
            tb("allow", True, READ_INPUT, ["Allowed as it is"], permission="allow"),
        ),
        (
            "incoming-ask-kept-when-input-changes",
            w.state("ask"),
            [to_ascii],
            tb("ask", False, ascii_input, permission="ask"),
        ),
        (
            "incoming-deny-kept-when-input-changes",
            w.state("deny"),
            [to_ascii],
            tb("deny", False, ascii_input, permission="deny"),
        ),
        (
            "no-state-leaves-none",
            NO_STATE,
            [],
            tb("allow", True, permission="none"),
        ),
    ]
    rows += [
        accepted(
            s + name,
            read_call(),
            full_caps(),
            effects,
            expected,
            ["permission", "state", "invalidation"]
            + (["omitted-state"] if incoming is NO_STATE else []),
            incoming=incoming,
        )
        for name, incoming, effects, expected in invalidation
    ]
    every = w.capabilities(
        [*BASE_EFFECTS, "flow", "inject"],
        modify=w.target_caps("input"),
        flow=w.flow_caps("stop"),
        inject=w.inject_caps("now", "next_turn"),
    )
    every_effects = [
        w.allow(),
        w.give(FRESH),
        w.note("Everything at once"),
        w.merge("input", {"encoding": "ascii"}),
        w.inject("now", NOW_MSG),
        w.ask(),
        w.stop("Turn ends here"),
        w.deny(BLOCK),
    ]
    rows.append(
        accepted(
            s + "every-effect-type-at-once",
            read_call(),
            every,
            every_effects,
            tb(
                "deny",
                False,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"},
                ["Everything at once"],
                flow="stop",
                injections=[w.inject("now", NOW_MSG)],
            ),
            ["permission", "precedence", "atomic"],
        )
    )
    return Group(
        "permission",
        "tool.before",
        "deny > ask > allow, also over incoming state; a changed input drops an incoming allow",
        rows,
    )


def flows() -> Group:
    s = "tool.before.flow."
    rows = [
        accepted(
            s + "stop-prevents-call",
            read_call(),
            flow_caps(),
            [w.stop("Turn ends here")],
            tb("allow", False, flow="stop"),
            ["flow"],
        ),
        accepted(
            s + "stop-beats-return",
            read_call(),
            flow_caps(),
            [w.give(FRESH), w.stop("Turn ends here")],
            tb("allow", False, flow="stop"),
            ["flow", "return"],
        ),
        accepted(
            s + "stop-keeps-modify-and-message",
            read_call(),
            flow_caps(),
            [
                w.merge("input", {"encoding": "ascii"}),
                w.stop("Turn ends here"),
                w.note("Stopping after this call"),
            ],
            tb(
                "allow",
                False,
                {"path": "docs/guide.md", "range": {"start": 10, "end": 60}, "encoding": "ascii"},
                ["Stopping after this call"],
                flow="stop",
            ),
            ["flow", "modify", "message"],
        ),
        accepted(
            s + "incoming-stop-no-effects",
            read_call(),
            flow_caps(),
            [],
            tb("allow", False, flow="stop"),
            ["flow", "state", "serial-pipeline"],
            incoming=w.state(flow="stop"),
        ),
        accepted(
            s + "incoming-stop-with-return",
            read_call(),
            flow_caps(),
            [w.give(FRESH)],
            tb("allow", False, flow="stop"),
            ["flow", "state", "serial-pipeline", "return"],
            incoming=w.state(flow="stop"),
        ),
        accepted(
            s + "incoming-stop-with-candidate",
            read_call(),
            flow_caps(),
            [],
            tb("allow", False, flow="stop"),
            ["flow", "state", "candidate"],
            incoming=w.state(candidate=w.candidate_of(CACHED), flow="stop"),
        ),
    ]
    return Group(
        "flow",
        "tool.before",
        "stop prevents the call and the supplied result; incoming stop persists",
        rows,
    )


def injections() -> Group:
    s = "tool.before.inject."
    both = inject_caps("now", "next_turn")
    two = w.inject("next_turn", w.say("ctx-sys", "system", "Prefer the v2 guide."), LATER_MSG)
    rows = [
        accepted(
            s + "now",
            read_call(),
            both,
            [w.inject("now", NOW_MSG)],
            tb("allow", True, injections=[w.inject("now", NOW_MSG)]),
            ["inject"],
        ),
        accepted(
            s + "in-order-with-message",
            read_call(),
            both,
            [w.inject("next_turn", LATER_MSG), w.note("Context added"), w.inject("now", NOW_MSG)],
            tb(
                "allow",
                True,
                messages=["Context added"],
                injections=[w.inject("next_turn", LATER_MSG), w.inject("now", NOW_MSG)],
            ),
            ["inject", "message"],
        ),
        accepted(
            s + "published-on-deny",
            read_call(),
            both,
            [w.inject("now", NOW_MSG), w.deny(BLOCK)],
            tb("deny", False, injections=[w.inject("now", NOW_MSG)]),
            ["inject", "decision"],
        ),
        accepted(
            s + "only-next-turn-advertised",
            read_call(),
            inject_caps("next_turn"),
            [two],
            tb("allow", True, injections=[two]),
            ["inject", "delivery"],
        ),
    ]
    return Group(
        "inject",
        "tool.before",
        "accepted injections are reported whole, in order, also on deny",
        rows,
    )


def host_rule() -> Group:
    s = "tool.before.host-rule."
    rows = [
        accepted(
            s + "merge-positive-task",
            task_call(),
            full_caps(),
            [w.merge("input", {"task": 9})],
            tb(
                "allow",
                True,
                {"task": 9, "queue": {"name": "builds", "priority": 2}, "note": "nightly"},
            ),
            ["host-rule", "modify"],
        ),
        accepted(
            s + "replace-keeps-valid-task",
            task_call(),
            full_caps(),
            [w.replace("input", {"task": 1})],
            tb("allow", True, {"task": 1}),
            ["host-rule", "modify"],
        ),
        accepted(
            s + "only-final-staged-value-counts",
            task_call(),
            full_caps(),
            [w.merge("input", {"task": 0}), w.merge("input", {"task": 5})],
            tb(
                "allow",
                True,
                {"task": 5, "queue": {"name": "builds", "priority": 2}, "note": "nightly"},
            ),
            # contract v1 hosts check after each mutation (docs/scenarios.md, "Rows of our
            # contract only")
            ["host-rule", "modify", "ordered", "ext:settled-host-rule"],
        ),
    ]
    bad: list[tuple[str, JSON]] = [
        ("zero", 0),
        ("fraction", 2.5),
        ("boolean", True),
        ("string", "4"),
    ]
    for name, value in bad:
        staged = {"task": value, "queue": {"name": "builds", "priority": 2}, "note": "nightly"}
        rows.append(
            rejected(
                s + f"task-{name}-rejects-staged-message",
                task_call(),
                full_caps(),
                [w.note("Queued for the build farm"), w.merge("input", {"task": value})],
                "application-invalid",
                ["host-rule", "modify"],
                host_expected=tb("allow", False, staged, ["Queued for the build farm"]),
            )
        )
    rows.append(
        rejected(
            s + "task-missing-after-replace",
            task_call(),
            full_caps(),
            [w.replace("input", {"queue": {"name": "builds", "priority": 2}})],
            "application-invalid",
            ["host-rule", "modify", "replace"],
            host_expected=tb("allow", False, {"queue": {"name": "builds", "priority": 2}}),
        )
    )
    rows.append(
        rejected(
            s + "later-invalid-rolls-back-earlier",
            task_call(),
            full_caps(),
            [w.merge("input", {"task": 6}), w.note("Rescheduled"), w.merge("input", {"task": -1})],
            "application-invalid",
            ["host-rule", "modify", "ordered"],
            incoming=w.state("allow", w.candidate_of({"queued": True})),
            host_expected=tb(
                "allow",
                False,
                {"task": -1, "queue": {"name": "builds", "priority": 2}, "note": "nightly"},
                ["Rescheduled"],
            ),
        )
    )
    return Group(
        "host-rule",
        "tool.before",
        "the synthetic host's `task` rule rejects the whole response",
        rows,
    )


def capability_negatives() -> Group:
    s = "tool.before.capability."
    output_msg = w.say("out-1", "tool", "replaced output")
    cases = [
        Negative(
            "deny-unadvertised",
            "capability-invalid",
            [w.deny(BLOCK)],
            caps=w.capabilities(["allow", "ask", "message"]),
        ),
        Negative(
            "ask-unadvertised",
            "capability-invalid",
            [w.note("first"), w.ask()],
            caps=w.capabilities(["deny", "allow", "message"]),
        ),
        Negative(
            "return-unadvertised",
            "capability-invalid",
            [w.give(FRESH)],
            caps=w.capabilities(["deny", "allow", "ask", "message"]),
        ),
        Negative(
            "modify-unadvertised",
            "capability-invalid",
            [w.note("staged"), w.merge("input", {"encoding": "ascii"})],
            caps=w.capabilities(["deny", "allow", "message"]),
        ),
        Negative(
            "merge-flag-false",
            "capability-invalid",
            [w.note("staged"), w.merge("input", {"encoding": "ascii"})],
            caps=full_caps(merge=False),
        ),
        Negative(
            "target-unadvertised",
            "capability-invalid",
            [w.note("staged"), w.replace("output", [output_msg])],
        ),
        Negative(
            "flow-unadvertised", "capability-invalid", [w.note("staged"), w.stop("Turn ends here")]
        ),
        Negative("inject-unadvertised", "capability-invalid", [w.inject("now", NOW_MSG)]),
        Negative(
            "inject-now-unadvertised",
            "capability-invalid",
            [w.inject("next_turn", LATER_MSG), w.inject("now", NOW_MSG)],
            caps=inject_caps("next_turn"),
        ),
        Negative(
            "inject-next-turn-unadvertised",
            "capability-invalid",
            [w.inject("next_turn", LATER_MSG)],
            caps=inject_caps("now"),
        ),
        Negative(
            "valid-deny-then-unadvertised-ask",
            "capability-invalid",
            [w.deny(BLOCK), w.ask()],
            caps=w.capabilities(["deny", "message"]),
        ),
    ]
    rows = rejected_rows(s, "capability", read_call(), full_caps(), cases)
    return Group(
        "capability",
        "tool.before",
        "an effect, target, operation or delivery the request did not advertise",
        rows,
    )
