"""A transparent stdio relay for servers without the `receiptLog` extension.

`python -m interop.relay --log FILE -- COMMAND...` runs COMMAND, copies its own
stdin to COMMAND's stdin line by line and COMMAND's stdout back unchanged, and
appends every JSON-RPC message it forwards to FILE (the receipt-log format)
before forwarding it. The harness puts it in front of a contract v1 server over
stdio so receipts exist even after the client has killed the server. It
records what was delivered to the server's stdin, which is what that server
received unless it died first. Standard library only, to start fast.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from typing import IO


def _copy(source: IO[bytes], target: IO[bytes]) -> None:
    for chunk in iter(lambda: source.readline(), b""):
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
    if len(argv) < 4 or argv[0] != "--log" or argv[2] != "--":
        print("usage: python -m interop.relay --log FILE -- COMMAND...", file=sys.stderr)
        return 2
    log_path, command = argv[1], argv[3:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    pump = threading.Thread(target=_copy, args=(child.stdout, sys.stdout.buffer), daemon=True)
    pump.start()
    with open(log_path, "a", encoding="utf-8") as log:
        for line in iter(sys.stdin.buffer.readline, b""):
            entry = _kind(line)
            if entry is not None:
                log.write(json.dumps({"kind": entry[0], "message": entry[1]}) + "\n")
                log.flush()
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
