"""Step rows of the lifecycle set: the client's pending/staged/published/cancelled states.

Each row states in a comment the rule of docs/LIFECYCLE.md ("Client: the
steps") it exercises. Expectations are literal: the effective input and the
messages each published state carries are written out, reasoned from the core
composition rules (docs/scenarios.md), never computed from the effects.
"""

from __future__ import annotations

from lifecycle_wire import (
    ABSENT,
    JSON,
    STDIO_FRAMES,
    STEP_CAPABILITIES,
    TWO_OUTSTANDING,
    UNAUTHORIZED_UPLOAD,
    accept,
    allow,
    ask,
    attachment,
    attachment_gap,
    attachment_meta,
    cancel,
    deny,
    digest,
    emit,
    error_reply,
    fail_open,
    give,
    intercept,
    merge,
    note,
    observe_step,
    outcome,
    published,
    receive,
    release,
    replace,
    reply,
    seen,
    send,
    step_row,
    stop,
    stopped,
    text_body,
    text_meta,
    upload,
    v,
    wait,
)

DRAFT = v("draft")  # every step request's original input


def request(rid: str, items: JSON = ABSENT) -> JSON:
    """A step row's request: input `{"value": "draft"}`, no carried state."""
    return intercept(rid, DRAFT, capabilities=STEP_CAPABILITIES, items=items)


def rows() -> list[JSON]:
    return [
        cancel_held_then_observe(),
        cancel_after_receive(),
        interrupt_after_publication(),
        late_old_reply_while_next_pending(),
        request_specific_acceptance(),
        reverse_acceptance(),
        duplicate_reply_ignored(),
        first_staged_reply_wins(),
        observe_after_deny(),
        observe_after_stop(),
        observe_after_ask(),
        observe_after_modify(),
        fail_open_nothing_staged(),
        fail_open_after_cancel(),
        fail_open_after_staged_and_published(),
        rejected_reply_then_fail_open(),
        error_answer_then_fail_open(),
        upload_binary_and_empty(),
        upload_integrity_and_authorization(),
        upload_changed_bytes_new_ref(),
        intercept_carries_uploaded_body(),
        stdio_stale_frame_before_live(),
        stdio_unknown_frame_before_live(),
    ]


# ---------------------------------------------------------------- cancellation


def cancel_held_then_observe() -> JSON:
    # Cancel before the reply (held by the server): nothing is published; the
    # cancelled boundary is observed with its original input; the reply that
    # comes after the release is ignored and accept does nothing.
    sid = "lc-cancel-held-then-observe"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("never published"), allow())},
        steps=[
            send("a"),
            wait("a"),
            cancel("a"),
            observe_step("a", "metadata"),
            release("a"),
            receive("a"),
            accept("a"),
        ],
        expected=outcome(
            published=[],
            cancelled=[a],
            ignored=["a"],
            states={},
            observations=[seen(a, "metadata", v("draft"))],
            uploads=[],
        ),
    )


def cancel_after_receive() -> JSON:
    # Cancel after receive, before accept: the staged reply is dropped; accept
    # and failOpen after a cancel publish nothing; an observer still sees the
    # original input (nothing was published).
    sid = "lc-cancel-after-receive"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("dropped when cancelled"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            cancel("a"),
            accept("a"),
            fail_open("a"),
            observe_step("a", "body"),
        ],
        expected=outcome(
            published=[],
            cancelled=[a],
            ignored=[],
            states={},
            observations=[seen(a, "body", v("draft"))],
            uploads=[],
        ),
    )


def interrupt_after_publication() -> JSON:
    # Cancel after publication (an interruption): the published state stays;
    # a second accept and a failOpen do nothing; the observer gets the
    # published input. No allow effect: permission none resolves to allow.
    sid = "lc-interrupt-after-publication"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("approved")), note("approved by lc"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            cancel("a"),
            accept("a"),
            fail_open("a"),
            observe_step("a", "metadata"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[a],
            ignored=[],
            states={a: published("allow", True, v("approved"), ["approved by lc"])},
            observations=[seen(a, "metadata", v("approved"))],
            uploads=[],
        ),
    )


# ---------------------------------------------------------------- several requests


