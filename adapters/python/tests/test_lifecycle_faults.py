"""Operational failures, several backends, silent observers (docs/LIFECYCLE.md,
the [ext] section): the server's scripted faults (``server-error``,
``malformed``, ``timeout``) and silent observers over HTTP (in process, and
the process's prompt shutdown) and stdio; the client's chains against the real
server over both transports: every operational failure in ``called`` and
``failures``, per-subscription deadlines, the unreachable backend, and
notifications that are never waited for. Every assertion is a literal outcome
of hand-built rows."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import modify, response
from conftest import ADAPTER_DIR
from lifecycle_kit import (
    ORIGINAL,
    StdioServer,
    ahp_command,
    chain_row,
    http_server_process,
    lc_request,
    lifecycle_server,
    request_json,
    row,
    run_lifecycle_client,
    server_config,
    settled,
    sub,
    wait_ready,
    write,
)

from ahp_py.contract.config import ConfigError, load_suite_client
from ahp_py.suites.lifecycle import SPEC

MALFORMED = b'{"jsonrpc": "2.0", "id": '
SERVER_ERROR = "server-error"


def fault(kind: str) -> dict[str, str]:
    return {"fault": kind}


def scripted_error(rid: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "error": {"code": -32603, "message": "scripted server error"},
    }


def observe_note(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }


def http_exchange(port: int, message: Any, path: str = "/intercept") -> tuple[int, str, bytes]:
    """(status, Content-Type, raw body) of one POST."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", path, json.dumps(message).encode(), {"Content-Type": "x"})
        answer = connection.getresponse()
        return answer.status, answer.getheader("Content-Type") or "", answer.read()
    finally:
        connection.close()


class Hung:
    """A raw POST whose answer is read later (an exchange the server may never answer)."""

    def __init__(self, port: int, message: Any, path: str = "/intercept") -> None:
        body = json.dumps(message).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(head + body)

    def silent_for(self, seconds: float) -> bool:
        """True when nothing at all arrives (and the connection stays open) meanwhile."""
        self.sock.settimeout(seconds)
        try:
            self.sock.recv(1)  # a byte, or the connection closed: not silent
        except TimeoutError:
            return True
        return False

    def closed_unanswered(self, seconds: float = 3.0) -> bool:
        """True when the server closes the connection without writing a byte."""
        self.sock.settimeout(seconds)
        try:
            return self.sock.recv(65536) == b""
        except (TimeoutError, ConnectionResetError):
            return False

    def close(self) -> None:
        self.sock.close()


# The server over HTTP ---------------------------------------------------------

SE = lc_request("f-se:a")
MF = lc_request("f-mf:a")
TO = lc_request("f-to:a")
OB = lc_request("f-ob:a")
SERVER_ROWS = [
    row(
        "f-se",
        {"a": SE},
        {"a": settled(SE, {"v": "unused"})},
        responseSequences={"a": [fault(SERVER_ERROR), settled(SE, {"v": 2})]},
    ),
    row(
        "f-mf",
        {"a": MF},
        {"a": settled(MF, {"v": "unused"})},
        responseSequences={"a": [fault("malformed")]},
    ),
    row(
        "f-to",
        {"a": TO},
        {"a": settled(TO, {"v": "unused"})},
        responseSequences={"a": [fault("timeout"), settled(TO, {"v": 2}), fault("timeout")]},
    ),
    row(
        "f-ob",
        {"a": OB},
        {"a": settled(OB, {"v": "unused"})},
        observeFaults={"a": ["silent", None, "silent"]},
    ),
]


def kinds_of(entries: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["kind"], e.get("id", e.get("eventId"))) for e in entries]


