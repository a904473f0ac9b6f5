"""The step engine (docs/LIFECYCLE.md, "Client: the steps" and "Chains"): the
generic machinery of a client run driven by steps, which every suite run by the
lifecycle commands builds on. It knows no individual suite.

What it is: ``StepClient``, one run against one server through the contract
peer (``contract/peer.py``): the control calls (``/mark``, ``/wait``,
``/release``, ``/wait-observed``; a failed one fails the row), uploads along
an ``UploadRoute``, content sources uploaded before the first message naming
them, every outgoing message checked against its canonical schema, intercepts
sent with their own deadlines and counted per request id, notifications never
waited for (each followed by ``/wait-observed``), replies evaluated by the core
rules without the host's local rule. A row runs its ``steps`` (``StepRun``: the
ops of ``OPS``, each slot's pending call, the staged, published and cancelled
requests) or its ``chain`` (``ChainRun``: serial intercept subscriptions, then
the observers; ``Settlement`` is how it settled). ``RowFailure`` ends a row
``failed``, ``RowUnsupported`` ``unsupported``.

The process model of every such client is ``run_suite_client``: the suite's
schemas compiled once, SIGTERM/SIGHUP turned into an exit (so a spawned server
is reaped), the peer opened and closed on every path, the rows run, the
suite's own top-level report keys, the server's receipts, the report written.
A suite subclasses ``StepClient`` (or brings its own rows) and overrides
``row`` and ``report_keys``.
"""

from __future__ import annotations

import base64
import binascii
import signal
import ssl
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from ..sdk import chain as chains
from ..sdk import codec, engine, rpc
from ..sdk.boundaries import Boundary, get_path
from ..sdk.channel import Call, Channel, StdioChannel
from ..sdk.content import body_refs, rebind_refs
from ..sdk.http import MalformedResponse, TransportError
from ..sdk.record import record
from ..sdk.schemas import (
    INTERCEPT_REQUEST,
    INTERCEPT_RESPONSE,
    OBSERVE_NOTIFICATION,
    UPLOAD_RECEIPT,
)
from ..sdk.tls import TlsFiles, client_context
from ..sdk.upload import send_upload, sha256_hex
from . import report
from .config import (
    UNREACHABLE,
    ConfigError,
    Fields,
    SuiteClientSettings,
    UploadSettings,
    schema_set,
    upload_settings,
)
from .peer import ControlClient, ControlError, SuitePeer

if TYPE_CHECKING:
    from ..sdk.schemas import SchemaSet

# The step ops this engine runs (docs/LIFECYCLE.md, "Client: the steps").
OPS = frozenset(
    {"send", "wait", "release", "receive", "accept", "cancel", "failOpen", "observe", "upload"}
    | {"emit"}
)


def log(role: str, text: str) -> None:
    print(f"ahp_py {role}: {text}", file=sys.stderr, flush=True)


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


class StepClient:
    """One client run of the step engine: every row against one server. A suite
    runs it as it is or overrides ``row`` (its own rows, built on these calls)
    and ``report_keys``."""

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
        from .uploads import upload_token

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

        # The step host has no local rule: the core suite's ``task`` rule
        # would refuse every upstream vector (tool ``task``, input ``{value}``).
        return engine.apply(request, reply, response_error, self.schemas.error, host_rule=False)

    # Rows.
    def run(self) -> list[dict[str, Any]]:
        return [self.row(row) for row in self.settings.scenarios]

    def report_keys(self) -> dict[str, Any]:
        """The suite's own top-level report keys (written before ``receipts``)."""
        return {}

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

    def __init__(self, client: StepClient, row: dict[str, Any]) -> None:
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
        client: StepClient,
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
    def of_row(cls, client: StepClient, row: dict[str, Any]) -> ChainRun:
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


# The process ------------------------------------------------------------------


class SuiteRows(Protocol):
    """What ``run_suite_client`` runs: a suite's client over one peer."""

    def run(self) -> list[dict[str, Any]]:
        """Every row's result, in the config's order."""
        ...

    def report_keys(self) -> dict[str, Any]:
        """The suite's own top-level report keys (written before ``receipts``)."""
        ...

    def receipts(self) -> Any:
        """The server's ``GET /receipts`` (None: it could not be had)."""
        ...


RowsFactory = Callable[[SuiteClientSettings, "SchemaSet", SuitePeer], SuiteRows]


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def run_suite_client(
    settings: SuiteClientSettings, schema_names: Iterable[str], rows: RowsFactory
) -> int:
    """One client process of a suite run by ``lifecycle-client``: the report is
    ``{language, results, ...report_keys, receipts}`` (``receipts`` fetched
    before a stdio server is shut down, when there is a control listener)."""
    from .peer import open_suite_peer

    schemas = schema_set(settings.file, settings.schema_dir)
    for name in schema_names:
        schemas.prepare(name)  # built once, before the first row
    previous: dict[signal.Signals, Any] = {}
    for number in (signal.SIGTERM, signal.SIGHUP):
        previous[number] = signal.signal(number, _on_signal)  # so the server is reaped
    extra: dict[str, Any] = {}
    peer = open_suite_peer(settings)
    try:
        client = rows(settings, schemas, peer)
        results = client.run()
        extra.update(client.report_keys())
        receipts = client.receipts() if peer.control is not None else None
        if receipts is not None:
            extra["receipts"] = receipts
    finally:
        peer.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    report.write_report(settings.report_file, settings.language, results, **extra)
    return 0


def report_unimplemented(settings: SuiteClientSettings) -> int:
    """A ``lifecycle-client`` run of a suite this adapter does not implement:
    every row ``unsupported``, naming the suite (docs/CONTRACT.md)."""
    error = f"suite {settings.suite!r} is not implemented by ahp_py"
    rows = [report.unsupported(row["id"], error) for row in settings.scenarios]
    # the lifecycle report's shape (an empty contentUploads), as it always was
    report.write_report(settings.report_file, settings.language, rows, contentUploads=[])
    return 0
