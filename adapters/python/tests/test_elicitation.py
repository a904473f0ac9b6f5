"""The elicitation suite end to end: the real client against the real server
(HTTP with auth none and strict bearer over HTTPS, and stdio) on a scenario
file written here by hand from docs/ELICITATION.md: wire rows (uploads with
the three credentials and alias rebinding, correlation mutations, two live
requests answered in reverse order, withheld bodies, refusals) and atomic rows
(deny, return, replace, merge, and their rejections). The report and the
server's receipts are checked against the expectations and the contract
schemas, the way the harness reads them."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from elicitation_kit import (
    AUTHENTICATED,
    FORM_PARAMS,
    URL_PARAMS,
    atomic_row,
    attachment,
    client_config,
    client_copy,
    control_port,
    digest,
    fetch_receipts,
    http_server,
    request_event,
    result_event,
    run_client,
    scenario_file,
    segments,
    send,
    upload,
    wire_row,
    withheld_part,
)
from lifecycle_kit import request_json, write
from pki import Pki, make_pki

from ahp_py.sdk.manifest import discovery_manifest

PROVENANCE = {"kind": "mcp", "authenticatedSource": AUTHENTICATED}
GOOD = {"action": "accept", "content": {"name": "Ada", "age": 36}}
DOC, PHOTO_1, PHOTO_2 = b"a form attachment", b"first photo bytes", b"second photo bytes"


def request_summary(params: Any = FORM_PARAMS) -> dict[str, Any]:
    return {"request": params}


def result_summary(result: Any, params: Any = FORM_PARAMS) -> dict[str, Any]:
    return {
        "request": params,
        "result": result,
        "provenance": PROVENANCE,
        "externalCompletion": False,
    }


def sent(status: int) -> dict[str, Any]:
    outcome = "accepted" if status == 200 else "rejected"
    return {"op": "send", "outcome": outcome, "status": status}


def uploaded(status: int) -> dict[str, Any]:
    return {"op": "upload", "status": status}


def wire(rid: str, steps: list[Any], outcomes: list[Any], receipts: list[Any]) -> dict[str, Any]:
    return wire_row(rid, *steps, expected={"steps": outcomes, "receipts": receipts})


def receipt(event_id: str, summary: dict[str, Any]) -> dict[str, Any]:
    return {"eventId": event_id, "summary": summary}


def wire_rows() -> list[dict[str, Any]]:
    rows = []
    s = "py-eli-accept:s"
    rows.append(
        wire(
            "py-eli-accept",
            [
                upload("doc", DOC),
                send(request_event("py-eli-accept:r", s, items=[attachment("doc")])),
                send(result_event("py-eli-accept:x", "py-eli-accept:r", s, GOOD)),
            ],
            [uploaded(201), sent(200), sent(200)],
            [
                receipt("py-eli-accept:r", request_summary()),
                receipt("py-eli-accept:x", result_summary(GOOD)),
            ],
        )
    )
    s = "py-eli-uploads:s"
    rows.append(
        wire(
            "py-eli-uploads",
            [
                upload("photo", PHOTO_1),
                upload("photo", PHOTO_2),  # the same alias, other bytes: rebound
                upload("stolen", PHOTO_1, "unauthorized"),
                upload("anonymous", PHOTO_1, "none"),
                upload("bad", PHOTO_1, sha256=digest(b"other bytes")),
                send(request_event("py-eli-uploads:r1", s, items=[attachment("photo")])),
                send(request_event("py-eli-uploads:r2", s, items=[attachment("bad")])),
                send(request_event("py-eli-uploads:r3", s, items=[attachment("stolen")])),
            ],
            [
                uploaded(201),
                uploaded(201),
                uploaded(401),
                uploaded(401),
                uploaded(400),
                sent(200),
                sent(409),
                sent(409),
            ],
            [receipt("py-eli-uploads:r1", request_summary())],
        )
    )
    s, r = "py-eli-corr:s", "py-eli-corr:r"
    cancel = {"action": "cancel"}
    wrong_server = result_event("py-eli-corr:x2", r, s, cancel)
    wrong_server["elicitation"]["server"] = "another-server"
    wrong_source = result_event("py-eli-corr:x3", r, s, cancel, source="urn:ahp-interop:spoof")
    rows.append(
        wire(
            "py-eli-corr",
            [
                send(request_event(r, s)),
                send(result_event("py-eli-corr:x1", r, "py-eli-corr:elsewhere", cancel)),
                send(wrong_server),
                send(wrong_source),
                send(result_event("py-eli-corr:x4", r, s, cancel, mode="url")),
                send(result_event("py-eli-corr:x5", "py-eli-corr:never", s, cancel)),
                send(result_event("py-eli-corr:x6", r, s, cancel)),
                send(result_event("py-eli-corr:x7", r, s, cancel)),  # answered: not live
            ],
            [sent(200), *[sent(400)] * 5, sent(200), sent(400)],
            [
                receipt(r, request_summary()),
                receipt("py-eli-corr:x6", result_summary(cancel)),
            ],
        )
    )
    s = "py-eli-both:s"
    a, b = "py-eli-both:a", "py-eli-both:b"
    answer_b = {"action": "accept", "content": {"name": "Bea", "colours": ["red"]}}
    rows.append(
        wire(
            "py-eli-both",
            [
                send(request_event(a, s)),
                send(request_event(b, s, URL_PARAMS, "url")),
                send(result_event("py-eli-both:xb", b, s, {"action": "accept"}, "url")),
                send(result_event("py-eli-both:xa", a, s, answer_b)),
            ],
            [sent(200), sent(200), sent(200), sent(200)],
            [
                receipt(a, request_summary()),
                receipt(b, request_summary(URL_PARAMS)),
                receipt("py-eli-both:xb", result_summary({"action": "accept"}, URL_PARAMS)),
                receipt("py-eli-both:xa", result_summary(answer_b)),
            ],
        )
    )
    s, r = "py-eli-meta:s", "py-eli-meta:r"
    off_form = {"action": "accept", "content": {"anything": 3}}
    rows.append(
        wire(
            "py-eli-meta",
            [
                send(request_event(r, s, part=withheld_part("m", "metadata"))),
                send(result_event("py-eli-meta:x", r, s, off_form)),
            ],
            [sent(200), sent(200)],
            [
                receipt(r, {"selection": "metadata"}),
                receipt(
                    "py-eli-meta:x",
                    {
                        "selection": {"request": "metadata", "result": "body"},
                        "bodyValidation": "not-selected",
                        "provenance": PROVENANCE,
                        "externalCompletion": False,
                    },
                ),
            ],
        )
    )
    s, r = "py-eli-bad:s", "py-eli-bad:r"
    rows.append(
        wire(
            "py-eli-bad",
            [
                send(request_event("py-eli-bad:r0", s, "{not json")),
                send(request_event("py-eli-bad:r1", s, FORM_PARAMS, "url")),
                send(request_event(r, s)),
                send(result_event("py-eli-bad:x1", r, s, {"action": "accept", "content": {}})),
                send(result_event("py-eli-bad:x2", r, s, {"action": "decline", "content": {}})),
                send(result_event("py-eli-bad:x3", r, s, {"action": "decline"})),
            ],
            [sent(400), sent(400), sent(200), sent(400), sent(400), sent(200)],
            [
                receipt(r, request_summary()),
                receipt("py-eli-bad:x3", result_summary({"action": "decline"})),
            ],
        )
    )
    return rows


def atomic(
    rid: str,
    user: dict[str, Any],
    actual: dict[str, Any],
    receipts: list[Any],
    **scripted: Any,
) -> dict[str, Any]:
    row = atomic_row(rid, user, **scripted)
    row["expected"] = {"actual": actual, "receipts": receipts}
    return row


def outcome(request: str, result: str, published: Any = None, provenance: Any = None) -> Any:
    return {"request": request, "result": result, "published": published, "provenance": provenance}


def edit(operation: str, value: Any) -> dict[str, Any]:
    return {"type": "modify", "target": "content", "operation": operation, "value": value}


NOTE = {"type": "message", "text": "noted"}
HOOK = {"action": "accept", "content": {"name": "Hook"}}


def atomic_rows() -> list[dict[str, Any]]:
    def seen(rid: str, result: Any = None) -> list[Any]:
        receipts = [receipt(f"{rid}:request", request_summary())]
        if result is not None:
            receipts.append(receipt(f"{rid}:result", result_summary(result)))
        return receipts

    deny = {"type": "deny", "reason": "not now"}
    return [
        atomic(
            "py-eli-at-deny",
            GOOD,
            outcome("denied", "not-sent"),
            seen("py-eli-at-deny"),
            request_reply=[NOTE, deny],
        ),
        atomic(
            "py-eli-at-user",
            GOOD,
            outcome("allowed", "accepted", GOOD, "user"),
            seen("py-eli-at-user", GOOD),
        ),
        atomic(
            "py-eli-at-return",
            GOOD,
            outcome("allowed", "accepted", HOOK, "hook"),
            seen("py-eli-at-return", HOOK),
            request_reply=[{"type": "return", "value": HOOK}],
            result_reply=[NOTE],
        ),
        atomic(
            "py-eli-at-return-off-form",
            GOOD,
            outcome("rejected", "not-sent"),
            seen("py-eli-at-return-off-form"),
            request_reply=[NOTE, {"type": "return", "value": {"action": "accept"}}],
        ),
        atomic(
            "py-eli-at-replace",
            GOOD,
            outcome("allowed", "accepted", {"action": "accept", "content": {"name": "G"}}, "hook"),
            seen("py-eli-at-replace", GOOD),
            result_reply=[edit("replace", {"name": "G"})],
        ),
        atomic(
            "py-eli-at-merge",
            GOOD,
            outcome(
                "allowed",
                "accepted",
                {"action": "accept", "content": {"name": "Ada", "age": 40, "colours": ["blue"]}},
                "hook",
            ),
            seen("py-eli-at-merge", GOOD),
            result_reply=[edit("merge", {"age": 40}), edit("merge", {"colours": ["blue"]})],
        ),
        atomic(
            "py-eli-at-merge-off-form",
            GOOD,
            outcome("allowed", "rejected"),
            seen("py-eli-at-merge-off-form", GOOD),
            result_reply=[NOTE, edit("merge", {"age": 999})],
        ),
        atomic(
            "py-eli-at-edit-declined",
            {"action": "decline"},
            outcome("allowed", "rejected"),
            seen("py-eli-at-edit-declined", {"action": "decline"}),
            result_reply=[edit("replace", {"name": "A"})],
        ),
        atomic(
            "py-eli-at-user-off-form",
            {"action": "accept", "content": {"age": 3}},
            outcome("allowed", "rejected"),
            seen("py-eli-at-user-off-form"),  # the receiver refused the result
        ),
    ]


def all_rows() -> list[dict[str, Any]]:
    return wire_rows() + atomic_rows()


def files(home: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path]:
    """(the server's file: no expected; the blind client's: no expected, no responses)."""
    full = scenario_file(home, rows, "full.json")
    document = json.loads(full.read_text())
    for row in document["scenarios"]:
        row.pop("expected")
    server = write(home / "server-scenarios.json", document)
    return server, client_copy(home, full)


def no_effect(ident: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": "draft", "effects": []}}


def verify(
    rows: list[dict[str, Any]], report: dict[str, Any], entries: list[Any], transport: str
) -> None:
    """The harness's reading of one run (docs/ELICITATION.md, "What the harness checks")."""
    assert report["language"] == "python"
    results = {r["id"]: r for r in report["results"]}
    assert list(results) == [r["id"] for r in rows]
    owned = segments(entries)
    assert set(owned) == set(results)
    for row in rows:
        result, mine = results[row["id"]], owned[row["id"]]
        assert result["status"] == "completed", result
        assert mine[0] == {"kind": "row-start", "id": row["id"], "scenario": row["id"]}
        assert [e["kind"] for e in mine[1:]] == [
            "upload" if e["kind"] == "upload" else "elicitation" for e in mine[1:]
        ]
        got = [{"eventId": e["eventId"], "summary": e["summary"]} for e in mine if "summary" in e]
        assert got == row["expected"]["receipts"], row["id"]
        actual = result["actual"]
        if "atomic" in row:
            assert actual == row["expected"]["actual"], row["id"]
            assert not [e for e in mine if e["kind"] == "upload"]
            continue
        assert len(actual["steps"]) == len(row["steps"])
        for step, wanted, reported in zip(
            row["steps"], row["expected"]["steps"], actual["steps"], strict=True
        ):
            assert reported["op"] == step["op"]
            if step["op"] == "upload":
                assert reported["status"] == wanted["status"], (row["id"], reported)
                continue
            assert reported["outcome"] == wanted["outcome"], (row["id"], reported)
            if transport == "http":
                assert reported["status"] == wanted["status"], (row["id"], reported)
                if wanted["outcome"] == "accepted":
                    assert reported["response"] == no_effect(step["message"]["id"])
                else:
                    assert reported["error"] == -32602 and reported["response"] is None
            else:
                assert reported["status"] is None
                if wanted["outcome"] == "rejected":
                    assert reported["error"] == -32602
        uploads = [e for e in mine if e["kind"] == "upload"]
        steps = zip(row["steps"], actual["steps"], strict=True)
        planned = [(s, a) for s, a in steps if s["op"] == "upload"]
        assert len(uploads) == len(planned)
        refs: dict[str, str] = {}
        for entry, (step, reported) in zip(uploads, planned, strict=True):
            data = base64.b64decode(step["bodyBase64"])
            assert entry["size"] == len(data)
            assert entry["sha256"] == step.get("sha256", digest(data))
            assert entry["status"] == reported["status"]
            assert entry.get("ref") == reported["ref"]
            if entry["status"] == 201:
                assert refs.setdefault(digest(data), entry["ref"]) == entry["ref"]
        assert len(set(refs.values())) == len(refs)  # different bytes, different refs


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.mark.e2e
def test_over_http(tmp_path: Path) -> None:
    rows = all_rows()
    server_file, client_file = files(tmp_path, rows)
    with http_server(tmp_path, server_file) as ready:
        report, _ = run_client(client_config(tmp_path, client_file, "http", ready))
        entries = fetch_receipts(ready)
    assert report["receipts"] == {"entries": entries}
    verify(rows, report, entries, "http")


