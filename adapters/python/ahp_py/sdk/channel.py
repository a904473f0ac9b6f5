"""Client channels with several requests in flight (HTTP and stdio).

``call`` sends a request through the SDK's pending-request bookkeeping and
returns a ``Call`` whose reply arrives later (a call waited for past its
deadline is abandoned: its connection severed, its pending id forgotten);
``replay`` sends the same bytes again outside that bookkeeping (a deliberate
duplicate on the wire); ``notify`` sends a notification and never waits for
whatever comes back (over HTTP to the endpoint's ``/observe``, the path
upstream servers route it by; the answer, if one ever comes, is read and
dropped by a thread of its own).

HTTP: every request in flight has a connection of its own (idle keep-alive
connections are reused), so a reply the server holds blocks nothing else; a
status other than 200, a timeout or a connection failure is a transport
failure, never a rejection; ``close`` severs every exchange still waiting.
stdio: one spawned server in its own session; a reader thread takes each line
and hands it to the pending request with its ``id``, else to a replay of that
``id``, else to ``unsolicited`` (a frame no request is waiting for is dropped
there, never taken as another request's reply); a line that is not JSON fails
the one pending call when there is exactly one, else it is dropped.
"""

from __future__ import annotations

import collections
import http.client
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

from . import codec, rpc
from .http import MalformedResponse, TransportError, _describe, intercept_url
from .stdio import CLOSE_GRACE_SECONDS, MAX_LINE, _close_pipes, _kill_group

# An idle keep-alive connection is reused only this soon: a server may close it
# (ours after 10 s), and a request on a connection the server dropped could not
# be told apart from one it received, so it is never retried.
IDLE_REUSE_SECONDS = 2.0


def log(text: str) -> None:
    print(f"ahp_py client: {text}", file=sys.stderr, flush=True)


class DeadlinePassed(TransportError):
    """No reply within the call's deadline (the call was abandoned)."""


class Call:
    """One request in flight; ``result`` waits for its reply. The first outcome
    wins (a reply, a failure, or abandonment at the deadline); a channel may
    register what abandoning undoes (``on_abandon``: close the connection,
    forget the pending id)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._value: Any = None
        self._error: Exception | None = None
        self._undo: Callable[[], None] | None = None
        self._abandoned = False

    def _settle(self, value: Any, error: Exception | None) -> bool:
        with self._lock:
            if self._done.is_set():
                return False
            self._value, self._error = value, error
            self._done.set()
            return True

    def resolve(self, value: Any) -> None:
        self._settle(value, None)

    def fail(self, error: Exception) -> None:
        self._settle(None, error)

    def done(self) -> bool:
        return self._done.is_set()

    def on_abandon(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` when the call is abandoned (at once if it already was)."""
        with self._lock:
            abandoned = self._abandoned
            if not abandoned:
                self._undo = undo
        if abandoned:
            undo()

    def abandon(self, reason: str = "abandoned") -> None:
        """Stop waiting: the call fails (unless it already ended) and the channel
        lets go of it, so a late reply is dropped and nothing is left pending."""
        self._settle(None, DeadlinePassed(reason))
        with self._lock:
            self._abandoned = True
            undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def result(self, timeout: float) -> Any:
        """The parsed reply; raises TransportError (none came back in time: the
        call is then abandoned) or MalformedResponse (not strict JSON)."""
        if not self._done.wait(timeout):
            self.abandon(f"no reply within {timeout:g} s")
        if self._error is not None:
            raise self._error
        return self._value


class Channel(Protocol):
    def call(self, message: Any, timeout: float | None = None) -> Call:
        """``timeout``: the call's deadline in seconds when it has its own (HTTP:
        how long its exchange may take; the caller waits with ``result``)."""
        ...

    def replay(self, message: Any, timeout: float | None = None) -> Call: ...

    def notify(self, message: Any) -> None: ...

    def close(self) -> None: ...


