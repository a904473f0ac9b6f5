"""The engine over every scenario file row, compared with its expectation."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import (
    CORE_SCENARIOS,
    UPSTREAM_FIXTURES,
    UPSTREAM_SCENARIOS,
    load_scenarios,
    mismatch,
)

from ahp_py import engine, schemas

UPSTREAM = load_scenarios(UPSTREAM_SCENARIOS)
CORE = load_scenarios(CORE_SCENARIOS)


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


def test_upstream_file_is_present() -> None:
    assert len(UPSTREAM) >= 100


@pytest.mark.parametrize("scenario", UPSTREAM, ids=_ids(UPSTREAM))
def test_upstream_scenario(
    scenario: dict[str, Any], schema_set: schemas.SchemaSet
) -> None:
    assert schema_set.error(schemas.INTERCEPT_REQUEST, scenario["request"]) is None
    outcome = engine.apply(
        scenario["request"],
        scenario["response"],
        lambda message: schema_set.error(schemas.INTERCEPT_RESPONSE, message),
    )
    assert mismatch(scenario, outcome.actual) is None, outcome.reason


@pytest.mark.parametrize("scenario", UPSTREAM, ids=_ids(UPSTREAM))
def test_upstream_scenario_without_schema(scenario: dict[str, Any]) -> None:
    """The engine's own checks (its slot definitions included) reach the same
    verdicts without the ``intercept-response`` schema hook."""
    outcome = engine.apply(scenario["request"], scenario["response"])
    assert mismatch(scenario, outcome.actual) is None, outcome.reason


@pytest.mark.skipif(not CORE, reason="scenarios/core.json not written yet")
@pytest.mark.parametrize("scenario", CORE, ids=_ids(CORE))
def test_core_scenario(scenario: dict[str, Any], schema_set: schemas.SchemaSet) -> None:
    assert schema_set.error(schemas.INTERCEPT_REQUEST, scenario["request"]) is None
    try:
        outcome = engine.apply(
            scenario["request"],
            scenario["response"],
            lambda message: schema_set.error(schemas.INTERCEPT_RESPONSE, message),
        )
    except engine.Unsupported as exc:
        pytest.fail(f"unsupported: {exc}")
    assert mismatch(scenario, outcome.actual) is None, outcome.reason


def _contextual_cases() -> list[dict[str, Any]]:
    import json

    manifest = UPSTREAM_FIXTURES / "manifest.json"
    if not manifest.exists():
        return []
    cases = json.loads(manifest.read_text(encoding="utf-8"))["cases"]
    return [case for case in cases if "contextualExpectedValid" in case]


CONTEXTUAL = _contextual_cases()


@pytest.mark.parametrize("case", CONTEXTUAL, ids=[case["id"] for case in CONTEXTUAL])
def test_upstream_contextual_edit_fixture(
    case: dict[str, Any], schema_set: schemas.SchemaSet
) -> None:
    """Upstream's edit-context fixtures apply iff contextualExpectedValid."""
    import json

    from builders import PAYLOADS, elicitation_result_part, request

    context = case["editContext"]
    event_type = context["event"]
    ((target, current),) = context["current"].items()
    fields: dict[str, Any] = {}
    if event_type == "user.elicitation.result":
        result = {"action": context["action"] or "accept", "content": current}
        fields["elicitation"] = {
            "server": "srv",
            "mode": context["mode"],
            "action": context["action"],
            "result": elicitation_result_part(result),
        }
    elif event_type == "tool.after":
        fields["items"] = current
    elif event_type == "user.message.outbound":
        fields["message"] = dict(PAYLOADS[event_type]["message"], messages=current)
    req = request(
        event_type,
        ["modify", "message"],
        modify={target: {"replace": True, "merge": True}},
        event_id="edit-1",
        **fields,
    )
    fixture = UPSTREAM_FIXTURES.parents[1] / case["path"]
    response = json.loads(fixture.read_text(encoding="utf-8"))
    outcome = engine.apply(
        req,
        response,
        lambda message: schema_set.error(schemas.INTERCEPT_RESPONSE, message),
    )
    assert ("rejected" not in outcome.actual) is case["contextualExpectedValid"], (
        outcome.reason
    )
