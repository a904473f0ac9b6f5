"""The stdio transport of the client: it spawns the server and speaks NDJSON to it.

The server runs in its own process group, from `serverCwd`, with
`serverCommand + ["--config", serverConfig]`. Discovery first
(`hooks/capabilities`), then one request line and one response line per
scenario. At the end stdin is closed, the server gets 3 s to exit, and its
whole process group is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
from typing import IO, Any

from upstream_emulator.http_client import TransportError

TIMEOUT = 20.0
EXIT_GRACE = 3.0
DISCOVERY = {
    "jsonrpc": "2.0",
    "id": "capabilities",
    "method": "hooks/capabilities",
    "params": {"protocolVersion": "draft"},
}


def _pump(source: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    for line in iter(source.readline, b""):
        lines.put(line)
    lines.put(None)


class StdioTransport:
    def __init__(self, command: list[str], cwd: str, config_path: str) -> None:
        self._process = subprocess.Popen(
            [*command, "--config", config_path],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        assert self._process.stdout is not None
        threading.Thread(
            target=_pump, args=(self._process.stdout, self._lines), daemon=True
        ).start()
        self._ended = False

    def _send(self, message: Any) -> Any:
        if self._ended:
            raise TransportError("the server's stdout has ended")
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(text.encode("utf-8"))
            stdin.flush()
            line = self._lines.get(timeout=TIMEOUT)
        except (OSError, queue.Empty) as exc:
            raise TransportError(f"no response line: {exc!r}") from None
        if line is None:
            self._ended = True
            raise TransportError("the server's stdout ended")
        try:
            return json.loads(line)
        except ValueError:
            return None

    def discover(self) -> str | None:
        """None when the manifest has a tool.before intercept entry, else why not."""
        try:
            answer = self._send(DISCOVERY)
        except TransportError as exc:
            return str(exc)
        result = answer.get("result") if isinstance(answer, dict) else None
        manifest = result.get("manifest") if isinstance(result, dict) else None
        events = manifest.get("events") if isinstance(manifest, dict) else None
        if not isinstance(events, list):
            return "hooks/capabilities answered no manifest events"
        for entry in events:
            if (
                isinstance(entry, dict)
                and entry.get("event") == "tool.before"
                and "intercept" in (entry.get("modes") or [])
            ):
                return None
        return "the manifest has no tool.before intercept entry"

    def exchange(self, request: Any) -> Any:
        return self._send(request)

    def close(self) -> None:
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=EXIT_GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
