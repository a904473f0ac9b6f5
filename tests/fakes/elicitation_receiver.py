"""An elicitation receiver that accepts a result from the wrong session (standard library only).

It runs our Python adapter's lifecycle roles, with one change in front of its
server: every `user.elicitation.result` whose parent request it has seen in
another session gets that request's session before the real receiver sees
it, so the receiver accepts (and records) a result it had to refuse, as a
receiver would that correlates by parent id alone. The rows sending a
wrong-session result must fail naming them. Auth none only (the relay speaks
plain HTTP and stdio lines).

Usage: elicitation_receiver.py {lifecycle-client,lifecycle-server} --config PATH
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "adapters" / "python"
ADAPTER = [str(PYTHON / ".venv" / "bin" / "python"), "-m", "ahp_py"]
SESSIONS: dict[str, Any] = {}  # request event id -> its session


def rewrite(body: bytes) -> bytes:
    try:
        message = json.loads(body)
        event = message["params"]["event"]
    except (ValueError, KeyError, TypeError):
        return body
    if not isinstance(event, dict):
        return body
    if event.get("type") == "user.elicitation.request" and "session" in event:
        SESSIONS.setdefault(str(event.get("id")), event["session"])
        return body
    parent = event.get("parentEventId")
    moved = parent in SESSIONS and event.get("session", SESSIONS.get(parent)) != SESSIONS[parent]
    if event.get("type") == "user.elicitation.result" and moved:
        event["session"] = SESSIONS[parent]
        return json.dumps(message).encode()
    return body


def serve_http(config_path: Path, config: dict[str, Any]) -> int:
    outer = Path(config["readinessFile"])
    inner_ready = outer.with_name(outer.name + ".inner.json")
    inner_config = config_path.with_name(config_path.name + ".inner.json")
    inner_config.write_text(json.dumps({**config, "readinessFile": str(inner_ready)}))
    command = [*ADAPTER, "lifecycle-server", "--config", str(inner_config)]
    child = subprocess.Popen(command, cwd=PYTHON)
    deadline = time.monotonic() + 30
    while not inner_ready.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            return 1
        time.sleep(0.02)
    ready = json.loads(inner_ready.read_text())
    target = ready["endpoint"]

    class Relay(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = rewrite(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
            request = urllib.request.Request(target, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    status, payload = answer.status, answer.read()
            except urllib.error.HTTPError as refused:
                status, payload = refused.code, refused.read()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_: Any) -> None:
            return

    relay = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    port = relay.server_address[1]
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    temp = outer.with_name(outer.name + ".tmp")
    path = urllib.parse.urlsplit(target).path or "/"
    ready = {**ready, "endpoint": f"http://127.0.0.1:{port}{path}", "pid": os.getpid()}
    temp.write_text(json.dumps(ready))
    os.replace(temp, outer)
    while not stopped.is_set() and child.poll() is None:
        stopped.wait(0.1)
    relay.shutdown()
    if child.poll() is None:
        child.terminate()
        child.wait(10)
    return 0


def serve_stdio(config_path: Path) -> int:
    child = subprocess.Popen(
        [*ADAPTER, "lifecycle-server", "--config", str(config_path)],
        cwd=PYTHON,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    source, sink = child.stdout, child.stdin

    def answers() -> None:
        for line in source:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    threading.Thread(target=answers, daemon=True).start()
    for line in sys.stdin.buffer:
        sink.write(rewrite(line.rstrip(b"\n")) + b"\n")
        sink.flush()
    sink.close()
    return child.wait(30)


def main() -> int:
    role, args = sys.argv[1], sys.argv[2:]
    if role != "lifecycle-server":
        return subprocess.run([*ADAPTER, role, *args], cwd=PYTHON).returncode
    config_path = Path(args[args.index("--config") + 1])
    config = json.loads(config_path.read_text())
    if config.get("transport") == "stdio":
        return serve_stdio(config_path)
    return serve_http(config_path, config)


if __name__ == "__main__":
    sys.exit(main())