@pytest.mark.e2e
def test_over_stdio(tmp_path: Path) -> None:
    rows = all_rows()
    server_file, client_file = files(tmp_path, rows)
    config = client_config(tmp_path, client_file, "stdio", server_scenarios=server_file)
    report, _ = run_client(config)
    verify(rows, report, report["receipts"]["entries"], "stdio")
    child = json.loads((tmp_path / "child-stdio.json").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child["pid"], 0)  # reaped


@pytest.mark.e2e
def test_strict_bearer_over_https(tmp_path: Path, pki: Pki) -> None:
    rows = all_rows()
    server_file, client_file = files(tmp_path, rows)
    auth = {"mode": "bearer", "profile": "strict", "token": "elicitation-t0ken"}
    tls = {"certFile": str(pki.server_cert), "keyFile": str(pki.server_key)}
    trust = {"caFile": str(pki.ca)}
    with http_server(tmp_path, server_file, auth, tls) as ready:
        assert ready["endpoint"].startswith("https://")
        assert ready["uploadEndpoint"].startswith("http://127.0.0.1:")
        config = client_config(tmp_path, client_file, "http", ready, auth=auth, tls=trust)
        report, _ = run_client(config)
        entries = fetch_receipts(ready)
        verify(rows, report, entries, "http")
        # A wrong event credential: every send is refused before it is read (401),
        # nothing of it is recorded but the marks and the uploads.
        wrong = {**auth, "token": "wrong-token"}
        refused, _ = run_client(
            client_config(tmp_path, client_file, "http", ready, auth=wrong, tls=trust)
        )
        later = fetch_receipts(ready)[len(entries) :]
        assert {e["kind"] for e in later} <= {"row-start", "upload"}
    statuses = {r["id"]: r["status"] for r in refused["results"]}
    assert statuses["py-eli-accept"] == "completed"  # a send refused 401 is an outcome
    steps = next(r for r in refused["results"] if r["id"] == "py-eli-accept")["actual"]["steps"]
    assert [s.get("status") for s in steps] == [201, 401, 401]
    assert statuses["py-eli-at-user"] == "failed"  # the host's own exchange: a transport failure


