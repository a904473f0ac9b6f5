"""The lifecycle client's connections: the AHP transport and the server's control listener.

HTTP: every intercept on a connection of its own (the server holds replies),
to `<base>/intercept`, notifications to `<base>/observe`, discovery to
`<base>/capabilities` (`<base>`: `endpoint` without a trailing `/intercept`).
Stdio: `stdio_peer.py`. Control calls go to `controlEndpoint` (over stdio, the
one in the server's readiness file).
"""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any, Protocol
from urllib.parse import urlsplit

TIMEOUT = 60.0  # one held exchange, or one control call


class PeerError(RuntimeError):
    """A transport or control exchange that did not complete as required."""


class Pending:
    """One reply awaited: settled once, by a thread of the transport."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: str | None = None

    def settle(self, value: Any = None, error: str | None = None) -> None:
        self._value, self._error = value, error
        self._done.set()

    def result(self, timeout: float = TIMEOUT) -> Any:
        if not self._done.wait(timeout):
            raise PeerError(f"no reply within {timeout:.0f} s")
        if self._error is not None:
            raise PeerError(self._error)
        return self._value


def exchange(
    url: str, method: str, body: Any = None, token: str | None = None, timeout: float = TIMEOUT
) -> tuple[int, bytes]:
    """One HTTP exchange on a fresh connection: (status, body)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None:
        raise PeerError(f"only plain http is emulated, got {url!r}")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        headers["Content-Type"] = "application/json"
    path = parts.path or "/"
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        connection.request(method, path + (f"?{parts.query}" if parts.query else ""), data, headers)
        answer = connection.getresponse()
        return answer.status, answer.read()
    except (OSError, http.client.HTTPException) as exc:
        raise PeerError(f"{method} {url}: {exc}") from None
    finally:
        connection.close()


def parsed(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


class Control:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def call(self, path: str, body: Any = None) -> Any:
        """POST `body` (GET when None); PeerError unless the answer is 200."""
        status, data = exchange(self.url + path, "GET" if body is None else "POST", body)
        if status != 200:
            raise PeerError(f"control {path} answered HTTP {status}")
        return parsed(data)


class Peer(Protocol):
    control: Control

    def send(self, message: Any) -> Pending: ...

    def discover(self, message: Any) -> Any: ...

    def notify(self, message: Any) -> int | None:
        """The HTTP status of a notification; None over stdio (never answered)."""

    def close(self) -> None: ...


class HttpPeer:
    def __init__(self, endpoint: str, token: str | None, control: str) -> None:
        base = endpoint.rstrip("/")
        self._base = base.removesuffix("/intercept")
        self._token = token
        self.control = Control(control)

    def send(self, message: Any) -> Pending:
        pending = Pending()

        def post() -> None:
            try:
                status, data = exchange(self._base + "/intercept", "POST", message, self._token)
            except PeerError as exc:
                pending.settle(error=str(exc))
                return
            if status != 200:
                pending.settle(error=f"POST /intercept answered HTTP {status}")
            else:
                pending.settle(parsed(data))

        threading.Thread(target=post, daemon=True).start()
        return pending

    def discover(self, message: Any) -> Any:
        status, data = exchange(self._base + "/capabilities", "POST", message, self._token)
        if status != 200:
            raise PeerError(f"POST /capabilities answered HTTP {status}")
        return parsed(data)

    def notify(self, message: Any) -> int | None:
        """The HTTP status of the notification (the answer's body is dropped)."""
        return exchange(self._base + "/observe", "POST", message, self._token)[0]

    def close(self) -> None:
        return None
