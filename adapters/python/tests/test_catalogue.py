"""The catalogue suite over the wire (docs/CATALOGUE.md): the server's discovery,
receiver verdicts and control answers over real sockets and stdio, and the
real client against the real server over HTTP (plain and strict bearer over
HTTPS) and stdio.

The end-to-end rows are the upstream vector: the test (never the adapter)
reads its ``expected`` to check the report and the server's receipts.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from catalogue_kit import (
    UPSTREAM_CATALOGUE,
    LiveCatalogue,
    catalogue_server,
    client_config,
    event,
    observe,
    run_client,
    server_config,
    task,
    turn_end,
)
from conftest import ADAPTER_DIR, assert_contract
from lifecycle_kit import ahp_command, request_json, wait_ready, write
from pki import Pki, make_pki

from ahp_py.contract.config import ConfigError, load_suite_client, load_suite_server
from ahp_py.sdk.schemas import OBSERVE_NOTIFICATION, SchemaSet
from ahp_py.suites.catalogue import SPEC, catalogue_manifest, discovery_request

DISCOVERY_RESPONSE = {
    "jsonrpc": "2.0",
    "id": "discovery",
    "result": {"protocolVersion": "draft", "manifest": catalogue_manifest()},
}


def upstream() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(UPSTREAM_CATALOGUE.read_text())
    return document


# The server over real sockets ---------------------------------------------------


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveCatalogue]:
    with catalogue_server(tmp_path, wait_seconds=0.3) as server:
        yield server


def test_discovery_answers_m_and_is_recorded_just_before(live: LiveCatalogue) -> None:
    status, answer, _ = live.post(discovery_request())
    assert (status, answer) == (200, DISCOVERY_RESPONSE)
    status, again, _ = live.post({**discovery_request(), "id": 7}, "/any/path")
    assert status == 200 and again["id"] == 7
    assert live.entries() == [
        {"kind": "discovery", "request": discovery_request(), "response": DISCOVERY_RESPONSE},
        {"kind": "discovery", "request": {**discovery_request(), "id": 7}, "response": again},
    ]


def test_an_invalid_discovery_gets_32602_and_is_recorded(live: LiveCatalogue) -> None:
    bad = {**discovery_request(), "params": {"protocolVersion": "draft", "extra": 1}}
    status, answer, _ = live.post(bad)
    assert status == 200 and answer["error"]["code"] == -32602 and answer["id"] == "discovery"
    other = {**discovery_request(), "params": {"protocolVersion": "2099-01-01"}}
    assert live.post(other)[1]["error"]["code"] == -32602
    assert [(e["kind"], e["request"], e["response"]) for e in live.entries()] == [
        ("discovery", bad, answer),
        ("discovery", other, live.entries()[1]["response"]),
    ]


def test_verdicts_are_recorded_and_answered_without_a_body(
    live: LiveCatalogue, schema_set: SchemaSet
) -> None:
    good = observe(turn_end("ok"))
    invalid = observe(event("bad", "model.error"))  # model.error needs more than the envelope
    cycle = observe(turn_end("loop", parent="loop"))
    for message in (good, cycle):
        assert schema_set.error(OBSERVE_NOTIFICATION, message) is None
    assert schema_set.error(OBSERVE_NOTIFICATION, invalid) is not None
    assert live.post(good, "/observe") == (202, None, b"")
    assert live.post(invalid) == (400, None, b"")
    assert live.post(cycle, "/") == (409, None, b"")
    assert live.post(good) == (202, None, b"")  # a redelivery
    assert live.entries() == [
        {"kind": "observed", "eventId": "ok", "event": good["params"]["event"], "message": good},
        {"kind": "rejected", "eventId": "bad", "message": invalid, "errorKind": "schema"},
        {"kind": "rejected", "eventId": "loop", "message": cycle, "errorKind": "lineage"},
        {"kind": "observed", "eventId": "ok", "event": good["params"]["event"], "message": good},
    ]


def test_a_rejection_changes_no_lineage_state(live: LiveCatalogue) -> None:
    wrong = observe(task("child", kind="task.change.after", parent="self-ref"))
    wrong["params"]["event"]["id"] = "self-ref"  # names itself
    assert live.post(wrong)[0] == 409
    assert live.post(observe(task("self-ref")))[0] == 202  # no trace of the rejected one
    assert live.post(observe(task("self-ref", kind="task.change.after")))[0] == 409  # identity


def test_schema_rejections_name_a_string_event_id_or_null(live: LiveCatalogue) -> None:
    numeric = observe(turn_end("x"))
    numeric["params"]["event"]["id"] = 5
    with_id = {**observe(turn_end("has-id")), "id": "r1"}  # a notification never has an id
    assert live.post(numeric)[0] == 400
    assert live.post(with_id)[0] == 400
    assert live.post({"jsonrpc": "2.0", "method": "hooks/observe"})[0] == 400
    assert [(e["kind"], e["eventId"], e["errorKind"]) for e in live.entries()] == [
        ("rejected", None, "schema"),
        ("rejected", "has-id", "schema"),
        ("rejected", None, "schema"),
    ]


def test_the_receiver_accepts_hook_failure(live: LiveCatalogue) -> None:
    failure = {"backendId": "com.example.a", "reason": "timed out", "policy": "fail-open"}
    message = observe(event("hf", "hook.failure", parent="gone", failure=failure))
    assert live.post(message)[0] == 202
    assert live.entries()[0]["kind"] == "observed"


def test_other_messages_are_neither_served_nor_recorded(live: LiveCatalogue) -> None:
    status, answer, _ = live.post({"jsonrpc": "2.0", "id": "i", "method": "hooks/intercept"})
    assert status == 200 and answer["error"]["code"] == -32601
    assert live.post({"jsonrpc": "2.0", "method": "hooks/other"})[:2] == (204, None)
    assert live.post([1, 2])[1]["error"]["code"] == -32600
    assert live.post(b"{nope")[0] == 400
    assert live.entries() == []


def test_control_answers(live: LiveCatalogue) -> None:
    assert live.control("GET", "/health") == (200, {"ready": True})
    assert live.control("GET", "/receipts") == (200, {"entries": []})
    for path, body in (
        ("/wait", {"id": "x", "count": 1}),
        ("/release", {"id": "x"}),
        ("/mark", {"scenario": "s", "kind": "accepted", "id": "x"}),
        ("/emit", {"response": {}}),
        ("/reset", {}),
    ):
        assert live.control("POST", path, body)[0] == 404, path


def test_wait_observed_counts_observed_and_rejected(live: LiveCatalogue) -> None:
    assert live.post(observe(turn_end("w")))[0] == 202
    assert live.post(observe(turn_end("w", parent="w")))[0] == 409
    ok = live.control("POST", "/wait-observed", {"eventId": "w", "count": 2})
    assert ok == (200, {"ok": True})
    assert_contract("lifecycle-control.schema.json#/$defs/ok", ok[1])
    assert live.control("POST", "/wait-observed", {"eventId": "w", "count": 3})[0] == 408
    assert live.control("POST", "/wait-observed", {"eventId": 1, "count": 1})[0] == 400
    assert live.control("POST", "/wait-observed", {"eventId": "w", "count": 0})[0] == 400


def test_a_wait_ends_when_the_verdict_arrives(tmp_path: Path) -> None:
    import threading

    answers: list[Any] = []
    with catalogue_server(tmp_path, wait_seconds=5.0) as server:
        waiter = threading.Thread(
            target=lambda: answers.append(
                server.control("POST", "/wait-observed", {"eventId": "late", "count": 1})
            )
        )
        waiter.start()
        time.sleep(0.1)
        assert server.post(observe(turn_end("late", parent="late")))[0] == 409
        waiter.join(5)
    assert answers == [(200, {"ok": True})]


# The server as a stdio process ---------------------------------------------------


class StdioCatalogue:
    def __init__(self, home: Path) -> None:
        self.process = subprocess.Popen(
            ahp_command("lifecycle-server", server_config(home, "stdio")),
            cwd=ADAPTER_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        ready = wait_ready(home / "ready.json", self.process)
        assert ready["endpoint"] is None and "uploadEndpoint" not in ready
        self.control_port = int(ready["controlEndpoint"].rsplit(":", 1)[1])

    def write(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def line(self, timeout: float) -> bytes | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        if not select.select([fd], [], [], timeout)[0]:
            return None
        return os.read(fd, 65536)

    def entries(self) -> list[dict[str, Any]]:
        answer = request_json(self.control_port, "GET", "/receipts")[1]
        assert_contract("catalogue-control.schema.json#/$defs/receipts", answer)
        return list(answer["entries"])

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=10)


@pytest.mark.e2e
def test_stdio_answers_discovery_and_never_a_notification(tmp_path: Path) -> None:
    server = StdioCatalogue(tmp_path)
    try:
        for message in (
            observe(turn_end("s1")),
            observe(event("s2", "model.error")),
            observe(turn_end("s3", parent="s3")),
        ):
            server.write(message)
        status, answer, _ = request_json(
            server.control_port, "POST", "/wait-observed", {"eventId": "s3", "count": 1}
        )
        assert (status, answer) == (200, {"ok": True})
        assert server.line(0.3) is None  # no verdict is ever answered over stdio
        server.write(discovery_request())
        line = server.line(5.0)
        assert line is not None and json.loads(line) == DISCOVERY_RESPONSE
        kinds = [(e["kind"], e.get("eventId"), e.get("errorKind")) for e in server.entries()]
        assert kinds == [
            ("observed", "s1", None),
            ("rejected", "s2", "schema"),
            ("rejected", "s3", "lineage"),
            ("discovery", None, None),
        ]
    finally:
        assert server.close() == 0  # EOF on stdin ends the server


# Configs --------------------------------------------------------------------------


def test_catalogue_configs_need_no_upload_settings(tmp_path: Path) -> None:
    server = load_suite_server(str(server_config(tmp_path)), SPEC)
    assert (server.suite, server.upload_token) == ("catalogue", "")
    # uploadAuth may be present and is unused (even a malformed one)
    unused = load_suite_server(
        str(server_config(tmp_path, check=False, uploadAuth={"token": 1})), SPEC
    )
    assert unused.suite == "catalogue"
    scenario_file = write(tmp_path / "rows.json", {"version": 1, "scenarios": []})
    ready = {"endpoint": "http://127.0.0.1:1/intercept", "controlEndpoint": "http://127.0.0.1:2"}
    client = load_suite_client(str(client_config(tmp_path, scenario_file, "http", ready)), SPEC)
    assert (client.suite, client.upload, client.backends) == ("catalogue", None, {})
    config = json.loads(client_config(tmp_path, scenario_file, "http", ready).read_text())
    del config["controlEndpoint"]
    with pytest.raises(ConfigError, match="controlEndpoint"):
        load_suite_client(str(write(tmp_path / "bad.json", config)), SPEC)


# The real client against the real server ------------------------------------------


@contextmanager
def http_catalogue(
    home: Path, auth: dict[str, Any] | None = None, tls: dict[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    extra: dict[str, Any] = {"auth": auth or {"mode": "none", "profile": "strict"}}
    if tls is not None:
        extra["tls"] = tls
    process = subprocess.Popen(
        ahp_command("lifecycle-server", server_config(home, **extra)),
        cwd=ADAPTER_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        ready = wait_ready(home / "ready.json", process)
        assert "uploadEndpoint" not in ready
        yield ready
    finally:
        if process.poll() is None:
            port = int(ready["controlEndpoint"].rsplit(":", 1)[1])
            request_json(port, "POST", "/shutdown", {})
            process.wait(timeout=10)


def fetch_receipts(ready: dict[str, Any]) -> list[dict[str, Any]]:
    port = int(ready["controlEndpoint"].rsplit(":", 1)[1])
    return list(request_json(port, "GET", "/receipts")[1]["entries"])


def check_upstream_run(report: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """What the harness checks, from the test's own reading of ``expected``."""
    rows = upstream()["scenarios"]
    assert report["language"] == "python"
    assert report["discovery"] == DISCOVERY_RESPONSE
    assert [r["id"] for r in report["results"]] == [row["id"] for row in rows]
    for result, row in zip(report["results"], rows, strict=True):
        expected = row["expected"]
        assert result["status"] == "completed", result
        actual = result["actual"]
        assert set(actual) == {"sent", "registrations"}
        assert actual["sent"] == expected["sent"], row["id"]
        got = [entry["accepted"] for entry in actual["registrations"]]
        assert got == [entry["accepted"] for entry in expected["registrations"]], row["id"]
        for entry in actual["registrations"]:  # [ext] rule on every rejection
            assert entry == {"accepted": True} or set(entry) == {"accepted", "rule"}
    assert entries[0] == {
        "kind": "discovery",
        "request": discovery_request(),
        "response": DISCOVERY_RESPONSE,
    }
    expected_entries: list[dict[str, Any]] = []
    for row in rows:
        for message, delivery in zip(
            row["expected"]["sent"], row["expected"]["deliveries"], strict=True
        ):
            event_id = message["params"]["event"]["id"]
            if delivery["accepted"]:
                expected_entries.append(
                    {
                        "kind": "observed",
                        "eventId": event_id,
                        "event": message["params"]["event"],
                        "message": message,
                    }
                )
            else:
                expected_entries.append(
                    {
                        "kind": "rejected",
                        "eventId": event_id,
                        "message": message,
                        "errorKind": delivery["errorKind"],
                    }
                )
    assert entries[1:] == expected_entries


