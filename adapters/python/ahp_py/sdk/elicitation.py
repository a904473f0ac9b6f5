"""Elicitation events: the receiver's checks and correlation state, and the
host's rules at both boundaries (no I/O). See docs/ELICITATION.md.

An MCP ``elicitation/create`` request and its ``ElicitResult`` travel as
``user.elicitation.request`` / ``.result`` events whose ``request`` /
``result`` part is one text part holding the serialized MCP body.

Receiver (``Receiver.accept``): the canonical envelope, the stored content a
body ref names (409), the session and the part (an absent part is the omit
selection; a selected gap refused), the request body against
``mcp-elicitation.schema.json#/$defs/requestParams`` and its mode, the
result's correlation to a live request (parent, session, source, server,
mode), its body against ``#/$defs/result`` and, for an accepted form, the
form schema the request asked for. Accepted intercepts change the live
requests and yield the receipt's summary; a refusal changes nothing.

Host: ``judge_request`` (deny, a supplied result, messages at the request
boundary), ``result_request`` (the result event the host sends) and
``judge_result`` (the core rules at ``user.elicitation.result`` plus the form
schema check of the effective content).

Form schemas are applied as Draft 2020-12 (formats are annotations, never
asserted; no default is filled in); each distinct schema is compiled once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import codec, engine
from .boundaries import Boundary, get_path
from .content import body_refs
from .record import record
from .schemas import INTERCEPT_REQUEST, translate_patterns

REQUEST_EVENT = "user.elicitation.request"
RESULT_EVENT = "user.elicitation.result"
REQUEST_PARAMS = "mcp-elicitation.schema.json#/$defs/requestParams"
RESULT = "mcp-elicitation.schema.json#/$defs/result"
DEFINITIONS = (REQUEST_PARAMS, RESULT)
BODY, METADATA, OMIT = "body", "metadata", "omit"
FORM, URL = "form", "url"
ACCEPT = "accept"

# (definition or schema file, value) -> None when valid, else a reason
DefinitionCheck = Callable[[str, Any], "str | None"]


class Refusal(Exception):
    """The receiver refuses the intercept (nothing recorded): HTTP ``status``
    (400, or 409 for content it does not have), JSON-RPC -32602."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# Form schemas -------------------------------------------------------------------


class FormSchemas:
    """Requested form schemas as Draft 2020-12 validators, one per distinct schema
    (by its compact JSON text), formats not asserted, patterns read as ECMA-262."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._validators: dict[str, Any] = {}

    def validator(self, schema: Any) -> Any:
        """The compiled validator; ValueError when ``schema`` is no usable schema."""
        key = codec.dumps(schema)
        with self._lock:
            found = self._validators.get(key)
        if found is not None:
            return found
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
        from referencing import Registry

        if not isinstance(schema, dict):
            raise ValueError("the requested schema is not an object")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"the requested schema is not a JSON Schema: {exc.message}") from None
        # no format checker: formats are annotations; an empty registry: nothing remote
        found = Draft202012Validator(translate_patterns(schema), registry=Registry())
        with self._lock:
            self._validators.setdefault(key, found)
        return found

    def error(self, schema: Any, instance: Any) -> str | None:
        """None when ``instance`` is valid against the form ``schema``, else why."""
        try:
            validator = self.validator(schema)
            errors = list(validator.iter_errors(instance))
        except ValueError as exc:
            return str(exc)
        except Exception as exc:  # an unresolvable $ref, a bad pattern: fail closed
            return f"the requested schema cannot be applied: {type(exc).__name__}: {exc}"
        if not errors:
            return None
        from jsonschema.exceptions import best_match

        best = best_match(errors)
        if best is None:  # pragma: no cover - errors is not empty
            return "invalid against the requested schema"
        where = "/".join(str(part) for part in best.absolute_path) or "(root)"
        return f"the requested schema at {where}: {best.message[:300]}"


# Bodies -------------------------------------------------------------------------


def parse_body(text: Any) -> dict[str, Any]:
    """One strict JSON object (duplicate keys refused); ValueError says why not."""
    if not isinstance(text, str):
        raise ValueError("the part has no text")
    try:
        value = codec.loads(text)
    except codec.JsonDecodeError as exc:
        raise ValueError(f"the body is not strict JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("the body is not a JSON object")
    return value


def request_mode(params: dict[str, Any]) -> Any:
    """The mode of MCP request params (absent: ``form``, MCP 2025-11-25)."""
    return params.get("mode", FORM)


def requested_schema(params: dict[str, Any] | None) -> Any:
    """The form schema of request params (None: not a form body)."""
    if params is None or request_mode(params) != FORM:
        return None
    return params.get("requestedSchema")


def result_problem(
    result: dict[str, Any],
    mode: Any,
    form_schema: Any,
    forms: FormSchemas,
    check: DefinitionCheck,
) -> str | None:
    """Why an MCP result is not a valid answer in ``mode`` (None: it is): valid
    against ``#/$defs/result``, ``content`` only for ``accept`` in ``form`` mode,
    and then (absent: ``{}``) valid against ``form_schema`` when it is known."""
    problem = check(RESULT, result)
    if problem:
        return problem
    if mode == FORM and result.get("action") == ACCEPT:
        if form_schema is None:
            return None
        return forms.error(form_schema, result.get("content", {}))
    if "content" in result:
        return f"a {result.get('action')} result in {mode} mode carries no content"
    return None


def body_of(event: dict[str, Any], part_name: str) -> dict[str, Any] | None:
    """The parsed body of the event's ``elicitation.<part_name>`` text part when it
    is body-selected and parses as one object (None otherwise)."""
    part = get_path(event, "elicitation", part_name)
    if not isinstance(part, dict) or part.get("selection") != BODY or "gap" in part:
        return None
    try:
        return parse_body(part.get("text"))
    except ValueError:
        return None


# The receiver ---------------------------------------------------------------------


@record
class LiveRequest:
    """A request accepted and not yet answered."""

    event_id: str
    session: str
    source: str
    server: str
    mode: str
    selection: str
    params: dict[str, Any] | None  # the parsed body (None: metadata or omit)


@record
class Accepted:
    """What an accepted intercept leaves: its receipt's parts."""

    event_id: str
    type: str
    summary: dict[str, Any]

    def entry(self) -> dict[str, Any]:
        return {
            "kind": "elicitation",
            "eventId": self.event_id,
            "type": self.type,
            "summary": self.summary,
        }


