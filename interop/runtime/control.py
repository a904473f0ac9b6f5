"""Talking to an adapter server's control listener (plain HTTP on loopback)."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import urlsplit

from interop.jsonvalue import JsonError, loads


class ControlError(RuntimeError):
    """The control listener did not answer as the contract says."""


def call(endpoint: str, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
    parts = urlsplit(endpoint)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ControlError(f"control endpoint must be plain HTTP on loopback, got {endpoint!r}")
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.connect()
        if connection.sock is not None:
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        payload = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        base = parts.path.rstrip("/")
        connection.request(method, base + path, body=payload, headers=headers)
        response = connection.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        raise ControlError(f"{method} {path}: {exc}") from None
    finally:
        connection.close()
    if response.status != 200:
        raise ControlError(f"{method} {path}: HTTP {response.status}")
    try:
        return loads(data, origin=f"{method} {path}")
    except JsonError as exc:
        raise ControlError(str(exc)) from None
