"""The lifecycle suite (docs/LIFECYCLE.md): the blind client's steps and chains,
and the server's held intercepts, observations and uploads.

Server: every ``hooks/intercept`` is recorded ``received``, then a scenario
request's reply (``responseSequences[KEY][n]`` for its n-th receipt, else
``responses[KEY]``) is held until ``POST /release {id}`` (sticky) and recorded
``replied`` just before it is written; an unknown id gets -32602 at once. A
``hooks/observe`` is checked (schema: 400, body refs: 409), recorded
``observed``, and answered with an unsolicited deny frame when its event
belongs to a scenario request (the client must ignore it), else 204. A
notification of the boundary event of a chain with ``holdObservers`` is
recorded ``{"kind": "observer-blocked", "id": EVENT}`` just before its
``observed`` entry, as upstream servers record it (its answer unchanged). Scripted
faults [ext]: a sequence entry ``{"fault": "server-error" | "malformed" |
"timeout"}`` and ``observeFaults`` (``"silent"``: recorded, never answered).
Uploads, control and readiness come from ``contract/``.

Client: runs each scenario's steps itself against its SDK (``sdk/channel``,
``sdk/engine``, ``sdk/chain``, ``sdk/upload``) and the server's control
listener, and reports what it derived: ``{published, cancelled, ignored,
states, observations, uploadStatuses}`` for steps, ``{called, failures,
observations, input}`` for chains (each call with its deadline, the
``unreachable`` backend from the config's ``backends``, every operational
failure in ``called`` and ``failures``; notifications never waited for, each
followed by ``/wait-observed``); then ``contentUploads`` and the server's
``receipts``. It never reads ``expected`` or ``chainProof``.
"""

from __future__ import annotations

import base64
import binascii
import signal
import ssl
import sys
import threading
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from ..contract import report
from ..contract.config import (
    CATALOGUE,
    COMPACTION,
    ELICITATION,
    LIFECYCLE,
    UNREACHABLE,
    ConfigError,
    Fields,
    SuiteClientSettings,
    SuiteServerSettings,
    UploadSettings,
    load_suite_client,
    load_suite_server,
    schema_set,
    upload_settings,
)
from ..contract.control import EntryControl
from ..contract.entries import (
    OBSERVED,
    OBSERVER_BLOCKED,
    RECEIVED,
    REPLIED,
    WAIT_SECONDS,
    EntryLog,
)
from ..contract.peer import ControlClient, ControlError, SuitePeer
from ..sdk import chain as chains
from ..sdk import codec, engine, rpc
from ..sdk.boundaries import DEFINITIONS, Boundary, get_path
from ..sdk.channel import Call, Channel, StdioChannel
from ..sdk.content import body_refs, rebind_refs
from ..sdk.http import MalformedResponse, TransportError
from ..sdk.manifest import discovery_manifest
from ..sdk.record import record
from ..sdk.schemas import (
    INTERCEPT_REQUEST,
    INTERCEPT_RESPONSE,
    OBSERVE_NOTIFICATION,
    UPLOAD_RECEIPT,
)
from ..sdk.tls import TlsFiles, client_context
from ..sdk.upload import ContentStore, UploadReceiver, send_upload, sha256_hex
from .core import discovery_answer

if TYPE_CHECKING:
    from ..contract.barriers import Barriers
    from ..sdk.schemas import SchemaSet

# The lifecycle commands serve these suites (docs/CATALOGUE.md, docs/COMPACTION.md,
# docs/ELICITATION.md reuse them).
SERVER_SUITES = (LIFECYCLE, CATALOGUE, COMPACTION, ELICITATION)
CLIENT_SUITES = (LIFECYCLE, CATALOGUE, COMPACTION, ELICITATION)
OPS = frozenset(
    {"send", "wait", "release", "receive", "accept", "cancel", "failOpen", "observe", "upload"}
    | {"emit"}
)
UNSOLICITED_OBSERVER = {
    "jsonrpc": "2.0",
    "id": "unsolicited-observer",
    "result": {
        "protocolVersion": "draft",
        "effects": [{"type": "deny", "reason": "observer must not decide"}],
    },
}


# Scripted faults (docs/LIFECYCLE.md, "Operational failures ... [ext]"): an entry
# of ``responseSequences`` that is ``{"fault": KIND}``, and ``observeFaults``.
SERVER_ERROR, MALFORMED_FAULT, TIMEOUT = "server-error", "malformed", "timeout"
FAULTS = (SERVER_ERROR, MALFORMED_FAULT, TIMEOUT)
MALFORMED_BODY = b'{"jsonrpc": "2.0", "id": '  # 25 bytes, not JSON
SILENT = "silent"


def fault_of(entry: Any) -> str | None:
    """The fault a ``responseSequences`` entry scripts (``{"fault": KIND}``), else None
    (an entry with another ``fault`` is sent unchanged, like any response)."""
    if isinstance(entry, dict) and set(entry) == {"fault"} and entry["fault"] in FAULTS:
        return str(entry["fault"])
    return None


