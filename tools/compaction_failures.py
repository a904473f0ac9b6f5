"""Operational failures in the compaction set, observe-only after boundaries, negatives.

A failing call is in `called` and `failures`; `fail-open` continues with the
next subscription, `fail-closed` ends the chain: at the before boundary with
the original instructions and nothing compacted, at the after boundary with
the summary it started with (COMPACTION.md step 4). A failed reply changes
neither the instructions nor the state carried forward (it is rejected
whole, so its earlier members leave nothing either). In every failure row
the other intercept subscriptions have the failing one's opposite policy,
so only the failing subscription's policy explains the outcome; in a
timeout row the failing call's deadline is 250 ms and everyone else's 10 s.
"""

from __future__ import annotations

from compaction_common import acall, aseen, bcall, bseen, context, ids
from compaction_wire import (
    BEFORE_CAPABILITIES,
    EXECUTED,
    FAST,
    GENERATED,
    JSON,
    NO_STATE,
    NOT_RUN,
    OBSERVE_ONLY_CAPABILITIES,
    SLOW,
    SOURCE,
    SUPPLIED,
    TIME,
    ask,
    boundary,
    candidate,
    expected,
    fault,
    give,
    modify,
    negative,
    note,
    raw_reply,
    removed,
    reply,
    run,
    state,
    sub,
    supplied_by,
    text,
)


def rows() -> list[JSON]:
    return [
        rejected_reply_keeps_supplied(),
        rejected_summary_edit_rolls_back(),
        after_fail_closed_keeps_start(),
        before_fail_closed_nothing_compacted(),
        before_fail_open_compacts(),
        after_fail_open_continues(),
        before_summary_edit_fail_open(),
        before_summary_edit_fail_closed(),
        after_instructions_edit_fail_open(),
        after_instructions_edit_fail_closed(),
        before_rollback_after_message(),
        after_rollback_keeps_edit(),
        rejected_edit_keeps_candidate(),
        after_fail_closed_skips_rest(),
        before_merge_unadvertised(),
        after_merge_unadvertised(),
        after_summary_number(),
        after_return_unadvertised(),
        observe_only_effect_fails(),
        observe_only_empty_replies(),
        server_error_fail_open(),
        malformed_fail_open(),
        timeout_fail_open(),
        server_error_after_return_fail_closed(),
        malformed_fail_closed(),
        timeout_after_fail_closed(),
        deny_without_reason(),
        deny_empty_reason(),
        effects_not_a_list(),
        ask_unadvertised_fail_open(),
        ask_unadvertised_fail_closed(),
    ]


def b(rid: str) -> str:
    return f"{rid}:before"


def a(rid: str) -> str:
    return f"{rid}:after"


# -------------------------------------------------- upstream wire: atomic, closed, open


def rejected_reply_keeps_supplied() -> JSON:
    # A reply with an unadvertised member (a summary edit at the before
    # boundary) is rejected whole: its instructions edit and message leave
    # nothing, the candidate bound before it is still carried and used.
    rid = "cmp-rejected-reply-keeps-supplied"
    ins0 = [text(f"{rid}:ins", "Mention the rollback.")]
    given = [text(f"{rid}:given", "Rollback script tested on staging.")]
    edited = [text(f"{rid}:given", "Rollback script tested.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[
            sub(rid, "store", policy="fail-closed"),
            sub(rid, "broken"),
            sub(rid, "check", policy="fail-closed"),
        ],
        after=[sub(rid, "trim"), sub(rid, "record", "observe")],
        before_replies=[
            reply(b(rid), give(given)),
            reply(
                b(rid),
                modify("instructions", [text(f"{rid}:ins", "Forget the rollback.")]),
                note("this reply must not count"),
                modify("summary", [text(f"{rid}:x", "A summary edit before compaction.")]),
            ),
            reply(b(rid)),
        ],
        after_replies=[reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store", "broken", "check"), ids(rid, "broken"), []),
            after=boundary(ids(rid, "trim"), [], ids(rid, "record")),
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(given))),
            bcall(rid, 2, ins0, state("none", candidate(given))),
        ],
        after_calls=[acall(rid, given, gone, SUPPLIED)],
        observations=[aseen(rid, edited, gone, SUPPLIED)],
    )