def late_old_reply_while_next_pending() -> JSON:
    # A cancelled request's late reply arrives while the next request is
    # pending: it is ignored and does not satisfy the next one; accept of a
    # pending request does nothing; failOpen of the cancelled one neither.
    sid = "lc-late-old-reply-while-next-pending"
    a, b = f"{sid}:a", f"{sid}:b"
    return step_row(
        sid,
        requests={"a": request(a), "b": request(b)},
        responses={
            "a": reply(a, replace(v("outdated")), note("late and cancelled")),
            "b": reply(b, replace(v("revised")), note("revised by lc"), allow()),
        },
        steps=[
            send("a"),
            wait("a"),
            cancel("a"),
            send("b"),
            wait("b"),
            release("a"),
            receive("a"),
            accept("b"),
            release("b"),
            receive("b"),
            accept("b"),
            fail_open("a"),
            observe_step("b", "metadata"),
        ],
        expected=outcome(
            published=[b],
            cancelled=[a],
            ignored=["a"],
            states={b: published("allow", True, v("revised"), ["revised by lc"])},
            observations=[seen(b, "metadata", v("revised"))],
            uploads=[],
        ),
        transports=["http"],
        reason=TWO_OUTSTANDING,
    )


def request_specific_acceptance() -> JSON:
    # Acceptance is per request: accepting b while only a is staged publishes
    # nothing; a is published on its own accept, b later on its own; failOpen
    # of a published request does nothing.
    sid = "lc-request-specific-acceptance"
    a, b = f"{sid}:a", f"{sid}:b"
    return step_row(
        sid,
        requests={"a": request(a), "b": request(b)},
        responses={
            "a": reply(a, replace(v("reviewed")), note("alpha reviewed")),
            "b": reply(b, replace(v("approved")), note("beta approved"), allow()),
        },
        steps=[
            send("a"),
            wait("a"),
            send("b"),
            wait("b"),
            release("a"),
            receive("a"),
            accept("b"),
            accept("a"),
            release("b"),
            receive("b"),
            accept("b"),
            fail_open("b"),
        ],
        expected=outcome(
            published=[a, b],
            cancelled=[],
            ignored=[],
            states={
                a: published("allow", True, v("reviewed"), ["alpha reviewed"]),
                b: published("allow", True, v("approved"), ["beta approved"]),
            },
            observations=[],
            uploads=[],
        ),
        transports=["http"],
        reason=TWO_OUTSTANDING,
    )


def reverse_acceptance() -> JSON:
    # Two staged requests taken in reverse order and accepted in request order:
    # each publishes its own reply. a asks (not executed, input unchanged);
    # b merges a key (shallow merge keeps "value") and allows a changed value,
    # so its permission is none, which resolves to allow.
    sid = "lc-two-staged-reverse-acceptance"
    a, b = f"{sid}:a", f"{sid}:b"
    return step_row(
        sid,
        requests={"a": request(a), "b": request(b)},
        responses={
            "a": reply(a, ask(), note("needs a human")),
            "b": reply(b, merge({"reviewer": "lc-bot"}), allow()),
        },
        steps=[
            send("a"),
            wait("a"),
            send("b"),
            wait("b"),
            release("b"),
            receive("b"),
            release("a"),
            receive("a"),
            accept("a"),
            accept("b"),
        ],
        expected=outcome(
            published=[a, b],
            cancelled=[],
            ignored=[],
            states={
                a: published("ask", False, v("draft"), ["needs a human"]),
                b: published("allow", True, {"value": "draft", "reviewer": "lc-bot"}, []),
            },
            observations=[],
            uploads=[],
        ),
        transports=["http"],
        reason=TWO_OUTSTANDING,
    )


# ---------------------------------------------------------------- replays


def duplicate_reply_ignored() -> JSON:
    # A deliberate replay (bypassSDK) of a published request: the server
    # receives it twice; the duplicate reply is ignored and changes nothing.
    sid = "lc-duplicate-reply-ignored"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("once only"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            send("a", "replay", bypass=True),
            wait("a", 2),
            receive("replay"),
            accept("a"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=["replay"],
            states={a: published("allow", True, v("reviewed"), ["once only"])},
            observations=[],
            uploads=[],
        ),
    )


