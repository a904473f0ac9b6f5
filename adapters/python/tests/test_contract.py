"""The contract as seen from outside: real processes, their exit codes, files and
stdio lines (docs/CONTRACT.md: exit codes, strict JSON, stdio server, replay,
``schemaDir`` and ``language``)."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from builders import request, response
from conftest import (
    ADAPTER_DIR,
    CORE_SCENARIOS,
    REPO_ROOT,
    UPSTREAM_SCENARIOS,
    assert_contract,
    assert_control_answer,
    assert_receipt_log,
)

from ahp_py.__main__ import main

pytestmark = pytest.mark.e2e

DENY = request("tool.before", ["deny", "message"], event_id="deny-1")
DENY_ROW = {
    "id": "deny-1",
    "request": DENY,
    "response": response(DENY, {"type": "deny", "reason": "no"}, {"type": "message", "text": "hi"}),
}
DENY_ACTUAL = {
    "decision": "deny",
    "permission": "deny",
    "executed": False,
    "messages": ["hi"],
    "input": {"path": "a.txt", "mode": "w"},
    "effective": {"input": {"path": "a.txt", "mode": "w"}},
}
NULL_ROW = {"id": "null-1", "request": request("tool.after", ["message"], event_id="null-1")}
INVALID_ROW = {"id": "invalid-1", "request": {"jsonrpc": "2.0", "id": "invalid-1"}}
UNSUPPORTED = request("tool.after", ["message"], event_id="unsupported-1")
UNSUPPORTED["params"]["event"] = {  # canonical, but not a boundary ahp_py implements
    **{k: UNSUPPORTED["params"]["event"][k] for k in ("id", "source", "time")},
    "type": "turn.start",
    "turn": {"id": "t1"},
    "trigger": "user",
    "items": [],
}
UNSUPPORTED_ROW = {"id": "unsupported-1", "request": UNSUPPORTED, "response": None}
ROWS = [DENY_ROW, NULL_ROW, INVALID_ROW, UNSUPPORTED_ROW]


def write(path: Path, value: Any) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def ahp(
    role: str, config: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ahp_py ROLE --config CONFIG`` as a real process."""
    return subprocess.run(
        [sys.executable, "-m", "ahp_py", role, "--config", str(config)],
        cwd=ADAPTER_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture()
def in_process(capsys: pytest.CaptureFixture[str]) -> Any:
    """The same entry point in this process (no interpreter start-up): returns a
    ``CompletedProcess`` alike. Only for runs that end (never a serving server)."""

    def run(role: str, config: Path) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        code = main([role, "--config", str(config)])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess([role], code, out, err)

    return run


def replay_config(tmp_path: Path, rows: list[dict[str, Any]], **extra: Any) -> Path:
    scenarios = write(tmp_path / "scenarios.json", {"version": 1, "scenarios": rows})
    config = {"scenarioFile": str(scenarios), "reportFile": str(tmp_path / "report.json")}
    return write(tmp_path / "replay.json", {**config, **extra})


def read_report(tmp_path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())
    assert_contract("client-report.schema.json", report)
    return report


# Exit codes -------------------------------------------------------------------


def server_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    scenarios = write(tmp_path / "scenarios.json", {"version": 1, "scenarios": [DENY_ROW]})
    return {
        "transport": "http",
        "readinessFile": str(tmp_path / "ready.json"),
        "scenarioFile": str(scenarios),
        "auth": {"mode": "none", "profile": "strict"},
        **extra,
    }


def client_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    scenarios = write(tmp_path / "scenarios.json", {"version": 1, "scenarios": [DENY_ROW]})
    return {
        "transport": "http",
        "endpoint": "http://127.0.0.1:9/intercept",
        "scenarioFile": str(scenarios),
        "reportFile": str(tmp_path / "report.json"),
        "auth": {"mode": "none", "profile": "strict"},
        "timeoutMs": 1000,
        **extra,
    }


BAD_CONFIGS: list[tuple[str, str, Any, str | None]] = [
    # (role, case, config or a function of tmp_path giving one, the field named)
    ("server", "duplicate-key", '{"transport": "http", "transport": "stdio"}', None),
    ("server", "nan", '{"transport": NaN}', None),
    ("server", "not-an-object", "[]", None),
    ("server", "missing-transport", lambda t: server_config(t, transport=None), "transport"),
    ("server", "wrong-transport", lambda t: server_config(t, transport="tcp"), "transport"),
    (
        "server",
        "relative-path",
        lambda t: server_config(t, readinessFile="r.json"),
        "readinessFile",
    ),
    ("server", "missing-auth", lambda t: server_config(t, auth=None), "auth"),
    (
        "server",
        "strict-bearer-without-tls",
        lambda t: server_config(t, auth={"mode": "bearer", "token": "x"}),
        "tls",
    ),
    ("server", "bad-schema-dir", lambda t: server_config(t, schemaDir=str(t)), "schemaDir"),
    ("client", "missing-timeout", lambda t: client_config(t, timeoutMs=None), "timeoutMs"),
    ("client", "zero-timeout", lambda t: client_config(t, timeoutMs=0), "timeoutMs"),
    ("client", "missing-endpoint", lambda t: client_config(t, endpoint=None), "endpoint"),
    ("client", "stdio-no-command", lambda t: client_config(t, transport="stdio"), "serverCommand"),
    ("client", "empty-language", lambda t: client_config(t, language=" "), "language"),
    ("replay", "missing-report", lambda t: {"scenarioFile": "/x.json"}, "scenarioFile"),
]


@pytest.mark.parametrize(
    ("role", "config", "field"),
    [(role, config, field) for role, _, config, field in BAD_CONFIGS],
    ids=[f"{role}-{case}" for role, case, _, _ in BAD_CONFIGS],
)
def test_unusable_config_exits_2_naming_file_and_field(
    tmp_path: Path, in_process: Any, role: str, config: Any, field: str | None
) -> None:
    value = config(tmp_path) if callable(config) else config
    if isinstance(value, dict):
        value = {key: item for key, item in value.items() if item is not None}
    path = write(tmp_path / "config.json", value)
    completed = in_process(role, path)
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert str(path) in lines[0]
    if field is not None:
        assert f"field {field}" in lines[0]
    assert completed.stdout == ""


@pytest.mark.parametrize("role", ["client", "server", "replay"])
def test_unreadable_config_exits_2(tmp_path: Path, role: str) -> None:
    completed = ahp(role, tmp_path / "missing.json")
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and str(tmp_path / "missing.json") in completed.stderr


@pytest.mark.parametrize(
    ("text", "roles"),
    [
        ('{"scenarios": [{"id": "a", "id": "b"}]}', ("server", "replay")),
        ('{"scenarios": [{"id": "a", "response": Infinity}]}', ("server", "replay")),
        (b'{"scenarios": [{"id": "\xc3"}]}', ("server", "replay")),
        ('{"scenarios": [{"id": "a"}, {"id": "a"}]}', ("server",)),  # the server's table
        ('{"scenarios": [{"request": {}}]}', ("server", "replay")),
        ('{"rows": []}', ("server", "replay")),
    ],
    ids=["duplicate-key", "infinity", "invalid-utf8", "duplicate-id", "no-id", "no-scenarios"],
)
def test_bad_scenario_file_exits_2_naming_scenario_file(
    tmp_path: Path, in_process: Any, text: str | bytes, roles: tuple[str, ...]
) -> None:
    scenarios = tmp_path / "bad.json"
    if isinstance(text, bytes):
        scenarios.write_bytes(text)
    else:
        scenarios.write_text(text)
    configs = {
        "server": server_config(tmp_path, scenarioFile=str(scenarios)),
        "replay": {"scenarioFile": str(scenarios), "reportFile": str(tmp_path / "r.json")},
    }
    for role in roles:
        completed = in_process(role, write(tmp_path / f"{role}.json", configs[role]))
        assert completed.returncode == 2, completed.stderr
        assert "field scenarioFile" in completed.stderr and str(scenarios) in completed.stderr


def test_other_failure_exits_1(tmp_path: Path) -> None:
    config = replay_config(tmp_path, [DENY_ROW])
    value = json.loads(config.read_text())
    value["reportFile"] = str(tmp_path / "no-such-dir" / "report.json")
    write(config, value)
    completed = ahp("replay", config)
    assert completed.returncode == 1
    assert "FileNotFoundError" in completed.stderr


def test_unknown_config_keys_are_ignored(tmp_path: Path, in_process: Any) -> None:
    config = replay_config(tmp_path, [DENY_ROW], futureKey={"anything": [1]}, x=None)
    completed = in_process("replay", config)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""


# Replay -----------------------------------------------------------------------


def test_replay_reports_literal_outcomes(tmp_path: Path) -> None:
    completed = ahp("replay", replay_config(tmp_path, ROWS))
    assert completed.returncode == 0, completed.stderr
    report = read_report(tmp_path)
    assert report["language"] == "python"
    results = {row["id"]: row for row in report["results"]}
    assert list(results) == ["deny-1", "null-1", "invalid-1", "unsupported-1"]
    assert results["deny-1"] == {"id": "deny-1", "status": "completed", "actual": DENY_ACTUAL}
    assert results["null-1"] == {
        "id": "null-1",
        "status": "completed",
        "actual": {"rejected": True},
    }
    assert results["invalid-1"]["status"] == "failed"
    assert results["invalid-1"]["error"].startswith("request is invalid")
    assert results["unsupported-1"]["status"] == "unsupported"
    assert "turn.start" in results["unsupported-1"]["error"]


@pytest.mark.parametrize("path", [CORE_SCENARIOS, UPSTREAM_SCENARIOS], ids=["core", "upstream"])
def test_replay_of_every_scenario_file_is_a_valid_report(
    tmp_path: Path, in_process: Any, path: Path
) -> None:
    """Shape and coverage only; ``python -m interop unit-tests`` judges the rows."""
    rows = json.loads(path.read_text())["scenarios"]
    config = write(
        tmp_path / "replay.json",
        {"scenarioFile": str(path), "reportFile": str(tmp_path / "report.json"), "language": "py"},
    )
    completed = in_process("replay", config)
    assert completed.returncode == 0, completed.stderr
    report = read_report(tmp_path)
    assert report["language"] == "py"
    assert [row["id"] for row in report["results"]] == [row["id"] for row in rows]
    assert {row["status"] for row in report["results"]} == {"completed"}


def copy_schemas(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(REPO_ROOT / "schemas" / "draft", target)
    return target


def test_schema_dir_precedence(tmp_path: Path) -> None:
    schemas = copy_schemas(tmp_path)
    nowhere = {"AHP_SCHEMA_DIR": str(tmp_path / "nowhere")}
    # The config's schemaDir wins over the environment.
    config = replay_config(tmp_path, [DENY_ROW], schemaDir=str(schemas))
    assert ahp("replay", config, nowhere).returncode == 0
    # Without it, $AHP_SCHEMA_DIR is used: an unusable one is not a config problem.
    config = replay_config(tmp_path, [DENY_ROW])
    completed = ahp("replay", config, nowhere)
    assert completed.returncode == 1 and "nowhere" in completed.stderr
    assert ahp("replay", config, {"AHP_SCHEMA_DIR": str(schemas)}).returncode == 0
    # The schemas really come from there: a changed intercept-request schema is seen.
    request_schema = schemas / "intercept-request.schema.json"
    request_schema.write_text(
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", "not": {}}'
    )
    config = replay_config(tmp_path, [DENY_ROW], schemaDir=str(schemas))
    assert ahp("replay", config).returncode == 0
    assert read_report(tmp_path)["results"][0]["status"] == "failed"


# Client: malformed responses and language ------------------------------------


class FakeServer:
    """An HTTP endpoint answering every POST with the same bytes."""

    def __init__(self, body: bytes) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/intercept"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


MALFORMED_RESPONSES = [
    b'{"jsonrpc":"2.0","id":"deny-1","id":"deny-1","result":{"protocolVersion":"draft","effects":[]}}',
    b'{"jsonrpc":"2.0","id":"deny-1","result":{"protocolVersion":"draft","effects":[],"x":NaN}}',
    b'{"jsonrpc":"2.0","id":"deny-1","result":{"protocolVersion":"dr\xffaft","effects":[]}}',
    b"",
]


@pytest.mark.parametrize("body", MALFORMED_RESPONSES, ids=["duplicate", "nan", "utf8", "empty"])
def test_client_rejects_malformed_http_response(
    tmp_path: Path, in_process: Any, body: bytes
) -> None:
    fake = FakeServer(body)
    try:
        config = write(tmp_path / "client.json", client_config(tmp_path, endpoint=fake.url))
        completed = in_process("client", config)
    finally:
        fake.close()
    assert completed.returncode == 0, completed.stderr
    report = read_report(tmp_path)
    assert report["results"] == [
        {"id": "deny-1", "status": "completed", "actual": {"rejected": True}}
    ]


def test_client_rejects_malformed_stdio_line_and_reports_language(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "for line in sys.stdin:\n"
        f"    sys.stdout.write({MALFORMED_RESPONSES[0].decode()!r} + '\\n'); sys.stdout.flush()\n"
    )
    config = client_config(
        tmp_path,
        transport="stdio",
        endpoint=None,
        serverCommand=[sys.executable, "-c", script],
        serverCwd=str(tmp_path),
        serverConfig=str(tmp_path / "unused.json"),
        language="python-copy",
    )
    path = write(tmp_path / "client.json", {k: v for k, v in config.items() if v is not None})
    completed = ahp("client", path)
    assert completed.returncode == 0, completed.stderr
    report = read_report(tmp_path)
    assert report["language"] == "python-copy"
    assert report["results"] == [
        {"id": "deny-1", "status": "completed", "actual": {"rejected": True}}
    ]


# The stdio server -------------------------------------------------------------


class StdioServer:
    def __init__(self, tmp_path: Path, rows: list[dict[str, Any]]) -> None:
        self.ready = tmp_path / "ready.json"
        self.log = tmp_path / "receipts.jsonl"
        scenarios = write(tmp_path / "scenarios.json", {"scenarios": rows})
        config = {
            "transport": "stdio",
            "readinessFile": str(self.ready),
            "scenarioFile": str(scenarios),
            "auth": {"mode": "none", "profile": "strict"},
            "receiptLog": str(self.log),
        }
        path = write(tmp_path / "server.json", config)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ahp_py", "server", "--config", str(path)],
            cwd=ADAPTER_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not self.ready.exists():
            assert self.process.poll() is None, self.process.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.01)
        self.readiness = json.loads(self.ready.read_text())
        assert_contract("readiness.schema.json", self.readiness)
        assert self.readiness["endpoint"] is None

    def send(self, line: bytes | Any) -> None:
        assert self.process.stdin is not None
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def line(self, timeout: float = 10) -> Any:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "no line in time"
        return json.loads(self.process.stdout.readline())

    def silent(self, seconds: float = 0.3) -> bool:
        assert self.process.stdout is not None
        return not select.select([self.process.stdout], [], [], seconds)[0]

    def control(self, method: str, path: str, body: Any = None) -> Any:
        import http.client

        host_port = self.readiness["controlEndpoint"].split("://", 1)[1]
        connection = http.client.HTTPConnection(host_port, timeout=10)
        try:
            payload = None if body is None else json.dumps(body).encode()
            connection.request(method, path, payload)
            answer = json.loads(connection.getresponse().read())
        finally:
            connection.close()
        assert_control_answer(path, answer)
        return answer


@pytest.fixture()
def stdio_server(tmp_path: Path) -> Iterator[StdioServer]:
    gated = request("tool.after", ["message"], event_id="gated-1")
    rows = [
        DENY_ROW,
        {"id": "gated-1", "request": gated, "response": response(gated), "barrier": "b"},
    ]
    server = StdioServer(tmp_path, rows)
    yield server
    if server.process.poll() is None:
        server.process.kill()
    server.process.wait()
    for pipe in (server.process.stdin, server.process.stdout, server.process.stderr):
        if pipe is not None:
            pipe.close()


def test_stdio_server_lines(stdio_server: StdioServer) -> None:
    server = stdio_server
    server.send({"jsonrpc": "2.0", "method": "hooks/observe", "params": {}})
    server.send(b'{"jsonrpc":"2.0","id":"x","id":"y"}')
    assert server.line() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error"},
    }
    server.send(b"[" * 600 + b"]" * 600)
    assert server.line()["error"]["code"] == -32700
    server.send(b"")  # blank lines are skipped
    server.send(DENY)
    assert server.line() == DENY_ROW["response"]
    assert server.silent()  # the notification got no line
    receipts = server.control("GET", "/receipts")
    assert receipts["notifications"] == [
        {"jsonrpc": "2.0", "method": "hooks/observe", "params": {}}
    ]
    assert [r["id"] for r in receipts["requests"]] == ["deny-1"]
    assert [e["kind"] for e in assert_receipt_log(server.log)] == ["notification", "request"]
    assert server.process.stdin is not None
    server.process.stdin.close()  # EOF ends the server
    assert server.process.wait(timeout=10) == 0


def test_stdio_server_answers_other_lines_while_a_reply_is_held(stdio_server: StdioServer) -> None:
    server = stdio_server
    gated = request("tool.after", ["message"], event_id="gated-1")
    server.send(gated)
    server.send(DENY)
    assert server.line()["id"] == "deny-1"  # answered while gated-1 is held
    assert server.silent()
    assert server.control("POST", "/release", {"barrier": "b"}) == {"released": "b"}
    assert server.line() == response(gated)
    server.send(gated)  # sticky
    assert server.line() == response(gated)
    assert server.control("POST", "/reset", {}) == {"reset": True}
    server.send(gated)  # held again after /reset
    assert server.silent()
    assert server.control("POST", "/shutdown", {}) == {"shutdown": True}
    assert server.line() == response(gated)  # shutdown releases everything
    assert server.process.wait(timeout=10) == 0
    kinds = [e["kind"] for e in assert_receipt_log(server.log)]
    assert kinds == ["request"] * 4


def test_manifest_is_valid() -> None:
    manifest = json.loads((ADAPTER_DIR / "adapter.json").read_text())
    assert_contract("adapter.schema.json", manifest)
    assert manifest["replay"] == [".venv/bin/python", "-m", "ahp_py", "replay"]