def rejected_summary_edit_rolls_back() -> JSON:
    # An after reply with an unadvertised member (an instructions edit) is
    # rejected whole under fail-open: the earlier edit stands, the next call
    # carries it.
    rid = "cmp-rejected-summary-edit-rolls-back"
    ins0 = [text(f"{rid}:ins", "Name the owners.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Name the owners.")]
    edited = [text(f"{rid}:summary", "Owners: Marek and Priya.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[
            sub(rid, "first", policy="fail-closed"),
            sub(rid, "broken"),
            sub(rid, "check", policy="fail-closed"),
        ],
        before_replies=[reply(b(rid))],
        after_replies=[
            reply(a(rid), modify("summary", edited)),
            reply(
                a(rid),
                modify("summary", [text(f"{rid}:summary", "Owners unknown.")]),
                note("this reply must not count"),
                modify("instructions", [text(f"{rid}:ins", "Name nobody.")]),
            ),
            reply(a(rid)),
        ],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "first", "broken", "check"), ids(rid, "broken"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[
            acall(rid, made, gone, EXECUTED),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
        ],
        observations=[],
    )


def after_fail_closed_keeps_start() -> JSON:
    # Step 4: a fail-closed failure ends the after chain (the uncalled intercept
    # is notified with the summary it started with) and prevents the application.
    rid = "cmp-after-fail-closed-keeps-start"
    ins0 = [text(f"{rid}:ins", "Keep the dates.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the dates.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass")],
        after=[sub(rid, "broken", policy="fail-closed"), sub(rid, "later")],
        before_replies=[reply(b(rid))],
        after_replies=[
            reply(
                a(rid),
                modify("summary", [text(f"{rid}:summary", "No dates.")]),
                modify("instructions", [text(f"{rid}:ins", "Drop the dates.")]),
            )
        ],
        outcome=expected(
            applied=False,  # a fail-closed failure at the after boundary prevents it
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "broken"), ids(rid, "broken"), ids(rid, "later")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[aseen(rid, made, gone, EXECUTED)],
    )


def before_fail_closed_nothing_compacted() -> JSON:
    # Step 2: a fail-closed failure at the before boundary: nothing is
    # compacted, no after boundary; the uncalled intercept is notified.
    rid = "cmp-before-fail-closed-nothing-compacted"
    ins0 = [text(f"{rid}:ins", "Keep the owners.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "broken", policy="fail-closed"), sub(rid, "later")],
        after=[sub(rid, "record", "observe")],
        before_replies=[reply(b(rid), modify("summary", [text(f"{rid}:x", "Owners: nobody.")]))],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "broken"), ids(rid, "broken"), ids(rid, "later")),
            after=NOT_RUN,
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


