"""HTTP/1.1 on loopback, the client side: one keep-alive connection per peer.

Sockets use TCP_NODELAY: otherwise Nagle's algorithm meets delayed ACK and every
round trip on loopback costs ~40 ms. The listener is ``sdk/listener.py``: a
client process never imports it (nor ``http.server``).
"""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

from . import codec
from .tls import TlsFiles


class TransportError(Exception):
    """No response came back: a failed row, never a rejection."""


class MalformedResponse(Exception):
    """A response arrived but is not one strict JSON text: a rejection."""


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
