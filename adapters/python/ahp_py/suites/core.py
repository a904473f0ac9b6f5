"""The core suite: the blind client, the in-process replay, and the server's methods.

Client: send each scenario's request once, apply the response with the
engine, report what was derived. Replay: the same rows with each scenario's
own ``response`` in place of the wire. Server: ``hooks/intercept`` answers the
scenario whose ``id`` is the request's, ``hooks/capabilities`` the discovery
manifest.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..contract import report
from ..contract.config import (
    ConfigError,
    ScenarioFileError,
    load_client,
    load_replay,
    load_server,
    schema_set,
)
from ..contract.discovery import discovery_answer
from ..contract.registry import CLIENT, CORE, REPLAY, SERVER, Suite
from ..sdk import codec, engine, rpc
from ..sdk.boundaries import DEFINITIONS, get_path
from ..sdk.http import MalformedResponse, TransportError
from ..sdk.schemas import INTERCEPT_REQUEST, INTERCEPT_RESPONSE

if TYPE_CHECKING:
    from ..contract.backend import Backend
    from ..sdk.schemas import SchemaSet

REJECTED = {"rejected": True}


def log(role: str, text: str) -> None:
    print(f"ahp_py {role}: {text}", file=sys.stderr, flush=True)


# Client and replay ------------------------------------------------------------


def run_row(
    row: dict[str, Any], exchange: Callable[[Any], Any], schemas: SchemaSet, role: str
) -> dict[str, Any]:
    """One scenario row: validate the request, send it once, apply the response."""
    row_id: str = row["id"]
    request = row.get("request")
    problem = schemas.error(INTERCEPT_REQUEST, request)
    if problem or not isinstance(request, dict):
        return report.failed(row_id, f"request is invalid: {problem}")
    unsupported: str | None = None
    try:
        engine.boundary_for(request)
    except engine.Unsupported as exc:
        unsupported = str(exc)
    try:
        response = exchange(request)
    except MalformedResponse as exc:
        if unsupported:
            return report.unsupported(row_id, unsupported)
        log(role, f"{row_id}: response rejected: {exc}")
        return report.completed(row_id, dict(REJECTED))
    except TransportError as exc:
        if unsupported:
            return report.unsupported(row_id, unsupported)
        return report.failed(row_id, str(exc))
    if unsupported:
        return report.unsupported(row_id, unsupported)

    def response_error(message: Any) -> str | None:
        return schemas.error(INTERCEPT_RESPONSE, message)

    outcome = engine.apply(request, response, response_error, schemas.error)
    if outcome.reason:
        log(role, f"{row_id}: response rejected: {outcome.reason}")
    return report.completed(row_id, outcome.actual)


def _schemas(file: str, schema_dir: str | None) -> SchemaSet:
    schemas = schema_set(file, schema_dir)
    for name in (INTERCEPT_REQUEST, INTERCEPT_RESPONSE, *DEFINITIONS):
        schemas.prepare(name)  # built once, before the first row
    return schemas


def run_client(config_path: str) -> int:
    from ..contract.peer import make_peer

    settings = load_client(config_path)
    schemas = _schemas(settings.file, settings.schema_dir)
    peer = make_peer(settings)
    try:
        results = [run_row(row, peer.exchange, schemas, "client") for row in settings.scenarios]
    finally:
        peer.close()
    report.write_report(settings.report_file, settings.language, results)
    return 0


def replay(config_path: str) -> int:
    """Each row's own ``response`` applied to its request in process (no network)."""
    settings = load_replay(config_path)
    schemas = _schemas(settings.file, settings.schema_dir)
    results = [
        run_row(row, _canned(row.get("response")), schemas, "replay") for row in settings.scenarios
    ]
    report.write_report(settings.report_file, settings.language, results)
    return 0


def _canned(response: Any) -> Callable[[Any], Any]:
    """An exchange that answers every request with ``response``."""

    def exchange(_request: Any) -> Any:
        return response

    return exchange


# Server -----------------------------------------------------------------------


class CoreMethods:
    """``hooks/intercept`` and ``hooks/capabilities`` for a scripted backend."""

    def __init__(self, schemas: SchemaSet, backend: Backend) -> None:
        self.schemas = schemas
        self.backend = backend

    def table(self) -> dict[str, Callable[[dict[str, Any]], rpc.Answer]]:
        return {rpc.INTERCEPT: self.intercept, rpc.CAPABILITIES: self.discovery}

    def discovery(self, message: dict[str, Any]) -> rpc.Answer:
        return discovery_answer(self.schemas, message)

    def intercept(self, message: dict[str, Any]) -> rpc.Answer:
        request_id = message["id"]
        problem = self.schemas.error(INTERCEPT_REQUEST, message)
        if problem is None:
            event_id = get_path(message, "params", "event", "id")
            if not codec.json_equal(event_id, request_id):
                problem = "request id differs from params.event.id"
        if problem:
            log("server", f"invalid intercept request: {problem}")
            return rpc.Answer(
                rpc.error(request_id, rpc.INVALID_PARAMS, "invalid intercept request")
            )
        row = self.backend.scenario(request_id)
        if row is None:
            log("server", f"no scenario for request id {request_id!r}")
            return rpc.Answer(rpc.error(request_id, rpc.INVALID_PARAMS, "unknown scenario id"))
        return self.backend.scripted(row)


def build_backend(
    schemas: SchemaSet, receipt_log: str | None, rows: list[dict[str, Any]], origin: str
) -> Backend:
    """A core server's backend with ``rows`` loaded (ScenarioFileError, OSError)."""
    from ..contract.backend import Backend
    from ..contract.barriers import Barriers
    from ..contract.receipts import Receipts

    backend = Backend(Receipts(receipt_log), Barriers())
    backend.methods.update(CoreMethods(schemas, backend).table())
    backend.load_rows(rows, origin)
    return backend


def serve(config_path: str) -> int:
    from ..contract.server import run

    settings = load_server(config_path)
    schemas = schema_set(settings.file, settings.schema_dir)
    schemas.prepare(INTERCEPT_REQUEST)
    try:
        backend = build_backend(
            schemas, settings.receipt_log, settings.scenarios, settings.scenario_file
        )
    except ScenarioFileError as exc:
        raise ConfigError(settings.file, "scenarioFile", str(exc)) from None
    except OSError as exc:
        raise ConfigError(settings.file, "receiptLog", f"cannot open: {exc.strerror}") from None
    return run(settings, backend)


SUITE = Suite(CORE, {CLIENT: run_client, SERVER: serve, REPLAY: replay})
