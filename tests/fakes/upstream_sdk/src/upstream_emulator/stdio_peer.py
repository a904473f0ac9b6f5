"""The lifecycle client's stdio transport: it spawns the server and speaks NDJSON to it.

The server runs `serverCommand + ["--config", serverConfig]` in `serverCwd`, in
its own process group; `{"pid"}` goes to `childPidFile`. The client waits for
the readiness file the server config names and takes its `controlEndpoint`. A
reader thread hands each line to the oldest request waiting for its id and
drops the others (observer answers, strays). At the end stdin is closed, the
server gets 3 s to exit, and its whole process group is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from upstream_emulator.peer import Control, PeerError, Pending, parsed

READY_SECONDS = 30.0
EXIT_GRACE = 3.0


class StdioPeer:
    def __init__(self, config: dict[str, Any]) -> None:
        command = config.get("serverCommand")
        if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
            raise PeerError("serverCommand must be an array of strings")
        server_config = str(config.get("serverConfig"))
        self._process = subprocess.Popen(
            [*command, "--config", server_config],
            cwd=str(config.get("serverCwd")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self._waiting: dict[Any, deque[Pending]] = {}
        self._lock = threading.Lock()
        if isinstance(config.get("childPidFile"), str):
            Path(config["childPidFile"]).write_text(json.dumps({"pid": self._process.pid}))
        assert self._process.stdout is not None
        threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True).start()
        try:
            self.control = Control(self._ready(server_config)["controlEndpoint"])
        except (OSError, ValueError, KeyError, PeerError):
            self.close()  # reaped on this way out too
            raise

    def _ready(self, server_config: str) -> dict[str, Any]:
        readiness = Path(str(json.loads(Path(server_config).read_text())["readinessFile"]))
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if readiness.exists():
                found = parsed(readiness.read_bytes())
                if isinstance(found, dict) and isinstance(found.get("controlEndpoint"), str):
                    return found
            if self._process.poll() is not None:
                raise PeerError(f"the server exited ({self._process.returncode}) before ready")
            time.sleep(0.02)
        raise PeerError("the server was not ready in time")

    def _read(self, source: IO[bytes]) -> None:
        for line in iter(source.readline, b""):
            message = parsed(line)
            ident = message.get("id") if isinstance(message, dict) else None
            with self._lock:
                queue = self._waiting.get(ident) if isinstance(ident, str | int) else None
                pending = queue.popleft() if queue else None
            if pending is None:
                print(f"upstream-emulator client: dropped a line: {line[:120]!r}", file=sys.stderr)
            else:
                pending.settle(message)
        with self._lock:
            left = [p for queue in self._waiting.values() for p in queue]
            self._waiting.clear()
        for pending in left:
            pending.settle(error="the server's stdout ended")

    def _write(self, message: Any) -> None:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(text.encode("utf-8"))
            stdin.flush()
        except OSError as exc:
            raise PeerError(f"the server's stdin: {exc}") from None

    def send(self, message: Any) -> Pending:
        pending = Pending()
        ident = message.get("id") if isinstance(message, dict) else None
        with self._lock:
            self._waiting.setdefault(ident, deque()).append(pending)
        self._write(message)
        return pending

    def discover(self, message: Any) -> Any:
        return self.send(message).result()

    def notify(self, message: Any) -> int | None:
        self._write(message)
        return None  # stdio notifications are never answered

    def close(self) -> None:
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=EXIT_GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