def first_staged_reply_wins() -> JSON:
    # Two different replies to one request (responseSequences): the first one
    # staged wins; the replay's reply, taken while the first is staged, is
    # ignored and never published.
    sid = "lc-first-staged-reply-wins"
    a = f"{sid}:a"
    first = reply(a, replace(v("reviewed")), note("staged first"), allow())
    second = reply(a, replace(v("overwritten")), note("must never be published"), allow())
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": first},
        sequences={"a": [first, second]},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            send("a", "late", bypass=True),
            wait("a", 2),
            receive("late"),
            accept("a"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=["late"],
            states={a: published("allow", True, v("reviewed"), ["staged first"])},
            observations=[],
            uploads=[],
        ),
    )


# ---------------------------------------------------------------- observation


def observe_after_deny() -> JSON:
    # Observe a denied boundary: the call does not proceed, the message is
    # published also on deny, the input is the original one. A metadata
    # subscription gets the event's own items, a body subscription the step's
    # items (the override).
    sid = "lc-observe-after-deny"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a, [text_meta("lc-notes")])},
        responses={"a": reply(a, note("blocked by lc policy"), deny("lc policy"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "metadata"),
            observe_step("a", "body", [text_body("lc-notes", "Draft notes for the reviewer")]),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("deny", False, v("draft"), ["blocked by lc policy"])},
            observations=[
                seen(a, "metadata", v("draft")),
                seen(a, "body", v("draft")),
            ],
            uploads=[],
        ),
    )


def observe_after_stop() -> JSON:
    # Observe a flow stop: decision allow (nothing asked or denied), not
    # executed, flow stop in the published state, input unchanged.
    sid = "lc-observe-after-stop"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, stop("lc halts this call"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "metadata"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: stopped("allow", v("draft"), [])},
            observations=[seen(a, "metadata", v("draft"))],
            uploads=[],
        ),
    )


def observe_after_ask() -> JSON:
    # Observe an ask: decision ask, not executed, the message published; the
    # body subscription's items are a withheld body (a gap), given by the step.
    sid = "lc-observe-after-ask"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, ask(), note("confirm with the owner"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "body", [attachment_gap("lc-scan", "withheld by lc policy")]),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("ask", False, v("draft"), ["confirm with the owner"])},
            observations=[seen(a, "body", v("draft"))],
            uploads=[],
        ),
    )


def observe_after_modify() -> JSON:
    # Observe an allowed, modified boundary: replace then shallow merge give
    # the effective input; the allow does not survive the changed value
    # (permission none, decision allow); both observers carry the modified
    # input, the metadata one with the event's items, the body one with the
    # step's items.
    sid = "lc-observe-after-modify"
    a = f"{sid}:a"
    edited = {"value": "reviewed", "reviewer": "lc-bot"}
    return step_row(
        sid,
        requests={"a": request(a, [text_meta("lc-diff")])},
        responses={"a": reply(a, replace(v("reviewed")), merge({"reviewer": "lc-bot"}), allow())},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "metadata"),
            observe_step("a", "body", [text_body("lc-diff", "value: draft -> reviewed")]),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, edited, [])},
            observations=[seen(a, "metadata", edited), seen(a, "body", edited)],
            uploads=[],
        ),
    )


# ---------------------------------------------------------------- fail-open


def fail_open_nothing_staged() -> JSON:
    # failOpen while the request is pending (nothing staged): the fail-open
    # outcome is published (allowed, executed, original input, no messages);
    # the reply that comes later is ignored; accept does nothing; the observer
    # sees the original input.
    sid = "lc-fail-open-nothing-staged"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("too-late")), note("arrives after fail-open"))},
        steps=[
            send("a"),
            wait("a"),
            fail_open("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "metadata"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=["a"],
            states={a: published("allow", True, v("draft"), [])},
            observations=[seen(a, "metadata", v("draft"))],
            uploads=[],
        ),
    )


