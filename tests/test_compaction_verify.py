"""The compaction verifier: each rule broken by hand fails its row with its class.

One run (a before subscription that answers nothing, the synthetic summary,
an after observer) and one negative, with the receipts an honest client and
server make, written out here by hand from docs/COMPACTION.md.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from interop.results import Status
from interop.suites.base import ScenarioError
from interop.suites.compaction.scenarios import load_set
from interop.suites.compaction.verify import verify_set

RID = "cmp-unit-generated"
CAPS = {"effects": ["modify"], "modify": {"instructions": {"replace": True, "merge": False}}}
CAPS_AFTER = {"effects": ["modify"], "modify": {"summary": {"replace": True, "merge": False}}}
ITEM = {
    "id": "cmp-unit:context",
    "role": "user",
    "parts": [
        {
            "id": "cmp-unit:part",
            "kind": "text",
            "mediaType": "text/plain",
            "selection": "body",
            "text": "hi",
        }
    ],
}
BEFORE = {
    "id": f"{RID}:before",
    "source": "urn:ahp-interop:unit",
    "time": "2026-12-01T09:00:00Z",
    "type": "context.compact.before",
    "trigger": "manual",
    "items": [ITEM],
}
REQUEST = {
    "jsonrpc": "2.0",
    "id": f"{RID}:before",
    "method": "hooks/intercept",
    "params": {"protocolVersion": "draft", "event": BEFORE, "capabilities": CAPS},
}
SUMMARY = [
    {
        "id": f"{RID}:summary",
        "kind": "text",
        "mediaType": "text/plain",
        "selection": "body",
        "text": "Summary of 1 items.",
    }
]
AFTER = {
    "id": f"{RID}:after",
    "source": "urn:ahp-interop:unit",
    "time": "2026-12-01T09:00:00Z",
    "type": "context.compact.after",
    "parentEventId": f"{RID}:before",
    "summary": SUMMARY,
    "removed": [{"id": "cmp-unit:context"}],
    "execution": {"status": "executed"},
}
OBSERVE = {
    "jsonrpc": "2.0",
    "method": "hooks/observe",
    "params": {"protocolVersion": "draft", "event": AFTER},
}
NOTHING = {
    "jsonrpc": "2.0",
    "id": f"{RID}:before",
    "result": {"protocolVersion": "draft", "effects": []},
}
EXPECTED = {
    "applied": True,
    "instructions": [],
    "summary": SUMMARY,
    "execution": {"status": "executed"},
    "provenance": {"kind": "generated"},
    "before": {"called": ["gate"], "failures": [], "observations": []},
    "after": {"called": [], "failures": [], "observations": ["audit"]},
}
NEGATIVE = {
    "jsonrpc": "2.0",
    "id": "cmp-unit-negative:before",
    "method": "hooks/intercept",
    "params": {"protocolVersion": "draft", "event": {**BEFORE, "id": "cmp-unit-negative:before"}},
}


def _document() -> dict[str, Any]:
    run = {
        "id": RID,
        "request": REQUEST,
        "before": [{"id": "gate", "mode": "intercept", "failurePolicy": "fail-open"}],
        "after": [{"id": "audit", "mode": "observe"}],
        "afterObserveOnly": False,
        "responseSequences": {"before": [NOTHING], "after": []},
        "expected": EXPECTED,
        "proof": {"before": [REQUEST], "after": [], "observations": [OBSERVE]},
    }
    negative = {"id": "cmp-unit-negative", "negative": NEGATIVE, "expected": {"error": -32602}}
    return {"version": 1, "suite": "compaction", "scenarios": [run, negative]}


def _honest() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    entries = [
        {"kind": "received", "id": f"{RID}:before", "message": REQUEST},
        {"kind": "replied", "id": f"{RID}:before"},
        {"kind": "chain-settled", "id": f"{RID}:before", "scenario": RID},
        {"kind": "chain-settled", "id": f"{RID}:after", "scenario": RID},
        {"kind": "observed", "eventId": f"{RID}:after", "event": AFTER, "message": OBSERVE},
    ]
    report = {
        "language": "python",
        "results": [
            {"id": RID, "status": "completed", "actual": EXPECTED},
            {"id": "cmp-unit-negative", "status": "completed", "actual": {"error": -32602}},
        ],
    }
    return copy.deepcopy(report), copy.deepcopy(entries)


def _judge(tmp_path: Path, report: Any, entries: Any) -> tuple[dict[str, Any], list[str]]:
    path = tmp_path / "compaction.json"
    path.write_text(json.dumps(_document()))
    rows = list(load_set(path).rows)
    verdicts, errors = verify_set(
        "compaction",
        rows,
        report=report,
        entries=entries,
        client_exit=0,
        language="python",
        stage="client",
        prior_errors=[],
    )
    return {v.id: v for v in verdicts}, [e.error_class for e in errors]


def test_an_honest_run_passes(tmp_path: Path) -> None:
    rows, errors = _judge(tmp_path, *_honest())
    assert errors == []
    assert {k: v.status for k, v in rows.items()} == {
        RID: Status.PASSED,
        "cmp-unit-negative": Status.PASSED,
    }, {k: v.error for k, v in rows.items()}


def _drop(kind: str) -> Any:
    def change(r: Any, e: list[dict[str, Any]]) -> None:
        e[:] = [x for x in e if x["kind"] != kind]

    return change


BREAKS: dict[str, tuple[str, str, Any]] = {
    "a wrong summary": (
        RID,
        "CompactionResult",
        lambda r, e: r["results"][0]["actual"].update(provenance={"kind": "supplied"}),
    ),
    "a changed request": (
        RID,
        "ChainRequests",
        lambda r, e: e[0]["message"]["params"]["event"].update(trigger="auto"),
    ),
    "no reply": (RID, "ChainCalls", _drop("replied")),
    "no settlement": (RID, "ChainSettlement", _drop("chain-settled")),
    "an observation before settlement": (
        RID,
        "ChainSettlement",
        lambda r, e: e.insert(2, e.pop(4)),
    ),
    "a missing observation": (RID, "ChainObservations", _drop("observed")),
    "a recorded negative": (
        "cmp-unit-negative",
        "NegativeRecorded",
        lambda r, e: e.append({"kind": "received", "id": NEGATIVE["id"], "message": NEGATIVE}),
    ),
    "an accepted negative": (
        "cmp-unit-negative",
        "NegativeAccepted",
        lambda r, e: r["results"][1].update(actual={"error": None}),
    ),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_broken_rule_fails_its_row_with_its_class(tmp_path: Path, name: str) -> None:
    row, error_class, change = BREAKS[name]
    report, entries = _honest()
    change(report, entries)
    rows, errors = _judge(tmp_path, report, entries)
    assert errors == []
    failed = {k: v.error for k, v in rows.items() if v.status == Status.FAILED}
    assert list(failed) == [row], (name, failed)
    assert error_class in (rows[row].diagnostics.get("classes") or []), (name, failed)


def test_a_broken_file_is_refused_naming_the_row(tmp_path: Path) -> None:
    document = _document()
    document["scenarios"][0]["request"]["id"] = "elsewhere"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ScenarioError, match=RID):
        load_set(path)
