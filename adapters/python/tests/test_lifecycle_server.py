"""The lifecycle server over real sockets (docs/LIFECYCLE.md, "Server"): held
intercepts and sticky releases, response sequences, receipt order, unknown ids,
observations (schema, body refs, the adversarial answer, a held observer's
``observer-blocked``), uploads (every
status), the control answers and bounded waits; stdio and the process as
real processes. Every control answer and receipt list is checked against
``schemas/contract/lifecycle-control.schema.json``."""

from __future__ import annotations

import hashlib
import http.client
import json
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ADAPTER_DIR, assert_contract
from lifecycle_kit import (
    OTHER_TOKEN,
    UPLOAD_TOKEN,
    StdioServer,
    ahp_command,
    attachment,
    chain_row,
    lc_request,
    lifecycle_server,
    raw_exchange,
    request_json,
    row,
    server_config,
    settled,
    status_of,
    wait_ready,
    write,
)
from pki import make_pki

from ahp_py.sdk.upload import send_upload

A = lc_request("srv:a")
B = lc_request("srv:b")
SEQ = lc_request("srv:seq")
ROWS = [
    row("srv", {"a": A, "b": B}, {"a": settled(A, {"v": "a"}), "b": settled(B, {"v": "b"})}),
    row(
        "seq",
        {"s": SEQ},
        {"s": settled(SEQ, {"v": "fallback"})},
        responseSequences={"s": [settled(SEQ, {"v": 1}), settled(SEQ, {"v": 2})]},
    ),
]


def post_async(server: Any, message: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(server.post(message)), daemon=True)
    thread.start()
    return thread, out


def observe_note(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }


# Intercepts -------------------------------------------------------------------


