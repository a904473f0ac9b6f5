"""HTTP/1.1 on loopback: a keep-alive listener (TLS optional) and client.

Each response is written with its head and body in ONE send, and sockets use
TCP_NODELAY: otherwise Nagle's algorithm meets delayed ACK and every round
trip on loopback costs ~40 ms.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from . import codec

MAX_BODY = 64 * 1024 * 1024
HANDSHAKE_TIMEOUT = 10.0


class TransportError(Exception):
    """No parsed response came back: a failed row, never a rejection."""


class Listener(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1; each connection TLS-wrapped if asked."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        ssl_context: ssl.SSLContext | None = None,
        app: Any = None,
    ) -> None:
        self.ssl_context = ssl_context
        self.app = app
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def base_url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            wrapped = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            print(
                f"ahp_py: TLS handshake refused: {type(exc).__name__}", file=sys.stderr
            )
            return
        try:
            wrapped.settimeout(None)
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread


class Handler(BaseHTTPRequestHandler):
    """Request handler base: body reading and single-send replies."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging (stderr stays for real diagnostics)."""

    def read_body(self) -> bytes | None:
        """The request body, or None after replying with an error status."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            return b""
        try:
            length = int(length_header)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            self.reply(400)
            return None
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes | None:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                self.reply(400)
                return None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            total += size
            if total > MAX_BODY:
                self.close_connection = True
                self.reply(413)
                return None
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def reply(
        self, status: int, body: bytes = b"", content_type: str | None = None
    ) -> None:
        """Write status line, headers and body in one send."""
        reason = self.responses.get(status, ("",))[0]
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + body)

    def reply_json(self, value: Any, status: int = 200) -> None:
        self.reply(status, codec.dump_bytes(value), "application/json")


def intercept_url(endpoint: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path) to POST to; /intercept is added if missing."""
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise TransportError(f"endpoint is not an http(s) URL: {endpoint!r}")
    path = url.path or "/"
    if not path.endswith("/intercept"):
        path = path.rstrip("/") + "/intercept"
    if url.query:
        path += "?" + url.query
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.scheme, url.hostname, port, path


class HttpPeer:
    """One keep-alive connection to an AHP endpoint; each exchange is one POST."""

    def __init__(
        self,
        endpoint: str,
        timeout: float,
        token: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        scheme, host, port, self.path = intercept_url(endpoint)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self.connection: http.client.HTTPConnection
        if scheme == "https":
            if ssl_context is None:
                from .config import TlsFiles
                from .tls import client_context

                ssl_context = client_context(TlsFiles())
            self.connection = http.client.HTTPSConnection(
                host, port, timeout=timeout, context=ssl_context
            )
        else:
            self.connection = http.client.HTTPConnection(host, port, timeout=timeout)

    def exchange(self, message: Any) -> Any:
        body = codec.dump_bytes(message)
        try:
            self.connection.request("POST", self.path, body, self.headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.connection.close()
            raise TransportError(f"HTTP exchange failed: {_describe(exc)}") from None
        if response.will_close:
            self.connection.close()
        if response.status != 200:
            raise TransportError(f"HTTP status {response.status}")
        try:
            return codec.loads(data)
        except codec.JsonDecodeError as exc:
            raise TransportError(f"response body is not JSON: {exc}") from None

    def close(self) -> None:
        self.connection.close()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verification failed ({exc.verify_message})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
