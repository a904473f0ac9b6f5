"""The client side of the contract: the peer a client config names.

HTTP: one keep-alive connection to ``endpoint`` (``/intercept`` appended when
missing), credentials per ``auth``; stdio: ``serverCommand + ["--config",
serverConfig]`` spawned in ``serverCwd``. A peer that cannot be had (strict
profile over plain HTTP, no token) fails every exchange alike, so each row is
reported ``failed``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from ..sdk.auth import AuthError, client_token
from ..sdk.channel import IDLE_REUSE_SECONDS, BrokenChannel, Channel, StdioChannel
from ..sdk.http import TransportError
from .config import BackendSettings, ClientSettings, SuiteClientSettings, client_ssl_context


class Peer(Protocol):
    def exchange(self, message: Any) -> Any:
        """The parsed response; raises ``TransportError`` (no response: the row
        failed) or ``MalformedResponse`` (not strict JSON: a rejection)."""
        ...

    def close(self) -> None: ...


class BrokenPeer:
    """Stands in when no connection can be made: every exchange fails alike."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def exchange(self, message: Any) -> Any:
        raise TransportError(self.reason)

    def close(self) -> None:
        pass


def make_peer(settings: ClientSettings) -> Peer:
    if settings.transport == "stdio":
        from ..sdk.stdio import StdioPeer

        assert settings.server_config is not None
        return StdioPeer(
            [*settings.server_command, "--config", settings.server_config],
            settings.server_cwd,
            settings.timeout,
        )
    from ..sdk.http import HttpPeer, intercept_url

    assert settings.endpoint is not None
    auth = settings.auth
    scheme = intercept_url(settings.endpoint)[0]
    if auth.profile == "strict" and auth.mode != "none" and scheme != "https":
        return BrokenPeer(f"profile strict refuses auth mode {auth.mode} over plain HTTP")
    context = client_ssl_context(settings) if scheme == "https" else None
    try:
        token = client_token(auth.credentials, settings.timeout)
    except AuthError as exc:
        return BrokenPeer(f"authentication failed: {exc}")
    return HttpPeer(settings.endpoint, settings.timeout, token=token, ssl_context=context)


# Lifecycle-style clients (docs/LIFECYCLE.md) -----------------------------------

CONTROL_TIMEOUT = 40.0  # the server gives up a wait after 30 s
READY_SECONDS = 30.0  # how long a spawned stdio server may take to write its readiness


class ControlError(Exception):
    """The control listener could not be reached or refused a call."""


class ControlClient:
    """JSON calls to a server's control listener (one keep-alive connection)."""

    def __init__(self, endpoint: str, timeout: float = CONTROL_TIMEOUT) -> None:
        import http.client
        import threading
        from urllib.parse import urlsplit

        url = urlsplit(endpoint)
        if url.scheme != "http" or not url.hostname:
            raise ControlError(f"control endpoint is not a plain http URL: {endpoint!r}")
        self.base = (url.path or "").rstrip("/")
        self._lock = threading.Lock()
        self._connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout)
        self._used = 0.0  # when the connection last answered (monotonic)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The JSON answer of a 200; ControlError otherwise."""
        import http.client

        from ..sdk import codec

        payload = None if body is None else codec.dump_bytes(body)
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        with self._lock:
            if time.monotonic() - self._used > IDLE_REUSE_SECONDS:
                self._connection.close()  # reconnects: the server may have dropped it
            try:
                self._connection.request(method, self.base + path, payload, headers)
                response = self._connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as exc:
                self._connection.close()
                raise ControlError(f"{method} {path} failed: {type(exc).__name__}: {exc}") from None
            if response.will_close:
                self._connection.close()
            self._used = time.monotonic()
        if response.status != 200:
            detail = data.decode("utf-8", "replace")[:200]
            raise ControlError(f"{method} {path} answered HTTP {response.status} {detail}".strip())
        try:
            return codec.loads(data)
        except codec.JsonDecodeError as exc:
            raise ControlError(f"{method} {path} answer is not strict JSON: {exc}") from None

    def post(self, path: str, body: Any) -> Any:
        return self.call("POST", path, body)

    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def close(self) -> None:
        with self._lock:
            self._connection.close()


BackendOpener = Callable[[BackendSettings], Channel]


class SuitePeer:
    """What a lifecycle-style client talks to: the AHP channel, the control
    listener, the upload endpoint, and the backends the config names besides
    the run's server (``backend``); a spawned stdio server is reaped by
    ``close``, and so is every backend channel opened."""

    def __init__(
        self,
        channel: Channel,
        control: ControlClient | None,
        upload_endpoint: str | None,
        problem: str | None = None,
        backends: dict[str, BackendSettings] | None = None,
        opener: BackendOpener | None = None,
    ) -> None:
        self.channel = channel
        self.control = control
        self.upload_endpoint = upload_endpoint
        self.problem = problem  # why nothing can run (every row fails with it)
        self.backends = dict(backends or {})
        self.opener = opener
        self._opened: dict[str, Channel] = {}

    def backend(self, name: str) -> Channel:
        """The channel to the backend ``name`` of the config's ``backends``. One
        that cannot be had fails every call (a stdio backend that could not be
        started is tried again at the next call)."""
        if name in self._opened:
            return self._opened[name]
        settings = self.backends.get(name)
        if settings is None or self.opener is None:
            return BrokenChannel(f"the config names no backend {name!r} (backends.{name})")
        channel = self.opener(settings)
        if not isinstance(channel, BrokenChannel) or isinstance(settings.endpoint, str):
            self._opened[name] = channel
        return channel

    def close(self) -> None:
        if self.control is not None:
            self.control.close()
        for channel in self._opened.values():
            channel.close()
        self.channel.close()


