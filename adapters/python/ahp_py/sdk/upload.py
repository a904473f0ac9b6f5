"""Content upload: raw octets to a receiver, answered with a receipt (both sides).

The binding: ``POST`` of the raw bytes to the receiver's upload endpoint with
exactly one ``Authorization: Bearer <token>``, ``Content-Type:
application/octet-stream``, an exact ``Content-Length`` (0 allowed), no
``Transfer-Encoding`` or ``Content-Encoding``, and ``AHP-Content-SHA256`` (64
lowercase hex digits) equal to the body's SHA-256. The receiver stores the
bytes immutably and answers ``201`` with ``{"ref", "size", "sha256"}``, the
``ref`` (``urn:uuid:...``) being its own; uploads never redirect.

Statuses: a missing or wrong credential 401; two ``Authorization`` headers,
a bad or missing length, type or hash, a transfer or content coding, a body
shorter than its length (the sender half-closed) or one whose hash differs
400; a length over the limit 413 (not read). Every refusal before the body
is read is sent without reading it, then the connection half-closes and
drains. Events refer to stored bytes by ``body.ref``; ``ContentStore.has``
answers whether a reference names stored bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import os
import socket
import ssl
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from . import codec
from .http import TransportError
from .record import record

MAX_UPLOAD = 1024 * 1024  # bytes; a longer declared body is refused unread (413)
CONTENT_TYPE = "application/octet-stream"
HASH_HEADER = "AHP-Content-SHA256"
UPLOAD_PATH = "/upload"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _uuid4() -> str:
    """``str(uuid.uuid4())``: 16 random bytes, version 4, RFC 4122 variant (the
    ``uuid`` module would add ``platform`` to every server's start)."""
    data = bytearray(os.urandom(16))
    data[6] = (data[6] & 0x0F) | 0x40
    data[8] = (data[8] & 0x3F) | 0x80
    text = data.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class ContentStore:
    """Immutable bytes by receiver-allocated reference (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        """Store a copy of ``data`` under a new reference; nothing ever replaces it."""
        ref = f"urn:uuid:{_uuid4()}"
        with self._lock:
            self._blobs[ref] = bytes(data)
        return ref

    def get(self, ref: str) -> bytes | None:
        with self._lock:
            return self._blobs.get(ref)

    def has(self, ref: str) -> bool:
        with self._lock:
            return ref in self._blobs


@record
class Attempt:
    """One upload attempt as the receiver saw it: the status it answered and the
    size and hash the sender declared (0 and "" where it declared none)."""

    status: int
    size: int
    sha256: str
    ref: str | None = None


class UploadReceiver:
    """What ``UploadHandler`` (``sdk/listener.py``) serves: the accepted token,
    the store, and a hook told of every attempt (before its answer is written)."""

    def __init__(
        self,
        token: str,
        store: ContentStore,
        attempted: Callable[[Attempt], None] | None = None,
        max_bytes: int = MAX_UPLOAD,
        path: str = UPLOAD_PATH,
    ) -> None:
        self._token = token.encode("utf-8")
        self.store = store
        self.attempted = attempted
        self.max_bytes = max_bytes
        self.path = path

    def authorization_status(self, values: list[str]) -> int | None:
        """None when exactly one header carries the accepted bearer token."""
        if len(values) > 1:
            return 400
        if not values or not values[0].startswith("Bearer "):
            return 401
        token = values[0][7:].strip().encode("utf-8")
        return None if hmac.compare_digest(token, self._token) else 401

    def record(self, attempt: Attempt) -> None:
        if self.attempted is not None:
            self.attempted(attempt)


# The sender ---------------------------------------------------------------------


@record
class UploadAnswer:
    status: int
    body: bytes

    def receipt(self) -> dict[str, Any] | None:
        """The 201 body when it is exactly ``{"ref", "size", "sha256"}`` with a
        non-empty ``ref``, else None."""
        try:
            value = codec.loads(self.body)
        except codec.JsonDecodeError:
            return None
        if not isinstance(value, dict) or set(value) != {"ref", "size", "sha256"}:
            return None
        if not isinstance(value["ref"], str) or not value["ref"]:
            return None
        if not codec.is_integer(value["size"]) or not isinstance(value["sha256"], str):
            return None
        return value


def send_upload(
    endpoint: str,
    data: bytes,
    *,
    size: int,
    sha256: str,
    token: str | None,
    timeout: float,
    ssl_context: ssl.SSLContext | None = None,
) -> UploadAnswer:
    """POST ``data`` declaring ``size`` and ``sha256`` (deliberately wrong ones are
    sent as they are: a body shorter than ``size`` is sent whole and the write
    side is then shut, one longer is cut at ``size``). Raises TransportError when
    no answer came back; redirects are never followed (a 3xx is its status)."""
    url = urlsplit(endpoint)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise TransportError(f"upload endpoint is not an http(s) URL: {endpoint!r}")
    port = url.port or (443 if url.scheme == "https" else 80)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    host = url.hostname if url.port is None else f"{url.hostname}:{url.port}"
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        f"Content-Type: {CONTENT_TYPE}",
        f"Content-Length: {size}",
        f"{HASH_HEADER}: {sha256}",
        "Connection: close",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    body = data[:size]
    try:
        raw = socket.create_connection((url.hostname, port), timeout=timeout)
    except OSError as exc:
        raise TransportError(f"upload connection failed: {type(exc).__name__}: {exc}") from None
    sock: socket.socket = raw
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if url.scheme == "https":
            if ssl_context is None:
                from .tls import TlsFiles, client_context

                ssl_context = client_context(TlsFiles())
            sock = ssl_context.wrap_socket(raw, server_hostname=url.hostname)
        try:
            sock.sendall(head + body)
            if len(body) < size and not isinstance(sock, ssl.SSLSocket):
                sock.shutdown(socket.SHUT_WR)  # (over TLS this would end the session)
        except OSError:
            pass  # the receiver may answer (and close) before reading it all
        response = http.client.HTTPResponse(sock)
        try:
            response.begin()
            answer = UploadAnswer(response.status, response.read())
        except (OSError, http.client.HTTPException) as exc:
            raise TransportError(f"upload got no answer: {type(exc).__name__}: {exc}") from None
    finally:
        sock.close()
    return answer
