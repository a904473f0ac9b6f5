"""The elicitation suite's pure rules (sdk/elicitation.py): each receiver check
accepts its good case and refuses the broken one (and a refusal changes
nothing), and the host's rules at the request and result boundaries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from builders import PAYLOADS
from elicitation_kit import (
    AUTHENTICATED,
    FORM,
    FORM_PARAMS,
    REQUEST_CAPS,
    RESULT_CAPS,
    SERVER,
    SOURCE,
    URL_PARAMS,
    attachment,
    gap_part,
    intercept,
    reply,
    request_event,
    result_event,
    withheld_part,
)

from ahp_py.sdk import elicitation
from ahp_py.sdk.schemas import INTERCEPT_REQUEST, SchemaSet

STORED = "urn:uuid:stored"
GOOD = {"action": "accept", "content": {"name": "Ada", "age": 36}}
PROVENANCE = {"kind": "mcp", "authenticatedSource": AUTHENTICATED}


@pytest.fixture
def receiver(schema_set: SchemaSet) -> elicitation.Receiver:
    return elicitation.Receiver(schema_set.error, lambda ref: ref == STORED, AUTHENTICATED)


def accepts(receiver: elicitation.Receiver, event: dict[str, Any]) -> dict[str, Any]:
    return receiver.accept(intercept(event)).summary


def refuses(receiver: elicitation.Receiver, message: Any, status: int = 400) -> str:
    live = dict(receiver.live)
    with pytest.raises(elicitation.Refusal) as caught:
        receiver.accept(message)
    assert caught.value.status == status
    assert receiver.live == live  # a refusal changes nothing
    return str(caught.value)


def live_request(receiver: elicitation.Receiver, eid: str = "r1", session: str = "s1") -> None:
    accepts(receiver, request_event(eid, session))


# 1. The canonical envelope, and an elicitation event.


def test_a_valid_request_is_accepted_and_becomes_live(receiver: elicitation.Receiver) -> None:
    assert accepts(receiver, request_event("r1", "s1")) == {"request": FORM_PARAMS}
    assert set(receiver.live) == {"r1"}


@pytest.mark.parametrize(
    "broken",
    [
        lambda m: m["params"]["event"].pop("time"),
        lambda m: m["params"].pop("capabilities"),
        lambda m: m.update(method="hooks/observe"),
        lambda m: m["params"]["event"]["elicitation"].update(mode="sms"),
        lambda m: m["params"]["event"]["elicitation"]["request"].update(mediaType="text/html"),
        lambda m: m["params"].update(capabilities={"effects": ["modify"], "modify": {}}),
    ],
)
def test_an_invalid_intercept_request_is_refused(
    receiver: elicitation.Receiver, broken: Any
) -> None:
    message = intercept(request_event("r1", "s1"))
    broken(message)
    assert "invalid intercept request" in refuses(receiver, message)


def test_not_an_object_or_not_an_elicitation_event_is_refused(
    receiver: elicitation.Receiver, schema_set: SchemaSet
) -> None:
    refuses(receiver, [intercept(request_event("r1", "s1"))])
    refuses(receiver, None)
    other = intercept(
        {
            "id": "t1",
            "source": SOURCE,
            "time": "2026-11-03T09:00:00Z",
            "type": "tool.before",
            **PAYLOADS["tool.before"],
        },
        {"effects": ["deny"]},
    )
    assert schema_set.error(INTERCEPT_REQUEST, other) is None
    assert "not an elicitation" in refuses(receiver, other)


def test_a_message_id_other_than_the_event_id_is_refused(
    receiver: elicitation.Receiver, schema_set: SchemaSet
) -> None:
    message = intercept(request_event("r1", "s1"))
    message["id"] = "r1-another"
    assert schema_set.error(INTERCEPT_REQUEST, message) is None
    assert "not the event's id" in refuses(receiver, message)
    assert accepts(receiver, request_event("r1", "s1"))  # the refusal left nothing live


# 2. Content the event names must be stored.


def test_a_body_ref_must_name_stored_bytes(receiver: elicitation.Receiver) -> None:
    assert accepts(receiver, request_event("r1", "s1", items=[attachment(STORED)]))
    message = intercept(request_event("r2", "s1", items=[attachment("urn:uuid:never")]))
    assert "no stored content" in refuses(receiver, message, 409)
    mixed = [attachment(STORED, "a1"), attachment("urn:uuid:never", "a2")]
    refuses(receiver, intercept(request_event("r3", "s1", items=mixed)), 409)


def test_the_schema_is_checked_before_the_refs(receiver: elicitation.Receiver) -> None:
    message = intercept(request_event("r1", "s1", items=[attachment("urn:uuid:never")]))
    del message["params"]["event"]["source"]
    refuses(receiver, message, 400)


# 3. The session and the part.


def test_the_session_is_required(receiver: elicitation.Receiver) -> None:
    event = request_event("r1", "s1")
    del event["session"]
    assert "session" in refuses(receiver, intercept(event))
    event = request_event("r1", "s1", part=withheld_part("p", "omit"))
    del event["session"]
    assert "session" in refuses(receiver, intercept(event))


def test_an_absent_part_is_the_omit_selection(receiver: elicitation.Receiver) -> None:
    # interaction-payloads.md, "MCP elicitation binding": omission has no part.
    event = request_event("r1", "s1")
    del event["elicitation"]["request"]
    assert accepts(receiver, event) == {"selection": "omit"}
    assert receiver.live["r1"].selection == "omit"
    event = result_event("x1", "r1", "s1", None, action="decline")
    del event["elicitation"]["result"]
    assert accepts(receiver, event) == {
        "selection": {"request": "omit", "result": "omit"},
        "bodyValidation": "not-selected",
        "provenance": PROVENANCE,
        "externalCompletion": False,
    }
    assert "r1" not in receiver.live
    live_request(receiver, "r2")
    event = result_event("x2", "r2", "s1", GOOD)
    del event["elicitation"]["result"]
    assert accepts(receiver, event)["selection"] == {"request": "body", "result": "omit"}


def test_a_selected_gap_fails_closed(receiver: elicitation.Receiver) -> None:
    message = intercept(request_event("r1", "s1", part=gap_part("g")))
    assert "gap" in refuses(receiver, message)
    live_request(receiver)
    message = intercept(result_event("x1", "r1", "s1", GOOD, part=gap_part("g")))
    assert "gap" in refuses(receiver, message)


# 4. A request.


def test_a_live_request_id_is_refused_until_answered(receiver: elicitation.Receiver) -> None:
    live_request(receiver)
    assert "already live" in refuses(receiver, intercept(request_event("r1", "s1")))
    assert "already live" in refuses(receiver, intercept(request_event("r1", "s2")))
    accepts(receiver, result_event("x1", "r1", "s1", GOOD))
    assert accepts(receiver, request_event("r1", "s1")) == {"request": FORM_PARAMS}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "strict JSON"),
        ('{"message": "a", "message": "b", "requestedSchema": {}}', "duplicate"),
        ('["a list"]', "not a JSON object"),
        ('{"message": "Who?", "requestedSchema": {"type": "object"}}', "requestParams"),
        ('{"requestedSchema": {"type": "object", "properties": {}}}', "requestParams"),
        (json.dumps({**URL_PARAMS, "url": "not a uri"}), "requestParams"),
    ],
)
def test_a_request_body_must_be_valid_params(
    receiver: elicitation.Receiver, text: str, why: str
) -> None:
    mode = "url" if "elicitationId" in text else "form"
    message = intercept(request_event("r1", "s1", text, mode))
    assert why in refuses(receiver, message)


def test_the_body_mode_must_be_the_event_mode(receiver: elicitation.Receiver) -> None:
    # absent means form
    assert accepts(receiver, request_event("r1", "s1", FORM_PARAMS, "form"))
    explicit = {**FORM_PARAMS, "mode": "form"}
    assert accepts(receiver, request_event("r2", "s1", explicit, "form"))
    assert accepts(receiver, request_event("r3", "s1", URL_PARAMS, "url"))
    assert "mode" in refuses(receiver, intercept(request_event("r4", "s1", FORM_PARAMS, "url")))
    assert "mode" in refuses(receiver, intercept(request_event("r5", "s1", URL_PARAMS, "form")))


def test_a_form_schema_that_is_no_json_schema_is_refused(
    receiver: elicitation.Receiver,
) -> None:
    broken = {
        "message": "m",
        "requestedSchema": {
            "type": "object",
            "properties": {"n": {"type": "string", "minLength": -1}},
        },
    }
    assert "not a JSON Schema" in refuses(receiver, intercept(request_event("r1", "s1", broken)))


def test_withheld_request_bodies_are_not_checked(receiver: elicitation.Receiver) -> None:
    event = request_event("r1", "s1", part=withheld_part("p", "metadata"))
    assert accepts(receiver, event) == {"selection": "metadata"}
    event = request_event("r2", "s1", part=withheld_part("p", "omit"), mode="url")
    assert accepts(receiver, event) == {"selection": "omit"}


def test_the_summary_keeps_the_body_exactly(receiver: elicitation.Receiver) -> None:
    params = {
        "message": "Pick",
        "requestedSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer", "default": 3, "title": "N"}},
        },
        "_meta": {"trace": 1.5},
    }
    assert accepts(receiver, request_event("r1", "s1", params)) == {"request": params}


# 5. A result.


def test_a_result_answers_its_live_request(receiver: elicitation.Receiver) -> None:
    live_request(receiver)
    summary = accepts(receiver, result_event("x1", "r1", "s1", GOOD))
    assert summary == {
        "request": FORM_PARAMS,
        "result": GOOD,
        "provenance": PROVENANCE,
        "externalCompletion": False,
    }
    assert receiver.live == {}
    again = intercept(result_event("x2", "r1", "s1", GOOD))
    assert "not a live request" in refuses(receiver, again)


def test_a_result_needs_a_parent(receiver: elicitation.Receiver) -> None:
    live_request(receiver)
    event = result_event("x1", "r1", "s1", GOOD)
    del event["parentEventId"]
    assert "parentEventId" in refuses(receiver, intercept(event))
    assert "not a live" in refuses(receiver, intercept(result_event("x1", "r9", "s1", GOOD)))


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("session.id", lambda e: e.update(session={"id": "s2"})),
        ("source", lambda e: e.update(source="urn:ahp-interop:someone-else")),
        ("elicitation.server", lambda e: e["elicitation"].update(server="other")),
        ("elicitation.mode", lambda e: e["elicitation"].update(mode="url")),
    ],
)
def test_a_result_must_match_its_request(
    receiver: elicitation.Receiver, field: str, change: Any
) -> None:
    live_request(receiver)
    event = result_event("x1", "r1", "s1", {"action": "cancel"})
    change(event)
    assert field in refuses(receiver, intercept(event))
    assert accepts(receiver, result_event("x1", "r1", "s1", {"action": "cancel"}))


def test_a_result_in_another_session_is_refused_while_live_elsewhere(
    receiver: elicitation.Receiver,
) -> None:
    live_request(receiver, "r1", "s1")
    live_request(receiver, "r2", "s2")
    refuses(receiver, intercept(result_event("x1", "r1", "s2", GOOD)))
    assert accepts(receiver, result_event("x1", "r1", "s1", GOOD))


@pytest.mark.parametrize(
    ("result", "action", "why"),
    [
        ("{not json", "accept", "strict JSON"),
        ('{"action": "accept", "action": "accept"}', "accept", "duplicate"),
        ({"action": "maybe"}, "accept", "result"),
        ({"action": "decline"}, "accept", "action"),
        ({"action": "accept", "content": {"name": {"nested": 1}}}, "accept", "result"),
        ({"action": "decline", "content": {"name": "Ada"}}, "decline", "no content"),
        ({"action": "accept", "content": {"age": 3}}, "accept", "requested schema"),
        ({"action": "accept"}, "accept", "requested schema"),  # absent: {} lacks name
        ({"action": "accept", "content": {"name": "Ada", "age": 151}}, "accept", "schema"),
        ({"action": "accept", "content": {"name": "Ada", "age": 1.5}}, "accept", "schema"),
        ({"action": "accept", "content": {"name": ""}}, "accept", "schema"),
        ({"action": "accept", "content": {"name": "A", "colours": []}}, "accept", "schema"),
        ({"action": "accept", "content": {"name": "A", "colours": ["pink"]}}, "accept", "schema"),
    ],
)
def test_a_result_body_must_be_a_valid_answer(
    receiver: elicitation.Receiver, result: Any, action: str, why: str
) -> None:
    live_request(receiver)
    message = intercept(result_event("x1", "r1", "s1", result, action=action))
    assert why in refuses(receiver, message)


@pytest.mark.parametrize(
    "content",
    [
        {"name": "Ada"},
        {"name": "Ada", "email": "not an address"},  # formats are annotations
        {"name": "Ada", "colours": ["red", "blue"], "extra": True},  # no additionalProperties
    ],
)
def test_valid_form_answers_are_accepted(
    receiver: elicitation.Receiver, content: dict[str, Any]
) -> None:
    live_request(receiver)
    result = {"action": "accept", "content": content}
    assert accepts(receiver, result_event("x1", "r1", "s1", result))["result"] == result


def test_url_results_carry_no_content(receiver: elicitation.Receiver) -> None:
    accepts(receiver, request_event("r1", "s1", URL_PARAMS, "url"))
    accepts(receiver, request_event("r2", "s1", URL_PARAMS, "url"))
    bad = {"action": "accept", "content": {"done": True}}
    refuses(receiver, intercept(result_event("x1", "r1", "s1", bad, "url")))
    assert accepts(receiver, result_event("x1", "r1", "s1", {"action": "accept"}, "url"))


def test_a_withheld_request_leaves_only_the_mcp_definition(
    receiver: elicitation.Receiver,
) -> None:
    accepts(receiver, request_event("r1", "s1", part=withheld_part("p", "metadata")))
    off_form = {"action": "accept", "content": {"whatever": 7}}
    summary = accepts(receiver, result_event("x1", "r1", "s1", off_form))
    assert summary == {
        "selection": {"request": "metadata", "result": "body"},
        "bodyValidation": "not-selected",
        "provenance": PROVENANCE,
        "externalCompletion": False,
    }
    accepts(receiver, request_event("r2", "s1", part=withheld_part("p", "omit")))
    nested = {"action": "accept", "content": {"whatever": {"x": 1}}}
    refuses(receiver, intercept(result_event("x2", "r2", "s1", nested)))


def test_a_withheld_result_is_not_checked(receiver: elicitation.Receiver) -> None:
    live_request(receiver)
    event = result_event("x1", "r1", "s1", None, action="decline", part=withheld_part("p", "omit"))
    assert accepts(receiver, event)["selection"] == {"request": "body", "result": "omit"}


def test_the_form_schema_is_compiled_once_per_distinct_schema() -> None:
    forms = elicitation.FormSchemas()
    first = forms.validator(FORM)
    assert forms.validator(json.loads(json.dumps(FORM))) is first
    assert forms.validator({**FORM, "required": []}) is not first
    assert forms.error(FORM, {"name": "x"}) is None
    pattern = {"type": "object", "properties": {"c": {"type": "string", "pattern": "^a$"}}}
    assert forms.error(pattern, {"c": "a\n"})  # ECMA-262: $ is the end


# The host: the request boundary.


def host_request(params: Any = FORM_PARAMS, mode: str = "form", **caps: Any) -> dict[str, Any]:
    event = request_event("h:request", "hs", params, mode)
    return intercept(event, {**REQUEST_CAPS, **caps})


def judge(schema_set: SchemaSet, request: dict[str, Any], answer: Any) -> Any:
    def response_error(message: Any) -> str | None:
        return schema_set.error("intercept-response.schema.json", message)

    return elicitation.judge_request(
        request, answer, response_error, schema_set.error, elicitation.FormSchemas()
    )


def give(value: Any) -> dict[str, Any]:
    return {"type": "return", "value": value}


DENY = {"type": "deny", "reason": "not now"}
NOTE = {"type": "message", "text": "noted"}


def test_request_boundary_outcomes(schema_set: SchemaSet) -> None:
    request = host_request()
    assert judge(schema_set, request, reply("h:request")) == elicitation.RequestVerdict("allowed")
    assert judge(schema_set, request, reply("h:request", NOTE, DENY)).request == "denied"
    verdict = judge(schema_set, request, reply("h:request", give({"action": "cancel"}), give(GOOD)))
    assert verdict == elicitation.RequestVerdict("allowed", GOOD)  # the last return


@pytest.mark.parametrize(
    "answer",
    [
        reply("other", DENY),
        {"jsonrpc": "2.0", "id": "h:request", "error": {"code": -32602, "message": "no"}},
        reply("h:request", NOTE, give({"action": "accept", "content": {"age": 2}})),
        reply("h:request", give({"action": "decline", "content": {"name": "A"}})),
        reply("h:request", give({"action": "perhaps"})),
        reply("h:request", DENY, give({"action": "accept", "content": {"name": 5}})),
        reply(
            "h:request",
            {"type": "modify", "target": "content", "operation": "replace", "value": {}},
        ),
    ],
)
def test_request_boundary_rejections(schema_set: SchemaSet, answer: Any) -> None:
    assert judge(schema_set, host_request(), answer).request == "rejected"


def test_an_unadvertised_effect_rejects(schema_set: SchemaSet) -> None:
    request = intercept(request_event("h:request", "hs"), {"effects": ["message"]})
    assert judge(schema_set, request, reply("h:request", DENY)).request == "rejected"


def test_a_url_return_carries_no_content(schema_set: SchemaSet) -> None:
    request = host_request(URL_PARAMS, "url")
    good = judge(schema_set, request, reply("h:request", give({"action": "accept"})))
    assert good.returned == {"action": "accept"}
    bad = reply("h:request", give({"action": "accept", "content": {"x": "y"}}))
    assert judge(schema_set, request, bad).request == "rejected"


def test_a_withheld_request_checks_returns_against_mcp_only(schema_set: SchemaSet) -> None:
    event = request_event("h:request", "hs", part=withheld_part("p", "metadata"))
    request = intercept(event)
    off_form = give({"action": "accept", "content": {"other": 1}})
    assert judge(schema_set, request, reply("h:request", off_form)).request == "allowed"


# The host: the result boundary.


def test_the_result_request_is_the_documented_event(schema_set: SchemaSet) -> None:
    request_ev = request_event("row:request", "row-s")
    message = elicitation.result_request("row", request_ev, GOOD, RESULT_CAPS)
    assert schema_set.error(INTERCEPT_REQUEST, message) is None
    assert message["id"] == "row:result"
    event = message["params"]["event"]
    assert json.loads(event["elicitation"].pop("result")["text"]) == GOOD
    assert event == {
        "id": "row:result",
        "source": SOURCE,
        "time": request_ev["time"],
        "session": {"id": "row-s"},
        "type": "user.elicitation.result",
        "parentEventId": "row:request",
        "elicitation": {"server": SERVER, "mode": "form", "action": "accept"},
    }
    assert message["params"]["capabilities"] == RESULT_CAPS


def settle(schema_set: SchemaSet, result: dict[str, Any], *effects: Any, mode: str = "form") -> Any:
    request_ev = request_event(
        "row:request", "row-s", URL_PARAMS if mode == "url" else FORM_PARAMS, mode
    )
    message = elicitation.result_request("row", request_ev, result, RESULT_CAPS)

    def response_error(value: Any) -> str | None:
        return schema_set.error("intercept-response.schema.json", value)

    schema = FORM if mode == "form" else None
    return elicitation.judge_result(
        message,
        result,
        reply("row:result", *effects),
        response_error,
        schema_set.error,
        schema,
        elicitation.FormSchemas(),
    )


def edit(operation: str, value: Any) -> dict[str, Any]:
    return {"type": "modify", "target": "content", "operation": operation, "value": value}


def test_result_boundary_edits(schema_set: SchemaSet) -> None:
    assert settle(schema_set, GOOD) == elicitation.ResultVerdict(GOOD, False)
    assert settle(schema_set, GOOD, NOTE).published == GOOD
    merged = settle(schema_set, GOOD, edit("merge", {"age": 40, "colours": ["red"]}))
    assert merged == elicitation.ResultVerdict(
        {"action": "accept", "content": {"name": "Ada", "age": 40, "colours": ["red"]}}, True
    )
    replaced = settle(schema_set, GOOD, edit("replace", {"name": "Grace"}))
    assert replaced.published == {"action": "accept", "content": {"name": "Grace"}}


@pytest.mark.parametrize(
    ("result", "effects", "mode"),
    [
        (GOOD, [NOTE, edit("replace", {"age": 3})], "form"),  # the form needs name
        (GOOD, [edit("merge", {"age": 200})], "form"),
        (GOOD, [edit("merge", {"nested": {"a": 1}})], "form"),  # not answerContent
        ({"action": "decline"}, [edit("replace", {"name": "A"})], "form"),
        ({"action": "accept"}, [edit("replace", {"name": "A"})], "url"),
        (GOOD, [DENY], "form"),  # not allowed at the result boundary
    ],
)
def test_result_boundary_rejections(
    schema_set: SchemaSet, result: dict[str, Any], effects: list[Any], mode: str
) -> None:
    assert settle(schema_set, result, *effects, mode=mode).published is None
