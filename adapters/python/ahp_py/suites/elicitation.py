"""The elicitation suite (docs/ELICITATION.md): a receiver that validates
complete elicitation events, and a host that applies a backend's effects at
both elicitation boundaries atomically.

Server (``lifecycle-server`` with ``suite: "elicitation"``): every message but
``hooks/observe`` (204, not recorded) is an intercept checked by
``sdk/elicitation.Receiver`` in the contract's order; a refusal is HTTP 400
(409 for content not stored here) with a JSON-RPC -32602 body, over stdio that
error as the answer line, and nothing is recorded. An accepted one is recorded
``{"kind": "elicitation", "eventId", "type", "summary"}`` and answered with the
scripted ``responses[<id>]`` of its row, else the no-effect reply. Uploads,
control (``/mark`` of ``row-start`` only) and readiness are the contract's
(``contract/``), as for every suite run by the lifecycle commands.

Client (``lifecycle-client`` with ``suite: "elicitation"``): per row a
``row-start`` mark, then a wire row's ``upload`` / ``send`` steps (messages
sent unchanged but for the body refs of bound aliases) or an atomic row's two
boundaries (``sdk/elicitation``); then the server's receipts. It never reads
``expected`` or ``responses``.
"""

from __future__ import annotations

import base64
import binascii
import threading
from typing import TYPE_CHECKING, Any

from ..contract import report
from ..contract.config import (
    ConfigError,
    SuiteClientSettings,
    SuiteServerSettings,
    SuiteSpec,
    load_suite_client,
    load_suite_server,
    read_json,
    schema_set,
)
from ..contract.control import EntryControl, Reply
from ..contract.entries import WAIT_SECONDS, EntryLog
from ..contract.registry import LIFECYCLE_CLIENT, LIFECYCLE_SERVER, Suite
from ..contract.steps import (
    RowFailure,
    RowUnsupported,
    StepClient,
    UploadRoute,
    log,
    run_suite_client,
)
from ..sdk import codec, elicitation, engine, rpc
from ..sdk.boundaries import DEFINITIONS, get_path
from ..sdk.channel import Call, HttpChannel, StdioChannel
from ..sdk.content import rebind_refs
from ..sdk.http import TransportError
from ..sdk.manifest import discovery_manifest
from ..sdk.schemas import INTERCEPT_REQUEST, INTERCEPT_RESPONSE, UPLOAD_RECEIPT
from ..sdk.upload import sha256_hex

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..contract.peer import SuitePeer
    from ..sdk.schemas import SchemaSet
    from ..sdk.upload import UploadReceiver

NAME = "elicitation"
# Uploads, but no content sources or backends; the server reads uploadAuth.
SPEC = SuiteSpec(NAME, upload=True, upload_auth=True)
ROW_START = "row-start"
UNAUTHORIZED_TOKEN_ENV = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"
CREDENTIALS = ("upload", "unauthorized", "none")
OPS = ("upload", "send")
NOT_SENT = "not-sent"


def no_effect(ident: Any) -> dict[str, Any]:
    """The canonical no-effect reply to the intercept with ``ident``."""
    return {"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": "draft", "effects": []}}


# Server -----------------------------------------------------------------------


class ElicitationServer:
    """The AHP side of an elicitation server (what ``contract.server`` dispatches to)."""

    def __init__(
        self,
        schemas: SchemaSet,
        rows: list[dict[str, Any]],
        entries: EntryLog,
        stored: Callable[[str], bool],
        authenticated_source: str,
    ) -> None:
        self.entries = entries
        self.receiver = elicitation.Receiver(schemas.error, stored, authenticated_source)
        # request id -> the scripted reply; the first row naming an id wins
        self.responses: dict[str, Any] = {}
        for row in rows:
            responses = row.get("responses")
            for key, value in responses.items() if isinstance(responses, dict) else ():
                self.responses.setdefault(key, value)

    def manifest(self) -> dict[str, Any]:
        """The adapter's core discovery manifest. This server answers no
        ``hooks/capabilities`` itself (a POSTed one is judged as an intercept and
        refused, docs/ELICITATION.md), so ``GET /capabilities`` answers that
        manifest's ``tool.before`` capabilities, as the other suites' servers do."""
        return discovery_manifest()

    def release_all(self) -> None:
        pass  # nothing is ever held

    def drain(self, timeout: float) -> None:
        pass

    def dispatch(self, message: Any) -> rpc.Answer:
        if isinstance(message, dict) and message.get("method") == rpc.OBSERVE:
            return rpc.NO_REPLY  # 204 over HTTP, nothing over stdio; not recorded
        return self.intercept(message)

    def _record(self, accepted: elicitation.Accepted) -> None:
        self.entries.record(accepted.entry(), key="eventId")

    def intercept(self, message: Any) -> rpc.Answer:
        ident = message.get("id") if isinstance(message, dict) else None
        try:
            self.receiver.accept(message, self._record)
        except elicitation.Refusal as exc:
            log("server", f"intercept {ident!r} refused ({exc.status}): {exc}")
            reply = rpc.error(ident, rpc.INVALID_PARAMS, str(exc))
            return rpc.Answer(reply, status=exc.status)
        if isinstance(ident, str) and ident in self.responses:
            return rpc.Answer(codec.clone(self.responses[ident]))
        return rpc.Answer(no_effect(ident))


