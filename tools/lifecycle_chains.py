"""Chain rows of the lifecycle set: serial subscriptions at one boundary.

Each row states in a comment the rule of docs/LIFECYCLE.md ("Chains" and
"Operational failures, several backends, silent observers [ext]") it
exercises. `expected` and `chainProof` are literal: for every call the server
receives, the input it carries (the effective input so far), the state
carried forward and the subscription's projection of the items; for every
notification, the settled input and the projection. Nothing here applies an
effect.

Layout of most rows: intercept subscriptions `gate`, `review`, `final` (in
that order) and an observer `audit`. In the operational-failure rows the
failing subscription has `timeoutMs: 250`, every other intercept subscription
`timeoutMs: 10000`, and its failure policy is the opposite of the failing
one's, so only the failing subscription's policy can explain the outcome.
"""

from __future__ import annotations

from lifecycle_wire import (
    ABSENT,
    CHAIN_CAPABILITIES,
    JSON,
    NO_STATE,
    allow,
    ask,
    chain_outcome,
    chain_row,
    deny,
    fault,
    intercept,
    merge,
    observe,
    replace,
    reply,
    state,
    stop,
    subscription,
    text_meta,
    v,
)

DRAFT = v("draft")  # every chain request's original input
ALLOWED = state("allow")
ASKED = state("ask")
FAST, SLOW = 250, 10000  # the failing subscription's deadline, everyone else's


def call(rid: str, value: JSON, carried: JSON, items: JSON = ABSENT) -> JSON:
    """The request one intercept subscription receives (a chainProof.requests entry)."""
    return intercept(rid, value, capabilities=CHAIN_CAPABILITIES, state=carried, items=items)


def item(sid: str) -> list[JSON]:
    """The boundary's items: one text part the metadata projection keeps whole."""
    return [text_meta(f"{sid}:item")]


def ids(sid: str, *names: str) -> list[str]:
    return [f"{sid}:{name}" for name in names]


def rows() -> list[JSON]:
    return [
        deny_at_second_after_modify(),
        stop_at_first(),
        ask_carried_forward(),
        allow_carried_forward(),
        observer_between_intercepts(),
        all_omit(),
        no_items_with_omit(),
        observers_only(),
        interrupted(),
        held_observers(),
        server_error_fail_open(),
        server_error_fail_closed(),
        malformed_fail_open(),
        malformed_fail_closed(),
        timeout_fail_open(),
        timeout_fail_closed(),
        wrong_id_fail_open(),
        wrong_id_fail_closed(),
        unreachable_fail_open(),
        unreachable_fail_closed(),
        silent_first_observer(),
        held_observers_with_silent_one(),
    ]


def standard(
    sid: str,
    *,
    failing: str | None = None,
    policy: str = "fail-open",
    unreachable: bool = False,
) -> list[JSON]:
    """gate (metadata), review (omit), final (metadata), audit (observer, metadata).

    With `failing`, that subscription has `policy`, the 250 ms deadline and,
    when `unreachable`, the reserved backend `unreachable`; the other intercept
    subscriptions have the opposite policy and the 10 s deadline."""
    other = "fail-closed" if policy == "fail-open" else "fail-open"
    backends = {"gate": "lc-main", "review": "lc-review", "final": "lc-main"}
    contents = {"gate": "metadata", "review": "omit", "final": "metadata"}
    subs = []
    for name in ("gate", "review", "final"):
        if failing is None:
            subs.append(
                subscription(sid, name, "intercept", backend=backends[name], content=contents[name])
            )
        elif name == failing:
            subs.append(
                subscription(
                    sid,
                    name,
                    "intercept",
                    backend="unreachable" if unreachable else backends[name],
                    policy=policy,
                    content=contents[name],
                    timeout=FAST,
                )
            )
        else:
            subs.append(
                subscription(
                    sid,
                    name,
                    "intercept",
                    backend=backends[name],
                    policy=other,
                    content=contents[name],
                    timeout=SLOW,
                )
            )
    subs.append(subscription(sid, "audit", "observe", backend="lc-audit"))
    return subs


