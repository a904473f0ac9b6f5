"""Coverage by requirement (interop/coverage): features of hand-written rows of every
suite, the requirement table against the golden fixtures' manifest, coverage of a
hand-built document and of a real small report."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.coverage import (
    LEVELS,
    VOCABULARY,
    coverage,
    coverage_lines,
    features,
    load_requirements,
)

MANIFEST = ROOT / "scenarios" / "upstream" / "fixtures" / "draft" / "manifest.json"


def _request(rid: str, event_type: str = "tool.before", **params: Any) -> dict[str, Any]:
    event = {
        "id": rid,
        "source": "urn:test",
        "type": event_type,
        "time": "2026-01-01T00:00:00Z",
        "call": {"id": "c1"},
        "path": "native",
        "tool": {"origin": "native", "name": "grep", "input": {"q": 1}},
    }
    body: dict[str, Any] = {"protocolVersion": "draft", "event": event}
    body["capabilities"] = {"effects": ["deny", "modify"], "modify": {"input": {"replace": True}}}
    body.update(params)
    return {"jsonrpc": "2.0", "id": rid, "method": "hooks/intercept", "params": body}


def _response(rid: str, *effects: dict[str, Any], version: str = "draft") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {"protocolVersion": version, "effects": [*effects]},
    }


# ---------------------------------------------------------------------------------------
# features of hand-written rows


def test_core_positive_row() -> None:
    row = {
        "id": "r",
        "request": _request("r", state={"permission": "allow", "candidate": {"value": 1}}),
        "response": _response(
            "r",
            {"type": "deny", "reason": "no"},
            {"type": "modify", "target": "input", "operation": "merge", "value": {}},
            {"type": "flow", "operation": "stop", "reason": "halt"},
        ),
        "expected": {"decision": "deny", "flow": "stop"},
        "tags": ["permission"],
    }
    assert features("core", row) == {
        "suite:core",
        "method:hooks/intercept",
        "event:tool.before",
        "state:permission",
        "state:candidate",
        "effect:deny",
        "effect:modify",
        "modify:input/merge",
        "effect:flow",
        "flow:stop",
    }


def test_core_rejection_row_carries_its_class_and_ignores_expected() -> None:
    row = {
        "id": "r",
        "request": _request("r"),
        "response": _response("r", {"type": "teleport"}, version="0.1"),
        "expectError": True,
        "tags": ["negative", "atomic-rejection", "schema-invalid"],
    }
    found = features("core", row)
    assert {"negative:schema-invalid", "effect:unknown", "version:mismatch", "state:omitted"} <= (
        found
    )
    # the expected outcome of a positive row never adds a feature
    positive = {**row, "expected": {"flow": "stop", "rejected": True}, "tags": []}
    del positive["expectError"]
    assert not any(f.startswith(("negative:", "flow:")) for f in features("core", positive))
    empty = {"id": "e", "request": _request("e", state={}), "response": _response("e")}
    assert {"effect:none", "state:initial"} <= features("core", empty)


def test_lifecycle_steps_and_chain() -> None:
    row = {
        "id": "lc",
        "requests": {"a": _request("lc:a")},
        "responses": {"a": _response("lc:a", {"type": "allow"})},
        "chain": {
            "subscriptions": [
                {"id": "g", "mode": "intercept", "failurePolicy": "fail-closed", "timeoutMs": 5},
                {"id": "h", "mode": "intercept", "failurePolicy": "fail-open"},
                {"id": "o", "mode": "observe"},
            ],
            "interrupt": True,
            "holdObservers": False,
        },
        "observeFaults": {"a": ["silent"]},
        "steps": [{"op": "send", "key": "a"}, {"op": "cancel", "key": "a"}, {"op": "bogus"}],
        "expected": {"published": [], "cancelled": ["lc:a"]},
        "chainProof": {"requests": [_request("x", "turn.start")]},
    }
    found = features("lifecycle", row)
    assert {
        "op:send",
        "op:cancel",
        "chain:fail-closed",
        "chain:fail-open",
        "chain:timeout",
        "chain:serial",
        "chain:observer",
        "chain:interrupt",
        "chain:observer-fault",
        "effect:allow",
    } <= found
    assert "event:turn.start" not in found  # the chain proof is an answer, never read
    # a receiver probe built in code has only its id in the report
    assert features("lifecycle", {"id": "upload-chunked-400", "expected": {}}) == {
        "suite:lifecycle",
        "op:upload",
    }
    probe = {"id": "observe-self-parent-409", "expected": {}}
    assert features("catalogue", probe) == {"suite:catalogue", "method:hooks/observe"}
    assert "chain:hold-observers" not in found


def test_catalogue_events_and_registration() -> None:
    notify = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": {"id": "n", "type": "file.changed"}},
    }
    registration = {
        "protocolVersion": "draft",
        "hooks": [
            {
                "id": "org.example.a",
                "transport": {"type": "http", "url": "https://a.test/"},
                "authentication": {"type": "bearer", "token": "literal"},
                "subscriptions": [
                    {"events": ["tool.*"], "mode": "observe", "content": {"default": "omit"}}
                ],
            }
        ],
    }
    row = {
        "id": "cat",
        "category": "registration",
        "steps": [
            {"op": "notify", "message": notify},
            {"op": "rawNotify", "message": {**notify, "id": 1}},
            {"op": "register", "registration": registration, "requirements": [{"event": "x"}]},
        ],
        "expected": {"registrations": [{"accepted": False, "rule": "schema"}]},
        "requests": {},
        "responses": {},
    }
    assert features("catalogue", row) == {
        "suite:catalogue",
        "catalogue:registration",
        "op:notify",
        "op:rawNotify",
        "op:register",
        "method:hooks/observe",
        "method:hooks/capabilities",
        "event:file.changed",
        "registration:authentication",
        "registration:literal-credential",
        "registration:observe",
        "registration:wildcard",
        "registration:requirement",
    }


def test_compaction_supplied_chain_and_negative() -> None:
    parts = [
        {"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "s"}
    ]
    row = {
        "id": "cmp",
        "request": _request("cmp:before", "context.compact.before"),
        "before": [
            {"id": "a", "mode": "intercept", "failurePolicy": "fail-open"},
            {"id": "b", "mode": "intercept", "failurePolicy": "fail-open"},
        ],
        "after": [{"id": "c", "mode": "observe"}],
        "afterObserveOnly": True,
        "responseSequences": {
            "before": [_response("cmp:before", {"type": "return", "value": parts})],
            "after": [],
        },
        "expected": {"applied": True},
    }
    found = features("compaction", row)
    assert {
        "compaction:supplied",
        "compaction:chain",
        "compaction:observer",
        "compaction:after-observe-only",
        "event:context.compact.before",
        "content:text",
    } <= found
    assert "compaction:negative" not in found
    negative = {"id": "n", "negative": _request("n:before"), "expected": {"error": -32602}}
    assert "compaction:negative" in features("compaction", negative)


def test_elicitation_correlation_atomic_upload() -> None:
    request = _request("e:request", "user.elicitation.request")
    request["params"]["event"]["elicitation"] = {"server": "s", "mode": "form"}
    result = _request("e:result", "user.elicitation.result")
    result["params"]["event"]["parentEventId"] = "e:request"
    result["params"]["event"]["elicitation"] = {"server": "s", "mode": "url", "action": "accept"}
    wire = {
        "id": "e",
        "steps": [
            {"op": "upload", "alias": "x", "bodyBase64": "", "credential": "upload"},
            {"op": "send", "message": request},
            {"op": "send", "message": result},
        ],
        "expected": {"steps": []},
    }
    found = features("elicitation", wire)
    assert {"elicitation:correlation", "elicitation:form", "elicitation:url", "op:upload"} <= found
    assert "elicitation:atomic" not in found
    atomic = {"id": "a", "atomic": {"request": request}, "responses": {}, "expected": {}}
    found = features("elicitation", atomic)
    assert {"elicitation:atomic", "elicitation:form"} <= found
    assert "elicitation:correlation" not in found


def test_isolation_and_auth_rows() -> None:
    iso = {"id": "iso-capture-after-event-cookie", "steps": [{"op": "upload"}], "requests": {}}
    assert {"isolation:plain", "isolation:cookie", "op:upload"} <= features("isolation", iso)
    assert features("auth", {"id": "strict/jwt-expired@capabilities", "expected": {}}) == {
        "suite:auth",
        "method:hooks/capabilities",
        "auth-server:refusal",
        "auth-server:jwt",
    }
    assert "auth-server:acceptance" in features("auth", {"id": "compat/positive-control@intercept"})
    refused = {"id": "strict/token-type-not-bearer", "expected": {"reached": {}}}
    assert "auth-client:refusal" in features("auth", refused)


# ---------------------------------------------------------------------------------------
# the requirement table


def test_every_manifest_requirement_is_in_the_table_with_its_cases() -> None:
    manifest = json.loads(MANIFEST.read_text())
    carried: dict[str, list[str]] = {}
    for case in manifest["cases"]:
        for rid in case.get("requirements", []):
            carried.setdefault(rid, []).append(case["id"])
    table = {e["id"]: e for e in load_requirements()}
    assert len(carried) == 20
    assert set(carried) <= set(table)
    for rid, entry in table.items():
        # `fixtures` lists, in the manifest's order, every case carrying the id
        assert entry.get("fixtures", []) == carried.get(rid, []), rid


def test_table_entries_are_well_formed_and_reachable() -> None:
    table = load_requirements()
    assert [e["id"] for e in table] == sorted({e["id"] for e in table})
    for entry in table:
        assert entry["level"] in LEVELS
        assert entry["features"] == sorted(set(entry["features"]))
        # every rule says where it is stated: a canonical one its spec document, anchor,
        # section and pinned hash; one of ours (IMX-) what it refines
        if entry["id"].startswith("AHP-"):
            assert entry["document"].startswith("spec/draft/") and entry["anchor"] == entry["id"]
            assert entry["section"] and len(entry["textSha256"]) == 64
        else:
            assert entry["id"].startswith("IMX-") and entry["refines"], entry["id"]
        # every feature a requirement names is one `features()` (or a combination) produces
        assert set(entry["features"]) <= VOCABULARY, entry["id"]
    # only the conformance-claim rules have no row: listed, and reported untested
    assert [e["id"] for e in table if not e["features"]] == ["AHP-CORE-001", "AHP-CORE-002"]


def test_features_of_every_scenario_file_stay_in_the_vocabulary() -> None:
    files = {
        "core": ["core.json", "upstream/scenarios.json"],
        "lifecycle": [
            "lifecycle.json",
            "upstream/lifecycle-scenarios.json",
            "upstream/observation-chain-scenarios.json",
        ],
        "catalogue": ["catalogue.json", "upstream/catalogue-scenarios.json"],
        "compaction": ["compaction.json"],
        "elicitation": ["elicitation.json"],
    }
    produced: set[str] = set()
    for suite, names in files.items():
        for name in names:
            for row in json.loads((ROOT / "scenarios" / name).read_text())["scenarios"]:
                found = features(suite, row)
                assert found <= VOCABULARY
                assert f"suite:{suite}" in found
                produced |= found
    # the table's row features are mostly reached by the checked-in rows
    table_features = {f for e in load_requirements() for f in e["features"]}
    unreached = table_features - produced
    assert not any(f.startswith(("negative:", "chain:", "registration:")) for f in unreached)


# ---------------------------------------------------------------------------------------
# coverage of a hand-built document


def _document(
    tmp_path: Path,
    *,
    failing: str | None,
    error: str = '$.decision: expected "deny", got "allow"',
    errors: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    rows = [
        {
            "id": "deny",
            "request": _request("deny"),
            "response": _response("deny", {"type": "deny", "reason": "x"}),
        },
        {"id": "empty", "request": _request("empty"), "response": _response("empty")},
    ]
    (tmp_path / "set.json").write_text(json.dumps({"version": 1, "scenarios": rows}))
    results: dict[str, Any] = {"digests": ["aaaaaaaaaaaa", "bbbbbbbbbbbb"], "rows": []}
    failed = copy.deepcopy(results)
    if failing is not None:
        index = [r["id"] for r in rows].index(failing)
        failed["digests"][index] = None
        failed["rows"] = [{"id": failing, "status": "failed", "actual": None, "error": error}]
    return {
        "reportVersion": 3,
        "suites": ["core"],
        "sets": [
            {
                "suite": "core",
                "name": "mine",
                "file": "set.json",
                "rows": [{"id": r["id"], "expected": {}} for r in rows],
            },
            {"suite": "core", "name": "gone", "file": "missing.json", "rows": [{"id": "x"}]},
        ],
        "combinations": [
            {
                "suite": "core",
                "client": "alpha",
                "server": "beta",
                "transport": "http",
                "auth": "none",
                "status": "failed" if failing else "passed",
                "errors": errors or [],
                "results": {"mine": failed},
            },
            {
                "suite": "core",
                "client": "beta",
                "server": "alpha",
                "transport": "stdio",
                "auth": "none",
                "status": "passed",
                "results": {"mine": results},
            },
            {
                "suite": "core",
                "client": "gamma",
                "server": "alpha",
                "transport": "http",
                "auth": "bearer",
                "status": "not-run",
                "reason": "interrupted",
                "results": {},
            },
        ],
    }


def test_a_failing_row_is_charged_to_the_side_its_rule_judges_and_its_requirements_only(
    tmp_path: Path,
) -> None:
    """A core row whose client derived another decision from the scripted response
    (ClientResult at $.decision, docs/blame.md): the client is charged with the
    decision rules the row exercises, the server that answered its script keeps its
    pass, and the combination's transport and auth are charged to nobody."""
    result = coverage(_document(tmp_path, failing="deny"), tmp_path)
    alpha, beta = result["byAdapter"]["alpha"], result["byAdapter"]["beta"]
    # alpha was the client of the failing row; beta its server
    assert alpha["client"]["features"]["effect:deny"] == "failed"
    assert alpha["client"]["requirements"]["AHP-DEC-002"] == "failed"
    assert beta["server"]["features"]["effect:deny"] == "passed"
    assert beta["server"]["requirements"]["AHP-DEC-002"] == "passed"
    failed = sorted(r for r, v in alpha["client"]["requirements"].items() if v == "failed")
    assert failed == ["AHP-DEC-001", "AHP-DEC-002"]  # the decision rules the row exercises
    assert "failed" not in json.dumps(beta)
    (charge,) = result["charges"]
    assert (charge["rule"], charge["judges"], charge["adapters"]) == ("ClientResult", "client",
                                                                      ["alpha"])  # fmt: skip
    assert charge["requirements"] == failed
    # the other roles saw the row pass (stdio combination)
    assert alpha["server"]["features"]["effect:deny"] == "passed"
    assert beta["client"]["features"]["effect:deny"] == "passed"
    assert alpha["server"]["requirements"]["AHP-DEC-002"] == "passed"
    # a passing row's features stay passed where no failing row exercised them
    assert alpha["client"]["features"]["effect:none"] == "passed"
    assert alpha["client"]["requirements"]["AHP-DEC-003"] == "passed"
    # combination features are not the broken rule's: charged to nobody (the row that
    # passed in the same combination gives them)
    assert alpha["client"]["features"]["transport:http"] == "passed"
    assert alpha["client"]["requirements"]["AHP-HTTP-001"] == "passed"
    assert alpha["client"]["requirements"]["AHP-AUTH-001"] == "untested"  # auth none
    assert alpha["server"]["features"]["transport:stdio"] == "passed"
    # gamma's only combination never ran: everything untested, every requirement listed
    gamma = result["byAdapter"]["gamma"]
    ids = [r["id"] for r in result["requirements"]]
    for role in ("client", "server"):
        assert sorted(gamma[role]["requirements"]) == ids
        assert set(gamma[role]["requirements"].values()) == {"untested"}
        assert sorted(gamma[role]["features"]) == result["features"]
    assert "auth:bearer" in result["features"]
    assert result["notes"] == ["core/gone: missing.json is missing; its rows are skipped"]
    # untested requirements (no row of this document touches them)
    assert alpha["client"]["requirements"]["AHP-REG-001"] == "untested"


