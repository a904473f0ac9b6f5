"""A transparent stdio relay for servers without the `receiptLog` extension.

`python -m interop.relay --log FILE [--replies FILE [--snapshot FILE]] -- COMMAND...` runs COMMAND,
copies its own stdin to COMMAND's stdin line by line and COMMAND's stdout back
unchanged, and appends every JSON-RPC message it forwards to FILE (the
receipt-log format) before forwarding it. The harness puts it in front of a
contract v1 server over stdio so receipts exist even after the client has killed
the server. It records what was delivered to the server's stdin, which is what
that server received unless it died first. With `--replies`, each line the
server writes back is recorded too, as `{"request": ID, "reply": VALUE}` (ID:
the id of the last request forwarded before it; VALUE: the parsed line, or
`{"unparsed": TEXT}`), so the harness sees what the server really answered. With
`--snapshot`, before forwarding each reply it also saves the server's own
`GET /receipts` answer there (its control listener, from the readiness file its
`--config` names), as upstream's relay does: what the server says it received,
taken while it still runs.
Standard library only, to start fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from typing import IO


class _Replies:
    """The server's lines back, each with the id of the last request sent before it."""

    def __init__(self, path: str | None, snapshot: str | None, command: list[str]) -> None:
        self.handle = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.lock = threading.Lock()
        self.last: object = None
        self.snapshot = snapshot
        self.command = command
        self.control: str | None = None

    def _control(self) -> str | None:
        """The server's control endpoint, from the readiness file its config names."""
        if self.control is None and "--config" in self.command:
            try:
                config_path = self.command[self.command.index("--config") + 1]
                with open(config_path, encoding="utf-8") as handle:
                    readiness = json.load(handle)["readinessFile"]
                with open(readiness, encoding="utf-8") as handle:
                    self.control = json.load(handle)["controlEndpoint"]
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                return None
        return self.control

    def save_receipts(self) -> None:
        """The server's own GET /receipts, saved whole (atomically) before a reply goes on."""
        control = self._control() if self.snapshot else None
        if control is None or self.snapshot is None:
            return
        import http.client  # only a v1 server's relay pays for it
        from urllib.parse import urlsplit

        parts = urlsplit(control)
        connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=5
        )
        try:
            connection.request("GET", "/receipts")
            body = connection.getresponse().read()
        except OSError:
            return
        finally:
            connection.close()
        temporary = self.snapshot + ".tmp"
        with open(temporary, "wb") as handle:
            handle.write(body)
        os.replace(temporary, self.snapshot)

    def sent(self, message: object) -> None:
        with self.lock:
            self.last = message.get("id") if isinstance(message, dict) else None

    def answered(self, line: bytes) -> None:
        if self.handle is None or not line.strip():
            return
        try:
            value = json.loads(line)
        except ValueError:
            value = {"unparsed": line.decode("utf-8", "replace")[:2000]}
        with self.lock:
            self.handle.write(json.dumps({"request": self.last, "reply": value}) + "\n")
            self.handle.flush()
        self.save_receipts()


def _copy(source: IO[bytes], target: IO[bytes], replies: _Replies) -> None:
    for chunk in iter(lambda: source.readline(), b""):
        replies.answered(chunk)
        target.write(chunk)
        target.flush()


def _kind(line: bytes) -> tuple[str, object] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return ("discovery" if method == "hooks/capabilities" else "request"), message


def main(argv: list[str]) -> int:
    options: dict[str, str] = {}
    while len(argv) >= 4 and argv[2] in ("--replies", "--snapshot"):
        options[argv[2]] = argv[3]
        argv = [*argv[:2], *argv[4:]]
    if len(argv) < 4 or argv[0] != "--log" or argv[2] != "--":
        print(
            "usage: python -m interop.relay --log FILE [--replies FILE] [--snapshot FILE] "
            "-- COMMAND...",
            file=sys.stderr,
        )
        return 2
    log_path, command = argv[1], argv[3:]
    replies = _Replies(options.get("--replies"), options.get("--snapshot"), command)
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    pump = threading.Thread(
        target=_copy, args=(child.stdout, sys.stdout.buffer, replies), daemon=True
    )
    pump.start()
    with open(log_path, "a", encoding="utf-8") as log:
        for line in iter(sys.stdin.buffer.readline, b""):
            entry = _kind(line)
            if entry is not None:
                log.write(json.dumps({"kind": entry[0], "message": entry[1]}) + "\n")
                log.flush()
                replies.sent(entry[1])
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
    with contextlib.suppress(BrokenPipeError):
        child.stdin.close()
    code = child.wait()
    pump.join(timeout=5)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