# ---------------------------------------------------------------- chain shapes


def deny_at_second_after_modify() -> JSON:
    # A deny short-circuits at the second call, after the first modified the
    # input: the second call already carries the modified input (and the omit
    # projection, items []); the settled input is the modified one; the
    # uncalled `final` and the observer get hooks/observe, the called ones no
    # second copy.
    sid = "lc-chain-deny-at-second-after-modify"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed"))), reply(rid, deny("review refused"))],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=[],
            observations=ids(sid, "final", "audit"),
            input=v("reviewed"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("reviewed"), NO_STATE, []),
        ],
        observations=[
            observe(rid, v("reviewed"), items),
            observe(rid, v("reviewed"), items),
        ],
    )


def stop_at_first() -> JSON:
    # A flow stop at the first call ends the chain: every other intercept
    # subscription and the observers are notified with the original input,
    # each with its own projection (omit: items []).
    sid = "lc-chain-stop-at-first"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "review", "intercept", backend="lc-review", content="omit"),
        subscription(sid, "audit", "observe", backend="lc-audit", content="omit"),
        subscription(sid, "archive", "observe", backend="lc-audit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, stop("lc stops the chain"))],
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=[],
            observations=ids(sid, "review", "audit", "archive"),
            input=v("draft"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[
            observe(rid, v("draft"), []),
            observe(rid, v("draft"), []),
            observe(rid, v("draft"), items),
        ],
    )


def ask_carried_forward() -> JSON:
    # An ask at the first call does not end the chain; it is carried forward
    # (state.permission "ask") to every later call, also past an empty reply,
    # and a later modification does not invalidate it (ask is never dropped).
    sid = "lc-chain-ask-carried-forward"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, ask()), reply(rid), reply(rid, replace(v("approved")))],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=[],
            observations=ids(sid, "audit"),
            input=v("approved"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), ASKED, []),
            call(rid, v("draft"), ASKED, items),
        ],
        observations=[observe(rid, v("approved"), items)],
    )


def allow_carried_forward() -> JSON:
    # An allow alone (the input unchanged) at the first call is carried as
    # state.permission "allow"; an empty reply keeps it (the value is still
    # the one it was given for), so the third call receives it too.
    sid = "lc-chain-allow-carried-forward"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, allow()), reply(rid), reply(rid, replace(v("polished")))],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=[],
            observations=ids(sid, "audit"),
            input=v("polished"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), ALLOWED, []),
            call(rid, v("draft"), ALLOWED, items),
        ],
        observations=[observe(rid, v("polished"), items)],
    )


def observer_between_intercepts() -> JSON:
    # An observer placed between two intercept subscriptions is not called in
    # between: notifications go out after settlement, in subscription order
    # (mirror, then tail), each with its projection; `final` gets the input
    # `gate` left.
    sid = "lc-chain-observer-between-intercepts"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "mirror", "observe", backend="lc-audit"),
        subscription(sid, "final", "intercept", backend="lc-review", content="omit"),
        subscription(sid, "tail", "observe", backend="lc-audit", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed"))), reply(rid, allow())],
        expected=chain_outcome(
            called=ids(sid, "gate", "final"),
            failures=[],
            observations=ids(sid, "mirror", "tail"),
            input=v("reviewed"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("reviewed"), NO_STATE, []),
        ],
        observations=[observe(rid, v("reviewed"), items), observe(rid, v("reviewed"), [])],
    )