def test_a_known_failure_is_charged_like_any_failure_and_says_it_is_known(tmp_path: Path) -> None:
    document = _document(tmp_path, failing="deny")
    (row,) = document["combinations"][0]["results"]["mine"]["rows"]
    row["status"] = "known-failing"
    result = coverage(document, tmp_path)
    assert result["byAdapter"]["alpha"]["client"]["requirements"]["AHP-DEC-002"] == "failed"
    assert "failed" not in json.dumps(result["byAdapter"]["beta"])
    (charge,) = result["charges"]
    assert (charge["rule"], charge["known"]) == ("ClientResult", True)


def test_a_known_failure_citing_an_adapter_is_charged_to_the_side_that_adapter_held(
    tmp_path: Path,
) -> None:
    """The row blames the client on the server's record (ReceivedMismatch), but the
    known-failures entry cites the server, an outside SDK: the record follows the
    citation, and the client keeps its pass."""
    document = _document(tmp_path, failing="deny", error="ReceivedMismatch: not the request")
    (row,) = document["combinations"][0]["results"]["mine"]["rows"]
    row["status"] = "known-failing"
    row["known"] = {"pattern": "core/mine/*->beta/*/*/deny", "adapter": "beta"}
    result = coverage(document, tmp_path)
    assert "failed" not in json.dumps(result["byAdapter"]["alpha"]["client"])
    assert "failed" in result["byAdapter"]["beta"]["server"]["requirements"].values()
    (charge,) = result["charges"]
    assert (charge["judges"], charge["adapters"]) == ("server", ["beta"])


