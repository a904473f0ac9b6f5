"""The contract's server process: the control listener, then the AHP listener
(HTTP) or the NDJSON loop (stdio), the readiness file, and shutdown.

The suite supplies the ``Backend`` (its method table); everything else here is
the same for every suite. ``ServerProcess`` also runs inside a test process.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, BinaryIO

from ..sdk.auth import Authenticator, ServerPolicy
from ..sdk.http import READ_TIMEOUT, Listener, RpcHandler
from ..sdk.rpc import Answer
from ..sdk.stdio import LineWriter, serve_lines
from .backend import Backend
from .config import ServerSettings, server_ssl_context
from .control import ControlApp, ControlHandler
from .readiness import write_readiness

DRAIN_SECONDS = 2.0  # at shutdown, for replies released from their barriers


class AhpApp:
    """What ``RpcHandler`` calls: the authenticator, then the backend."""

    def __init__(self, authenticator: Authenticator, backend: Backend) -> None:
        self.authenticator = authenticator
        self.backend = backend

    def authenticate(self, authorization: list[str]) -> bool:
        return self.authenticator.accepts(authorization)

    def dispatch(self, message: Any) -> Answer:
        return self.backend.dispatch(message)


class ServerProcess:
    def __init__(
        self,
        settings: ServerSettings,
        backend: Backend,
        read_timeout: float = READ_TIMEOUT,
        poll_interval: float = 0.5,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.read_timeout = read_timeout
        self.poll_interval = poll_interval  # how soon close() is noticed
        self.stop = threading.Event()
        self.control: Listener | None = None
        self.listener: Listener | None = None
        self.endpoint: str | None = None

    def start(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Listen (control first); over stdio, answer ``stdin`` lines on ``stdout``
        until EOF, which stops the server."""
        context = server_ssl_context(self.settings)  # a bad certificate fails before listening
        self.control = Listener(
            ControlHandler, app=ControlApp(self.backend, self.stop), read_timeout=self.read_timeout
        )
        self.control.serve_in_thread(self.poll_interval)
        if self.settings.transport == "http":
            auth = self.settings.auth
            policy = auth.policy if auth is not None else ServerPolicy(mode="none")
            app = AhpApp(Authenticator(policy), self.backend)
            self.listener = Listener(RpcHandler, context, app=app, read_timeout=self.read_timeout)
            self.listener.serve_in_thread(self.poll_interval)
            self.endpoint = self.listener.base_url() + "/intercept"
            return
        assert stdin is not None and stdout is not None
        threading.Thread(target=self._stdio, args=(stdin, stdout), daemon=True).start()

    def _stdio(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        try:
            serve_lines(stdin, LineWriter(stdout), self.backend.dispatch)
        finally:
            self.stop.set()

    @property
    def control_endpoint(self) -> str:
        assert self.control is not None
        return self.control.base_url()

    def finish(self) -> None:
        """Open every barrier and give the released replies a moment to go out."""
        self.backend.barriers.release_all()
        self.backend.drain(DRAIN_SECONDS)

    def close(self) -> None:
        """Stop listening (tests; the real process simply exits)."""
        self.finish()
        for listener in (self.listener, self.control):
            if listener is not None:
                listener.shutdown()
                listener.server_close()


def run(settings: ServerSettings, backend: Backend) -> int:
    """Serve until ``POST /shutdown`` (or EOF on stdin over stdio), then exit 0."""
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but AHP lines may reach the real stdout
    server = ServerProcess(settings, backend)
    server.start(sys.stdin.buffer, stdout)
    write_readiness(settings.readiness_file, server.endpoint, server.control_endpoint)
    server.stop.wait()
    server.finish()
    sys.stderr.flush()
    os._exit(0)
