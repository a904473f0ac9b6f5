"""The elicitation verifier: each rule broken by hand fails its row with its class.

One wire row (an upload, a form request with an attachment, its result, and a
wrong-session result the receiver must refuse) and one atomic row (a merge at
the result boundary), with the report and receipts an honest client and
server make, written out here by hand from docs/ELICITATION.md.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from interop.results import Status
from interop.suites.base import ScenarioError
from interop.suites.elicitation.scenarios import load_set
from interop.suites.elicitation.verify import verify_set

SOURCE = "authenticated:unit-sender"
BYTES = b"\x89PNG unit attachment"
DIGEST = hashlib.sha256(BYTES).hexdigest()
PARAMS = {
    "mode": "form",
    "message": "How many seats?",
    "requestedSchema": {
        "type": "object",
        "properties": {"seats": {"type": "integer", "minimum": 1}},
        "required": ["seats"],
    },
}
ANSWER = {"action": "accept", "content": {"seats": 2}}


def _part(pid: str, body: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": json.dumps(body),
    }


def _envelope(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": event["id"],
        "method": "hooks/intercept",
        "params": {"protocolVersion": "draft", "event": event, "capabilities": {"effects": []}},
    }


REQUEST_EVENT = {
    "id": "eli-unit-wire:request",
    "source": "urn:unit:asserted",
    "time": "2026-12-01T09:00:00Z",
    "type": "user.elicitation.request",
    "session": {"id": "eli-unit-wire:session"},
    "items": [
        {
            "id": "eli-unit-wire:image",
            "kind": "attachment",
            "mediaType": "image/png",
            "selection": "body",
            "body": {"ref": "eli-unit-wire:image-alias"},
        }
    ],
    "elicitation": {
        "server": "unit-server",
        "mode": "form",
        "request": _part("eli-unit-wire:request-body", PARAMS),
    },
}
RESULT_EVENT = {
    "id": "eli-unit-wire:result",
    "source": "urn:unit:asserted",
    "time": "2026-12-01T09:00:01Z",
    "type": "user.elicitation.result",
    "session": {"id": "eli-unit-wire:session"},
    "parentEventId": "eli-unit-wire:request",
    "elicitation": {
        "server": "unit-server",
        "mode": "form",
        "action": "accept",
        "result": _part("eli-unit-wire:result-body", ANSWER),
    },
}
WRONG_SESSION = {
    **RESULT_EVENT,
    "id": "eli-unit-wire:result-elsewhere",
    "session": {"id": "eli-unit-wire:other"},
}
WIRE = {
    "id": "eli-unit-wire",
    "steps": [
        {
            "op": "upload",
            "alias": "eli-unit-wire:image-alias",
            "bodyBase64": base64.b64encode(BYTES).decode(),
            "credential": "upload",
        },
        {"op": "send", "message": _envelope(REQUEST_EVENT)},
        {"op": "send", "message": _envelope(WRONG_SESSION)},
        {"op": "send", "message": _envelope(RESULT_EVENT)},
    ],
    "expected": {
        "steps": [
            {"op": "upload", "status": 201},
            {"op": "send", "outcome": "accepted", "status": 200},
            {"op": "send", "outcome": "rejected", "status": 400},
            {"op": "send", "outcome": "accepted", "status": 200},
        ],
        "receipts": [
            {"eventId": "eli-unit-wire:request", "summary": {"request": PARAMS}},
            {
                "eventId": "eli-unit-wire:result",
                "summary": {
                    "request": PARAMS,
                    "result": ANSWER,
                    "provenance": {"kind": "mcp", "authenticatedSource": SOURCE},
                    "externalCompletion": False,
                },
            },
        ],
    },
}
ATOMIC_REQUEST = {
    **REQUEST_EVENT,
    "id": "eli-unit-atomic:request",
    "session": {"id": "eli-unit-atomic:session"},
}
del ATOMIC_REQUEST["items"]
MERGED = {"action": "accept", "content": {"seats": 3}}
ATOMIC = {
    "id": "eli-unit-atomic",
    "atomic": {
        "request": {
            **_envelope(ATOMIC_REQUEST),
            "params": {
                "protocolVersion": "draft",
                "event": ATOMIC_REQUEST,
                "capabilities": {"effects": ["deny", "return", "message"]},
            },
        },
        "userResult": ANSWER,
        "resultCapabilities": {
            "effects": ["modify"],
            "modify": {"content": {"replace": True, "merge": True}},
        },
    },
    "responses": {
        "eli-unit-atomic:result": {
            "jsonrpc": "2.0",
            "id": "eli-unit-atomic:result",
            "result": {
                "protocolVersion": "draft",
                "effects": [
                    {
                        "type": "modify",
                        "target": "content",
                        "operation": "merge",
                        "value": {"seats": 3},
                    }
                ],
            },
        }
    },
    "expected": {
        "actual": {
            "request": "allowed",
            "result": "accepted",
            "published": MERGED,
            "provenance": "hook",
        },
        "receipts": [
            {"eventId": "eli-unit-atomic:request", "summary": {"request": PARAMS}},
            {
                "eventId": "eli-unit-atomic:result",
                "summary": {
                    "request": PARAMS,
                    "result": ANSWER,
                    "provenance": {"kind": "mcp", "authenticatedSource": SOURCE},
                    "externalCompletion": False,
                },
            },
        ],
    },
}
NO_EFFECT = {"protocolVersion": "draft", "effects": []}


def _honest(transport: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The report and receipts of an honest client and server, by hand."""
    http = transport == "http"
    ref = "urn:uuid:00000000-0000-4000-8000-000000000001"

    def accepted(eid: str) -> dict[str, Any]:
        return {
            "op": "send",
            "outcome": "accepted",
            "status": 200 if http else None,
            "error": None,
            "response": {"jsonrpc": "2.0", "id": eid, "result": NO_EFFECT},
        }

    steps = [
        {"op": "upload", "status": 201, "ref": ref},
        accepted("eli-unit-wire:request"),
        {
            "op": "send",
            "outcome": "rejected",
            "status": 400 if http else None,
            "error": -32602,
            "response": None,
        },
        accepted("eli-unit-wire:result"),
    ]
    report = {
        "language": "python",
        "results": [
            {"id": "eli-unit-wire", "status": "completed", "actual": {"steps": steps}},
            {
                "id": "eli-unit-atomic",
                "status": "completed",
                "actual": ATOMIC["expected"]["actual"],
            },
        ],
    }
    wire_receipts = WIRE["expected"]["receipts"]
    atomic_receipts = ATOMIC["expected"]["receipts"]
    entries = [
        {"kind": "row-start", "id": "eli-unit-wire", "scenario": "eli-unit-wire"},
        {"kind": "upload", "ref": ref, "status": 201, "size": len(BYTES), "sha256": DIGEST},
        {"kind": "elicitation", "type": "user.elicitation.request", **wire_receipts[0]},
        {"kind": "elicitation", "type": "user.elicitation.result", **wire_receipts[1]},
        {"kind": "row-start", "id": "eli-unit-atomic", "scenario": "eli-unit-atomic"},
        {"kind": "elicitation", "type": "user.elicitation.request", **atomic_receipts[0]},
        {"kind": "elicitation", "type": "user.elicitation.result", **atomic_receipts[1]},
    ]
    return report, entries


