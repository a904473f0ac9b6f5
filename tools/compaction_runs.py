"""Run rows of the compaction set: chains, supplied summaries, after edits.

Each row says in a comment the rule of docs/COMPACTION.md (host steps 1-5),
docs/LIFECYCLE.md ("Chains") or docs/scenarios.md (composition) it
exercises. `expected` and `proof` are literal: every before call with the
instructions and `state` it carries, every after call as step 4 derives it
(the synthetic summary's text written out), every notification with the
settled event.

Readings this set takes (listed in the generator's READINGS):
- the after request of step 4 carries no `state`; from the second after call
  on, the state carried forward is `{"permission": "none", "candidate": null}`
  (a lifecycle chain carries the state "as the core rules leave it after each
  accepted reply"; the request's own, here none, until the first one);
- a carried candidate is `{"value": <the returned text parts>}`, no provenance.
"""

from __future__ import annotations

from compaction_common import acall, aseen, bcall, bseen, ids
from compaction_wire import (
    ABSENT,
    EXECUTED,
    GENERATED,
    JSON,
    NO_STATE,
    NOT_RUN,
    SUPPLIED,
    boundary,
    candidate,
    deny,
    expected,
    give,
    modify,
    note,
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
        two_before_edits_one_after_edit(),
        supplied_summary_then_edit(),
        quiet_both_boundaries(),
        before_edit_then_empty(),
        after_edit_then_empty(),
        edit_both_boundaries(),
        supplied_then_after_chain(),
        later_edit_drops_candidate(),
        same_edit_keeps_candidate(),
        edit_and_return_one_reply(),
        second_return_replaces_first(),
        deny_after_return(),
        unicode_instructions_empty_summary(),
        three_before_subscriptions(),
        observers_both_boundaries(),
        deny_with_edit_first(),
    ]


def b(rid: str) -> str:
    return f"{rid}:before"


def a(rid: str) -> str:
    return f"{rid}:after"


# ---------------------------------------------------------------- upstream wire: chain, supplied


def two_before_edits_one_after_edit() -> JSON:
    # Two before edits in a row, then one after edit; observers on both
    # boundaries. Step 3: the summary lists both settled instruction texts
    # joined by one space. The second call carries the first edit.
    rid = "cmp-two-before-edits-one-after-edit"
    ins0 = [text(f"{rid}:ins", "Keep the slot dates.")]
    ins1 = [text(f"{rid}:ins", "Keep the slot dates and who signs off.")]
    ins2 = [
        text(f"{rid}:ins", "Keep the slot dates and who signs off."),
        text(f"{rid}:ins-2", "Leave out small talk."),
    ]
    made = [
        text(
            f"{rid}:summary",
            "Summary of 2 items. Instructions: Keep the slot dates and who signs off. "
            "Leave out small talk.",
        )
    ]
    edited = [text(f"{rid}:summary", "The ledger moves on Tuesday and Thursday.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "tighten"), sub(rid, "extend"), sub(rid, "audit", "observe")],
        after=[sub(rid, "shorten"), sub(rid, "record", "observe")],
        before_replies=[
            reply(b(rid), modify("instructions", ins1)),
            reply(b(rid), modify("instructions", ins2)),
        ],
        after_replies=[reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins2,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "tighten", "extend"), [], ids(rid, "audit")),
            after=boundary(ids(rid, "shorten"), [], ids(rid, "record")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins1, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[bseen(rid, 2, ins2), aseen(rid, edited, gone, EXECUTED)],
    )


def supplied_summary_then_edit() -> JSON:
    # Step 2: an accepted return binds the summary; provenance names the
    # subscription, the after event's execution is skipped/supplied_result;
    # the after chain edits the supplied summary.
    rid = "cmp-supplied-summary-then-edit"
    ins0 = [text(f"{rid}:ins", "Write for the on-call engineer.")]
    given = [text(f"{rid}:given", "Ledger moves twice; the rollback script is ready.")]
    edited = [text(f"{rid}:given", "Ledger moves twice.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3")
    return run(
        rid,
        request=bcall(rid, 3, ins0, NO_STATE),
        before=[sub(rid, "store"), sub(rid, "audit", "observe")],
        after=[sub(rid, "trim"), sub(rid, "record", "observe")],
        before_replies=[reply(b(rid), give(given))],
        after_replies=[reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store"), [], ids(rid, "audit")),
            after=boundary(ids(rid, "trim"), [], ids(rid, "record")),
        ),
        before_calls=[bcall(rid, 3, ins0, NO_STATE)],
        after_calls=[acall(rid, given, gone, SUPPLIED)],
        observations=[bseen(rid, 3, ins0), aseen(rid, edited, gone, SUPPLIED)],
    )


# ---------------------------------------------------------------- upstream runtime: chains


def quiet_both_boundaries() -> JSON:
    # No effects anywhere and no instructions in the event: step 3 with
    # settled instructions absent (reported []) is "Summary of 3 items."
    # alone; the second after call carries the state as the first left it.
    rid = "cmp-quiet-both-boundaries"
    made = [text(f"{rid}:summary", "Summary of 3 items.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3")
    return run(
        rid,
        request=bcall(rid, 3, ABSENT, NO_STATE),
        before=[sub(rid, "look")],
        after=[sub(rid, "glance"), sub(rid, "peek")],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=[],
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "look"), [], []),
            after=boundary(ids(rid, "glance", "peek"), [], []),
        ),
        before_calls=[bcall(rid, 3, ABSENT, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED), acall(rid, made, gone, EXECUTED, NO_STATE)],
        observations=[],
    )