def test_http_server_error_is_held_then_a_500_with_the_error_object(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, SERVER_ROWS) as server:
        out: list[Any] = []
        thread = threading.Thread(target=lambda: out.append(http_exchange(server.port, SE)))
        thread.start()
        server.ok("/wait", {"id": "f-se:a", "count": 1})
        thread.join(0.3)
        assert thread.is_alive(), "a fault entry is held until released like any reply"
        assert server.kinds() == [("received", "f-se:a")]
        server.ok("/release", {"id": "f-se:a"})
        thread.join(5)
        status, content_type, body = out[0]
        assert (status, content_type) == (500, "application/json")
        assert json.loads(body) == scripted_error("f-se:a")
        assert http_exchange(server.port, SE)[0] == 200  # the next entry of the sequence
        assert server.kinds() == [("received", "f-se:a"), ("replied", "f-se:a")] * 2


def test_http_malformed_is_the_25_bytes_with_status_200(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, SERVER_ROWS) as server:
        server.ok("/release", {"id": "f-mf:a"})
        status, content_type, body = http_exchange(server.port, MF)
        assert (status, content_type, body, len(body)) == (200, "application/json", MALFORMED, 25)
        assert server.kinds() == [("received", "f-mf:a"), ("replied", "f-mf:a")]


def test_http_timeout_never_answers_not_even_at_shutdown(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, SERVER_ROWS) as server:
        server.ok("/release", {"id": "f-to:a"})
        first = Hung(server.port, TO)
        try:
            server.ok("/wait", {"id": "f-to:a", "count": 1})
            assert first.silent_for(0.4)
        finally:
            first.close()  # the client gives up: the server's handler ends
        assert http_exchange(server.port, TO)[0] == 200  # the second entry, at once
        third = Hung(server.port, TO)
        try:
            server.ok("/wait", {"id": "f-to:a", "count": 3})
            assert third.silent_for(0.3)
            started = time.monotonic()
            server.process.finish()  # what /shutdown does: every held reply goes out
            assert third.closed_unanswered()
            assert time.monotonic() - started < 2
        finally:
            third.close()
        assert server.kinds() == [
            ("received", "f-to:a"),
            ("received", "f-to:a"),
            ("replied", "f-to:a"),
            ("received", "f-to:a"),
        ]


def test_http_silent_observer_records_and_never_answers(tmp_path: Path) -> None:
    note = observe_note(OB["params"]["event"])
    with lifecycle_server(tmp_path, SERVER_ROWS) as server:
        first = Hung(server.port, note, "/observe")
        try:
            server.ok("/wait-observed", {"eventId": "f-ob:a", "count": 1})  # recorded at once
            assert first.silent_for(0.4)
        finally:
            first.close()
        status, _, body = http_exchange(server.port, note, "/observe")
        assert status == 200 and json.loads(body)["id"] == "unsolicited-observer"
        third = Hung(server.port, note, "/observe")
        try:
            server.ok("/wait-observed", {"eventId": "f-ob:a", "count": 3})
            server.process.finish()
            assert third.closed_unanswered()
        finally:
            third.close()
        assert server.kinds() == [("observed", "f-ob:a")] * 3


