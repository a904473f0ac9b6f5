"""The harness's own HTTP(S) listeners on loopback, and a port nothing listens on.

- `Listener`: a threaded HTTP server on 127.0.0.1 (a free port), served by a
  thread of its own. With a TLS context each connection's handshake runs in
  that connection's thread (a client that stalls it holds no other), and a
  failed one is handed to `on_handshake_failure`, never raised. `joined`: closing
  waits for every connection's thread, so nothing a client sent can arrive
  after `close()` returns.
- `serve`: a plain listener that hands each request (`Request`) to a function
  and sends back the `Reply` it returns, nothing else.
- `server_tls`: a server context from a certificate, a key and a client CA.
- `refusing_port`: a loopback port bound and never listened on.

Standard library only: a process of its own (a stdio bridge) serves one too.
What a request means, and what to answer, is the caller's.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

TlsContext = ssl.SSLContext  # what `server_tls` makes: a suite hands it on, unopened


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        listener: Listener,
        context: ssl.SSLContext | None,
        joined: bool,
    ) -> None:
        self.listener = listener
        self.context = context
        self.block_on_close = joined
        super().__init__(("127.0.0.1", 0), handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(self.listener.handshake_timeout)
        try:
            wrapped = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            if self.listener.on_handshake_failure is not None:
                self.listener.on_handshake_failure(exc)
            return
        try:
            self.RequestHandlerClass(wrapped, client_address, self)  # type: ignore[arg-type]
        finally:
            with contextlib.suppress(OSError):
                wrapped.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if self.listener.quiet:
            return  # a client that hangs up is not the harness's failure
        super().handle_error(request, client_address)


class Listener:
    """One threaded HTTP(S) listener on 127.0.0.1; `url(path)` addresses it.

    A handler reaches the listener as `self.server.listener` (and its `owner`).
    `quiet`: an error in a handler is dropped, not printed. `poll_interval`: how
    often the serving thread looks for `shutdown` (the standard library's 0.5 s
    by default). Serving starts with `start()`."""

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext | None = None,
        *,
        owner: Any = None,
        joined: bool = True,
        quiet: bool = True,
        poll_interval: float = 0.5,
        handshake_timeout: float = 5.0,
        on_handshake_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.owner = owner
        self.quiet = quiet
        self.handshake_timeout = handshake_timeout
        self.on_handshake_failure = on_handshake_failure
        self.server = _Server(handler, self, context, joined)
        self.scheme = "https" if context is not None else "http"
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": poll_interval},
            daemon=True,
        )

    def start(self) -> None:
        self.thread.start()

    def url(self, path: str = "") -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def shutdown(self) -> None:
        """Stop serving (the listening socket stays open until `close`)."""
        self.server.shutdown()

    def close(self) -> None:
        """Stop serving and close; a joined listener waits for its connections' threads."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


# ---------------------------------------------------------------- serve


@dataclass(frozen=True)
class Request:
    """One request: a POST's body read by its Content-Length (None when it declared
    none or more than the listener's limit), no other method's body read."""

    method: str
    path: str
    headers: Message
    body: bytes | None


class Reply(NamedTuple):
    status: int
    body: bytes
    content_type: str | None = "application/json"


def serve(
    answer: Callable[[Request], Reply],
    *,
    methods: Iterable[str] = ("POST",),
    body_limit: int | None = None,
    bare: bool = False,
    nodelay: bool = False,
) -> Listener:
    """A started plain listener (HTTP/1.0: one request per connection) answering each
    request of `methods` with `answer(request)`; any other method is answered 501.

    The reply goes out with its Content-Type (when given) and Content-Length, after
    the standard library's Server and Date headers, or, `bare`, as the status line
    and those two headers alone. `nodelay`: each connection sets TCP_NODELAY."""

    def handle(self: BaseHTTPRequestHandler) -> None:
        body = None
        if self.command == "POST":
            size = int(self.headers.get("Content-Length") or 0)
            if size > 0 and (body_limit is None or size <= body_limit):
                body = self.rfile.read(size)
        reply = answer(Request(self.command, self.path, self.headers, body))
        if bare:
            head = f"HTTP/1.0 {reply.status} {self.responses.get(reply.status, ('',))[0]}\r\n"
            head += f"Content-Type: {reply.content_type}\r\n" if reply.content_type else ""
            head += f"Content-Length: {len(reply.body)}\r\n\r\n"
            self.wfile.write(head.encode("latin-1") + reply.body)
            return
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            if nodelay:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    for method in methods:
        setattr(Handler, f"do_{method}", handle)
    listener = Listener(Handler, quiet=False)
    listener.start()
    return listener


# ---------------------------------------------------------------- TLS and ports


def server_tls(cert: str, key: str, client_ca: str | None, *, request_only: bool) -> ssl.SSLContext:
    """A server context (TLS 1.2 at least): `client_ca` with `request_only` requests a
    client certificate (and verifies one that is presented), without it requires one."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    if client_ca is not None:
        context.load_verify_locations(cafile=client_ca)
        context.verify_mode = ssl.CERT_OPTIONAL if request_only else ssl.CERT_REQUIRED
    return context


def refusing_port() -> socket.socket:
    """A loopback TCP port bound and never listened on: connecting to it is refused.
    Held by the caller (who closes it), so no other process can take the port meanwhile."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock
