"""The catalogue suite (docs/CATALOGUE.md): discovery, the receiver's verdicts
and source-local lineage, and registration documents.

Server (``lifecycle-server`` with ``suite: "catalogue"``): ``hooks/capabilities``
is answered with the catalogue manifest ``M`` (``catalogue_manifest``, built
here from the doc, never read from a file) and recorded ``discovery`` just
before it is written; every ``hooks/observe`` is judged (schema: ``rejected``
with ``errorKind: "schema"``, HTTP 400; lineage, ``sdk/lineage``: ``rejected``
with ``errorKind: "lineage"``, 409; else ``observed``, 202), the verdict
recorded before the answer; over stdio a notification is never answered.
``GET /capabilities`` answers the bare capabilities of ``M``'s ``tool.before``
entry, unrecorded. Control: ``/health``, ``/receipts``, ``/wait-observed`` (counting ``observed``
and ``rejected``), ``/shutdown``.

Client (``lifecycle-client`` with ``suite: "catalogue"``): one discovery, then
each scenario's steps: ``notify`` (sent only when the SDK's schema check
passes), ``rawNotify`` (sent unchecked), each sent message followed by
``/wait-observed``; ``register`` (``sdk/registration`` against the discovered
manifest; nothing sent). The report is ``{language, discovery, results:
[{id, status, actual: {sent, registrations}}], receipts}``. It never reads
``expected``.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..contract import report
from ..contract.config import (
    SuiteClientSettings,
    SuiteServerSettings,
    SuiteSpec,
    load_suite_client,
    load_suite_server,
    schema_set,
)
from ..contract.control import EntryControl
from ..contract.entries import OBSERVED, WAIT_SECONDS, EntryLog
from ..contract.peer import ControlClient, ControlError, SuitePeer
from ..contract.registry import LIFECYCLE_CLIENT, LIFECYCLE_SERVER, Suite
from ..contract.steps import RowFailure, run_suite_client
from ..sdk import codec, registration, rpc
from ..sdk.boundaries import get_path
from ..sdk.http import MalformedResponse, TransportError
from ..sdk.lineage import LineageChecker
from ..sdk.manifest import PROTOCOL_VERSION
from ..sdk.schemas import CAPABILITIES_REQUEST, CAPABILITIES_RESPONSE, OBSERVE_NOTIFICATION

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..sdk.schemas import SchemaSet

NAME = "catalogue"
# No uploads, content sources or backends; the server never reads uploadAuth.
SPEC = SuiteSpec(NAME)
REGISTRATION = registration.REGISTRATION
DISCOVERY = "discovery"
REJECTED = "rejected"
SCHEMA_ERROR, LINEAGE_ERROR = "schema", "lineage"
OPS = frozenset({"notify", "rawNotify", "register"})
CONTROL_CALLS = frozenset({"/wait-observed"})  # besides GET /health, /receipts and /shutdown


def log(role: str, text: str) -> None:
    print(f"ahp_py {role}: {text}", file=sys.stderr, flush=True)


# The catalogue manifest M ----------------------------------------------------

# Every event type of the protocol but ``hook.failure``, in the order of
# common.schema.json#/$defs/eventType (the tests compare it with the schema).
EVENT_TYPES = (
    "tool.before",
    "tool.after",
    "session.start",
    "config.change.before",
    "turn.start",
    "turn.finish.before",
    "model.request.before",
    "model.response.after",
    "model.switch.before",
    "tool.permission.request",
    "tool.batch.after",
    "context.compact.before",
    "context.compact.after",
    "task.change.before",
    "user.elicitation.request",
    "user.elicitation.result",
    "user.message.inbound",
    "user.message.outbound",
    "workspace.change.before",
    "session.end",
    "config.change.after",
    "turn.end",
    "turn.progress",
    "model.error",
    "model.switch.after",
    "tool.permission.resolved",
    "tool.progress",
    "task.change.after",
    "user.attention",
    "workspace.change.after",
    "file.changed",
)

# The three events M also offers for interception, with their capabilities.
INTERCEPTED: dict[str, dict[str, Any]] = {
    "tool.before": {
        "effects": ["deny", "allow", "ask", "modify", "message", "flow"],
        "modify": {"input": {"replace": True, "merge": True}},
        "flow": {"operations": ["stop"]},
    },
    "tool.after": {
        "effects": ["modify", "message"],
        "modify": {"output": {"replace": True, "merge": False}},
    },
    "turn.start": {"effects": ["deny", "message"]},
}


def catalogue_manifest() -> dict[str, Any]:
    """``M``: a fresh copy every time."""
    events: list[dict[str, Any]] = []
    for name in EVENT_TYPES:
        if name in INTERCEPTED:
            entry = {
                "event": name,
                "modes": ["intercept", "observe"],
                "capabilities": codec.clone(INTERCEPTED[name]),
            }
        else:
            entry = {"event": name, "modes": ["observe"]}
        events.append(entry)
    return {
        "events": events,
        "gaps": [],
        "transports": ["http"],
        "authentication": ["bearer"],
        "toolPaths": ["native"],
        "contentCategories": ["text"],
        "limits": {"minTimeoutMs": 100, "maxTimeoutMs": 30000},
        "managedPolicy": {"scopes": ["user", "project"], "disableable": True},
        "correlationIdentityFields": ["session.id", "call.id"],
    }


def discovery_request() -> dict[str, Any]:
    """The one ``hooks/capabilities`` request a catalogue client sends."""
    return {
        "jsonrpc": "2.0",
        "id": "discovery",
        "method": rpc.CAPABILITIES,
        "params": {"protocolVersion": PROTOCOL_VERSION},
    }


# Server -----------------------------------------------------------------------


class CatalogueServer:
    """The AHP side of a catalogue server (what ``contract.server`` dispatches to):
    discovery and the receiver, over one receipt log and one lineage state."""

    def __init__(self, schemas: SchemaSet, entries: EntryLog) -> None:
        self.schemas = schemas
        self.entries = entries
        self.lineage = LineageChecker()
        self._lock = threading.Lock()  # a verdict and its receipt, in one order

    def release_all(self) -> None:
        pass  # nothing is ever held

    def drain(self, timeout: float) -> None:
        pass

    def dispatch(self, message: Any) -> rpc.Answer:
        if not isinstance(message, dict):
            return rpc.Answer(rpc.error(None, rpc.INVALID_REQUEST, "not a single JSON-RPC object"))
        method = message.get("method")
        if method == rpc.OBSERVE:
            return self.observe(message)  # one with an id fails the schema (400)
        if rpc.is_notification(message):
            log("server", f"ignored a notification {method!r}")
            return rpc.NO_REPLY
        if method == rpc.CAPABILITIES:
            return self.discovery(message)
        log("server", f"method {method!r} is not served by the catalogue suite")
        return rpc.Answer(rpc.error(message["id"], rpc.METHOD_NOT_FOUND, "method not found"))

    def manifest(self) -> dict[str, Any]:
        """``M``: ``GET /capabilities`` answers its ``tool.before`` capabilities (the
        bare object upstream clients read), never recorded, as it is no
        hooks/capabilities request a client sent (docs/CATALOGUE.md)."""
        return catalogue_manifest()

    def discovery(self, message: dict[str, Any]) -> rpc.Answer:
        problem = self.schemas.error(CAPABILITIES_REQUEST, message)
        if problem:
            log("server", f"invalid discovery request: {problem}")
            reply = rpc.error(message["id"], rpc.INVALID_PARAMS, "invalid capabilities request")
        else:
            result = {"protocolVersion": PROTOCOL_VERSION, "manifest": catalogue_manifest()}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        entry = {"kind": DISCOVERY, "request": message, "response": reply}

        def record() -> None:
            self.entries.record(codec.clone(entry))

        return rpc.Answer(reply, before=record)

    def observe(self, message: dict[str, Any]) -> rpc.Answer:
        event = get_path(message, "params", "event")
        ident = event.get("id") if isinstance(event, dict) else None
        event_id = ident if isinstance(ident, str) else None
        problem = self.schemas.error(OBSERVE_NOTIFICATION, message)
        with self._lock:
            if problem:
                log("server", f"observation {event_id!r} rejected (schema): {problem}")
                self._reject(event_id, message, SCHEMA_ERROR)
                return rpc.Answer(has_reply=False, status=400)
            assert isinstance(event, dict)
            verdict = self.lineage.admit(event)
            if not verdict.accepted:
                log("server", f"observation {event_id!r} rejected (lineage): {verdict.reason}")
                self._reject(event_id, message, LINEAGE_ERROR)
                return rpc.Answer(has_reply=False, status=409)
            entry = {"kind": OBSERVED, "eventId": event_id, "event": event, "message": message}
            self.entries.record(codec.clone(entry), key="eventId")
        return rpc.Answer(has_reply=False, status=202)

    def _reject(self, event_id: str | None, message: dict[str, Any], kind: str) -> None:
        entry = {"kind": REJECTED, "eventId": event_id, "message": message, "errorKind": kind}
        self.entries.record(codec.clone(entry), key="eventId")


def catalogue_parts(
    settings: SuiteServerSettings, wait_seconds: float = WAIT_SECONDS
) -> tuple[CatalogueServer, Callable[[threading.Event], EntryControl]]:
    """What a catalogue server process is made of: the AHP side and the control
    app (from the stop event), sharing one receipt log."""
    from ..contract.barriers import Barriers

    server = settings.server
    schemas = schema_set(server.file, server.schema_dir)
    for name in (CAPABILITIES_REQUEST, OBSERVE_NOTIFICATION):
        schemas.prepare(name)  # built once, before the first message
    entries = EntryLog()
    backend = CatalogueServer(schemas, entries)

    def control(stop: threading.Event) -> EntryControl:
        return EntryControl(
            entries,
            Barriers(),
            stop,
            wait_seconds,
            calls=CONTROL_CALLS,
            observed=(OBSERVED, REJECTED),
        )

    return backend, control


def serve(config_path: str) -> int:
    settings = load_suite_server(config_path, SPEC)
    from ..contract.server import run

    backend, control = catalogue_parts(settings)
    return run(settings.server, backend, control=control)


# Client -----------------------------------------------------------------------


class CatalogueClient:
    """One catalogue client run: discovery, then every row against one server."""

    def __init__(self, settings: SuiteClientSettings, schemas: SchemaSet, peer: SuitePeer) -> None:
        self.settings = settings
        self.schemas = schemas
        self.peer = peer
        self.channel = peer.channel
        self.timeout = settings.timeout
        self.sent_ids: Counter[str] = Counter()  # messages sent per event id (this run)
        self.discovery: Any = None  # the whole response, as received
        self.manifest: Any = None  # its result.manifest, when the response is usable
        self.manifest_problem = "no discovery was made"

    @property
    def control(self) -> ControlClient:
        if self.peer.control is None:
            raise RowFailure(self.peer.problem or "no control listener")
        return self.peer.control

    def receipts(self) -> Any:
        try:
            return self.control.get("/receipts")
        except (ControlError, RowFailure) as exc:
            log("client", f"GET /receipts: {exc}")
            return None

    def discover(self) -> None:
        """Send the one ``hooks/capabilities`` and keep its answer."""
        if self.peer.problem:
            self.manifest_problem = self.peer.problem
            return
        message = discovery_request()
        problem = self.schemas.error(CAPABILITIES_REQUEST, message)
        if problem:  # pragma: no cover - our own constant
            self.manifest_problem = f"the discovery request is invalid: {problem}"
            return
        try:
            self.discovery = self.channel.call(message, self.timeout).result(self.timeout)
        except (TransportError, MalformedResponse) as exc:
            self.manifest_problem = f"discovery failed: {exc}"
            log("client", self.manifest_problem)
            return
        problem = self.schemas.error(CAPABILITIES_RESPONSE, self.discovery)
        if problem is None and not codec.json_equal(self.discovery.get("id"), message["id"]):
            problem = "its id is not the request's"
        if problem:
            self.manifest_problem = (
                f"the discovery answer is not a capabilities response: {problem}"
            )
            log("client", self.manifest_problem)
            return
        self.manifest = self.discovery["result"]["manifest"]

    def send(self, message: Any) -> None:
        """Send one notification unchanged (never waiting for its answer), then
        ``POST /wait-observed`` with its event id and this run's count of them."""
        event_id = get_path(message, "params", "event", "id")
        try:
            self.channel.notify(message)
        except TransportError as exc:
            raise RowFailure(f"notification: {exc}") from None
        if not isinstance(event_id, str):
            raise RowFailure("a sent message has no string params.event.id to wait for")
        self.sent_ids[event_id] += 1
        body = {"eventId": event_id, "count": self.sent_ids[event_id]}
        try:
            self.control.post("/wait-observed", body)
        except ControlError as exc:
            raise RowFailure(str(exc)) from None

    def register(self, step: dict[str, Any]) -> dict[str, Any]:
        requirements, context = step.get("requirements", []), step.get("context")
        if not isinstance(requirements, list):
            raise RowFailure("register: requirements must be an array")
        if not isinstance(context, dict):
            raise RowFailure("register: context must be an object")
        if self.manifest is None:
            raise RowFailure(f"register: no discovered manifest ({self.manifest_problem})")

        def schema_error(document: Any) -> str | None:
            return self.schemas.error(REGISTRATION, document)

        verdict = registration.evaluate(
            step.get("registration"), self.manifest, requirements, context, schema_error
        )
        if not verdict.accepted:
            log("client", f"registration rejected ({verdict.rule}): {verdict.reason}")
        return verdict.entry()

    def run(self) -> list[dict[str, Any]]:
        """The discovery, then every row."""
        self.discover()
        return [self.row(row) for row in self.settings.scenarios]

    def report_keys(self) -> dict[str, Any]:
        return {"discovery": self.discovery}

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        sid: str = row["id"]
        steps = row.get("steps")
        if not isinstance(steps, list):
            return report.failed(sid, "the scenario has no steps array")
        for step in steps:
            op = step.get("op") if isinstance(step, dict) else None
            if op not in OPS:
                return report.unsupported(sid, f"step op {op!r} is not implemented by ahp_py")
        if self.peer.problem:
            return report.failed(sid, self.peer.problem)
        sent: list[Any] = []
        registrations: list[dict[str, Any]] = []
        for number, step in enumerate(steps):
            op = step["op"]
            try:
                if op == "register":
                    registrations.append(self.register(step))
                    continue
                if "message" not in step:
                    raise RowFailure("the step has no message")
                message = step["message"]
                if op == "notify":
                    problem = self.schemas.error(OBSERVE_NOTIFICATION, message)
                    if problem:
                        log("client", f"{sid}: steps[{number}]: not sent (invalid): {problem}")
                        continue
                self.send(message)
                sent.append(codec.clone(message))
            except RowFailure as exc:
                log("client", f"{sid}: steps[{number}] ({op}): {exc}")
                return report.failed(sid, f"steps[{number}] ({op}): {exc}")
        return report.completed(sid, {"sent": sent, "registrations": registrations})


CLIENT_SCHEMAS = (CAPABILITIES_REQUEST, CAPABILITIES_RESPONSE, OBSERVE_NOTIFICATION, REGISTRATION)


def run_client(config_path: str) -> int:
    return run_suite_client(load_suite_client(config_path, SPEC), CLIENT_SCHEMAS, CatalogueClient)


SUITE = Suite(NAME, {LIFECYCLE_CLIENT: run_client, LIFECYCLE_SERVER: serve})
