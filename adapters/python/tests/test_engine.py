"""Focused tests of each composition rule, boundary by boundary.

The engine runs on parsed JSON without the ``intercept-response`` schema hook
here; the values a response supplies are still checked against the canonical
definitions of their slots (the engine always does that).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import (
    BOTH,
    INJECT_CAPS,
    PAYLOADS,
    elicitation_result_part,
    gap_part,
    inject,
    message,
    modify,
    request,
    response,
    text_part,
    withheld_part,
)

from ahp_py.sdk import boundaries, engine

REJECTED = {"rejected": True}
TB_EFFECTS = ["deny", "allow", "ask", "modify", "message", "return"]
MSG = {"type": "message", "text": "note"}
EXTRA = [message("m9", "user", text_part("p9", "extra"))]
SAID = [message("m9", "assistant", text_part("p9", "extra"))]  # outbound content


def run(req: dict[str, Any], resp: Any) -> dict[str, Any]:
    return engine.apply(req, resp).actual


def tool_before(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("modify", {"input": dict(BOTH)})
    effects = kwargs.pop("effects", TB_EFFECTS)
    return request("tool.before", effects, **kwargs)


def task_tool(**kwargs: Any) -> dict[str, Any]:
    tool = {"origin": "native", "name": "task", "input": {"task": 1, "keep": "yes"}}
    return tool_before(tool=tool, **kwargs)


# Envelope ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: None,
        lambda r: [r],
        lambda r: {**r, "jsonrpc": "1.0"},
        lambda r: {**r, "id": "other"},
        lambda r: {k: v for k, v in r.items() if k != "id"},
        lambda r: {**r, "error": {"code": -32000, "message": "x"}},
        lambda r: {**r, "result": None},
        lambda r: {**r, "result": {"protocolVersion": "0.1", "effects": []}},
        lambda r: {**r, "result": {"protocolVersion": "draft", "effects": {}}},
        lambda r: {**r, "result": {"protocolVersion": "draft"}},
    ],
)
def test_bad_envelopes_reject(mutate: Any) -> None:
    req = tool_before()
    assert run(req, mutate(response(req, MSG))) == REJECTED


def test_id_comparison_is_typed() -> None:
    req = tool_before(event_id="7")
    resp = response(req)
    resp["id"] = 7
    assert run(req, resp) == REJECTED
    numeric = tool_before()
    numeric["id"] = 7
    resp = response(numeric)
    resp["id"] = 7.0
    assert run(numeric, resp)["decision"] == "allow"


def test_unknown_envelope_fields_are_ignored() -> None:
    req = tool_before()
    resp = response(req, MSG)
    resp["extra"] = 1
    resp["result"]["future"] = {"x": 1}
    assert run(req, resp)["messages"] == ["note"]


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "unknown"},
        {"type": "deny"},
        {"type": "deny", "reason": ""},
        {"type": "message", "text": 3},
        {"type": "return"},
        {"type": "modify", "target": "input", "value": {}},
        {"type": "modify", "target": "input", "operation": "patch", "value": {}},
        {"type": "flow", "operation": "pause"},
        {"type": "flow", "operation": "stop"},
        "deny",
    ],
)
def test_malformed_effect_rejects_whole_response(bad: Any) -> None:
    req = tool_before(effects=[*TB_EFFECTS, "flow"], flow={"operations": ["stop"]})
    assert run(req, response(req, MSG, {"type": "allow"}, bad)) == REJECTED


def test_schema_hook_rejects() -> None:
    req = tool_before()
    outcome = engine.apply(req, response(req, MSG), lambda message: "nope")
    assert outcome.actual == REJECTED and outcome.reason and "nope" in outcome.reason


# Permission -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("incoming", "effects", "decision"),
    [
        (None, [], "allow"),
        ("none", [{"type": "allow"}], "allow"),
        ("none", [{"type": "ask"}, {"type": "allow"}], "ask"),
        (
            "none",
            [{"type": "allow"}, {"type": "deny", "reason": "r"}, {"type": "ask"}],
            "deny",
        ),
        ("ask", [{"type": "allow"}], "ask"),
        ("deny", [], "deny"),
        ("allow", [{"type": "ask"}], "ask"),
    ],
)
def test_permission_precedence(incoming: str | None, effects: list[Any], decision: str) -> None:
    state = None if incoming is None else {"permission": incoming, "candidate": None}
    req = tool_before(state=state)
    actual = run(req, response(req, *effects))
    assert actual["decision"] == decision
    assert actual["executed"] is (decision == "allow")


def test_messages_survive_deny_in_order() -> None:
    req = tool_before()
    resp = response(
        req,
        {"type": "message", "text": "a"},
        {"type": "deny", "reason": "r"},
        {"type": "message", "text": "b"},
    )
    assert run(req, resp)["messages"] == ["a", "b"]


def test_unadvertised_effect_rejects() -> None:
    req = tool_before(effects=["allow", "message"], modify=None)
    assert run(req, response(req, MSG, {"type": "deny", "reason": "r"})) == REJECTED


# Modification -----------------------------------------------------------------


def test_merge_is_shallow_and_null_is_a_value() -> None:
    tool = {"origin": "native", "name": "w", "input": {"a": {"x": 1, "y": 2}, "b": 1}}
    req = tool_before(tool=tool)
    actual = run(req, response(req, modify("input", "merge", {"a": {"x": 9}, "b": None})))
    assert actual["input"] == {"a": {"x": 9}, "b": None}
    assert actual["effective"] == {"input": {"a": {"x": 9}, "b": None}}


def test_replace_then_merge_is_serial() -> None:
    req = tool_before()
    resp = response(req, modify("input", "replace", {"p": 1}), modify("input", "merge", {"q": 2}))
    assert run(req, resp)["input"] == {"p": 1, "q": 2}


@pytest.mark.parametrize("operation", ["replace", "merge"])
def test_operation_flag_must_be_true(operation: str) -> None:
    req = tool_before(
        modify={"input": {"replace": operation != "replace", "merge": operation != "merge"}}
    )
    assert run(req, response(req, modify("input", operation, {"p": 1}))) == REJECTED


@pytest.mark.parametrize("value", [[], "x", 1, None])
def test_input_value_must_be_an_object(value: Any) -> None:
    req = tool_before()
    assert run(req, response(req, modify("input", "merge", value))) == REJECTED


def test_foreign_target_rejects_even_if_advertised() -> None:
    req = tool_before(modify={"input": dict(BOTH), "output": dict(BOTH)})
    assert run(req, response(req, modify("output", "merge", []))) == REJECTED


# Candidate --------------------------------------------------------------------


def candidate_state(permission: str = "none") -> dict[str, Any]:
    return {"permission": permission, "candidate": {"value": {"cached": 1}}}


def test_incoming_candidate_kept_for_deep_equal_input() -> None:
    req = tool_before(state=candidate_state())
    same = dict(reversed(list(req["params"]["event"]["tool"]["input"].items())))
    actual = run(req, response(req, modify("input", "replace", same)))
    assert actual["result"] == {"cached": 1} and actual["executed"] is False


def test_modified_then_restored_input_keeps_candidate() -> None:
    """Judged on the final staged value: a restored input keeps the candidate."""
    req = tool_before(state=candidate_state())
    original = req["params"]["event"]["tool"]["input"]
    resp = response(
        req,
        modify("input", "merge", {"mode": "x"}),
        modify("input", "replace", dict(reversed(list(original.items())))),
    )
    actual = run(req, resp)
    assert actual["result"] == {"cached": 1} and actual["executed"] is False
    assert actual["input"] == original


def test_changed_input_drops_candidate() -> None:
    req = tool_before(state=candidate_state())
    resp = response(req, modify("input", "merge", {"mode": "x"}))
    actual = run(req, resp)
    assert "result" not in actual and actual["executed"] is True


def test_input_equal_only_under_strict_json_typing_keeps_candidate() -> None:
    """1 equals 1.0, but a boolean is not a number."""
    tool = {"origin": "native", "name": "w", "input": {"n": 1, "b": True}}
    req = tool_before(tool=tool, state=candidate_state())
    same = run(req, response(req, modify("input", "merge", {"n": 1.0})))
    assert same["result"] == {"cached": 1}
    changed = run(req, response(req, modify("input", "merge", {"b": 1})))
    assert "result" not in changed and changed["executed"] is True


def test_return_binds_after_modifications_and_last_return_wins() -> None:
    req = tool_before(state=candidate_state())
    resp = response(
        req,
        {"type": "return", "value": 1},
        modify("input", "merge", {"mode": "x"}),
        {"type": "return", "value": [2]},
    )
    actual = run(req, resp)
    assert actual["result"] == [2] and actual["executed"] is False


def test_null_candidate_value_is_a_result() -> None:
    req = tool_before(state={"permission": "none", "candidate": {"value": None}})
    actual = run(req, response(req))
    assert "result" in actual and actual["result"] is None


def test_candidate_unused_under_ask_or_stop() -> None:
    req = tool_before(state=candidate_state("ask"))
    assert "result" not in run(req, response(req))
    req = tool_before(
        state={"permission": "none", "candidate": {"value": 1}, "flow": "stop"},
        effects=[*TB_EFFECTS, "flow"],
        flow={"operations": ["stop"]},
    )
    actual = run(req, response(req))
    assert "result" not in actual and actual["flow"] == "stop" and actual["executed"] is False


REPLY = [message("r1", "assistant", text_part("r1p", "cached reply"))]


def model_request(**kwargs: Any) -> dict[str, Any]:
    return request(
        "model.request.before",
        ["deny", "modify", "return", "message"],
        modify={"request": dict(BOTH)},
        **kwargs,
    )


def test_list_modified_then_restored_keeps_candidate() -> None:
    """Merge a message, then replace with the original list (nothing withheld)."""
    req = model_request(state={"permission": "none", "candidate": {"value": REPLY}})
    original = req["params"]["event"]["items"]
    resp = response(req, modify("request", "merge", EXTRA), modify("request", "replace", original))
    actual = run(req, resp)
    assert actual["result"] == REPLY and actual["executed"] is False
    assert actual["effective"] == {"request": original}


def test_changed_list_drops_candidate() -> None:
    req = model_request(state={"permission": "none", "candidate": {"value": REPLY}})
    actual = run(req, response(req, modify("request", "merge", EXTRA)))
    assert "result" not in actual and actual["executed"] is True


@pytest.mark.parametrize("event_type", ["tool.after", "workspace.change.before"])
def test_incoming_candidate_ignored_where_return_is_not_allowed(
    event_type: str,
) -> None:
    req = request(event_type, ["message"], state={"permission": "none", "candidate": {"value": 1}})
    assert "result" not in run(req, response(req, MSG))


# Incoming grant and the permission key -----------------------------------------


def test_restored_input_keeps_incoming_allow() -> None:
    req = tool_before(state={"permission": "allow", "candidate": None})
    original = req["params"]["event"]["tool"]["input"]
    resp = response(
        req,
        modify("input", "merge", {"mode": "x"}),
        modify("input", "replace", original),
    )
    actual = run(req, resp)
    assert actual["permission"] == "allow" and actual["decision"] == "allow"


def test_unmodified_input_keeps_incoming_allow() -> None:
    req = tool_before(state={"permission": "allow", "candidate": None})
    actual = run(req, response(req, MSG))
    assert actual["permission"] == "allow" and actual["decision"] == "allow"


def test_changed_input_drops_incoming_allow() -> None:
    req = tool_before(state={"permission": "allow", "candidate": None})
    actual = run(req, response(req, modify("input", "merge", {"mode": "x"})))
    assert actual["permission"] == "none"
    assert actual["decision"] == "allow" and actual["executed"] is True


def test_own_allow_is_dropped_by_a_change_too() -> None:
    """An allow is for the original value (upstream observation-chain-continue)."""
    req = tool_before(state={"permission": "none", "candidate": None})
    resp = response(req, modify("input", "merge", {"mode": "x"}), {"type": "allow"})
    assert run(req, resp)["permission"] == "none"
    kept = response(req, {"type": "allow"})
    assert run(req, kept)["permission"] == "allow"


@pytest.mark.parametrize("incoming", ["ask", "deny"])
def test_changed_input_never_invalidates_ask_or_deny(incoming: str) -> None:
    req = tool_before(state={"permission": incoming, "candidate": None})
    actual = run(req, response(req, modify("input", "merge", {"mode": "x"})))
    assert actual["permission"] == incoming and actual["decision"] == incoming
    assert actual["executed"] is False


def test_changed_list_drops_incoming_allow_and_candidate() -> None:
    req = model_request(state={"permission": "allow", "candidate": {"value": REPLY}})
    actual = run(req, response(req, modify("request", "merge", EXTRA)))
    assert actual["permission"] == "none" and actual["decision"] == "allow"
    assert "result" not in actual and actual["executed"] is True


@pytest.mark.parametrize(
    ("event_type", "target", "value"),
    [
        ("user.message.outbound", "content", SAID),
        ("workspace.change.before", "workspace", {"cwd": "/elsewhere"}),
        ("context.compact.before", "instructions", [text_part("i2", "more")]),
    ],
)
def test_changed_value_drops_incoming_allow_at_every_gated_boundary(
    event_type: str, target: str, value: Any
) -> None:
    state = {"permission": "allow", "candidate": None}
    req = request(event_type, ["deny", "modify"], modify={target: dict(BOTH)}, state=state)
    assert run(req, response(req))["permission"] == "allow"
    actual = run(req, response(req, modify(target, "merge", value)))
    assert actual["permission"] == "none" and actual["decision"] == "allow"
    assert actual["executed"] is True


@pytest.mark.parametrize(
    ("incoming", "effects", "permission"),
    [
        (None, [], "none"),
        ("none", [], "none"),
        ("none", [{"type": "allow"}], "allow"),
        ("allow", [], "allow"),
        ("none", [{"type": "ask"}, {"type": "allow"}], "ask"),
        ("allow", [{"type": "deny", "reason": "r"}], "deny"),
        ("deny", [{"type": "allow"}], "deny"),
    ],
)
def test_permission_key_is_the_strongest_before_none_resolves(
    incoming: str | None, effects: list[Any], permission: str
) -> None:
    state = None if incoming is None else {"permission": incoming, "candidate": None}
    req = tool_before(state=state)
    actual = run(req, response(req, *effects))
    assert actual["permission"] == permission
    assert actual["decision"] == ("allow" if permission == "none" else permission)


@pytest.mark.parametrize("event_type", sorted(PAYLOADS))
def test_permission_key_exactly_at_gated_boundaries(event_type: str) -> None:
    state = {"permission": "ask", "candidate": None}
    req = request(event_type, ["message"], state=state)
    actual = run(req, response(req, MSG))
    gated = boundaries.BOUNDARIES[event_type].permission
    assert gated is (
        event_type
        in {
            "tool.before",
            "model.request.before",
            "context.compact.before",
            "user.message.outbound",
            "workspace.change.before",
        }
    )
    if gated:
        assert actual["permission"] == "ask" and actual["decision"] == "ask"
    else:
        assert "permission" not in actual and actual["decision"] == "allow"
    assert run(req, response(req, MSG, {"type": "bogus"})) == REJECTED


# Flow -------------------------------------------------------------------------


def finish(remaining: int = 2, operations: list[str] | None = None) -> dict[str, Any]:
    flow = {
        "operations": operations or ["stop", "continue"],
        "remainingContinuations": remaining,
        "continuationCount": 0,
        "maxContinuations": 2,
    }
    return request("turn.finish.before", ["flow", "message"], flow=flow)


def proceed(instruction: str | None = None) -> dict[str, Any]:
    effect: dict[str, Any] = {"type": "flow", "operation": "continue"}
    if instruction is not None:
        effect["instruction"] = instruction
    return effect


STOP = {"type": "flow", "operation": "stop", "reason": "enough"}


def test_continues_share_one_allowance() -> None:
    req = finish(remaining=1)
    actual = run(req, response(req, proceed("a"), proceed(), proceed("b")))
    assert actual["flow"] == "continue"
    assert actual["continuationInstructions"] == ["a", "b"]
    assert actual["continuationRemaining"] == 0
    assert actual["decision"] == "allow" and actual["executed"] is False
    assert actual["effective"] == {"response": req["params"]["event"]["items"]}


def test_stop_wins_regardless_of_order() -> None:
    req = finish()
    for effects in ((STOP, proceed("a")), (proceed("a"), STOP)):
        actual = run(req, response(req, *effects))
        assert actual["flow"] == "stop"
        assert actual["continuationInstructions"] == ["a"]
        assert actual["continuationRemaining"] == 2


def test_exhausted_allowance_rejects_even_with_stop() -> None:
    req = finish(remaining=0)
    assert run(req, response(req, MSG, STOP, proceed())) == REJECTED
    assert run(req, response(req, STOP))["flow"] == "stop"


def test_no_flow_key_without_flow_outcome() -> None:
    req = finish()
    actual = run(req, response(req, MSG))
    assert "flow" not in actual and actual["continuationRemaining"] == 2


def test_continuation_keys_absent_without_continue_capability() -> None:
    req = tool_before(effects=[*TB_EFFECTS, "flow"], flow={"operations": ["stop"]})
    actual = run(req, response(req, STOP))
    assert actual["flow"] == "stop" and "continuationRemaining" not in actual


def test_continue_never_allowed_at_tool_before() -> None:
    req = tool_before(
        effects=[*TB_EFFECTS, "flow"],
        flow={
            "operations": ["stop", "continue"],
            "remainingContinuations": 1,
            "continuationCount": 0,
        },
    )
    assert run(req, response(req, proceed())) == REJECTED


def test_incoming_stop_is_a_stop() -> None:
    req = tool_before(state={"permission": "none", "candidate": None, "flow": "stop"})
    actual = run(req, response(req, {"type": "allow"}))
    assert actual["flow"] == "stop" and actual["executed"] is False


def finish_with(flow: str, remaining: int = 2, **kwargs: Any) -> dict[str, Any]:
    """turn.finish.before whose state carries ``flow`` from an earlier interceptor."""
    req = finish(remaining, **kwargs)
    req["params"]["state"] = {"permission": "none", "candidate": None, "flow": flow}
    return req


def test_incoming_continue_is_a_continue_outcome() -> None:
    req = finish_with("continue", remaining=2)
    actual = run(req, response(req))
    assert actual["flow"] == "continue" and actual["continuationRemaining"] == 1
    assert actual["continuationInstructions"] == []


def test_incoming_continue_and_effect_share_one_allowance() -> None:
    req = finish_with("continue", remaining=1)
    actual = run(req, response(req, proceed("again")))
    assert actual["flow"] == "continue" and actual["continuationRemaining"] == 0
    assert actual["continuationInstructions"] == ["again"]


def test_incoming_continue_loses_to_a_stop() -> None:
    req = finish_with("continue", remaining=2)
    actual = run(req, response(req, STOP))
    assert actual["flow"] == "stop" and actual["continuationRemaining"] == 2


def test_incoming_continue_ignored_without_continue_advertised() -> None:
    req = finish_with("continue", remaining=2, operations=["stop"])
    actual = run(req, response(req, MSG))
    assert "flow" not in actual and "continuationRemaining" not in actual
    assert "continuationInstructions" not in actual


def test_incoming_continue_ignored_without_allowance_left() -> None:
    """Undefined by the protocol; this engine ignores it (never a negative count)."""
    req = finish_with("continue", remaining=0)
    actual = run(req, response(req, MSG))
    assert "flow" not in actual and actual["continuationRemaining"] == 0
    assert run(req, response(req, proceed())) == REJECTED


def test_incoming_none_flow_is_no_flow() -> None:
    req = finish_with("none", remaining=2)
    actual = run(req, response(req, MSG))
    assert "flow" not in actual and actual["continuationRemaining"] == 2


def test_incoming_state_instructions_are_not_read() -> None:
    req = finish_with("continue", remaining=2)
    req["params"]["state"]["instructions"] = ["from earlier"]
    actual = run(req, response(req, proceed("mine")))
    assert actual["continuationInstructions"] == ["mine"]


# Injection --------------------------------------------------------------------


def test_injections_reported_whole_and_in_order() -> None:
    req = tool_before(effects=[*TB_EFFECTS, "inject"], inject=INJECT_CAPS)
    first, second = inject("now", "one"), inject("next_turn", "two")
    actual = run(req, response(req, first, {"type": "deny", "reason": "r"}, second))
    assert actual["injections"] == [first, second] and actual["decision"] == "deny"


def test_no_injections_key_without_injections() -> None:
    req = tool_before(effects=[*TB_EFFECTS, "inject"], inject=INJECT_CAPS)
    assert "injections" not in run(req, response(req))


def test_unadvertised_delivery_rejects() -> None:
    caps = {"context": {"append": True, "deliverAt": ["now"]}}
    req = tool_before(effects=[*TB_EFFECTS, "inject"], inject=caps)
    assert run(req, response(req, inject("now"), inject("next_turn"))) == REJECTED


def test_inject_value_must_be_messages() -> None:
    req = tool_before(effects=[*TB_EFFECTS, "inject"], inject=INJECT_CAPS)
    bad = dict(inject(), value=[text_part("p", "bare part")])
    assert run(req, response(req, bad)) == REJECTED


# Host rule --------------------------------------------------------------------


@pytest.mark.parametrize("task", [True, 1.5, 0, -1, "1", None])
def test_host_rule_rejects_bad_task(task: Any) -> None:
    req = task_tool()
    assert run(req, response(req, MSG, modify("input", "merge", {"task": task}))) == REJECTED


def test_host_rule_accepts_integer_valued_float_and_checks_final_value() -> None:
    req = task_tool()
    resp = response(
        req,
        modify("input", "merge", {"task": 0}),
        modify("input", "merge", {"task": 2.0}),
    )
    assert run(req, resp)["input"]["task"] == 2.0


def test_host_rule_only_for_task_tool() -> None:
    req = tool_before()
    assert run(req, response(req, modify("input", "replace", {"task": 0})))["input"] == {"task": 0}


# Message-list boundaries ------------------------------------------------------


@pytest.mark.parametrize(
    ("event_type", "target", "gated", "effects", "extra"),
    [
        ("tool.after", "output", False, ["modify", "message"], EXTRA),
        ("turn.finish.before", "response", False, ["modify", "message"], EXTRA),
        ("model.request.before", "request", True, ["deny", "modify", "message"], EXTRA),
        ("user.message.outbound", "content", True, ["deny", "modify", "message"], SAID),
    ],
)
def test_message_list_targets(
    event_type: str, target: str, gated: bool, effects: list[str], extra: list[Any]
) -> None:
    req = request(event_type, effects, modify={target: dict(BOTH)})
    original = req["params"]["event"]
    items = (
        original["message"]["messages"]
        if event_type == "user.message.outbound"
        else original["items"]
    )
    actual = run(
        req,
        response(req, modify(target, "merge", extra), modify(target, "merge", extra)),
    )
    assert actual["effective"] == {target: items + extra + extra}
    assert actual["decision"] == "allow" and actual["executed"] is gated
    assert "input" not in actual
    assert run(req, response(req, modify(target, "replace", extra)))["effective"] == {target: extra}
    for bad in ({"id": "m"}, [text_part("p", "bare")], "text", [message("m", "robot")]):
        assert run(req, response(req, MSG, modify(target, "merge", bad))) == REJECTED


@pytest.mark.parametrize(
    "withheld",
    [withheld_part("w", "omit"), withheld_part("w", "metadata"), gap_part("w")],
)
def test_replace_over_withheld_content_rejects_but_append_does_not(
    withheld: dict[str, Any],
) -> None:
    items = [message("m1", "tool", text_part("p1", "shown"), withheld)]
    req = request("tool.after", ["modify"], modify={"output": dict(BOTH)}, items=items)
    assert run(req, response(req, modify("output", "replace", EXTRA))) == REJECTED
    assert run(req, response(req, modify("output", "merge", EXTRA)))["effective"] == {
        "output": items + EXTRA
    }


def test_replace_over_withheld_content_staged_by_an_earlier_append() -> None:
    req = request("tool.after", ["modify"], modify={"output": dict(BOTH)})
    hidden = [message("m2", "tool", withheld_part("w"))]
    resp = response(req, modify("output", "merge", hidden), modify("output", "replace", EXTRA))
    assert run(req, resp) == REJECTED


@pytest.mark.parametrize(
    "event_type",
    [
        "tool.after",
        "turn.finish.before",
        "user.message.outbound",
        "context.compact.after",
        "workspace.change.before",
        "user.elicitation.result",
    ],
)
def test_return_not_allowed(event_type: str) -> None:
    req = request(event_type, ["return", "message"])
    assert run(req, response(req, {"type": "return", "value": []})) == REJECTED


def test_model_request_return_is_a_message_list() -> None:
    req = request(
        "model.request.before",
        ["deny", "modify", "return"],
        modify={"request": dict(BOTH)},
    )
    actual = run(req, response(req, {"type": "return", "value": EXTRA}))
    assert actual["result"] == EXTRA and actual["executed"] is False
    assert run(req, response(req, {"type": "return", "value": {"text": "x"}})) == REJECTED


def test_permission_effects_not_allowed_where_there_is_no_permission() -> None:
    req = request("tool.after", ["deny", "allow", "message"])
    assert run(req, response(req, {"type": "deny", "reason": "r"})) == REJECTED
    actual = run(
        request("tool.after", ["message"], state={"permission": "deny", "candidate": None}),
        response(request("tool.after", ["message"])),
    )
    assert actual["decision"] == "allow" and actual["executed"] is False


# Text-part-list boundaries ----------------------------------------------------


def test_compaction_instructions_absent_means_empty() -> None:
    req = request(
        "context.compact.before",
        ["deny", "modify", "return"],
        modify={"instructions": dict(BOTH)},
        instructions=None,
    )
    extra = [text_part("i2", "more")]
    actual = run(req, response(req, modify("instructions", "merge", extra)))
    assert actual["effective"] == {"instructions": extra} and actual["executed"] is True
    summary = [text_part("s", "summary")]
    actual = run(req, response(req, {"type": "return", "value": summary}))
    assert actual["result"] == summary and actual["executed"] is False


@pytest.mark.parametrize(
    "event_type,target",
    [("context.compact.before", "instructions"), ("context.compact.after", "summary")],
)
def test_text_part_lists_refuse_messages_and_attachments(event_type: str, target: str) -> None:
    req = request(event_type, ["modify", "message"], modify={target: dict(BOTH)})
    attachment = {
        "id": "a",
        "kind": "attachment",
        "mediaType": "image/png",
        "selection": "body",
        "body": {"ref": "r1"},
    }
    for bad in (EXTRA, [attachment], {"text": "x"}):
        assert run(req, response(req, MSG, modify(target, "merge", bad))) == REJECTED


def test_compact_after_is_not_gated() -> None:
    req = request("context.compact.after", ["modify"], modify={"summary": dict(BOTH)})
    actual = run(req, response(req, modify("summary", "replace", [text_part("s2", "new")])))
    assert actual == {
        "decision": "allow",
        "executed": False,
        "messages": [],
        "effective": {"summary": [text_part("s2", "new")]},
    }


# Elicitation ------------------------------------------------------------------


def elicitation(mode: str = "form", action: str = "accept", **result: Any) -> dict[str, Any]:
    carried = {"action": action, "content": {"name": "old", "keep": True}, **result}
    el = {
        "server": "srv",
        "mode": mode,
        "action": action,
        "result": elicitation_result_part(carried),
    }
    return request(
        "user.elicitation.result",
        ["modify", "message"],
        modify={"content": dict(BOTH)},
        elicitation=el,
    )


def test_elicitation_answer_merge_and_replace() -> None:
    req = elicitation()
    actual = run(req, response(req, modify("content", "merge", {"name": "new", "tags": ["a"]})))
    assert actual["effective"] == {"content": {"name": "new", "keep": True, "tags": ["a"]}}
    assert actual["executed"] is False and actual["decision"] == "allow"
    actual = run(req, response(req, modify("content", "replace", {"n": 1.5})))
    assert actual["effective"] == {"content": {"n": 1.5}}


@pytest.mark.parametrize("value", [{"a": {"b": 1}}, {"a": [1]}, {"a": None}, ["x"], "x"])
def test_elicitation_answer_values_are_flat(value: Any) -> None:
    req = elicitation()
    assert run(req, response(req, MSG, modify("content", "merge", value))) == REJECTED


@pytest.mark.parametrize(
    ("mode", "action"), [("url", "accept"), ("form", "decline"), ("form", "cancel")]
)
def test_elicitation_edit_needs_accepted_form(mode: str, action: str) -> None:
    req = elicitation(mode=mode, action=action)
    assert run(req, response(req, MSG, modify("content", "merge", {"name": "x"}))) == REJECTED
    assert run(req, response(req, MSG))["messages"] == ["note"]


def test_elicitation_edit_needs_body_selection() -> None:
    req = elicitation()
    req["params"]["event"]["elicitation"]["result"] = withheld_part("mcp-result", "metadata")
    assert run(req, response(req, modify("content", "merge", {"name": "x"}))) == REJECTED


# Workspace --------------------------------------------------------------------


def test_workspace_change() -> None:
    req = request("workspace.change.before", ["deny", "modify"], modify={"workspace": dict(BOTH)})
    actual = run(req, response(req, modify("workspace", "merge", {"workspaceRoots": ["/a"]})))
    assert actual["effective"] == {"workspace": {"cwd": "/new", "workspaceRoots": ["/a"]}}
    assert actual["executed"] is True
    actual = run(req, response(req, {"type": "deny", "reason": "no"}))
    assert actual["decision"] == "deny" and actual["executed"] is False
    bad: Any
    for bad in (
        {},
        {"cwd": 1},
        {"cwd": "/x", "kind": "cwd"},
        {"workspaceRoots": "/a"},
        [],
        None,
    ):
        assert run(req, response(req, modify("workspace", "replace", bad))) == REJECTED


# Canonical slot definitions ---------------------------------------------------


def test_return_part_with_empty_category_rejects() -> None:
    req = model_request()
    bad = [message("r1", "assistant", text_part("r1p", "reply", category=""))]
    assert run(req, response(req, MSG, {"type": "return", "value": bad})) == REJECTED
    good = [message("r1", "assistant", text_part("r1p", "reply", category="answer"))]
    assert run(req, response(req, {"type": "return", "value": good}))["result"] == good


def test_compaction_return_part_with_empty_category_rejects() -> None:
    req = request(
        "context.compact.before",
        ["deny", "modify", "return", "message"],
        modify={"instructions": dict(BOTH)},
    )
    bad = [text_part("s1", "summary", category="")]
    assert run(req, response(req, MSG, {"type": "return", "value": bad})) == REJECTED


def attachment(media_type: str) -> dict[str, Any]:
    return {
        "id": "a1",
        "kind": "attachment",
        "mediaType": media_type,
        "selection": "body",
        "body": {"ref": "r1"},
    }


@pytest.mark.parametrize(
    "part",
    [
        text_part("p9", "extra", category=""),
        attachment(""),
        attachment("Text/HTML"),
        attachment("application/json; charset=utf-8"),
        attachment("application/ld+json;x=1"),
        attachment("application/vnd.x+json"),
        {**gap_part("p9"), "gap": {"reason": ""}},
        {**gap_part("p9"), "gap": {"reason": "gone", "path": ""}},
        {**withheld_part("p9", "metadata"), "sha256": "A" * 64},
        {**withheld_part("p9", "metadata"), "size": -1},
        text_part("", "no id"),
    ],
)
def test_message_parts_follow_the_canonical_schema(part: dict[str, Any]) -> None:
    req = request("tool.after", ["modify", "message"], modify={"output": dict(BOTH)})
    value = [message("m9", "tool", part)]
    assert run(req, response(req, MSG, modify("output", "merge", value))) == REJECTED


def test_canonical_attachment_and_metadata_parts_are_accepted() -> None:
    req = request("tool.after", ["modify"], modify={"output": dict(BOTH)})
    parts = [
        attachment("image/png"),
        # The spec's schema asks no type/subtype form: only not text, not JSON.
        {**attachment("png"), "id": "a2"},
        {**attachment("image/png; q=1"), "id": "a3"},
        {**withheld_part("p8", "metadata"), "sha256": "a" * 64, "size": 0},
    ]
    value = [message("m9", "tool", *parts)]
    actual = run(req, response(req, modify("output", "merge", value)))
    assert actual["effective"]["output"][-1] == value[0]


@pytest.mark.parametrize("operation", ["merge", "replace"])
def test_outbound_content_must_be_assistant_messages(operation: str) -> None:
    req = request(
        "user.message.outbound",
        ["deny", "modify", "message"],
        modify={"content": dict(BOTH)},
    )
    resp = response(req, MSG, modify("content", operation, EXTRA))
    assert run(req, resp) == REJECTED
    assert run(req, response(req, modify("content", operation, SAID)))["effective"]


@pytest.mark.parametrize(
    "value", [{"cwd": ""}, {"workspaceRoots": [""]}, {"cwd": "/a", "prior": {}}]
)
@pytest.mark.parametrize("operation", ["merge", "replace"])
def test_workspace_change_follows_the_canonical_schema(
    operation: str, value: dict[str, Any]
) -> None:
    req = request(
        "workspace.change.before",
        ["deny", "modify", "message"],
        modify={"workspace": dict(BOTH)},
    )
    assert run(req, response(req, MSG, modify("workspace", operation, value))) == (REJECTED)


def test_inject_value_follows_the_canonical_schema() -> None:
    req = tool_before(effects=[*TB_EFFECTS, "inject"], inject=INJECT_CAPS)
    bad = dict(inject(), value=[message("c", "user", text_part("t", "x", category=""))])
    assert run(req, response(req, MSG, bad)) == REJECTED


def test_edits_need_a_canonical_carried_answer() -> None:
    req = elicitation()
    part = elicitation_result_part({"action": "accept", "content": {"a": {"b": 1}}})
    req["params"]["event"]["elicitation"]["result"] = part
    resp = response(req, MSG, modify("content", "replace", {"name": "x"}))
    assert run(req, resp) == REJECTED
    assert run(req, response(req, MSG))["messages"] == ["note"]


def test_every_supplied_value_is_checked_against_its_definition() -> None:
    """modify values, staged values after a merge, returns and inject values."""
    from ahp_py.sdk import schemas

    seen: list[tuple[str, Any]] = []
    canonical = schemas.load()

    def check(definition: str, value: Any) -> str | None:
        seen.append((definition, value))
        return canonical.error(definition, value)

    req = request(
        "model.request.before",
        ["modify", "return", "inject"],
        modify={"request": dict(BOTH)},
        inject=INJECT_CAPS,
    )
    original = req["params"]["event"]["items"]
    injected = inject()
    resp = response(
        req,
        modify("request", "merge", EXTRA),
        modify("request", "replace", EXTRA),
        {"type": "return", "value": REPLY},
        injected,
    )
    assert "rejected" not in engine.apply(req, resp, definition_error=check).actual
    m = boundaries.MESSAGES
    assert seen == [
        (m, original),  # the event's own value, before the first edit
        (m, EXTRA),  # the merge value
        (m, original + EXTRA),  # the staged value after the merge
        (m, EXTRA),  # the replace value (it is the staged value)
        (m, REPLY),  # the return value
        (m, injected["value"]),  # the inject value
    ]


def test_a_failing_definition_check_rejects_the_whole_response() -> None:
    req = tool_before()
    outcome = engine.apply(
        req,
        response(req, MSG, modify("input", "merge", {"p": 1})),
        definition_error=lambda definition, value: f"not {definition}",
    )
    assert outcome.actual == REJECTED
    assert outcome.reason and "common.schema.json#/$defs/tool" in outcome.reason


# Unsupported ------------------------------------------------------------------


def test_unimplemented_event_is_unsupported() -> None:
    req = request("tool.before", ["deny"])
    req["params"]["event"]["type"] = "session.start"
    with pytest.raises(engine.Unsupported):
        engine.apply(req, response(req))
