"""Serial subscriptions at one boundary (no I/O): what each one is sent.

Each intercept subscription in turn gets the boundary's request with the
effective value the earlier ones left, ``params.state`` as they settled it
(``engine.Outcome.state``: deny is sticky, ask applies unless deny, allow only
from none and not past a changed value, the candidate and flow carried), and
the event's ``items`` projected for that subscription (``omit``: none of
them). An observer (or an intercept subscription the chain never called)
gets the settled event as ``hooks/observe``.
"""

from __future__ import annotations

from typing import Any

from . import codec, rpc
from .boundaries import Boundary, get_path
from .engine import Outcome

OMIT = "omit"


def project(event: dict[str, Any], content: Any) -> dict[str, Any]:
    """``event`` as one subscription sees it: ``omit`` withholds every item
    (``items: []``); any other projection (``metadata``) keeps them as they are."""
    copy: dict[str, Any] = codec.clone(event)
    if content == OMIT and "items" in copy:
        copy["items"] = []
    return copy


def settled_event(boundary: Boundary, event: dict[str, Any], value: Any) -> dict[str, Any]:
    """``event`` with the boundary's target holding the effective ``value``; an
    event without the target field (``instructions`` absent means ``[]``) is
    sent as it is while the value is still that default."""
    if (
        boundary.location is not None
        and get_path(event, *boundary.location) is None
        and codec.json_equal(value, boundary.original(event))
    ):
        copy: dict[str, Any] = codec.clone(event)
        return copy
    return boundary.with_value(event, value)


def request_for(
    request: dict[str, Any],
    boundary: Boundary,
    value: Any,
    state: dict[str, Any] | None,
    content: Any,
) -> dict[str, Any]:
    """The boundary's ``request`` for one subscription: effective value, carried
    ``state`` (None: the request's own) and projected items."""
    message: dict[str, Any] = codec.clone(request)
    params = message["params"]
    params["event"] = project(settled_event(boundary, params["event"], value), content)
    if state is not None:
        params["state"] = codec.clone(state)
    return message


def observation_for(
    request: dict[str, Any], boundary: Boundary, value: Any, content: Any
) -> dict[str, Any]:
    """The ``hooks/observe`` one subscription gets once the boundary settled."""
    params = request["params"]
    event = project(settled_event(boundary, params["event"], value), content)
    return rpc.observation(params.get("protocolVersion"), event)


def short_circuits(outcome: Outcome) -> bool:
    """An accepted reply that ends the chain: a deny or a flow stop."""
    actual = outcome.actual
    return (
        actual.get("permission") == "deny"
        or actual.get("decision") == "deny"
        or actual.get("flow") == "stop"
    )


def effective_value(boundary: Boundary, outcome: Outcome) -> Any:
    """The target's value an accepted reply left."""
    effective = outcome.actual.get("effective")
    if isinstance(effective, dict) and boundary.target in effective:
        return codec.clone(effective[boundary.target])
    raise ValueError("the outcome has no effective value")
