"""Raw HTTP(S) probes: the harness's own client that can send anything a receiver must refuse.

It presents the run's event credential of a mode (or none, or another one),
can repeat a header, lie about `Content-Length` and half-close, and never
follows a redirect. Used by the lifecycle suite's receiver probes and, next,
the authentication suite.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from interop.jsonvalue import JsonError, loads
from interop.trust import Trust


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
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
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
