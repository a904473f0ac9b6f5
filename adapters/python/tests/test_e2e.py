"""End to end: our server and our client as real processes over HTTP(S) and stdio.

A client row over the wire must derive what the same engine derives in process
(``expected_actual``); whether that is *right* is the matrix's verdict, not
these tests'. Every readiness file, report, receipt line and control answer is
validated against ``schemas/contract/``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from conftest import (
    ADAPTER_DIR,
    CORE_SCENARIOS,
    UPSTREAM_SCENARIOS,
    assert_contract,
    assert_control_answer,
    assert_receipt_log,
    load_scenarios,
)
from pki import CLOCK, Pki, make_pki, sign_token

from ahp_py.sdk import engine, schemas
from ahp_py.sdk.codec import json_equal

pytestmark = pytest.mark.e2e

ANSWER_KEYS = ("expected", "expectError", "hostExpected", "tags")
HS_KEY = "compat-signing-key-for-tests-only-0123456789"
ISSUER = "https://issuer.test"
AUDIENCE = "ahp-backend"
START_DEADLINE = 30.0


def pick_scenarios() -> list[dict[str, Any]]:
    """A small mixed set: accepted and rejected rows, several boundaries."""
    rows = load_scenarios(UPSTREAM_SCENARIOS)[:6] + load_scenarios(CORE_SCENARIOS)
    chosen: list[dict[str, Any]] = []
    seen: set[tuple[str, bool]] = set()
    for row in rows:
        key = (row["request"]["params"]["event"]["type"], bool(row.get("expectError")))
        if key not in seen or len(chosen) < 6:
            seen.add(key)
            chosen.append(row)
    return chosen


SCENARIOS = pick_scenarios()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    full = tmp_path / "scenarios.json"
    full.write_text(json.dumps({"version": 1, "scenarios": SCENARIOS}))
    blind = tmp_path / "blind.json"
    blind_rows = [{k: v for k, v in row.items() if k not in ANSWER_KEYS} for row in SCENARIOS]
    blind.write_text(json.dumps({"version": 1, "scenarios": blind_rows}))
    return {
        "dir": tmp_path,
        "full": full,
        "blind": blind,
        "report": tmp_path / "report.json",
        "receipts": tmp_path / "receipts.jsonl",
        "ready": tmp_path / "ready.json",
    }


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config))
    return path


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(")")[-1].split()[0] == "Z"


@contextmanager
def server(
    files: dict[str, Path],
    auth: dict[str, Any],
    tls: dict[str, Any] | None = None,
    transport: str = "http",
) -> Iterator[dict[str, Any]]:
    config: dict[str, Any] = {
        "transport": transport,
        "readinessFile": str(files["ready"]),
        "scenarioFile": str(files["full"]),
        "auth": auth,
        "receiptLog": str(files["receipts"]),
    }
    if tls is not None:
        config["tls"] = tls
    path = write_config(files["dir"] / "server.json", config)
    process = subprocess.Popen(
        [sys.executable, "-m", "ahp_py", "server", "--config", str(path)],
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_DEADLINE
        while not files["ready"].exists():
            if process.poll() is not None:
                pytest.fail(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            if time.monotonic() > deadline:
                pytest.fail("server never became ready")
            time.sleep(0.01)
        ready = json.loads(files["ready"].read_text())
        assert_contract("readiness.schema.json", ready)
        assert ready["pid"] == process.pid
        yield ready
        assert control(ready, "POST", "/shutdown") == {"shutdown": True}
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stderr.close()  # type: ignore[union-attr]


def control(ready: dict[str, Any], method: str, path: str, body: Any = None) -> Any:
    host_port = ready["controlEndpoint"].split("://", 1)[1]
    connection = http.client.HTTPConnection(host_port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body).encode()
        connection.request(method, path, payload, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if response.status == 200:
        assert_control_answer(path, answer)
    return answer


def run_client(files: dict[str, Path], config: dict[str, Any]) -> dict[str, Any]:
    config = {
        "scenarioFile": str(files["blind"]),
        "reportFile": str(files["report"]),
        "timeoutMs": 10000,
        **config,
    }
    path = write_config(files["dir"] / "client.json", config)
    completed = subprocess.run(
        [sys.executable, "-m", "ahp_py", "client", "--config", str(path)],
        cwd=ADAPTER_DIR,
        capture_output=True,
        timeout=120,
        start_new_session=True,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    report: dict[str, Any] = json.loads(files["report"].read_text())
    assert_contract("client-report.schema.json", report)
    assert report["language"] == config.get("language", "python")
    assert [row["id"] for row in report["results"]] == [row["id"] for row in SCENARIOS]
    return report


def run_http_client(
    files: dict[str, Path],
    endpoint: str,
    auth: dict[str, Any],
    tls: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """run_client over HTTP(S) to ``endpoint``."""
    config: dict[str, Any] = {"transport": "http", "endpoint": endpoint, "auth": auth}
    if tls is not None:
        config["tls"] = tls
    return run_client(files, config)


def expected_actual(scenario: dict[str, Any]) -> Any:
    """What the engine derives for the row in process (no transport)."""
    schema_set = schemas.load()
    return engine.apply(
        scenario["request"],
        scenario["response"],
        lambda message: schema_set.error(schemas.INTERCEPT_RESPONSE, message),
    ).actual


def assert_all_pass(report: dict[str, Any]) -> None:
    """Every row completed with what the in-process engine derives."""
    for scenario, row in zip(SCENARIOS, report["results"], strict=True):
        assert row["status"] == "completed", row
        assert json_equal(row["actual"], expected_actual(scenario)), (scenario["id"], row)


def assert_all_failed(report: dict[str, Any], fragment: str) -> None:
    for row in report["results"]:
        assert row["status"] == "failed" and fragment in row["error"], row
        assert "actual" not in row


def logged_receipts(files: dict[str, Path]) -> list[dict[str, Any]]:
    return assert_receipt_log(files["receipts"])


def assert_receipts_match(files: dict[str, Path]) -> None:
    receipts = logged_receipts(files)
    assert [entry["kind"] for entry in receipts] == ["request"] * len(SCENARIOS)
    for scenario, entry in zip(SCENARIOS, receipts, strict=False):
        assert json_equal(entry["message"], scenario["request"])


def https_client(pki: Pki, **extra: Any) -> dict[str, Any]:
    return {"caFile": str(pki.ca), **extra}


def https_server(pki: Pki, **extra: Any) -> dict[str, Any]:
    return {"certFile": str(pki.server_cert), "keyFile": str(pki.server_key), **extra}


# Plain HTTP and stdio ---------------------------------------------------------


def test_http_plain(files: dict[str, Path]) -> None:
    with server(files, {"mode": "none"}) as ready:
        assert ready["endpoint"].startswith("http://127.0.0.1:")
        assert ready["endpoint"].endswith("/intercept")
        assert control(ready, "GET", "/health") == {"ready": True}
        report = run_http_client(files, ready["endpoint"], {"mode": "none"})
        assert_all_pass(report)
        assert_receipts_match(files)
        receipts = control(ready, "GET", "/receipts")
        assert len(receipts["requests"]) == len(SCENARIOS) and receipts["discovery"] == []


def test_http_base_url_gets_intercept_appended(files: dict[str, Path]) -> None:
    with server(files, {"mode": "none"}) as ready:
        base = ready["endpoint"][: -len("/intercept")]
        assert_all_pass(run_http_client(files, base, {"mode": "none"}))


def test_stdio(files: dict[str, Path]) -> None:
    server_config = write_config(
        files["dir"] / "stdio-server.json",
        {
            "transport": "stdio",
            "readinessFile": str(files["ready"]),
            "scenarioFile": str(files["full"]),
            "auth": {"mode": "none"},
            "receiptLog": str(files["receipts"]),
        },
    )
    report = run_client(
        files,
        {
            "transport": "stdio",
            "serverCommand": [sys.executable, "-m", "ahp_py", "server"],
            "serverCwd": str(ADAPTER_DIR),
            "serverConfig": str(server_config),
            "auth": {"mode": "none"},
        },
    )
    assert_all_pass(report)
    assert_receipts_match(files)
    ready = json.loads(files["ready"].read_text())
    assert ready["endpoint"] is None
    assert pid_gone(ready["pid"])


FAKE_WRONG_ID = (
    "import json,sys\n"
    "for line in sys.stdin:\n"
    "    sys.stdout.write(json.dumps({'jsonrpc':'2.0','id':'other','result':"
    "{'protocolVersion':'draft','effects':[]}})+'\\n'); sys.stdout.flush()\n"
)


def test_stdio_correlation_failure_is_a_rejection(files: dict[str, Path]) -> None:
    report = run_client(
        files,
        {
            "transport": "stdio",
            "serverCommand": [sys.executable, "-c", FAKE_WRONG_ID],
            "serverCwd": str(files["dir"]),
            "serverConfig": str(files["dir"] / "unused.json"),
            "auth": {"mode": "none"},
        },
    )
    for row in report["results"]:
        assert row == {
            "id": row["id"],
            "status": "completed",
            "actual": {"rejected": True},
        }


def test_stdio_dead_server_fails_rows(files: dict[str, Path]) -> None:
    report = run_client(
        files,
        {
            "transport": "stdio",
            "serverCommand": [sys.executable, "-c", "import sys; sys.exit(3)"],
            "serverCwd": str(files["dir"]),
            "serverConfig": str(files["dir"] / "unused.json"),
            "auth": {"mode": "none"},
        },
    )
    assert_all_failed(report, "")


def test_http_no_listener_fails_rows(files: dict[str, Path]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    report = run_http_client(files, f"http://127.0.0.1:{port}/intercept", {"mode": "none"})
    assert_all_failed(report, "HTTP exchange failed")


# Server behaviour -------------------------------------------------------------


def post(
    endpoint: str,
    body: bytes,
    headers: list[tuple[str, str]],
    context: ssl.SSLContext | None = None,
) -> tuple[int, bytes]:
    host_port = endpoint.split("://", 1)[1].split("/", 1)[0]
    connection: http.client.HTTPConnection
    if context is None:
        connection = http.client.HTTPConnection(host_port, timeout=10)
    else:
        connection = http.client.HTTPSConnection(host_port, timeout=10, context=context)
    try:
        connection.putrequest("POST", "/intercept")
        for name, value in [
            *headers,
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
        ]:
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_server_rejects_duplicate_authorization_header(files: dict[str, Path]) -> None:
    auth = {"mode": "bearer", "profile": "compat", "token": "t0ken"}
    body = json.dumps(SCENARIOS[0]["request"]).encode()
    with server(files, auth) as ready:
        good = [("Authorization", "Bearer t0ken")]
        assert post(ready["endpoint"], body, good)[0] == 200
        assert post(ready["endpoint"], body, good * 2) == (401, b"")
        assert post(ready["endpoint"], body, []) == (401, b"")
        assert post(ready["endpoint"], body, [("Authorization", "Bearer nope")]) == (
            401,
            b"",
        )
        assert len(control(ready, "GET", "/receipts")["requests"]) == 1


def test_server_errors_discovery_reset_and_barriers(files: dict[str, Path]) -> None:
    with server(files, {"mode": "none"}) as ready:
        endpoint = ready["endpoint"]
        unknown = json.loads(json.dumps(SCENARIOS[0]["request"]))
        unknown["id"] = unknown["params"]["event"]["id"] = "no-such-scenario"
        status, body = post(endpoint, json.dumps(unknown).encode(), [])
        assert status == 200 and json.loads(body)["error"]["code"] == -32602
        invalid = {
            "jsonrpc": "2.0",
            "id": "x",
            "method": "hooks/intercept",
            "params": {},
        }
        assert (
            json.loads(post(endpoint, json.dumps(invalid).encode(), [])[1])["error"]["code"]
            == -32602
        )
        discovery = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "hooks/capabilities",
            "params": {"protocolVersion": "draft"},
        }
        answer = json.loads(post(endpoint, json.dumps(discovery).encode(), [])[1])
        assert answer["id"] == 5 and "manifest" in answer["result"]
        connection = http.client.HTTPConnection(endpoint.split("://")[1].split("/")[0], timeout=10)
        connection.request("GET", "/capabilities")
        got = json.loads(connection.getresponse().read())
        connection.close()
        # the bare capabilities of the manifest's tool.before entry, not an envelope
        [tool_before] = [
            e for e in answer["result"]["manifest"]["events"] if e["event"] == "tool.before"
        ]
        assert got == tool_before["capabilities"]
        status, body = post(endpoint, b"{not json", [])
        assert status == 400
        assert json.loads(body) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "parse error"},
        }
        receipts = control(ready, "GET", "/receipts")
        assert [r["id"] for r in receipts["requests"]] == ["no-such-scenario", "x"]
        assert receipts["discovery"] == [discovery]  # GET /capabilities is never recorded
        assert receipts["notifications"] == []
        assert [e["kind"] for e in logged_receipts(files)] == ["request", "request", "discovery"]

        gated = dict(SCENARIOS[0], barrier="gate")
        files["full"].write_text(json.dumps({"version": 1, "scenarios": [gated]}))
        assert control(ready, "POST", "/reset", {"scenarioFile": str(files["full"])}) == {
            "reset": True
        }
        assert control(ready, "GET", "/receipts") == {
            "requests": [],
            "discovery": [],
            "notifications": [],
        }
        assert len(logged_receipts(files)) == 3  # the log is never truncated
        answers: list[Any] = []
        body = json.dumps(gated["request"]).encode()
        worker = threading.Thread(target=lambda: answers.append(post(endpoint, body, [])))
        worker.start()
        while not control(ready, "GET", "/receipts")["requests"]:
            time.sleep(0.01)
        assert answers == []
        assert control(ready, "POST", "/release", {"barrier": "gate"}) == {"released": "gate"}
        worker.join(timeout=10)
        assert json_equal(json.loads(answers[0][1]), gated["response"])


# Authentication and TLS -------------------------------------------------------


class TokenIssuer:
    """A local OAuth token endpoint (client credentials) for the tests."""

    def __init__(self, token: str, context: ssl.SSLContext | None) -> None:
        issuer = self
        self.requests: list[dict[str, list[str]]] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                issuer.requests.append(form)
                ok = form.get("client_secret") == ["client-secret"]
                body = (
                    json.dumps(
                        {
                            "access_token": token,
                            "token_type": "Bearer",
                            "expires_in": 600,
                        }
                    ).encode()
                    if ok
                    else b"{}"
                )
                self.send_response(200 if ok else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if context else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}/token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> TokenIssuer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def oauth_client(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "mode": "oauth",
        "tokenEndpoint": url,
        "clientId": "harness",
        "clientSecret": "client-secret",
        "audience": AUDIENCE,
        **extra,
    }


def jwt_server(mode: str, **key: Any) -> dict[str, Any]:
    return {
        "mode": mode,
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "purpose": mode,
        "clock": CLOCK,
        **key,
    }


def test_strict_bearer_over_https(files: dict[str, Path], pki: Pki) -> None:
    with server(files, {"mode": "bearer", "token": "t0ken"}, https_server(pki)) as ready:
        assert ready["endpoint"].startswith("https://127.0.0.1:")
        report = run_http_client(
            files,
            ready["endpoint"],
            {"mode": "bearer", "token": "t0ken"},
            https_client(pki),
        )
        assert_all_pass(report)
        wrong = run_http_client(
            files,
            ready["endpoint"],
            {"mode": "bearer", "token": "wrong"},
            https_client(pki),
        )
        assert_all_failed(wrong, "HTTP status 401")
        untrusted = run_http_client(
            files,
            ready["endpoint"],
            {"mode": "bearer", "token": "t0ken"},
            {"caFile": str(pki.other_ca)},
        )
        assert_all_failed(untrusted, "certificate verification failed")
    assert_receipts_match(files)


def test_strict_client_refuses_token_over_plain_http(files: dict[str, Path]) -> None:
    report = run_http_client(
        files, "http://127.0.0.1:9/intercept", {"mode": "bearer", "token": "t0ken"}
    )
    assert_all_failed(report, "plain HTTP")


def test_strict_mtls(files: dict[str, Path], pki: Pki) -> None:
    tls = https_server(pki, clientCaFile=str(pki.ca))
    with server(files, {"mode": "mtls"}, tls) as ready:
        good = https_client(pki, certFile=str(pki.client_cert), keyFile=str(pki.client_key))
        assert_all_pass(run_http_client(files, ready["endpoint"], {"mode": "mtls"}, good))
        stray = https_client(
            pki, certFile=str(pki.other_client_cert), keyFile=str(pki.other_client_key)
        )
        assert_all_failed(
            run_http_client(files, ready["endpoint"], {"mode": "mtls"}, stray),
            "",
        )
        context = ssl.create_default_context(cafile=str(pki.ca))
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            post(ready["endpoint"], b"{}", [], context)
    assert_receipts_match(files)


def test_strict_oauth_es256(files: dict[str, Path], pki: Pki) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki.server_cert), str(pki.server_key))
    token = sign_token(pki.token_private)
    server_auth = jwt_server("oauth", publicKeyFile=str(pki.token_public))
    with (
        TokenIssuer(token, context) as issuer,
        server(files, server_auth, https_server(pki)) as ready,
    ):
        report = run_http_client(
            files, ready["endpoint"], oauth_client(issuer.url), https_client(pki)
        )
        assert_all_pass(report)
        assert len(issuer.requests) == 1
        assert issuer.requests[0]["grant_type"] == ["client_credentials"]
        assert issuer.requests[0]["audience"] == [AUDIENCE]
        denied = run_http_client(
            files,
            ready["endpoint"],
            oauth_client(issuer.url, clientSecret="bad"),
            https_client(pki),
        )
        assert_all_failed(denied, "token endpoint answered HTTP 401")


def test_strict_workload_es256(files: dict[str, Path], pki: Pki) -> None:
    server_auth = jwt_server("workload", publicKeyFile=str(pki.token_public))
    with server(files, server_auth, https_server(pki)) as ready:
        good = sign_token(pki.token_private, purpose="workload")
        assert_all_pass(
            run_http_client(
                files,
                ready["endpoint"],
                {"mode": "workload", "assertion": good},
                https_client(pki),
            )
        )
        expired = sign_token(pki.token_private, purpose="workload", exp=CLOCK - 1)
        assert_all_failed(
            run_http_client(
                files,
                ready["endpoint"],
                {"mode": "workload", "assertion": expired},
                https_client(pki),
            ),
            "401",
        )


def test_compat_oauth_hs256_and_mtls(files: dict[str, Path], pki: Pki) -> None:
    token = sign_token(HS_KEY, algorithm="HS256")
    server_auth = jwt_server("oauth", profile="compat", signingKey=HS_KEY)
    with TokenIssuer(token, None) as issuer, server(files, server_auth) as ready:
        assert ready["endpoint"].startswith("http://")
        assert_all_pass(
            run_http_client(files, ready["endpoint"], oauth_client(issuer.url, profile="compat"))
        )
    files["receipts"].unlink()
    files["ready"].unlink()
    mtls_files = {
        "caFile": str(pki.ca),
        "certFile": str(pki.server_cert),
        "keyFile": str(pki.server_key),
    }
    with server(files, {"mode": "mtls", "profile": "compat", **mtls_files}) as ready:
        assert ready["endpoint"].startswith("https://")
        client_auth = {
            "mode": "mtls",
            "profile": "compat",
            "caFile": str(pki.ca),
            "certFile": str(pki.client_cert),
            "keyFile": str(pki.client_key),
        }
        assert_all_pass(run_http_client(files, ready["endpoint"], client_auth))
    assert_receipts_match(files)
