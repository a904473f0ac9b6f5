"""A server that accepts one forged credential: a token in the query string (standard library only).

Its `server` runs our Python adapter's core server unchanged behind a relay
on its plain-HTTP listener (the compat profile's bearer mode) that moves
`?access_token=T` into an `Authorization: Bearer T` header: a server that
reads credentials from the URL. Over TLS the relay passes bytes unchanged.
Its `client` is our Python adapter's client.

Usage: auth_forger.py {server,client} --config PATH
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "adapters" / "python"
ADAPTER = [str(PYTHON / ".venv" / "bin" / "python"), "-m", "ahp_py"]


def _forge(head: bytes) -> bytes:
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    parts = urlsplit(target)
    token = parse_qs(parts.query).get("access_token")
    if not token or any(line.lower().startswith("authorization:") for line in lines[1:]):
        return head
    lines[0] = f"{method} {parts.path} {version}"
    lines.insert(1, f"Authorization: Bearer {token[0]}")
    return "\r\n".join(lines).encode("latin-1")


def _relay(target_port: int) -> socket.socket:
    listener = socket.create_server(("127.0.0.1", 0))

    def pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def serve(client: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            data += chunk
            if data[:1] == b"\x16":  # a TLS handshake: not ours to read
                break
        if data[:1] != b"\x16":
            head, _, rest = data.partition(b"\r\n\r\n")
            data = _forge(head) + b"\r\n\r\n" + rest
        upstream = socket.create_connection(("127.0.0.1", target_port))
        upstream.sendall(data)
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        pump(client, upstream)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def serve_forged(config_path: str) -> int:
    settings = json.loads(Path(config_path).read_text())
    readiness = Path(settings["readinessFile"])
    private = readiness.parent / f"forger-{os.getpid()}"
    private.mkdir()
    inner = {**settings, "readinessFile": str(private / "ready.json")}
    (private / "config.json").write_text(json.dumps(inner))
    child = subprocess.Popen(
        [*ADAPTER, "server", "--config", str(private / "config.json")], cwd=PYTHON
    )

    def stop(signum: int, _frame: Any) -> None:
        child.terminate()

    signal.signal(signal.SIGTERM, stop)
    deadline = time.monotonic() + 30
    while not (private / "ready.json").exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            return 1
        time.sleep(0.02)
    ready = json.loads((private / "ready.json").read_text())
    endpoint = urlsplit(ready["endpoint"])
    relay = _relay(endpoint.port or 80)
    ready["endpoint"] = f"{endpoint.scheme}://127.0.0.1:{relay.getsockname()[1]}{endpoint.path}"
    ready["pid"] = os.getpid()
    partial = readiness.with_suffix(".partial")
    partial.write_text(json.dumps(ready))
    partial.replace(readiness)
    return child.wait()


def main() -> int:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "server":
        return serve_forged(args[args.index("--config") + 1])
    return subprocess.run([*ADAPTER, role, *args], cwd=PYTHON).returncode


if __name__ == "__main__":
    sys.exit(main())
