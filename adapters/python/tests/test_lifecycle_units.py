"""The lifecycle suite's pure parts: the state an accepted reply leaves for the
next interceptor, chain projections, effective values in events, body refs."""

from __future__ import annotations

from typing import Any

import pytest
from builders import modify, response
from lifecycle_kit import ORIGINAL, attachment, lc_request

from ahp_py.sdk import chain, engine
from ahp_py.sdk.boundaries import BOUNDARIES
from ahp_py.sdk.content import body_refs, rebind_refs

TOOL = BOUNDARIES["tool.before"]


def state_after(req: dict[str, Any], *effects: dict[str, Any]) -> Any:
    outcome = engine.apply(req, response(req, *effects), host_rule=False)
    assert outcome.reason is None, outcome.reason
    return outcome.state


@pytest.mark.parametrize(
    ("incoming", "effects", "permission"),
    [
        ("none", [modify("input", "replace", {"v": 1}), {"type": "allow"}], "none"),
        ("none", [{"type": "allow"}], "allow"),
        ("allow", [modify("input", "merge", {"v": 1})], "none"),
        ("ask", [{"type": "allow"}], "ask"),
        ("deny", [{"type": "ask"}], "deny"),
        ("none", [{"type": "ask"}, modify("input", "replace", {"v": 1})], "ask"),
        ("none", [], "none"),
    ],
)
def test_the_carried_permission(incoming: str, effects: list[Any], permission: str) -> None:
    req = lc_request("u:a")
    req["params"]["state"] = {"permission": incoming, "candidate": None}
    assert state_after(req, *effects) == {"permission": permission, "candidate": None}


def test_the_carried_candidate_and_flow() -> None:
    req = lc_request("u:a")
    req["params"]["capabilities"]["effects"].append("return")
    assert state_after(req, {"type": "return", "value": 0}) == {
        "permission": "none",
        "candidate": {"value": 0},
    }
    stopped = state_after(req, {"type": "flow", "operation": "stop", "reason": "r"})
    assert stopped == {"permission": "none", "candidate": None, "flow": "stop"}


def test_a_rejected_reply_leaves_no_state() -> None:
    req = lc_request("u:a")
    outcome = engine.apply(req, response(req, {"type": "return", "value": 1}), host_rule=False)
    assert outcome.actual == {"rejected": True} and outcome.state is None


def test_the_host_rule_is_the_core_suites() -> None:
    req = lc_request("u:a", tool={"origin": "native", "name": "task", "input": {"value": "x"}})
    reply = response(req, {"type": "allow"})
    assert engine.apply(req, reply).actual == {"rejected": True}
    assert engine.apply(req, reply, host_rule=False).actual["decision"] == "allow"


def test_requests_for_each_subscription() -> None:
    req = lc_request("u:a", items=[attachment("r1")])
    state = {"permission": "ask", "candidate": None}
    seen = chain.request_for(req, TOOL, {"v": 2}, state, "omit")
    assert seen["params"]["event"]["items"] == []
    assert seen["params"]["event"]["tool"]["input"] == {"v": 2}
    assert seen["params"]["state"] == state
    kept = chain.request_for(req, TOOL, ORIGINAL, None, "metadata")
    assert kept == req and kept is not req
    assert req["params"]["event"]["tool"]["input"] == ORIGINAL  # never changed in place
    bare = lc_request("u:b")
    assert "items" not in chain.request_for(bare, TOOL, ORIGINAL, None, "omit")["params"]["event"]


def test_observations_carry_the_settled_event_only() -> None:
    req = lc_request("u:a", items=[attachment("r1")])
    note = chain.observation_for(req, TOOL, {"v": 3}, "omit")
    assert note == {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {
            "protocolVersion": "draft",
            "event": {
                **req["params"]["event"],
                "tool": {**req["params"]["event"]["tool"], "input": {"v": 3}},
                "items": [],
            },
        },
    }


def test_short_circuits() -> None:
    req = lc_request("u:a")
    for effects, ends in (
        ([{"type": "deny", "reason": "r"}], True),
        ([{"type": "flow", "operation": "stop", "reason": "r"}], True),
        ([{"type": "ask"}], False),
        ([modify("input", "replace", {"v": 1})], False),
    ):
        outcome = engine.apply(req, response(req, *effects), host_rule=False)
        assert chain.short_circuits(outcome) is ends
    assert (
        chain.effective_value(TOOL, engine.apply(req, response(req), host_rule=False)) == ORIGINAL
    )


def test_effective_values_in_events() -> None:
    workspace = BOUNDARIES["workspace.change.before"]
    event = {"workspace": {"kind": "cwd", "change": {"cwd": "/a"}}}
    assert workspace.with_value(event, {"cwd": "/b"}) == {
        "workspace": {"kind": "cwd", "change": {"cwd": "/b"}}
    }
    assert event["workspace"]["change"] == {"cwd": "/a"}
    with pytest.raises(ValueError):
        BOUNDARIES["user.elicitation.result"].with_value({}, {})


def test_body_refs_and_rebinding() -> None:
    items = [
        attachment("alias-1"),
        {
            "id": "m",
            "role": "user",
            "parts": [attachment("alias-2", "p"), {"id": "t", "kind": "text"}],
        },
        {"id": "x", "kind": "text", "body": "not a reference"},
    ]
    assert body_refs(items) == ["alias-1", "alias-2"]
    rebound = rebind_refs(items, {"alias-2": "urn:uuid:2"})
    assert body_refs(rebound) == ["alias-1", "urn:uuid:2"]
    assert body_refs(items) == ["alias-1", "alias-2"]