def before_edit_then_empty() -> JSON:
    # A before edit, then an intercept with no effects that receives the
    # edited instructions; an after chain of one observer (calls nothing).
    rid = "cmp-before-edit-then-empty"
    ins0 = [text(f"{rid}:ins", "Mention the dry run.")]
    ins1 = [text(f"{rid}:ins", "Mention the dry run and its date.")]
    made = [
        text(
            f"{rid}:summary", "Summary of 2 items. Instructions: Mention the dry run and its date."
        )
    ]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "edit"), sub(rid, "look", policy="fail-closed")],
        after=[sub(rid, "record", "observe")],
        before_replies=[reply(b(rid), modify("instructions", ins1)), reply(b(rid))],
        after_replies=[],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "edit", "look"), [], []),
            after=boundary([], [], ids(rid, "record")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE), bcall(rid, 2, ins1, NO_STATE)],
        after_calls=[],
        observations=[aseen(rid, made, gone, EXECUTED)],
    )


def after_edit_then_empty() -> JSON:
    # An after edit replaces the synthetic summary; the next after call
    # carries the edited summary and the carried state.
    rid = "cmp-after-edit-then-empty"
    ins0 = [text(f"{rid}:ins", "Name the slots.")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Name the slots.")]
    edited = [text(f"{rid}:summary", "Slots: Tuesday, Thursday.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "pass")],
        after=[sub(rid, "redact"), sub(rid, "look", policy="fail-closed")],
        before_replies=[reply(b(rid))],
        after_replies=[reply(a(rid), modify("summary", edited)), reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "pass"), [], []),
            after=boundary(ids(rid, "redact", "look"), [], []),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[
            acall(rid, made, gone, EXECUTED),
            acall(rid, edited, gone, EXECUTED, NO_STATE),
        ],
        observations=[],
    )


def edit_both_boundaries() -> JSON:
    # An instructions edit shapes the synthetic summary, which an after edit
    # then replaces; the after observer sees the settled summary.
    rid = "cmp-edit-both-boundaries"
    ins0 = [text(f"{rid}:ins", "Be brief.")]
    ins1 = [text(f"{rid}:ins", "Be brief and name Priya.")]
    made = [text(f"{rid}:summary", "Summary of 4 items. Instructions: Be brief and name Priya.")]
    edited = [text(f"{rid}:summary", "Priya signs off slot two.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3", f"{rid}:m4")
    return run(
        rid,
        request=bcall(rid, 4, ins0, NO_STATE),
        before=[sub(rid, "edit")],
        after=[sub(rid, "redact"), sub(rid, "watch", "observe")],
        before_replies=[reply(b(rid), modify("instructions", ins1))],
        after_replies=[reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "edit"), [], []),
            after=boundary(ids(rid, "redact"), [], ids(rid, "watch")),
        ),
        before_calls=[bcall(rid, 4, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[aseen(rid, edited, gone, EXECUTED)],
    )


def supplied_then_after_chain() -> JSON:
    # A supplied summary still crosses the after boundary: two after calls,
    # the second carrying the edit of the first.
    rid = "cmp-supplied-then-after-chain"
    ins0 = [text(f"{rid}:ins", "List the owners.")]
    given = [
        text(f"{rid}:given-1", "Owner of slot one: Marek."),
        text(f"{rid}:given-2", "Owner of slot two: Priya."),
    ]
    edited = [text(f"{rid}:given-2", "Owner of slot two: Priya.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3", f"{rid}:m4")
    return run(
        rid,
        request=bcall(rid, 4, ins0, NO_STATE),
        before=[sub(rid, "store")],
        after=[sub(rid, "redact"), sub(rid, "look")],
        before_replies=[reply(b(rid), give(given))],
        after_replies=[reply(a(rid), modify("summary", edited)), reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=edited,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store"), [], []),
            after=boundary(ids(rid, "redact", "look"), [], []),
        ),
        before_calls=[bcall(rid, 4, ins0, NO_STATE)],
        after_calls=[
            acall(rid, given, gone, SUPPLIED),
            acall(rid, edited, gone, SUPPLIED, NO_STATE),
        ],
        observations=[],
    )


def later_edit_drops_candidate() -> JSON:
    # scenarios.md, Candidate: a changed value drops an incoming candidate.
    # The second call carries the candidate; its edit changes the
    # instructions, so nothing is supplied and the compactor runs.
    rid = "cmp-later-edit-drops-candidate"
    ins0 = [text(f"{rid}:ins", "Keep it short.")]
    ins1 = [text(f"{rid}:ins", "Keep it short; mention the rollback.")]
    given = [text(f"{rid}:given", "Two slots, one owner each.")]
    made = [
        text(
            f"{rid}:summary",
            "Summary of 2 items. Instructions: Keep it short; mention the rollback.",
        )
    ]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "store"), sub(rid, "edit")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), give(given)), reply(b(rid), modify("instructions", ins1))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=made,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "store", "edit"), [], []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(given))),
        ],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[],
    )


