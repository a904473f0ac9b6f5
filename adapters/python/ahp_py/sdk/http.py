"""HTTP/1.1 on loopback: a keep-alive listener (TLS optional) and client.

Each response is written with its head and body in ONE send, and sockets use
TCP_NODELAY: otherwise Nagle's algorithm meets delayed ACK and every round
trip on loopback costs ~40 ms.

Every read is bounded: a body over ``MAX_BODY`` is refused with 413 before it
is read, a connection whose header, body or idle time stalls for
``READ_TIMEOUT`` is closed, a malformed length or chunk size gets 400. A
listener thread serves each connection, with a listen backlog of ``BACKLOG``.

``RpcHandler`` is the AHP binding: it authenticates from the headers before
reading any body, parses the body as strict JSON (a malformed one gets the
JSON-RPC parse error with status 400) and hands the message to its
``RpcApp``.
"""

from __future__ import annotations

import http.client
import re
import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from . import codec, rpc
from .tls import TlsFiles

MAX_BODY = 8 * 1024 * 1024
READ_TIMEOUT = 10.0
BACKLOG = 1024
MAX_CHUNK_LINE = 1024
MAX_TRAILER_LINES = 64
LINGER_SECONDS = 1.0  # after refusing a body: drain (and drop) what is in flight
LINGER_BYTES = 1024 * 1024
HANG_POLL_SECONDS = 0.05  # how soon a never-answered exchange notices shutdown
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(r"[0-9]{1,20}")


class TransportError(Exception):
    """No response came back: a failed row, never a rejection."""


class MalformedResponse(Exception):
    """A response arrived but is not one strict JSON text: a rejection."""


class Listener(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1; each connection TLS-wrapped if asked."""

    daemon_threads = True
    block_on_close = False  # a reply held at a barrier must not hold up server_close
    allow_reuse_address = False
    request_queue_size = BACKLOG

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        ssl_context: ssl.SSLContext | None = None,
        app: Any = None,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.ssl_context = ssl_context
        self.app = app
        self.read_timeout = read_timeout
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
        request.settimeout(self.read_timeout)
        try:
            wrapped = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            print(f"ahp_py: TLS handshake refused: {type(exc).__name__}", file=sys.stderr)
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line per connection that broke (a reset, a TLS error), no traceback."""
        kind, exc = sys.exc_info()[:2]
        name = kind.__name__ if kind is not None else "error"
        print(f"ahp_py: connection dropped: {name}: {exc}", file=sys.stderr)

    def serve_in_thread(self, poll_interval: float = 0.5) -> threading.Thread:
        """``poll_interval``: how soon ``shutdown`` is noticed (the socket itself is
        never polled; a new connection wakes the loop at once)."""
        thread = threading.Thread(target=self.serve_forever, args=(poll_interval,), daemon=True)
        thread.start()
        return thread


class Handler(BaseHTTPRequestHandler):
    """Request handler base: bounded body reading and single-send replies."""

    protocol_version = "HTTP/1.1"
    body_refused = False  # a reply went out before the request body was read
    linger_bytes = LINGER_BYTES  # how much of a refused body is drained at most

    @property
    def listener(self) -> Listener:
        return cast(Listener, self.server)

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.listener.read_timeout)  # header, body, idle reads

    def finish(self) -> None:
        super().finish()
        if self.body_refused:
            _linger(self.connection, self.linger_bytes)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging (stderr stays for real diagnostics)."""

    def handle_expect_100(self) -> bool:
        """``100 Continue`` is sent by ``read_body``, once the headers passed."""
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error the base class detects (a bad request line, an unsupported
        method, headers too long) gets a real status line, even before the request
        line is understood, and the connection closes."""
        self.close_connection = True
        self.reply(int(code))

    def refuse(self, status: int) -> None:
        """Reply ``status`` without reading the body, then close the connection."""
        self.close_connection = True
        self.body_refused = True
        self.reply(status)

    def read_body(self) -> bytes | None:
        """The request body, or None after replying with an error status (or after
        the peer went away mid-body)."""
        encoding = self.headers.get_all("Transfer-Encoding") or []
        lengths = self.headers.get_all("Content-Length") or []
        if encoding:
            if [value.strip().lower() for value in encoding] != ["chunked"] or lengths:
                self.refuse(501 if not lengths else 400)
                return None
            self._continue()
            return self._read_chunked()
        if not lengths:
            return b""
        if len(set(lengths)) != 1 or not _DIGITS.fullmatch(lengths[0].strip()):
            self.refuse(400)
            return None
        length = int(lengths[0].strip())
        if length > MAX_BODY:
            self.refuse(413)
            return None
        self._continue()
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return None
        return body

    def _continue(self) -> None:
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _read_chunked(self) -> bytes | None:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(MAX_CHUNK_LINE)
            size_text = line.split(b";", 1)[0].strip(b" \t\r\n")
            if not line.endswith(b"\n") or not _HEX.fullmatch(size_text):
                self._bad_chunk(line)
                return None
            size = int(size_text, 16)
            if size == 0:
                return self._read_trailers(b"".join(parts))
            total += size
            if total > MAX_BODY:
                self.refuse(413)
                return None
            chunk = self.rfile.read(size)
            end = self.rfile.readline(3)
            if len(chunk) != size or not end:
                self.close_connection = True
                return None
            if end not in (b"\r\n", b"\n"):
                self._bad_chunk(end)
                return None
            parts.append(chunk)

    def _read_trailers(self, body: bytes) -> bytes | None:
        for _ in range(MAX_TRAILER_LINES):
            line = self.rfile.readline(MAX_CHUNK_LINE)
            if line in (b"\r\n", b"\n"):
                return body
            if not line.endswith(b"\n"):
                break
        self._bad_chunk(line)
        return None

    def _bad_chunk(self, line: bytes) -> None:
        """400 for a malformed chunk line; an empty read is the peer gone."""
        if line:
            self.refuse(400)
        else:
            self.close_connection = True

    def reply(self, status: int, body: bytes = b"", content_type: str | None = None) -> None:
        """Write status line, headers and body in one send."""
        reason = self.responses.get(status, ("",))[0]
        lines = [f"HTTP/1.1 {status} {reason}"]
        if status != 204:
            lines.append(f"Content-Length: {len(body)}")
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + body)

    def reply_json(self, value: Any, status: int = 200) -> None:
        self.reply(status, codec.dump_bytes(value), "application/json")