def test_a_row_failing_with_every_client_of_a_server_does_not_blame_a_client_on_its_record(
    tmp_path: Path,
) -> None:
    document = _document(tmp_path, failing="deny", error="ReceivedMismatch: not the request")
    second = copy.deepcopy(document["combinations"][0])
    second["client"] = "gamma"
    document["combinations"].append(second)
    result = coverage(document, tmp_path)
    for client in ("alpha", "gamma"):
        assert "failed" not in json.dumps(result["byAdapter"][client]["client"]), client
    assert {c["judges"] for c in result["charges"]} == {"either"}
    assert all("every client of this server" in c["basis"] for c in result["charges"])


def test_a_server_that_altered_its_answer_gets_a_contract_failure_and_the_client_keeps_its_pass(
    tmp_path: Path,
) -> None:
    error = "ServerAltered: the server answered {}, not the scenario's response"
    result = coverage(_document(tmp_path, failing="deny", error=error), tmp_path)
    alpha, beta = result["byAdapter"]["alpha"], result["byAdapter"]["beta"]
    assert beta["server"]["contractFailures"] == 1
    assert "failed" not in json.dumps(alpha)  # the client of that row did its part
    assert alpha["client"]["requirements"]["AHP-DEC-002"] == "passed"
    assert "failed" not in json.dumps(beta["server"]["requirements"])