def all_omit() -> JSON:
    # Every subscription omits content: every call and the notification carry
    # items []. The first reply's allow comes with a changed value, so it does
    # not survive: the second call receives permission "none".
    sid = "lc-chain-all-omit"
    rid = f"{sid}:a"
    items = [text_meta(f"{sid}:item"), text_meta(f"{sid}:second-item")]
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main", content="omit"),
        subscription(sid, "review", "intercept", backend="lc-review", content="omit"),
        subscription(sid, "audit", "observe", backend="lc-audit", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed")), allow()), reply(rid)],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=[],
            observations=ids(sid, "audit"),
            input=v("reviewed"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, []),
            call(rid, v("reviewed"), NO_STATE, []),
        ],
        observations=[observe(rid, v("reviewed"), [])],
    )


def no_items_with_omit() -> JSON:
    # An event without items: the omit projection leaves `items` absent (in
    # the call and in the notification), the metadata one too. A shallow merge
    # keeps the original key beside the added one.
    sid = "lc-chain-no-items-with-omit"
    rid = f"{sid}:a"
    checked = {"value": "draft", "stage": "checked"}
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "review", "intercept", backend="lc-review", content="omit"),
        subscription(sid, "audit", "observe", backend="lc-audit", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE),
        sequence=[reply(rid, merge({"stage": "checked"})), reply(rid)],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=[],
            observations=ids(sid, "audit"),
            input=checked,
        ),
        requests=[call(rid, v("draft"), NO_STATE), call(rid, checked, NO_STATE)],
        observations=[observe(rid, checked)],
    )


def observers_only() -> JSON:
    # A chain of observers only calls nothing (no receipt, nothing released):
    # each observer gets the original input with its projection.
    sid = "lc-chain-observers-only"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "watch", "observe", backend="lc-audit"),
        subscription(sid, "log", "observe", backend="lc-log", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[],
        expected=chain_outcome(
            called=[],
            failures=[],
            observations=ids(sid, "watch", "log"),
            input=v("draft"),
        ),
        requests=[],
        observations=[observe(rid, v("draft"), items), observe(rid, v("draft"), [])],
    )


def interrupted() -> JSON:
    # An interrupt while the first call is in flight settles the boundary with
    # the original input: only the first subscription is called, its reply
    # (which would modify and deny) is dropped, and nothing is observed, not
    # the two uncalled intercept subscriptions, not the two observers.
    sid = "lc-chain-interrupted"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        *standard(sid),
        subscription(sid, "archive", "observe", backend="lc-audit", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed")), deny("arrives after the interrupt"))],
        interrupt=True,
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=[],
            observations=[],
            input=v("draft"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[],
    )


def held_observers() -> JSON:
    # holdObservers: the chain settles before any notification; each of the
    # three observers is marked observer-blocked, then notified with the
    # settled input.
    sid = "lc-chain-held-observers"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "watch", "observe", backend="lc-audit"),
        subscription(sid, "log", "observe", backend="lc-log", content="omit"),
        subscription(sid, "archive", "observe", backend="lc-audit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed")))],
        hold_observers=True,
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=[],
            observations=ids(sid, "watch", "log", "archive"),
            input=v("reviewed"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[
            observe(rid, v("reviewed"), items),
            observe(rid, v("reviewed"), []),
            observe(rid, v("reviewed"), items),
        ],
    )


# ---------------------------------------------------------------- operational failures [ext]


def server_error_fail_open() -> JSON:
    # server-error at b (HTTP 500 / an error line), fail-open: the failure
    # contributes nothing; `final` receives the input and state `gate` left
    # (the reviewed input, permission none) and its allow keeps the unchanged
    # value. The fault is the second received call's entry.
    sid = "lc-chain-server-error-fail-open"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", policy="fail-open"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed"))), fault("server-error"), reply(rid, allow())],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=ids(sid, "review"),
            observations=ids(sid, "audit"),
            input=v("reviewed"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("reviewed"), NO_STATE, []),
            call(rid, v("reviewed"), NO_STATE, items),
        ],
        observations=[observe(rid, v("reviewed"), items)],
    )