def log(role: str, text: str) -> None:
    print(f"ahp_py {role}: {text}", file=sys.stderr, flush=True)


# Server -----------------------------------------------------------------------


class LifecycleServer:
    """The AHP side of a lifecycle server (what ``contract.server`` dispatches to)."""

    def __init__(
        self,
        schemas: SchemaSet,
        rows: list[dict[str, Any]],
        entries: EntryLog,
        barriers: Barriers,
        store: ContentStore,
    ) -> None:
        from ..contract.barriers import HeldReplies

        self.schemas = schemas
        self.entries = entries
        self.barriers = barriers
        self.store = store
        self.held = HeldReplies(barriers)
        self.closing = threading.Event()  # set at shutdown: unanswered exchanges close
        # request id -> (scenario, request key); the first scenario naming an id wins
        self.requests: dict[str, tuple[dict[str, Any], str]] = {}
        # event id -> (scenario, request key), likewise
        self.events: dict[str, tuple[dict[str, Any], str]] = {}
        for row in rows:
            requests = row.get("requests")
            for key, request in requests.items() if isinstance(requests, dict) else ():
                ident = request.get("id") if isinstance(request, dict) else None
                if isinstance(ident, str):
                    self.requests.setdefault(ident, (row, key))
                event_id = get_path(request, "params", "event", "id")
                if isinstance(event_id, str):
                    self.events.setdefault(event_id, (row, key))
        # the boundary event ids (requests.a's event) of the chains with held observers
        self.held_observers: set[str] = set()
        for row in rows:
            boundary = get_path(row, "requests", "a", "params", "event", "id")
            if get_path(row, "chain", "holdObservers") is True and isinstance(boundary, str):
                self.held_observers.add(boundary)

    def manifest(self) -> dict[str, Any]:
        """The core discovery manifest, as ``hooks/capabilities`` answers."""
        return discovery_manifest()

    def release_all(self) -> None:
        self.barriers.release_all()
        self.closing.set()

    def drain(self, timeout: float) -> None:
        self.held.drain(timeout)

    def dispatch(self, message: Any) -> rpc.Answer:
        if not isinstance(message, dict):
            return rpc.Answer(rpc.error(None, rpc.INVALID_REQUEST, "not a single JSON-RPC object"))
        method = message.get("method")
        if method == rpc.OBSERVE:
            return self.observe(message)  # one with an id fails the schema (400)
        if rpc.is_notification(message):
            log("server", f"ignored a notification {method!r}")
            return rpc.NO_REPLY
        if method == rpc.INTERCEPT:
            return self.intercept(message)
        if method == rpc.CAPABILITIES:
            return discovery_answer(self.schemas, message)
        return rpc.Answer(rpc.error(message["id"], rpc.METHOD_NOT_FOUND, "method not found"))

    def _missing_refs(self, message: dict[str, Any]) -> list[str]:
        items = get_path(message, "params", "event", "items")
        return [ref for ref in body_refs(items) if not self.store.has(ref)]

    def intercept(self, message: dict[str, Any]) -> rpc.Answer:
        ident = message["id"]
        count = self.entries.record({"kind": RECEIVED, "id": ident, "message": message})

        def replied() -> None:
            self.entries.record({"kind": REPLIED, "id": ident})

        def refuse(text: str, status: int | None = None) -> rpc.Answer:
            log("server", f"intercept {ident!r}: {text}")
            reply = rpc.error(ident, rpc.INVALID_PARAMS, text)
            return rpc.Answer(reply, before=replied, status=status)

        problem = self.schemas.error(INTERCEPT_REQUEST, message)
        if problem:
            return refuse(f"invalid intercept request: {problem}")
        missing = self._missing_refs(message)
        if missing:
            return refuse(f"no stored content for body ref {missing[0]!r}", 409)
        found = self.requests.get(ident) if isinstance(ident, str) else None
        if found is None:
            return refuse("unknown scenario request id")
        row, key = found
        sequence = get_path(row, "responseSequences", key)
        if isinstance(sequence, list) and sequence:
            reply = sequence[min(count, len(sequence)) - 1]
        elif isinstance(row.get("responses"), dict) and key in row["responses"]:
            reply = row["responses"][key]
        else:
            return refuse(f"scenario {row['id']!r} has no response for {key!r}")
        fault = fault_of(reply)
        if fault == TIMEOUT:
            # Never answered, not even at shutdown; never recorded ``replied``.
            log("server", f"intercept {ident!r}: scripted timeout (receipt {count})")
            return rpc.never_answered(self.closing)
        if fault == SERVER_ERROR:
            error = rpc.error(ident, rpc.INTERNAL_ERROR, "scripted server error")
            return self.held.answer(ident, error, before=replied, status=500)
        if fault == MALFORMED_FAULT:
            return self.held.answer(ident, None, before=replied, raw=MALFORMED_BODY)
        return self.held.answer(ident, reply, before=replied)

    def observe(self, message: dict[str, Any]) -> rpc.Answer:
        problem = self.schemas.error(OBSERVE_NOTIFICATION, message)
        if problem:
            log("server", f"invalid observation: {problem}")
            return rpc.Answer(has_reply=False, status=400)
        missing = self._missing_refs(message)
        if missing:
            log("server", f"observation names no stored content: {missing[0]!r}")
            return rpc.Answer(has_reply=False, status=409)
        event = message["params"]["event"]
        entry = {"kind": OBSERVED, "eventId": event["id"], "event": event, "message": message}
        # a held observer, recorded as upstream servers do (the client marks it too)
        blocked = (
            {"kind": OBSERVER_BLOCKED, "id": event["id"]}
            if isinstance(event["id"], str) and event["id"] in self.held_observers
            else None
        )
        count = self.entries.record(entry, key="eventId", before=blocked)
        found = self.events.get(event["id"]) if isinstance(event["id"], str) else None
        if found is None:
            return rpc.NO_REPLY
        row, key = found
        faults = get_path(row, "observeFaults", key)
        if isinstance(faults, list) and count <= len(faults) and faults[count - 1] == SILENT:
            log("server", f"observation {count} of {event['id']!r}: a silent observer")
            return rpc.never_answered(self.closing)
        # Deliberately adversarial: a client must ignore every observer answer.
        return rpc.Answer(codec.clone(UNSOLICITED_OBSERVER))