def test_a_failed_combination_is_charged_to_the_side_its_stage_names(tmp_path: Path) -> None:
    errors = [{"stage": "server-start", "class": "ServerExit", "message": "exited 1"}]
    document = _document(
        tmp_path, failing="deny", error="combination failed: ServerExit", errors=errors
    )
    result = coverage(document, tmp_path)
    alpha, beta = result["byAdapter"]["alpha"], result["byAdapter"]["beta"]
    assert beta["server"]["contractFailures"] == 1
    assert alpha["client"]["contractFailures"] == 0
    assert "failed" not in json.dumps(alpha)


def test_a_failure_the_evidence_cannot_place_is_undetermined_for_both_and_failed_for_neither(
    tmp_path: Path,
) -> None:
    """A client that reports a row failed over HTTP, with no capture of the answer."""
    document = _document(tmp_path, failing="deny", error="the client reported a failure")
    result = coverage(document, tmp_path)
    alpha, beta = result["byAdapter"]["alpha"], result["byAdapter"]["beta"]
    assert "failed" not in json.dumps(alpha) and "failed" not in json.dumps(beta)
    (charge,) = result["charges"]
    assert (charge["rule"], charge["judges"]) == ("ClientFailed", "either")
    assert charge["basis"] == "client or server: no capture of the exchange"


