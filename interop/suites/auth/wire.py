"""The auth suite's raw probe client: sends anything, and names what came back.

A probe is one connection: TCP, then (unless `plain`) a TLS handshake with the
options given, then one HTTP/1.1 request written byte for byte (repeated or
malformed headers included), then the answer read to its end. What came back
is an `Observation`: an HTTP status, a TLS alert by name, or the connection
ending without either (`eof`, `reset`), which is never taken for a rejection.

TLS 1.3 sends a client-certificate rejection after the client's handshake
has completed, so it arrives on the first read (or makes the write fail): the
pending alert is always read before anything is concluded.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

READ_LIMIT = 1 << 20


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


def _context(options: TlsOptions) -> ssl.SSLContext:
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


def _read(sock: socket.socket) -> Observation:
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


def probe(
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
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
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
                sock = _context(tls).wrap_socket(raw, server_hostname=host)
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
        return _read(sock)
    finally:
        sock.close()