def same_edit_keeps_candidate() -> JSON:
    # scenarios.md, Candidate: a final value deep-equal to the call's
    # original keeps the incoming candidate (a replace by the same list).
    rid = "cmp-same-edit-keeps-candidate"
    ins0 = [text(f"{rid}:ins", "Keep the numbers.")]
    given = [text(f"{rid}:given", "2 slots, 1 dry run, 0 open questions.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "store"), sub(rid, "same")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), give(given)), reply(b(rid), modify("instructions", ins0))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=given,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:store"),
            before=boundary(ids(rid, "store", "same"), [], []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(given))),
        ],
        after_calls=[acall(rid, given, gone, SUPPLIED)],
        observations=[],
    )


def edit_and_return_one_reply() -> JSON:
    # scenarios.md, Candidate: within one response modifications apply before
    # the returned candidate is bound, so the return survives the edit; the
    # next call carries the edited instructions and the candidate.
    rid = "cmp-edit-and-return-one-reply"
    ins0 = [text(f"{rid}:ins", "Use bullet points.")]
    ins1 = [text(f"{rid}:ins", "Use one sentence.")]
    given = [text(f"{rid}:given", "The ledger moves in two signed-off slots.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "both"), sub(rid, "next")],
        after=[sub(rid, "record", "observe")],
        before_replies=[reply(b(rid), give(given), modify("instructions", ins1)), reply(b(rid))],
        after_replies=[],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=given,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:both"),
            before=boundary(ids(rid, "both", "next"), [], []),
            after=boundary([], [], ids(rid, "record")),
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins1, state("none", candidate(given))),
        ],
        after_calls=[],
        observations=[aseen(rid, given, gone, SUPPLIED)],
    )