def fail_open_after_cancel() -> JSON:
    # failOpen after a cancel publishes nothing, before and after the reply
    # came back (the reply itself is ignored).
    sid = "lc-fail-open-after-cancel"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("cancelled first"))},
        steps=[
            send("a"),
            wait("a"),
            cancel("a"),
            fail_open("a"),
            release("a"),
            receive("a"),
            fail_open("a"),
            accept("a"),
        ],
        expected=outcome(
            published=[],
            cancelled=[a],
            ignored=["a"],
            states={},
            observations=[],
            uploads=[],
        ),
    )


def fail_open_after_staged_and_published() -> JSON:
    # failOpen with a staged reply does nothing (the reply is published by the
    # accept that follows); failOpen after publication does nothing either.
    sid = "lc-fail-open-after-staged-and-published"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("kept over fail-open"))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            fail_open("a"),
            accept("a"),
            fail_open("a"),
            observe_step("a", "body"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("reviewed"), ["kept over fail-open"])},
            observations=[seen(a, "body", v("reviewed"))],
            uploads=[],
        ),
    )


def rejected_reply_then_fail_open() -> JSON:
    # A reply the core rules reject at accept (a `return`, not advertised) is an
    # operational failure: nothing is published (its message neither); a later
    # failOpen publishes the fail-open outcome.
    sid = "lc-rejected-reply-then-fail-open"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, note("never shown"), give({"cached": "lc-result"}))},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            fail_open("a"),
            observe_step("a", "metadata"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("draft"), [])},
            observations=[seen(a, "metadata", v("draft"))],
            uploads=[],
        ),
    )


def error_answer_then_fail_open() -> JSON:
    # A JSON-RPC error answer is a reply (recorded replied, taken and staged)
    # that accept rejects: nothing is published; failOpen then publishes the
    # fail-open outcome.
    sid = "lc-error-answer-then-fail-open"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": error_reply(a, -32000, "lc backend unavailable")},
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            fail_open("a"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("draft"), [])},
            observations=[],
            uploads=[],
        ),
    )


# ---------------------------------------------------------------- uploads

BINARY = bytes(range(255, -1, -1)) + b"lc\x00\xff\x00"  # every byte value, 261 bytes
PLAIN = b"lc plain text body\n"
VERSION_ONE = b"lc attachment, version one"
VERSION_TWO = b"lc attachment, version two"
INTERCEPT_BODY = b"\x89LC\r\n\x1a\nintercept attachment"


def upload_binary_and_empty() -> JSON:
    # Several 201s: arbitrary binary bytes, an empty body (Content-Length 0)
    # and a text body; the observer's items refer to all three by alias.
    sid = "lc-upload-binary-and-empty"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("attachments checked"))},
        steps=[
            upload("body", "lc-binary", BINARY),
            upload("body", "lc-empty", b""),
            upload("body", "lc-plain", PLAIN),
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step(
                "a",
                "body",
                [
                    attachment("lc-binary-item", "lc-binary"),
                    attachment("lc-empty-item", "lc-empty"),
                    attachment("lc-plain-item", "lc-plain"),
                ],
            ),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("reviewed"), ["attachments checked"])},
            observations=[seen(a, "body", v("reviewed"))],
            uploads=[201, 201, 201],
        ),
    )


def upload_integrity_and_authorization() -> JSON:
    # A declared size longer than the body (400), a declared hash that is not
    # the body's (400), a token the receiver does not accept (401); then a
    # correct upload still gets its 201 and the observer refers to it.
    sid = "lc-upload-integrity-and-authorization"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a)},
        steps=[
            upload("body", "lc-short-body", b"lc-size", size=64),
            upload("body", "lc-wrong-hash", b"lc-hash", sha256="f" * 64),
            upload("metadata", "lc-stranger", b"lc-secret", settings=UNAUTHORIZED_UPLOAD),
            upload("body", "lc-accepted", b"lc-accepted body"),
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "body", [attachment("lc-accepted-item", "lc-accepted")]),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("draft"), [])},
            observations=[seen(a, "body", v("draft"))],
            uploads=[400, 400, 401, 201],
        ),
    )


