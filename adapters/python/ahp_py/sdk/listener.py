"""HTTP/1.1 on loopback, the listener side: keep-alive, TLS optional.

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
``RpcApp``; ``GET /capabilities`` answers the app's bare capabilities object.
"""

from __future__ import annotations

import re
import select
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, cast

from . import codec, rpc
from .upload import (
    CONTENT_TYPE,
    HASH_HEADER,
    MAX_UPLOAD,
    Attempt,
    UploadReceiver,
    sha256_hex,
)

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
_SHA256 = re.compile(r"[0-9a-f]{64}")


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

    def capabilities(self) -> dict[str, Any]:
        """What ``GET /capabilities`` answers: a bare capabilities object
        (``manifest.get_capabilities``), never a receipt."""
        ...


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
        # The bare capabilities object upstream clients read (capabilities.schema.json),
        # not a JSON-RPC envelope; never dispatched, so never recorded: it is no
        # hooks/capabilities request a client sent.
        self.reply_json(self.app.capabilities())

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


# The upload receiver (sdk/upload.py: the binding, the store, the sender) -------------


class UploadHandler(Handler):
    """``POST`` of raw octets on the receiver's upload path (nothing else)."""

    linger_bytes = 64 * MAX_UPLOAD  # a refused upload is drained whole, so the 413 arrives

    @property
    def app(self) -> UploadReceiver:
        return cast(UploadReceiver, self.listener.app)

    def do_GET(self) -> None:
        self.reply(405 if self._path() == self.app.path else 404)

    def do_PUT(self) -> None:
        self.do_GET()

    def _path(self) -> str:
        return self.path.split("?", 1)[0]

    def do_POST(self) -> None:
        if self._path() != self.app.path:
            self.refuse(404)
            return
        lengths = self.headers.get_all("Content-Length") or []
        hashes = self.headers.get_all(HASH_HEADER) or []
        size = (
            int(lengths[0].strip())
            if len(lengths) == 1 and _DIGITS.fullmatch(lengths[0].strip())
            else None
        )
        declared = hashes[0].strip() if len(hashes) == 1 else ""
        status = self._header_status(size, declared, len(lengths), len(hashes))
        if status is not None:
            self._refuse(status, size, declared, "refused before the body was read")
            return
        assert size is not None
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        data = self.rfile.read(size) if size else b""
        if len(data) != size:
            # the sender sent fewer bytes than it declared, then half-closed
            self.close_connection = True
            self._answer(Attempt(400, size, declared), {"error": "body shorter than its length"})
            return
        if sha256_hex(data) != declared:
            self._answer(Attempt(400, size, declared), {"error": f"{HASH_HEADER} differs"})
            return
        ref = self.app.store.put(data)
        self._answer(
            Attempt(201, size, declared, ref), {"ref": ref, "size": size, "sha256": declared}
        )

    def _header_status(
        self, size: int | None, declared: str, lengths: int, hashes: int
    ) -> int | None:
        auth = self.app.authorization_status(self.headers.get_all("Authorization") or [])
        if auth is not None:
            return auth
        if self.headers.get_all("Transfer-Encoding") or self.headers.get_all("Content-Encoding"):
            return 400
        types = self.headers.get_all("Content-Type") or []
        if len(types) != 1 or types[0].split(";", 1)[0].strip().lower() != CONTENT_TYPE:
            return 400
        if lengths != 1 or size is None:
            return 400
        if size > self.app.max_bytes:
            return 413
        if hashes != 1 or not _SHA256.fullmatch(declared):
            return 400
        return None

    def _refuse(self, status: int, size: int | None, declared: str, why: str) -> None:
        """Answer without reading the body, then half-close and drain."""
        self.close_connection = True
        self.body_refused = True
        self._answer(Attempt(status, size or 0, declared), {"error": why})

    def _answer(self, attempt: Attempt, body: dict[str, Any]) -> None:
        self.app.record(attempt)
        self.reply_json(body, attempt.status)


def upload_listener(receiver: UploadReceiver, read_timeout: float) -> Listener:
    """A plain-HTTP loopback listener for ``receiver`` (not yet serving)."""
    return Listener(UploadHandler, app=receiver, read_timeout=read_timeout)
