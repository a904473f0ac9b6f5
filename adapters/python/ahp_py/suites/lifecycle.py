"""The lifecycle suite (docs/LIFECYCLE.md): the server's held intercepts,
observations and uploads; the client is the step engine as it is.

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
faults [ext] (``contract/faults.py``): a sequence entry ``{"fault":
"server-error" | "malformed" | "timeout"}`` and ``observeFaults`` (``"silent"``:
recorded, never answered). Uploads, control and readiness come from ``contract/``.

Client: the step engine (``contract/steps.py``) runs each scenario's steps or
chain itself against its SDK and the server's control listener, and reports
what it derived: ``{published, cancelled, ignored, states, observations,
uploadStatuses}`` for steps, ``{called, failures, observations, input}`` for
chains; then ``contentUploads`` and the server's ``receipts``. It never reads
``expected`` or ``chainProof``. The isolation suite (docs/ISOLATION.md) runs
this module unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..contract.config import (
    SuiteServerSettings,
    SuiteSpec,
    load_suite_client,
    load_suite_server,
    schema_set,
)
from ..contract.control import EntryControl
from ..contract.discovery import discovery_answer
from ..contract.entries import (
    OBSERVED,
    OBSERVER_BLOCKED,
    RECEIVED,
    REPLIED,
    WAIT_SECONDS,
    EntryLog,
)
from ..contract.faults import (
    MALFORMED_BODY,
    MALFORMED_FAULT,
    SERVER_ERROR,
    SILENT,
    TIMEOUT,
    fault_of,
)
from ..contract.registry import LIFECYCLE_CLIENT, LIFECYCLE_SERVER, Suite
from ..contract.steps import StepClient, log, run_suite_client
from ..sdk import codec, rpc
from ..sdk.boundaries import DEFINITIONS, get_path
from ..sdk.content import body_refs
from ..sdk.manifest import discovery_manifest
from ..sdk.schemas import (
    INTERCEPT_REQUEST,
    INTERCEPT_RESPONSE,
    OBSERVE_NOTIFICATION,
    UPLOAD_RECEIPT,
)
from ..sdk.upload import ContentStore, UploadReceiver

if TYPE_CHECKING:
    from ..contract.barriers import Barriers
    from ..sdk.schemas import SchemaSet

NAME = "lifecycle"
# Its configs carry uploads, content sources and backends; its server, uploadAuth.
SPEC = SuiteSpec(NAME, upload=True, content_sources=True, backends=True, upload_auth=True)
UNSOLICITED_OBSERVER = {
    "jsonrpc": "2.0",
    "id": "unsolicited-observer",
    "result": {
        "protocolVersion": "draft",
        "effects": [{"type": "deny", "reason": "observer must not decide"}],
    },
}


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
    settings = load_suite_server(config_path, SPEC)
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


class LifecycleClient(StepClient):
    """The step engine's run, reporting the content sources it uploaded."""

    def report_keys(self) -> dict[str, Any]:
        return {"contentUploads": self.content_uploads}


CLIENT_SCHEMAS = (
    INTERCEPT_REQUEST,
    INTERCEPT_RESPONSE,
    OBSERVE_NOTIFICATION,
    UPLOAD_RECEIPT,
    *DEFINITIONS,
)


def run_client(config_path: str) -> int:
    return run_suite_client(load_suite_client(config_path, SPEC), CLIENT_SCHEMAS, LifecycleClient)


SUITE = Suite(NAME, {LIFECYCLE_CLIENT: run_client, LIFECYCLE_SERVER: serve})
