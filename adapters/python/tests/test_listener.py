"""The server's AHP and control listeners in process, over real sockets.

Bad input (docs/CONTRACT.md, "Bad input"), receipts by kind, notifications,
barriers and ``/reset``. The servers here use a 0.5 s read timeout so stalls
are quick to test; the contract's 10 s is the default (checked on its own).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import request, response
from conftest import assert_control_answer, assert_receipt_log

from ahp_py.contract.config import load_server
from ahp_py.contract.server import ServerProcess
from ahp_py.sdk import listener as ahp_listener
from ahp_py.sdk import schemas
from ahp_py.suites.core import build_backend

READ_TIMEOUT = 0.5
MIB = 1024 * 1024
PLAIN = request("tool.before", ["message"], event_id="row-plain")
GATED = request("tool.before", ["message"], event_id="row-gated")
OTHER = request("tool.after", ["message"], event_id="row-other")
ROWS = [
    {"id": "row-plain", "request": PLAIN, "response": response(PLAIN)},
    {"id": "row-gated", "request": GATED, "response": response(GATED), "barrier": "gate"},
    {"id": "row-other", "request": OTHER, "response": response(OTHER)},
]
TOKEN = "t0ken-for-tests"


class Running:
    """One in-process server and what the tests need of it."""

    def __init__(self, process: ServerProcess, home: Path) -> None:
        self.process = process
        self.home = home
        assert process.listener is not None and process.control is not None
        self.port = process.listener.port
        self.control_port = process.control.port
        self.receipt_log = home / "receipts.jsonl"

    def control(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.control_port, timeout=10)
        try:
            payload = None if body is None else json.dumps(body).encode()
            connection.request(method, path, payload, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            data = json.loads(answer.read() or b"null")
        finally:
            connection.close()
        if answer.status == 200:
            assert_control_answer(path, data)
        return answer.status, data

    def receipts(self) -> dict[str, Any]:
        status, answer = self.control("GET", "/receipts")
        assert status == 200
        return dict(answer)

    def post(self, message: Any, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request("POST", "/intercept", body, headers or {})
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()


def start(tmp_path: Path, auth: dict[str, Any]) -> Running:
    scenario_file = tmp_path / "scenarios.json"
    scenario_file.write_text(json.dumps({"version": 1, "scenarios": ROWS}))
    config = {
        "transport": "http",
        "readinessFile": str(tmp_path / "ready.json"),
        "scenarioFile": str(scenario_file),
        "auth": auth,
        "receiptLog": str(tmp_path / "receipts.jsonl"),
    }
    (tmp_path / "server.json").write_text(json.dumps(config))
    settings = load_server(str(tmp_path / "server.json"))
    schema_set = schemas.load()
    backend = build_backend(
        schema_set, settings.receipt_log, settings.scenarios, settings.scenario_file
    )
    process = ServerProcess(settings, backend, read_timeout=READ_TIMEOUT, poll_interval=0.02)
    process.start()
    return Running(process, tmp_path)


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Running]:
    running = start(tmp_path, {"mode": "none", "profile": "strict"})
    yield running
    running.process.close()


@pytest.fixture()
def bearer_server(tmp_path: Path) -> Iterator[Running]:
    running = start(tmp_path, {"mode": "bearer", "profile": "compat", "token": TOKEN})
    yield running
    running.process.close()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP response from a raw socket: status, headers (lower-case), body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the peer closes the connection (EOF or reset) within ``seconds``."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def head(length: int | None = None, extra: str = "", path: str = "/intercept") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def nested(depth: int) -> dict[str, Any]:
    """An intercept-shaped message whose deepest container sits ``depth`` levels down."""
    value: Any = []
    for _ in range(depth - 3):
        value = [value]
    return {"jsonrpc": "2.0", "id": "deep", "method": "hooks/intercept", "params": {"x": value}}


PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}


# Defaults ---------------------------------------------------------------------


def test_contract_bounds_are_the_defaults(server: Running) -> None:
    assert ahp_listener.READ_TIMEOUT == 10.0
    assert ahp_listener.MAX_BODY == 8 * MIB
    assert ahp_listener.Listener.request_queue_size >= 128
    assert server.process.listener is not None
    assert server.process.listener.request_queue_size >= 128
    listener = ahp_listener.Listener(ahp_listener.Handler)
    assert listener.read_timeout == 10.0
    listener.server_close()


# Strict JSON and receipts -----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":"a","id":"b","method":"hooks/intercept"}',
        b'{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":NaN}',
        b'{"jsonrpc":"2.0","id":"a","method":"hooks/intercept","params":-Infinity}',
        b'{"jsonrpc":"2.0","id":"\xff","method":"hooks/intercept"}',
        b'{"jsonrpc":"2.0"} {}',
        b"",
        json.dumps(nested(513)).encode(),
    ],
    ids=["duplicate-key", "nan", "infinity", "invalid-utf8", "trailing", "empty", "depth-513"],
)
def test_malformed_request_is_parse_error_400(server: Running, body: bytes) -> None:
    status, answer = server.post(body)
    assert status == 400
    assert json.loads(answer) == PARSE_ERROR
    assert server.receipts() == {"requests": [], "discovery": [], "notifications": []}
    assert assert_receipt_log(server.receipt_log) == []


def test_depth_512_is_not_malformed(server: Running) -> None:
    status, answer = server.post(nested(512))
    assert status == 200
    assert json.loads(answer)["error"]["code"] == -32602
    assert [r["id"] for r in server.receipts()["requests"]] == ["deep"]


def test_receipts_by_kind_and_notifications_get_no_reply(server: Running) -> None:
    notification = {"jsonrpc": "2.0", "method": "hooks/observe", "params": {"x": 1}}
    status, body = server.post(notification)
    assert (status, body) == (204, b"")
    discovery = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "hooks/capabilities",
        "params": {"protocolVersion": "draft"},
    }
    assert server.post(discovery)[0] == 200
    status, body = server.post(PLAIN)
    assert status == 200 and json.loads(body) == response(PLAIN)
    unknown = {**PLAIN, "id": "nope", "params": {**PLAIN["params"]}}
    assert json.loads(server.post(unknown)[1])["error"]["code"] == -32602
    assert server.post([PLAIN])[0] == 200  # not one object: -32600, no receipt
    receipts = server.receipts()
    assert receipts["notifications"] == [notification]
    assert receipts["discovery"] == [discovery]
    assert [r["id"] for r in receipts["requests"]] == ["row-plain", "nope"]
    kinds = [entry["kind"] for entry in assert_receipt_log(server.receipt_log)]
    assert kinds == ["notification", "discovery", "request", "request"]


def get_capabilities(port: int, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/capabilities", headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.getheader("Content-Type") or "", answer.read()
    finally:
        connection.close()


def tool_before_capabilities(manifest: dict[str, Any]) -> Any:
    [entry] = [
        e for e in manifest["events"] if e["event"] == "tool.before" and "intercept" in e["modes"]
    ]
    return entry["capabilities"]


def test_get_capabilities_is_the_bare_tool_before_capabilities_unrecorded(
    server: Running,
) -> None:
    """``GET /capabilities`` answers exactly the ``capabilities`` of the tool.before
    entry of the manifest this server answers ``hooks/capabilities`` with (no
    JSON-RPC envelope: upstream clients validate it against capabilities.schema.json),
    and it is never a receipt."""
    status, content_type, body = get_capabilities(server.port)
    assert (status, content_type) == (200, "application/json")
    got = json.loads(body)
    assert server.receipts() == {"requests": [], "discovery": [], "notifications": []}
    assert assert_receipt_log(server.receipt_log) == []
    discovery = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "hooks/capabilities",
        "params": {"protocolVersion": "draft"},
    }
    status, answer = server.post(discovery)  # POSTed discovery: the envelope, recorded
    assert status == 200 and json.loads(answer)["id"] == 1
    assert got == tool_before_capabilities(json.loads(answer)["result"]["manifest"])
    assert schemas.load().error("capabilities.schema.json", got) is None
    assert server.receipts()["discovery"] == [discovery]


def test_get_capabilities_authenticates_first(bearer_server: Running) -> None:
    assert get_capabilities(bearer_server.port) == (401, "", b"")
    assert get_capabilities(bearer_server.port, {"Authorization": "Bearer wrong"})[0] == 401
    status, _, body = get_capabilities(bearer_server.port, {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and "effects" in json.loads(body)
    assert bearer_server.receipts() == {"requests": [], "discovery": [], "notifications": []}


def test_204_keeps_the_connection_alive(server: Running) -> None:
    sock = connect(server.port)
    with sock:
        body = json.dumps({"jsonrpc": "2.0", "method": "hooks/observe"}).encode()
        sock.sendall(head(len(body)) + body)
        status, headers, rest = read_response(sock)
        assert status == 204 and "content-length" not in headers and rest == b""
        body = json.dumps(PLAIN).encode()
        sock.sendall(head(len(body)) + body)
        status, _, answer = read_response(sock)
        assert status == 200 and json.loads(answer) == response(PLAIN)


# Authentication before the body -----------------------------------------------


def test_unauthenticated_9_mib_body_gets_401_unread(bearer_server: Running) -> None:
    """The 401 arrives while the client has sent only the headers and 64 KiB of
    a 9 MiB body: the server decided from the headers alone and buffers nothing."""
    sock = connect(bearer_server.port)
    with sock:
        started = time.monotonic()
        sock.sendall(head(9 * MIB) + b"x" * 65536)
        status, headers, body = read_response(sock)
        assert status == 401 and body == b"" and headers.get("connection") == "close"
        assert time.monotonic() - started < READ_TIMEOUT
        assert closed_within(sock, 5)
    assert bearer_server.receipts()["requests"] == []
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert bearer_server.post(PLAIN, good)[0] == 200
    assert bearer_server.post(PLAIN, {"Authorization": "Bearer wrong"}) == (401, b"")
    assert len(bearer_server.receipts()["requests"]) == 1


def test_expect_100_continue_only_after_authentication(bearer_server: Running) -> None:
    sock = connect(bearer_server.port)
    with sock:
        sock.sendall(head(100, "Expect: 100-continue\r\n"))
        assert read_response(sock)[0] == 401
    sock = connect(bearer_server.port)
    with sock:
        body = json.dumps(PLAIN).encode()
        auth = f"Expect: 100-continue\r\nAuthorization: Bearer {TOKEN}\r\n"
        sock.sendall(head(len(body), auth))
        assert read_response(sock)[0] == 100
        sock.sendall(body)
        status, _, answer = read_response(sock)
        assert status == 200 and json.loads(answer) == response(PLAIN)


# Bounded reads ----------------------------------------------------------------


def test_body_over_8_mib_gets_413_unread(server: Running) -> None:
    sock = connect(server.port)
    with sock:
        sock.sendall(head(8 * MIB + 1))
        status, headers, _ = read_response(sock)
        assert status == 413 and headers.get("connection") == "close"
        assert closed_within(sock, 5)
    sock = connect(server.port)
    with sock:  # the same bound for a chunked body: refused at the chunk size line
        sock.sendall(head(None, "Transfer-Encoding: chunked\r\n") + b"900000\r\n")
        assert read_response(sock)[0] == 413
    assert server.receipts()["requests"] == []


@pytest.mark.parametrize(
    "size_line",
    [b"-1\r\n", b"zz\r\n", b"0x10\r\n", b"1_0\r\n", b"+5\r\n", b"\r\n", b"1" * 2000 + b"\r\n"],
    ids=["negative", "not-hex", "0x-prefix", "underscore", "plus", "empty", "overlong"],
)
def test_bad_chunk_size_gets_400(server: Running, size_line: bytes) -> None:
    sock = connect(server.port)
    with sock:
        sock.sendall(head(None, "Transfer-Encoding: chunked\r\n") + size_line)
        status, headers, _ = read_response(sock)
        assert status == 400 and headers.get("connection") == "close"
    assert server.receipts()["requests"] == []


def test_valid_chunked_body_is_answered(server: Running) -> None:
    body = json.dumps(PLAIN).encode()
    chunks = b"".join(
        b"%x;ext=1\r\n" % len(part) + part + b"\r\n" for part in (body[:10], body[10:])
    )
    sock = connect(server.port)
    with sock:
        sock.sendall(head(None, "Transfer-Encoding: chunked\r\n") + chunks + b"0\r\n\r\n")
        status, _, answer = read_response(sock)
        assert status == 200 and json.loads(answer) == response(PLAIN)


@pytest.mark.parametrize(
    "extra",
    [
        "Content-Length: -1\r\n",
        "Content-Length: 1e3\r\n",
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
    ],
    ids=["negative", "not-digits", "conflicting", "with-chunked"],
)
def test_bad_length_gets_400(server: Running, extra: str) -> None:
    sock = connect(server.port)
    with sock:
        sock.sendall(head(None, extra))
        assert read_response(sock)[0] == 400


def test_unknown_transfer_coding_gets_501(server: Running) -> None:
    sock = connect(server.port)
    with sock:
        sock.sendall(head(None, "Transfer-Encoding: gzip\r\n"))
        assert read_response(sock)[0] == 501


@pytest.mark.parametrize(
    "sent",
    [b"POST /intercept HTTP/1.1\r\nHost: 127", head(100) + b'{"jsonrpc"', b""],
    ids=["stalled-header", "stalled-body", "idle"],
)
def test_stalled_connection_is_closed(server: Running, sent: bytes) -> None:
    sock = connect(server.port)
    with sock:
        sock.sendall(sent)
        started = time.monotonic()
        assert closed_within(sock, READ_TIMEOUT * 6)
        assert time.monotonic() - started >= READ_TIMEOUT * 0.8
    assert server.receipts()["requests"] == []


def test_200_concurrent_connections_are_all_answered(server: Running) -> None:
    body = json.dumps(PLAIN).encode()
    sockets = [connect(server.port) for _ in range(200)]
    try:
        for sock in sockets:
            sock.sendall(head(len(body)) + body)
        for sock in sockets:
            status, _, answer = read_response(sock)
            assert status == 200 and json.loads(answer) == response(PLAIN)
    finally:
        for sock in sockets:
            sock.close()
    assert len(server.receipts()["requests"]) == 200


def test_server_keeps_serving_after_bad_input(server: Running) -> None:
    for sent in (b"GARBAGE\r\n\r\n", head(None, "Transfer-Encoding: chunked\r\n") + b"-1\r\n"):
        sock = connect(server.port)
        with sock:
            sock.sendall(sent)
            assert read_response(sock)[0] >= 400
    sock = connect(server.port)
    sock.sendall(head(9 * MIB))
    sock.close()  # gone mid-request
    assert server.post(PLAIN)[0] == 200
    assert server.control("GET", "/health") == (200, {"ready": True})
    assert [r["id"] for r in server.receipts()["requests"]] == ["row-plain"]


# Barriers and reset -----------------------------------------------------------


def post_in_thread(server: Running, message: Any) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(server.post(message)))
    thread.start()
    return thread, answers


def wait_for_receipts(server: Running, count: int) -> None:
    deadline = time.monotonic() + 10
    while len(server.receipts()["requests"]) < count:
        assert time.monotonic() < deadline, "the request was never receipted"
        time.sleep(0.01)


def test_barrier_holds_reply_and_others_are_served(server: Running) -> None:
    thread, answers = post_in_thread(server, GATED)
    wait_for_receipts(server, 1)  # receipted before the reply is held
    assert server.post(PLAIN) == (200, json.dumps(response(PLAIN), separators=(",", ":")).encode())
    assert server.post(OTHER)[0] == 200
    time.sleep(0.1)
    assert answers == []
    assert server.control("POST", "/release", {"barrier": "gate"}) == (200, {"released": "gate"})
    thread.join(10)
    assert answers and json.loads(answers[0][1]) == response(GATED)
    # Sticky: the same barrier lets the next request through at once.
    assert json.loads(server.post(GATED)[1]) == response(GATED)
    # Until /reset, which forgets the release (and only the release).
    assert server.control("POST", "/reset", {}) == (200, {"reset": True})
    thread, answers = post_in_thread(server, GATED)
    wait_for_receipts(server, 1)
    time.sleep(0.1)
    assert answers == []
    server.process.finish()  # what /shutdown does: every barrier opens
    thread.join(10)
    assert answers and json.loads(answers[0][1]) == response(GATED)


def test_reset_clears_lists_loads_file_and_keeps_log(server: Running, tmp_path: Path) -> None:
    assert server.post(PLAIN)[0] == 200
    assert server.post({"jsonrpc": "2.0", "method": "hooks/observe"})[0] == 204
    before = server.receipt_log.read_bytes()
    replacement = tmp_path / "other.json"
    row = {"id": "row-other", "request": OTHER, "response": {"jsonrpc": "2.0", "id": "x"}}
    replacement.write_text(json.dumps({"scenarios": [row]}))
    assert server.control("POST", "/reset", {"scenarioFile": str(replacement)}) == (
        200,
        {"reset": True},
    )
    assert server.receipts() == {"requests": [], "discovery": [], "notifications": []}
    assert server.receipt_log.read_bytes() == before  # append-only
    assert json.loads(server.post(OTHER)[1]) == row["response"]
    assert json.loads(server.post(PLAIN)[1])["error"]["code"] == -32602  # no longer loaded
    bad = tmp_path / "bad.json"
    bad.write_text('{"scenarios": [], "scenarios": []}')
    status, answer = server.control("POST", "/reset", {"scenarioFile": str(bad)})
    assert status == 400 and "duplicate" in answer["error"]
    assert json.loads(server.post(OTHER)[1]) == row["response"]  # the old table stays
    assert [e["kind"] for e in assert_receipt_log(server.receipt_log)] == [
        "request",
        "notification",
        "request",
        "request",
        "request",
    ]
