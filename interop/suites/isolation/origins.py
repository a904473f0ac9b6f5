"""The harness's own HTTP(S) origins for the isolation suite, all on loopback.

- `Capture`: an upload origin that records each raw request (header names and
  counts, framing, body size and hash, whether a TLS client certificate was
  presented; never a credential's value) and applies the upload rules: a
  clean upload gets 201 `{ref, size, sha256}` with a fresh `urn:uuid:` ref (or,
  redirecting, 307 to another origin), anything else 400.
- `CookieRelay`: a reverse proxy in front of the real event server that adds
  a `Set-Cookie` for 127.0.0.1 to every answer (cookies are not port-bound, so
  a client with a cookie jar would send it to the capture).

Standard library plus the run's trust material; every listener is threaded,
one request per capture connection, and stopped (joined) by `close()`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import re
import ssl
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from interop.trust import ISSUER

MAX_BYTES = 1024 * 1024
READ_TIMEOUT = 5.0
CONTENT_TYPE = "application/octet-stream"
HASH_HEADER = "ahp-content-sha256"
FRAMING = ("content-length", "content-type", HASH_HEADER)
CODINGS = ("transfer-encoding", "content-encoding")
IDENTITY = ("ahp-subscription", "ahp-content-ref")
SENSITIVE = ("authorization", "proxy-authorization", "cookie")
SHOWN = {
    "content-length": "Content-Length",
    "content-type": "Content-Type",
    HASH_HEADER: "AHP-Content-SHA256",
    "transfer-encoding": "Transfer-Encoding",
    "content-encoding": "Content-Encoding",
    "ahp-subscription": "AHP-Subscription",
    "ahp-content-ref": "AHP-Content-Ref",
    "authorization": "Authorization",
    "proxy-authorization": "Proxy-Authorization",
    "cookie": "Cookie",
}
_LENGTH = re.compile(r"0|[1-9][0-9]*")
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


@dataclass
class Captured:
    """One request as the origin saw it. Values are kept only for framing headers;
    a sensitive header is kept as its name and a label of whose it looked like."""

    method: str
    target: str
    tls: bool
    client_certificate: str | None  # None, or a label (the event's, another)
    headers: dict[str, int]  # lower-case name -> count
    framing: dict[str, list[str]]  # content-length, content-type, hash, codings -> values
    sensitive: dict[str, list[str]]  # name -> label per occurrence
    size: int  # bytes read
    sha256: str  # of the bytes read
    complete: bool  # the whole declared body arrived
    status: int = 0
    ref: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (error class, message)
    cookies_before: int | None = None  # cookie case: answers the relay had sent by then

    def summary(self) -> dict[str, Any]:
        """What a report may show: no value of a sensitive header, no ref."""
        shown: dict[str, Any] = (
            {} if self.cookies_before is None else {"cookiesSetBefore": self.cookies_before}
        )
        return {
            **shown,
            "method": self.method,
            "target": self.target,
            "tls": self.tls,
            "clientCertificate": self.client_certificate,
            "headers": dict(sorted(self.headers.items())),
            "sensitive": dict(sorted(self.sensitive.items())),
            "size": self.size,
            "sha256": self.sha256,
            "status": self.status,
        }


class _Server(ThreadingHTTPServer):
    """A threaded loopback listener; with `context`, each connection's TLS handshake
    runs in its own thread and a failed one is reported, not raised. With `joined`,
    closing waits for every connection's thread (each bounded by its read timeout),
    so nothing a client sent can be recorded after the origin is closed."""

    daemon_threads = True

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext | None,
        owner: Any,
        joined: bool,
    ) -> None:
        self.context = context
        self.owner = owner
        self.block_on_close = joined
        super().__init__(("127.0.0.1", 0), handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(READ_TIMEOUT)
        try:
            wrapped = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            self.owner.handshake_failed(exc)
            return
        try:
            self.RequestHandlerClass(wrapped, client_address, self)  # type: ignore[arg-type]
        finally:
            with contextlib.suppress(OSError):
                wrapped.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up is not the harness's failure


class _Origin:
    """A listener on a thread of its own."""

    scheme = "http"

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext | None,
        *,
        joined: bool,
    ) -> None:
        self.server = _Server(handler, context, self, joined)
        self.scheme = "https" if context is not None else "http"
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def handshake_failed(self, exc: BaseException) -> None:
        pass

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


# ---------------------------------------------------------------- the capture


class Capture(_Origin):
    """An upload origin: records every request, answers by the rules.

    `redirect`: a clean upload is answered 307 with `Location: redirect` instead
    of 201. `labels` names a sensitive header's value (never stored) and
    `certificate_label` a presented client certificate (DER) for the record.
    """

    def __init__(
        self,
        path: str,
        *,
        context: ssl.SSLContext | None = None,
        redirect: str | None = None,
        labels: Callable[[str, str], str] | None = None,
        certificate_label: Callable[[bytes], str] | None = None,
    ) -> None:
        self.path = path
        self.redirect = redirect
        self.cookies: Callable[[], int] | None = None  # set for the cookie case
        self.labels = labels or (lambda name, value: "a value")
        self.certificate_label = certificate_label or (lambda der: "a certificate")
        self.captured: list[Captured] = []
        self.handshakes: list[str] = []  # why each failed TLS handshake failed
        self._lock = threading.Lock()
        super().__init__(_CaptureHandler, context, joined=True)

    @property
    def endpoint(self) -> str:
        return self.url(self.path)

    def handshake_failed(self, exc: BaseException) -> None:
        reason = getattr(exc, "reason", None) or type(exc).__name__
        with self._lock:
            self.handshakes.append(str(reason))

    def record(self, captured: Captured) -> None:
        with self._lock:
            self.captured.append(captured)

    def snapshot(self) -> tuple[list[Captured], list[str]]:
        with self._lock:
            return list(self.captured), list(self.handshakes)


def judge(captured: Captured, path: str) -> list[tuple[str, str]]:
    """The upload rules, each broken one as (error class, message)."""
    problems: list[tuple[str, str]] = []
    if captured.method != "POST" or captured.target != path:
        problems.append(
            (
                "CaptureTarget",
                f"{captured.method} {captured.target}, the step's endpoint is POST {path}",
            )
        )
    counts = captured.headers
    for name in FRAMING:
        if counts.get(name, 0) != 1:
            problems.append(
                ("CaptureFraming", f"{counts.get(name, 0)} {SHOWN[name]} headers, one needed")
            )
    for name in CODINGS:
        if counts.get(name, 0):
            problems.append(("CaptureFraming", f"a {SHOWN[name]} header {captured.framing[name]}"))
    lengths = captured.framing["content-length"]
    if len(lengths) == 1:
        if not _LENGTH.fullmatch(lengths[0]):
            problems.append(("CaptureFraming", f"Content-Length {lengths[0]!r} is not canonical"))
        elif int(lengths[0]) > MAX_BYTES:
            problems.append(("CaptureFraming", f"Content-Length {lengths[0]} is over 1 MiB"))
        elif not captured.complete:
            problems.append(
                ("CaptureFraming", f"{captured.size} bytes arrived of {lengths[0]} declared")
            )
    types = captured.framing["content-type"]
    if len(types) == 1 and types[0] != CONTENT_TYPE:
        problems.append(("CaptureFraming", f"Content-Type {types[0]!r}, not {CONTENT_TYPE}"))
    hashes = captured.framing[HASH_HEADER]
    if len(hashes) == 1 and captured.complete and hashes[0] != captured.sha256:
        problems.append(
            (
                "CaptureIntegrity",
                f"AHP-Content-SHA256 {hashes[0][:16]}... is not the sha256 of the "
                f"{captured.size} bytes received ({captured.sha256[:16]}...)",
            )
        )
    for name in IDENTITY:
        if counts.get(name, 0):
            problems.append(("CaptureIdentity", f"the upload carried {SHOWN[name]}"))
    for name in SENSITIVE:
        for label in captured.sensitive.get(name, []):
            problems.append(("CaptureLeak", f"the upload carried {SHOWN[name]} ({label})"))
    if captured.client_certificate is not None:
        problems.append(
            (
                "CaptureLeak",
                f"a TLS client certificate was presented ({captured.client_certificate})",
            )
        )
    return problems


class _CaptureHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle_expect_100(self) -> bool:
        return True  # answered only when the rules allow reading the body

    def do_POST(self) -> None:
        self._capture()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    def _capture(self) -> None:
        capture: Capture = self.server.owner
        self.close_connection = True
        counts: dict[str, int] = {}
        framing: dict[str, list[str]] = {n: [] for n in (*FRAMING, *CODINGS)}
        sensitive: dict[str, list[str]] = {}
        for name, value in self.headers.items():
            lower = name.lower()
            counts[lower] = counts.get(lower, 0) + 1
            if lower in framing:
                framing[lower].append(value.strip())
            if lower in SENSITIVE:
                sensitive.setdefault(lower, []).append(capture.labels(lower, value))
        certificate = None
        if isinstance(self.connection, ssl.SSLSocket):
            der = self.connection.getpeercert(binary_form=True)
            if der:
                certificate = capture.certificate_label(der)
        body = b""
        complete = False
        lengths = framing["content-length"]
        readable = (
            len(lengths) == 1
            and _LENGTH.fullmatch(lengths[0]) is not None
            and int(lengths[0]) <= MAX_BYTES
            and not counts.get("transfer-encoding")
        )
        if readable:
            if self.headers.get("Expect", "").lower() == "100-continue":
                self.send_response_only(100)
                self.end_headers()
            wanted = int(lengths[0])
            try:
                while len(body) < wanted:
                    chunk = self.rfile.read1(wanted - len(body))
                    if not chunk:
                        break
                    body += chunk
            except OSError:
                pass
            complete = len(body) == wanted
        captured = Captured(
            method=self.command,
            target=self.path,
            tls=isinstance(self.connection, ssl.SSLSocket),
            client_certificate=certificate,
            headers=counts,
            framing=framing,
            sensitive=sensitive,
            size=len(body),
            sha256=hashlib.sha256(body).hexdigest(),
            complete=complete,
        )
        if capture.cookies is not None:
            captured.cookies_before = capture.cookies()
        captured.problems = judge(captured, capture.path)
        if captured.problems:
            captured.status = 400
            payload = b""
            extra: list[tuple[str, str]] = []
        elif capture.redirect is not None:
            captured.status = 307
            payload = b""
            extra = [("Location", capture.redirect)]
        else:
            captured.status = 201
            captured.ref = f"urn:uuid:{uuid.uuid4()}"
            receipt = {"ref": captured.ref, "size": captured.size, "sha256": captured.sha256}
            payload = json.dumps(receipt, separators=(",", ":")).encode()
            extra = [("Content-Type", "application/json")]
        capture.record(captured)  # before the answer: a client may exit as soon as it reads it
        try:
            self.send_response(captured.status)
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        except OSError:
            pass


def secret_label(
    secrets: dict[str, str], redacts: Callable[[str], bool]
) -> Callable[[str, str], str]:
    """A labeller of sensitive header values: whose secret it carries (by the run's own
    secrets, given as label -> value), a harness JWT by its purpose, else "a value"."""

    def label(name: str, value: str) -> str:
        for what, secret in secrets.items():
            if secret and secret in value:
                return what
        token = value.split(" ", 1)[1].strip() if " " in value else value
        purpose = _jwt_purpose(token)
        if purpose is not None:
            return f"the event's {purpose} token"
        return "another run secret" if redacts(value) else "a value"

    return label


def _jwt_purpose(token: str) -> str | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return None
    if isinstance(claims, dict) and claims.get("iss") == ISSUER:
        return str(claims.get("purpose", "event"))
    return None


# ---------------------------------------------------------------- the cookie relay


class CookieRelay(_Origin):
    """A reverse proxy to `upstream` adding `cookie` (a Set-Cookie value) to every answer.

    With `context` it terminates TLS (the run's server certificate, a client
    certificate required when the context says so) and reaches the upstream with
    `upstream_context` (the event client's own TLS, certificate included)."""

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
        super().__init__(_RelayHandler, context, joined=False)

    @property
    def endpoint(self) -> str:
        return self.url(self.endpoint_path)

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
    server: _Server

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

    def _relay(self) -> None:
        relay: CookieRelay = self.server.owner
        body = self._body()
        headers = [(n, v) for n, v in self.headers.items() if n.lower() not in _HOP]
        answer: http.client.HTTPResponse | None = None
        for attempt in (1, 2):  # a kept-alive upstream connection may have closed meanwhile
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
                answer = self.upstream.getresponse()
                break
            except (OSError, http.client.HTTPException):
                self.upstream.close()
                self.upstream = None
                if attempt == 2:
                    self.close_connection = True
                    self.send_error(502)
                    return
        assert answer is not None
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


def server_tls(cert: str, key: str, client_ca: str | None, *, request_only: bool) -> ssl.SSLContext:
    """A server context for an origin: `client_ca` with `request_only` requests a client
    certificate (and verifies one that is presented), without it requires one."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    if client_ca is not None:
        context.load_verify_locations(cafile=client_ca)
        context.verify_mode = ssl.CERT_OPTIONAL if request_only else ssl.CERT_REQUIRED
    return context