@pytest.mark.e2e
def test_upstream_vector_over_http(tmp_path: Path) -> None:
    with http_catalogue(tmp_path) as ready:
        report, _ = run_client(client_config(tmp_path, UPSTREAM_CATALOGUE, "http", ready))
        entries = fetch_receipts(ready)
    check_upstream_run(report, entries)
    assert report["receipts"] == {"entries": entries}


@pytest.mark.e2e
def test_upstream_vector_over_stdio(tmp_path: Path) -> None:
    report, _ = run_client(client_config(tmp_path, UPSTREAM_CATALOGUE, "stdio"))
    check_upstream_run(report, report["receipts"]["entries"])
    child = json.loads((tmp_path / "child.json").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child["pid"], 0)  # reaped


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.mark.e2e
def test_strict_bearer_over_https(tmp_path: Path, pki: Pki) -> None:
    auth = {"mode": "bearer", "profile": "strict", "token": "catalogue-t0ken"}
    tls = {"certFile": str(pki.server_cert), "keyFile": str(pki.server_key)}
    with http_catalogue(tmp_path, auth, tls) as ready:
        assert ready["endpoint"].startswith("https://")
        config = client_config(
            tmp_path, UPSTREAM_CATALOGUE, "http", ready, auth=auth, tls={"caFile": str(pki.ca)}
        )
        report, _ = run_client(config)
        entries = fetch_receipts(ready)
        check_upstream_run(report, entries)
        # a refused credential: no discovery, so no register row can run (a
        # notification's 401 is never waited for: its /wait-observed would time out)
        document = upstream()
        document["scenarios"] = [
            row for row in document["scenarios"] if row["category"] == "registration"
        ]
        rows = write(tmp_path / "registrations.json", document)
        wrong = {**auth, "token": "wrong"}
        refused, _ = run_client(
            client_config(tmp_path, rows, "http", ready, auth=wrong, tls={"caFile": str(pki.ca)})
        )
        assert refused["discovery"] is None
        assert {r["status"] for r in refused["results"]} == {"failed"}
        assert all("no discovered manifest" in r["error"] for r in refused["results"])
        assert fetch_receipts(ready) == entries  # nothing of the refused run was recorded


