"""A recording peer: a loopback HTTP(S) listener that answers every request the same.

A `Peer` records every request that gets past its TLS handshake (method,
path, header names: never a value) and answers it 200 with fixed JSON bytes,
or, given `redirect`, 302 to that URL. A request whose handshake fails (the
client refused the peer's certificate, or the peer the client's) is not
recorded: a peer a client must refuse is judged by what reaches it, never by
what the client says. Which certificate a peer shows, what it answers and
what reaching it means are the caller's.
"""

from __future__ import annotations

import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from interop.runtime.listener import Listener

READ_TIMEOUT = 5.0
READ_LIMIT = 1 << 20


@dataclass
class Seen:
    method: str
    path: str
    headers: list[str]  # lower-case names, sorted, once each


@dataclass
class _State:
    body: bytes
    redirect: str | None
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        state: _State = self.server.listener.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length", "0") or 0)
        if length:
            self.rfile.read(min(length, READ_LIMIT))
        with state.lock:
            state.seen.append(
                Seen(self.command, self.path, sorted({k.lower() for k in self.headers}))
            )
        if state.redirect is not None:
            self.send_response(302)
            self.send_header("Location", state.redirect)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(state.body)))
        self.end_headers()
        self.wfile.write(state.body)

    do_POST = _answer
    do_GET = _answer


class Peer:
    """One listener, serving inside `with`; `url(path)` addresses it; `seen` is what
    reached it. `cert` (certificate and key files) makes it HTTPS; `client_ca` then
    requires a client certificate chaining to it."""

    def __init__(
        self,
        body: bytes = b"{}",
        *,
        redirect: str | None = None,
        cert: tuple[str, str] | None = None,
        client_ca: str | None = None,
    ) -> None:
        context = None
        if cert is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*cert)
            if client_ca is not None:
                context.load_verify_locations(client_ca)
                context.verify_mode = ssl.CERT_REQUIRED
        self.state = _State(body, redirect)
        self.listener = Listener(_Handler, context, owner=self.state, quiet=False)

    def __enter__(self) -> Peer:
        self.listener.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()

    def url(self, path: str) -> str:
        return self.listener.url(path)

    @property
    def seen(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.seen)