class ElicitationControl(EntryControl):
    """The lifecycle control answers this suite uses: ``/health``,
    ``/receipts``, ``/shutdown`` and ``/mark`` of kind ``row-start`` only."""

    def __init__(self, entries: EntryLog, stop: threading.Event, wait_seconds: float) -> None:
        from ..contract.barriers import Barriers

        super().__init__(entries, Barriers(), stop, wait_seconds, calls=frozenset({"/mark"}))

    def _mark(self, payload: dict[str, Any]) -> Reply:
        scenario, kind, ident = payload.get("scenario"), payload.get("kind"), payload.get("id")
        if not isinstance(scenario, str) or not scenario or not isinstance(ident, str) or not ident:
            return Reply(400, {"error": "/mark needs a non-empty string scenario and id"})
        if kind != ROW_START:
            return Reply(400, {"error": f"/mark kind must be {ROW_START}"})
        self.entries.record({"kind": ROW_START, "id": ident, "scenario": scenario})
        return Reply(200, {"ok": True})


def authenticated_source(settings: SuiteServerSettings) -> str:
    """The scenario file's ``authenticatedSource`` (a non-empty string)."""
    server = settings.server
    try:
        document = read_json(server.scenario_file)
    except ValueError as exc:  # pragma: no cover - the file was read already
        raise ConfigError(server.file, "scenarioFile", str(exc)) from None
    source = document.get("authenticatedSource") if isinstance(document, dict) else None
    if not isinstance(source, str) or not source:
        raise ConfigError(
            server.file, "scenarioFile", "the scenario file has no authenticatedSource string"
        )
    return source


def elicitation_parts(
    settings: SuiteServerSettings, wait_seconds: float = WAIT_SECONDS
) -> tuple[ElicitationServer, Callable[[threading.Event], EntryControl], UploadReceiver]:
    """What an elicitation server process is made of: the AHP side, the control
    app (from the stop event) and the upload receiver, sharing one receipt log
    and one content store."""
    from ..contract.uploads import upload_receiver
    from ..sdk.upload import ContentStore

    server = settings.server
    source = authenticated_source(settings)
    schemas = schema_set(server.file, server.schema_dir)
    for name in (INTERCEPT_REQUEST, *elicitation.DEFINITIONS):
        schemas.prepare(name)
    entries, store = EntryLog(), ContentStore()
    backend = ElicitationServer(schemas, server.scenarios, entries, store.has, source)

    def control(stop: threading.Event) -> EntryControl:
        return ElicitationControl(entries, stop, wait_seconds)

    return backend, control, upload_receiver(settings.upload_token, store, entries)


def serve(config_path: str) -> int:
    settings = load_suite_server(config_path, SPEC)
    from ..contract.server import run

    backend, control, uploads = elicitation_parts(settings)
    return run(settings.server, backend, control=control, uploads=uploads)


# Client -----------------------------------------------------------------------


class StdioWire:
    """Exchanges over a stdio channel, one at a time: one line out, the one
    answer line back. Nothing goes through the channel's pending-request
    bookkeeping (the bypass), so every answer line reaches ``_answer`` and is
    the answer of the exchange in flight, whatever its id."""

    def __init__(self, channel: StdioChannel) -> None:
        self.channel = channel
        self._lock = threading.Lock()
        self._current: Call | None = None
        channel.unsolicited = self._answer

    def _answer(self, frame: Any) -> None:
        with self._lock:
            call, self._current = self._current, None
        if call is None:
            log("client", f"dropped a line no exchange waits for: {codec.dumps(frame)[:200]}")
            return
        call.resolve(frame)

    def exchange(self, message: Any, timeout: float) -> Any:
        """The parsed answer line; raises TransportError (none in time)."""
        call = Call()
        with self._lock:
            self._current = call
        try:
            self.channel.notify(message)  # a plain write of one line
            return call.result(timeout)
        finally:
            with self._lock:
                if self._current is call:
                    self._current = None


