"""The contract's server process: the control listener, then the AHP listener
(HTTP) or the NDJSON loop (stdio), an upload listener when the suite receives
content, the readiness file, and shutdown.

The suite supplies what answers AHP messages (``Served``: a ``Backend``, or a
suite's own) and, when it is not the core contract's, its control app and
upload receiver; everything else here is the same for every suite.
``ServerProcess`` also runs inside a test process.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol, cast

from ..sdk import codec
from ..sdk.auth import Authenticator, ServerPolicy
from ..sdk.listener import READ_TIMEOUT, Handler, Listener, RpcHandler, upload_listener
from ..sdk.manifest import get_capabilities
from ..sdk.rpc import Answer
from ..sdk.stdio import LineWriter, serve_lines
from ..sdk.upload import UploadReceiver
from .backend import Backend
from .config import ServerSettings, server_ssl_context
from .control import App, ControlApp, EntryControl, Reply
from .readiness import write_readiness

DRAIN_SECONDS = 2.0  # at shutdown, for replies released from their barriers


class ControlHandler(Handler):
    """The control listener: each request parsed, its app asked for the answer
    (``contract/control.py``)."""

    @property
    def app(self) -> App:
        return cast(App, self.listener.app)

    def do_GET(self) -> None:
        self._answer(self.app.get(self.path.split("?", 1)[0]))

    def do_POST(self) -> None:
        body = self.read_body()
        if body is None:
            return
        try:
            payload = codec.loads(body) if body.strip() else {}
        except codec.JsonDecodeError as exc:
            self.reply_json({"error": f"body is not strict JSON: {exc}"}, 400)
            return
        payload = payload if isinstance(payload, dict) else {}
        self._answer(self.app.post(self.path.split("?", 1)[0], payload))

    def _answer(self, reply: Reply | None) -> None:
        if reply is None:
            self.reply(404)
            return
        if reply.close:
            self.close_connection = True
        self.reply_json(reply.body, reply.status)
        if reply.after is not None:
            reply.after()


class Served(Protocol):
    """What answers the AHP messages of one server."""

    def dispatch(self, message: Any) -> Answer: ...

    def manifest(self) -> dict[str, Any]:
        """The discovery manifest whose ``tool.before`` capabilities ``GET
        /capabilities`` answers (the one ``hooks/capabilities`` is answered with)."""
        ...

    def release_all(self) -> None: ...

    def drain(self, timeout: float) -> None: ...


class AhpApp:
    """What ``RpcHandler`` calls: the authenticator, then the backend."""

    def __init__(self, authenticator: Authenticator, backend: Served) -> None:
        self.authenticator = authenticator
        self.backend = backend

    def authenticate(self, authorization: list[str]) -> bool:
        return self.authenticator.accepts(authorization)

    def dispatch(self, message: Any) -> Answer:
        return self.backend.dispatch(message)

    def capabilities(self) -> dict[str, Any]:
        """``GET /capabilities``: the bare capabilities of the backend's manifest
        (its ``tool.before`` intercept entry), never dispatched nor recorded."""
        return get_capabilities(self.backend.manifest())


class ServerProcess:
    def __init__(
        self,
        settings: ServerSettings,
        backend: Served,
        read_timeout: float = READ_TIMEOUT,
        poll_interval: float = 0.5,
        control: Callable[[threading.Event], App] | None = None,
        uploads: UploadReceiver | None = None,
    ) -> None:
        """``control`` makes the control app from the stop event (default: the
        core contract's over ``backend``, which must then be a ``Backend``);
        ``uploads`` adds a plain-HTTP loopback upload listener."""
        self.settings = settings
        self.backend = backend
        self.read_timeout = read_timeout
        self.poll_interval = poll_interval  # how soon close() is noticed
        self.stop = threading.Event()
        self.control_factory = control
        self.uploads = uploads
        self.control: Listener | None = None
        self.listener: Listener | None = None
        self.upload: Listener | None = None
        self.endpoint: str | None = None
        self.control_app: App | None = None

    def _control_app(self) -> App:
        if self.control_factory is not None:
            return self.control_factory(self.stop)
        assert isinstance(self.backend, Backend)
        return ControlApp(self.backend, self.stop)

    def start(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Listen (control first); over stdio, answer ``stdin`` lines on ``stdout``
        until EOF, which stops the server."""
        context = server_ssl_context(self.settings)  # a bad certificate fails before listening
        self.control_app = self._control_app()
        self.control = Listener(
            ControlHandler, app=self.control_app, read_timeout=self.read_timeout
        )
        self.control.serve_in_thread(self.poll_interval)
        if self.uploads is not None:
            self.upload = upload_listener(self.uploads, self.read_timeout)
            self.upload.serve_in_thread(self.poll_interval)
        if self.settings.transport == "http":
            auth = self.settings.auth
            policy = auth.policy if auth is not None else ServerPolicy(mode="none")
            app = AhpApp(Authenticator(policy), self.backend)
            self.listener = Listener(RpcHandler, context, app=app, read_timeout=self.read_timeout)
            self.listener.serve_in_thread(self.poll_interval)
            self.endpoint = self.listener.base_url() + "/intercept"
            return
        assert stdin is not None and stdout is not None
        writer = LineWriter(stdout)
        if isinstance(self.control_app, EntryControl):
            self.control_app.emit = writer.write
        threading.Thread(target=self._stdio, args=(stdin, writer), daemon=True).start()

    def _stdio(self, stdin: BinaryIO, writer: LineWriter) -> None:
        try:
            serve_lines(stdin, writer, self.backend.dispatch)
        finally:
            self.stop.set()

    @property
    def control_endpoint(self) -> str:
        assert self.control is not None
        return self.control.base_url()

    @property
    def upload_endpoint(self) -> str | None:
        if self.upload is None or self.uploads is None:
            return None
        return self.upload.base_url() + self.uploads.path

    def finish(self) -> None:
        """Open every barrier and give the released replies a moment to go out."""
        self.backend.release_all()
        self.backend.drain(DRAIN_SECONDS)

    def close(self) -> None:
        """Stop listening (tests; the real process simply exits)."""
        self.finish()
        for listener in (self.listener, self.upload, self.control):
            if listener is not None:
                listener.shutdown()
                listener.server_close()


def run(
    settings: ServerSettings,
    backend: Served,
    control: Callable[[threading.Event], App] | None = None,
    uploads: UploadReceiver | None = None,
) -> int:
    """Serve until ``POST /shutdown`` (or EOF on stdin over stdio), then exit 0."""
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but AHP lines may reach the real stdout
    server = ServerProcess(settings, backend, control=control, uploads=uploads)
    server.start(sys.stdin.buffer, stdout)
    write_readiness(
        settings.readiness_file, server.endpoint, server.control_endpoint, server.upload_endpoint
    )
    server.stop.wait()
    server.finish()
    sys.stderr.flush()
    os._exit(0)
