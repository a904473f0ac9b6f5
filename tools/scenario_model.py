"""Scenario rows: how a group states a request, a response and its answer.

A row's expectation is written by hand in the group modules, as literal data
reasoned from the rules in docs/scenarios.md. The helpers here only pack
those values into the file format, in a fixed key order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import scenario_wire as wire

JSON = Any


class _Absent:
    """Marks an expected key that the rules do not produce."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

# Negative classes: exactly one of these tags on every rejected row.
NEGATIVE_CLASSES = (
    "schema-invalid",
    "capability-invalid",
    "correlation-invalid",
    "application-invalid",
)

ResponseFn = Callable[[str], JSON]

# The valid `message` effect a negative row stages before its fault, so a
# client that applies members one by one instead of the response whole shows up.
STAGED: JSON = wire.note("Visible only if the response is accepted")


def expect(
    *,
    decision: str,
    executed: bool,
    messages: list[str],
    effective: JSON,
    input: JSON = ABSENT,
    permission: JSON = ABSENT,
    result: JSON = ABSENT,
    flow: JSON = ABSENT,
    instructions: JSON = ABSENT,
    remaining: JSON = ABSENT,
    injections: JSON = ABSENT,
) -> dict[str, JSON]:
    """Pack expected keys in the file's fixed order, leaving out ABSENT ones."""
    packed: dict[str, JSON] = {
        "decision": decision,
        "permission": permission,
        "executed": executed,
        "messages": list(messages),
        "input": input,
        "effective": effective,
        "result": result,
        "flow": flow,
        "continuationInstructions": instructions,
        "continuationRemaining": remaining,
        "injections": injections,
    }
    return {key: value for key, value in packed.items() if value is not ABSENT}


def expect_target(
    target: str,
    value: JSON,
    messages: list[str] | None = None,
    *,
    decision: str,
    executed: bool,
    **keys: JSON,
) -> dict[str, JSON]:
    """`expect` at a boundary whose `effective` holds its one modify target."""
    return expect(
        decision=decision,
        executed=executed,
        messages=messages or [],
        effective={target: value},
        **keys,
    )


@dataclass(frozen=True)
class Group:
    """A named set of rows at one boundary (or `any` for envelope checks)."""

    tag: str
    boundary: str
    proves: str
    scenarios: list[dict[str, JSON]] = field(default_factory=list)


DEFAULT_STATE: Any = object()
NO_STATE: Any = object()


def _incoming(incoming: JSON) -> JSON | None:
    if incoming is DEFAULT_STATE:
        return wire.state()
    if incoming is NO_STATE:
        return None
    return incoming


def _response(scenario_id: str, effects: JSON, response: ResponseFn | None) -> JSON:
    if response is not None:
        return response(scenario_id)
    return wire.success(scenario_id, effects)


def accepted(
    scenario_id: str,
    event: JSON,
    caps: JSON,
    effects: list[JSON],
    expected: dict[str, JSON],
    tags: list[str],
    *,
    incoming: JSON = DEFAULT_STATE,
    response: ResponseFn | None = None,
) -> dict[str, JSON]:
    """A row whose response is accepted; `expected` comes from `expect`."""
    return {
        "id": scenario_id,
        "request": wire.intercept_request(scenario_id, event, caps, _incoming(incoming)),
        "response": _response(scenario_id, effects, response),
        "expected": expected,
        "tags": list(tags),
    }


def rejected(
    scenario_id: str,
    event: JSON,
    caps: JSON,
    effects: JSON,
    negative_class: str,
    tags: list[str],
    *,
    incoming: JSON = DEFAULT_STATE,
    response: ResponseFn | None = None,
    host_expected: dict[str, JSON] | None = None,
) -> dict[str, JSON]:
    """A row whose whole response must be rejected atomically."""
    if negative_class not in NEGATIVE_CLASSES:
        raise ValueError(f"{scenario_id}: unknown negative class {negative_class!r}")
    row: dict[str, JSON] = {
        "id": scenario_id,
        "request": wire.intercept_request(scenario_id, event, caps, _incoming(incoming)),
        "response": _response(scenario_id, effects, response),
        "expectError": True,
    }
    if host_expected is not None:
        row["hostExpected"] = host_expected
    row["tags"] = [*tags, "negative", negative_class, "atomic-rejection"]
    return row


class Negative(NamedTuple):
    """One rejected row of a group, told by what sets it apart from the others.

    `event` and `caps` left as None take the group's (see `rejected_rows`);
    `response` left as None is a success carrying `effects`.
    """

    name: str
    negative_class: str
    effects: JSON
    tags: Sequence[str] = ()
    event: JSON = None
    caps: JSON = None
    response: ResponseFn | None = None


def rejected_rows(
    prefix: str, tag: str, event: JSON, caps: JSON, cases: Iterable[Negative]
) -> list[dict[str, JSON]]:
    """`rejected` rows with ids `prefix + name` and tags `[tag, *tags]`."""
    return [
        rejected(
            prefix + case.name,
            event if case.event is None else case.event,
            caps if case.caps is None else case.caps,
            case.effects,
            case.negative_class,
            [tag, *case.tags],
            response=case.response,
        )
        for case in cases
    ]