@pytest.mark.e2e
def test_the_server_answers_the_rest_without_recording(tmp_path: Path) -> None:
    server_file, _ = files(tmp_path, all_rows())
    with http_server(tmp_path, server_file) as ready:
        port = int(ready["endpoint"].rsplit(":", 1)[1].split("/")[0])
        observe = {
            "jsonrpc": "2.0",
            "method": "hooks/observe",
            "params": {"protocolVersion": "draft", "event": request_event("o1", "os")},
        }
        status, _, body = request_json(port, "POST", "/intercept", observe)
        assert (status, body) == (204, b"")
        status, answer, _ = request_json(port, "POST", "/intercept", b"{not json")
        assert status == 400 and answer["error"]["code"] == -32700
        capabilities = {"jsonrpc": "2.0", "id": "c1", "method": "hooks/capabilities"}
        status, answer, _ = request_json(port, "POST", "/anything", capabilities)
        assert status == 400 and answer == {
            "jsonrpc": "2.0",
            "id": "c1",
            "error": {"code": -32602, "message": answer["error"]["message"]},
        }
        control = control_port(ready)
        status, _, _ = request_json(
            control, "POST", "/mark", {"scenario": "x", "kind": "acquired", "id": "x"}
        )
        assert status == 400
        assert request_json(control, "GET", "/health")[1] == {"ready": True}
        # GET /capabilities: the bare tool.before capabilities of the adapter's core
        # manifest (this server answers no hooks/capabilities itself), unrecorded
        status, answer, _ = request_json(port, "GET", "/capabilities", None)
        [entry] = [e for e in discovery_manifest()["events"] if e["event"] == "tool.before"]
        assert status == 200 and answer == entry["capabilities"]
        assert fetch_receipts(ready) == []


@pytest.mark.e2e
def test_the_shared_scenario_file_smoke(tmp_path: Path) -> None:
    """Our client against our server on scenarios/elicitation.json, when it exists:
    every row runs (its verdict is the harness's)."""
    from conftest import REPO_ROOT

    shared = REPO_ROOT / "scenarios" / "elicitation.json"
    if not shared.exists():
        pytest.skip("scenarios/elicitation.json is not there yet")
    document = json.loads(shared.read_text())
    http_rows = [r for r in document["scenarios"] if "http" in r.get("transports", ["http"])]
    server = write(tmp_path / "shared-server.json", {**document, "scenarios": http_rows})
    client = client_copy(tmp_path, server)
    with http_server(tmp_path, server) as ready:
        report, _ = run_client(client_config(tmp_path, client, "http", ready))
    assert [r["id"] for r in report["results"]] == [r["id"] for r in http_rows]
    assert {r["status"] for r in report["results"]} == {"completed"}
