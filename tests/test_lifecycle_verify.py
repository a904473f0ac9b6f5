"""The lifecycle verifier against hand-written receipts: honest ones pass, each break is named.

The receipts below are written by hand from docs/LIFECYCLE.md for a few
upstream scenarios (the order an honest client and server produce); each
test then breaks one rule and expects that rule's error class.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from interop import ROOT
from interop.suites.lifecycle.scenarios import LifecycleScenario, load_set
from interop.suites.lifecycle.verify import verify_set

UPSTREAM = load_set(ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json")
BY_ID = {s.id: s for s in UPSTREAM.scenarios}


def judge(scenario: LifecycleScenario, entries: list[Any], actual: Any = None) -> tuple[str, Any]:
    report = {
        "language": "x",
        "results": [
            {
                "id": scenario.id,
                "status": "completed",
                "actual": scenario.expected if actual is None else actual,
            }
        ],
    }
    rows, errors = verify_set(
        "set",
        [scenario],
        report=report,
        entries=entries,
        client_exit=0,
        language="x",
        blind=True,
        stage="test",
        prior_errors=[],
    )
    assert not errors, errors
    return str(rows[0].status), rows[0].diagnostics.get("classes", [])


def mark(scenario: LifecycleScenario, kind: str, ident: str) -> dict[str, Any]:
    return {"kind": kind, "id": ident, "scenario": scenario.id}


def received(scenario: LifecycleScenario, key: str) -> dict[str, Any]:
    request = scenario.raw["requests"][key]
    return {"kind": "received", "id": request["id"], "message": copy.deepcopy(request)}


def cancel_before_reply() -> tuple[LifecycleScenario, list[Any]]:
    s = BY_ID["cancel-before-reply"]
    rid = s.request_id("a")
    # send, wait, cancel, failOpen, accept, release, receive (dropped), accept
    return s, [received(s, "a"), mark(s, "cancelled", rid), {"kind": "replied", "id": rid}]


def duplicate_reply() -> tuple[LifecycleScenario, list[Any]]:
    s = BY_ID["duplicate-reply-ignored"]
    rid = s.request_id("a")
    return s, [
        received(s, "a"),
        {"kind": "replied", "id": rid},
        mark(s, "acquired", rid),
        mark(s, "accepted", rid),
        received(s, "a"),
        {"kind": "replied", "id": rid},
    ]


def test_honest_receipts_pass() -> None:
    for scenario, entries in (cancel_before_reply(), duplicate_reply()):
        assert judge(scenario, entries) == ("passed", [])


def test_a_different_actual_is_named_by_its_path() -> None:
    scenario, entries = cancel_before_reply()
    actual = {**scenario.expected, "ignored": []}
    status, classes = judge(scenario, entries, actual)
    assert status == "failed" and "LifecycleResult" in classes


@pytest.mark.parametrize(
    ("case", "breaking", "error_class"),
    [
        ("cancel", lambda e: e[:2], "AttemptMismatch"),
        ("cancel", lambda e: [e[2], e[1], e[0]], "AttemptOrder"),
        ("cancel", lambda e: [e[0], e[2], e[1]], "CancelOrder"),
        ("cancel", lambda e: [e[0], e[2]], "MilestoneMismatch"),
        ("duplicate", lambda e: [e[0], e[2], e[1], *e[3:]], "AcquiredOrder"),
        ("duplicate", lambda e: [*e[:2], e[3], e[2], *e[4:]], "AcceptedOrder"),
        ("duplicate", lambda e: [*e[:2], *e[3:]], "AcquiredMismatch"),
    ],
)
def test_each_broken_rule_is_named(case: str, breaking: Any, error_class: str) -> None:
    scenario, entries = cancel_before_reply() if case == "cancel" else duplicate_reply()
    status, classes = judge(scenario, breaking(entries))
    assert status == "failed" and error_class in classes, classes


def test_an_altered_request_and_an_invalid_one_are_named() -> None:
    scenario, entries = cancel_before_reply()
    entries[0]["message"]["params"]["event"]["tool"]["input"] = {"value": "tampered"}
    assert "ReceivedMismatch" in judge(scenario, entries)[1]
    scenario, entries = cancel_before_reply()
    del entries[0]["message"]["params"]["capabilities"]
    assert "ReceivedInvalid" in judge(scenario, entries)[1]


def upload_then_observe(
    s: LifecycleScenario = BY_ID["changed-body-new-reference"],
    ref: str = "urn:uuid:00000000-0000-4000-8000-000000000001",
) -> tuple[LifecycleScenario, list[Any]]:
    rid = s.request_id("a")
    step = s.steps[0]
    observe = next(x for x in s.steps if x["op"] == "observe")
    event = copy.deepcopy(s.raw["requests"]["a"]["params"]["event"])
    event["tool"]["input"] = s.expected["states"][rid]["input"]
    event["items"] = copy.deepcopy(observe["items"])
    event["items"][0]["body"]["ref"] = ref
    message = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }
    return s, [
        {
            "kind": "upload",
            "ref": ref,
            "status": 201,
            "size": step["size"],
            "sha256": step["sha256"],
        },
        received(s, "a"),
        {"kind": "replied", "id": rid},
        mark(s, "acquired", rid),
        mark(s, "accepted", rid),
        {"kind": "observed", "eventId": event["id"], "event": event, "message": message},
    ]


def test_uploads_and_observations() -> None:
    scenario, entries = upload_then_observe()
    assert judge(scenario, entries) == ("passed", [])
    moved = [entries[1], entries[2], entries[3], entries[5], entries[4], entries[0]]
    classes = judge(scenario, moved)[1]
    assert "ObservationOrder" in classes and "UploadBeforeUse" in classes
    wrong = copy.deepcopy(entries)
    wrong[0]["status"] = 400
    assert "UploadMismatch" in judge(scenario, wrong)[1]
    other = copy.deepcopy(entries)
    other[5]["event"]["tool"]["input"] = {"value": "original"}
    assert "ObservationMismatch" in judge(scenario, other)[1]


def judge_rows(
    scenarios: list[LifecycleScenario], entries: list[Any], content_uploads: Any = ()
) -> tuple[dict[str, tuple[str, str | None, Any]], list[Any]]:
    """Rows run in the given order by one client whose report says what each row
    expects: the receipts alone decide. Each row's (status, error, classes), and the
    combination errors."""
    report = {
        "language": "x",
        "results": [{"id": s.id, "status": "completed", "actual": s.expected} for s in scenarios],
        "contentUploads": list(content_uploads),
    }
    rows, errors = verify_set(
        "set",
        scenarios,
        report=report,
        entries=entries,
        client_exit=0,
        language="x",
        blind=True,
        stage="test",
        prior_errors=[],
    )
    verdicts = {r.id: (str(r.status), r.error, r.diagnostics.get("classes", [])) for r in rows}
    return verdicts, errors


# upload-integrity-rejection's three steps as the server records them (declared size and
# sha256 from the scenario file, statuses as the vector expects), written out by hand
BAD_SIZE = {
    "kind": "upload",
    "status": 400,
    "size": 99,
    "sha256": "230d8358dc8e8890b4c58deeb62912ee2f20357ae92a5cc861b98e68fe31acb5",
}
BAD_HASH = {"kind": "upload", "status": 400, "size": 4, "sha256": "0" * 64}
UNAUTHORIZED = {
    "kind": "upload",
    "status": 401,
    "size": 6,
    "sha256": "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b",
}
# changed-body-new-reference's one step (9 bytes "new bytes"), refused
CHANGED_REFUSED = {
    "kind": "upload",
    "status": 400,
    "size": 9,
    "sha256": "11e2defd59f47c7f2aac84d6a5d6747e98e785afffb72c8bb7b05ec74e1d663c",
}


def test_upload_rows_pass_together_when_each_is_honest() -> None:
    changed, changed_entries = upload_then_observe()
    rejection = BY_ID["upload-integrity-rejection"]
    verdicts, errors = judge_rows(
        [rejection, changed], [BAD_SIZE, BAD_HASH, UNAUTHORIZED, *changed_entries]
    )
    assert errors == []
    assert verdicts == {
        "upload-integrity-rejection": ("passed", None, []),
        "changed-body-new-reference": ("passed", None, []),
    }


def test_a_missing_upload_fails_its_row_alone() -> None:
    """The earlier row's first upload never reached the server (a client that refuses a
    wrong declaration itself): counting would hand the later row's receipt to the
    earlier row and leave the later row without one."""
    changed, changed_entries = upload_then_observe()
    rejection = BY_ID["upload-integrity-rejection"]
    verdicts, errors = judge_rows([rejection, changed], [BAD_HASH, UNAUTHORIZED, *changed_entries])
    assert errors == []
    assert verdicts["changed-body-new-reference"] == ("passed", None, [])
    status, error, classes = verdicts["upload-integrity-rejection"]
    assert status == "failed" and classes == ["UploadMismatch"]
    assert error == (
        "UploadMismatch: upload-integrity-rejection: upload 1 (bad-size) declaring size 99, "
        "sha256 230d8358dc8e8890..., status 400: no upload receipt; "
        "no other upload receipt in this row"
    )


def test_a_refused_upload_and_its_retry_fail_their_row_alone() -> None:
    """A server that refuses every upload with 400 (the upstream python-sdk's): the
    earlier row's step is refused and the client's contentSources upload of the same
    bytes is refused again before the observation it would have served, which then
    never goes out. The later row, whose uploads are all meant to be refused, passes."""
    changed = BY_ID["changed-body-new-reference"]
    rid = "changed-body-new-reference:a"
    rejection = BY_ID["upload-integrity-rejection"]
    entries = [
        CHANGED_REFUSED,
        received(changed, "a"),
        {"kind": "replied", "id": rid},
        mark(changed, "acquired", rid),
        mark(changed, "accepted", rid),
        CHANGED_REFUSED,  # the contentSources upload before the observation
        BAD_SIZE,
        BAD_HASH,
        UNAUTHORIZED,
    ]
    verdicts, errors = judge_rows([changed, rejection], copy.deepcopy(entries))
    assert errors == []
    assert verdicts["upload-integrity-rejection"] == ("passed", None, [])
    status, error, classes = verdicts["changed-body-new-reference"]
    assert status == "failed"
    assert "UploadMismatch" in classes and "ObservationMismatch" in classes
    assert error is not None and error.startswith(
        "UploadMismatch: changed-body-new-reference: upload 1 (changed-new-ref) declaring "
        "size 9, sha256 11e2defd59f47c7f..., status 201: recorded status 400 declaring "
        "size 9, sha256 11e2defd59f47c7f..."
    )


def test_an_extra_upload_fails_its_row_alone() -> None:
    changed, changed_entries = upload_then_observe()
    rejection = BY_ID["upload-integrity-rejection"]
    retried = [BAD_SIZE, BAD_HASH, BAD_HASH, UNAUTHORIZED, *changed_entries]
    verdicts, errors = judge_rows([rejection, changed], copy.deepcopy(retried))
    assert errors == []
    assert verdicts["changed-body-new-reference"] == ("passed", None, [])
    status, error, classes = verdicts["upload-integrity-rejection"]
    assert status == "failed" and classes == ["UploadMismatch"]
    assert error == (
        "UploadMismatch: upload-integrity-rejection: an upload receipt no upload step of the "
        "row declares: recorded status 400 declaring size 4, sha256 0000000000000000..."
    )


def _renamed(scenario: LifecycleScenario, new_id: str) -> LifecycleScenario:
    """`scenario` under another id (its requests' and events' ids too)."""
    text = json.dumps(scenario.raw).replace(scenario.id, new_id)
    return LifecycleScenario(new_id, json.loads(text))


def test_identical_bytes_in_two_rows_go_to_the_row_that_ran_the_upload() -> None:
    """Two rows upload the same bytes; the earlier row's upload is missing. The one
    receipt was recorded after the earlier row's own receipts, so it is the later row's."""
    base = BY_ID["changed-body-new-reference"]
    first, second = _renamed(base, "lc-unit-first"), _renamed(base, "lc-unit-second")
    _, first_entries = upload_then_observe(first, "changed-new-ref")
    _, second_entries = upload_then_observe(second)
    verdicts, errors = judge_rows([first, second], [*first_entries[1:], *second_entries])
    assert errors == []
    assert verdicts["lc-unit-second"] == ("passed", None, [])
    status, error, classes = verdicts["lc-unit-first"]
    assert status == "failed" and "UploadMismatch" in classes
    assert error is not None and error.startswith(
        "UploadMismatch: lc-unit-first: upload 1 (changed-new-ref) declaring size 9, "
        "sha256 11e2defd59f47c7f..., status 201: no upload receipt"
    )


def test_a_delivered_content_source_is_no_extra_and_an_unexplained_upload_is_named() -> None:
    changed, changed_entries = upload_then_observe()
    delivery = {
        "kind": "upload",
        "ref": "urn:uuid:00000000-0000-4000-8000-0000000000aa",
        "status": 201,
        "size": 3,
        "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    }
    content = [
        {
            "sourceRef": "abc",
            "descriptor": {k: delivery[k] for k in ("ref", "size", "sha256")},
            "method": "hooks/observe",
            "eventId": "changed-body-new-reference:a",
        }
    ]
    entries = [*changed_entries[:-1], delivery, changed_entries[-1]]
    verdicts, errors = judge_rows([changed], copy.deepcopy(entries), content)
    assert errors == [] and verdicts["changed-body-new-reference"] == ("passed", None, [])
    # unreported, the same receipt is the row's extra
    verdicts, errors = judge_rows([changed], copy.deepcopy(entries))
    assert errors == [] and verdicts["changed-body-new-reference"][2] == ["UploadMismatch"]
    # in a run whose rows upload nothing, no row accounts for it: the combination fails
    cancel, cancel_entries = cancel_before_reply()
    verdicts, errors = judge_rows([cancel], [*cancel_entries, delivery])
    assert [e.error_class for e in errors] == ["UploadMismatch"]
    assert "status 201 declaring size 3" in errors[0].message


def chain_deny() -> tuple[LifecycleScenario, list[Any]]:
    s = BY_ID["observation-chain-deny"]
    rid = s.request_id("a")
    proof = s.raw["chainProof"]
    observed = [
        {
            "kind": "observed",
            "eventId": m["params"]["event"]["id"],
            "event": m["params"]["event"],
            "message": m,
        }
        for m in proof["observations"]
    ]
    return s, [
        {"kind": "received", "id": rid, "message": proof["requests"][0]},
        {"kind": "replied", "id": rid},
        mark(s, "chain-settled", rid),
        *observed,
    ]


def test_chains() -> None:
    scenario, entries = chain_deny()
    assert judge(scenario, entries) == ("passed", [])
    early = [entries[0], entries[3], entries[1], entries[2], *entries[4:]]
    assert "ChainSettlement" in judge(scenario, early)[1]
    twice = [*entries[:3], entries[2], *entries[3:]]
    assert "ChainSettlement" in judge(scenario, twice)[1]
    missing = entries[:-1]
    assert "ChainObservations" in judge(scenario, missing)[1]
    second = [
        *entries[:2],
        copy.deepcopy(entries[0]),
        {"kind": "replied", "id": entries[0]["id"]},
        *entries[2:],
    ]
    assert "ChainRequests" in judge(scenario, second)[1]
    blocked = [*entries, mark(scenario, "observer-blocked", entries[0]["id"])]
    assert "HeldObservers" in judge(scenario, blocked)[1]


def timed_out_first_call() -> tuple[LifecycleScenario, list[Any]]:
    """observation-chain-fail-open with its first call scripted to time out (docs [ext])."""
    base = BY_ID["observation-chain-fail-open"]
    raw = copy.deepcopy(base.raw)
    raw["responseSequences"]["a"][0] = {"fault": "timeout"}
    s = LifecycleScenario(base.id, raw)
    rid = s.request_id("a")
    proof = raw["chainProof"]
    observed = [
        {"kind": "observed", "eventId": rid, "event": m["params"]["event"], "message": m}
        for m in proof["observations"]
    ]
    return s, [
        {"kind": "received", "id": rid, "message": proof["requests"][0]},
        {"kind": "received", "id": rid, "message": proof["requests"][1]},
        {"kind": "replied", "id": rid},
        mark(s, "chain-settled", rid),
        *observed,
    ]


def test_a_scripted_timeout_is_never_answered() -> None:
    scenario, entries = timed_out_first_call()
    assert judge(scenario, entries) == ("passed", [])
    answered = [entries[0], {"kind": "replied", "id": entries[0]["id"]}, *entries[1:]]
    assert "ChainCalls" in judge(scenario, answered)[1]
    overlapping = [entries[0], entries[1], entries[3], entries[2], *entries[4:]]
    assert "ChainSettlement" in judge(scenario, overlapping)[1]


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("responseSequences", "a", 0), {"fault": "explode"}, "a fault is exactly"),
        (("responseSequences", "a", 0), {"fault": "timeout", "x": 1}, "a fault is exactly"),
        (("observeFaults",), {"a": ["loud"]}, "observeFaults"),
        (("chain", "subscriptions", 3, "timeoutMs"), 500, "never carries timeoutMs"),
        (("chain", "subscriptions", 0, "timeoutMs"), 0, "positive integer"),
        (("chain", "subscriptions", 3, "backend"), "unreachable", "only an intercept"),
    ],
)
def test_malformed_faults_name_the_field(
    tmp_path: Any, where: tuple[Any, ...], value: Any, message: str
) -> None:
    import json

    from interop.suites.base import ScenarioError

    raw = copy.deepcopy(BY_ID["observation-chain-fail-open"].raw)
    target: Any = raw
    for step in where[:-1]:
        target = target.setdefault(step, {}) if isinstance(step, str) else target[step]
    target[where[-1]] = value
    path = tmp_path / "faulty.json"
    path.write_text(json.dumps({"version": 1, "scenarios": [raw]}))
    with pytest.raises(ScenarioError, match=message) as caught:
        load_set(path)
    assert "observation-chain-fail-open" in str(caught.value)


def test_an_empty_items_list_matches_a_projection_with_no_items() -> None:
    """A chain call or notification of an event without items may carry `items: []`
    (spec/draft execution-payloads.md: lists may be empty for absent content)."""
    from interop.suites.lifecycle.verify import _matches

    want = {"jsonrpc": "2.0", "method": "hooks/observe", "params": {"event": {"id": "e"}}}
    empty = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"event": {"id": "e", "items": []}},
    }
    assert _matches(empty, want)
    one = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"event": {"id": "e", "items": [{"id": "x"}]}},
    }
    assert not _matches(one, want)
    other = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"event": {"id": "f", "items": []}},
    }
    assert not _matches(other, want)