def test_coverage_is_deterministic_and_renders(tmp_path: Path) -> None:
    document = _document(tmp_path, failing="deny")
    first = coverage(document, tmp_path)
    second = coverage(copy.deepcopy(document), tmp_path)
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)
    assert json.dumps(first) == json.dumps(first, sort_keys=True)
    lines = coverage_lines(first)
    assert any(line.startswith("coverage alpha as client:") for line in lines)
    for adapter, roles in first["byAdapter"].items():  # a role the run never gave: no line
        for role, judged in roles.items():
            never = set(judged["requirements"].values()) == {"untested"}
            shown = any(line.startswith(f"coverage {adapter} as {role}:") for line in lines)
            assert shown != never, (adapter, role)
    must = [line for line in lines if line.strip().startswith("MUST failed:")]
    assert must and "AHP-DEC-002" in must[0]
    clean = coverage(_document(tmp_path, failing=None), tmp_path)
    assert "failed" not in json.dumps(clean["byAdapter"])


# ---------------------------------------------------------------------------------------
# coverage of a real small report


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    output = tmp_path_factory.mktemp("coverage") / "report.json"
    argv = ["matrix", "--suite", "core", "--auth", "none", "--transports", "http"]
    code = main([*argv, "--output", str(output), "--jobs", "2", "--quiet"])
    document: dict[str, Any] = json.loads(output.read_text())
    assert code in (0, 1), code
    return document


def test_real_report_lists_every_requirement_for_every_adapter(real_report: dict[str, Any]) -> None:
    result = coverage(real_report, ROOT)
    ids = [e["id"] for e in load_requirements()]
    assert [r["id"] for r in result["requirements"]] == ids
    adapters = {c["client"] for c in real_report["combinations"]}
    adapters |= {c["server"] for c in real_report["combinations"]}
    assert adapters <= set(result["byAdapter"])
    for adapter in adapters:
        for role in ("client", "server"):
            requirements = result["byAdapter"][adapter][role]["requirements"]
            assert sorted(requirements) == ids
            # the core suite over HTTP exercises the tool-interception rules
            assert requirements["AHP-TB-001"] in ("passed", "failed")
            assert requirements["AHP-STDIO-001"] == "untested"  # no stdio combination ran
            assert requirements["AHP-REG-001"] == "untested"  # the core suite registers nothing
    assert "notes" not in result
    assert coverage(real_report, ROOT) == result