@pytest.mark.e2e
def test_the_client_never_reads_expected(tmp_path: Path) -> None:
    document = upstream()
    for row in document["scenarios"]:
        row["expected"] = {"sent": [], "registrations": [{"accepted": "maybe"}], "deliveries": []}
    blind = write(tmp_path / "blind.json", document)
    report, _ = run_client(client_config(tmp_path, blind, "stdio"))
    check_upstream_run(report, report["receipts"]["entries"])


@pytest.mark.e2e
def test_invalid_notify_is_not_sent_and_unknown_ops_are_unsupported(tmp_path: Path) -> None:
    valid = observe(turn_end("v1"))
    invalid = observe(event("v2", "model.error"))
    rows = [
        {
            "id": "skip",
            "category": "execution",
            "steps": [
                {"op": "notify", "message": invalid},
                {"op": "notify", "message": valid},
                {"op": "rawNotify", "message": invalid},
            ],
        },
        {
            "id": "odd",
            "category": "execution",
            "steps": [
                {"op": "notify", "message": observe(turn_end("never"))},
                {"op": "teleport"},
            ],
        },
        {"id": "again", "category": "execution", "steps": [{"op": "notify", "message": valid}]},
    ]
    scenarios = write(
        tmp_path / "rows.json", {"version": 1, "suite": "catalogue", "scenarios": rows}
    )
    report, _ = run_client(client_config(tmp_path, scenarios, "stdio"))
    results = report["results"]
    assert results[0] == {
        "id": "skip",
        "status": "completed",
        "actual": {"sent": [valid, invalid], "registrations": []},
    }
    assert results[1]["status"] == "unsupported" and "teleport" in results[1]["error"]
    assert results[2]["actual"] == {"sent": [valid], "registrations": []}
    kinds = [(e["kind"], e.get("eventId")) for e in report["receipts"]["entries"]]
    # nothing of the unsupported row was sent; the redelivery waited for its second verdict
    assert kinds == [
        ("discovery", None),
        ("observed", "v1"),
        ("rejected", "v2"),
        ("observed", "v1"),
    ]


