"""NDJSON over stdin/stdout: one compact JSON object per line.

The client side (``StdioPeer``) spawns the server in its own session (so its
whole process group can be killed), writes one line, and reads one line under
a deadline. The server side (``serve_lines``) answers each line in order; a
reply held at a gate is written from its own thread when the gate opens, while
the loop goes on reading and answering the next lines.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, BinaryIO

from . import codec, rpc
from .http import MalformedResponse, TransportError

MAX_LINE = 8 * 1024 * 1024

CLOSE_GRACE_SECONDS = 2.0
STARTUP_ALLOWANCE_SECONDS = 30.0  # process start-up is not charged to the first response


class StdioPeer:
    """A spawned AHP server; respawned lazily after it died or timed out."""

    def __init__(self, argv: list[str], cwd: str | None, timeout: float) -> None:
        self.argv = argv
        self.cwd = cwd
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = bytearray()
        self.fresh = False  # True until the newly spawned process has answered once

    def _start(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            try:
                self.process = subprocess.Popen(
                    self.argv,
                    cwd=self.cwd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    bufsize=0,
                    start_new_session=True,
                )
            except OSError as exc:
                raise TransportError(f"cannot start server: {exc.strerror}") from None
            self.buffer.clear()
            self.fresh = True
        return self.process

    def exchange(self, message: Any) -> Any:
        process = self._start()
        assert process.stdin is not None
        try:
            process.stdin.write(codec.dump_bytes(message) + b"\n")
        except OSError:
            self._discard()
            raise TransportError("server process is not reading its stdin") from None
        line = self._read_line(process)
        try:
            return codec.loads(line)
        except codec.JsonDecodeError as exc:
            raise MalformedResponse(f"response line is not strict JSON: {exc}") from None

    def _read_line(self, process: subprocess.Popen[bytes]) -> bytes:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        allowance = STARTUP_ALLOWANCE_SECONDS if self.fresh else 0.0
        deadline = time.monotonic() + self.timeout + allowance
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    self._discard()
                    raise TransportError("timed out waiting for the response line")
                chunk = os.read(fd, 65536)
                if not chunk:
                    self._discard()
                    raise TransportError("server process closed its stdout (exited)")
                self.buffer.extend(chunk)
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer[:] = rest
        self.fresh = False
        return line

    def _discard(self) -> None:
        """Kill a process that can no longer be trusted to answer in step."""
        process, self.process = self.process, None
        if process is not None:
            _kill_group(process)
            _close_pipes(process)

    def close(self) -> None:
        """Close stdin, give the server a moment to exit, then kill its whole group."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            with suppress(OSError):
                process.stdin.close()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=CLOSE_GRACE_SECONDS)
        _kill_group(process)
        _close_pipes(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=CLOSE_GRACE_SECONDS)


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with suppress(OSError):
                pipe.close()


class LineWriter:
    """Whole lines to one stream, one writer at a time; a vanished reader is ignored."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, value: Any) -> None:
        self.write_line(codec.dump_bytes(value))

    def write_line(self, data: bytes) -> None:
        """``data`` as is, then a newline (a deliberately malformed line included)."""
        data += b"\n"
        with self._lock, suppress(OSError, ValueError):
            self._stream.write(data)
            self._stream.flush()


def serve_lines(
    reader: BinaryIO,
    writer: LineWriter,
    dispatch: Callable[[Any], rpc.Answer],
) -> None:
    """Answer the JSON-RPC lines of ``reader`` until EOF.

    A line that is not strict JSON (or longer than ``MAX_LINE``) gets the parse
    error. A reply with a closed gate goes out from a thread of its own once the
    gate opens; every other reply is written at once, in order. An answer
    without a reply (a notification, one never answered) writes nothing.
    """
    while True:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            _skip_line(reader)
            writer.write(rpc.parse_error())
            continue
        if not line.strip():
            continue
        try:
            message = codec.loads(line)
        except codec.JsonDecodeError:
            writer.write(rpc.parse_error())
            continue
        answer = dispatch(message)
        if not answer.has_reply:
            continue
        if answer.gate is None or answer.gate.is_set():
            _write(answer, writer)
            continue
        threading.Thread(target=_held, args=(answer, writer), daemon=True).start()


def _write(answer: rpc.Answer, writer: LineWriter) -> None:
    try:
        answer.writing()
        if answer.raw is not None:
            writer.write_line(answer.raw)
        else:
            writer.write(answer.reply)
    finally:
        answer.written()


def _held(answer: rpc.Answer, writer: LineWriter) -> None:
    assert answer.gate is not None
    answer.gate.wait()
    _write(answer, writer)


def _skip_line(reader: BinaryIO) -> None:
    """Discard the rest of an overlong line."""
    while True:
        chunk = reader.readline(MAX_LINE)
        if not chunk or chunk.endswith(b"\n"):
            return