def _http_backend(
    auth_mode: str, profile: str, token: str | None, context: Any, timeout: float
) -> BackendOpener:
    """Backends over HTTP: the run's credentials and trust, the backend's endpoint."""

    def opener(settings: BackendSettings) -> Channel:
        from ..sdk.channel import HttpChannel
        from ..sdk.http import intercept_url

        if settings.endpoint is None:
            return BrokenChannel("the backend has no endpoint (an HTTP run needs one)")
        try:
            scheme = intercept_url(settings.endpoint)[0]
        except TransportError as exc:
            return BrokenChannel(str(exc))
        if profile == "strict" and auth_mode != "none" and scheme != "https":
            return BrokenChannel(f"profile strict refuses auth mode {auth_mode} over plain HTTP")
        return HttpChannel(
            settings.endpoint,
            timeout,
            token=token,
            ssl_context=context if scheme == "https" else None,
        )

    return opener


def _stdio_backend(cwd: str | None) -> BackendOpener:
    """Backends over stdio: the backend's command spawned (in ``serverCwd``)."""

    def opener(settings: BackendSettings) -> Channel:
        if not settings.command:
            return BrokenChannel("the backend has no command (a stdio run needs one)")
        try:
            return StdioChannel(list(settings.command), cwd)
        except TransportError as exc:
            return BrokenChannel(f"backend: {exc}")

    return opener


def open_suite_peer(settings: SuiteClientSettings) -> SuitePeer:
    """Over stdio the server is spawned here, its pid written to ``childPidFile``
    and its readiness awaited (the child is reaped if that fails); the caller
    must ``close`` the peer on every path."""
    from ..sdk.channel import HttpChannel

    upload = settings.upload.endpoint if settings.upload is not None else None
    if settings.transport == "stdio":
        return _spawn_stdio(settings, upload)
    from ..sdk.http import intercept_url

    auth = settings.auth
    assert auth is not None and settings.endpoint is not None
    assert settings.control_endpoint is not None
    try:
        control = ControlClient(settings.control_endpoint)
    except ControlError as exc:
        return SuitePeer(BrokenChannel(str(exc)), None, upload, str(exc))
    scheme = intercept_url(settings.endpoint)[0]
    if auth.profile == "strict" and auth.mode != "none" and scheme != "https":
        reason = f"profile strict refuses auth mode {auth.mode} over plain HTTP"
        return SuitePeer(BrokenChannel(reason), control, upload)
    context = client_ssl_context(settings.client_settings()) if scheme == "https" else None
    try:
        token = client_token(auth.credentials, settings.timeout)
    except AuthError as exc:
        return SuitePeer(BrokenChannel(f"authentication failed: {exc}"), control, upload)
    channel = HttpChannel(settings.endpoint, settings.timeout, token=token, ssl_context=context)
    opener = _http_backend(auth.mode, auth.profile, token, context, settings.timeout)
    return SuitePeer(channel, control, upload, backends=settings.backends, opener=opener)


def _spawn_stdio(settings: SuiteClientSettings, upload: str | None) -> SuitePeer:
    from .config import read_json

    assert settings.server_config is not None and settings.child_pid_file is not None
    try:
        server_config = read_json(settings.server_config)
        ready_file = server_config.get("readinessFile") if isinstance(server_config, dict) else None
        if not isinstance(ready_file, str) or not ready_file.startswith("/"):
            raise ValueError("the server config has no absolute readinessFile")
    except ValueError as exc:
        return SuitePeer(BrokenChannel(f"serverConfig: {exc}"), None, upload, str(exc))
    argv = [*settings.server_command, "--config", settings.server_config]
    try:
        channel = StdioChannel(argv, settings.server_cwd)
    except TransportError as exc:
        return SuitePeer(BrokenChannel(str(exc)), None, upload, str(exc))
    try:
        peer = _await_stdio(channel, settings.child_pid_file, ready_file, upload)
    except BaseException:
        channel.close()  # reaped on this path too
        raise
    peer.backends = dict(settings.backends)
    peer.opener = _stdio_backend(settings.server_cwd)
    return peer


def _await_stdio(
    channel: StdioChannel, child_pid_file: str, ready_file: str, upload: str | None
) -> SuitePeer:
    import time
    from pathlib import Path

    from .config import read_json
    from .readiness import write_json_atomic

    write_json_atomic(child_pid_file, {"pid": channel.pid})
    deadline = time.monotonic() + READY_SECONDS
    ready: Any = None
    while time.monotonic() < deadline:
        if Path(ready_file).exists():
            try:
                ready = read_json(ready_file)
            except ValueError:
                ready = None  # not yet complete
            if isinstance(ready, dict) and isinstance(ready.get("controlEndpoint"), str):
                break
        if channel.process.poll() is not None:
            break
        time.sleep(0.02)
    if not isinstance(ready, dict) or not isinstance(ready.get("controlEndpoint"), str):
        reason = "the stdio server wrote no readiness file in time (or exited)"
        return SuitePeer(channel, None, upload, reason)
    if upload is None and isinstance(ready.get("uploadEndpoint"), str):
        upload = ready["uploadEndpoint"]
    try:
        control = ControlClient(ready["controlEndpoint"])
    except ControlError as exc:
        return SuitePeer(channel, None, upload, str(exc))
    return SuitePeer(channel, control, upload)
