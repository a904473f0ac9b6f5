"""The lifecycleServer role: the `lifecycle` and `catalogue` suites' server.

Three loopback listeners, for both transports: control, upload (`/content`)
and, over HTTP, the AHP endpoint, whose bare base URL is the readiness
`endpoint` (routes `/intercept`, `/observe`, `/capabilities`). Over stdio the
AHP messages are NDJSON lines; each held intercept or observer waits on a
thread of its own, so reading goes on. Like the upstream stdio server, a line
it cannot serve (not JSON, an unknown request id, another method) ends the
lifecycle server with exit 1; the catalogue one records it as rejected.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from upstream_emulator import settings
from upstream_emulator.capabilities import capabilities
from upstream_emulator.catalogue_receiver import CatalogueReceiver, is_discovery
from upstream_emulator.httpserve import Listener, Reply, Request, Route, bearer_ok
from upstream_emulator.ledger import Ledger
from upstream_emulator.lifecycle_control import NOT_FOUND, control_route
from upstream_emulator.lifecycle_receiver import LifecycleReceiver
from upstream_emulator.server import write_readiness
from upstream_emulator.uploads import upload_route

SUITES = ("lifecycle", "catalogue")
Receiver = LifecycleReceiver | CatalogueReceiver


class Lines:
    """Compact JSON lines on stdout, one writer at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def write(self, message: Any) -> None:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self.lock:
            try:
                sys.stdout.buffer.write(text.encode("utf-8"))
                sys.stdout.buffer.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client is gone: nothing to answer


def run(config: dict[str, Any]) -> int:
    suite = config.get("suite")
    if suite not in SUITES:
        print(f"upstream-emulator lifecycle server: suite {suite!r} unknown", file=sys.stderr)
        return 2
    try:
        token = settings.bearer_token(config)
        rows = settings.scenarios(config)
    except settings.ConfigError as exc:
        print(f"upstream-emulator lifecycle server: {exc}", file=sys.stderr)
        return 2
    upload_auth = config.get("uploadAuth")
    upload_token = upload_auth.get("token") if isinstance(upload_auth, dict) else None
    transport = str(config["transport"])
    ledger = Ledger()
    receiver: Receiver = (
        LifecycleReceiver(rows, ledger) if suite == "lifecycle" else CatalogueReceiver(ledger)
    )
    lines = Lines() if transport == "stdio" else None
    control = Listener(control_route(ledger, lines.write if lines else None))
    upload_token = upload_token if isinstance(upload_token, str) else None
    upload = Listener(upload_route(ledger, upload_token), "/content")
    listeners = [control, upload]
    if lines is None:
        listeners.append(Listener(ahp_route(receiver, token)))
    write_readiness(
        Path(str(config["readinessFile"])),
        {
            "endpoint": listeners[2].url if lines is None else None,
            "controlEndpoint": control.url,
            "uploadEndpoint": upload.url,
            "pid": os.getpid(),
        },
    )
    if lines is None:
        ledger.stopping.wait()
        code = 0
    else:
        code = _serve_stdio(receiver, ledger, lines)
    for listener in listeners:
        listener.close()
    return code


def ahp_route(receiver: Receiver, token: str | None) -> Route:
    lifecycle = isinstance(receiver, LifecycleReceiver)
    posts = ("/intercept", "/observe") if lifecycle else ("/capabilities", "/observe")

    def route(request: Request) -> Reply:
        if (request.method, request.path) != ("GET", "/capabilities") and (
            request.method != "POST" or request.path not in posts
        ):
            return NOT_FOUND
        if not bearer_ok(request, token):  # before the body is read
            return Reply(401, {"error": "Unauthorized"}, close=True)
        if request.method == "GET":
            return Reply(200, capabilities())
        raw = request.body()
        try:
            message = json.loads(raw) if raw is not None else None
        except ValueError:
            message = None
        if isinstance(receiver, LifecycleReceiver):
            if request.path == "/observe":
                return Reply(200, receiver.observe(message))
            if not receiver.knows(message):
                return Reply(409, {"error": "Unknown request id"})
            return Reply(200, receiver.intercept(message))
        if request.path == "/capabilities":
            if not is_discovery(message):
                return Reply(400, {"error": "Invalid request"})
            return Reply(200, receiver.discover(message))
        return Reply(200 if receiver.notify(message) else 400, None)

    return route


def _serve_stdio(receiver: Receiver, ledger: Ledger, lines: Lines) -> int:
    def exit_now() -> None:  # POST /shutdown while stdin is still open
        lines.lock.acquire(timeout=1.0)
        sys.stdout.flush()
        os._exit(0)

    ledger.on_stop.append(exit_now)
    for line in iter(sys.stdin.buffer.readline, b""):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(receiver, CatalogueReceiver):
            if is_discovery(message):
                lines.write(receiver.discover(message))
            else:
                receiver.notify(message)  # never answered
            continue
        method = message.get("method") if isinstance(message, dict) else None
        if method == "hooks/observe":
            _spawn(lambda m=message: lines.write(receiver.observe(m)))
        elif method == "hooks/intercept" and receiver.knows(message):
            _spawn(lambda m=message: lines.write(receiver.intercept(m)))
        else:
            shown = line[:200]
            print(f"upstream-emulator lifecycle server: cannot serve {shown!r}", file=sys.stderr)
            sys.stderr.flush()
            with lines.lock:
                os._exit(1)
    ledger.on_stop.remove(exit_now)
    ledger.stop()
    return 0


def _spawn(work: Any) -> None:
    threading.Thread(target=work, daemon=True).start()