def upload_changed_bytes_new_ref() -> JSON:
    # Uploaded bytes are immutable: identical bytes again (may share a ref),
    # changed bytes (a new ref). The body observer refers to both versions;
    # the metadata observer gets the metadata view of version one.
    sid = "lc-upload-changed-bytes-new-ref"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("both versions seen"))},
        steps=[
            upload("body", "lc-version-one", VERSION_ONE),
            upload("body", "lc-version-one-again", VERSION_ONE),
            upload("body", "lc-version-two", VERSION_TWO),
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step(
                "a",
                "body",
                [
                    attachment("lc-version-item", "lc-version-one"),
                    attachment("lc-version-item-again", "lc-version-one-again"),
                    attachment("lc-version-item-next", "lc-version-two"),
                ],
            ),
            observe_step(
                "a",
                "metadata",
                [attachment_meta("lc-version-item", len(VERSION_ONE), digest(VERSION_ONE))],
            ),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("reviewed"), ["both versions seen"])},
            observations=[seen(a, "body", v("reviewed")), seen(a, "metadata", v("reviewed"))],
            uploads=[201, 201, 201],
        ),
    )


def intercept_carries_uploaded_body() -> JSON:
    # An intercept whose event items carry a body ref: the bytes are uploaded
    # (201) before the send, and the request goes out with the receiver's ref;
    # an observer with the event's own items refers to the same bytes.
    sid = "lc-intercept-carries-uploaded-body"
    a = f"{sid}:a"
    return step_row(
        sid,
        requests={"a": request(a, [attachment("lc-intercept-item", "lc-intercept-attachment")])},
        responses={"a": reply(a, replace(v("reviewed")), note("attachment read"), allow())},
        steps=[
            upload("body", "lc-intercept-attachment", INTERCEPT_BODY),
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            observe_step("a", "metadata"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[],
            states={a: published("allow", True, v("reviewed"), ["attachment read"])},
            observations=[seen(a, "metadata", v("reviewed"))],
            uploads=[201],
        ),
    )


# ---------------------------------------------------------------- stdio frames


def stdio_stale_frame_before_live() -> JSON:
    # stdio: an unsolicited frame with the id of an already published request
    # arrives while the next request waits; it is dropped (discarded, listed as
    # ignored) and neither the published state nor the live reply changes.
    sid = "lc-stdio-stale-frame-before-live"
    a, b = f"{sid}:a", f"{sid}:b"
    return step_row(
        sid,
        requests={"a": request(a), "b": request(b)},
        responses={
            "a": reply(a, replace(v("reviewed")), note("alpha published")),
            "b": reply(b, replace(v("approved")), note("beta published"), allow()),
        },
        steps=[
            send("a"),
            wait("a"),
            release("a"),
            receive("a"),
            accept("a"),
            send("b"),
            wait("b"),
            emit(reply(a, replace(v("outdated")), note("stale frame"), allow())),
            release("b"),
            receive("b"),
            accept("b"),
        ],
        expected=outcome(
            published=[a, b],
            cancelled=[],
            ignored=[f"unsolicited:{a}"],
            states={
                a: published("allow", True, v("reviewed"), ["alpha published"]),
                b: published("allow", True, v("approved"), ["beta published"]),
            },
            observations=[],
            uploads=[],
        ),
        transports=["stdio"],
        reason=STDIO_FRAMES,
    )


def stdio_unknown_frame_before_live() -> JSON:
    # stdio: a frame with an id no request ever had arrives before the live
    # reply; it is dropped and the live reply is published.
    sid = "lc-stdio-unknown-frame-before-live"
    a = f"{sid}:a"
    stray = "lc-unknown-frame"
    return step_row(
        sid,
        requests={"a": request(a)},
        responses={"a": reply(a, replace(v("reviewed")), note("live reply"))},
        steps=[
            send("a"),
            wait("a"),
            emit(reply(stray, deny("a frame nobody asked for"))),
            release("a"),
            receive("a"),
            accept("a"),
        ],
        expected=outcome(
            published=[a],
            cancelled=[],
            ignored=[f"unsolicited:{stray}"],
            states={a: published("allow", True, v("reviewed"), ["live reply"])},
            observations=[],
            uploads=[],
        ),
        transports=["stdio"],
        reason=STDIO_FRAMES,
    )
