"""The catalogue verifier: every rule fails its row or combination with its class.

Receipts and reports are written here by hand for four upstream rows (an
accepted notify, a schema-rejected rawNotify, an accepted and a rejected
registration); each test breaks one rule of docs/CATALOGUE.md.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.results import Status
from interop.suites.base import ScenarioError
from interop.suites.catalogue.scenarios import CatalogueScenario, load_set
from interop.suites.catalogue.verify import catalogue_manifest, verify_set

UPSTREAM = ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json"
ROWS = (
    "catalogue:tool.before",
    "typed-model-error-required",
    "registration-observe-accepted",
    "registration-duplicate-backend",
)
REQUEST = {
    "jsonrpc": "2.0",
    "id": "discovery",
    "method": "hooks/capabilities",
    "params": {"protocolVersion": "draft"},
}


def _scenarios() -> list[CatalogueScenario]:
    chosen = [s for s in load_set(UPSTREAM).scenarios if s.id in ROWS]
    assert [s.id for s in chosen] == list(ROWS)
    return chosen


def _response() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": "discovery",
        "result": {"protocolVersion": "draft", "manifest": copy.deepcopy(catalogue_manifest())},
    }


def _honest(scenarios: list[CatalogueScenario]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A report and receipts as a correct client and server make them (written by hand)."""
    tool_before, invalid = scenarios[0].sent[0], scenarios[1].sent[0]
    entries: list[dict[str, Any]] = [
        {"kind": "discovery", "request": copy.deepcopy(REQUEST), "response": _response()},
        {
            "kind": "observed",
            "eventId": "catalogue:tool.before",
            "event": tool_before["params"]["event"],
            "message": tool_before,
        },
        {
            "kind": "rejected",
            "eventId": "invalid:model-error",
            "message": invalid,
            "errorKind": "schema",
        },
    ]
    results = [
        {
            "id": ROWS[0],
            "status": "completed",
            "actual": {"sent": [tool_before], "registrations": []},
        },
        {"id": ROWS[1], "status": "completed", "actual": {"sent": [invalid], "registrations": []}},
        {
            "id": ROWS[2],
            "status": "completed",
            "actual": {"sent": [], "registrations": [{"accepted": True}]},
        },
        {
            "id": ROWS[3],
            "status": "completed",
            "actual": {
                "sent": [],
                "registrations": [{"accepted": False, "rule": "duplicate-backend"}],
            },
        },
    ]
    report = {"language": "python", "discovery": _response(), "results": results}
    return copy.deepcopy(report), copy.deepcopy(entries)


def _judge(
    report: Any,
    entries: Any,
    scenarios: list[CatalogueScenario] | None = None,
    profile: str = "strict",
) -> tuple[dict[str, RowVerdictLike], list[str]]:
    rows, errors = verify_set(
        "catalogue-scenarios",
        scenarios or _scenarios(),
        report=report,
        entries=entries,
        client_exit=0,
        language="python",
        profile=profile,
        stage="client",
        prior_errors=[],
    )
    return {r.id: r for r in rows}, [e.error_class for e in errors]


RowVerdictLike = Any


def test_an_honest_run_passes_every_row() -> None:
    report, entries = _honest(_scenarios())
    rows, errors = _judge(report, entries)
    assert errors == []
    assert {k: r.status for k, r in rows.items()} == {k: Status.PASSED for k in ROWS}


def test_the_upstream_rows_compare_accepted_only() -> None:
    # upstream expectations carry no rule: a client's rule is dropped, not compared
    report, entries = _honest(_scenarios())
    report["results"][3]["actual"]["registrations"] = [{"accepted": False, "rule": "schema"}]
    rows, errors = _judge(report, entries)
    assert errors == [] and rows[ROWS[3]].status == Status.PASSED