def before_fail_open_compacts() -> JSON:
    # A fail-open failure at the before boundary: the chain goes on, the
    # compactor runs with the original instructions.
    rid = "cmp-before-fail-open-compacts"
    ins0 = [text(f"{rid}:ins", "Keep the slots.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the slots.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "broken"), sub(rid, "next", policy="fail-closed")],
        after=[sub(rid, "last", policy="fail-closed")],
        before_replies=[
            reply(b(rid), modify("summary", [text(f"{rid}:x", "Slots: none.")])),
            reply(b(rid)),
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "broken", "next"), ids(rid, "broken"), []),
            after=boundary(ids(rid, "last"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def after_fail_open_continues() -> JSON:
    # A fail-open failure at the after boundary: the next call carries the
    # summary the failed one received and, no reply having been accepted,
    # the request's own state (none).
    rid = "cmp-after-fail-open-continues"
    ins0 = [text(f"{rid}:ins", "Say who signs off.")]
    made = [text(f"{rid}:summary", "Summary of 4 items. Instructions: Say who signs off.")]
    edited = [text(f"{rid}:summary", "Priya signs off.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3", f"{rid}:m4")
    return run(
        rid,
        request=bcall(rid, 4, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "broken"), sub(rid, "next", policy="fail-closed")],
        before_replies=[reply(b(rid))],
        after_replies=[
            reply(a(rid), modify("instructions", [text(f"{rid}:ins", "Say nothing.")])),
            reply(a(rid), modify("summary", edited)),
        ],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "broken", "next"), ids(rid, "broken"), []),
        ),
        before_calls=[bcall(rid, 4, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED), acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


# ---------------------------------------------------------------- wrong targets


def before_summary_edit_fail_open() -> JSON:
    # The before boundary advertises only `instructions`: a summary edit is
    # unadvertised (an operational failure); fail-open goes on.
    rid = "cmp-before-summary-edit-fail-open"
    ins0 = [text(f"{rid}:ins", "Mention Thursday.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Mention Thursday.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "wrong"), sub(rid, "audit", "observe")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[reply(b(rid), modify("summary", [text(f"{rid}:x", "Thursday only.")]))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "wrong"), ids(rid, "wrong"), ids(rid, "audit")),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[bseen(rid, 2, ins0)],
    )


def before_summary_edit_fail_closed() -> JSON:
    # The same unadvertised summary edit under fail-closed: nothing compacted.
    rid = "cmp-before-summary-edit-fail-closed"
    ins0 = [text(f"{rid}:ins", "Mention Tuesday.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "wrong", policy="fail-closed"), sub(rid, "audit", "observe")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), modify("summary", [text(f"{rid}:x", "Tuesday only.")]))],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "wrong"), ids(rid, "wrong"), ids(rid, "audit")),
            after=NOT_RUN,
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


def after_instructions_edit_fail_open() -> JSON:
    # CAPS_AFTER advertises only `summary`: an instructions edit at the after
    # boundary is unadvertised; fail-open keeps the summary.
    rid = "cmp-after-instructions-edit-fail-open"
    ins0 = [text(f"{rid}:ins", "One line.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: One line.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "wrong"), sub(rid, "audit", "observe")],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("instructions", [text(f"{rid}:ins", "Two lines.")]))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "wrong"), ids(rid, "wrong"), ids(rid, "audit")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[aseen(rid, made, gone, EXECUTED)],
    )


def after_instructions_edit_fail_closed() -> JSON:
    # The same under fail-closed: the after chain ends with the summary it
    # started with; the uncalled intercept and the observer are notified.
    rid = "cmp-after-instructions-edit-fail-closed"
    ins0 = [text(f"{rid}:ins", "Three lines.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Three lines.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass")],
        after=[
            sub(rid, "wrong", policy="fail-closed"),
            sub(rid, "later"),
            sub(rid, "audit", "observe"),
        ],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("instructions", [text(f"{rid}:ins", "Four lines.")]))],
        outcome=expected(
            applied=False,  # a fail-closed failure at the after boundary prevents it
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "wrong"), ids(rid, "wrong"), ids(rid, "later", "audit")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[aseen(rid, made, gone, EXECUTED), aseen(rid, made, gone, EXECUTED)],
    )


# ---------------------------------------------------------------- compound rollbacks


def before_rollback_after_message() -> JSON:
    # A message-only reply is accepted (no change); the next reply mixes an
    # advertised edit, a message and an unadvertised summary edit and is
    # rejected whole: the third call carries the original instructions.
    rid = "cmp-before-rollback-after-message"
    ins0 = [text(f"{rid}:ins", "Keep the audit trail.")]
    made = [text(f"{rid}:summary", "Summary of 3 items. Instructions: Keep the audit trail.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3")
    return run(
        rid,
        request=bcall(rid, 3, ins0, NO_STATE),
        before=[
            sub(rid, "notify", policy="fail-closed"),
            sub(rid, "broken"),
            sub(rid, "check", policy="fail-closed"),
        ],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            reply(b(rid), note("the audit trail stays")),
            reply(
                b(rid),
                modify("instructions", [text(f"{rid}:ins", "Drop the audit trail.")]),
                note("this reply must not count"),
                modify("summary", [text(f"{rid}:x", "No audit trail.")]),
            ),
            reply(b(rid)),
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "notify", "broken", "check"), ids(rid, "broken"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[
            bcall(rid, 3, ins0, NO_STATE),
            bcall(rid, 3, ins0, NO_STATE),
            bcall(rid, 3, ins0, NO_STATE),
        ],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def after_rollback_keeps_edit() -> JSON:
    # An after reply mixing a summary edit, a message and a return (never
    # advertised after compaction) is rejected whole; the earlier edit stands.
    rid = "cmp-after-rollback-keeps-edit"
    ins0 = [text(f"{rid}:ins", "Mention both slots.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Mention both slots.")]
    edited = [text(f"{rid}:summary", "Both slots are booked.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[
            sub(rid, "first", policy="fail-closed"),
            sub(rid, "broken"),
            sub(rid, "check", policy="fail-closed"),
        ],
        before_replies=[reply(b(rid))],
        after_replies=[
            reply(a(rid), modify("summary", edited)),
            reply(
                a(rid),
                modify("summary", [text(f"{rid}:summary", "No slot is booked.")]),
                note("this reply must not count"),
                give([text(f"{rid}:x", "A late supplied summary.")]),
            ),
            reply(a(rid)),
        ],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "first", "broken", "check"), ids(rid, "broken"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[
            acall(rid, made, gone, EXECUTED),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
        ],
        observations=[],
    )


def rejected_edit_keeps_candidate() -> JSON:
    # A rejected reply that would have changed the instructions (and so
    # dropped the candidate) changes nothing: the candidate is used.
    rid = "cmp-rejected-edit-keeps-candidate"
    ins0 = [text(f"{rid}:ins", "Two sentences.")]
    given = [text(f"{rid}:given", "The ledger moves twice. Priya signs off.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3", f"{rid}:m4")
    return run(
        rid,
        request=bcall(rid, 4, ins0, NO_STATE),
        before=[sub(rid, "store", policy="fail-closed"), sub(rid, "broken")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            reply(b(rid), give(given)),
            reply(
                b(rid),
                modify("instructions", [text(f"{rid}:ins", "Ten sentences.")]),
                modify("summary", [text(f"{rid}:x", "Ten sentences follow.")]),
            ),
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=given,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store", "broken"), ids(rid, "broken"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[
            bcall(rid, 4, ins0, NO_STATE),
            bcall(rid, 4, ins0, state("none", candidate(given))),
        ],
        after_calls=[acall(rid, given, gone, SUPPLIED)],
        observations=[],
    )


def after_fail_closed_skips_rest() -> JSON:
    # A fail-closed failure at the after boundary of a supplied summary: the
    # chain ends with the supplied summary it started with; provenance and
    # execution stay those of the supply; the uncalled intercept is notified.
    rid = "cmp-after-fail-closed-skips-rest"
    ins0 = [text(f"{rid}:ins", "Use the cached text.")]
    given = [text(f"{rid}:given", "Cached: two slots, one sign-off.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "store", policy="fail-closed")],
        after=[sub(rid, "broken", policy="fail-closed"), sub(rid, "rest")],
        before_replies=[reply(b(rid), give(given))],
        after_replies=[
            reply(
                a(rid),
                modify("summary", [text(f"{rid}:given", "Cached: nothing.")]),
                modify("instructions", [text(f"{rid}:ins", "Ignore the cache.")]),
            )
        ],
        outcome=expected(
            applied=False,  # a fail-closed failure at the after boundary prevents it
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "store"), [], []),
            after=boundary(ids(rid, "broken"), ids(rid, "broken"), ids(rid, "rest")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, given, gone, SUPPLIED)],
        observations=[aseen(rid, given, gone, SUPPLIED)],
    )


# -------------------------------------------------- unadvertised operations, bad values


def before_merge_unadvertised() -> JSON:
    # The before boundary advertises `instructions` with merge false: a
    # merge (of a valid text-part list) is unadvertised.
    rid = "cmp-before-merge-unadvertised"
    ins0 = [text(f"{rid}:ins", "Keep the totals.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the totals.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "merger")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            reply(
                b(rid),
                modify("instructions", [text(f"{rid}:more", "And the dates.")], "merge"),
            )
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "merger"), ids(rid, "merger"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def after_merge_unadvertised() -> JSON:
    # CAPS_AFTER has merge false: an after merge is unadvertised.
    rid = "cmp-after-merge-unadvertised"
    ins0 = [text(f"{rid}:ins", "Keep the dates.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the dates.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "merger")],
        before_replies=[reply(b(rid))],
        after_replies=[
            reply(a(rid), modify("summary", [text(f"{rid}:more", "Also the owners.")], "merge"))
        ],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "merger"), ids(rid, "merger"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def after_summary_number() -> JSON:
    # A summary edit whose value is a number fails the canonical schema of
    # the slot (text parts): the reply is rejected, fail-open keeps the summary.
    rid = "cmp-after-summary-number"
    ins0 = [text(f"{rid}:ins", "Count the slots.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Count the slots.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "counter")],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("summary", 2))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "counter"), ids(rid, "counter"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def after_return_unadvertised() -> JSON:
    # A return at the after boundary (never advertised there): a failure.
    rid = "cmp-after-return-unadvertised"
    ins0 = [text(f"{rid}:ins", "Plain words.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Plain words.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "late")],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), give([text(f"{rid}:x", "A summary after the fact.")]))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "late"), ids(rid, "late"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


# ---------------------------------------------------------------- observe-only after boundaries


def observe_only_effect_fails() -> JSON:
    # afterObserveOnly: the after boundary advertises {"effects": []}; a
    # summary edit is unadvertised, an operational failure; fail-closed ends
    # the chain with the summary it started with.
    rid = "cmp-observe-only-effect-fails"
    ins0 = [text(f"{rid}:ins", "Keep Marek.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep Marek.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass")],
        after=[
            sub(rid, "editor", policy="fail-closed"),
            sub(rid, "later"),
            sub(rid, "audit", "observe"),
        ],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("summary", [text(f"{rid}:summary", "Drop Marek.")]))],
        outcome=expected(
            applied=False,  # a fail-closed failure at the after boundary prevents it
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "editor"), ids(rid, "editor"), ids(rid, "later", "audit")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[
            acall(rid, made, gone, EXECUTED, capabilities=OBSERVE_ONLY_CAPABILITIES),
        ],
        observations=[aseen(rid, made, gone, EXECUTED), aseen(rid, made, gone, EXECUTED)],
        observe_only=True,
    )


def observe_only_empty_replies() -> JSON:
    # afterObserveOnly with replies without effects: accepted, nothing
    # changes; the second call carries the state the first left.
    rid = "cmp-observe-only-empty-replies"
    ins0 = [text(f"{rid}:ins", "Keep Priya.")]
    given = [text(f"{rid}:given", "Priya signs off after the dry run.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3")
    return run(
        rid,
        request=bcall(rid, 3, ins0, NO_STATE),
        before=[sub(rid, "store")],
        after=[sub(rid, "first", policy="fail-closed"), sub(rid, "second", policy="fail-closed")],
        before_replies=[reply(b(rid), give(given))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=given,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store"), [], []),
            after=boundary(ids(rid, "first", "second"), [], []),
        ),
        before_calls=[bcall(rid, 3, ins0, NO_STATE)],
        after_calls=[
            acall(rid, given, gone, SUPPLIED, capabilities=OBSERVE_ONLY_CAPABILITIES),
            acall(rid, given, gone, SUPPLIED, NO_STATE, capabilities=OBSERVE_ONLY_CAPABILITIES),
        ],
        observations=[],
        observe_only=True,
    )


# ---------------------------------------------------------------- scripted faults


def server_error_fail_open() -> JSON:
    # LIFECYCLE.md [ext]: a JSON-RPC error (HTTP 500) is an operational
    # failure; fail-open goes on with the original instructions.
    rid = "cmp-server-error-fail-open"
    ins0 = [text(f"{rid}:ins", "Keep the order.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the order.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "broken"), sub(rid, "next", policy="fail-closed")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[fault("server-error"), reply(b(rid))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "broken", "next"), ids(rid, "broken"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def malformed_fail_open() -> JSON:
    # A body that is not JSON at the after boundary; fail-open goes on with
    # the same summary.
    rid = "cmp-malformed-fail-open"
    ins0 = [text(f"{rid}:ins", "Keep the names.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the names.")]
    edited = [text(f"{rid}:summary", "Marek and Priya.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", policy="fail-closed")],
        after=[sub(rid, "broken"), sub(rid, "next", policy="fail-closed")],
        before_replies=[reply(b(rid))],
        after_replies=[fault("malformed"), reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "broken", "next"), ids(rid, "broken"), []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED), acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def timeout_fail_open() -> JSON:
    # A call past its own 250 ms deadline (the server never answers) is a
    # failure; fail-open goes on; the next call is answered.
    rid = "cmp-timeout-fail-open"
    ins0 = [text(f"{rid}:ins", "Keep the slot times.")]
    ins1 = [text(f"{rid}:ins", "Keep the slot times in UTC.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the slot times in UTC.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[
            sub(rid, "slow", timeout=FAST),
            sub(rid, "next", policy="fail-closed", timeout=SLOW),
        ],
        after=[sub(rid, "look", policy="fail-closed", timeout=SLOW)],
        before_replies=[fault("timeout"), reply(b(rid), modify("instructions", ins1))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "slow", "next"), ids(rid, "slow"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def server_error_after_return_fail_closed() -> JSON:
    # A candidate is bound, then a fail-closed call fails (a JSON-RPC
    # error): nothing is compacted, the candidate is not used.
    rid = "cmp-server-error-after-return-fail-closed"
    ins0 = [text(f"{rid}:ins", "Use what is stored.")]
    given = [text(f"{rid}:given", "Stored: two slots.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "store"), sub(rid, "broken", policy="fail-closed"), sub(rid, "later")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), give(given)), fault("server-error")],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "store", "broken"), ids(rid, "broken"), ids(rid, "later")),
            after=NOT_RUN,
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(given))),
        ],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


def malformed_fail_closed() -> JSON:
    # A non-JSON body under fail-closed at the before boundary, after an
    # accepted edit: the chain ends with the original instructions.
    rid = "cmp-malformed-fail-closed"
    ins0 = [text(f"{rid}:ins", "Keep the rollback.")]
    ins1 = [text(f"{rid}:ins", "Keep the rollback and the owner.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[
            sub(rid, "edit"),
            sub(rid, "broken", policy="fail-closed"),
            sub(rid, "audit", "observe"),
        ],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), modify("instructions", ins1)), fault("malformed")],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "edit", "broken"), ids(rid, "broken"), ids(rid, "audit")),
            after=NOT_RUN,
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins1, NO_STATE)],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


def timeout_after_fail_closed() -> JSON:
    # An after call past its 250 ms deadline under fail-closed, after an
    # accepted edit: the after chain ends with the summary it started with.
    rid = "cmp-timeout-after-fail-closed"
    ins0 = [text(f"{rid}:ins", "Keep the dry run.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Keep the dry run.")]
    edited = [text(f"{rid}:summary", "Dry run first.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass", timeout=SLOW)],
        after=[
            sub(rid, "edit", timeout=SLOW),
            sub(rid, "slow", policy="fail-closed", timeout=FAST),
            sub(rid, "later", timeout=SLOW),
        ],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("summary", edited)), fault("timeout")],
        outcome=expected(
            applied=False,  # a fail-closed failure at the after boundary prevents it
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "edit", "slow"), ids(rid, "slow"), ids(rid, "later")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[
            acall(rid, made, gone, EXECUTED),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
        ],
        observations=[aseen(rid, made, gone, EXECUTED)],
    )


# ---------------------------------------------------------------- malformed effects


def deny_without_reason() -> JSON:
    # A deny without `reason` fails the canonical deny-effect schema: the
    # reply is rejected (a failure), not a deny; fail-open compacts.
    rid = "cmp-deny-without-reason"
    ins0 = [text(f"{rid}:ins", "Compact now.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Compact now.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "gate")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            raw_reply(b(rid), {"protocolVersion": "draft", "effects": [{"type": "deny"}]})
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "gate"), ids(rid, "gate"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def deny_empty_reason() -> JSON:
    # A deny with an empty reason fails the schema too (minLength 1).
    rid = "cmp-deny-empty-reason"
    ins0 = [text(f"{rid}:ins", "Compact later.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Compact later.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "gate")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            raw_reply(
                b(rid), {"protocolVersion": "draft", "effects": [{"type": "deny", "reason": ""}]}
            )
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "gate"), ids(rid, "gate"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def effects_not_a_list() -> JSON:
    # `effects` an object instead of an array fails the response schema.
    rid = "cmp-effects-not-a-list"
    ins0 = [text(f"{rid}:ins", "Compact once.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Compact once.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "gate")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[
            raw_reply(
                b(rid),
                {"protocolVersion": "draft", "effects": {"type": "deny", "reason": "one object"}},
            )
        ],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "gate"), ids(rid, "gate"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def ask_unadvertised_fail_open() -> JSON:
    # `ask` can never be advertised at context.compact.before (capabilities
    # schema): an ask reply is an unadvertised effect, not an ask.
    rid = "cmp-ask-unadvertised-fail-open"
    ins0 = [text(f"{rid}:ins", "Ask nobody.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Ask nobody.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "asker"), sub(rid, "next", policy="fail-closed")],
        after=[sub(rid, "look", policy="fail-closed")],
        before_replies=[reply(b(rid), ask()), reply(b(rid))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "asker", "next"), ids(rid, "asker"), []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def ask_unadvertised_fail_closed() -> JSON:
    # The same ask under fail-closed: nothing compacted.
    rid = "cmp-ask-unadvertised-fail-closed"
    ins0 = [text(f"{rid}:ins", "Ask somebody.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "asker", policy="fail-closed"), sub(rid, "later")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), ask())],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "asker"), ids(rid, "asker"), ids(rid, "later")),
            after=NOT_RUN,
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


# ---------------------------------------------------------------- negatives


def _base(nid: str) -> JSON:
    """A valid before request of the negative's own id (no run's boundary id)."""
    return {
        "jsonrpc": "2.0",
        "id": f"{nid}:before",
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": {
                "id": f"{nid}:before",
                "source": SOURCE,
                "type": "context.compact.before",
                "time": TIME,
                "session": {"id": "cmp-session"},
                "trigger": "manual",
                "items": context(nid, 2),
                "instructions": [text(f"{nid}:ins", "Keep the ledger facts.")],
            },
            "capabilities": {
                "effects": list(BEFORE_CAPABILITIES["effects"]),
                "modify": {"instructions": {"replace": True, "merge": False}},
            },
            "state": {"permission": "none", "candidate": None},
        },
    }


def negatives() -> list[JSON]:
    # COMPACTION.md: a request invalid against the canonical intercept-request
    # schema gets -32602 and is not recorded.
    no_trigger = _base("cmp-neg-no-trigger")
    del no_trigger["params"]["event"]["trigger"]

    summary_caps = _base("cmp-neg-summary-capability")
    summary_caps["params"]["capabilities"]["modify"] = {
        "summary": {"replace": True, "merge": False}
    }

    scalar = _base("cmp-neg-scalar-instructions")
    scalar["params"]["event"]["instructions"] = "Keep the ledger facts."

    body_ref = _base("cmp-neg-text-body-ref")
    body_ref["params"]["event"]["instructions"] = [
        {
            "id": "cmp-neg-text-body-ref:ins",
            "kind": "text",
            "mediaType": "text/plain",
            "selection": "body",
            "body": {
                "ref": "urn:uuid:6b0e3c52-9a41-4d7e-8f3a-2c5d1e7b9a10",
                "size": 22,
                "sha256": "5f1d0c4a9e7b3a2d8c6f4e1b0a9d7c5e3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e",
            },
        }
    ]
    return [
        negative("cmp-neg-no-trigger", no_trigger),
        negative("cmp-neg-summary-capability", summary_caps),
        negative("cmp-neg-scalar-instructions", scalar),
        negative("cmp-neg-text-body-ref", body_ref),
    ]