class BrokenChannel:
    """Stands in when no connection can be had: everything fails alike."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def call(self, message: Any, timeout: float | None = None) -> Call:
        call = Call()
        call.fail(TransportError(self.reason))
        return call

    replay = call

    def notify(self, message: Any) -> None:
        raise TransportError(self.reason)

    def close(self) -> None:
        pass


def _parse(data: bytes, what: str) -> Any:
    try:
        return codec.loads(data)
    except codec.JsonDecodeError as exc:
        raise MalformedResponse(f"{what} is not strict JSON: {exc}") from None


class HttpChannel:
    """POSTs to one AHP endpoint; each request in flight on its own connection."""

    def __init__(
        self,
        endpoint: str,
        timeout: float,
        token: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.scheme, self.host, self.port, self.path = intercept_url(endpoint)
        # notifications go to the base URL's /observe and capability discovery to its
        # /capabilities (upstream servers route by path; ours accept any path)
        base, _, query = self.path.partition("?")
        suffix = "?" + query if query else ""
        self.observe_path = base.removesuffix("/intercept") + "/observe" + suffix
        self.capabilities_path = base.removesuffix("/intercept") + "/capabilities" + suffix
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self._lock = threading.Lock()
        self._idle: list[tuple[float, http.client.HTTPConnection]] = []
        self._busy: set[http.client.HTTPConnection] = set()  # exchanges in flight
        self._closed = False

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        """An idle connection reused (with ``timeout`` for its reads) or a new one;
        counted busy until ``_done`` returns or closes it."""
        stale: list[http.client.HTTPConnection] = []
        fresh: http.client.HTTPConnection | None = None
        with self._lock:
            now = time.monotonic()
            while self._idle and fresh is None:
                since, connection = self._idle.pop()
                if now - since < IDLE_REUSE_SECONDS:
                    fresh = connection
                else:
                    stale.append(connection)
        for connection in stale:
            connection.close()
        if fresh is not None:
            fresh.timeout = timeout
            if fresh.sock is not None:
                fresh.sock.settimeout(timeout)
        elif self.scheme == "https":
            if self.ssl_context is None:
                from .tls import TlsFiles, client_context

                self.ssl_context = client_context(TlsFiles())
            fresh = http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=self.ssl_context
            )
        else:
            fresh = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        with self._lock:
            self._busy.add(fresh)
        return fresh

    def _done(self, connection: http.client.HTTPConnection, reusable: bool) -> None:
        with self._lock:
            self._busy.discard(connection)
            keep = reusable and not self._closed
            if keep:
                self._idle.append((time.monotonic(), connection))
        if not keep:
            connection.close()

    def _send(self, message: Any, path: str, timeout: float) -> http.client.HTTPConnection:
        """Connect and write one POST (TransportError when that fails); the
        connection is busy until ``_answer`` reads its response."""
        body = codec.dump_bytes(message)
        connection = self._connection(timeout)
        try:
            connection.request("POST", path, body, self.headers)
        except (OSError, http.client.HTTPException) as exc:
            self._done(connection, reusable=False)
            raise TransportError(f"HTTP exchange failed: {_describe(exc)}") from None
        return connection

    def _answer(self, connection: http.client.HTTPConnection) -> tuple[int, bytes]:
        try:
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._done(connection, reusable=False)
            raise TransportError(f"HTTP exchange failed: {_describe(exc)}") from None
        self._done(connection, reusable=not response.will_close)
        return response.status, data

    def post(self, message: Any, timeout: float) -> tuple[int, bytes]:
        """One POST of ``message`` to the endpoint, bypassing every check: the
        status and the body, whatever the status (TransportError: no answer)."""
        return self._answer(self._send(message, self.path, timeout))

    def _exchange(self, message: Any, call: Call, timeout: float) -> None:
        try:
            discovery = isinstance(message, dict) and message.get("method") == rpc.CAPABILITIES
            path = self.capabilities_path if discovery else self.path
            connection = self._send(message, path, timeout)
            call.on_abandon(lambda: _sever(connection))
            status, data = self._answer(connection)
            if status != 200:
                raise TransportError(f"HTTP status {status}")
            call.resolve(_parse(data, "response body"))
        except (TransportError, MalformedResponse) as exc:
            call.fail(exc)

    def call(self, message: Any, timeout: float | None = None) -> Call:
        call = Call()
        deadline = timeout or self.timeout
        threading.Thread(target=self._exchange, args=(message, call, deadline), daemon=True).start()
        return call

    replay = call  # over HTTP every POST has its own answer: no bookkeeping to bypass

    def notify(self, message: Any) -> None:
        """POST a notification without waiting for its answer: the request is
        written here (TransportError when that fails), whatever comes back later,
        if anything, is read and dropped by a thread of its own."""
        connection = self._send(message, self.observe_path, self.timeout)
        threading.Thread(target=self._drop_answer, args=(connection,), daemon=True).start()

    def _drop_answer(self, connection: http.client.HTTPConnection) -> None:
        try:
            status, _ = self._answer(connection)
        except TransportError as exc:
            if not self._closed:  # severed at close: expected for a silent observer
                log(f"notification: no answer ({exc}; ignored)")
            return
        if status not in (200, 202, 204):
            log(f"notification answered with HTTP {status} (ignored)")

    def close(self) -> None:
        """Close idle connections and sever those still waiting for an answer (a
        silent observer, a call given up), so no thread or socket outlives us."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            busy = list(self._busy)
        for _, connection in idle:
            connection.close()
        for connection in busy:
            _sever(connection)