def _rows(tmp_path: Path, rows: list[dict[str, Any]] | None = None) -> Any:
    path = tmp_path / "elicitation.json"
    document = {
        "version": 1,
        "suite": "elicitation",
        "authenticatedSource": SOURCE,
        "scenarios": rows if rows is not None else [WIRE, ATOMIC],
    }
    path.write_text(json.dumps(document))
    return load_set(path)


def _judge(
    tmp_path: Path, report: Any, entries: Any, transport: str = "http"
) -> dict[str, tuple[Status, str | None]]:
    scenario_set = _rows(tmp_path)
    verdicts, errors = verify_set(
        scenario_set.name,
        scenario_set.for_transport(transport),
        transport=transport,
        report=report,
        entries=entries,
        client_exit=0,
        language="python",
        stage="client[elicitation]",
        prior_errors=[],
    )
    assert errors == [], errors
    return {v.id: (v.status, v.error) for v in verdicts}


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_an_honest_run_passes(tmp_path: Path, transport: str) -> None:
    report, entries = _honest(transport)
    judged = _judge(tmp_path, report, entries, transport)
    assert judged == {
        "eli-unit-wire": (Status.PASSED, None),
        "eli-unit-atomic": (Status.PASSED, None),
    }


def _broken(tmp_path: Path, transport: str, change: Any) -> dict[str, tuple[Status, str | None]]:
    report, entries = _honest(transport)
    report, entries = copy.deepcopy(report), copy.deepcopy(entries)
    change(report, entries)
    return _judge(tmp_path, report, entries, transport)


def _only(judged: dict[str, tuple[Status, str | None]], rid: str, error_class: str) -> None:
    failed = {k: v for k, v in judged.items() if v[0] is Status.FAILED}
    assert list(failed) == [rid], judged
    assert (failed[rid][1] or "").startswith(error_class), failed


def test_a_receiver_that_records_the_wrong_session_result_fails_the_row(tmp_path: Path) -> None:
    def change(report: Any, entries: list[dict[str, Any]]) -> None:
        steps = report["results"][0]["actual"]["steps"]
        steps[2] = {**steps[1], "response": {**steps[1]["response"], "id": WRONG_SESSION["id"]}}
        recorded = {
            "kind": "elicitation",
            "type": "user.elicitation.result",
            "eventId": WRONG_SESSION["id"],
            "summary": WIRE["expected"]["receipts"][1]["summary"],
        }
        entries.insert(3, recorded)

    _only(_broken(tmp_path, "http", change), "eli-unit-wire", "ElicitationOutcome")

    def receipt_only(report: Any, entries: list[dict[str, Any]]) -> None:
        entries.append(
            {
                "kind": "elicitation",
                "type": "user.elicitation.result",
                "eventId": "eli-unit-atomic:again",
                "summary": {},
            }
        )

    _only(_broken(tmp_path, "http", receipt_only), "eli-unit-atomic", "ElicitationReceipts")