def test_a_named_rule_is_compared() -> None:
    scenarios = _scenarios()
    raw = copy.deepcopy(scenarios[3].raw)
    raw["expected"]["registrations"] = [{"accepted": False, "rule": "duplicate-backend"}]
    scenarios[3] = CatalogueScenario(raw["id"], raw)
    report, entries = _honest(scenarios)
    report["results"][3]["actual"]["registrations"] = [{"accepted": False, "rule": "schema"}]
    rows, _ = _judge(report, entries, scenarios)
    assert rows[ROWS[3]].status == Status.FAILED
    assert rows[ROWS[3]].error.startswith("CatalogueResult")


@pytest.mark.parametrize(
    ("row", "change"),
    [
        (ROWS[2], lambda a: a["registrations"].__setitem__(0, {"accepted": False})),
        (ROWS[0], lambda a: a["sent"].clear()),
    ],
)
def test_a_wrong_result_fails_its_row(row: str, change: Any) -> None:
    report, entries = _honest(_scenarios())
    change(next(r for r in report["results"] if r["id"] == row)["actual"])
    rows, errors = _judge(report, entries)
    assert errors == []
    failed = {k: r.error for k, r in rows.items() if r.status == Status.FAILED}
    assert list(failed) == [row] and failed[row].startswith("CatalogueResult")


def _breaks() -> dict[str, tuple[str, Any]]:
    def drop_discovery(r: Any, e: Any) -> None:
        del e[0]

    def twice(r: Any, e: Any) -> None:
        e.append(copy.deepcopy(e[0]))

    def bad_request(r: Any, e: Any) -> None:
        e[0]["request"]["params"]["extra"] = 1

    def other_id(r: Any, e: Any) -> None:
        e[0]["response"]["id"] = "another"
        r["discovery"]["id"] = "another"

    def reported_other(r: Any, e: Any) -> None:
        r["discovery"]["result"]["manifest"]["gaps"] = [{"path": "x", "reason": "y"}]

    def manifest(r: Any, e: Any) -> None:
        for value in (r["discovery"], e[0]["response"]):
            value["result"]["manifest"]["transports"] = ["http", "stdio"]

    def extra(r: Any, e: Any) -> None:
        e.append(copy.deepcopy(e[1]))

    return {
        "no discovery": ("DiscoveryCount", drop_discovery),
        "two discoveries": ("DiscoveryCount", twice),
        "invalid request": ("DiscoveryInvalid", bad_request),
        "ids differ": ("DiscoveryInvalid", other_id),
        "reported differently": ("DiscoveryMismatch", reported_other),
        "another manifest": ("ManifestMismatch", manifest),
        "a delivery too many": ("ReceiptCount", extra),
    }


@pytest.mark.parametrize("name", sorted(_breaks()))
def test_a_combination_rule_broken_is_named(name: str) -> None:
    error_class, change = _breaks()[name]
    report, entries = _honest(_scenarios())
    change(report, entries)
    _rows, errors = _judge(report, entries)
    assert errors == [error_class], name


def test_compat_checks_what_the_upstream_verifier_does() -> None:
    report, entries = _honest(_scenarios())
    for value in (report["discovery"], entries[0]["response"]):
        value["result"]["manifest"]["transports"] = ["http", "stdio"]  # not M, yet fine
    assert _judge(report, entries, profile="compat")[1] == []
    for value in (report["discovery"], entries[0]["response"]):
        value["result"]["manifest"]["events"].append(
            {"event": "hook.failure", "modes": ["observe"]}
        )
    assert _judge(report, entries, profile="compat")[1] == ["ManifestMismatch"]


def _accept(entries: list[dict[str, Any]]) -> None:
    entry = entries[2]
    entries[2] = {
        "kind": "observed",
        "eventId": entry["eventId"],
        "event": entry["message"]["params"]["event"],
        "message": entry["message"],
    }


