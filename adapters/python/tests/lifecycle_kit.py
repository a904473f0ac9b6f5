"""What the lifecycle tests share: hand-built rows (steps and chains), an
in-process lifecycle server over real sockets, a stdio server process, raw
HTTP helpers, and the contract checks of what the adapter writes (tests
only)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from builders import modify, request, response
from conftest import ADAPTER_DIR, assert_contract

from ahp_py.contract.config import load_suite_server
from ahp_py.contract.server import ServerProcess
from ahp_py.suites.lifecycle import SPEC, lifecycle_parts

UPLOAD_TOKEN = "upload-token-for-tests-0123456789"
OTHER_TOKEN = "another-token-for-tests-0123456789"
CAPS = {"modify": {"input": {"replace": True, "merge": True}}, "flow": {"operations": ["stop"]}}
EFFECTS = ["allow", "deny", "ask", "modify", "message", "flow"]
STATE = {"permission": "none", "candidate": None}
ORIGINAL = {"path": "a.txt", "mode": "w"}  # builders' tool.before input


def lc_request(rid: str, **event_fields: Any) -> dict[str, Any]:
    """A canonical tool.before intercept whose request id and event id are ``rid``."""
    return request(
        "tool.before", list(EFFECTS), event_id=rid, state=dict(STATE), **CAPS, **event_fields
    )


def settled(req: dict[str, Any], value: Any, text: str = "published") -> dict[str, Any]:
    """A reply replacing the input with ``value``, with a message and an allow."""
    return response(
        req,
        modify("input", "replace", value),
        {"type": "message", "text": text},
        {"type": "allow"},
    )


def row(
    sid: str, requests: dict[str, Any], responses: dict[str, Any], *steps: Any, **extra: Any
) -> dict[str, Any]:
    return {"id": sid, "requests": requests, "responses": responses, "steps": list(steps), **extra}


def attachment(ref: str, item_id: str = "item") -> dict[str, Any]:
    return {
        "id": item_id,
        "kind": "attachment",
        "mediaType": "application/octet-stream",
        "selection": "body",
        "body": {"ref": ref},
    }


def upload_step(alias: str, data: bytes, **extra: Any) -> dict[str, Any]:
    return {
        "op": "upload",
        "subscription": "body",
        "ref": alias,
        "bodyBase64": base64.b64encode(data).decode(),
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        **extra,
    }


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def server_config(
    home: Path, rows: list[dict[str, Any]], transport: str = "http", **extra: Any
) -> Path:
    scenarios = write(home / "scenarios.json", {"version": 1, "scenarios": rows})
    config = {
        "suite": "lifecycle",
        "transport": transport,
        "readinessFile": str(home / "ready.json"),
        "scenarioFile": str(scenarios),
        "auth": {"mode": "none", "profile": "strict"},
        "uploadAuth": {"token": UPLOAD_TOKEN},
        **extra,
    }
    assert_contract("lifecycle-server-config.schema.json", config)
    return write(home / "server.json", config)


def request_json(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, bytes]:
    """(status, parsed JSON or None, raw body) of one HTTP exchange."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=40)
    try:
        payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        connection.request(method, path, payload, headers or {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = answer.read()
    finally:
        connection.close()
    try:
        parsed = json.loads(data) if data else None
    except ValueError:
        parsed = None
    return answer.status, parsed, data


def raw_exchange(port: int, data: bytes, half_close: bool = False, timeout: float = 5.0) -> bytes:
    """Send ``data`` as is (optionally shutting the write side), read until close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


class LiveServer:
    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        assert process.control is not None and process.upload is not None
        self.control_port = process.control.port
        self.upload_port = process.upload.port
        self.port = process.listener.port if process.listener is not None else 0

    def control(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, parsed, _ = request_json(self.control_port, method, path, body)
        return status, parsed

    def ok(self, path: str, body: Any) -> None:
        status, answer = self.control("POST", path, body)
        assert (status, answer) == (200, {"ok": True}), answer
        assert_contract("lifecycle-control.schema.json#/$defs/ok", answer)

    def entries(self) -> list[dict[str, Any]]:
        status, answer = self.control("GET", "/receipts")
        assert status == 200
        assert_contract("lifecycle-control.schema.json#/$defs/receipts", answer)
        return list(answer["entries"])

    def kinds(self) -> list[tuple[str, Any]]:
        return [(e["kind"], e.get("id", e.get("eventId"))) for e in self.entries()]

    def post(
        self, message: Any, path: str = "/intercept", headers: dict[str, str] | None = None
    ) -> tuple[int, Any, bytes]:
        return request_json(self.port, "POST", path, message, headers)

    def upload(self, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        base = {
            "Authorization": f"Bearer {UPLOAD_TOKEN}",
            "Content-Type": "application/octet-stream",
            "AHP-Content-SHA256": hashlib.sha256(data).hexdigest(),
        }
        status, parsed, _ = request_json(
            self.upload_port, "POST", "/upload", data, {**base, **(headers or {})}
        )
        return status, parsed


@contextmanager
def lifecycle_server(
    home: Path, rows: list[dict[str, Any]], wait_seconds: float = 1.0, **extra: Any
) -> Iterator[LiveServer]:
    """An HTTP lifecycle server in this process (0.5 s read timeout)."""
    settings = load_suite_server(str(server_config(home, rows, **extra)), SPEC)
    backend, control, uploads = lifecycle_parts(settings, wait_seconds)
    process = ServerProcess(
        settings.server,
        backend,
        read_timeout=0.5,
        poll_interval=0.05,
        control=control,
        uploads=uploads,
    )
    process.start()
    try:
        yield LiveServer(process)
    finally:
        process.close()


def ahp_command(role: str, config: Path) -> list[str]:
    return [sys.executable, "-m", "ahp_py", role, "--config", str(config)]


def wait_ready(
    path: Path, process: subprocess.Popen[bytes], deadline: float = 30.0
) -> dict[str, Any]:
    end = time.monotonic() + deadline
    while not path.exists():
        assert process.poll() is None, "the server exited before it was ready"
        assert time.monotonic() < end, "the server never became ready"
        time.sleep(0.01)
    ready: dict[str, Any] = json.loads(path.read_text())
    assert_contract("readiness.schema.json", ready)
    return ready


def client_env() -> dict[str, str]:
    return {
        **os.environ,
        "AHP_INTEROP_UPLOAD_TOKEN": UPLOAD_TOKEN,
        "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN": OTHER_TOKEN,
    }


def run_lifecycle_client(
    home: Path,
    rows: list[dict[str, Any]],
    transport: str,
    ready: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Our lifecycle client as a real process against our server (HTTP: the one
    ``ready`` describes; stdio: spawned by the client). Returns the report."""
    scenarios = write(home / "client-scenarios.json", {"version": 1, "scenarios": rows})
    config: dict[str, Any] = {
        "suite": "lifecycle",
        "transport": transport,
        "scenarioFile": str(scenarios),
        "reportFile": str(home / "report.json"),
        "childPidFile": str(home / "child.json"),
        "auth": {"mode": "none", "profile": "strict"},
        "timeoutMs": 10000,
        "upload": {
            "auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        },
        "contentSources": [],
    }
    if transport == "http":
        assert ready is not None
        config.update(endpoint=ready["endpoint"], controlEndpoint=ready["controlEndpoint"])
        config["upload"]["endpoint"] = ready["uploadEndpoint"]
    else:
        config.update(
            serverCommand=[sys.executable, "-m", "ahp_py", "lifecycle-server"],
            serverCwd=str(ADAPTER_DIR),
            serverConfig=str(server_config(home, rows, "stdio")),
        )
    config.update(extra)
    assert_contract("lifecycle-client-config.schema.json", config)
    path = write(home / "client.json", config)
    completed = subprocess.run(
        ahp_command("lifecycle-client", path),
        cwd=ADAPTER_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        env=client_env(),
        start_new_session=True,
    )
    assert completed.returncode == 0, completed.stderr
    report: dict[str, Any] = json.loads((home / "report.json").read_text())
    assert_contract("lifecycle-report.schema.json", report)
    assert [r["id"] for r in report["results"]] == [r["id"] for r in rows]
    report["stderr"] = completed.stderr
    return report


@contextmanager
def http_server_process(home: Path, rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Our lifecycle server as a real HTTP process; yields its readiness."""
    process = subprocess.Popen(
        ahp_command("lifecycle-server", server_config(home, rows)),
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        ready = wait_ready(home / "ready.json", process)
        yield ready
    finally:
        if process.poll() is None:
            port = int(ready["controlEndpoint"].rsplit(":", 1)[1])
            request_json(port, "POST", "/shutdown", {})
            process.wait(timeout=10)


class StdioServer:
    def __init__(self, home: Path, rows: list[dict[str, Any]]) -> None:
        self.process = subprocess.Popen(
            ahp_command("lifecycle-server", server_config(home, rows, "stdio")),
            cwd=ADAPTER_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        ready = wait_ready(home / "ready.json", self.process)
        assert ready["endpoint"] is None and "uploadEndpoint" in ready
        self.control_port = int(ready["controlEndpoint"].rsplit(":", 1)[1])
        self.upload_port = int(ready["uploadEndpoint"].rsplit(":", 1)[1].split("/")[0])
        self.buffer = b""

    def write(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def line(self, timeout: float = 5.0) -> Any:
        raw = self.raw_line(timeout)
        return None if raw is None else json.loads(raw)

    def raw_line(self, timeout: float = 5.0) -> bytes | None:
        """The next stdout line as written (without its newline), None if none
        came within ``timeout``."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def ok(self, path: str, body: Any) -> None:
        assert request_json(self.control_port, "POST", path, body)[:2] == (200, {"ok": True})

    def entries(self) -> list[dict[str, Any]]:
        answer = request_json(self.control_port, "GET", "/receipts")[1]
        assert_contract("lifecycle-control.schema.json#/$defs/receipts", answer)
        return list(answer["entries"])

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return code


def chain_row(
    sid: str, subscriptions: list[Any], replies: list[Any], **chain: Any
) -> dict[str, Any]:
    request = lc_request(
        sid,
        items=[
            {
                "id": f"{sid}:item",
                "kind": "text",
                "mediaType": "text/plain",
                "selection": "metadata",
            }
        ],
    )
    request["params"]["capabilities"]["effects"] = ["allow", "deny", "ask", "modify", "flow"]
    sequence = [response(request, *effects) for effects in replies]
    return {
        "id": sid,
        "chain": {
            "subscriptions": subscriptions,
            "interrupt": False,
            "holdObservers": False,
            **chain,
        },
        "requests": {"a": request},
        "responses": {"a": sequence[-1]},
        "responseSequences": {"a": sequence},
        "steps": [],
    }


def sub(
    sid: str,
    name: str,
    mode: str = "intercept",
    policy: str = "fail-open",
    content: str = "metadata",
) -> dict[str, Any]:
    return {
        "id": f"{sid}:{name}",
        "backend": "shared",
        "mode": mode,
        "failurePolicy": policy,
        "content": content,
    }
