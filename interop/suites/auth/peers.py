"""Peers the harness runs for the client-side auth rows: captures that record what
reaches them, some of them deliberately untrustworthy.

A `Capture` is a loopback HTTP(S) listener that records every request that gets
past its TLS handshake (method, path, header names) and answers it by its
`behaviour`: `answer` (200 with fixed JSON bytes), `redirect` (302 to another
URL), `token-not-bearer` (a token endpoint answer whose `token_type` is not
Bearer). A client that must refuse a peer is judged by the peer receiving
nothing, never by what the client says.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    headers: list[str]


@dataclass
class _State:
    behaviour: str
    body: bytes = b"{}"
    location: str = ""
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length", "0") or 0)
        if length:
            self.rfile.read(min(length, 1 << 20))
        with state.lock:
            state.seen.append(
                Seen(self.command, self.path, sorted({k.lower() for k in self.headers}))
            )
        if state.behaviour == "redirect":
            self.send_response(302)
            self.send_header("Location", state.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = state.body
        if state.behaviour == "token-not-bearer":
            body = json.dumps(
                {"access_token": "not-a-bearer-token", "token_type": "mac", "expires_in": 3600}
            ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = _answer
    do_GET = _answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: _State, context: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.context = context

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(5.0)
        if self.context is not None:
            try:
                request = self.context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return  # the client refused the handshake (or we did): nothing reached us
        self.RequestHandlerClass(request, client_address, self)  # type: ignore[arg-type]


class Capture:
    """One listener; `url(path)` addresses it; `seen` is what reached it."""

    def __init__(
        self,
        behaviour: str = "answer",
        *,
        body: bytes = b"{}",
        cert: tuple[str, str] | None = None,
        client_ca: str | None = None,
        location: str = "",
    ) -> None:
        context = None
        if cert is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*cert)
            if client_ca is not None:
                context.load_verify_locations(client_ca)
                context.verify_mode = ssl.CERT_REQUIRED
        self.state = _State(behaviour, body, location)
        self.server = _Server(self.state, context)
        self.scheme = "https" if context is not None else "http"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Capture:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}{path}"

    @property
    def seen(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.seen)


def free_port_url(path: str) -> str:
    """A loopback URL nothing listens on (bound and released: refused if contacted)."""
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