@pytest.mark.parametrize(
    ("name", "change", "error_class"),
    [
        (
            "accepted instead of rejected",
            _accept,
            "DeliveryMismatch",
        ),
        ("another error kind", lambda e: e[2].update(errorKind="lineage"), "DeliveryMismatch"),
        (
            "a changed message",
            lambda e: e[1]["message"]["params"].update(extensions={}),
            "Delivery",
        ),
        ("order swapped", lambda e: e.__setitem__(slice(1, 3), [e[2], e[1]]), "DeliveryMismatch"),
        ("event differs", lambda e: e[1]["event"].update(id="else"), "DeliveryMismatch"),
    ],
)
def test_a_delivery_rule_broken_fails_its_rows(name: str, change: Any, error_class: str) -> None:
    report, entries = _honest(_scenarios())
    change(entries)
    rows, errors = _judge(report, entries)
    assert errors == []
    failed = {k: r.error for k, r in rows.items() if r.status == Status.FAILED}
    assert failed and set(failed) <= {ROWS[0], ROWS[1]}, name
    assert all(error.startswith(error_class) for error in failed.values()), failed


def test_a_missing_delivery_fails_its_row() -> None:
    report, entries = _honest(_scenarios())
    del entries[2]
    rows, errors = _judge(report, entries)
    assert errors == []
    failed = {k: r.error for k, r in rows.items() if r.status == Status.FAILED}
    assert list(failed) == [ROWS[1]] and "no receipt" in failed[ROWS[1]]


def test_an_observed_message_the_schema_rejects_is_named(tmp_path: Path) -> None:
    # a (wrong) expectation that the invalid model.error is accepted: the receipt
    # matches it, and the verifier still names the invalid observed message
    scenarios = _scenarios()
    raw = copy.deepcopy(scenarios[1].raw)
    raw["expected"]["deliveries"] = [{"accepted": True, "errorKind": None}]
    scenarios[1] = CatalogueScenario(raw["id"], raw)
    report, entries = _honest(scenarios)
    message = entries[2]["message"]
    entries[2] = {
        "kind": "observed",
        "eventId": "invalid:model-error",
        "event": message["params"]["event"],
        "message": message,
    }
    rows, _ = _judge(report, entries, scenarios)
    assert rows[ROWS[1]].error.startswith("ReceivedInvalid")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda s: s["expected"]["deliveries"].append({"accepted": True, "errorKind": None}),
            "one verdict",
        ),
        (
            lambda s: s["expected"]["deliveries"].__setitem__(
                0, {"accepted": False, "errorKind": None}
            ),
            "errorKind",
        ),
        (
            lambda s: (s["expected"]["sent"].clear(), s["expected"]["deliveries"].clear()),
            "rawNotify",
        ),
        (lambda s: s.update(category="other"), "category"),
        (lambda s: s["steps"][0].update(op="notifyAll"), "op"),
        (lambda s: s["steps"][0]["message"]["params"]["event"].pop("id"), "params.event.id"),
    ],
)
def test_a_broken_file_is_refused_naming_the_scenario(
    tmp_path: Path, change: Any, words: str
) -> None:
    document = json.loads(UPSTREAM.read_text())
    target = next(s for s in document["scenarios"] if s["id"] == "typed-model-error-required")
    change(target)
    path = tmp_path / "catalogue-scenarios.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ScenarioError) as caught:
        load_set(path)
    assert "typed-model-error-required" in str(caught.value) and words in str(caught.value)


def test_a_named_rule_must_be_one_of_the_table(tmp_path: Path) -> None:
    document = json.loads(UPSTREAM.read_text())
    target = next(s for s in document["scenarios"] if s["id"] == "registration-duplicate-backend")
    target["expected"]["registrations"] = [{"accepted": False, "rule": "duplicates"}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ScenarioError, match="rule belongs to a rejection"):
        load_set(path)


def test_rows_run_again_keep_the_rows_whose_events_they_name_as_parent() -> None:
    """A crashed set's rows run again alone, but a row whose event names a parent that
    another row sends keeps that row with it (lineage lasts one set's run)."""
    from interop.suites.catalogue.suite import dependency_groups

    rows = list(load_set(ROOT / "scenarios" / "upstream" / "catalogue-scenarios.json").scenarios)
    groups = dependency_groups(rows)
    together = [[r.id for r in group] for group in groups if len(group) > 1]
    assert together == [["task-modified-actual-pair", "wrong-known-task-parent"]]
    flattened = sorted(r.id for group in groups for r in group)
    assert flattened == sorted(r.id for r in rows)  # every row once
    assert len(groups) == len(rows) - 1
