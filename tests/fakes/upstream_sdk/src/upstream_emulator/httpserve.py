"""A small loopback HTTP/1.1 listener answering JSON: keep-alive, one send per reply.

Each reply's head and body leave in a single write on a TCP_NODELAY socket, so
an exchange never waits on Nagle's algorithm and a delayed ACK. A route gets the
request line and headers first and reads the body only if it wants to; a reply
to a request whose body was left unread closes the connection. A reply whose
body is None has no body at all (`Content-Length: 0`, no content type).
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MAX_BODY = 16 * 1024 * 1024


@dataclass
class Reply:
    status: int
    body: Any
    close: bool = False
    then: Callable[[], None] | None = None  # run once the reply is written


class Request:
    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self.method = handler.command
        self.path = urlsplit(handler.path).path
        self.headers = handler.headers
        self._handler = handler
        self.length = _length(handler.headers.get("Content-Length"))
        self.body_read = self.length == 0

    def body(self) -> bytes | None:
        """The body, or None when its length is missing, malformed or too large."""
        if self.length is None or self.length > MAX_BODY:
            return None
        self.body_read = True
        return self._handler.rfile.read(self.length)


def _length(header: str | None) -> int | None:
    if header is None:
        return 0
    try:
        value = int(header)
    except ValueError:
        return None
    return value if value >= 0 else None


Route = Callable[[Request], Reply]


def bearer_ok(request: Request, token: str | None) -> bool:
    """No token wanted, or exactly one `Authorization: Bearer <token>` header."""
    if token is None:
        return True
    values = request.headers.get_all("Authorization") or []
    if len(values) != 1:
        return False
    return hmac.compare_digest(values[0].encode(), f"Bearer {token}".encode())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        request = Request(self)
        reply = self.server.route(request)
        close = reply.close or not request.body_read
        payload = (
            b""
            if reply.body is None
            else json.dumps(reply.body, separators=(",", ":"), ensure_ascii=False).encode()
        )
        head = (
            f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}\r\n"
            + ("Content-Type: application/json\r\n" if reply.body is not None else "")
            + f"Content-Length: {len(payload)}\r\n"
            + ("Connection: close\r\n" if close else "")
            + "\r\n"
        )
        self.wfile.write(head.encode("latin-1") + payload)
        if close:
            self.close_connection = True
        if reply.then is not None:
            reply.then()

    do_GET = do_POST = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:  # quiet: stderr is for problems
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, route: Route) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.route = route


class Listener:
    """One listener on 127.0.0.1, port chosen by the system, served by a thread."""

    def __init__(self, route: Route, path: str = "") -> None:
        self._server = _Server(route)
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