def post_raw(channel: HttpChannel, message: Any, timeout: float) -> tuple[int, bytes]:
    """One POST of ``message`` to the endpoint with the run's credentials: the
    status and the body, whatever the status (TransportError: no answer)."""
    return channel.post(message, timeout)


def _parsed(data: bytes) -> Any:
    try:
        return codec.loads(data)
    except codec.JsonDecodeError:
        return None


def _error_code(answer: Any) -> int | None:
    code = get_path(answer, "error", "code")
    return int(code) if codec.is_integer(code) else None


MALFORMED = object()  # an answer that is not strict JSON


class ElicitationClient(StepClient):
    """One elicitation client run: every row against one server."""

    def __init__(self, settings: SuiteClientSettings, schemas: SchemaSet, peer: SuitePeer) -> None:
        super().__init__(settings, schemas, peer)
        self.wire = StdioWire(self.channel) if isinstance(self.channel, StdioChannel) else None
        self.forms = elicitation.FormSchemas()

    # The transport, without the SDK's checks.
    def exchange(self, message: Any) -> tuple[int | None, Any]:
        """(HTTP status or None over stdio, the parsed answer or MALFORMED)."""
        if self.wire is not None:
            try:
                return None, self.wire.exchange(message, self.timeout)
            except TransportError as exc:
                raise RowFailure(f"no answer: {exc}") from None
        if not isinstance(self.channel, HttpChannel):
            reason = getattr(self.channel, "reason", None)  # a BrokenChannel's
            raise RowFailure(str(reason or self.peer.problem or "no channel to the server"))
        try:
            status, data = post_raw(self.channel, message, self.timeout)
        except TransportError as exc:
            raise RowFailure(str(exc)) from None
        parsed = _parsed(data)
        return status, MALFORMED if parsed is None and data.strip() else parsed

    def reply_of(self, message: dict[str, Any]) -> Any:
        """The reply to an intercept the host sends: a 200's body, or a refusal's
        JSON-RPC error (which the core rules reject); any other answer over HTTP
        is a transport failure of the row."""
        status, answer = self.exchange(message)
        if status is None or status == 200:
            return answer
        if isinstance(answer, dict) and "error" in answer:
            log("client", f"{message.get('id')!r}: refused with HTTP {status}")
            return answer
        raise RowFailure(f"{message.get('id')!r}: HTTP status {status}")

    def response_error(self, message: Any) -> str | None:
        if message is MALFORMED:
            return "the reply is not strict JSON"
        return self.schemas.error(INTERCEPT_RESPONSE, message)

    # Rows.
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
            run = self.atomic if "atomic" in row else self.steps
            problem = None if "atomic" in row else _unsupported_steps(row)
            if problem:
                raise RowUnsupported(problem)
            self.aliases = {}  # a row's aliases are its own
            self.mark(sid, ROW_START, sid)
            actual = run(row)
        except (RowUnsupported, engine.Unsupported) as exc:
            return report.unsupported(sid, str(exc))
        except RowFailure as exc:
            log("client", f"{sid}: {exc}")
            return report.failed(sid, str(exc))
        return report.completed(sid, actual)

    # Wire rows.
    def steps(self, row: dict[str, Any]) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = []
        for number, step in enumerate(row["steps"]):
            try:
                if step["op"] == "upload":
                    outcomes.append(self.upload_step(step))
                else:
                    outcomes.append(self.send_step(step))
            except RowFailure as exc:
                raise RowFailure(f"steps[{number}] ({step['op']}): {exc}") from None
        return {"steps": outcomes}

    def upload_step(self, step: dict[str, Any]) -> dict[str, Any]:
        alias, credential = step.get("alias"), step.get("credential")
        if not isinstance(alias, str) or not alias:
            raise RowFailure("an upload needs a non-empty alias")
        if credential not in CREDENTIALS:
            raise RowFailure(f"credential must be one of {', '.join(CREDENTIALS)}")
        encoded = step.get("bodyBase64")
        try:
            data = base64.b64decode(encoded if isinstance(encoded, str) else "", validate=True)
        except (binascii.Error, ValueError):
            raise RowFailure("bodyBase64 is not base64") from None
        declared = step.get("sha256", sha256_hex(data))
        if not isinstance(declared, str):
            raise RowFailure("sha256 must be a string")
        settings = self.settings.upload
        assert settings is not None
        token_env = {
            "upload": settings.token_env,
            "unauthorized": UNAUTHORIZED_TOKEN_ENV,
            "none": None,
        }[credential]
        route = UploadRoute(settings.endpoint, token_env, settings.timeout)
        status, receipt = self.upload(route, data, len(data), declared)
        ref = receipt["ref"] if receipt is not None else None
        if ref is not None:
            self.aliases[alias] = ref  # a later upload under the alias rebinds it
        return {"op": "upload", "status": status, "ref": ref}

    def send_step(self, step: dict[str, Any]) -> dict[str, Any]:
        message = step.get("message")
        if not isinstance(message, dict):
            raise RowFailure("a send needs the JSON-RPC message object")
        message = codec.clone(message)
        items = get_path(message, "params", "event", "items")
        if items is not None:
            message["params"]["event"]["items"] = rebind_refs(items, self.aliases)
        status, answer = self.exchange(message)
        parsed = None if answer is MALFORMED else answer
        if status is None:
            accepted = isinstance(parsed, dict) and "result" in parsed and "error" not in parsed
        else:
            accepted = status == 200
        return {
            "op": "send",
            "outcome": "accepted" if accepted else "rejected",
            "status": status,
            "error": _error_code(parsed),
            "response": parsed if accepted else None,
        }

    # Atomic rows.
    def atomic(self, row: dict[str, Any]) -> dict[str, Any]:
        sid: str = row["id"]
        atomic = row.get("atomic")
        if not isinstance(atomic, dict):
            raise RowFailure("atomic must be an object")
        user, capabilities = atomic.get("userResult"), atomic.get("resultCapabilities")
        if not isinstance(user, dict) or not isinstance(capabilities, dict):
            raise RowFailure("atomic needs a userResult and resultCapabilities object")
        request = atomic.get("request")
        if not isinstance(request, dict):
            raise RowFailure("atomic.request must be an intercept request")
        request = self.checked(codec.clone(request), INTERCEPT_REQUEST)
        event = request["params"]["event"]
        if event.get("type") != elicitation.REQUEST_EVENT:
            raise RowUnsupported(f"atomic.request is not a {elicitation.REQUEST_EVENT} intercept")
        actual: dict[str, Any] = {
            "request": elicitation.REJECTED,
            "result": NOT_SENT,
            "published": None,
            "provenance": None,
        }
        check = self.schemas.error
        verdict = elicitation.judge_request(
            request, self.reply_of(request), self.response_error, check, self.forms
        )
        actual["request"] = verdict.request
        if verdict.reason:
            log("client", f"{sid}: request reply rejected: {verdict.reason}")
        if verdict.request != elicitation.ALLOWED:
            return actual  # rejected (fail closed) or denied: the user is not asked
        if verdict.returned is not None:
            result, provenance = verdict.returned, "hook"
        else:
            result, provenance = codec.clone(user), "user"
        message = elicitation.result_request(sid, event, result, capabilities)
        message = self.checked(message, INTERCEPT_REQUEST)
        schema = elicitation.requested_schema(elicitation.body_of(event, "request"))
        settled = elicitation.judge_result(
            message, result, self.reply_of(message), self.response_error, check, schema, self.forms
        )
        if settled.published is None:
            log("client", f"{sid}: result reply rejected: {settled.reason}")
            actual["result"] = elicitation.REJECTED
            return actual
        actual.update(
            result="accepted",
            published=settled.published,
            provenance="hook" if settled.edited else provenance,
        )
        return actual


def _unsupported_steps(row: dict[str, Any]) -> str | None:
    steps = row.get("steps")
    if not isinstance(steps, list):
        return "the row has neither atomic nor a steps array"
    for step in steps:
        op = step.get("op") if isinstance(step, dict) else None
        if op not in OPS:
            return f"step op {op!r} is not implemented by ahp_py"
    return None


CLIENT_SCHEMAS = (
    INTERCEPT_REQUEST,
    INTERCEPT_RESPONSE,
    UPLOAD_RECEIPT,
    *elicitation.DEFINITIONS,
    *DEFINITIONS,
)


def run_client(config_path: str) -> int:
    return run_suite_client(load_suite_client(config_path, SPEC), CLIENT_SCHEMAS, ElicitationClient)


SUITE = Suite(NAME, {LIFECYCLE_CLIENT: run_client, LIFECYCLE_SERVER: serve})