class Receiver:
    """The receiver's checks, in order, and its correlation state (the live
    requests, spanning every row). ``check`` validates against a canonical
    schema file or definition (``SchemaSet.error``); ``stored`` says whether a
    body ref names bytes this server stored under the accepted upload token;
    ``authenticated_source`` is who the receiver's authentication says the
    sender is (every result summary's provenance)."""

    def __init__(
        self,
        check: DefinitionCheck,
        stored: Callable[[str], bool],
        authenticated_source: str,
        forms: FormSchemas | None = None,
    ) -> None:
        self.check = check
        self.stored = stored
        self.authenticated_source = authenticated_source
        self.forms = forms or FormSchemas()
        self._lock = threading.Lock()
        self.live: dict[str, LiveRequest] = {}  # event id -> request

    def accept(self, message: Any, on_accept: Callable[[Accepted], None] | None = None) -> Accepted:
        """Check ``message``; raises Refusal (state unchanged) or returns its
        receipt with the state updated. ``on_accept`` runs under the same lock,
        so receipts are recorded in the order the state changed."""
        with self._lock:
            accepted, change = self._check(message)
            change()
            if on_accept is not None:
                on_accept(accepted)
            return accepted

    def _check(self, message: Any) -> tuple[Accepted, Callable[[], None]]:
        # 1. The canonical envelope, and an elicitation event.
        problem = self.check(INTERCEPT_REQUEST, message)
        if problem:
            raise Refusal(f"invalid intercept request: {problem}")
        event = message["params"]["event"]
        if message.get("id") != event.get("id"):
            raise Refusal("the JSON-RPC id is not the event's id")
        kind = event.get("type")
        if kind not in (REQUEST_EVENT, RESULT_EVENT):
            raise Refusal(f"the event is a {kind}, not an elicitation request or result")
        # 2. Content the event names must be stored here.
        for ref in body_refs(event.get("items")):
            if not self.stored(ref):
                raise Refusal(f"no stored content for body ref {ref!r}", 409)
        # 3. The session and the part; a selected gap fails closed.
        session = get_path(event, "session", "id")
        if not isinstance(session, str) or not session:
            raise Refusal("the event carries no session.id")
        part_name = "request" if kind == REQUEST_EVENT else "result"
        elicitation = event.get("elicitation")
        if isinstance(elicitation, dict) and part_name not in elicitation:
            # An absent part is the omit selection (interaction-payloads.md,
            # "MCP elicitation binding": "Omission has no part").
            part: Any = {"selection": OMIT}
        else:
            part = get_path(event, "elicitation", part_name)
        if not isinstance(part, dict):
            raise Refusal(f"elicitation.{part_name} is not a part")
        if part.get("selection") == BODY and "gap" in part:
            raise Refusal(f"elicitation.{part_name} is selected with a gap: no body to validate")
        if kind == REQUEST_EVENT:
            return self._request(event, session, part)
        return self._result(event, session, part)

    def _request(
        self, event: dict[str, Any], session: str, part: dict[str, Any]
    ) -> tuple[Accepted, Callable[[], None]]:
        # 4. A request: a fresh id, and a valid body in the event's mode.
        event_id = event["id"]
        if event_id in self.live:
            raise Refusal(f"request {event_id!r} is already live")
        elicitation = event["elicitation"]
        selection = part["selection"]
        params: dict[str, Any] | None = None
        if selection == BODY:
            try:
                params = parse_body(part.get("text"))
            except ValueError as exc:
                raise Refusal(f"elicitation.request: {exc}") from None
            problem = self.check(REQUEST_PARAMS, params)
            if problem:
                raise Refusal(f"elicitation.request: {problem}")
            if request_mode(params) != elicitation["mode"]:
                raise Refusal(
                    f"the body's mode {request_mode(params)!r} is not the event's "
                    f"{elicitation['mode']!r}"
                )
            schema = requested_schema(params)
            if schema is not None:
                try:
                    self.forms.validator(schema)
                except ValueError as exc:
                    raise Refusal(f"elicitation.request: {exc}") from None
        live = LiveRequest(
            event_id=event_id,
            session=session,
            source=event["source"],
            server=elicitation["server"],
            mode=elicitation["mode"],
            selection=selection,
            params=params,
        )
        summary: dict[str, Any] = (
            {"request": codec.clone(params)} if params is not None else {"selection": selection}
        )

        def change() -> None:
            self.live[event_id] = live

        return Accepted(event_id, REQUEST_EVENT, summary), change

    def _result(
        self, event: dict[str, Any], session: str, part: dict[str, Any]
    ) -> tuple[Accepted, Callable[[], None]]:
        # 5. A result: correlated to a live request, and a valid answer to it.
        parent_id = event.get("parentEventId")
        if not isinstance(parent_id, str):
            raise Refusal("the result has no parentEventId")
        parent = self.live.get(parent_id)
        if parent is None:
            raise Refusal(f"the parent {parent_id!r} is not a live request")
        elicitation = event["elicitation"]
        for what, mine, theirs in (
            ("session.id", session, parent.session),
            ("source", event["source"], parent.source),
            ("elicitation.server", elicitation["server"], parent.server),
            ("elicitation.mode", elicitation["mode"], parent.mode),
        ):
            if mine != theirs:
                raise Refusal(f"the result's {what} {mine!r} is not its request's {theirs!r}")
        selection = part["selection"]
        result: dict[str, Any] | None = None
        if selection == BODY:
            try:
                result = parse_body(part.get("text"))
            except ValueError as exc:
                raise Refusal(f"elicitation.result: {exc}") from None
            problem = self.check(RESULT, result)
            if problem:
                raise Refusal(f"elicitation.result: {problem}")
            if result.get("action") != elicitation["action"]:
                raise Refusal(
                    f"the body's action {result.get('action')!r} is not the event's "
                    f"{elicitation['action']!r}"
                )
            problem = result_problem(
                result, parent.mode, requested_schema(parent.params), self.forms, self.check
            )
            if problem:
                raise Refusal(f"elicitation.result: {problem}")
        provenance = {"kind": "mcp", "authenticatedSource": self.authenticated_source}
        summary: dict[str, Any]
        if result is not None and parent.params is not None:
            summary = {
                "request": codec.clone(parent.params),
                "result": codec.clone(result),
                "provenance": provenance,
                "externalCompletion": False,
            }
        else:
            summary = {
                "selection": {"request": parent.selection, "result": selection},
                "bodyValidation": "not-selected",
                "provenance": provenance,
                "externalCompletion": False,
            }

        def change() -> None:
            del self.live[parent_id]  # answered: no longer live

        return Accepted(event["id"], RESULT_EVENT, summary), change


