"""The client side of the contract: the peer a client config names.

HTTP: one keep-alive connection to ``endpoint`` (``/intercept`` appended when
missing), credentials per ``auth``; stdio: ``serverCommand + ["--config",
serverConfig]`` spawned in ``serverCwd``. A peer that cannot be had (strict
profile over plain HTTP, no token) fails every exchange alike, so each row is
reported ``failed``.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..sdk.auth import AuthError, client_token
from ..sdk.http import TransportError
from .config import ClientSettings, client_ssl_context


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
