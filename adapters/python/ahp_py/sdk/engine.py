"""The composition engine: apply one intercept response to its request (no I/O).

``apply`` stages the whole response (acceptance checks, serial modification,
candidate binding, permission and flow resolution, the host rule) and returns
either the derived result or ``{"rejected": true}``: nothing is published from
a response that fails anywhere. See docs/scenarios.md, "Composition rules".

Every value a response supplies (each ``modify`` value, each staged effective
value after a merge, each ``return`` and ``inject`` value) is checked against
the canonical schema definition of its slot (``boundaries.py``); the engine
reads no files itself, the definitions come from the process-wide schema set
(``schemas.load()``) unless the caller passes its own check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import codec, content, schemas
from .boundaries import BOUNDARIES, MESSAGES, Boundary, get_path
from .record import record

PERMISSION_RANK = {"none": 0, "allow": 1, "ask": 2, "deny": 3}
KNOWN_EFFECTS = frozenset({"deny", "allow", "ask", "modify", "message", "return", "flow", "inject"})
MODIFY_OPERATIONS = frozenset({"replace", "merge"})
DELIVERY = frozenset({"now", "next_turn"})

ResponseCheck = Callable[[Any], "str | None"]
# (definition, value) -> None when valid, else a reason; see schemas.SchemaSet.error
DefinitionCheck = Callable[[str, Any], "str | None"]


class Unsupported(Exception):
    """The request is for an event type this engine does not implement."""


class Rejected(Exception):
    """The whole response is rejected; the message says why (diagnostics only)."""


@record
class Outcome:
    actual: dict[str, Any]
    reason: str | None = None  # why the response was rejected, for diagnostics
    # the pipeline state an accepted response leaves for the next interceptor
    # (``params.state``: permission, candidate, and flow when one exists)
    state: dict[str, Any] | None = None


def boundary_for(request: Any) -> Boundary:
    event_type = get_path(request, "params", "event", "type")
    boundary = BOUNDARIES.get(event_type) if isinstance(event_type, str) else None
    if boundary is None:
        raise Unsupported(f"event type {event_type!r} is not implemented by ahp_py")
    return boundary


def apply(
    request: dict[str, Any],
    response: Any,
    response_error: ResponseCheck | None = None,
    definition_error: DefinitionCheck | None = None,
    host_rule: bool = True,
) -> Outcome:
    """Derive the application result of ``response`` to ``request``.

    ``response_error`` validates the whole response message against the
    canonical ``intercept-response`` schema (None when valid, else a reason).
    ``definition_error`` validates one value against a canonical definition;
    by default the process-wide schema set does.
    ``host_rule``: whether the synthetic host's ``task`` rule applies (the core
    suite's host; the lifecycle suite's host has no rule of its own).
    Raises Unsupported for event types outside the boundary table.
    """
    boundary = boundary_for(request)
    check = definition_error or schemas.load().error
    transaction = Transaction(boundary, request, check, host_rule)
    try:
        actual = transaction.run(response, response_error)
    except Rejected as exc:
        return Outcome({"rejected": True}, str(exc))
    return Outcome(actual, state=transaction.next_state)


def _non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def check_effect_structure(effect: Any, index: int) -> None:
    """Required fields and types of each effect (closedness is the schema's job;
    values are checked against their slot's definition while staging)."""
    where = f"effect {index}"
    if not isinstance(effect, dict):
        raise Rejected(f"{where} is not an object")
    kind = effect.get("type")
    if kind not in KNOWN_EFFECTS:
        raise Rejected(f"{where} has unknown type {kind!r}")
    if kind == "deny" and not _non_empty_string(effect.get("reason")):
        raise Rejected(f"{where}: deny needs a non-empty reason")
    if kind == "message" and not isinstance(effect.get("text"), str):
        raise Rejected(f"{where}: message text must be a string")
    if kind == "return" and "value" not in effect:
        raise Rejected(f"{where}: return needs a value")
    if kind == "modify":
        if not isinstance(effect.get("target"), str):
            raise Rejected(f"{where}: modify needs a target")
        if effect.get("operation") not in MODIFY_OPERATIONS:
            raise Rejected(f"{where}: modify operation must be replace or merge")
        if "value" not in effect:
            raise Rejected(f"{where}: modify needs a value")
    if kind == "flow":
        operation = effect.get("operation")
        if operation == "stop":
            if not _non_empty_string(effect.get("reason")):
                raise Rejected(f"{where}: flow stop needs a non-empty reason")
        elif operation == "continue":
            if "instruction" in effect and not _non_empty_string(effect["instruction"]):
                raise Rejected(f"{where}: continue instruction must be a non-empty string")
        else:
            raise Rejected(f"{where}: flow operation must be stop or continue")
    if kind == "inject":
        if effect.get("target") != "context" or effect.get("operation") != "append":
            raise Rejected(f"{where}: inject must append to context")
        if effect.get("deliverAt") not in DELIVERY:
            raise Rejected(f"{where}: inject deliverAt must be now or next_turn")
        if "value" not in effect:
            raise Rejected(f"{where}: inject needs a value")


class Transaction:
    """Stages one response; nothing escapes unless every step succeeds."""

    def __init__(
        self,
        boundary: Boundary,
        request: dict[str, Any],
        check: DefinitionCheck,
        host_rule: bool = True,
    ) -> None:
        self.boundary = boundary
        self.host_rule = host_rule
        self.request = request
        self.check = check
        params = request.get("params") or {}
        self.event: dict[str, Any] = params.get("event") or {}
        self.capabilities: dict[str, Any] = _as_dict(params.get("capabilities"))
        self.state: dict[str, Any] = _as_dict(params.get("state"))
        self.protocol_version = params.get("protocolVersion")
        self.original = boundary.original(self.event)
        self.current = codec.clone(self.original)
        self.original_checked = False
        incoming = self.state.get("permission")
        self.incoming_permission = (
            incoming if isinstance(incoming, str) and incoming in PERMISSION_RANK else "none"
        )
        self.response_permission = "none"  # the strongest of this response's effects
        self.stop = self.state.get("flow") == "stop"
        self.continued = False  # an accepted continue effect in this response
        self.instructions: list[str] = []
        self.messages: list[str] = []
        self.injections: list[Any] = []
        self.returned: tuple[Any] | None = None
        self.next_state: dict[str, Any] | None = None

    # Phase 1: the envelope.
    def check_envelope(self, response: Any, response_error: ResponseCheck | None) -> list[Any]:
        if not isinstance(response, dict):
            raise Rejected("response is not a JSON object")
        if response.get("jsonrpc") != "2.0":
            raise Rejected("jsonrpc is not '2.0'")
        if "id" not in response or not codec.json_equal(response["id"], self.request.get("id")):
            raise Rejected("response id does not match the request id")
        if "error" in response:
            raise Rejected("response carries a JSON-RPC error")
        result = response.get("result")
        if not isinstance(result, dict):
            raise Rejected("result is not an object")
        if response_error is not None:
            error = response_error(response)
            if error:
                raise Rejected(f"schema: {error}")
        if not (
            isinstance(result.get("protocolVersion"), str)
            and result["protocolVersion"] == self.protocol_version
        ):
            raise Rejected("result protocolVersion differs from the request's")
        effects = result.get("effects")
        if not isinstance(effects, list):
            raise Rejected("result effects is not an array")
        for index, effect in enumerate(effects):
            check_effect_structure(effect, index)
        return effects

    def run(self, response: Any, response_error: ResponseCheck | None) -> dict[str, Any]:
        effects = self.check_envelope(response, response_error)
        advertised = self.capabilities.get("effects")
        advertised = advertised if isinstance(advertised, list) else []
        for index, effect in enumerate(effects):
            kind = effect["type"]
            if kind not in advertised:
                raise Rejected(f"effect {index}: {kind} is not advertised")
            if kind not in self.boundary.effects:
                raise Rejected(f"effect {index}: {kind} is not allowed at {self.boundary.event}")
            getattr(self, "_on_" + kind)(effect, index)
        self.check_host_rule()
        return self.derive()

    # Phase 1 + staging, effect by effect, in response order.
    def validate(self, definition: str, value: Any, what: str) -> None:
        """Reject unless ``value`` satisfies the canonical ``definition``."""
        error = self.check(definition, value)
        if error:
            raise Rejected(f"{what}: {error}")

    def _on_deny(self, effect: dict[str, Any], index: int) -> None:
        self.response_permission = _strongest(self.response_permission, "deny")

    def _on_ask(self, effect: dict[str, Any], index: int) -> None:
        self.response_permission = _strongest(self.response_permission, "ask")

    def _on_allow(self, effect: dict[str, Any], index: int) -> None:
        self.response_permission = _strongest(self.response_permission, "allow")

    def _on_message(self, effect: dict[str, Any], index: int) -> None:
        self.messages.append(effect["text"])

    def _on_return(self, effect: dict[str, Any], index: int) -> None:
        if not self.boundary.returns:
            raise Rejected(f"effect {index}: return is not allowed at {self.boundary.event}")
        if self.boundary.return_definition is not None:
            self.validate(
                self.boundary.return_definition,
                effect["value"],
                f"effect {index}: return value",
            )
        self.returned = (codec.clone(effect["value"]),)

    def _on_inject(self, effect: dict[str, Any], index: int) -> None:
        context = get_path(self.capabilities, "inject", "context")
        delivery = get_path(context, "deliverAt")
        if get_path(context, "append") is not True:
            raise Rejected(f"effect {index}: context append is not advertised")
        if not isinstance(delivery, list) or effect["deliverAt"] not in delivery:
            raise Rejected(f"effect {index}: deliverAt {effect['deliverAt']} is not advertised")
        self.validate(MESSAGES, effect["value"], f"effect {index}: inject value")
        self.injections.append(codec.clone(effect))

    def _on_flow(self, effect: dict[str, Any], index: int) -> None:
        operation = effect["operation"]
        operations = get_path(self.capabilities, "flow", "operations")
        if not isinstance(operations, list) or operation not in operations:
            raise Rejected(f"effect {index}: flow {operation} is not advertised")
        if operation not in self.boundary.flow_operations:
            raise Rejected(f"effect {index}: flow {operation} is not allowed here")
        if operation == "stop":
            self.stop = True
            return
        if self.remaining_continuations() <= 0:
            raise Rejected(f"effect {index}: no continuation allowance remains")
        self.continued = True
        if "instruction" in effect:
            self.instructions.append(effect["instruction"])

    def _on_modify(self, effect: dict[str, Any], index: int) -> None:
        target, operation, value = (
            effect["target"],
            effect["operation"],
            effect["value"],
        )
        where = f"effect {index}"
        if target != self.boundary.target:
            raise Rejected(f"{where}: target {target} does not exist at {self.boundary.event}")
        if get_path(self.capabilities, "modify", target, operation) is not True:
            raise Rejected(f"{where}: {operation} of {target} is not advertised")
        editable = self.boundary.editable(self.event)
        if editable:
            raise Rejected(f"{where}: {editable}")
        definition = self.boundary.definition
        if not self.original_checked:  # only an edit needs a well-formed original
            self.validate(definition, self.original, f"{where}: the event's {target}")
            self.original_checked = True
        self.validate(definition, value, f"{where}: value")
        value = codec.clone(value)
        if operation == "replace":
            if self.boundary.list_target and content.holds_withheld(self.current):
                raise Rejected(f"{where}: whole-list replace over withheld content")
            self.current = value
            return
        # merge: a list appends in order, an object overwrites top-level keys
        if self.boundary.list_target:
            staged: Any = [*self.current, *value]
        else:
            staged = {**self.current, **value}
        self.validate(definition, staged, f"{where}: effective value")
        self.current = staged

    def remaining_continuations(self) -> int:
        remaining = get_path(self.capabilities, "flow", "remainingContinuations")
        return int(remaining) if codec.is_integer(remaining) else 0

    def check_host_rule(self) -> None:
        """The synthetic host's one rule: tool `task` needs a positive integer."""
        if not self.host_rule:
            return
        if self.boundary.event != "tool.before" or get_path(self.event, "tool", "name") != "task":
            return
        if not isinstance(self.current, dict) or not codec.is_positive_integer(
            self.current.get("task")
        ):
            raise Rejected("host rule: task input needs a positive integer task")

    def continue_advertised(self) -> bool:
        operations = get_path(self.capabilities, "flow", "operations")
        return isinstance(operations, list) and "continue" in operations

    def incoming_continue(self) -> bool:
        """An earlier interceptor continued, and this request can continue.

        Where it cannot (``continue`` not advertised or not a flow operation of
        this boundary, or no allowance left) the protocol leaves the incoming
        ``continue`` undefined; this engine ignores it.
        """
        return (
            self.state.get("flow") == "continue"
            and self.continue_advertised()
            and "continue" in self.boundary.flow_operations
            and self.remaining_continuations() >= 1
        )

    # Phase 2: publish.
    def derive(self) -> dict[str, Any]:
        boundary = self.boundary
        # Incoming candidate and grant are judged on the final staged value.
        unchanged = codec.json_equal(self.current, self.original)
        permission: str | None = None
        decision = "allow"
        if boundary.permission:
            permission = _strongest(self.incoming_permission, self.response_permission)
            if permission == "allow" and not unchanged:
                permission = "none"  # an allow, incoming or this response's, is for the original
            decision = "allow" if permission == "none" else permission
        continued = self.continued or self.incoming_continue()
        flow = "stop" if self.stop else ("continue" if continued else None)
        candidate = self.candidate(unchanged)
        self.next_state = {
            "permission": permission if permission is not None else self.incoming_permission,
            "candidate": {"value": codec.clone(candidate[0])} if candidate is not None else None,
        }
        if flow is not None:
            self.next_state["flow"] = flow
        proceeds = decision == "allow" and flow != "stop"
        actual: dict[str, Any] = {"decision": decision}
        if permission is not None:
            actual["permission"] = permission
        actual["executed"] = proceeds and candidate is None and boundary.gated
        actual["messages"] = self.messages
        if boundary.target == "input":
            actual["input"] = self.current
        actual["effective"] = {boundary.target: self.current}
        if candidate is not None and proceeds:
            actual["result"] = candidate[0]
        if flow is not None:
            actual["flow"] = flow
        if self.continue_advertised():
            actual["continuationInstructions"] = self.instructions
            actual["continuationRemaining"] = self.remaining_continuations() - (
                1 if flow == "continue" else 0
            )
        if self.injections:
            actual["injections"] = self.injections
        return actual

    def candidate(self, unchanged: bool) -> tuple[Any] | None:
        """The bound supplied result: this response's last return, else the
        incoming candidate while the final value is deep-equal to the original."""
        if not self.boundary.returns:
            return None
        if self.returned is not None:
            return self.returned
        incoming = self.state.get("candidate")
        if isinstance(incoming, dict) and "value" in incoming and unchanged:
            return (codec.clone(incoming["value"]),)
        return None


def _strongest(left: str, right: str) -> str:
    """The stronger permission: deny > ask > allow > none."""
    return left if PERMISSION_RANK[left] >= PERMISSION_RANK[right] else right


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