def server_error_fail_closed() -> JSON:
    # server-error at a, fail-closed: the chain ends at once with the original
    # input; review and final (never called) and the observer get hooks/observe.
    sid = "lc-chain-server-error-fail-closed"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="gate", policy="fail-closed"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[fault("server-error")],
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=ids(sid, "gate"),
            observations=ids(sid, "review", "final", "audit"),
            input=v("draft"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[
            observe(rid, v("draft"), []),
            observe(rid, v("draft"), items),
            observe(rid, v("draft"), items),
        ],
    )


def malformed_fail_open() -> JSON:
    # malformed (a truncated JSON text) at a, fail-open: `review` receives the
    # request's own input and state; its modification reaches `final`.
    sid = "lc-chain-malformed-fail-open"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="gate", policy="fail-open"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[fault("malformed"), reply(rid, replace(v("revised"))), reply(rid)],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=ids(sid, "gate"),
            observations=ids(sid, "audit"),
            input=v("revised"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), NO_STATE, []),
            call(rid, v("revised"), NO_STATE, items),
        ],
        observations=[observe(rid, v("revised"), items)],
    )


def malformed_fail_closed() -> JSON:
    # malformed at b, fail-closed: the first call's allow left the input
    # unchanged (and is carried to b as "allow"); the failure ends the chain
    # with the original input; `final` and the observer are notified.
    sid = "lc-chain-malformed-fail-closed"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", policy="fail-closed"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, allow()), fault("malformed")],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=ids(sid, "review"),
            observations=ids(sid, "final", "audit"),
            input=v("draft"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), ALLOWED, []),
        ],
        observations=[observe(rid, v("draft"), items), observe(rid, v("draft"), items)],
    )


def timeout_fail_open() -> JSON:
    # timeout at b (received, never answered; the 250 ms deadline passes),
    # fail-open: `final` receives the ask `gate` left, and its modification
    # does not drop the ask.
    sid = "lc-chain-timeout-fail-open"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", policy="fail-open"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, ask()), fault("timeout"), reply(rid, replace(v("approved")))],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=ids(sid, "review"),
            observations=ids(sid, "audit"),
            input=v("approved"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), ASKED, []),
            call(rid, v("draft"), ASKED, items),
        ],
        observations=[observe(rid, v("approved"), items)],
    )


def timeout_fail_closed() -> JSON:
    # timeout at b, fail-closed: the first reply (no effects) left the input
    # unchanged; the deadline ends the chain with the original input.
    sid = "lc-chain-timeout-fail-closed"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", policy="fail-closed"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid), fault("timeout")],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=ids(sid, "review"),
            observations=ids(sid, "final", "audit"),
            input=v("draft"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), NO_STATE, []),
        ],
        observations=[observe(rid, v("draft"), items), observe(rid, v("draft"), items)],
    )


def wrong_id_fail_open() -> JSON:
    # A response to another id at a (a deny that must not count), fail-open:
    # the chain continues as if `gate` said nothing; `final` modifies.
    sid = "lc-chain-wrong-id-fail-open"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="gate", policy="fail-open"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[
            reply(f"{sid}:elsewhere", deny("a veto for another request")),
            reply(rid),
            reply(rid, replace(v("edited"))),
        ],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=ids(sid, "gate"),
            observations=ids(sid, "audit"),
            input=v("edited"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), NO_STATE, []),
            call(rid, v("draft"), NO_STATE, items),
        ],
        observations=[observe(rid, v("edited"), items)],
    )


def wrong_id_fail_closed() -> JSON:
    # A response to another id at b (it would modify and allow), fail-closed:
    # `gate` asked without changing the input (carried to b); the failure ends
    # the chain with the original input.
    sid = "lc-chain-wrong-id-fail-closed"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", policy="fail-closed"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[
            reply(rid, ask()),
            reply(f"{sid}:elsewhere", replace(v("misrouted")), allow()),
        ],
        expected=chain_outcome(
            called=ids(sid, "gate", "review"),
            failures=ids(sid, "review"),
            observations=ids(sid, "final", "audit"),
            input=v("draft"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("draft"), ASKED, []),
        ],
        observations=[observe(rid, v("draft"), items), observe(rid, v("draft"), items)],
    )