# The host -------------------------------------------------------------------------

# The request boundary as the engine sees it: gated, with permission semantics,
# ``deny``, ``return`` (an MCP result) and ``message``; nothing to modify.
REQUEST_BOUNDARY = Boundary(
    event=REQUEST_EVENT,
    target="request",
    definition=RESULT,
    original=lambda event: None,
    gated=True,
    permission=True,
    effects=frozenset({"deny", "return", "message"}),
    returns=True,
    return_definition=RESULT,
)

ALLOWED, DENIED, REJECTED = "allowed", "denied", "rejected"


@record
class RequestVerdict:
    """How the request boundary settled: ``allowed`` (with the last accepted
    ``return`` value, or None: the user is asked), ``denied`` or ``rejected``."""

    request: str
    returned: dict[str, Any] | None = None
    reason: str | None = None


def _effects(reply: Any) -> list[Any]:
    effects = get_path(reply, "result", "effects")
    return effects if isinstance(effects, list) else []


def judge_request(
    request: dict[str, Any],
    reply: Any,
    response_error: Callable[[Any], str | None] | None,
    check: DefinitionCheck,
    forms: FormSchemas,
) -> RequestVerdict:
    """The reply at the request boundary: the core envelope and effect rules
    (advertised effects, each ``return`` a valid MCP result), then each
    ``return`` value's answer rules for the request's mode and form schema. Any
    failure rejects the whole reply; a ``deny`` denies; otherwise the last
    ``return`` value (None: none) is the effective result."""
    transaction = engine.Transaction(REQUEST_BOUNDARY, request, check, host_rule=False)
    try:
        actual = transaction.run(reply, response_error)
    except engine.Rejected as exc:
        return RequestVerdict(REJECTED, reason=str(exc))
    event = request["params"]["event"]
    mode = get_path(event, "elicitation", "mode")
    schema = requested_schema(body_of(event, "request"))
    returned: dict[str, Any] | None = None
    for index, effect in enumerate(_effects(reply)):
        if effect.get("type") != "return":
            continue
        value = effect["value"]
        problem = result_problem(value, mode, schema, forms, check)
        if problem:
            return RequestVerdict(REJECTED, reason=f"effect {index}: return value: {problem}")
        returned = codec.clone(value)
    if actual.get("decision") == "deny":
        return RequestVerdict(DENIED)
    return RequestVerdict(ALLOWED, returned)