def _sever(connection: http.client.HTTPConnection) -> None:
    """Shut a connection's socket down (waking a thread blocked reading it)."""
    sock = connection.sock
    if sock is not None:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


def _key(request_id: Any) -> str | None:
    """A JSON-RPC id as a dictionary key (strings and numbers only)."""
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int, float)):
        return None
    if isinstance(request_id, float) and request_id.is_integer():
        request_id = int(request_id)
    return codec.dumps(request_id)


class StdioChannel:
    """A spawned AHP server speaking NDJSON; replies are routed by ``id``."""

    def __init__(self, argv: list[str], cwd: str | None) -> None:
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            raise TransportError(f"cannot start server: {exc.strerror}") from None
        self.unsolicited: Callable[[Any], None] = self._drop
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[str, Call] = {}
        self._replays: dict[str, collections.deque[Call]] = {}
        self._closed: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    @staticmethod
    def _drop(frame: Any) -> None:
        log(f"dropped a frame no request waits for: {codec.dumps(frame)[:200]}")

    def _write(self, message: Any) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            with self._write_lock:
                stdin.write(codec.dump_bytes(message) + b"\n")
        except OSError:
            raise TransportError("server process is not reading its stdin") from None

    def _register(self, message: Any, replay: bool) -> Call:
        call = Call()
        key = _key(message.get("id")) if isinstance(message, dict) else None
        with self._lock:
            if self._closed is not None:
                call.fail(TransportError(self._closed))
                return call
            if key is None:
                call.fail(TransportError("a request needs a string or number id"))
                return call
            if replay:
                self._replays.setdefault(key, collections.deque()).append(call)
            elif key in self._pending:
                call.fail(TransportError(f"a request with id {key} is already pending"))
                return call
            else:
                self._pending[key] = call
        call.on_abandon(lambda: self._forget(key, call))  # a late reply is then stray
        try:
            self._write(message)
        except TransportError as exc:
            self._forget(key, call)
            call.fail(exc)
        return call

    def _forget(self, key: str, call: Call) -> None:
        with self._lock:
            if self._pending.get(key) is call:
                del self._pending[key]
            queue = self._replays.get(key)
            if queue is not None and call in queue:
                queue.remove(call)

    def call(self, message: Any, timeout: float | None = None) -> Call:
        return self._register(message, replay=False)

    def replay(self, message: Any, timeout: float | None = None) -> Call:
        return self._register(message, replay=True)

    def notify(self, message: Any) -> None:
        self._write(message)

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        buffer = bytearray()
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buffer.extend(chunk)
                while b"\n" in buffer:
                    line, _, rest = bytes(buffer).partition(b"\n")
                    buffer[:] = rest
                    if line.strip():
                        self._route(line)
                if len(buffer) > MAX_LINE:
                    buffer.clear()
                    self._route(b"\x00")  # an overlong line: malformed
        except OSError:
            pass
        self._shut("server process closed its stdout (exited)")

    def _route(self, line: bytes) -> None:
        try:
            frame = codec.loads(line)
        except codec.JsonDecodeError as exc:
            with self._lock:
                only = list(self._pending.items()) if len(self._pending) == 1 else []
                if only:
                    del self._pending[only[0][0]]
            if only:
                log(f"a line that is not strict JSON, taken as the one pending call's: {exc}")
                only[0][1].fail(MalformedResponse(f"response line is not strict JSON: {exc}"))
            else:
                log(f"dropped a line that is not strict JSON: {exc}")
            return
        key = _key(frame.get("id")) if isinstance(frame, dict) else None
        call: Call | None = None
        with self._lock:
            if key is not None:
                call = self._pending.pop(key, None)
                queue = self._replays.get(key)
                if call is None and queue:
                    call = queue.popleft()
        if call is not None:
            call.resolve(frame)
        else:
            self.unsolicited(frame)

    def _shut(self, reason: str) -> None:
        with self._lock:
            self._closed = reason
            waiting = list(self._pending.values())
            waiting += [call for queue in self._replays.values() for call in queue]
            self._pending.clear()
            self._replays.clear()
        for call in waiting:
            call.fail(TransportError(reason))

    def close(self) -> None:
        """Close stdin, give the server a moment to exit, then kill its whole group."""
        if self.process.stdin is not None:
            with suppress(OSError):
                self.process.stdin.close()
        with suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=CLOSE_GRACE_SECONDS)
        _kill_group(self.process)
        self._reader.join(timeout=CLOSE_GRACE_SECONDS)
        _close_pipes(self.process)
