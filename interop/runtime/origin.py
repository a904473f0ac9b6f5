"""Two loopback HTTP(S) origins of the harness, on `listener.Listener`.

- `Origin`: reads each request strictly and lets its owner answer. Headers are
  kept as they came (names, values, repeats, order); the body is read only when
  exactly one canonical `Content-Length` (no sign, no leading zero) declares at
  most `limit` bytes and no `Transfer-Encoding` is sent, and a `100-continue`
  is answered only then. One request per connection; the owner's `answer` sees
  the whole `Arrival` before anything is written back, so what it records
  precedes the client's reading the answer.
- `CookieRelay`: a reverse proxy in front of a server that adds a `Set-Cookie`
  to every answer it relays (cookies are not port-bound: a client with a
  cookie jar would send it to any other listener on 127.0.0.1).

Standard library only; neither judges what crosses it.
"""

from __future__ import annotations

import http.client
import re
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from interop.runtime.listener import Listener

READ_TIMEOUT = 5.0
CANONICAL_LENGTH = re.compile(r"0|[1-9][0-9]*")
_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}


@dataclass(frozen=True)
class Arrival:
    """One request as an `Origin` read it."""

    method: str
    target: str
    headers: list[tuple[str, str]]  # as sent: names, values, repeats, order
    tls: bool
    certificate: bytes | None  # the DER of a client certificate presented over TLS
    body: bytes  # the bytes read (none when the framing forbade reading)
    complete: bool  # the whole declared body arrived


class Answer(NamedTuple):
    status: int
    headers: list[tuple[str, str]]  # sent before Content-Length and Connection: close
    payload: bytes


class Origin:
    """A started origin (see the module's text) on a thread of its own; `close()`
    joins every connection's thread, so nothing is read after it returns."""

    def __init__(
        self,
        answer: Callable[[Arrival], Answer],
        *,
        limit: int,
        context: ssl.SSLContext | None = None,
        on_handshake_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.answer = answer
        self.limit = limit
        self.listener = Listener(
            _OriginHandler,
            context,
            owner=self,
            poll_interval=0.05,
            handshake_timeout=READ_TIMEOUT,
            on_handshake_failure=on_handshake_failure,
        )
        self.listener.start()

    def url(self, path: str) -> str:
        return self.listener.url(path)

    def close(self) -> None:
        self.listener.close()

    def readable(self, headers: list[tuple[str, str]]) -> int | None:
        """How many body bytes the framing lets be read (see the module's text), or None."""
        lengths = [v.strip() for n, v in headers if n.lower() == "content-length"]
        if (
            len(lengths) == 1
            and CANONICAL_LENGTH.fullmatch(lengths[0]) is not None
            and int(lengths[0]) <= self.limit
            and not any(n.lower() == "transfer-encoding" for n, _ in headers)
        ):
            return int(lengths[0])
        return None


class _OriginHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_expect_100(self) -> bool:
        return True  # answered only when the framing allows reading the body

    def do_POST(self) -> None:
        self._arrive()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    def _read_body(self, wanted: int) -> bytes:
        body = b""
        try:
            while len(body) < wanted:
                chunk = self.rfile.read1(wanted - len(body))
                if not chunk:
                    break
                body += chunk
        except OSError:
            pass
        return body

    def _arrive(self) -> None:
        origin: Origin = self.server.listener.owner  # type: ignore[attr-defined]
        self.close_connection = True
        headers = list(self.headers.items())
        tls = isinstance(self.connection, ssl.SSLSocket)
        certificate = self.connection.getpeercert(binary_form=True) if tls else None
        body = b""
        complete = False
        wanted = origin.readable(headers)
        if wanted is not None:
            if self.headers.get("Expect", "").lower() == "100-continue":
                self.send_response_only(100)
                self.end_headers()
            body = self._read_body(wanted)
            complete = len(body) == wanted
        arrival = Arrival(self.command, self.path, headers, tls, certificate, body, complete)
        answer = origin.answer(arrival)
        try:
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer.payload)
        except OSError:
            pass


# ---------------------------------------------------------------- the cookie relay


class CookieRelay:
    """A started reverse proxy to `upstream` adding `cookie` (a Set-Cookie value) to
    every answer.

    With `context` it terminates TLS (a client certificate required when the
    context says so) and reaches the upstream with `upstream_context` (a client's
    own TLS, certificate included). `endpoint` is the upstream's path on it."""

    def __init__(
        self,
        upstream: str,
        cookie: str,
        *,
        context: ssl.SSLContext | None,
        upstream_context: ssl.SSLContext | None,
        timeout: float,
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream_scheme = parts.scheme
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or (443 if parts.scheme == "https" else 80)
        self.cookie = cookie
        self.upstream_context = upstream_context
        self.timeout = timeout
        self.relayed = 0
        self._lock = threading.Lock()
        self.endpoint_path = parts.path or "/"
        self.listener = Listener(
            _RelayHandler,
            context,
            owner=self,
            joined=False,
            poll_interval=0.05,
            handshake_timeout=READ_TIMEOUT,
        )
        self.listener.start()

    @property
    def endpoint(self) -> str:
        return self.listener.url(self.endpoint_path)

    def close(self) -> None:
        self.listener.close()

    def connect(self) -> http.client.HTTPConnection:
        if self.upstream_scheme == "https":
            return http.client.HTTPSConnection(
                self.upstream_host,
                self.upstream_port,
                timeout=self.timeout,
                context=self.upstream_context,
            )
        return http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=self.timeout
        )

    def count(self) -> None:
        with self._lock:
            self.relayed += 1

    def answered(self) -> int:
        """How many answers (each with the cookie) have been relayed so far."""
        with self._lock:
            return self.relayed


class _RelayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.upstream: http.client.HTTPConnection | None = None

    def finish(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
        super().finish()

    def do_POST(self) -> None:
        self._relay()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_POST

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(length) if length else b""

    def _exchange(
        self, relay: CookieRelay, body: bytes, headers: list[tuple[str, str]]
    ) -> http.client.HTTPResponse | None:
        """The upstream's answer, tried twice (a kept-alive upstream connection may have
        closed meanwhile); None when both tries failed."""
        for _ in (1, 2):
            if self.upstream is None:
                self.upstream = relay.connect()
            try:
                self.upstream.putrequest(
                    self.command, self.path, skip_host=True, skip_accept_encoding=True
                )
                for name, value in headers:
                    self.upstream.putheader(name, value)
                self.upstream.putheader("Content-Length", str(len(body)))
                self.upstream.endheaders(body)
                return self.upstream.getresponse()
            except (OSError, http.client.HTTPException):
                self.upstream.close()
                self.upstream = None
        return None

    def _relay(self) -> None:
        relay: CookieRelay = self.server.listener.owner  # type: ignore[attr-defined]
        body = self._body()
        headers = [(n, v) for n, v in self.headers.items() if n.lower() not in _HOP]
        answer = self._exchange(relay, body, headers)
        if answer is None:
            self.close_connection = True
            self.send_error(502)
            return
        payload = answer.read()
        relay.count()
        if answer.will_close and self.upstream is not None:
            self.upstream.close()
            self.upstream = None
        try:
            self.send_response_only(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in _HOP and name.lower() != "date":
                    self.send_header(name, value)
            self.send_header("Set-Cookie", relay.cookie)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True