def test_http_process_exits_promptly_with_unanswered_exchanges(tmp_path: Path) -> None:
    process = subprocess.Popen(
        ahp_command("lifecycle-server", server_config(tmp_path, SERVER_ROWS)),
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    hung: list[Hung] = []
    try:
        ready = wait_ready(tmp_path / "ready.json", process)
        port = int(ready["endpoint"].rsplit(":", 1)[1].split("/")[0])
        control = int(ready["controlEndpoint"].rsplit(":", 1)[1])
        hung.append(Hung(port, TO))
        hung.append(Hung(port, observe_note(OB["params"]["event"]), "/observe"))
        assert request_json(control, "POST", "/wait", {"id": "f-to:a", "count": 1})[0] == 200
        body = {"eventId": "f-ob:a", "count": 1}
        assert request_json(control, "POST", "/wait-observed", body)[0] == 200
        started = time.monotonic()
        assert request_json(control, "POST", "/shutdown", {})[0] == 200
        assert process.wait(timeout=5) == 0
        assert time.monotonic() - started < 3
        assert all(h.closed_unanswered() for h in hung)
    finally:
        for h in hung:
            h.close()
        if process.poll() is None:
            process.kill()
            process.wait()


# The server over stdio --------------------------------------------------------

ST = lc_request("f-st:a")
STDIO_ROWS = [
    row(
        "f-st",
        {"a": ST},
        {"a": settled(ST, {"v": "unused"})},
        responseSequences={
            "a": [fault(SERVER_ERROR), fault("malformed"), fault("timeout"), settled(ST, {"v": 4})]
        },
        observeFaults={"a": ["silent"]},
    )
]


def test_stdio_faults_and_silent_observer(tmp_path: Path) -> None:
    server = StdioServer(tmp_path, STDIO_ROWS)
    try:
        server.write(ST)
        server.ok("/wait", {"id": "f-st:a", "count": 1})
        assert server.raw_line(0.3) is None  # held until released
        server.ok("/release", {"id": "f-st:a"})
        assert server.line() == scripted_error("f-st:a")
        server.write(ST)
        assert server.raw_line() == MALFORMED
        server.write(ST)
        server.ok("/wait", {"id": "f-st:a", "count": 3})
        assert server.raw_line(0.4) is None  # the timeout: no line, ever
        note = observe_note(ST["params"]["event"])
        server.write(note)
        server.ok("/wait-observed", {"eventId": "f-st:a", "count": 1})
        assert server.raw_line(0.3) is None  # silent
        server.write(note)
        assert server.line()["id"] == "unsolicited-observer"  # past the end: the usual answer
        server.write(ST)
        assert server.line() == settled(ST, {"v": 4})  # the loop kept reading meanwhile
        assert kinds_of(server.entries()) == [
            ("received", "f-st:a"),
            ("replied", "f-st:a"),
            ("received", "f-st:a"),
            ("replied", "f-st:a"),
            ("received", "f-st:a"),
            ("observed", "f-st:a"),
            ("observed", "f-st:a"),
            ("received", "f-st:a"),
            ("replied", "f-st:a"),
        ]
    finally:
        assert server.close() == 0


# The client: chains against the real server -----------------------------------

SETTLE = [modify("input", "replace", {"v": 2}), {"type": "deny", "reason": "policy"}]


def subs(sid: str, policy: str = "fail-open", **first: Any) -> list[dict[str, Any]]:
    """x (with ``first``'s extra fields), y (omit), z, and an observer."""
    return [
        {**sub(sid, "x", policy=policy), **first},
        sub(sid, "y", content="omit"),
        sub(sid, "z"),
        sub(sid, "audit", mode="observe"),
    ]


def faulty(sid: str, first: Any, policy: str = "fail-open", **fields: Any) -> dict[str, Any]:
    """A chain whose first call gets ``first`` (a fault or a reply), the second
    ``SETTLE``."""
    scenario = chain_row(sid, subs(sid, policy, **fields), [SETTLE])
    if callable(first):
        first = first(scenario["requests"]["a"])
    scenario["responseSequences"]["a"] = [first, scenario["responses"]["a"]]
    return scenario


def other_id(request: dict[str, Any]) -> dict[str, Any]:
    return {**response(request, *SETTLE), "id": "someone-else"}


def rpc_error(request: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": "no"}}


def unreachable_row(sid: str) -> dict[str, Any]:
    scenario = chain_row(sid, subs(sid, backend="unreachable"), [SETTLE])
    return scenario


def silent_row(sid: str) -> dict[str, Any]:
    scenario = chain_row(sid, subs(sid), [[{"type": "deny", "reason": "early"}]])
    scenario["observeFaults"] = {"a": ["silent", "silent"]}
    scenario["chain"]["holdObservers"] = True
    return scenario


DEADLINE = 300  # ms, every subscription deadline here
CLIENT_ROWS = [
    faulty("c-server-error", fault(SERVER_ERROR)),
    faulty("c-malformed", fault("malformed")),
    faulty("c-rpc-error", rpc_error),
    faulty("c-wrong-id", other_id, timeoutMs=DEADLINE),
    faulty("c-timeout", fault("timeout"), timeoutMs=DEADLINE),
    faulty("c-closed", fault("timeout"), policy="fail-closed", timeoutMs=DEADLINE),
    faulty("c-closed-error", fault(SERVER_ERROR), policy="fail-closed"),
    unreachable_row("c-unreachable"),
    silent_row("c-silent"),
]
CONFIG_TIMEOUT_MS = 20000  # no call here may wait this long


@pytest.fixture(scope="module")
def refusing() -> Iterator[str]:
    """A loopback port bound and never listening: connections are refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/intercept"
    finally:
        sock.close()


def client_run(
    home: Path, rows: list[dict[str, Any]], transport: str, **extra: Any
) -> dict[str, Any]:
    started = time.monotonic()
    if transport == "http":
        with http_server_process(home, rows) as ready:
            report = run_lifecycle_client(home, rows, "http", ready, **extra)
    else:
        report = run_lifecycle_client(home, rows, "stdio", **extra)
    report["seconds"] = time.monotonic() - started
    report["transport"] = transport
    return report


@pytest.fixture(scope="module", params=["http", "stdio"])
def run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, refusing: str
) -> dict[str, Any]:
    transport = request.param
    home = tmp_path_factory.mktemp(f"faults-{transport}")
    if transport == "http":
        backends = {"unreachable": {"endpoint": refusing}}
    else:
        backends = {"unreachable": {"command": [str(home / "no-such-backend")]}}
    return client_run(home, CLIENT_ROWS, transport, timeoutMs=CONFIG_TIMEOUT_MS, backends=backends)


def actual(report: dict[str, Any], sid: str) -> Any:
    entry = next(r for r in report["results"] if r["id"] == sid)
    assert entry["status"] == "completed", entry
    return entry["actual"]


def mine(report: dict[str, Any], sid: str) -> list[str]:
    return [
        e["kind"]
        for e in report["receipts"]["entries"]
        if sid in (e.get("id"), e.get("eventId"), e.get("scenario"))
    ]


def ids(sid: str, *names: str) -> list[str]:
    return [f"{sid}:{name}" for name in names]


def test_nothing_waited_for_the_configs_deadline(run: dict[str, Any]) -> None:
    """Deadlines are the subscriptions' own, silent observers delay nothing, and
    the client exits promptly with unanswered exchanges still open."""
    assert run["seconds"] < 12, run["seconds"]


@pytest.mark.parametrize(
    "sid", ["c-server-error", "c-malformed", "c-rpc-error", "c-wrong-id", "c-timeout"]
)
def test_an_operational_failure_is_called_failed_and_fail_open_goes_on(
    run: dict[str, Any], sid: str
) -> None:
    assert actual(run, sid) == {
        "called": ids(sid, "x", "y"),
        "failures": ids(sid, "x"),
        "observations": ids(sid, "z", "audit"),
        "input": {"v": 2},
    }
    answered = ["received", "replied"] if sid != "c-timeout" else ["received"]
    assert mine(run, sid) == [
        *answered,
        "received",
        "replied",
        "chain-settled",
        "observed",
        "observed",
    ]


def test_the_second_call_carries_nothing_from_the_failed_one(run: dict[str, Any]) -> None:
    calls = [
        e["message"]
        for e in run["receipts"]["entries"]
        if e["kind"] == "received" and e["id"] == "c-timeout"
    ]
    assert [c["params"]["event"]["tool"]["input"] for c in calls] == [ORIGINAL, ORIGINAL]
    assert calls[1]["params"]["state"] == {"permission": "none", "candidate": None}


@pytest.mark.parametrize(("sid", "answered"), [("c-closed", False), ("c-closed-error", True)])
def test_fail_closed_ends_the_chain_with_the_original_input(
    run: dict[str, Any], sid: str, answered: bool
) -> None:
    assert actual(run, sid) == {
        "called": ids(sid, "x"),
        "failures": ids(sid, "x"),
        "observations": ids(sid, "y", "z", "audit"),
        "input": ORIGINAL,
    }
    reply = ["replied"] if answered else []
    assert mine(run, sid) == ["received", *reply, "chain-settled", *["observed"] * 3]


def test_an_unreachable_backend_is_a_failure_the_server_never_sees(run: dict[str, Any]) -> None:
    sid = "c-unreachable"
    assert actual(run, sid) == {
        "called": ids(sid, "x", "y"),
        "failures": ids(sid, "x"),
        "observations": ids(sid, "z", "audit"),
        "input": {"v": 2},
    }
    assert mine(run, sid) == ["received", "replied", "chain-settled", "observed", "observed"]
    first = next(e for e in run["receipts"]["entries"] if e.get("id") == sid)
    assert first["message"]["params"]["event"]["items"] == []  # y's projection: x sent nothing


def test_silent_observers_are_no_failure_and_delay_nothing(run: dict[str, Any]) -> None:
    sid = "c-silent"
    assert actual(run, sid) == {
        "called": ids(sid, "x"),
        "failures": [],
        "observations": ids(sid, "y", "z", "audit"),
        "input": ORIGINAL,
    }
    assert mine(run, sid) == [
        "received",
        "replied",
        "chain-settled",
        *["observer-blocked", "observer-blocked", "observed"] * 3,  # our mark, the server's
    ]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_configs_deadline_and_no_backends(tmp_path: Path, transport: str) -> None:
    """Without its own ``timeoutMs`` a call gets the config's; without ``backends``
    an ``unreachable`` call still fails (nothing to reach), and the run goes on."""
    rows = [faulty("d-timeout", fault("timeout")), unreachable_row("d-unreachable")]
    report = client_run(tmp_path, rows, transport, timeoutMs=700)
    assert report["seconds"] >= 0.7
    assert actual(report, "d-timeout")["failures"] == ["d-timeout:x"]
    assert actual(report, "d-unreachable")["failures"] == ["d-unreachable:x"]
    assert "backends.unreachable" in report["stderr"]
    assert mine(report, "d-unreachable")[:2] == ["received", "replied"]  # only y's call


# The config's ``backends`` ----------------------------------------------------


def client_config(home: Path, **extra: Any) -> Path:
    scenarios = write(home / "scenarios.json", {"version": 1, "scenarios": []})
    config = {
        "suite": "lifecycle",
        "transport": "stdio",
        "scenarioFile": str(scenarios),
        "reportFile": str(home / "report.json"),
        "childPidFile": str(home / "child.json"),
        "auth": {"mode": "none", "profile": "strict"},
        "timeoutMs": 1000,
        "upload": {
            "auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
            "timeoutMs": 5000,
            "maxBytes": 1048576,
        },
        "contentSources": [],
        "serverCommand": ["python3"],
        "serverCwd": str(home),
        "serverConfig": str(home / "server.json"),
        **extra,
    }
    return write(home / "client.json", config)


def test_backends_are_optional_and_read_for_unreachable(tmp_path: Path) -> None:
    assert load_suite_client(str(client_config(tmp_path)), SPEC).backends == {}
    given = {
        "unreachable": {"command": ["/nowhere/backend"]},
        "other": {"whatever": 1},  # a name this client does not read
    }
    settings = load_suite_client(str(client_config(tmp_path, backends=given)), SPEC)
    assert list(settings.backends) == ["unreachable"]
    assert settings.backends["unreachable"].command == ["/nowhere/backend"]
    url = "http://127.0.0.1:9/intercept"
    http = {"unreachable": {"endpoint": url}}
    settings = load_suite_client(str(client_config(tmp_path, backends=http)), SPEC)
    assert settings.backends["unreachable"].endpoint == url


@pytest.mark.parametrize(
    ("backends", "field"),
    [
        ([], "backends"),
        ({"unreachable": "x"}, "backends.unreachable"),
        ({"unreachable": {"endpoint": "ftp://x"}}, "backends.unreachable.endpoint"),
        ({"unreachable": {"command": []}}, "backends.unreachable.command"),
    ],
)
def test_a_malformed_backends_is_a_config_problem(
    tmp_path: Path, backends: Any, field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_suite_client(str(client_config(tmp_path, backends=backends)), SPEC)
    assert caught.value.field == field
