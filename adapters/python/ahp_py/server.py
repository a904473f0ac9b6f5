"""The contract's server: a scripted AHP backend over HTTP(S) or stdio, plus a
control listener."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from . import codec
from .auth import Authenticator
from .config import (
    AuthSettings,
    ConfigError,
    load_config,
    load_json_file,
    write_json_atomic,
)
from .http_transport import Handler, Listener
from .manifest import PROTOCOL_VERSION, discovery_result
from .schemas import CAPABILITIES_REQUEST, INTERCEPT_REQUEST, SchemaSet, load

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
PARSE_ERROR = -32700
UNSUPPORTED_VERSION = -32001
GET_DISCOVERY = {
    "jsonrpc": "2.0",
    "id": "discovery",
    "method": "hooks/capabilities",
    "params": {"protocolVersion": PROTOCOL_VERSION},
}


def log(text: str) -> None:
    print(f"ahp_py server: {text}", file=sys.stderr, flush=True)


class Receipts:
    """Received requests in arrival order, logged to the receipt log before replies."""

    def __init__(self, log_path: str | None) -> None:
        self._lock = threading.Lock()
        self._lists: dict[str, list[Any]] = {"request": [], "discovery": []}
        # Kept open for the server's lifetime; every record is flushed at once.
        self._log: BinaryIO | None = (
            open(log_path, "ab") if log_path else None  # noqa: SIM115
        )

    def record(self, kind: str, message: Any) -> None:
        with self._lock:
            self._lists[kind].append(message)
            if self._log is not None:
                self._log.write(
                    codec.dump_bytes({"kind": kind, "message": message}) + b"\n"
                )
                self._log.flush()

    def snapshot(self) -> dict[str, list[Any]]:
        with self._lock:
            return {
                "requests": list(self._lists["request"]),
                "discovery": list(self._lists["discovery"]),
            }

    def clear(self) -> None:
        with self._lock:
            for entries in self._lists.values():
                entries.clear()
            if self._log is not None:
                self._log.truncate(0)
                self._log.flush()


class Barriers:
    """Named gates a scenario's reply waits on until the control listener opens them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}

    def _event(self, name: str) -> threading.Event:
        with self._lock:
            return self._events.setdefault(name, threading.Event())

    def wait(self, name: str) -> None:
        self._event(name).wait()

    def release(self, name: str) -> None:
        self._event(name).set()

    def release_all(self) -> None:
        with self._lock:
            for event in self._events.values():
                event.set()
            self._events.clear()


def load_scenarios(path: str) -> dict[str, dict[str, Any]]:
    document = load_json_file(path)
    scenarios = document.get("scenarios") if isinstance(document, dict) else None
    if not isinstance(scenarios, list):
        raise ConfigError(f"{path} has no scenarios array")
    table: dict[str, dict[str, Any]] = {}
    for scenario in scenarios:
        if isinstance(scenario, dict) and isinstance(scenario.get("id"), str):
            if scenario["id"] in table:
                raise ConfigError(f"{path}: duplicate scenario id {scenario['id']!r}")
            table[scenario["id"]] = scenario
    return table