@pytest.mark.e2e
def test_registration_rules_are_reported(tmp_path: Path) -> None:
    hook = {
        "id": "com.example.a",
        "transport": {"type": "http", "url": "https://policy.example.invalid/hooks"},
        "subscriptions": [
            {
                "events": ["tool.before"],
                "mode": "intercept",
                "timeoutMs": 50,
                "failurePolicy": "fail-open",
                "content": {"default": "metadata"},
            }
        ],
    }
    context = {"interactive": True, "environment": {}}
    step = {"op": "register", "registration": {"protocolVersion": "draft", "hooks": [hook]}}
    rows = [
        {
            "id": "reg",
            "category": "registration",
            "steps": [
                {**step, "requirements": [], "context": context},
                {**step, "registration": {"hooks": []}, "requirements": [], "context": context},
            ],
        },
        {"id": "bad", "category": "registration", "steps": [{**step, "context": "no"}]},
    ]
    scenarios = write(
        tmp_path / "rows.json", {"version": 1, "suite": "catalogue", "scenarios": rows}
    )
    report, _ = run_client(client_config(tmp_path, scenarios, "stdio"))
    assert report["results"][0]["actual"] == {
        "sent": [],
        "registrations": [
            {"accepted": False, "rule": "timeout"},
            {"accepted": False, "rule": "schema"},
        ],
    }
    assert report["results"][1]["status"] == "failed"
    assert [e["kind"] for e in report["receipts"]["entries"]] == ["discovery"]


@pytest.mark.e2e
def test_a_catalogue_client_with_an_unknown_suite_reports_unsupported(tmp_path: Path) -> None:
    config = client_config(tmp_path, UPSTREAM_CATALOGUE, "stdio", check=False, suite="catalogue-v2")
    report, _ = run_client(config)
    assert {r["status"] for r in report["results"]} == {"unsupported"}
    assert len(report["results"]) == len(upstream()["scenarios"])


def test_get_capabilities_is_answered_and_never_recorded(live: LiveCatalogue) -> None:
    """The bare capabilities of M's tool.before entry (intercept and observe), not
    the discovery envelope a POSTed hooks/capabilities gets; nothing recorded."""
    status, answer, _ = request_json(live.port, "GET", "/capabilities", None)
    [entry] = [e for e in catalogue_manifest()["events"] if e["event"] == "tool.before"]
    assert "intercept" in entry["modes"]
    assert status == 200 and answer == entry["capabilities"]
    assert answer == {
        "effects": ["deny", "allow", "ask", "modify", "message", "flow"],
        "modify": {"input": {"replace": True, "merge": True}},
        "flow": {"operations": ["stop"]},
    }
    assert live.entries() == []