def serve(config_path: str) -> int:
    settings = load_suite_server(config_path, SERVER_SUITES)
    if settings.suite == CATALOGUE:
        from .catalogue import serve_catalogue

        return serve_catalogue(settings)
    if settings.suite == COMPACTION:
        from .compaction import serve_compaction

        return serve_compaction(settings)
    if settings.suite == ELICITATION:
        from .elicitation import serve_elicitation

        return serve_elicitation(settings)
    return serve_lifecycle(settings)


def serve_lifecycle(settings: SuiteServerSettings) -> int:
    from ..contract.server import run

    backend, control, uploads = lifecycle_parts(settings)
    return run(settings.server, backend, control=control, uploads=uploads)


def lifecycle_parts(
    settings: SuiteServerSettings, wait_seconds: float = WAIT_SECONDS
) -> tuple[LifecycleServer, Callable[[threading.Event], EntryControl], UploadReceiver]:
    """What a lifecycle server process is made of: the AHP side, the control app
    (from the stop event) and the upload receiver, sharing one receipt log."""
    from ..contract.barriers import Barriers
    from ..contract.uploads import upload_receiver

    server = settings.server
    schemas = schema_set(server.file, server.schema_dir)
    for name in (INTERCEPT_REQUEST, OBSERVE_NOTIFICATION):
        schemas.prepare(name)
    entries, barriers, store = EntryLog(), Barriers(), ContentStore()
    backend = LifecycleServer(schemas, server.scenarios, entries, barriers, store)

    def control(stop: threading.Event) -> EntryControl:
        return EntryControl(entries, barriers, stop, wait_seconds)

    return backend, control, upload_receiver(settings.upload_token, store, entries)


# Client -----------------------------------------------------------------------


class RowFailure(Exception):
    """The row could not run to its end (a transport or control failure, an
    invalid message of our own): it is reported ``failed`` with this reason."""


class RowUnsupported(Exception):
    """The row needs something this client does not implement."""


PENDING, STAGED, PUBLISHED, CANCELLED = "pending", "staged", "published", "cancelled"
FAILED = "failed"  # its reply was rejected at acceptance: an operational failure
MALFORMED = object()  # a reply that was not strict JSON (rejected when evaluated)
STATE_KEYS = ("decision", "executed", "input", "messages", "flow", "result")