def second_return_replaces_first() -> JSON:
    # scenarios.md, Candidate: a later return replaces an earlier one; the
    # supplier is the subscription whose return bound the final candidate.
    rid = "cmp-second-return-replaces-first"
    ins0 = [text(f"{rid}:ins", "Prefer the newest facts.")]
    first = [text(f"{rid}:first", "One slot on Tuesday.")]
    second = [text(f"{rid}:second", "Slots on Tuesday and Thursday.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "early"), sub(rid, "late")],
        after=[sub(rid, "look")],
        before_replies=[reply(b(rid), give(first)), reply(b(rid), give(second))],
        after_replies=[reply(a(rid))],
        outcome=expected(
            applied=True,
            instructions=ins0,
            summary=second,
            execution=SUPPLIED,
            provenance=supplied_by(f"{rid}:late"),
            before=boundary(ids(rid, "early", "late"), [], []),
            after=boundary(ids(rid, "look"), [], []),
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(first))),
        ],
        after_calls=[acall(rid, second, gone, SUPPLIED)],
        observations=[],
    )


def deny_after_return() -> JSON:
    # Step 2: a deny leaves nothing compacted, even with a bound candidate;
    # no after boundary (its observer is never notified); the before
    # observer sees the settled before event.
    rid = "cmp-deny-after-return"
    ins0 = [text(f"{rid}:ins", "Summarise everything.")]
    given = [text(f"{rid}:given", "Everything is on track.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "store"), sub(rid, "gate"), sub(rid, "audit", "observe")],
        after=[sub(rid, "record", "observe")],
        before_replies=[
            reply(b(rid), give(given)),
            reply(b(rid), deny("compaction is frozen during the ledger move")),
        ],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins0,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "store", "gate"), [], ids(rid, "audit")),
            after=NOT_RUN,
        ),
        before_calls=[
            bcall(rid, 2, ins0, NO_STATE),
            bcall(rid, 2, ins0, state("none", candidate(given))),
        ],
        after_calls=[],
        observations=[bseen(rid, 2, ins0)],
    )


def unicode_instructions_empty_summary() -> JSON:
    # Non-ASCII instruction text reaches the synthetic summary unchanged; an
    # after edit may leave an empty text.
    rid = "cmp-unicode-instructions-empty-summary"
    ins0 = [text(f"{rid}:ins", "Short.")]
    ins1 = [text(f"{rid}:ins", "Résumé für Ωmega — 日本語 ✓")]
    made = [text(f"{rid}:summary", "Summary of 2 items. Instructions: Résumé für Ωmega — 日本語 ✓")]
    emptied = [text(f"{rid}:summary", "")]
    gone = removed(f"{rid}:m1", f"{rid}:m2")
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "edit")],
        after=[sub(rid, "clear"), sub(rid, "watch", "observe")],
        before_replies=[reply(b(rid), modify("instructions", ins1))],
        after_replies=[reply(a(rid), modify("summary", emptied))],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=emptied,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "edit"), [], []),
            after=boundary(ids(rid, "clear"), [], ids(rid, "watch")),
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[aseen(rid, emptied, gone, EXECUTED)],
    )


# ---------------------------------------------------------------- our own chain shapes