def _error(
    request_id: Any, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Backend:
    """Transport-independent dispatch of one JSON-RPC message to its scripted reply."""

    def __init__(
        self, schemas: SchemaSet, receipts: Receipts, barriers: Barriers
    ) -> None:
        self.schemas = schemas
        self.receipts = receipts
        self.barriers = barriers
        self.scenarios: dict[str, dict[str, Any]] = {}

    def load(self, scenario_file: str) -> None:
        self.scenarios = load_scenarios(scenario_file)

    def handle(self, message: Any) -> tuple[bool, Any]:
        """(True, reply) for requests, (False, None) for notifications."""
        if not isinstance(message, dict):
            return True, _error(None, INVALID_REQUEST, "not a single JSON-RPC object")
        if "id" not in message:
            return False, None
        method = message.get("method")
        if method == "hooks/capabilities":
            self.receipts.record("discovery", message)
            return True, self._discovery(message)
        self.receipts.record("request", message)
        if method == "hooks/intercept":
            return True, self._intercept(message)
        return True, _error(message["id"], METHOD_NOT_FOUND, "method not found")

    def _discovery(self, message: dict[str, Any]) -> Any:
        version = (
            message.get("params", {}).get("protocolVersion")
            if isinstance(message.get("params"), dict)
            else None
        )
        if isinstance(version, str) and version != PROTOCOL_VERSION:
            return _error(
                message["id"],
                UNSUPPORTED_VERSION,
                "unsupported_protocol_version",
                {"supported": [PROTOCOL_VERSION]},
            )
        if CAPABILITIES_REQUEST in self.schemas.names():
            problem = self.schemas.error(CAPABILITIES_REQUEST, message)
            if problem:
                log(f"invalid discovery request: {problem}")
                return _error(
                    message["id"], INVALID_PARAMS, "invalid capabilities request"
                )
        return {"jsonrpc": "2.0", "id": message["id"], "result": discovery_result()}

    def _intercept(self, message: dict[str, Any]) -> Any:
        request_id = message["id"]
        problem = self.schemas.error(INTERCEPT_REQUEST, message)
        event_id = (
            message.get("params", {}).get("event", {}).get("id")
            if problem is None
            else None
        )
        if problem is None and not codec.json_equal(event_id, request_id):
            problem = "request id differs from params.event.id"
        if problem:
            log(f"invalid intercept request: {problem}")
            return _error(request_id, INVALID_PARAMS, "invalid intercept request")
        scenario = (
            self.scenarios.get(request_id) if isinstance(request_id, str) else None
        )
        if scenario is None:
            log(f"no scenario for request id {request_id!r}")
            return _error(request_id, INVALID_PARAMS, "unknown scenario id")
        barrier = scenario.get("barrier")
        if isinstance(barrier, str):
            self.barriers.wait(barrier)
        return scenario.get("response")


class AhpHandler(Handler):
    """The AHP endpoint: POST of any JSON-RPC message on any path, GET /capabilities."""

    def _authorized(self) -> bool:
        authenticator: Authenticator = self.server.app["authenticator"]  # type: ignore[attr-defined]
        if authenticator.accepts(self.headers.get_all("Authorization") or []):
            return True
        self.close_connection = True
        self.reply(401)
        return False

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = self.read_body()
        if body is None:
            return
        backend: Backend = self.server.app["backend"]  # type: ignore[attr-defined]
        try:
            message = codec.loads(body)
        except codec.JsonDecodeError:
            self.reply_json(_error(None, PARSE_ERROR, "parse error"))
            return
        has_reply, reply = backend.handle(message)
        if has_reply:
            self.reply_json(reply)
        else:
            self.reply(202)

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/capabilities":
            self.reply(404)
            return
        if not self._authorized():
            return
        backend: Backend = self.server.app["backend"]  # type: ignore[attr-defined]
        backend.receipts.record("discovery", GET_DISCOVERY)
        self.reply_json(
            {"jsonrpc": "2.0", "id": "discovery", "result": discovery_result()}
        )


class ControlHandler(Handler):
    """Plain-HTTP control: /health, /receipts, /release, /shutdown, /reset."""

    def do_GET(self) -> None:
        app = self.server.app  # type: ignore[attr-defined]
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self.reply_json({"ready": True})
        elif path == "/receipts":
            self.reply_json(app["receipts"].snapshot())
        else:
            self.reply(404)

    def do_POST(self) -> None:
        app = self.server.app  # type: ignore[attr-defined]
        body = self.read_body()
        if body is None:
            return
        try:
            payload = codec.loads(body) if body.strip() else {}
        except codec.JsonDecodeError:
            self.reply_json({"error": "body is not JSON"}, 400)
            return
        payload = payload if isinstance(payload, dict) else {}
        path = self.path.split("?", 1)[0]
        if path == "/release":
            name = payload.get("barrier")
            if not isinstance(name, str):
                self.reply_json({"error": "barrier must be a string"}, 400)
                return
            app["barriers"].release(name)
            self.reply_json({"released": name})
        elif path == "/shutdown":
            self.close_connection = True
            self.reply_json({"shutdown": True})
            app["stop"].set()
        elif path == "/reset":
            self._reset(app, payload)
        else:
            self.reply(404)

    def _reset(self, app: dict[str, Any], payload: dict[str, Any]) -> None:
        scenario_file = payload.get("scenarioFile")
        if scenario_file is not None:
            try:
                if not isinstance(scenario_file, str):
                    raise ConfigError("scenarioFile must be a string")
                app["backend"].load(scenario_file)
            except ConfigError as exc:
                self.reply_json({"error": str(exc)}, 400)
                return
        app["barriers"].release_all()
        app["receipts"].clear()
        self.reply_json({"reset": True})


def _stdio_loop(backend: Backend, out: BinaryIO, stop: threading.Event) -> None:
    """Answer one line per request line until EOF on stdin."""
    try:
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            try:
                message = codec.loads(raw)
            except codec.JsonDecodeError:
                has_reply, reply = True, _error(None, PARSE_ERROR, "parse error")
            else:
                has_reply, reply = backend.handle(message)
            if has_reply:
                out.write(codec.dump_bytes(reply) + b"\n")
                out.flush()
    finally:
        stop.set()


def serve(config_path: str) -> int:
    config = load_config(config_path)
    transport = config.get("transport", "http")
    if transport not in ("http", "stdio"):
        raise ConfigError(f"transport {transport!r} is not supported")
    readiness = config.get("readinessFile")
    scenario_file = config.get("scenarioFile")
    if not isinstance(readiness, str) or not isinstance(scenario_file, str):
        raise ConfigError("readinessFile and scenarioFile must be paths")
    receipt_log = config.get("receiptLog")
    if receipt_log is not None and not isinstance(receipt_log, str):
        raise ConfigError("receiptLog must be a path")
    settings = AuthSettings.from_config(config)

    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but AHP lines may reach the real stdout
    schemas = load()
    schemas.validator(INTERCEPT_REQUEST)
    receipts = Receipts(receipt_log)
    barriers = Barriers()
    backend = Backend(schemas, receipts, barriers)
    backend.load(scenario_file)
    stop = threading.Event()
    app: dict[str, Any] = {
        "backend": backend,
        "receipts": receipts,
        "barriers": barriers,
        "stop": stop,
    }
    control = Listener(ControlHandler, app=app)
    control.serve_in_thread()
    endpoint: str | None = None
    if transport == "http":
        files = settings.server_tls()
        context = None
        if files is not None:
            from .tls import server_context

            context = server_context(files)
        app["authenticator"] = Authenticator(settings)
        listener = Listener(AhpHandler, context, app=app)
        listener.serve_in_thread()
        endpoint = listener.base_url() + "/intercept"
    else:
        threading.Thread(
            target=_stdio_loop, args=(backend, stdout, stop), daemon=True
        ).start()
    write_json_atomic(
        Path(readiness),
        {
            "endpoint": endpoint,
            "controlEndpoint": control.base_url(),
            "pid": os.getpid(),
        },
    )
    stop.wait()
    barriers.release_all()
    sys.stderr.flush()
    os._exit(0)
