"""The server role: the AHP endpoint (HTTP or stdio), the control and upload listeners.

Plain HTTP on 127.0.0.1 for every listener (auth modes none and bearer). The
readiness file is written atomically once everything listens. No receipt log is
written: receipts are served by the control listener only.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from upstream_emulator import settings
from upstream_emulator.board import Board
from upstream_emulator.capabilities import capabilities, discovery_result
from upstream_emulator.control import NOT_FOUND, control_route
from upstream_emulator.httpserve import Listener, Reply, Request, Route, bearer_ok
from upstream_emulator.responder import Responder

INVALID = {"error": "Invalid request"}


def run(config: dict[str, Any]) -> int:
    try:
        token = settings.bearer_token(config)
        rows = settings.scenarios(config)
    except settings.ConfigError as exc:
        print(f"upstream-emulator server: {exc}", file=sys.stderr)
        return 2
    board = Board()
    responder = Responder(rows, board)
    listeners = [Listener(control_route(board)), Listener(lambda _r: NOT_FOUND, "/content")]
    http = config["transport"] == "http"
    if http:
        listeners.append(Listener(ahp_route(responder, token), "/intercept"))
    write_readiness(
        Path(str(config["readinessFile"])),
        {
            "endpoint": listeners[2].url if http else None,
            "uploadEndpoint": listeners[1].url,
            "controlEndpoint": listeners[0].url,
            "pid": os.getpid(),
        },
    )
    if http:
        board.stopping.wait()
        for listener in listeners:
            listener.close()
        return 0
    return _serve_stdio(responder, board, listeners)


def write_readiness(path: Path, readiness: dict[str, Any]) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".readiness-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(readiness, out)
    os.replace(temporary, path)


def ahp_route(responder: Responder, token: str | None) -> Route:
    def route(request: Request) -> Reply:
        where = (request.method, request.path)
        if where not in (("GET", "/capabilities"), ("POST", "/intercept")):
            return NOT_FOUND
        if not bearer_ok(request, token):  # before the body is read
            return Reply(401, {"error": "Unauthorized"}, close=True)
        if where == ("GET", "/capabilities"):
            return Reply(200, capabilities())
        raw = request.body()
        try:
            message = json.loads(raw) if raw is not None else None
        except ValueError:
            return Reply(400, INVALID)
        response = responder.intercept(message)
        return Reply(400, INVALID) if response is None else Reply(200, response)

    return route


def _serve_stdio(responder: Responder, board: Board, listeners: list[Listener]) -> int:
    """NDJSON on stdin and stdout, one compact line per reply; EOF ends the server."""
    output = threading.Lock()

    def exit_now() -> None:  # POST /shutdown while stdin is still open
        output.acquire(timeout=1.0)
        sys.stdout.flush()
        os._exit(0)

    board.on_stop.append(exit_now)
    for line in iter(sys.stdin.buffer.readline, b""):
        if not line.strip():
            continue
        reply = _stdio_reply(line, responder)
        if reply is None:
            continue
        text = json.dumps(reply, separators=(",", ":"), ensure_ascii=False) + "\n"
        with output:
            sys.stdout.buffer.write(text.encode("utf-8"))
            sys.stdout.buffer.flush()
    board.on_stop.remove(exit_now)
    board.stop()
    for listener in listeners:
        listener.close()
    return 0


def _stdio_reply(line: bytes, responder: Responder) -> Any | None:
    """The reply to one line: None for a notification (a message without an id)."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if isinstance(message, dict) and "id" not in message and "method" in message:
        return None
    rid = message.get("id") if isinstance(message, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        rid = None
    method = message.get("method") if isinstance(message, dict) else None
    if method == "hooks/capabilities" and rid is not None:
        return {"jsonrpc": "2.0", "id": rid, "result": discovery_result()}
    if method == "hooks/intercept":
        response = responder.intercept(message)
        if response is not None:
            return response
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid request"}}
