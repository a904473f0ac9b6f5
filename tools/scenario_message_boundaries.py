"""Core scenario groups at the boundaries whose target is a list of content:
`tool.after` (output), `turn.finish.before` (response), `model.request.before`
(request), `context.compact.before` (instructions) and `context.compact.after`
(summary).

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
    rejected,
    rejected_rows,
)


def continuation_flow(ops: tuple[str, ...], remaining: int, count: int) -> JSON:
    """`capabilities.flow`: a continue allowance (of 3) only where `continue` is advertised."""
    if "continue" in ops:
        return w.flow_caps(*ops, remaining=remaining, count=count, maximum=3)
    return w.flow_caps(*ops)


# ---------------------------------------------------------------- tool.after

TOOL_OUTPUT = [w.say("result-1", "tool", "10: Introduction\n11: Setup")]
REDACTED = w.say("result-r", "tool", "[output redacted]")
ANNOTATION = w.say("result-note", "tool", "Note: the guide moved to docs/v2.")
WITHHELD_OUTPUT = [w.message("result-1", "tool", w.text_metadata("result-1-text"))]
GAP_OUTPUT = [w.message("result-1", "tool", w.text_gap("result-1-text", "receiver unavailable"))]
OMITTED_OUTPUT = [
    w.message(
        "result-1",
        "tool",
        w.text("result-1-head", "10: Introduction"),
        w.text_omitted("result-1-rest"),
    )
]
READ_INPUT = {"path": "docs/guide.md"}


def after_call(items: list[JSON] = TOOL_OUTPUT) -> JSON:
    return w.tool_after_event("read_file", "file_read", READ_INPUT, items)


def after_caps(remaining: int = 3, count: int = 0, *operations: str) -> JSON:
    return w.capabilities(
        ["modify", "message", "flow", "inject"],
        modify=w.target_caps("output"),
        flow=continuation_flow(operations or ("stop", "continue"), remaining, count),
        inject=w.inject_caps("now", "next_turn"),
    )


OUTPUT_ONLY = w.capabilities(["modify", "message"], modify=w.target_caps("output"))


def ta(output: list[JSON], messages: list[str] | None = None, **keys: JSON) -> dict[str, JSON]:
    """Expected at tool.after: no permission semantics, no gated operation."""
    return expect_target("output", output, messages, decision="allow", executed=False, **keys)


def tool_after() -> Group:
    s = "tool.after."
    rows = [
        accepted(
            s + "no-effects",
            after_call(),
            OUTPUT_ONLY,
            [],
            ta(TOOL_OUTPUT),
            ["output", "no-effect"],
        ),
        accepted(
            s + "merge-appends-message",
            after_call(),
            OUTPUT_ONLY,
            [w.merge("output", [ANNOTATION])],
            ta([*TOOL_OUTPUT, ANNOTATION]),
            ["output", "merge"],
        ),
        accepted(
            s + "incoming-continue-at-tool-result",
            after_call(),
            after_caps(1),
            [],
            ta(TOOL_OUTPUT, flow="continue", instructions=[], remaining=0),
            ["output", "continuation", "flow", "state", "serial-pipeline"],
            incoming=w.state(flow="continue"),
        ),
        accepted(
            s + "merge-keeps-duplicates",
            after_call(),
            OUTPUT_ONLY,
            [w.merge("output", TOOL_OUTPUT)],
            ta([*TOOL_OUTPUT, *TOOL_OUTPUT]),
            ["output", "merge"],
        ),
        accepted(
            s + "replace-whole-list",
            after_call(),
            OUTPUT_ONLY,
            [w.note("Output redacted"), w.replace("output", [REDACTED])],
            ta([REDACTED], ["Output redacted"]),
            ["output", "replace", "message"],
        ),
        accepted(
            s + "replace-then-merge",
            after_call(),
            OUTPUT_ONLY,
            [w.replace("output", [REDACTED]), w.merge("output", [ANNOTATION])],
            ta([REDACTED, ANNOTATION]),
            ["output", "ordered"],
        ),
        accepted(
            s + "merge-over-withheld-output",
            after_call(WITHHELD_OUTPUT),
            OUTPUT_ONLY,
            [w.merge("output", [ANNOTATION])],
            ta([*WITHHELD_OUTPUT, ANNOTATION]),
            ["output", "merge", "withheld"],
        ),
        accepted(
            s + "continue-with-instruction",
            after_call(),
            after_caps(),
            [w.proceed("Summarise the file for the user")],
            ta(
                TOOL_OUTPUT,
                flow="continue",
                instructions=["Summarise the file for the user"],
                remaining=2,
            ),
            ["output", "flow", "continuation"],
        ),
        accepted(
            s + "continue-after-modify",
            after_call(),
            after_caps(),
            [w.merge("output", [ANNOTATION]), w.proceed()],
            ta([*TOOL_OUTPUT, ANNOTATION], flow="continue", instructions=[], remaining=2),
            ["output", "flow", "continuation", "merge"],
        ),
        accepted(
            s + "stop-keeps-allowance",
            after_call(),
            after_caps(),
            [w.proceed("Look again"), w.stop("Output is conclusive")],
            ta(TOOL_OUTPUT, flow="stop", instructions=["Look again"], remaining=3),
            ["output", "flow", "continuation"],
        ),
        accepted(
            s + "inject-keeps-allowance",
            after_call(),
            after_caps(),
            [w.inject("next_turn", w.say("ctx-1", "user", "The guide moved."))],
            ta(
                TOOL_OUTPUT,
                instructions=[],
                remaining=3,
                injections=[w.inject("next_turn", w.say("ctx-1", "user", "The guide moved."))],
            ),
            ["output", "continuation", "inject"],
        ),
    ]
    rows += rejected_rows(
        s,
        "output",
        after_call(),
        OUTPUT_ONLY,
        [
            Negative(
                "object-for-list",
                "schema-invalid",
                [STAGED, w.merge("output", {})],
                ["content-shape"],
            ),
            Negative(
                "bare-parts-for-messages",
                "schema-invalid",
                [STAGED, w.replace("output", [w.text("p-1", "redacted")])],
                ["content-shape"],
            ),
            Negative(
                "primitive-for-list",
                "schema-invalid",
                [STAGED, w.replace("output", "redacted")],
                ["content-shape"],
            ),
            Negative(
                "replace-over-metadata",
                "application-invalid",
                [STAGED, w.replace("output", [REDACTED])],
                ["withheld"],
                event=after_call(WITHHELD_OUTPUT),
            ),
            Negative(
                "replace-over-gap",
                "application-invalid",
                [w.replace("output", [REDACTED])],
                ["withheld"],
                event=after_call(GAP_OUTPUT),
            ),
            Negative(
                "replace-over-omitted-part",
                "application-invalid",
                [w.replace("output", [REDACTED])],
                ["withheld"],
                event=after_call(OMITTED_OUTPUT),
            ),
            Negative(
                "return-not-allowed",
                "capability-invalid",
                [STAGED, w.give([REDACTED])],
                ["return-not-allowed"],
            ),
            Negative(
                "continue-exhausted",
                "application-invalid",
                [STAGED, w.proceed("One more")],
                ["continuation"],
                caps=after_caps(0, 3),
            ),
            Negative(
                "continue-unadvertised",
                "capability-invalid",
                [STAGED, w.proceed()],
                ["continuation"],
                caps=after_caps(0, 0, "stop"),
            ),
            Negative(
                "correlation-other-id",
                "correlation-invalid",
                [],
                ["correlation"],
                response=lambda sid: w.success(sid + "-late", [STAGED]),
            ),
        ],
    )
    return Group(
        "output",
        "tool.after",
        "output edits are message lists; continuation at a tool result",
        rows,
    )


# ---------------------------------------------------------------- turn.finish.before

ANSWER = [w.say("answer-1", "assistant", "The build is green.")]
FOLLOW_UP = w.say("answer-2", "assistant", "I also updated the changelog.")


def finish(count: int = 0) -> JSON:
    return w.turn_finish_event(ANSWER, continuation_count=count)


def finish_caps(
    remaining: int, count: int = 0, ops: tuple[str, ...] = ("stop", "continue")
) -> JSON:
    return w.capabilities(
        ["modify", "flow", "message"],
        modify=w.target_caps("response"),
        flow=continuation_flow(ops, remaining, count),
    )


def tf(
    response: list[JSON] = ANSWER, messages: list[str] | None = None, **keys: JSON
) -> dict[str, JSON]:
    return expect_target("response", response, messages, decision="allow", executed=False, **keys)


def turn_finish() -> Group:
    s = "turn.finish.before."
    check = "Run the test suite again"
    logs = "Then read the deploy logs"
    rows = [
        accepted(
            s + "continue-with-instruction",
            finish(),
            finish_caps(2),
            [w.proceed(check)],
            tf(flow="continue", instructions=[check], remaining=1),
            ["continuation", "flow"],
        ),
        accepted(
            s + "continue-without-instruction",
            finish(),
            finish_caps(2),
            [w.note("Continuing"), w.proceed()],
            tf(messages=["Continuing"], flow="continue", instructions=[], remaining=1),
            ["continuation", "flow"],
        ),
        accepted(
            s + "repeated-continue-consumes-one",
            finish(),
            finish_caps(2),
            [w.proceed(check), w.proceed(logs)],
            tf(flow="continue", instructions=[check, logs], remaining=1),
            ["continuation", "flow"],
        ),
        # An incoming continue (an earlier interceptor continued) is the chain's one
        # continuation: it is the flow outcome and shares the one allowance.
        accepted(
            s + "incoming-continue-is-the-flow",
            finish(),
            finish_caps(2),
            [],
            tf(flow="continue", instructions=[], remaining=1),
            ["continuation", "flow", "state", "serial-pipeline"],
            incoming=w.state(flow="continue"),
        ),
        accepted(
            s + "incoming-continue-shares-one-allowance",
            finish(),
            finish_caps(1),
            [w.proceed(check)],
            tf(flow="continue", instructions=[check], remaining=0),
            ["continuation", "flow", "state", "serial-pipeline"],
            incoming=w.state(flow="continue"),
        ),
        accepted(
            s + "stop-wins-over-incoming-continue",
            finish(),
            finish_caps(2),
            [w.stop("Ready for review")],
            tf(flow="stop", instructions=[], remaining=2),
            ["continuation", "flow", "state", "serial-pipeline"],
            incoming=w.state(flow="continue"),
        ),
        accepted(
            s + "incoming-none-is-no-flow",
            finish(),
            finish_caps(2),
            [],
            tf(instructions=[], remaining=2),
            ["continuation", "state"],
            incoming=w.state(flow="none"),
        ),
        accepted(
            s + "repeated-continue-on-last-allowance",
            finish(2),
            finish_caps(1, 2),
            [w.proceed(check), w.proceed(), w.proceed(logs)],
            tf(flow="continue", instructions=[check, logs], remaining=0),
            ["continuation", "flow"],
        ),
        accepted(
            s + "stop-keeps-allowance",
            finish(),
            finish_caps(2),
            [w.stop("Work is complete")],
            tf(flow="stop", instructions=[], remaining=2),
            ["continuation", "flow"],
        ),
        accepted(
            s + "continue-then-stop",
            finish(),
            finish_caps(2),
            [w.proceed(check), w.stop("Work is complete")],
            tf(flow="stop", instructions=[check], remaining=2),
            ["continuation", "flow", "precedence"],
        ),
        accepted(
            s + "stop-then-continue",
            finish(),
            finish_caps(2),
            [w.stop("Work is complete"), w.proceed(check)],
            tf(flow="stop", instructions=[check], remaining=2),
            ["continuation", "flow", "precedence"],
        ),
        accepted(
            s + "incoming-stop-beats-continue",
            finish(),
            finish_caps(2),
            [w.proceed(check)],
            tf(flow="stop", instructions=[check], remaining=2),
            ["continuation", "flow", "state"],
            incoming=w.state(flow="stop"),
        ),
        accepted(
            s + "no-effects-reports-allowance",
            finish(),
            finish_caps(2),
            [],
            tf(instructions=[], remaining=2),
            ["continuation", "no-effect"],
        ),
        accepted(
            s + "exhausted-allowance-allows-stop",
            finish(3),
            finish_caps(0, 3),
            [w.stop("Out of continuations")],
            tf(flow="stop", instructions=[], remaining=0),
            ["continuation", "flow"],
        ),
        accepted(
            s + "stop-only-advertised",
            finish(),
            finish_caps(0, 0, ("stop",)),
            [w.stop("Work is complete")],
            tf(flow="stop"),
            ["flow"],
        ),
        accepted(
            s + "continue-only-advertised",
            finish(),
            finish_caps(1, 0, ("continue",)),
            [w.proceed(check)],
            tf(flow="continue", instructions=[check], remaining=0),
            ["continuation", "flow"],
        ),
        accepted(
            s + "modify-response-then-continue",
            finish(),
            finish_caps(2),
            [w.merge("response", [FOLLOW_UP]), w.proceed(check)],
            tf([*ANSWER, FOLLOW_UP], flow="continue", instructions=[check], remaining=1),
            ["continuation", "modify", "merge"],
        ),
        rejected(
            s + "exhausted-allowance-rejects-message",
            finish(3),
            finish_caps(0, 3),
            [STAGED, w.proceed(check)],
            "application-invalid",
            ["continuation", "flow"],
        ),
        rejected(
            s + "exhausted-allowance-rejects-stop-too",
            finish(3),
            finish_caps(0, 3),
            [w.stop("Work is complete"), w.proceed(check)],
            "application-invalid",
            ["continuation", "flow"],
        ),
        rejected(
            s + "stop-unadvertised",
            finish(),
            finish_caps(1, 0, ("continue",)),
            [STAGED, w.stop("Work is complete")],
            "capability-invalid",
            ["continuation", "flow"],
        ),
        rejected(
            s + "continue-unadvertised",
            finish(),
            finish_caps(0, 0, ("stop",)),
            [STAGED, w.proceed(check)],
            "capability-invalid",
            ["continuation", "flow"],
        ),
        rejected(
            s + "continue-empty-instruction",
            finish(),
            finish_caps(2),
            [STAGED, {"type": "flow", "operation": "continue", "instruction": ""}],
            "schema-invalid",
            ["continuation", "flow"],
        ),
        rejected(
            s + "response-bare-parts",
            finish(),
            finish_caps(2),
            [STAGED, w.merge("response", [w.text("p-1", "extra")])],
            "schema-invalid",
            ["content-shape"],
        ),
    ]
    return Group(
        "continuation",
        "turn.finish.before",
        "continue allowances: one per chain, incoming continue too; stop wins; none left rejects",
        rows,
    )


# ---------------------------------------------------------------- model.request.before

PROMPT = [
    w.say("sys-1", "system", "You are a careful release assistant."),
    w.say("user-1", "user", "Summarise the release notes."),
]
STYLE = w.say("dev-1", "developer", "Answer in one paragraph.")
SHORT_PROMPT = [w.say("user-2", "user", "List the fixed bugs.")]
MODEL_ANSWER = [w.say("asst-1", "assistant", "Release 2.4 fixes three bugs.")]
WITHHELD_PROMPT = [
    w.say("sys-1", "system", "You are a careful release assistant."),
    w.message(
        "user-1",
        "user",
        w.text("user-1-text", "Summarise this file:"),
        w.attachment_metadata("user-1-file", "application/pdf"),
    ),
]


# A text part whose `category` is empty: the canonical part schema needs one character.
EMPTY_CATEGORY_PART = {**w.text("asst-1-text", "Release 2.4 fixes three bugs."), "category": ""}

# Attachment media types the spec's content schema allows although they are no
# `type/subtype` token: it asks only for a non-empty string that is not a text
# or JSON type (parameters count), so a bare word and parameters are fine.
LOOSE_MEDIA_ANSWER = [
    w.message(
        "asst-1",
        "assistant",
        w.attachment("img-1", "png", "ref-9"),
        w.attachment("img-2", "image/png; q=1", "ref-10"),
    )
]


def model_call(items: list[JSON] = PROMPT) -> JSON:
    return w.model_request_event(items)


MODEL_CAPS = w.capabilities(
    ["deny", "modify", "message", "return", "flow", "inject"],
    modify=w.target_caps("request"),
    flow=w.flow_caps("stop"),
    inject=w.inject_caps("now", "next_turn"),
)


def mr(
    decision: str,
    executed: bool,
    request: list[JSON] = PROMPT,
    messages: list[str] | None = None,
    **keys: JSON,
) -> dict[str, JSON]:
    return expect_target("request", request, messages, decision=decision, executed=executed, **keys)


def model_request() -> Group:
    s = "model.request.before."
    held = w.state(candidate=w.candidate_of(MODEL_ANSWER))
    rows = [
        accepted(
            s + "no-effects-sends-request",
            model_call(),
            MODEL_CAPS,
            [],
            mr("allow", True),
            ["request", "no-effect"],
        ),
        accepted(
            s + "merge-appends-message",
            model_call(),
            MODEL_CAPS,
            [w.merge("request", [STYLE])],
            mr("allow", True, [*PROMPT, STYLE]),
            ["request", "merge"],
        ),
        accepted(
            s + "replace-then-merge",
            model_call(),
            MODEL_CAPS,
            [w.replace("request", SHORT_PROMPT), w.merge("request", [STYLE])],
            mr("allow", True, [*SHORT_PROMPT, STYLE]),
            ["request", "replace", "ordered"],
        ),
        accepted(
            s + "return-model-result",
            model_call(),
            MODEL_CAPS,
            [w.give(MODEL_ANSWER)],
            mr("allow", False, result=MODEL_ANSWER),
            ["request", "return"],
        ),
        accepted(
            s + "return-attachment-media-types-without-slash-or-with-parameters",
            model_call(),
            MODEL_CAPS,
            [w.give(LOOSE_MEDIA_ANSWER)],
            mr("allow", False, result=LOOSE_MEDIA_ANSWER),
            ["request", "return", "media-type"],
        ),
        accepted(
            s + "return-survives-later-modify",
            model_call(),
            MODEL_CAPS,
            [w.give(MODEL_ANSWER), w.merge("request", [STYLE])],
            mr("allow", False, [*PROMPT, STYLE], result=MODEL_ANSWER),
            ["request", "return", "candidate"],
        ),
        accepted(
            s + "deny-blocks-request",
            model_call(),
            MODEL_CAPS,
            [w.give(MODEL_ANSWER), w.deny("Model budget exhausted")],
            mr("deny", False),
            ["request", "decision"],
        ),
        accepted(
            s + "stop-beats-return",
            model_call(),
            MODEL_CAPS,
            [w.give(MODEL_ANSWER), w.stop("Turn ends here")],
            mr("allow", False, flow="stop"),
            ["request", "flow", "return"],
        ),
        accepted(
            s + "inject-now-with-message",
            model_call(),
            MODEL_CAPS,
            [
                w.note("Added release context"),
                w.inject("now", w.say("ctx-1", "user", "Release 2.4 shipped today.")),
            ],
            mr(
                "allow",
                True,
                messages=["Added release context"],
                injections=[w.inject("now", w.say("ctx-1", "user", "Release 2.4 shipped today."))],
            ),
            ["request", "inject"],
        ),
        accepted(
            s + "candidate-kept-without-effects",
            model_call(),
            MODEL_CAPS,
            [],
            mr("allow", False, result=MODEL_ANSWER),
            ["request", "candidate", "state"],
            incoming=held,
        ),
        accepted(
            s + "candidate-kept-on-identical-replace",
            model_call(),
            MODEL_CAPS,
            [w.replace("request", PROMPT)],
            mr("allow", False, result=MODEL_ANSWER),
            ["request", "candidate", "state", "deep-equal"],
            incoming=held,
        ),
        accepted(
            s + "candidate-dropped-on-merge",
            model_call(),
            MODEL_CAPS,
            [w.merge("request", [STYLE])],
            mr("allow", True, [*PROMPT, STYLE]),
            ["request", "candidate", "state", "invalidation"],
            incoming=held,
        ),
        accepted(
            s + "candidate-kept-when-request-restored",
            model_call(),
            MODEL_CAPS,
            [w.merge("request", [STYLE]), w.replace("request", PROMPT)],
            mr("allow", False, result=MODEL_ANSWER),
            ["request", "candidate", "state", "deep-equal", "restored"],
            incoming=held,
        ),
        accepted(
            s + "incoming-allow-dropped-when-request-changes",
            model_call(),
            MODEL_CAPS,
            [w.merge("request", [STYLE])],
            mr("allow", True, [*PROMPT, STYLE], permission="none"),
            ["request", "permission", "state", "invalidation"],
            incoming=w.state("allow"),
        ),
        accepted(
            s + "merge-over-withheld-prompt",
            model_call(WITHHELD_PROMPT),
            MODEL_CAPS,
            [w.merge("request", [STYLE])],
            mr("allow", True, [*WITHHELD_PROMPT, STYLE]),
            ["request", "merge", "withheld"],
        ),
    ]
    rows += rejected_rows(
        s,
        "request",
        model_call(),
        MODEL_CAPS,
        [
            Negative(
                "object-for-list",
                "schema-invalid",
                [STAGED, w.merge("request", {"text": "hi"})],
                ["content-shape"],
            ),
            Negative(
                "bare-parts-for-messages",
                "schema-invalid",
                [STAGED, w.merge("request", [w.text("p-1", "Answer briefly.")])],
                ["content-shape"],
            ),
            Negative(
                "primitive-for-list",
                "schema-invalid",
                [STAGED, w.replace("request", 7)],
                ["content-shape"],
            ),
            Negative(
                "replace-over-withheld",
                "application-invalid",
                [STAGED, w.replace("request", SHORT_PROMPT)],
                ["withheld"],
                event=model_call(WITHHELD_PROMPT),
            ),
            Negative(
                "return-text-parts",
                "application-invalid",
                [STAGED, w.give([w.text("p-1", "Release 2.4 fixes three bugs.")])],
                ["return-shape"],
            ),
            Negative(
                "return-object",
                "application-invalid",
                [w.give({"text": "Release 2.4 fixes three bugs."})],
                ["return-shape"],
            ),
            Negative(
                "return-part-with-empty-category",
                "application-invalid",
                [STAGED, w.give([w.message("asst-1", "assistant", EMPTY_CATEGORY_PART)])],
                ["return-shape", "content-schema"],
            ),
            Negative(
                "return-attachment-json-with-parameters",
                "application-invalid",
                [
                    STAGED,
                    w.give(
                        [
                            w.message(
                                "asst-1",
                                "assistant",
                                w.attachment("data-1", "application/json; charset=utf-8", "ref-9"),
                            )
                        ]
                    ),
                ],
                ["return-shape", "content-schema"],
            ),
            Negative(
                "return-gap-without-reason",
                "application-invalid",
                [STAGED, w.give([w.message("asst-1", "assistant", w.text_gap("asst-1-text", ""))])],
                ["return-shape", "content-schema"],
            ),
            Negative(
                "prompt-target-not-allowed",
                "capability-invalid",
                [STAGED, w.merge("prompt", [STYLE])],
                ["target"],
            ),
            Negative(
                "merge-unadvertised",
                "capability-invalid",
                [STAGED, w.merge("request", [STYLE])],
                ["modify"],
                caps=w.capabilities(
                    ["deny", "modify", "message"], modify=w.target_caps("request", merge=False)
                ),
            ),
        ],
    )
    return Group(
        "request",
        "model.request.before",
        "request edits and a supplied model result (a message list)",
        rows,
    )


# ---------------------------------------------------------------- context.compact.before

HISTORY = [
    w.say("u-1", "user", "Plan the database migration."),
    w.say("a-1", "assistant", "Step one: freeze writes."),
]
KEEP = [w.text("instr-1", "Keep every decision and open question.")]
EXTRA = w.text("instr-2", "Drop tool chatter.")
SUMMARY = [w.text("sum-1", "Migration planned: freeze writes, copy, verify.")]
WITHHELD_KEEP = [w.text("instr-1", "Keep every decision."), w.text_metadata("instr-secret")]


def compact(instructions: list[JSON] | None = KEEP) -> JSON:
    return w.compact_before_event(HISTORY, instructions)


COMPACT_CAPS = w.capabilities(
    ["deny", "modify", "message", "return", "inject"],
    modify=w.target_caps("instructions"),
    inject=w.inject_caps("next_turn"),
)


def cb(
    decision: str,
    executed: bool,
    instructions: list[JSON],
    messages: list[str] | None = None,
    **keys: JSON,
) -> dict[str, JSON]:
    return expect_target(
        "instructions", instructions, messages, decision=decision, executed=executed, **keys
    )


def compact_before() -> Group:
    s = "context.compact.before."
    rows = [
        accepted(
            s + "no-effects-compacts",
            compact(),
            COMPACT_CAPS,
            [],
            cb("allow", True, KEEP),
            ["instructions", "no-effect"],
        ),
        accepted(
            s + "absent-instructions-are-empty",
            compact(None),
            COMPACT_CAPS,
            [],
            cb("allow", True, []),
            ["instructions", "no-effect"],
        ),
        accepted(
            s + "merge-into-absent-instructions",
            compact(None),
            COMPACT_CAPS,
            [w.merge("instructions", [EXTRA])],
            cb("allow", True, [EXTRA]),
            ["instructions", "merge"],
        ),
        accepted(
            s + "merge-appends-part",
            compact(),
            COMPACT_CAPS,
            [w.merge("instructions", [EXTRA])],
            cb("allow", True, [*KEEP, EXTRA]),
            ["instructions", "merge"],
        ),
        accepted(
            s + "replace-whole-list",
            compact(),
            COMPACT_CAPS,
            [w.replace("instructions", [EXTRA])],
            cb("allow", True, [EXTRA]),
            ["instructions", "replace"],
        ),
        accepted(
            s + "return-summary",
            compact(),
            COMPACT_CAPS,
            [w.note("Summary supplied"), w.give(SUMMARY)],
            cb("allow", False, KEEP, ["Summary supplied"], result=SUMMARY),
            ["instructions", "return"],
        ),
        accepted(
            s + "return-survives-later-modify",
            compact(),
            COMPACT_CAPS,
            [w.give(SUMMARY), w.merge("instructions", [EXTRA])],
            cb("allow", False, [*KEEP, EXTRA], result=SUMMARY),
            ["instructions", "return", "candidate"],
        ),
        accepted(
            s + "deny-blocks-compaction",
            compact(),
            COMPACT_CAPS,
            [w.deny("Compaction is disabled during review")],
            cb("deny", False, KEEP),
            ["instructions", "decision"],
        ),
        accepted(
            s + "inject-next-turn",
            compact(),
            COMPACT_CAPS,
            [w.inject("next_turn", w.say("ctx-1", "user", "Context was compacted."))],
            cb(
                "allow",
                True,
                KEEP,
                injections=[
                    w.inject("next_turn", w.say("ctx-1", "user", "Context was compacted."))
                ],
            ),
            ["instructions", "inject"],
        ),
        accepted(
            s + "merge-over-withheld",
            compact(WITHHELD_KEEP),
            COMPACT_CAPS,
            [w.merge("instructions", [EXTRA])],
            cb("allow", True, [*WITHHELD_KEEP, EXTRA]),
            ["instructions", "merge", "withheld"],
        ),
    ]
    rows += rejected_rows(
        s,
        "instructions",
        compact(),
        COMPACT_CAPS,
        [
            Negative(
                "messages-for-parts",
                "schema-invalid",
                [STAGED, w.merge("instructions", HISTORY)],
                ["content-shape"],
            ),
            Negative(
                "object-for-list",
                "schema-invalid",
                [STAGED, w.merge("instructions", {"text": "x"})],
                ["content-shape"],
            ),
            Negative(
                "attachment-part",
                "schema-invalid",
                [STAGED, w.merge("instructions", [w.attachment("img-1", "image/png", "upload-1")])],
                ["content-shape"],
            ),
            Negative(
                "replace-over-withheld",
                "application-invalid",
                [STAGED, w.replace("instructions", [EXTRA])],
                ["withheld"],
                event=compact(WITHHELD_KEEP),
            ),
            Negative(
                "return-messages",
                "application-invalid",
                [STAGED, w.give(HISTORY)],
                ["return-shape"],
            ),
            Negative(
                "return-object",
                "application-invalid",
                [w.give({"summary": "short"})],
                ["return-shape"],
            ),
            Negative(
                "return-gap-without-reason",
                "application-invalid",
                [STAGED, w.give([*SUMMARY, w.text_gap("sum-2", "")])],
                ["return-shape", "content-schema"],
            ),
            Negative("flow-not-allowed", "capability-invalid", [STAGED, w.stop("halt")], ["flow"]),
        ],
    )
    return Group(
        "instructions",
        "context.compact.before",
        "compaction instructions (absent means empty) and a supplied summary",
        rows,
    )


# ---------------------------------------------------------------- context.compact.after

WITHHELD_SUMMARY = [
    w.text("sum-1", "Migration planned."),
    w.text_gap("sum-2", "summary exceeded limit"),
]
SUMMARY_NOTE = w.text("sum-note", "Reviewed by policy.")


def compacted(summary: list[JSON] = SUMMARY) -> JSON:
    return w.compact_after_event(summary, ["u-1", "a-1"])


SUMMARY_CAPS = w.capabilities(
    ["modify", "message", "inject"],
    modify=w.target_caps("summary"),
    inject=w.inject_caps("now", "next_turn"),
)


def ca(summary: list[JSON], messages: list[str] | None = None, **keys: JSON) -> dict[str, JSON]:
    return expect_target("summary", summary, messages, decision="allow", executed=False, **keys)


def compact_after() -> Group:
    s = "context.compact.after."
    rows = [
        accepted(
            s + "no-effects", compacted(), SUMMARY_CAPS, [], ca(SUMMARY), ["summary", "no-effect"]
        ),
        accepted(
            s + "merge-appends-part",
            compacted(),
            SUMMARY_CAPS,
            [w.merge("summary", [SUMMARY_NOTE])],
            ca([*SUMMARY, SUMMARY_NOTE]),
            ["summary", "merge"],
        ),
        accepted(
            s + "replace-whole-list",
            compacted(),
            SUMMARY_CAPS,
            [w.note("Summary rewritten"), w.replace("summary", [SUMMARY_NOTE])],
            ca([SUMMARY_NOTE], ["Summary rewritten"]),
            ["summary", "replace"],
        ),
        accepted(
            s + "merge-over-gap",
            compacted(WITHHELD_SUMMARY),
            SUMMARY_CAPS,
            [w.merge("summary", [SUMMARY_NOTE])],
            ca([*WITHHELD_SUMMARY, SUMMARY_NOTE]),
            ["summary", "merge", "withheld"],
        ),
        accepted(
            s + "inject-now",
            compacted(),
            SUMMARY_CAPS,
            [w.inject("now", w.say("ctx-1", "system", "History was summarised."))],
            ca(
                SUMMARY,
                injections=[w.inject("now", w.say("ctx-1", "system", "History was summarised."))],
            ),
            ["summary", "inject"],
        ),
    ]
    rows += rejected_rows(
        s,
        "summary",
        compacted(),
        SUMMARY_CAPS,
        [
            Negative(
                "messages-for-parts",
                "schema-invalid",
                [STAGED, w.replace("summary", HISTORY)],
                ["content-shape"],
            ),
            Negative(
                "primitive-for-list",
                "schema-invalid",
                [STAGED, w.replace("summary", "short")],
                ["content-shape"],
            ),
            Negative(
                "replace-over-gap",
                "application-invalid",
                [STAGED, w.replace("summary", [SUMMARY_NOTE])],
                ["withheld"],
                event=compacted(WITHHELD_SUMMARY),
            ),
            Negative(
                "return-not-allowed",
                "capability-invalid",
                [STAGED, w.give(SUMMARY)],
                ["return-not-allowed"],
            ),
            Negative("deny-not-allowed", "capability-invalid", [w.deny("no")], ["decision"]),
        ],
    )
    return Group(
        "summary",
        "context.compact.after",
        "summary edits are text-part lists; nothing is gated",
        rows,
    )
