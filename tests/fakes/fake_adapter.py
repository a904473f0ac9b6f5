"""A fake adapter for testing the harness's own verdicts (standard library only).

It follows contract v1 (not blind): the client reads the full scenario file and
reports the *expected* outcome as its actual one, so the harness tests can make
it lie, omit, duplicate, crash, hang or leak on purpose and check that the
verdicts fail as they should. It is never part of a real matrix run.

Usage: fake_adapter.py {client,server} --behaviour NAME --config PATH
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def write_atomic(path: Path, value: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(value))
    os.replace(temporary, path)


# -- server ---------------------------------------------------------------------


class State:
    def __init__(self, config: dict[str, Any], behaviour: str) -> None:
        self.config = config
        self.behaviour = behaviour
        self.lock = threading.Lock()
        self.requests: list[Any] = []
        self.load(config["scenarioFile"])

    def load(self, path: str) -> None:
        with open(path) as handle:
            scenarios = json.load(handle)["scenarios"]
        self.responses = {s["id"]: s["response"] for s in scenarios}
        self.barriers = {s["id"]: s["barrier"] for s in scenarios if "barrier" in s}
        self.gates: dict[str, threading.Event] = {}

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def hold(self, message: Any) -> None:
        """A scenario naming a barrier is answered only after POST /release."""
        name = self.barriers.get(message.get("id")) if isinstance(message, dict) else None
        if name is not None and self.behaviour != "ignore-release":
            self.gate(name).wait(30)

    def receive(self, message: Any) -> Any:
        recorded = json.loads(json.dumps(message))
        if self.behaviour == "tamper-receipt" and isinstance(recorded, dict):
            recorded.setdefault("params", {})["tampered"] = True
        with self.lock:
            self.requests.append(recorded)
            log = self.config.get("receiptLog")
            if log:
                with open(log, "a") as handle:
                    handle.write(json.dumps({"kind": "request", "message": recorded}) + "\n")
        if message.get("id") not in self.responses:
            return {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": {"code": -32602, "message": "no scenario has this id"},
            }
        return self.responses[message.get("id")]


def make_handler(state: State, control: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, value: Any) -> None:
            body = json.dumps(value).encode()
            if state.behaviour == "two-writes" and not control:  # headers, then body: the
                head = (  # second small write waits on the client's delayed ACK (Nagle)
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                )
                self.wfile.write(head)
                self.wfile.write(body)
                return
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )

        def do_GET(self) -> None:
            if self.path == "/health":
                self.reply({"ready": True})
            elif self.path == "/receipts":
                self.reply({"requests": state.requests, "discovery": []})
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"null")
            if control:
                if self.path == "/reset":
                    state.requests.clear()
                    if isinstance(body, dict) and body.get("scenarioFile"):
                        state.load(body["scenarioFile"])
                    self.reply({"reset": True})
                elif self.path == "/shutdown":
                    self.reply({"shutdown": True})
                    threading.Thread(target=lambda: os._exit(0)).start()
                else:
                    name = body.get("barrier") if isinstance(body, dict) else None
                    if isinstance(name, str):
                        state.gate(name).set()
                    self.reply({"released": name})
                return
            if state.behaviour == "refuse-auth":  # refuses every AHP request, whatever it carries
                self.wfile.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
                return
            answer = server_answer(state, body, state.receive(body))
            if state.behaviour == "die-after-first":
                os.kill(os.getpid(), signal.SIGKILL)
            state.hold(body)
            self.reply(answer)

    return Handler


def server(config: dict[str, Any], behaviour: str) -> int:
    missing = [k for k in ("transport", "readinessFile", "scenarioFile") if k not in config]
    if missing:
        print(f"fake: config: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    state = State(config, behaviour)
    if behaviour == "server-crash":
        return 3
    if behaviour == "stdout-garbage" and config["transport"] == "http":
        print("fake server says hello on stdout", flush=True)
    if behaviour == "no-readiness":
        time.sleep(3600)
    control = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state, True))
    threading.Thread(target=control.serve_forever, daemon=True).start()
    endpoint = None
    if config["transport"] == "http":
        ahp = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state, False))
        threading.Thread(target=ahp.serve_forever, daemon=True).start()
        endpoint = f"http://127.0.0.1:{ahp.server_port}/intercept"
    if behaviour == "server-grandchild":
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
        )
    write_atomic(
        Path(config["readinessFile"]),
        {
            "endpoint": endpoint,
            "controlEndpoint": f"http://127.0.0.1:{control.server_port}",
            "pid": os.getpid(),
        },
    )
    if config["transport"] == "stdio":
        for line in sys.stdin:
            message = json.loads(line)
            sys.stdout.write(json.dumps(state.receive(message)) + "\n")
            sys.stdout.flush()
        return 0
    while True:
        time.sleep(3600)


# -- client ---------------------------------------------------------------------


CORE_EVENTS = (
    "tool.before",
    "tool.after",
    "turn.finish.before",
    "model.request.before",
    "context.compact.before",
    "context.compact.after",
    "user.message.outbound",
    "user.elicitation.result",
    "workspace.change.before",
)


def _deep(base: Any, value: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(value, dict):
        return value
    out = dict(base)
    for key, item in value.items():
        out[key] = _deep(base.get(key), item)
    return out


def deep_merged(scenario: dict[str, Any]) -> Any:
    """The tool input after the response's `merge` of input, merged deeply: the
    mistake a client makes when it recurses into nested objects (None: no such merge)."""
    effects = (scenario.get("response") or {}).get("result", {}).get("effects", [])
    merges = [
        e for e in effects
        if isinstance(e, dict) and e.get("target") == "input" and e.get("operation") == "merge"
    ]  # fmt: skip
    if not merges:
        return None
    value = scenario["request"]["params"]["event"]["tool"]["input"]
    for effect in merges:
        value = _deep(value, effect["value"])
    return value


def server_answer(state: State, message: Any, answer: Any) -> Any:
    """The fake server's answer: `alter-first` answers the first scenario whose scripted
    result has effects with none."""
    first = next(
        (
            i
            for i, r in state.responses.items()
            if isinstance(r, dict) and (r.get("result") or {}).get("effects")
        ),
        None,
    )
    mine = state.behaviour == "alter-first" and isinstance(message, dict)
    result = answer.get("result") if isinstance(answer, dict) else None
    if mine and message.get("id") == first and isinstance(result, dict):
        return {**answer, "result": {**result, "effects": []}}
    return answer


def client(config: dict[str, Any], behaviour: str) -> int:
    scenarios = json.loads(Path(config["scenarioFile"]).read_text())["scenarios"]
    if behaviour == "crash":
        return 1
    if behaviour == "self-kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if behaviour == "print-secrets":  # a careless adapter logging its credentials
        print(json.dumps(config["auth"]), file=sys.stderr, flush=True)
    if behaviour == "hang":
        signal_dir = os.environ.get("FAKE_SIGNAL_DIR")
        if signal_dir:  # tell a waiting test that the client is now hanging
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
            )
            write_atomic(Path(signal_dir) / f"hanging-{os.getpid()}.json", {"pid": os.getpid()})
        time.sleep(3600)
    if behaviour == "grandchild":
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
        )
    if behaviour in ("flaky", "fails-once"):  # a counter of runs in its folder
        counter = Path("flaky-runs")
        runs = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(runs + 1))
        if behaviour == "flaky":  # lies on its first row in every other run
            behaviour = "lie" if runs % 2 else "honest"
        else:  # lies on its first row in its first run only: a one-off failure
            behaviour = "lie" if runs == 0 else "honest"
    send = http_sender(config) if config["transport"] == "http" else stdio_sender(config)
    results = []
    for index, scenario in enumerate(scenarios):
        if scenario["request"]["params"]["event"]["type"] not in CORE_EVENTS:
            results.append({"id": scenario["id"], "status": "unsupported", "error": "unknown"})
            continue
        if behaviour == "skip-send" and index == 0:
            pass
        else:
            send(scenario["request"])
        actual = {"rejected": True} if scenario.get("expectError") else scenario["expected"]
        if behaviour == "lie" and index == 0:
            actual = {**actual, "decision": "bogus"}
        if behaviour == "deep-merge" and "input" in actual:  # merges input objects deeply
            actual = {**actual, "input": deep_merged(scenario) or actual["input"]}
        if behaviour == "extra-key" and not scenario.get("expectError"):
            actual = {**actual, "flow": "stop"} if "flow" not in actual else actual
        results.append({"id": scenario["id"], "status": "passed", "actual": actual})
    if behaviour == "omit":
        results.pop()
    if behaviour == "duplicate":
        results.append(results[0])
    if behaviour == "unknown-id":
        results.append({"id": "no-such-scenario", "status": "passed", "actual": {}})
    if behaviour == "unsupported":
        results[0] = {"id": results[0]["id"], "status": "unsupported", "actual": None}
    language = "elsewhere" if behaviour == "wrong-language" else "fake"
    report = {"language": language, "results": results}
    if behaviour == "garbage":
        print("this is not JSON", flush=True)
        Path(config["reportFile"]).write_text("{not json")
        return 0
    Path(config["reportFile"]).write_text(json.dumps(report))
    return 7 if behaviour == "nonzero" else 0


def http_sender(config: dict[str, Any]) -> Any:
    endpoint = config["endpoint"].split("//", 1)[1]
    host, rest = endpoint.split("/", 1)
    hostname, port = host.split(":")
    connection = http.client.HTTPConnection(hostname, int(port), timeout=10)

    def send(request: Any) -> Any:
        connection.request(
            "POST",
            "/" + rest,
            body=json.dumps(request),
            headers={"Content-Type": "application/json"},
        )
        if connection.sock is not None:
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return json.loads(connection.getresponse().read())

    return send


def stdio_sender(config: dict[str, Any]) -> Any:
    child = subprocess.Popen(
        [*config["serverCommand"], "--config", config["serverConfig"]],
        cwd=config["serverCwd"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def send(request: Any) -> Any:
        assert child.stdin and child.stdout
        child.stdin.write(json.dumps(request) + "\n")
        child.stdin.flush()
        return json.loads(child.stdout.readline())

    import atexit

    def close() -> None:
        if child.stdin:
            child.stdin.close()
        child.wait(timeout=5)

    atexit.register(close)
    return send


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=("client", "server"))
    parser.add_argument("--behaviour", default="honest")
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text())
    return (
        client(config, args.behaviour) if args.role == "client" else server(config, args.behaviour)
    )


if __name__ == "__main__":
    sys.exit(main())