def test_intercept_is_held_until_release_and_release_is_sticky(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        thread, out = post_async(server, A)
        server.ok("/wait", {"id": "srv:a", "count": 1})
        thread.join(0.3)
        assert thread.is_alive() and not out, "the reply must be held"
        assert server.kinds() == [("received", "srv:a")]
        server.ok("/release", {"id": "srv:a"})
        thread.join(5)
        status, answer, _ = out[0]
        assert (status, answer) == (200, settled(A, {"v": "a"}))
        # sticky: the same id again is answered at once
        assert server.post(A)[:2] == (200, settled(A, {"v": "a"}))
        assert server.kinds() == [
            ("received", "srv:a"),
            ("replied", "srv:a"),
            ("received", "srv:a"),
            ("replied", "srv:a"),
        ]
        received = server.entries()[0]
        assert received == {"kind": "received", "id": "srv:a", "message": A}


def test_other_requests_are_answered_while_one_is_held(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        held, out_a = post_async(server, A)
        server.ok("/wait", {"id": "srv:a", "count": 1})
        server.ok("/release", {"id": "srv:b"})
        assert server.post(B)[:2] == (200, settled(B, {"v": "b"}))
        assert held.is_alive()
        server.ok("/release", {"id": "srv:a"})
        held.join(5)
        assert out_a[0][0] == 200
        assert server.kinds() == [
            ("received", "srv:a"),
            ("received", "srv:b"),
            ("replied", "srv:b"),
            ("replied", "srv:a"),
        ]


def test_response_sequences_answer_the_nth_receipt_and_repeat_the_last(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        server.ok("/release", {"id": "srv:seq"})
        values = [server.post(SEQ)[1]["result"]["effects"][0]["value"] for _ in range(3)]
        assert values == [{"v": 1}, {"v": 2}, {"v": 2}]


def test_a_reply_with_another_id_is_sent_unchanged(tmp_path: Path) -> None:
    odd = lc_request("odd:a")
    wrong = {**settled(odd, {"v": 1}), "id": "someone-else"}
    with lifecycle_server(tmp_path, [row("odd", {"a": odd}, {"a": wrong})]) as server:
        server.ok("/release", {"id": "odd:a"})
        assert server.post(odd)[1] == wrong


def test_unknown_and_invalid_intercepts_get_32602_at_once(tmp_path: Path) -> None:
    unknown = lc_request("nobody")
    invalid = {"jsonrpc": "2.0", "id": "srv:a", "method": "hooks/intercept", "params": {}}
    with lifecycle_server(tmp_path, ROWS) as server:
        for message in (unknown, invalid):
            status, answer, _ = server.post(message)
            assert status == 200 and answer["error"]["code"] == -32602
            assert answer["id"] == message["id"]
        assert server.kinds() == [
            ("received", "nobody"),
            ("replied", "nobody"),
            ("received", "srv:a"),
            ("replied", "srv:a"),
        ]


def test_intercept_body_refs_must_name_stored_bytes(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        status, answer, _ = server.post(lc_request("srv:a", items=[attachment("urn:uuid:never")]))
        assert status == 409 and answer["error"]["code"] == -32602
        stored = server.upload(b"bytes")[1]["ref"]
        server.ok("/release", {"id": "srv:a"})
        with_ref = lc_request("srv:a", items=[attachment(stored)])
        assert server.post(with_ref)[0] == 200


def test_capabilities_and_unknown_methods(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        ask = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "hooks/capabilities",
            "params": {"protocolVersion": "draft"},
        }
        assert "manifest" in server.post(ask)[1]["result"]
        other = {"jsonrpc": "2.0", "id": 8, "method": "hooks/other"}
        assert server.post(other)[1]["error"]["code"] == -32601
        assert server.entries() == []


def test_get_capabilities_is_the_bare_tool_before_capabilities_unrecorded(
    tmp_path: Path,
) -> None:
    """``GET /capabilities`` answers exactly the ``capabilities`` of the tool.before
    entry of the manifest ``hooks/capabilities`` is answered with (not a JSON-RPC
    envelope), ``application/json``, and records nothing."""
    with lifecycle_server(tmp_path, ROWS) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        try:
            connection.request("GET", "/capabilities")
            answer = connection.getresponse()
            content_type, got = answer.getheader("Content-Type"), json.loads(answer.read())
        finally:
            connection.close()
        assert (answer.status, content_type) == (200, "application/json")
        ask = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "hooks/capabilities",
            "params": {"protocolVersion": "draft"},
        }
        manifest = server.post(ask)[1]["result"]["manifest"]
        [entry] = [
            e
            for e in manifest["events"]
            if e["event"] == "tool.before" and "intercept" in e["modes"]
        ]
        assert got == entry["capabilities"]
        assert server.entries() == []


# Observations -----------------------------------------------------------------


def test_observation_of_a_scenario_event_gets_the_adversarial_answer(tmp_path: Path) -> None:
    note = observe_note(A["params"]["event"])
    with lifecycle_server(tmp_path, ROWS) as server:
        status, answer, _ = server.post(note, path="/observe")
        assert status == 200
        assert answer == {
            "jsonrpc": "2.0",
            "id": "unsolicited-observer",
            "result": {
                "protocolVersion": "draft",
                "effects": [{"type": "deny", "reason": "observer must not decide"}],
            },
        }
        assert server.entries() == [
            {"kind": "observed", "eventId": "srv:a", "event": A["params"]["event"], "message": note}
        ]
        server.ok("/wait-observed", {"eventId": "srv:a", "count": 1})


def held_chain_rows() -> list[dict[str, Any]]:
    """A chain with held observers and one without, each boundary event id its own
    (not the request id)."""
    deny = [[{"type": "deny", "reason": "d"}]]
    rows = [chain_row("held", [], deny, holdObservers=True), chain_row("plain", [], deny)]
    for scenario in rows:
        scenario["requests"]["a"]["params"]["event"]["id"] = f"{scenario['id']}:event"
    return rows


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_held_observer_is_recorded_observer_blocked_just_before_observed(
    tmp_path: Path, transport: str
) -> None:
    """As upstream servers do: {kind: observer-blocked, id: event id} (no scenario)
    just before the observed entry, for held observers only; the answer unchanged."""
    rows = held_chain_rows()
    held, plain = (observe_note(r["requests"]["a"]["params"]["event"]) for r in rows)
    notes = [held, plain, held]
    if transport == "http":
        with lifecycle_server(tmp_path, rows) as server:
            for note in notes:
                status, answer, _ = server.post(note, path="/observe")
                assert (status, answer["id"]) == (200, "unsolicited-observer")
            found = server.entries()
    else:
        stdio = StdioServer(tmp_path, rows)
        try:
            for note in notes:
                stdio.write(note)
                assert stdio.line()["id"] == "unsolicited-observer"
            found = stdio.entries()
        finally:
            assert stdio.close() == 0

    def observed(note: dict[str, Any]) -> dict[str, Any]:
        event = note["params"]["event"]
        return {"kind": "observed", "eventId": event["id"], "event": event, "message": note}

    blocked = {"kind": "observer-blocked", "id": "held:event"}
    assert found == [blocked, observed(held), observed(plain), blocked, observed(held)]


def test_other_observations_get_204_and_bad_ones_400_or_409(tmp_path: Path) -> None:
    event = {**A["params"]["event"], "id": "probe-event"}
    with lifecycle_server(tmp_path, ROWS) as server:
        status, _, body = server.post(observe_note(event))
        assert (status, body) == (204, b"")
        missing = observe_note({**event, "items": [attachment("never-uploaded")]})
        assert server.post(missing)[0] == 409
        ref = server.upload(b"x")[1]["ref"]
        with_size = observe_note(
            {**event, "items": [{**attachment(ref), "body": {"ref": ref, "size": 2}}]}
        )
        assert server.post(with_size)[0] == 400
        assert server.post({"jsonrpc": "2.0", "method": "hooks/observe", "params": {}})[0] == 400
        assert server.post({**observe_note(event), "id": 1})[0] == 400  # never a request
        assert server.post(observe_note({**event, "items": [attachment(ref)]}))[0] == 204
        assert [e["kind"] for e in server.entries()] == ["observed", "upload", "observed"]


# Uploads ----------------------------------------------------------------------


def test_upload_stores_immutably_under_receiver_refs(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        status, first = server.upload(b"original bytes")
        assert status == 201
        assert first == {
            "ref": first["ref"],
            "size": 14,
            "sha256": hashlib.sha256(b"original bytes").hexdigest(),
        }
        assert first["ref"].startswith("urn:uuid:")
        _, changed = server.upload(b"changed bytes")
        assert changed["ref"] != first["ref"]
        status, empty = server.upload(b"")
        assert status == 201 and empty["size"] == 0
        store = server.process.backend.store  # type: ignore[attr-defined]
        assert store.get(first["ref"]) == b"original bytes"
        assert [e["kind"] for e in server.entries()] == ["upload"] * 3
        assert server.entries()[0] == {"kind": "upload", **first, "status": 201}


@pytest.mark.parametrize(
    ("case", "headers", "status"),
    [
        ("no-credential", {"Authorization": ""}, 401),
        ("wrong-credential", {"Authorization": f"Bearer {OTHER_TOKEN}"}, 401),
        ("not-bearer", {"Authorization": f"Basic {UPLOAD_TOKEN}"}, 401),
        ("wrong-type", {"Content-Type": "application/json"}, 400),
        ("no-hash", {"AHP-Content-SHA256": ""}, 400),
        ("upper-hash", {"AHP-Content-SHA256": "A" * 64}, 400),
        ("wrong-hash", {"AHP-Content-SHA256": "0" * 64}, 400),
        ("encoded", {"Content-Encoding": "gzip"}, 400),
    ],
)
def test_upload_refusals(tmp_path: Path, case: str, headers: dict[str, str], status: int) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        sent = {k: v for k, v in headers.items() if v}
        dropped = [k for k, v in headers.items() if not v]
        base = {
            "Authorization": f"Bearer {UPLOAD_TOKEN}",
            "Content-Type": "application/octet-stream",
            "AHP-Content-SHA256": hashlib.sha256(b"body").hexdigest(),
            **sent,
        }
        for name in dropped:
            base.pop(name, None)
        got, answer, _ = request_json(server.upload_port, "POST", "/upload", b"body", base)
        assert got == status, case
        assert "ref" not in (answer or {})
        entry = server.entries()[-1]
        assert entry["kind"] == "upload" and entry["status"] == status and "ref" not in entry
        assert entry["size"] == 4
        assert entry["sha256"] == base.get("AHP-Content-SHA256", "")


def head(length: int | str | None, auth: list[str], extra: str = "") -> bytes:
    lines = ["POST /upload HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/octet-stream"]
    lines += [f"Authorization: {value}" for value in auth]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines.append(f"AHP-Content-SHA256: {hashlib.sha256(b'body').hexdigest()}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def test_upload_framing_refusals(tmp_path: Path) -> None:
    bearer = f"Bearer {UPLOAD_TOKEN}"
    with lifecycle_server(tmp_path, ROWS) as server:
        two = raw_exchange(server.upload_port, head(4, [bearer, bearer]) + b"body")
        assert status_of(two) == 400
        chunked = head(None, [bearer], "Transfer-Encoding: chunked\r\n") + b"4\r\nbody\r\n0\r\n\r\n"
        assert status_of(raw_exchange(server.upload_port, chunked)) == 400
        assert status_of(raw_exchange(server.upload_port, head(None, [bearer]))) == 400
        assert status_of(raw_exchange(server.upload_port, head("4, 4", [bearer]) + b"body")) == 400
        big = head(1024 * 1024 + 1, [bearer])
        assert status_of(raw_exchange(server.upload_port, big)) == 413  # refused unread
        exact = b"\x00" * (1024 * 1024)
        assert server.upload(exact)[0] == 201
        short = raw_exchange(server.upload_port, head(99, [bearer]) + b"body", half_close=True)
        assert status_of(short) == 400
        # answered at once: a read that stalled (0.5 s here) would close without a reply
        statuses = [(e["status"], e["size"]) for e in server.entries()]
        assert statuses == [
            (400, 4),
            (400, 0),
            (400, 0),
            (400, 0),
            (413, 1048577),
            (201, 1048576),
            (400, 99),
        ]
        assert (
            status_of(
                raw_exchange(
                    server.upload_port, head(4, [bearer]).replace(b"/upload", b"/other") + b"body"
                )
            )
            == 404
        )
        assert request_json(server.upload_port, "GET", "/upload")[0] == 405
        assert len(server.entries()) == 7  # neither of those is an upload attempt


def test_upload_sender_declares_what_it_is_told(tmp_path: Path) -> None:
    endpoint_of = "http://127.0.0.1:{}/upload".format
    with lifecycle_server(tmp_path, ROWS) as server:
        endpoint = endpoint_of(server.upload_port)
        body = b"body"
        good = send_upload(
            endpoint,
            body,
            size=4,
            sha256=hashlib.sha256(body).hexdigest(),
            token=UPLOAD_TOKEN,
            timeout=5,
        )
        assert good.status == 201 and good.receipt() is not None
        short = send_upload(
            endpoint,
            body,
            size=99,
            sha256=hashlib.sha256(body).hexdigest(),
            token=UPLOAD_TOKEN,
            timeout=5,
        )
        assert short.status == 400  # a stalled read would have closed without one
        cut = send_upload(
            endpoint,
            body,
            size=2,
            sha256=hashlib.sha256(body).hexdigest(),
            token=UPLOAD_TOKEN,
            timeout=5,
        )
        assert cut.status == 400
        anonymous = send_upload(endpoint, body, size=4, sha256="0" * 64, token=None, timeout=5)
        assert anonymous.status == 401
        assert [(e["status"], e["size"]) for e in server.entries()] == [
            (201, 4),
            (400, 99),
            (400, 2),
            (401, 4),
        ]


# Control ----------------------------------------------------------------------


def test_control_answers_and_bounded_waits(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS, wait_seconds=0.3) as server:
        status, health = server.control("GET", "/health")
        assert (status, health) == (200, {"ready": True})
        assert_contract("lifecycle-control.schema.json#/$defs/health", health)
        assert server.control("POST", "/wait", {"id": "srv:a", "count": 1})[0] == 408
        assert server.control("POST", "/wait-observed", {"eventId": "srv:a", "count": 1})[0] == 408
        for bad in ({"id": 3}, {"id": "x", "count": 0}, {"id": "x", "count": True}):
            assert server.control("POST", "/wait", bad)[0] == 400
        server.ok("/mark", {"scenario": "s", "kind": "acquired", "id": "srv:a"})
        assert (
            server.control("POST", "/mark", {"scenario": "s", "kind": "made-up", "id": "x"})[0]
            == 400
        )
        assert (
            server.control("POST", "/mark", {"scenario": 1, "kind": "accepted", "id": "x"})[0]
            == 400
        )
        assert server.control("POST", "/emit", {"response": {"id": "x"}})[0] == 409  # stdio only
        assert server.control("POST", "/release", {"barrier": "x"})[0] == 400
        assert server.control("POST", "/nothing", {})[0] == 404
        assert server.control("POST", "/wait", b"{")[0] == 400
        assert server.entries() == [{"kind": "acquired", "id": "srv:a", "scenario": "s"}]
        # a wait that is satisfied later returns then
        thread = threading.Thread(target=lambda: time.sleep(0.1) or server.post(A), daemon=True)
        server.ok("/release", {"id": "srv:a"})
        thread.start()
        server.ok("/wait", {"id": "srv:a", "count": 1})
        thread.join(5)
        assert server.control("POST", "/shutdown", {}) == (200, {"ok": True})
        assert server.process.stop.wait(5)  # set once the answer is written


def test_shutdown_releases_every_held_reply(tmp_path: Path) -> None:
    with lifecycle_server(tmp_path, ROWS) as server:
        thread, out = post_async(server, A)
        server.ok("/wait", {"id": "srv:a", "count": 1})
        server.ok("/shutdown", {})
        server.process.finish()
        thread.join(5)
        assert out and out[0][0] == 200


# Processes --------------------------------------------------------------------


def test_http_process_readiness_and_exit(tmp_path: Path) -> None:
    process = subprocess.Popen(
        ahp_command("lifecycle-server", server_config(tmp_path, ROWS)),
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        ready = wait_ready(tmp_path / "ready.json", process)
        assert ready["pid"] == process.pid
        assert ready["endpoint"].startswith("http://127.0.0.1:") and ready["endpoint"].endswith(
            "/intercept"
        )
        assert ready["uploadEndpoint"].startswith("http://127.0.0.1:") and ready[
            "uploadEndpoint"
        ].endswith("/upload")
        port = int(ready["controlEndpoint"].rsplit(":", 1)[1])
        assert request_json(port, "POST", "/shutdown", {})[:2] == (200, {"ok": True})
        assert process.wait(timeout=10) == 0
        assert process.stdout is not None and process.stdout.read() == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"suite": "catalogue-x"}, "suite"),
        ({"suite": None}, "suite"),
        ({"uploadAuth": None}, "uploadAuth"),
    ],
)
def test_unusable_server_configs_exit_2(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    config = json.loads(server_config(tmp_path, ROWS).read_text())
    for key, value in change.items():
        if value is None:
            config.pop(key)
        else:
            config[key] = value
    path = write(tmp_path / "bad.json", config)
    completed = subprocess.run(
        ahp_command("lifecycle-server", path),
        cwd=ADAPTER_DIR,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 2
    assert f"field {field}" in completed.stderr and completed.stderr.count("\n") == 1


def test_stdio_server_reads_on_while_held_emits_and_observes(tmp_path: Path) -> None:
    server = StdioServer(tmp_path, ROWS)
    try:
        server.write(A)
        server.ok("/wait", {"id": "srv:a", "count": 1})
        assert server.line(0.3) is None  # held
        server.ok("/release", {"id": "srv:b"})
        server.write(B)
        assert server.line() == settled(B, {"v": "b"})  # answered while srv:a is held
        stray = {
            "jsonrpc": "2.0",
            "id": "stray",
            "result": {"protocolVersion": "draft", "effects": []},
        }
        server.ok("/emit", {"response": stray})
        assert server.line() == stray
        server.write(observe_note(A["params"]["event"]))
        assert server.line()["id"] == "unsolicited-observer"  # after the receipt
        server.write(observe_note({**A["params"]["event"], "id": "other"}))
        server.write(
            {"jsonrpc": "2.0", "method": "hooks/observe", "params": {}}
        )  # invalid: stderr only
        server.write(lc_request("srv:b", items=[attachment("never")]))
        refused = server.line()
        assert refused["id"] == "srv:b" and refused["error"]["code"] == -32602
        server.ok("/release", {"id": "srv:a"})
        assert server.line() == settled(A, {"v": "a"})
        kinds = [(e["kind"], e.get("id", e.get("eventId"))) for e in server.entries()]
        assert kinds == [
            ("received", "srv:a"),
            ("received", "srv:b"),
            ("replied", "srv:b"),
            ("emitted", "stray"),
            ("observed", "srv:a"),
            ("observed", "other"),
            ("received", "srv:b"),
            ("replied", "srv:b"),
            ("replied", "srv:a"),
        ]
        upload = hashlib.sha256(b"x").hexdigest()
        status, answer, _ = request_json(
            server.upload_port,
            "POST",
            "/upload",
            b"x",
            {
                "Authorization": f"Bearer {UPLOAD_TOKEN}",
                "Content-Type": "application/octet-stream",
                "AHP-Content-SHA256": upload,
            },
        )
        assert status == 201 and answer["sha256"] == upload
    finally:
        assert server.close() == 0  # EOF on stdin ends the server


def test_the_event_listener_keeps_auth_and_tls_the_upload_listener_its_own(tmp_path: Path) -> None:
    (tmp_path / "pki").mkdir()
    pki = make_pki(tmp_path / "pki")
    event_token = "event-token-for-tests-0123456789"
    tls = {"certFile": str(pki.server_cert), "keyFile": str(pki.server_key)}
    auth = {"mode": "bearer", "profile": "strict", "token": event_token}
    with lifecycle_server(tmp_path, ROWS, auth=auth, tls=tls) as server:
        assert server.process.endpoint is not None and server.process.endpoint.startswith(
            "https://"
        )
        context = ssl.create_default_context(cafile=str(pki.ca))

        def post(headers: dict[str, str]) -> int:
            connection = http.client.HTTPSConnection(
                "127.0.0.1", server.port, context=context, timeout=10
            )
            try:
                connection.request("POST", "/intercept", json.dumps(B).encode(), headers)
                return connection.getresponse().status
            finally:
                connection.close()

        server.ok("/release", {"id": "srv:b"})
        assert post({}) == 401
        assert post({"Authorization": f"Bearer {event_token}"}) == 200
        assert server.kinds() == [("received", "srv:b"), ("replied", "srv:b")]
        assert server.process.upload_endpoint is not None
        assert server.process.upload_endpoint.startswith("http://127.0.0.1:")
        assert server.upload(b"x", {"Authorization": f"Bearer {event_token}"})[0] == 401
        assert server.upload(b"x")[0] == 201