def _linger(connection: Any, limit: int = LINGER_BYTES, seconds: float = LINGER_SECONDS) -> None:
    """Half-close, then read and drop what the peer still sends for a moment, so
    closing with unread data (which resets the connection) cannot destroy the
    reply before the peer has read it."""
    try:
        connection.shutdown(socket.SHUT_WR)
        connection.settimeout(seconds)
        drained = 0
        while drained < limit:
            data = connection.recv(65536)
            if not data:
                break
            drained += len(data)
    except (OSError, ValueError):
        pass


class RpcApp(Protocol):
    """What an AHP server puts behind ``RpcHandler``."""

    def authenticate(self, authorization: list[str]) -> bool:
        """``authorization``: every Authorization header of the request, in order."""
        ...

    def dispatch(self, message: Any) -> rpc.Answer: ...


class RpcHandler(Handler):
    """The AHP endpoint: POST of any JSON-RPC message on any path, GET /capabilities."""

    @property
    def app(self) -> RpcApp:
        return cast(RpcApp, self.listener.app)

    def _authorized(self) -> bool:
        if self.app.authenticate(self.headers.get_all("Authorization") or []):
            return True
        self.refuse(401)
        return False

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = self.read_body()
        if body is None:
            return
        try:
            message = codec.loads(body)
        except codec.JsonDecodeError:
            self.reply_json(rpc.parse_error(), 400)
            return
        self._send(self.app.dispatch(message))

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/capabilities":
            self.reply(404)
            return
        if not self._authorized():
            return
        # an app may answer a GET apart from a POSTed request (the catalogue records
        # only what a client sent as hooks/capabilities)
        dispatch = getattr(self.app, "dispatch_get", self.app.dispatch)
        self._send(dispatch(codec.clone(rpc.GET_DISCOVERY)))

    def _send(self, answer: rpc.Answer) -> None:
        if answer.hang is not None:
            # Never answered: held open until the peer closes or the server stops.
            self.close_connection = True
            _await_close(self.connection, answer.hang)
            return
        if answer.gate is not None:
            answer.gate.wait()
        try:
            answer.writing()
            if answer.raw is not None:
                self.reply(answer.status or 200, answer.raw, "application/json")
            elif answer.has_reply:
                self.reply_json(answer.reply, answer.status or 200)
            else:
                self.reply(answer.status or 204)
        finally:
            answer.written()


def _await_close(connection: Any, stop: threading.Event, poll: float = HANG_POLL_SECONDS) -> None:
    """Return once the peer has closed ``connection`` (EOF or an error) or ``stop``
    is set; whatever the peer sends meanwhile is read and dropped."""
    while not stop.is_set():
        try:
            readable = select.select([connection], [], [], poll)[0]
            if readable and not connection.recv(65536):
                return
        except ssl.SSLWantReadError:
            continue
        except (OSError, ValueError):
            return


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
                from .tls import client_context

                ssl_context = client_context(TlsFiles())
            self.connection = http.client.HTTPSConnection(
                host, port, timeout=timeout, context=ssl_context
            )
        else:
            self.connection = http.client.HTTPConnection(host, port, timeout=timeout)

    def exchange(self, message: Any) -> Any:
        """The parsed response; TransportError when none came back (a status other
        than 200 included), MalformedResponse when it is not strict JSON."""
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
            raise MalformedResponse(f"response body is not strict JSON: {exc}") from None

    def close(self) -> None:
        self.connection.close()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"certificate verification failed ({exc.verify_message})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
