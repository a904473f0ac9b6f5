"""Raw HTTP(S) probes: the harness's own client that can send anything a receiver must refuse.

`send` presents the run's event credential of a mode (or none, or another one),
can repeat a header, lie about `Content-Length` and half-close, and never
follows a redirect; its `Answer` is the status, headers and body.

`observe` is one connection that names what came back: TCP, then (unless
`plain`) a TLS handshake with the `TlsOptions` given, then one HTTP/1.1 request
written byte for byte (repeated or malformed headers included), then the answer
read to its end. What came back is an `Observation`: an HTTP status, a TLS
alert by name, or the connection ending without either (`eof`, `reset`), which
is never taken for a rejection. TLS 1.3 sends a client-certificate rejection
after the client's handshake has completed, so it arrives on the first read
(or makes the write fail): the pending alert is always read before anything
is concluded.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from interop.jsonvalue import JsonError, loads
from interop.trust import Trust

READ_LIMIT = 1 << 20


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        try:
            return loads(self.body)
        except JsonError:
            return None


def event_token(trust: Trust, mode: str, profile: str) -> str | None:
    """The bearer token an honest client presents on the event route in `mode` (None: none)."""
    if mode == "bearer":
        return trust.bearer_token
    if mode in ("oauth", "workload"):
        return trust.token(mode, profile)
    return None


def tls_context(trust: Trust, mode: str, profile: str) -> ssl.SSLContext:
    """The client TLS of `mode` in `profile`: the run's CA, and the client certificate for mTLS."""
    context = ssl.create_default_context(cafile=trust.path("ca.pem"))
    if mode == "mtls":
        context.load_cert_chain(trust.path("client.pem"), trust.path("client-key.pem"))
    return context


def send(
    url: str,
    *,
    headers: list[tuple[str, str]],
    body: bytes = b"",
    declared_length: int | None = None,
    context: ssl.SSLContext | None = None,
    timeout: float = 15.0,
) -> Answer:
    """POST `body` to `url` with exactly `headers` (repeats allowed); a `declared_length`
    other than the body's is sent as `Content-Length`, then the write side is closed."""
    parts = urlsplit(url)
    host, port = _address(parts)
    raw = socket.create_connection((host, port), timeout=timeout)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock: socket.socket = raw
    if parts.scheme == "https":
        sock = (context or ssl.create_default_context()).wrap_socket(raw, server_hostname=host)
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
        names = {name.lower() for name, _ in headers}
        if "content-length" not in names and "transfer-encoding" not in names:
            length = len(body) if declared_length is None else declared_length
            lines.append(f"Content-Length: {length}")
        lines += [f"{name}: {value}" for name, value in headers]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        if declared_length is not None and declared_length != len(body):
            if isinstance(sock, ssl.SSLSocket):
                sock = sock.unwrap()
            sock.shutdown(socket.SHUT_WR)
        return _read_answer(sock)
    finally:
        sock.close()


def _address(parts: SplitResult) -> tuple[str, int]:
    """A URL's host and port (the scheme's default port when it names none)."""
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


def _read_answer(sock: socket.socket) -> Answer:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the connection closed before an answer")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return Answer(status, headers, rest[:length])


# ---------------------------------------------------------------- observe


@dataclass(frozen=True)
class TlsOptions:
    ca_file: str
    cert_file: str | None = None
    key_file: str | None = None
    version: str | None = None  # "1.2" or "1.3": pin the protocol version


@dataclass(frozen=True)
class Observation:
    kind: str  # http | tls-alert | eof | reset | timeout | error
    detail: str  # "HTTP 401", "TLS TLSV13_ALERT_CERTIFICATE_REQUIRED", "EOF before an answer"
    status: int | None = None
    body: bytes = b""
    alert: str | None = None

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {"kind": self.kind, "observed": self.detail}
        if self.status is not None:
            shown["status"] = self.status
        return shown


def _probe_context(options: TlsOptions) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(options.ca_file)
    context.check_hostname = True
    if options.version is not None:
        version = ssl.TLSVersion.TLSv1_3 if options.version == "1.3" else ssl.TLSVersion.TLSv1_2
        context.minimum_version = context.maximum_version = version
    if options.cert_file is not None:
        context.load_cert_chain(options.cert_file, options.key_file)
    return context


def _tls_failure(exc: BaseException) -> Observation:
    if isinstance(exc, ssl.SSLEOFError):
        return Observation("eof", "EOF during TLS")
    if isinstance(exc, ssl.SSLError):
        reason = getattr(exc, "reason", None) or exc.__class__.__name__
        if "ALERT" in str(reason):
            return Observation("tls-alert", f"TLS {reason}", alert=str(reason))
        return Observation("error", f"TLS error {reason}")
    if isinstance(exc, ConnectionResetError | BrokenPipeError):
        return Observation("reset", f"connection reset ({exc.__class__.__name__})")
    if isinstance(exc, TimeoutError | socket.timeout):
        return Observation("timeout", "no answer in time")
    return Observation("error", f"{exc.__class__.__name__}: {exc}")


def _pending_alert(sock: socket.socket) -> Observation | None:
    """After a failed write: read what the peer sent before closing (a TLS alert)."""
    try:
        sock.recv(1)
    except (ssl.SSLError, OSError) as exc:
        seen = _tls_failure(exc)
        return seen if seen.kind == "tls-alert" else None
    return None


def _read_observed(sock: socket.socket) -> Observation:
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                if not data:
                    return Observation("eof", "EOF before an answer")
                break
            data += chunk
            if len(data) > READ_LIMIT:
                break
    except (ssl.SSLError, OSError) as exc:
        return _tls_failure(exc)
    head, _, rest = data.partition(b"\r\n\r\n")
    first = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = first.split()
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        if data[:1] == b"\x15":  # a TLS alert record answered a plain request
            return Observation("tls-alert", "TLS alert record to a plain request", alert="record")
        return Observation("error", f"not an HTTP answer: {data[:40]!r}")
    status = int(parts[1])
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    try:
        while len(rest) < min(length, READ_LIMIT):
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    except (ssl.SSLError, OSError):
        pass
    return Observation("http", f"HTTP {status}", status=status, body=rest[:length])


def observe(
    url: str,
    *,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes = b"",
    tls: TlsOptions | None = None,
    plain: bool = False,
    timeout: float = 10.0,
) -> Observation:
    """One request to `url`'s host and port at `path` (query included) with exactly
    `headers` (a Content-Length is added for a body); `plain` skips TLS on an https URL."""
    parts = urlsplit(url)
    host, port = _address(parts)
    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        return Observation("error", f"connect failed: {exc}")
    sock: socket.socket = raw
    try:
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if parts.scheme == "https" and not plain:
            assert tls is not None, "an https probe needs its TLS options"
            try:
                sock = _probe_context(tls).wrap_socket(raw, server_hostname=host)
            except (ssl.SSLError, OSError) as exc:
                return _tls_failure(exc)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers]
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        try:
            sock.sendall(request)
        except (ssl.SSLError, OSError) as exc:
            return _pending_alert(sock) or _tls_failure(exc)
        return _read_observed(sock)
    finally:
        sock.close()