class StrayFrames:
    """The stdio reader's hook for frames no request waits for: an ``emit`` step
    announces the id it expects, every other stray frame is dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._expected: dict[str, threading.Event] = {}

    def expect(self, ident: Any) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._expected[codec.dumps(ident)] = event
        return event

    def __call__(self, frame: Any) -> None:
        ident = frame.get("id") if isinstance(frame, dict) else None
        with self._lock:
            event = self._expected.pop(codec.dumps(ident), None)
        if event is not None:
            event.set()
        else:
            log("client", f"dropped an unsolicited frame (id {ident!r})")


def _string(step: dict[str, Any], name: str) -> str:
    value = step.get(name)
    if not isinstance(value, str):
        raise RowFailure(f"step {step.get('op')}: {name} must be a string")
    return value


@record
class UploadRoute:
    """Where one upload goes and with what: the endpoint (None: the server's), the
    environment variable of its bearer token (None: no credential), the timeout,
    and the CA that verifies an https endpoint (None: the system's)."""

    endpoint: str | None
    token_env: str | None
    timeout: float
    ca_file: str | None = None

    @classmethod
    def configured(cls, settings: UploadSettings) -> UploadRoute:
        return cls(settings.endpoint, settings.token_env, settings.timeout)

    @classmethod
    def of_step(cls, section: Fields, default_endpoint: str | None) -> UploadRoute:
        """A step's own ``upload`` block: it replaces the config's wholesale, so its
        credential is its ``auth`` alone (none when it has none) and an https
        endpoint's trust its ``tls.caFile`` alone (docs/ISOLATION.md)."""
        if section.has("auth"):
            settings = upload_settings(section, default_endpoint)
            route = cls.configured(settings)
        else:
            endpoint = section.optional_string("endpoint") or default_endpoint
            route = cls(endpoint, None, section.positive_integer("timeoutMs") / 1000.0)
        tls = section.section("tls")
        if tls is None:
            return route
        return cls(route.endpoint, route.token_env, route.timeout, tls.path("caFile"))


class Client:
    """One lifecycle client run: every row against one server."""

    def __init__(self, settings: SuiteClientSettings, schemas: SchemaSet, peer: SuitePeer) -> None:
        self.settings = settings
        self.schemas = schemas
        self.peer = peer
        self.channel = peer.channel
        self.timeout = settings.timeout
        self.stdio = isinstance(self.channel, StdioChannel)
        self.strays = StrayFrames()
        if isinstance(self.channel, StdioChannel):
            self.channel.unsolicited = self.strays
        self.aliases: dict[str, str] = {}  # upload alias -> receiver ref
        self.sources = {source.ref: source for source in settings.content_sources}
        self.content_uploads: list[dict[str, Any]] = []
        self.sends: Counter[str] = Counter()  # intercepts sent per request id (this run)
        self.observed: Counter[str] = Counter()  # observations sent per event id

    # Shared by steps and chains.
    @property
    def control(self) -> ControlClient:
        if self.peer.control is None:
            raise RowFailure(self.peer.problem or "no control listener")
        return self.peer.control

    def post(self, path: str, body: dict[str, Any]) -> None:
        try:
            self.control.post(path, body)
        except ControlError as exc:
            raise RowFailure(str(exc)) from None

    def mark(self, scenario: str, kind: str, ident: str) -> None:
        self.post("/mark", {"scenario": scenario, "kind": kind, "id": ident})

    def receipts(self) -> Any:
        try:
            return self.control.get("/receipts")
        except (ControlError, RowFailure) as exc:
            log("client", f"GET /receipts: {exc}")
            return None

    def upload(
        self, route: UploadRoute, data: bytes, size: int, sha256: str
    ) -> tuple[int, dict[str, Any] | None]:
        """Upload ``data`` declaring ``size`` and ``sha256``: the status, and the
        receiver's receipt on a 201 (checked: exactly ``{ref, size, sha256}``, and
        the size and hash of the bytes sent). The credential and the TLS trust are
        the route's alone: nothing of the event's goes with an upload."""
        from ..contract.uploads import upload_token

        endpoint = route.endpoint or self.peer.upload_endpoint
        if endpoint is None:
            raise RowFailure("no upload endpoint (config upload.endpoint or readiness)")
        context = None
        if route.ca_file is not None and endpoint.startswith("https:"):
            try:
                context = client_context(TlsFiles(ca_file=route.ca_file))
            except (OSError, ssl.SSLError) as exc:
                raise RowFailure(f"upload: tls.caFile: {type(exc).__name__}") from None
        try:
            answer = send_upload(
                endpoint,
                data,
                size=size,
                sha256=sha256,
                token=None if route.token_env is None else upload_token(route.token_env),
                timeout=route.timeout,
                ssl_context=context,
            )
        except TransportError as exc:
            raise RowFailure(f"upload: {exc}") from None
        if answer.status != 201:
            return answer.status, None
        receipt = answer.receipt()
        if receipt is None or self.schemas.error(UPLOAD_RECEIPT, receipt):
            raise RowFailure("upload: a 201 without a valid {ref, size, sha256} receipt")
        if receipt["size"] != len(data) or receipt["sha256"] != sha256_hex(data):
            raise RowFailure("upload: the receipt's size or sha256 is not the bytes sent")
        return answer.status, receipt

    def prepare(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` with its event's body refs rebound from upload aliases to the
        receiver's refs; a content source no step uploaded is uploaded first."""
        event = get_path(message, "params", "event")
        if not isinstance(event, dict) or "items" not in event:
            copied: dict[str, Any] = codec.clone(message)
            return copied
        for ref in body_refs(event["items"]):
            source = self.sources.get(ref)
            if ref in self.aliases or source is None:
                continue
            assert self.settings.upload is not None
            status, receipt = self.upload(
                UploadRoute.configured(self.settings.upload),
                source.data,
                source.size,
                source.sha256,
            )
            if receipt is None:
                raise RowFailure(f"content source {ref!r}: upload answered {status}")
            self.aliases[ref] = receipt["ref"]
            self.content_uploads.append(
                {
                    "sourceRef": ref,
                    "descriptor": dict(receipt),
                    "method": message.get("method"),
                    "eventId": event.get("id"),
                }
            )
        copy: dict[str, Any] = codec.clone(message)
        copy["params"]["event"]["items"] = rebind_refs(event["items"], self.aliases)
        return copy

    def checked(self, message: dict[str, Any], schema: str) -> dict[str, Any]:
        problem = self.schemas.error(schema, message)
        if problem:
            raise RowFailure(f"the message to send is invalid: {problem}")
        return message

    def channel_for(self, backend: Any) -> Channel | None:
        """The channel of a chain subscription's ``backend``: the run's server for
        every name but ``unreachable`` (None), which the config's ``backends`` names."""
        return self.peer.backend(UNREACHABLE) if backend == UNREACHABLE else None

    def send(
        self,
        message: dict[str, Any],
        bypass: bool = False,
        timeout: float | None = None,
        channel: Channel | None = None,
    ) -> Call:
        """Send an intercept through the run's server (or ``channel``); ``timeout``
        is its own deadline when it has one."""
        if channel is not None:
            return channel.call(message, timeout)
        if bypass:
            call: Call = self.channel.replay(message, timeout)
        else:
            call = self.channel.call(message, timeout)
        self.sends[str(message.get("id"))] += 1
        return call

    def notify(self, message: dict[str, Any], channel: Channel | None = None) -> bool:
        """Send ``hooks/observe`` and never wait for its answer (dropped whenever
        it comes, if ever); then ``POST /wait-observed`` (both transports), so the
        receipt precedes later marks and calls. Through another backend's
        ``channel`` a failed send is only noted (False): the run's server has
        nothing to wait for."""
        try:
            (channel or self.channel).notify(message)
        except TransportError as exc:
            if channel is None:
                raise RowFailure(f"observation: {exc}") from None
            log("client", f"observation to another backend not delivered: {exc}")
            return False
        if channel is not None:
            return True
        event_id = message["params"]["event"]["id"]
        self.observed[event_id] += 1
        self.post("/wait-observed", {"eventId": event_id, "count": self.observed[event_id]})
        return True

    def evaluate(self, request: dict[str, Any], reply: Any) -> engine.Outcome:
        if reply is MALFORMED:
            return engine.Outcome({"rejected": True}, "the reply is not strict JSON")

        def response_error(message: Any) -> str | None:
            return self.schemas.error(INTERCEPT_RESPONSE, message)

        # The lifecycle host has no local rule: the core suite's ``task`` rule
        # would refuse every upstream vector (tool ``task``, input ``{value}``).
        return engine.apply(request, reply, response_error, self.schemas.error, host_rule=False)

    # Rows.
    def run(self) -> list[dict[str, Any]]:
        return [self.row(row) for row in self.settings.scenarios]

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        sid: str = row["id"]
        transports = row.get("transports")
        if isinstance(transports, list) and self.settings.transport not in transports:
            return report.unsupported(
                sid, f"the scenario runs only over {', '.join(map(str, transports))}"
            )
        if self.peer.problem:
            return report.failed(sid, self.peer.problem)
        try:
            problem = _unsupported(row)
            if problem:
                raise RowUnsupported(problem)
            actual = (
                ChainRun.of_row(self, row).run() if "chain" in row else StepRun(self, row).run()
            )
        except RowUnsupported as exc:
            return report.unsupported(sid, str(exc))
        except engine.Unsupported as exc:
            return report.unsupported(sid, str(exc))
        except RowFailure as exc:
            log("client", f"{sid}: {exc}")
            return report.failed(sid, str(exc))
        return report.completed(sid, actual)


def _unsupported(row: dict[str, Any]) -> str | None:
    """What of the row this client cannot run (checked before anything is sent)."""
    requests = row.get("requests")
    if not isinstance(requests, dict) or not isinstance(row.get("steps", []), list):
        return "the scenario has no requests object or steps array"
    for step in row.get("steps", []):
        op = step.get("op") if isinstance(step, dict) else None
        if op not in OPS:
            return f"step op {op!r} is not implemented by ahp_py"
    for request in requests.values():
        engine.boundary_for(request)
    if "chain" in row and "a" not in requests:
        return "a chain needs requests.a"
    return None


class StepRun:
    """One step scenario (docs/LIFECYCLE.md, "Client: the steps")."""

    def __init__(self, client: Client, row: dict[str, Any]) -> None:
        self.client = client
        self.sid: str = row["id"]
        self.requests: dict[str, Any] = row["requests"]
        self.steps: list[Any] = row.get("steps", [])
        self.state: dict[str, str] = {}
        self.staged: dict[str, Any] = {}
        self.sent: dict[str, dict[str, Any]] = {}  # key -> the request as sent
        self.settled: dict[str, Any] = {}  # key -> the effective value published
        self.slots: dict[str, tuple[str, Call]] = {}
        self.actual: dict[str, Any] = {
            "published": [],
            "cancelled": [],
            "ignored": [],
            "states": {},
            "observations": [],
            "uploadStatuses": [],
        }

    def run(self) -> dict[str, Any]:
        for number, step in enumerate(self.steps):
            try:
                getattr(self, "op_" + step["op"])(step)
            except RowFailure as exc:
                raise RowFailure(f"steps[{number}] ({step['op']}): {exc}") from None
        return self.actual

    def key(self, step: dict[str, Any]) -> str:
        key = step.get("key")
        if not isinstance(key, str) or key not in self.requests:
            raise RowFailure(f"unknown request key {key!r}")
        return key

    def rid(self, key: str) -> str:
        return str(self.requests[key]["id"])

    def request(self, key: str) -> dict[str, Any]:
        """The request as sent (else as it would be sent)."""
        if key not in self.sent:
            self.sent[key] = self.client.checked(
                self.client.prepare(self.requests[key]), INTERCEPT_REQUEST
            )
        return self.sent[key]

    def mark(self, kind: str, key: str) -> None:
        self.client.mark(self.sid, kind, self.rid(key))

    def op_send(self, step: dict[str, Any]) -> None:
        key, slot = self.key(step), _string(step, "slot")
        bypass = step.get("bypassSDK") is True
        message = self.request(key)
        self.slots[slot] = (key, self.client.send(message, bypass))
        if not bypass:
            self.state.setdefault(key, PENDING)

    def op_wait(self, step: dict[str, Any]) -> None:
        count = step.get("count", 1)
        self.client.post("/wait", {"id": self.rid(self.key(step)), "count": count})

    def op_release(self, step: dict[str, Any]) -> None:
        self.client.post("/release", {"id": self.rid(self.key(step))})

    def op_receive(self, step: dict[str, Any]) -> None:
        slot = _string(step, "slot")
        if slot not in self.slots:
            raise RowFailure(f"slot {slot!r} was never sent")
        key, call = self.slots[slot]
        try:
            reply: Any = call.result(self.client.timeout)
        except MalformedResponse as exc:
            log("client", f"{self.sid}: slot {slot}: {exc}")
            reply = MALFORMED
        except TransportError as exc:
            raise RowFailure(f"slot {slot}: {exc}") from None
        if self.state.get(key) in (CANCELLED, STAGED, PUBLISHED):
            self.actual["ignored"].append(slot)
            return
        schemas = self.client.schemas
        problem = None if reply is MALFORMED else schemas.error(INTERCEPT_RESPONSE, reply)
        if problem:
            log("client", f"{self.sid}: slot {slot}: staged a reply the schema refuses: {problem}")
        self.state[key] = STAGED
        self.staged[key] = reply
        self.mark("acquired", key)

    def _publish(self, key: str, state: dict[str, Any], value: Any) -> None:
        rid = self.rid(key)
        self.actual["published"].append(rid)
        self.actual["states"][rid] = state
        self.settled[key] = value
        self.state[key] = PUBLISHED
        self.mark("accepted", key)

    def op_accept(self, step: dict[str, Any]) -> None:
        key = self.key(step)
        if self.state.get(key) != STAGED:
            return
        request = self.request(key)
        boundary = engine.boundary_for(request)
        outcome = self.client.evaluate(request, self.staged.pop(key))
        if outcome.reason:
            # An operational failure: nothing is published; a later failOpen may publish.
            log("client", f"{self.sid}: {self.rid(key)}: reply rejected: {outcome.reason}")
            self.state[key] = FAILED
            return
        state = {k: outcome.actual[k] for k in STATE_KEYS if k in outcome.actual}
        self._publish(key, state, chains.effective_value(boundary, outcome))

    def op_cancel(self, step: dict[str, Any]) -> None:
        key = self.key(step)
        if self.state.get(key) == CANCELLED:
            return
        self.mark("cancelled", key)
        self.actual["cancelled"].append(self.rid(key))
        self.staged.pop(key, None)
        self.state[key] = CANCELLED

    def op_failOpen(self, step: dict[str, Any]) -> None:
        key = self.key(step)
        if self.state.get(key) in (CANCELLED, STAGED, PUBLISHED):
            return
        request = self.requests[key]
        boundary = engine.boundary_for(request)
        original = boundary.original(request["params"]["event"])
        state: dict[str, Any] = {"decision": "allow", "executed": boundary.gated}
        if boundary.target == "input":
            state["input"] = original
        state["messages"] = []
        self._publish(key, state, original)

    def op_observe(self, step: dict[str, Any]) -> None:
        key, subscription = self.key(step), _string(step, "subscription")
        request = self.requests[key]
        boundary = engine.boundary_for(request)
        event = request["params"]["event"]
        value = self.settled.get(key, boundary.original(event))
        try:
            event = boundary.with_value(event, value)
        except ValueError as exc:
            raise RowUnsupported(str(exc)) from None
        if "items" in step:
            event["items"] = codec.clone(step["items"])
        message = rpc.observation(request["params"].get("protocolVersion"), event)
        self.client.notify(self.client.checked(self.client.prepare(message), OBSERVE_NOTIFICATION))
        self.actual["observations"].append(
            {"eventId": event.get("id"), "subscription": subscription, "input": value}
        )

    def op_upload(self, step: dict[str, Any]) -> None:
        alias = _string(step, "ref")
        size: Any = step.get("size")
        sha256 = _string(step, "sha256")
        if not codec.is_integer(size) or size < 0:
            raise RowFailure("upload size must be a non-negative integer")
        try:
            data = base64.b64decode(_string(step, "bodyBase64"), validate=True)
        except (binascii.Error, ValueError):
            raise RowFailure("bodyBase64 is not base64") from None
        settings = self.client.settings.upload
        assert settings is not None
        route = UploadRoute.configured(settings)
        if isinstance(step.get("upload"), dict):
            where = Fields(step["upload"], f"scenario {self.sid}", "upload.")
            try:
                route = UploadRoute.of_step(where, settings.endpoint)
            except ConfigError as exc:
                raise RowFailure(str(exc)) from None
        status, receipt = self.client.upload(route, data, int(size), sha256)
        self.actual["uploadStatuses"].append(status)
        if receipt is not None:
            self.client.aliases[alias] = receipt["ref"]

    def op_emit(self, step: dict[str, Any]) -> None:
        if not self.client.stdio:
            raise RowFailure("emit needs the stdio transport")
        frame = step.get("response")
        ident = frame.get("id") if isinstance(frame, dict) else None
        arrived = self.client.strays.expect(ident)
        self.client.post("/emit", {"response": frame})
        if not arrived.wait(self.client.timeout):
            raise RowFailure(f"the emitted frame {ident!r} never reached the reader")
        self.client.mark(self.sid, "discarded", str(ident))
        self.actual["ignored"].append(f"unsolicited:{ident}")


@record(frozen=False)
class Settlement:
    """How a chain settled: who was called, failed and notified, the settled
    effective value, the state carried out of the last accepted reply (None: no
    reply was accepted), whether a fail-closed failure ended it, and the
    subscription whose accepted ``return`` bound the carried candidate."""

    called: list[str]
    failures: list[str]
    observations: list[str]
    value: Any
    state: dict[str, Any] | None = None
    failed_closed: bool = False
    supplier: str | None = None

    def actual(self) -> dict[str, Any]:
        return {
            "called": self.called,
            "failures": self.failures,
            "observations": self.observations,
            "input": self.value,
        }


def _has_return(reply: Any) -> bool:
    effects = get_path(reply, "result", "effects")
    return isinstance(effects, list) and any(
        isinstance(effect, dict) and effect.get("type") == "return" for effect in effects
    )


class ChainRun:
    """One chain (docs/LIFECYCLE.md, "Chains"): ``request`` through serial
    ``subscriptions`` (checked here); ``release``: release the request id before
    the first call (a server that never holds needs none)."""

    def __init__(
        self,
        client: Client,
        sid: str,
        subscriptions: Any,
        request: dict[str, Any],
        interrupt: bool = False,
        hold_observers: bool = False,
        release: bool = True,
    ) -> None:
        self.client = client
        self.sid = sid
        if not isinstance(subscriptions, list):
            raise RowFailure("the chain's subscriptions must be an array")
        self.subscriptions: list[dict[str, Any]] = []
        for sub in subscriptions:
            if not isinstance(sub, dict) or not isinstance(sub.get("id"), str):
                raise RowFailure("each chain subscription needs a string id")
            if sub.get("mode") not in ("intercept", "observe"):
                raise RowUnsupported(f"chain subscription mode {sub.get('mode')!r}")
            self.subscriptions.append(sub)
        self.interrupt = interrupt
        self.hold_observers = hold_observers
        self.release = release
        self.request = client.checked(client.prepare(request), INTERCEPT_REQUEST)
        self.boundary: Boundary = engine.boundary_for(self.request)
        self.rid = str(self.request["id"])
        self.event_id = str(self.request["params"]["event"]["id"])
        self.last_reply: Any = None

    @classmethod
    def of_row(cls, client: Client, row: dict[str, Any]) -> ChainRun:
        chain = row.get("chain")
        if not isinstance(chain, dict) or not isinstance(chain.get("subscriptions"), list):
            raise RowFailure("chain.subscriptions must be an array")
        return cls(
            client,
            row["id"],
            chain["subscriptions"],
            row["requests"]["a"],
            interrupt=chain.get("interrupt") is True,
            hold_observers=chain.get("holdObservers") is True,
        )

    def mark(self, kind: str) -> None:
        self.client.mark(self.sid, kind, self.rid)

    def run(self) -> dict[str, Any]:
        return self.settle().actual()

    def settle(self) -> Settlement:
        client, boundary = self.client, self.boundary
        original = boundary.original(self.request["params"]["event"])
        value = codec.clone(original)
        state: dict[str, Any] | None = None  # None: the request's own
        supplier: str | None = None
        failed_closed = False
        called: list[str] = []
        failures: list[str] = []
        intercepts = [s for s in self.subscriptions if s["mode"] == "intercept"]
        interrupt = self.interrupt and bool(intercepts)
        if intercepts and not interrupt and self.release:
            client.post("/release", {"id": self.rid})
        for sub in intercepts:
            try:
                message = chains.request_for(
                    self.request, boundary, value, state, sub.get("content")
                )
            except ValueError as exc:
                raise RowUnsupported(str(exc)) from None
            deadline = self.deadline(sub)
            channel = client.channel_for(sub.get("backend"))
            call = client.send(
                client.checked(message, INTERCEPT_REQUEST), timeout=deadline, channel=channel
            )
            called.append(sub["id"])
            if interrupt:
                return self._interrupted(call, called, original, channel is None, deadline)
            self.last_reply = None
            outcome = self._outcome(message, call, deadline)
            if outcome.reason:
                log("client", f"{self.sid}: {sub['id']} failed: {outcome.reason}")
                failures.append(sub["id"])
                if sub.get("failurePolicy") == "fail-closed":
                    value = codec.clone(original)  # a fail-closed failure denies
                    failed_closed = True
                    break
                continue
            value = chains.effective_value(boundary, outcome)
            state = outcome.state
            if state is None or state.get("candidate") is None:
                supplier = None
            elif _has_return(self.last_reply):
                supplier = sub["id"]  # its last return bound the candidate
            if chains.short_circuits(outcome):
                break
        self.mark("chain-settled")
        targets = [s for s in self.subscriptions if s["mode"] == "observe" or s["id"] not in called]
        observations: list[str] = []
        for sub in targets:
            if self.hold_observers:
                self.mark("observer-blocked")
            note = chains.observation_for(self.request, boundary, value, sub.get("content"))
            note = client.checked(client.prepare(note), OBSERVE_NOTIFICATION)
            client.notify(note, client.channel_for(sub.get("backend")))
            observations.append(sub["id"])
        return Settlement(called, failures, observations, value, state, failed_closed, supplier)

    def deadline(self, sub: dict[str, Any]) -> float:
        """An intercept subscription's own ``timeoutMs`` [ext], else the config's."""
        value = sub.get("timeoutMs")
        if value is None:
            return self.client.timeout
        if not codec.is_positive_integer(value):
            raise RowFailure(f"subscription {sub['id']}: timeoutMs must be a positive integer")
        return float(value) / 1000.0

    def _outcome(self, message: dict[str, Any], call: Call, deadline: float) -> engine.Outcome:
        """The call's reply evaluated by the core rules; every operational failure
        (unreachable, a status other than 200, not JSON, another id, a JSON-RPC
        error, the deadline, a rejection) is a rejected outcome."""
        try:
            reply: Any = call.result(deadline)
        except MalformedResponse as exc:
            log("client", f"{self.sid}: {exc}")
            reply = MALFORMED
        except TransportError as exc:
            return engine.Outcome({"rejected": True}, f"no reply: {exc}")
        self.last_reply = reply
        return self.client.evaluate(message, reply)

    def _interrupted(
        self, call: Call, called: list[str], original: Any, at_server: bool, deadline: float
    ) -> Settlement:
        """Interrupt while the first call is in flight: once the server has it, the
        boundary settles with the original value; the late reply is dropped (a
        call to another backend leaves the server nothing to wait for)."""
        client = self.client
        if at_server:
            client.post("/wait", {"id": self.rid, "count": client.sends[self.rid]})
        self.mark("cancelled")
        self.mark("chain-settled")
        client.post("/release", {"id": self.rid})
        try:
            call.result(deadline)
        except (TransportError, MalformedResponse) as exc:
            log("client", f"{self.sid}: the interrupted call's reply: {exc}")
        return Settlement(called, [], [], original)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def run_client(config_path: str) -> int:
    from ..contract.peer import open_suite_peer

    settings = load_suite_client(config_path, CLIENT_SUITES)
    if settings.suite not in CLIENT_SUITES:
        error = f"suite {settings.suite!r} is not implemented by ahp_py"
        rows = [report.unsupported(row["id"], error) for row in settings.scenarios]
        report.write_report(settings.report_file, settings.language, rows, contentUploads=[])
        return 0
    if settings.suite == CATALOGUE:
        from .catalogue import run_catalogue_client

        return run_catalogue_client(settings)
    if settings.suite == COMPACTION:
        from .compaction import run_compaction_client

        return run_compaction_client(settings)
    if settings.suite == ELICITATION:
        from .elicitation import run_elicitation_client

        return run_elicitation_client(settings)
    schemas = schema_set(settings.file, settings.schema_dir)
    for name in (
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        OBSERVE_NOTIFICATION,
        UPLOAD_RECEIPT,
        *DEFINITIONS,
    ):
        schemas.prepare(name)
    previous: dict[signal.Signals, Any] = {}
    for number in (signal.SIGTERM, signal.SIGHUP):
        previous[number] = signal.signal(number, _on_signal)  # so the server is reaped
    extra: dict[str, Any] = {}
    peer = open_suite_peer(settings)
    try:
        client = Client(settings, schemas, peer)
        results = client.run()
        extra["contentUploads"] = client.content_uploads
        receipts = client.receipts() if peer.control is not None else None
        if receipts is not None:
            extra["receipts"] = receipts
    finally:
        peer.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    report.write_report(settings.report_file, settings.language, results, **extra)
    return 0
