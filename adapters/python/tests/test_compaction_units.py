"""Compaction host rules without processes: the outcome of the settled before
boundary (supplied, generated, nothing for deny / ask / a fail-closed
failure), the synthetic summary, the derived after request, the server's
refusals (docs/COMPACTION.md)."""

from __future__ import annotations

from typing import Any

from compaction_kit import before_request, reply, run_row, text

from ahp_py.contract.entries import EntryLog
from ahp_py.sdk import compaction, engine, schemas
from ahp_py.sdk.chain import request_for
from ahp_py.sdk.schemas import INTERCEPT_REQUEST
from ahp_py.suites.compaction import CompactionServer

SUMMARY = [text("s", "Supplied.")]


def settle(req: dict[str, Any], *effects: dict[str, Any], state: Any = None) -> dict[str, Any]:
    """The core rules' result of one reply (the client's final step uses the
    same engine with no effect on the settled request)."""
    if state is not None:
        req = {**req, "params": {**req["params"], "state": state}}
    check = schemas.load().error
    outcome = engine.apply(req, reply(req["id"], *effects), None, check, host_rule=False)
    assert outcome.reason is None, outcome.reason
    return outcome.actual


def test_supplied_summary_is_bound_by_return() -> None:
    req = before_request("u")
    result = settle(req, {"type": "return", "value": SUMMARY})
    host = compaction.outcome(result, "sup", "u:summary", 2, [])
    assert host == compaction.Outcome(
        applied=True,
        summary=SUMMARY,
        execution={"status": "skipped", "reason": "supplied_result"},
        provenance={"kind": "supplied", "supplier": "sup"},
    )


def test_supplied_candidate_carried_in_state() -> None:
    req = before_request("u")
    state = {"permission": "none", "candidate": {"value": SUMMARY}}
    host = compaction.outcome(settle(req, state=state), "first", "u:summary", 2, [])
    assert host.applied and host.summary == SUMMARY
    assert host.provenance == {"kind": "supplied", "supplier": "first"}


def test_a_changed_instruction_drops_the_candidate() -> None:
    req = before_request("u")
    state = {"permission": "none", "candidate": {"value": SUMMARY}}
    edit = {"type": "modify", "target": "instructions", "operation": "replace"}
    result = settle(req, {**edit, "value": [text("i", "New.")]}, state=state)
    host = compaction.outcome(result, None, "u:summary", 2, [text("i", "New.")])
    assert host.provenance == {"kind": "generated"}
    assert host.summary == [text("u:summary", "Summary of 2 items. Instructions: New.")]


def test_generated_when_executed() -> None:
    host = compaction.outcome(settle(before_request("u")), None, "u:summary", 2, [])
    assert host == compaction.Outcome(
        applied=True,
        summary=[text("u:summary", "Summary of 2 items.")],
        execution={"status": "executed"},
        provenance={"kind": "generated"},
    )


def test_not_applied_for_deny_ask_and_fail_closed() -> None:
    req = before_request("u")
    denied = settle(req, {"type": "deny", "reason": "no"}, {"type": "return", "value": SUMMARY})
    assert compaction.outcome(denied, "x", "u:summary", 2, []) == compaction.NOT_APPLIED
    asked = settle(req, state={"permission": "ask", "candidate": None})
    assert asked["decision"] == "ask"
    assert compaction.outcome(asked, None, "u:summary", 2, []) == compaction.NOT_APPLIED
    assert compaction.outcome(None, None, "u:summary", 2, []) == compaction.NOT_APPLIED
    nothing = compaction.NOT_APPLIED
    assert (nothing.summary, nothing.execution, nothing.provenance) == (None, None, None)


def test_synthetic_summary_text() -> None:
    assert compaction.synthetic_summary("r:summary", 3, []) == [
        {
            "id": "r:summary",
            "kind": "text",
            "mediaType": "text/plain",
            "selection": "body",
            "text": "Summary of 3 items.",
        }
    ]
    parts = [text("a", "Keep names."), text("b", "Be brief.")]
    (part,) = compaction.synthetic_summary("r:summary", 1, parts)
    assert part["text"] == "Summary of 1 items. Instructions: Keep names. Be brief."
    # Parts without text (metadata, omitted) contribute nothing; no text, no suffix.
    omitted = {"id": "o", "kind": "text", "mediaType": "text/plain", "selection": "omit"}
    (part,) = compaction.synthetic_summary("r:summary", 1, [omitted])
    assert part["text"] == "Summary of 1 items."


def test_after_request_every_field() -> None:
    before = before_request("r", items=2, session={"id": "s1"})
    summary = [text("r:summary", "Summary of 2 items.")]
    execution = {"status": "executed"}
    message = compaction.after_request("r:after", before, summary, execution, False)
    event = before["params"]["event"]
    assert message == {
        "jsonrpc": "2.0",
        "id": "r:after",
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": {
                "id": "r:after",
                "source": event["source"],
                "time": event["time"],
                "session": {"id": "s1"},
                "type": "context.compact.after",
                "parentEventId": "r:before",
                "summary": summary,
                "removed": [{"id": "r:m0"}, {"id": "r:m1"}],
                "execution": execution,
            },
            "capabilities": {
                "effects": ["modify"],
                "modify": {"summary": {"replace": True, "merge": False}},
            },
        },
    }
    assert schemas.load().error(INTERCEPT_REQUEST, message) is None
    # No session in the before event: none in the after event.
    plain = compaction.after_request("r:after", before_request("r"), summary, execution, False)
    assert "session" not in plain["params"]["event"]


def test_after_request_observe_only() -> None:
    execution = {"status": "skipped", "reason": "supplied_result"}
    message = compaction.after_request("r:after", before_request("r"), SUMMARY, execution, True)
    assert message["params"]["capabilities"] == {"effects": []}
    assert message["params"]["event"]["execution"] == execution
    assert schemas.load().error(INTERCEPT_REQUEST, message) is None
    # Any effect in a reply is then unadvertised: an operational failure.
    edit = {"type": "modify", "target": "summary", "operation": "replace", "value": SUMMARY}
    outcome = engine.apply(message, reply("r:after", edit), None, schemas.load().error)
    assert outcome.reason is not None


def test_unmodified_event_is_sent_as_it_is() -> None:
    req = before_request("r")
    boundary = engine.boundary_for(req)
    assert request_for(req, boundary, [], None, None) == req
    edited = request_for(req, boundary, [text("i", "x")], None, None)
    assert edited["params"]["event"]["instructions"] == [text("i", "x")]


def test_server_refusals_record_nothing() -> None:
    rows = [run_row("r", [], [], [reply("r:before")], [reply("r:after")])]
    entries = EntryLog()
    server = CompactionServer(schemas.load(), rows, entries)
    body_part = {
        "id": "b",
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "metadata",
        "body": {"ref": "urn:uuid:x", "size": 1, "sha256": "0" * 64},
    }
    invalid = {"jsonrpc": "2.0", "id": "r:before", "method": "hooks/intercept", "params": {}}
    for message in (
        invalid,
        before_request("other"),
        before_request("r", instructions=[body_part]),
    ):
        answer = server.dispatch(message)
        assert answer.reply["error"]["code"] == -32602
        assert answer.before is None
    assert entries.snapshot() == {"entries": []}
    answer = server.dispatch(before_request("r"))
    assert answer.reply == reply("r:before") and answer.gate is None  # never held
    answer.writing()
    assert [e["kind"] for e in entries.snapshot()["entries"]] == ["received", "replied"]
    assert compaction.carries_body({"instructions": [body_part]})
    assert not compaction.carries_body(before_request("r"))