def three_before_subscriptions() -> JSON:
    # Three before intercepts with fixed effects: an edit, a message (no
    # change to instructions or state), a deny (nothing compacted).
    rid = "cmp-three-before-subscriptions"
    ins0 = [text(f"{rid}:ins", "Keep the owners.")]
    ins1 = [text(f"{rid}:ins", "Keep the owners and the dates.")]
    return run(
        rid,
        request=bcall(rid, 3, ins0, NO_STATE),
        before=[
            sub(rid, "edit"),
            sub(rid, "notify", backend="cmp-side"),
            sub(rid, "gate", policy="fail-closed"),
        ],
        after=[sub(rid, "look")],
        before_replies=[
            reply(b(rid), modify("instructions", ins1)),
            reply(b(rid), note("the ledger thread is pinned")),
            reply(b(rid), deny("the ledger thread must stay whole")),
        ],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins1,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "edit", "notify", "gate"), [], []),
            after=NOT_RUN,
        ),
        before_calls=[
            bcall(rid, 3, ins0, NO_STATE),
            bcall(rid, 3, ins1, NO_STATE),
            bcall(rid, 3, ins1, NO_STATE),
        ],
        after_calls=[],
        observations=[],
    )


def observers_both_boundaries() -> JSON:
    # Observers before and after an intercept on each boundary are notified
    # after settlement, in subscription order, with the settled event.
    rid = "cmp-observers-both-boundaries"
    ins0 = [text(f"{rid}:ins", "Keep the sign-off.")]
    ins1 = [text(f"{rid}:ins", "Keep the sign-off and the dry run.")]
    made = [
        text(
            f"{rid}:summary", "Summary of 3 items. Instructions: Keep the sign-off and the dry run."
        )
    ]
    edited = [text(f"{rid}:summary", "Sign-off after the dry run.")]
    gone = removed(f"{rid}:m1", f"{rid}:m2", f"{rid}:m3")
    return run(
        rid,
        request=bcall(rid, 3, ins0, NO_STATE),
        before=[
            sub(rid, "audit", "observe"),
            sub(rid, "edit"),
            sub(rid, "archive", "observe", backend="cmp-side"),
        ],
        after=[
            sub(rid, "watch", "observe", backend="cmp-side"),
            sub(rid, "redact"),
            sub(rid, "log", "observe"),
        ],
        before_replies=[reply(b(rid), modify("instructions", ins1))],
        after_replies=[reply(a(rid), modify("summary", edited))],
        outcome=expected(
            applied=True,
            instructions=ins1,
            summary=edited,
            execution=EXECUTED,
            provenance=GENERATED,
            before=boundary(ids(rid, "edit"), [], ids(rid, "audit", "archive")),
            after=boundary(ids(rid, "redact"), [], ids(rid, "watch", "log")),
        ),
        before_calls=[bcall(rid, 3, ins0, NO_STATE)],
        after_calls=[acall(rid, made, gone, EXECUTED)],
        observations=[
            bseen(rid, 3, ins1),
            bseen(rid, 3, ins1),
            aseen(rid, edited, gone, EXECUTED),
            aseen(rid, edited, gone, EXECUTED),
        ],
    )


def deny_with_edit_first() -> JSON:
    # A deny short-circuits at the first call; the same accepted reply's edit
    # is the settled instructions, which the uncalled intercept and the
    # observer receive.
    rid = "cmp-deny-with-edit-first"
    ins0 = [text(f"{rid}:ins", "Drop the dates.")]
    ins1 = [text(f"{rid}:ins", "Keep the dates.")]
    return run(
        rid,
        request=bcall(rid, 2, ins0, NO_STATE),
        before=[sub(rid, "gate"), sub(rid, "later"), sub(rid, "audit", "observe")],
        after=[sub(rid, "look")],
        before_replies=[
            reply(b(rid), modify("instructions", ins1), deny("the dates are still disputed"))
        ],
        after_replies=[],
        outcome=expected(
            applied=False,
            instructions=ins1,
            summary=None,
            execution=None,
            provenance=None,
            before=boundary(ids(rid, "gate"), [], ids(rid, "later", "audit")),
            after=NOT_RUN,
        ),
        before_calls=[bcall(rid, 2, ins0, NO_STATE)],
        after_calls=[],
        observations=[bseen(rid, 2, ins1), bseen(rid, 2, ins1)],
    )
