"""The HTTP transport of the client: discovery, then one POST per scenario, keep-alive.

`base` is the configured endpoint without a trailing `/intercept`. One
connection (TCP_NODELAY) carries every exchange; it is reopened after a failure.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import urlsplit

TIMEOUT = 15.0


class TransportError(RuntimeError):
    """The exchange did not complete with HTTP 200 (or the line never came)."""


class HttpTransport:
    def __init__(self, endpoint: str, token: str | None) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme != "http" or parts.hostname is None:
            raise TransportError(f"only plain http endpoints are emulated, got {endpoint!r}")
        path = parts.path.rstrip("/")
        self._base = path[: -len("/intercept")] if path.endswith("/intercept") else path
        self._host, self._port = parts.hostname, parts.port or 80
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._connection: http.client.HTTPConnection | None = None

    def _call(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        if self._connection is None or self._connection.sock is None:
            self.close()
            self._connection = http.client.HTTPConnection(self._host, self._port, timeout=TIMEOUT)
            self._connection.connect()
            assert self._connection.sock is not None
            self._connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            self._connection.request(method, self._base + path, body=body, headers=headers)
            answer = self._connection.getresponse()
            return answer.status, answer.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise TransportError(f"{method} {path}: {exc}") from None

    def discover(self) -> str | None:
        """None when `GET /capabilities` answers a bare capabilities object, else why not."""
        try:
            status, data = self._call("GET", "/capabilities", None)
        except TransportError as exc:
            return str(exc)
        if status != 200:
            return f"GET /capabilities answered HTTP {status}"
        try:
            found = json.loads(data)
        except ValueError:
            return "GET /capabilities answered no JSON"
        if not isinstance(found, dict) or "jsonrpc" in found:
            return "GET /capabilities did not answer a bare capabilities object"
        if not isinstance(found.get("effects"), list):
            return "GET /capabilities has no effects array"
        return None

    def exchange(self, request: Any) -> Any:
        """The parsed response (None when the body is not JSON); TransportError unless 200."""
        body = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode()
        status, data = self._call("POST", "/intercept", body)
        if status != 200:
            raise TransportError(f"POST /intercept answered HTTP {status}")
        try:
            return json.loads(data)
        except ValueError:
            return None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
