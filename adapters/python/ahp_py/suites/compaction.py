"""The compaction suite (docs/COMPACTION.md): the lifecycle chain model applied
to ``context.compact.before`` and then ``context.compact.after``.

Server (``lifecycle-server`` with ``suite: "compaction"``): serves
``<row id>:before`` and ``<row id>:after`` of every run, the n-th receipt of
each answered by the n-th entry of ``responseSequences.before`` / ``.after``
(the last again past the end; scripted faults as in the lifecycle suite), never
held. A request invalid against ``intercept-request``, with an id that is no
run's boundary id, or with a text part carrying ``body`` gets -32602 and is not
recorded. Every ``hooks/observe`` is recorded ``observed`` and answered 204.

Client (``lifecycle-client`` with ``suite: "compaction"``): per run, the before
chain (``sdk/chain`` through the step engine's ``ChainRun``), the host's outcome from
the core rules' result of the settled boundary (``sdk/compaction``), then, when
something was compacted, the derived after request through the after chain.
Per negative, the request sent unchanged and the error code of its answer. It
never reads ``expected`` or ``proof``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..contract import report
from ..contract.config import (
    SuiteServerSettings,
    SuiteSpec,
    load_suite_client,
    load_suite_server,
    schema_set,
)
from ..contract.control import EntryControl
from ..contract.discovery import discovery_answer
from ..contract.entries import OBSERVED, RECEIVED, REPLIED, WAIT_SECONDS, EntryLog
from ..contract.faults import MALFORMED_BODY, MALFORMED_FAULT, SERVER_ERROR, TIMEOUT, fault_of
from ..contract.registry import LIFECYCLE_CLIENT, LIFECYCLE_SERVER, Suite
from ..contract.steps import (
    ChainRun,
    RowFailure,
    RowUnsupported,
    Settlement,
    StepClient,
    log,
    run_suite_client,
)
from ..sdk import chain as chains
from ..sdk import codec, compaction, engine, rpc
from ..sdk.boundaries import DEFINITIONS, get_path
from ..sdk.http import MalformedResponse, TransportError
from ..sdk.manifest import discovery_manifest
from ..sdk.schemas import INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..sdk.schemas import SchemaSet

NAME = "compaction"
# Text is inline: no uploads or content sources, but backends; no uploadAuth.
SPEC = SuiteSpec(NAME, backends=True)
PHASES = ("before", "after")
CONTROL_CALLS = frozenset({"/wait", "/release", "/mark", "/wait-observed"})


def is_negative(row: dict[str, Any]) -> bool:
    return "negative" in row


# Server -----------------------------------------------------------------------


class CompactionServer:
    """The AHP side of a compaction server (what ``contract.server`` dispatches to)."""

    def __init__(self, schemas: SchemaSet, rows: list[dict[str, Any]], entries: EntryLog) -> None:
        self.schemas = schemas
        self.entries = entries
        self.closing = threading.Event()  # set at shutdown: unanswered exchanges close
        # boundary request id -> (run, phase); the first run naming an id wins
        self.requests: dict[str, tuple[dict[str, Any], str]] = {}
        for row in rows:
            if is_negative(row):
                continue
            for phase in PHASES:
                self.requests.setdefault(f"{row['id']}:{phase}", (row, phase))

    def manifest(self) -> dict[str, Any]:
        """The core discovery manifest, as ``hooks/capabilities`` answers."""
        return discovery_manifest()

    def release_all(self) -> None:
        self.closing.set()  # nothing is ever held

    def drain(self, timeout: float) -> None:
        pass

    def dispatch(self, message: Any) -> rpc.Answer:
        if not isinstance(message, dict):
            return rpc.Answer(rpc.error(None, rpc.INVALID_REQUEST, "not a single JSON-RPC object"))
        method = message.get("method")
        if method == rpc.OBSERVE:
            return self.observe(message)
        if rpc.is_notification(message):
            log("server", f"ignored a notification {method!r}")
            return rpc.NO_REPLY
        if method == rpc.INTERCEPT:
            return self.intercept(message)
        if method == rpc.CAPABILITIES:
            return discovery_answer(self.schemas, message)
        return rpc.Answer(rpc.error(message["id"], rpc.METHOD_NOT_FOUND, "method not found"))

    def refusal(self, message: dict[str, Any]) -> str | None:
        """Why ``message`` is refused unrecorded (None: it is served)."""
        problem = self.schemas.error(INTERCEPT_REQUEST, message)
        if problem:
            return f"invalid intercept request: {problem}"
        ident = message.get("id")
        if not isinstance(ident, str) or ident not in self.requests:
            return "no run has this boundary id"
        if compaction.carries_body(message.get("params")):
            return "a text part carries body (compaction text is inline)"
        return None

    def intercept(self, message: dict[str, Any]) -> rpc.Answer:
        ident = message.get("id")
        problem = self.refusal(message)
        if problem:
            log("server", f"intercept {ident!r} refused: {problem}")
            return rpc.Answer(rpc.error(ident, rpc.INVALID_PARAMS, problem))
        assert isinstance(ident, str)
        row, phase = self.requests[ident]
        count = self.entries.record({"kind": RECEIVED, "id": ident, "message": message})

        def replied() -> None:
            self.entries.record({"kind": REPLIED, "id": ident})

        sequence = get_path(row, "responseSequences", phase)
        if not isinstance(sequence, list) or not sequence:
            text = f"run {row['id']!r} has no responseSequences.{phase}"
            log("server", f"intercept {ident!r}: {text}")
            return rpc.Answer(rpc.error(ident, rpc.INTERNAL_ERROR, text), before=replied)
        reply = sequence[min(count, len(sequence)) - 1]
        fault = fault_of(reply)
        if fault == TIMEOUT:
            log("server", f"intercept {ident!r}: scripted timeout (receipt {count})")
            return rpc.never_answered(self.closing)
        if fault == SERVER_ERROR:
            error = rpc.error(ident, rpc.INTERNAL_ERROR, "scripted server error")
            return rpc.Answer(error, before=replied, status=500)
        if fault == MALFORMED_FAULT:
            return rpc.Answer(None, before=replied, raw=MALFORMED_BODY)
        return rpc.Answer(reply, before=replied)

    def observe(self, message: dict[str, Any]) -> rpc.Answer:
        problem = self.schemas.error(OBSERVE_NOTIFICATION, message)
        if problem:
            log("server", f"invalid observation: {problem}")
            return rpc.Answer(has_reply=False, status=400)
        event = message["params"]["event"]
        entry = {"kind": OBSERVED, "eventId": event["id"], "event": event, "message": message}
        self.entries.record(codec.clone(entry), key="eventId")
        return rpc.NO_REPLY  # 204 over HTTP, nothing over stdio


def compaction_parts(
    settings: SuiteServerSettings, wait_seconds: float = WAIT_SECONDS
) -> tuple[CompactionServer, Callable[[threading.Event], EntryControl]]:
    """What a compaction server process is made of: the AHP side and the control
    app (from the stop event), sharing one receipt log."""
    from ..contract.barriers import Barriers

    server = settings.server
    schemas = schema_set(server.file, server.schema_dir)
    for name in (INTERCEPT_REQUEST, OBSERVE_NOTIFICATION):
        schemas.prepare(name)
    entries = EntryLog()
    backend = CompactionServer(schemas, server.scenarios, entries)

    def control(stop: threading.Event) -> EntryControl:
        # /release is answered and changes nothing: no reply is ever held.
        return EntryControl(entries, Barriers(), stop, wait_seconds, calls=CONTROL_CALLS)

    return backend, control


def serve(config_path: str) -> int:
    settings = load_suite_server(config_path, SPEC)
    from ..contract.server import run

    backend, control = compaction_parts(settings)
    return run(settings.server, backend, control=control)


# Client -----------------------------------------------------------------------


def chain_actual(settlement: Settlement | None) -> dict[str, Any]:
    if settlement is None:
        return {"called": [], "failures": [], "observations": []}
    return {
        "called": settlement.called,
        "failures": settlement.failures,
        "observations": settlement.observations,
    }


class CompactionClient(StepClient):
    """One compaction client run: every row against one server."""

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        sid: str = row["id"]
        if self.peer.problem:
            return report.failed(sid, self.peer.problem)
        try:
            actual = self.negative(row) if is_negative(row) else CompactionRun(self, row).run()
        except (RowUnsupported, engine.Unsupported) as exc:
            return report.unsupported(sid, str(exc))
        except RowFailure as exc:
            log("client", f"{sid}: {exc}")
            return report.failed(sid, str(exc))
        return report.completed(sid, actual)

    def negative(self, row: dict[str, Any]) -> dict[str, Any]:
        """Send ``negative`` unchanged on the wire (no SDK check) and report the
        JSON-RPC error code of the answer (None when it has none)."""
        message = row["negative"]
        try:
            answer: Any = self.channel.call(message, self.timeout).result(self.timeout)
        except MalformedResponse as exc:
            log("client", f"{row['id']}: the answer is not JSON: {exc}")
            return {"error": None}
        except TransportError as exc:
            raise RowFailure(f"negative: {exc}") from None
        code = get_path(answer, "error", "code")
        return {"error": code if codec.is_integer(code) else None}


class CompactionRun:
    """One run (docs/COMPACTION.md, "What the host (client) does for a run")."""

    def __init__(self, client: CompactionClient, row: dict[str, Any]) -> None:
        self.client = client
        self.sid: str = row["id"]
        self.row = row
        request = row.get("request")
        if not isinstance(request, dict):
            raise RowFailure("the run has no request object")
        event = get_path(request, "params", "event")
        if not isinstance(event, dict) or event.get("type") != compaction.BEFORE:
            raise RowUnsupported(f"the run's request is not a {compaction.BEFORE} intercept")
        self.request = request

    def subscriptions(self, phase: str) -> Any:
        value = self.row.get(phase, [])
        if not isinstance(value, list):
            raise RowFailure(f"{phase} must be an array of subscriptions")
        return value

    def run(self) -> dict[str, Any]:
        client = self.client
        before = ChainRun(
            client, self.sid, self.subscriptions("before"), self.request, release=False
        )
        settled = before.settle()
        result = None if settled.failed_closed else self.result(before, settled)
        event = before.request["params"]["event"]
        items = event.get("items")
        host = compaction.outcome(
            result,
            settled.supplier,
            f"{self.sid}:summary",
            len(items) if isinstance(items, list) else 0,
            settled.value,
        )
        after: Settlement | None = None
        if host.applied:
            message = compaction.after_request(
                f"{self.sid}:after",
                before.request,
                host.summary,
                host.execution,
                self.row.get("afterObserveOnly") is True,
            )
            chain = ChainRun(client, self.sid, self.subscriptions("after"), message, release=False)
            after = chain.settle()
        # a fail-closed failure at the after boundary prevents the application too
        applied = host.applied and not (after is not None and after.failed_closed)
        return {
            "applied": applied,
            "instructions": settled.value,
            "summary": after.value if after is not None and applied else None,
            "execution": host.execution if applied else None,
            "provenance": host.provenance if applied else None,
            "before": chain_actual(settled),
            "after": chain_actual(after),
        }

    def result(self, chain: ChainRun, settled: Settlement) -> dict[str, Any]:
        """The core rules' result of the settled boundary: its request with the
        settled value and state, and no further effect."""
        message = chains.request_for(
            chain.request, chain.boundary, settled.value, settled.state, None
        )
        reply = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"protocolVersion": message["params"].get("protocolVersion"), "effects": []},
        }
        outcome = engine.apply(message, reply, None, self.client.schemas.error, host_rule=False)
        if outcome.reason:  # pragma: no cover - no effect is ever rejected
            raise RowFailure(f"the settled boundary has no result: {outcome.reason}")
        return outcome.actual


CLIENT_SCHEMAS = (INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION, *DEFINITIONS)


def run_client(config_path: str) -> int:
    return run_suite_client(load_suite_client(config_path, SPEC), CLIENT_SCHEMAS, CompactionClient)


SUITE = Suite(NAME, {LIFECYCLE_CLIENT: run_client, LIFECYCLE_SERVER: serve})