def result_request(
    row_id: str, request_event: dict[str, Any], result: dict[str, Any], capabilities: Any
) -> dict[str, Any]:
    """The ``hooks/intercept`` of the result event the host sends for ``result``
    (docs/ELICITATION.md, host step 3)."""
    event: dict[str, Any] = {
        "id": f"{row_id}:result",
        "source": request_event.get("source"),
        "time": request_event.get("time"),
    }
    if "session" in request_event:
        event["session"] = codec.clone(request_event["session"])
    event.update(
        type=RESULT_EVENT,
        parentEventId=f"{row_id}:request",
        elicitation={
            "server": get_path(request_event, "elicitation", "server"),
            "mode": get_path(request_event, "elicitation", "mode"),
            "action": result.get("action"),
            "result": {
                "id": f"{row_id}:result-body",
                "kind": "text",
                "mediaType": "text/plain",
                "selection": BODY,
                "text": codec.dumps(result),
            },
        },
    )
    return {
        "jsonrpc": "2.0",
        "id": f"{row_id}:result",
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": event,
            "capabilities": codec.clone(capabilities),
        },
    }


@record
class ResultVerdict:
    """How the result boundary settled: the published result (None: rejected),
    whether an edit was applied, and why a reply was rejected."""

    published: dict[str, Any] | None
    edited: bool = False
    reason: str | None = None


def judge_result(
    message: dict[str, Any],
    result: dict[str, Any],
    reply: Any,
    response_error: Callable[[Any], str | None] | None,
    check: DefinitionCheck,
    form_schema: Any,
    forms: FormSchemas,
) -> ResultVerdict:
    """The reply at the result boundary for the effective ``result`` the host sent
    in ``message``: the core rules at ``user.elicitation.result`` (``modify`` of
    ``content`` only on an accepted form result), then the effective content
    against the requested ``form_schema`` (when known; absent content: ``{}``)."""
    outcome = engine.apply(message, reply, response_error, check, host_rule=False)
    if outcome.reason:
        return ResultVerdict(None, reason=outcome.reason)
    edited = any(effect.get("type") == "modify" for effect in _effects(reply))
    published = codec.clone(result)
    if edited:
        published["content"] = codec.clone(outcome.actual["effective"]["content"])
    mode = get_path(message, "params", "event", "elicitation", "mode")
    if mode == FORM and published.get("action") == ACCEPT and form_schema is not None:
        problem = forms.error(form_schema, published.get("content", {}))
        if problem:
            return ResultVerdict(None, reason=f"the effective content: {problem}")
    return ResultVerdict(published, edited)