def unreachable_fail_open() -> JSON:
    # The unreachable backend at b, fail-open: the call is attempted (called,
    # failures) but never received, so it consumes no responseSequences entry:
    # `final` is the second receipt and gets entry 1 (its deny changes nothing
    # of the input). The proof has no request for b.
    sid = "lc-chain-unreachable-fail-open"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="review", unreachable=True, policy="fail-open"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed"))), reply(rid, deny("final veto"))],
        expected=chain_outcome(
            called=ids(sid, "gate", "review", "final"),
            failures=ids(sid, "review"),
            observations=ids(sid, "audit"),
            input=v("reviewed"),
        ),
        requests=[
            call(rid, v("draft"), NO_STATE, items),
            call(rid, v("reviewed"), NO_STATE, items),
        ],
        observations=[observe(rid, v("reviewed"), items)],
    )


def unreachable_fail_closed() -> JSON:
    # The unreachable backend at a, fail-closed: the server receives nothing
    # (no responseSequences at all); the chain ends with the original input
    # and review, final and the observer get hooks/observe.
    sid = "lc-chain-unreachable-fail-closed"
    rid = f"{sid}:a"
    items = item(sid)
    return chain_row(
        sid,
        subscriptions=standard(sid, failing="gate", unreachable=True, policy="fail-closed"),
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[],
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=ids(sid, "gate"),
            observations=ids(sid, "review", "final", "audit"),
            input=v("draft"),
        ),
        requests=[],
        observations=[
            observe(rid, v("draft"), []),
            observe(rid, v("draft"), items),
            observe(rid, v("draft"), items),
        ],
    )


# ---------------------------------------------------------------- silent observers [ext]


def silent_first_observer() -> JSON:
    # The first observer's notification (the first observed receipt for the
    # event) never gets an answer; it is not a failure and does not hold back
    # the second observer, which is still notified.
    sid = "lc-chain-silent-first-observer"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "quiet", "observe", backend="lc-quiet"),
        subscription(sid, "watch", "observe", backend="lc-audit", content="omit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, replace(v("reviewed")))],
        observe_faults={"a": ["silent"]},
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=[],
            observations=ids(sid, "quiet", "watch"),
            input=v("reviewed"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[observe(rid, v("reviewed"), items), observe(rid, v("reviewed"), [])],
    )


def held_observers_with_silent_one() -> JSON:
    # holdObservers with a silent observer in the middle (the second observed
    # receipt): settlement comes first, every observer is marked blocked and
    # notified, the silent one delays nothing.
    sid = "lc-chain-held-observers-with-silent-one"
    rid = f"{sid}:a"
    items = item(sid)
    subs = [
        subscription(sid, "gate", "intercept", backend="lc-main"),
        subscription(sid, "watch", "observe", backend="lc-audit"),
        subscription(sid, "quiet", "observe", backend="lc-quiet", content="omit"),
        subscription(sid, "archive", "observe", backend="lc-audit"),
    ]
    return chain_row(
        sid,
        subscriptions=subs,
        request=call(rid, DRAFT, NO_STATE, items),
        sequence=[reply(rid, allow())],
        hold_observers=True,
        observe_faults={"a": [None, "silent"]},
        expected=chain_outcome(
            called=ids(sid, "gate"),
            failures=[],
            observations=ids(sid, "watch", "quiet", "archive"),
            input=v("draft"),
        ),
        requests=[call(rid, v("draft"), NO_STATE, items)],
        observations=[
            observe(rid, v("draft"), items),
            observe(rid, v("draft"), []),
            observe(rid, v("draft"), items),
        ],
    )