def test_a_wrong_status_or_stdio_error_fails(tmp_path: Path) -> None:
    def status(report: Any, _: Any) -> None:
        report["results"][0]["actual"]["steps"][2]["status"] = 409

    _only(_broken(tmp_path, "http", status), "eli-unit-wire", "ElicitationOutcome")

    def code(report: Any, _: Any) -> None:
        report["results"][0]["actual"]["steps"][2]["error"] = -32600

    _only(_broken(tmp_path, "stdio", code), "eli-unit-wire", "ElicitationOutcome")
    # over stdio the HTTP status is not compared
    assert _broken(tmp_path, "stdio", status)["eli-unit-wire"][0] is Status.PASSED


def test_an_accepted_reply_must_be_the_no_effect_reply(tmp_path: Path) -> None:
    def change(report: Any, _: Any) -> None:
        step = report["results"][0]["actual"]["steps"][1]
        step["response"]["result"]["effects"] = [{"type": "message", "text": "hi"}]

    _only(_broken(tmp_path, "http", change), "eli-unit-wire", "ElicitationOutcome")


def test_a_summary_that_differs_fails(tmp_path: Path) -> None:
    def change(_: Any, entries: list[dict[str, Any]]) -> None:
        entries[3]["summary"]["provenance"]["authenticatedSource"] = "urn:unit:asserted"

    _only(_broken(tmp_path, "http", change), "eli-unit-wire", "ElicitationReceipts")


def test_upload_receipts_must_match(tmp_path: Path) -> None:
    def ref(report: Any, _: Any) -> None:
        report["results"][0]["actual"]["steps"][0]["ref"] = "urn:uuid:other"

    _only(_broken(tmp_path, "http", ref), "eli-unit-wire", "ElicitationUploads")

    def declared(_: Any, entries: list[dict[str, Any]]) -> None:
        entries[1]["sha256"] = "0" * 64

    _only(_broken(tmp_path, "http", declared), "eli-unit-wire", "ElicitationUploads")

    def missing(_: Any, entries: list[dict[str, Any]]) -> None:
        del entries[1]

    _only(_broken(tmp_path, "http", missing), "eli-unit-wire", "ElicitationUploads")


def test_different_bytes_sharing_a_ref_fail(tmp_path: Path) -> None:
    second = base64.b64encode(b"other bytes").decode()
    row = copy.deepcopy(WIRE)
    row["steps"].insert(1, {**row["steps"][0], "bodyBase64": second})
    row["expected"]["steps"].insert(1, {"op": "upload", "status": 201})
    scenario_set = _rows(tmp_path, [row])
    report, entries = _honest("http")
    steps = report["results"][0]["actual"]["steps"]
    steps.insert(1, dict(steps[0]))
    upload = {**entries[1], "size": 11, "sha256": hashlib.sha256(b"other bytes").hexdigest()}
    entries.insert(2, upload)
    report["results"] = report["results"][:1]
    entries = entries[:5]
    verdicts, errors = verify_set(
        scenario_set.name,
        scenario_set.for_transport("http"),
        transport="http",
        report=report,
        entries=entries,
        client_exit=0,
        language="python",
        stage="client[elicitation]",
        prior_errors=[],
    )
    assert errors == []
    assert verdicts[0].status is Status.FAILED
    assert "different bytes share the ref" in (verdicts[0].error or "")


def test_a_missing_mark_and_a_wrong_atomic_actual_fail(tmp_path: Path) -> None:
    def mark(_: Any, entries: list[dict[str, Any]]) -> None:
        entries[4]["scenario"] = "eli-unit-elsewhere"
        entries[4]["id"] = "eli-unit-elsewhere"

    _only(_broken(tmp_path, "http", mark), "eli-unit-atomic", "ElicitationReceipts")

    def actual(report: Any, _: Any) -> None:
        report["results"][1]["actual"]["published"] = ANSWER

    _only(_broken(tmp_path, "http", actual), "eli-unit-atomic", "ElicitationResult")


def test_malformed_files_are_refused_naming_the_row(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({**WIRE, "responses": {}}, "scripts no responses"),
        ({**WIRE, "expected": {"steps": [], "receipts": []}}, "one entry per step"),
        ({**ATOMIC, "steps": []}, "either steps"),
        ({**ATOMIC, "responses": {"elsewhere": {}}}, "responses may be keyed only"),
    ]
    for row, message in cases:
        with pytest.raises(ScenarioError, match=message) as caught:
            _rows(tmp_path, [row])
        assert repr(row["id"]) in str(caught.value)
    twice = {**copy.deepcopy(WIRE), "id": "eli-unit-copy"}
    with pytest.raises(ScenarioError, match="both send event"):
        _rows(tmp_path, [WIRE, twice])
