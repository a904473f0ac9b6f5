"""Tests of tools/generate_elicitation_scenarios.py and the elicitation set it writes.

The set must be reproduced byte for byte; its fixtures must be what the rows
say they are when checked against the canonical schemas (a message refused
only after step 1 of "The receiver" is a valid intercept-request, one refused
at step 1 is not; a body meant to be valid parses strictly and is a valid MCP
body); ids and sessions are the rows' own; every case docs/ELICITATION.md and
the brief name has its row; no value comes from scenarios/upstream/. The
checks read the written file and the canonical schemas, never the builders.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interop.jsonvalue import JsonError, loads
from interop.schema import SchemaSet

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
GENERATOR = TOOLS / "generate_elicitation_scenarios.py"
ELICITATION = REPO / "scenarios" / "elicitation.json"
UPSTREAM = REPO / "scenarios" / "upstream"
REQUEST_SCHEMA = "intercept-request.schema.json"
PARAMS = "mcp-elicitation.schema.json#/$defs/requestParams"
RESULT = "mcp-elicitation.schema.json#/$defs/result"

sys.path.insert(0, str(TOOLS))
import generate_elicitation_scenarios as generator  # noqa: E402

# Every case the brief names -> the row that is it.
REQUIRED: dict[str, str] = {
    "form accept": "eli-form-accept",
    "form decline": "eli-form-decline",
    "form cancel": "eli-form-cancel",
    "url accept": "eli-url-accept",
    "url decline": "eli-url-decline",
    "url cancel": "eli-url-cancel",
    "default mode": "eli-form-default-mode",
    "missing request part": "eli-request-part-missing",
    "missing result part": "eli-result-part-missing",
    "request and result without parts, correlated": "eli-parts-absent-decline",
    "body missing message": "eli-body-no-message",
    "url body without url": "eli-url-no-url",
    "url body without elicitationId": "eli-url-no-elicitation-id",
    "renamed requestedSchema": "eli-requested-schema-renamed",
    "invalid event mode": "eli-event-mode-invalid",
    "body mode not the event mode": "eli-body-mode-url-event-form",
    "non-primitive form schema": "eli-form-schema-nested",
    "requested schema not object": "eli-requested-schema-not-object",
    "request text not json": "eli-request-text-not-json",
    "result text not json": "eli-result-text-not-json",
    "bad content": "eli-result-content-nested",
    "invalid action": "eli-event-action-invalid",
    "body action not the event action": "eli-result-action-mismatch",
    "content on decline": "eli-decline-with-content",
    "content on cancel": "eli-cancel-with-content",
    "url accept with content": "eli-url-accept-with-content",
    "result mode not the request's": "eli-result-mode-mismatch",
    "result server not the request's": "eli-result-server-mismatch",
    "event type not an elicitation": "eli-not-elicitation",
    "JSON-RPC id not the event id": "eli-envelope-id-not-event-id",
    "attachment never uploaded": "eli-attachment-never-uploaded",
    "bad digest": "eli-upload-bad-digest",
    "uploaded attachment accepted": "eli-attachment-uploaded",
    "request metadata + result metadata": "eli-selection-metadata-metadata",
    "request omit + result omit": "eli-selection-omit-omit",
    "request body + result metadata": "eli-selection-body-metadata",
    "request metadata + result body": "eli-selection-metadata-body",
    "selected gap on the request": "eli-request-gap",
    "selected gap on the result": "eli-result-gap",
    "upload immutability": "eli-upload-immutable",
    "wrong upload credential": "eli-upload-wrong-credential",
    "no upload credential": "eli-upload-no-credential",
    "required field missing": "eli-form-required-missing",
    "above maximum": "eli-form-above-maximum",
    "below minimum": "eli-form-below-minimum",
    "non-integer for integer": "eli-form-not-integer",
    "over maxLength": "eli-form-over-max-length",
    "under minLength": "eli-form-under-min-length",
    "outside enum": "eli-form-outside-enum",
    "wrong type": "eli-form-wrong-type",
    "multi-select item outside items.enum": "eli-form-multi-item-outside-enum",
    "too many items": "eli-form-too-many-items",
    "default annotations preserved": "eli-form-defaults-kept",
    **{
        f"correlation {selection} {mutation}": f"eli-corr-{selection}-{mutation}"
        for selection in ("body", "metadata", "omit")
        for mutation in (
            "missing-parent",
            "wrong-parent",
            "wrong-source",
            "wrong-session",
            "missing-session",
        )
    },
    "answered request answered again": "eli-answered-twice",
    "request without session": "eli-request-no-session",
    "concurrency": "eli-concurrent-two-live",
    # atomic
    "atomic no effects, user accept": "eli-atomic-no-effects",
    "atomic deny form": "eli-atomic-deny-form",
    "atomic deny url": "eli-atomic-deny-url",
    "atomic return form": "eli-atomic-return-form",
    "atomic return url": "eli-atomic-return-url",
    "atomic return breaking the schema": "eli-atomic-return-breaks-schema",
    "atomic return not an MCP result": "eli-atomic-return-not-mcp",
    "atomic url return with content": "eli-atomic-return-url-content",
    "atomic return not advertised": "eli-atomic-return-not-advertised",
    "atomic message only": "eli-atomic-message-only",
    "atomic replace": "eli-atomic-result-replace",
    "atomic merge": "eli-atomic-result-merge",
    "atomic replace breaking the schema": "eli-atomic-replace-breaks-schema",
    "atomic merge breaking the schema": "eli-atomic-merge-breaks-schema",
    "atomic merge nested": "eli-atomic-merge-nested",
    "atomic modify declined": "eli-atomic-modify-declined",
    "atomic merge not advertised": "eli-atomic-merge-not-advertised",
    "atomic return then merge": "eli-atomic-return-then-merge",
    "atomic user decline": "eli-atomic-user-decline",
}

# Sends refused at step 1 because the message is invalid against the
# canonical intercept-request schema: (row id, step index).
STEP_1_SCHEMA = {
    ("eli-event-mode-invalid", 0),
    ("eli-event-action-invalid", 1),
    ("eli-envelope-wrong-protocol", 0),
    ("eli-envelope-no-capabilities", 0),
    ("eli-not-interceptable", 0),
    ("eli-event-no-server", 0),
}
# Refused at step 1 by a clause beyond the schema: a valid intercept-request
# whose event is not an elicitation, or whose id is not its event's id.
STEP_1_TYPE = {("eli-not-elicitation", 0), ("eli-envelope-id-not-event-id", 0)}

# Body-selected texts meant to be invalid (not JSON, not one object, a
# duplicate key, or invalid against the MCP definition): (row id, event id).
INVALID_BODIES = {
    ("eli-body-no-message", "eli-body-no-message:request"),
    ("eli-url-no-url", "eli-url-no-url:request"),
    ("eli-url-no-elicitation-id", "eli-url-no-elicitation-id:request"),
    ("eli-requested-schema-renamed", "eli-requested-schema-renamed:request"),
    ("eli-form-schema-nested", "eli-form-schema-nested:request"),
    ("eli-requested-schema-not-object", "eli-requested-schema-not-object:request"),
    ("eli-request-text-not-json", "eli-request-text-not-json:request"),
    ("eli-request-text-duplicate-key", "eli-request-text-duplicate-key:request"),
    ("eli-request-text-array", "eli-request-text-array:request"),
    ("eli-parent-was-refused", "eli-parent-was-refused:request"),
    ("eli-result-text-not-json", "eli-result-text-not-json:result"),
    ("eli-result-text-duplicate-key", "eli-result-text-duplicate-key:result"),
    ("eli-result-content-nested", "eli-result-content-nested:result"),
    ("eli-result-content-number-list", "eli-result-content-number-list:result"),
    ("eli-result-body-action-invalid", "eli-result-body-action-invalid:result"),
}
# Atomic rows whose scripted reply is deliberately not a canonical response.
INVALID_REPLIES = {"eli-atomic-request-error-reply"}
# Atomic returns meant to be invalid MCP results.
INVALID_RETURNS = {"eli-atomic-return-not-mcp"}
# Format words of docs/ELICITATION.md that the upstream files also happen to use.
FORMAT_WORDS = {
    "accepted", "rejected", "send", "upload", "unauthorized", "none", "allowed",
    "denied", "not-sent", "user", "hook", "mcp", "not-selected", "elicitation",
}  # fmt: skip


def run_generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(ELICITATION.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["scenarios"])


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet(REPO / "schemas" / "draft")


def wire_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "steps" in row]


def atomic_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "atomic" in row]


def sends(row: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(step index, message, expected outcome) of every send step."""
    for n, (step, outcome) in enumerate(zip(row["steps"], row["expected"]["steps"], strict=True)):
        if step["op"] == "send":
            yield n, step["message"], outcome


def event_of(message: Any) -> dict[str, Any]:
    event: dict[str, Any] = message["params"]["event"]
    return event


def body_parts(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(MCP definition, part) of the event's body-selected elicitation text part."""
    elicitation = event.get("elicitation", {})
    for key, definition in (("request", PARAMS), ("result", RESULT)):
        part = elicitation.get(key)
        if isinstance(part, dict) and part.get("selection") == "body" and "text" in part:
            yield definition, part


def parsed(text: str) -> Any:
    try:
        return loads(text)
    except JsonError:
        return None


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def string_values(value: Any) -> set[str]:
    """Every string value (not key), also inside texts that are JSON documents."""
    found: set[str] = set()
    for node in walk(value):
        if isinstance(node, str):
            found.add(node)
            inner = parsed(node)
            if isinstance(inner, dict | list):
                found |= string_values(inner)
    return found


# ---------------------------------------------------------------- reproduction


def test_check_reproduces_the_file() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_names_the_first_differing_row(tmp_path: Path, rows: list[Any]) -> None:
    changed = copy.deepcopy(rows)
    changed[3]["expected"]["receipts"] = []
    altered = tmp_path / "elicitation.json"
    altered.write_text(generator.render(changed), encoding="utf-8")
    result = run_generator("--check", "--output", str(altered))
    assert result.returncode == 1
    assert repr(rows[3]["id"]) in result.stdout
    missing = run_generator("--check", "--output", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "missing" in missing.stdout


def test_writing_elsewhere_gives_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    result = run_generator("--output", str(output))
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == ELICITATION.read_bytes()


def test_the_lint_accepts_the_set_and_refuses_a_broken_one(rows: list[Any]) -> None:
    assert generator.lint(rows) == []
    broken = copy.deepcopy(rows)
    broken[0]["expected"]["steps"].pop()
    assert any("outcome per step" in p for p in generator.lint(broken))
    shared = copy.deepcopy(rows)
    shared[1]["steps"][0]["message"]["params"]["event"]["session"] = {
        "id": f"{rows[0]['id']}:session"
    }
    assert any("also used by" in p for p in generator.lint(shared))


def test_top_level(document: dict[str, Any]) -> None:
    assert document["version"] == 1
    assert document["suite"] == "elicitation"
    assert document["authenticatedSource"] == "authenticated:eli-sender"
    assert list(document) == ["version", "suite", "authenticatedSource", "scenarios"]


# ---------------------------------------------------------------- counts, ids, coverage


def test_row_counts(rows: list[dict[str, Any]]) -> None:
    assert len(wire_rows(rows)) >= 62
    assert len(atomic_rows(rows)) >= 16
    assert len(wire_rows(rows)) + len(atomic_rows(rows)) == len(rows)


def test_every_named_case_has_its_row(rows: list[dict[str, Any]]) -> None:
    by_id = {row["id"]: row for row in rows}
    for case, rid in REQUIRED.items():
        assert rid in by_id, (case, rid)
        assert ("atomic" in by_id[rid]) == case.startswith("atomic"), (case, rid)


def test_ids_and_sessions_are_the_rows_own(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("eli-") for i in ids)
    event_owner: dict[str, str] = {}
    session_owner: dict[str, str] = {}

    def claim(owners: dict[str, str], name: str, rid: str) -> None:
        assert owners.setdefault(name, rid) == rid, (name, rid, owners[name])
        assert name.startswith(f"{rid}:"), (name, rid)

    for row in wire_rows(rows):
        rid = row["id"]
        seen_here: list[str] = []
        for _, message, _ in sends(row):
            event = event_of(message)
            assert message["id"] == event["id"] or rid == "eli-envelope-id-not-event-id", rid
            claim(event_owner, event["id"], rid)
            seen_here.append(event["id"])
            if "session" in event:
                claim(session_owner, event["session"]["id"], rid)
        # An event id is sent twice in a row only by the duplicate-id probe.
        repeated = {e for e in seen_here if seen_here.count(e) > 1}
        assert repeated == (
            {"eli-concurrent-two-live:request-a"} if rid == "eli-concurrent-two-live" else set()
        ), rid
    for row in atomic_rows(rows):
        rid = row["id"]
        request = row["atomic"]["request"]
        assert request["id"] == event_of(request)["id"] == f"{rid}:request", rid
        claim(event_owner, f"{rid}:request", rid)
        claim(event_owner, f"{rid}:result", rid)
        claim(session_owner, event_of(request)["session"]["id"], rid)
        assert set(row["responses"]) <= {f"{rid}:request", f"{rid}:result"}, rid


def test_no_upstream_value_is_reused(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    upstream: set[str] = set()
    for path in sorted(UPSTREAM.rglob("*.json")):
        upstream |= string_values(json.loads(path.read_text(encoding="utf-8")))
    vocabulary = set(FORMAT_WORDS)
    for document in schemas.documents.values():
        for node in walk(document):
            if isinstance(node, dict):
                vocabulary |= {k for k in node if isinstance(k, str)}
                vocabulary |= {v for v in node.get("enum", []) if isinstance(v, str)}
                if isinstance(node.get("const"), str):
                    vocabulary.add(node["const"])
    shared = (string_values(rows) & upstream) - vocabulary
    assert shared == set()


def test_numbers_are_i_json(rows: list[dict[str, Any]]) -> None:
    for node in walk(rows):
        if isinstance(node, int) and not isinstance(node, bool):
            assert abs(node) <= 2**53 - 1


# ---------------------------------------------------------------- fixtures against the schemas


def test_step_1_refusals_are_schema_facts(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    by_id = {row["id"]: row for row in rows}
    for rid, n in STEP_1_SCHEMA | STEP_1_TYPE:
        assert by_id[rid]["expected"]["steps"][n]["outcome"] == "rejected", (rid, n)
    problems = []
    for row in wire_rows(rows):
        rid = row["id"]
        for n, message, _ in sends(row):
            issue = schemas.issue(REQUEST_SCHEMA, message)
            if (rid, n) in STEP_1_SCHEMA:
                if issue is None:
                    problems.append(f"{rid} step {n}: meant to fail step 1, but schema-valid")
            elif issue is not None:
                problems.append(f"{rid} step {n}: refused after step 1 at most, but {issue}")
            elif (rid, n) in STEP_1_TYPE:
                elicitation = event_of(message)["type"].startswith("user.elicitation.")
                assert not elicitation or message["id"] != event_of(message)["id"], rid
            else:
                assert event_of(message)["type"].startswith("user.elicitation."), rid
    for row in atomic_rows(rows):
        issue = schemas.issue(REQUEST_SCHEMA, row["atomic"]["request"])
        if issue is not None:
            problems.append(f"{row['id']} atomic.request: {issue}")
    assert problems == []


def test_body_texts_are_what_the_rows_mean(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    problems = []
    checked_invalid = set()
    for row in wire_rows(rows):
        rid = row["id"]
        for n, message, _ in sends(row):
            if (rid, n) in STEP_1_SCHEMA | STEP_1_TYPE:
                continue
            event = event_of(message)
            for definition, part in body_parts(event):
                value = parsed(part["text"])
                valid = isinstance(value, dict) and schemas.issue(definition, value) is None
                meant_invalid = (rid, event["id"]) in INVALID_BODIES
                if meant_invalid:
                    checked_invalid.add((rid, event["id"]))
                if valid == meant_invalid:
                    problems.append(f"{rid} {event['id']}: body valid={valid}")
    assert checked_invalid == INVALID_BODIES
    for row in atomic_rows(rows):
        rid = row["id"]
        request = event_of(row["atomic"]["request"])
        [(definition, part)] = list(body_parts(request))
        value = parsed(part["text"])
        if not isinstance(value, dict) or schemas.issue(definition, value) is not None:
            problems.append(f"{rid}: request body invalid")
        if schemas.issue(RESULT, row["atomic"]["userResult"]) is not None:
            problems.append(f"{rid}: userResult invalid")
        published = row["expected"]["actual"]["published"]
        if published is not None and schemas.issue(RESULT, published) is not None:
            problems.append(f"{rid}: published result invalid")
    assert problems == []


def test_atomic_replies_and_returns(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    for row in atomic_rows(rows):
        rid = row["id"]
        caps = row["atomic"]["request"]["params"]["capabilities"]
        assert set(caps["effects"]) <= {"deny", "return", "message"}, rid
        for key, response in row["responses"].items():
            issue = schemas.issue("intercept-response.schema.json", response)
            assert (issue is not None) == (rid in INVALID_REPLIES), (rid, key, issue)
        reply = row["responses"].get(f"{rid}:request", {})
        for effect in reply.get("result", {}).get("effects", []):
            if effect["type"] == "return":
                invalid = schemas.issue(RESULT, effect["value"]) is not None
                assert invalid == (rid in INVALID_RETURNS), rid


# ---------------------------------------------------------------- expectations against the format


def test_receipts_are_the_accepted_sends(document: dict[str, Any], rows: list[Any]) -> None:
    source = document["authenticatedSource"]
    for row in wire_rows(rows):
        rid = row["id"]
        accepted = [
            event_of(message)["id"]
            for _, message, outcome in sends(row)
            if outcome["outcome"] == "accepted"
        ]
        receipts = row["expected"]["receipts"]
        assert [r["eventId"] for r in receipts] == accepted, rid
        for _, _message, outcome in sends(row):
            assert outcome["status"] in (200, 400, 409), rid
            assert (outcome["outcome"] == "accepted") == (outcome["status"] == 200), rid
        for receipt in receipts:
            summary = receipt["summary"]
            if "provenance" in summary:
                assert summary["provenance"] == {"kind": "mcp", "authenticatedSource": source}
                assert summary["externalCompletion"] is False, rid


def test_request_summaries_are_the_bodies_as_sent(rows: list[dict[str, Any]]) -> None:
    # "Summaries hold the parsed bodies exactly as sent": the receipt of a
    # body-selected request is the strict parse of the text the row sent.
    for row in wire_rows(rows):
        sent = {}
        for _, message, _ in sends(row):
            event = event_of(message)
            part = event.get("elicitation", {}).get("request")
            if part and part.get("selection") == "body" and "text" in part:
                sent[event["id"]] = parsed(part["text"])
        for receipt in row["expected"]["receipts"]:
            if "request" in receipt["summary"] and receipt["eventId"] in sent:
                assert receipt["summary"] == {"request": sent[receipt["eventId"]]}, row["id"]


def test_upload_steps(rows: list[dict[str, Any]]) -> None:
    for row in wire_rows(rows):
        for step, outcome in zip(row["steps"], row["expected"]["steps"], strict=True):
            if step["op"] != "upload":
                continue
            assert step["credential"] in {"upload", "unauthorized", "none"}, row["id"]
            assert outcome["status"] in (201, 400, 401), row["id"]


def test_atomic_receipts_follow_what_was_sent(rows: list[dict[str, Any]]) -> None:
    for row in atomic_rows(rows):
        rid, outcome = row["id"], row["expected"]["actual"]
        wanted = [f"{rid}:request"]
        if outcome["result"] != "not-sent":
            wanted.append(f"{rid}:result")
        assert [r["eventId"] for r in row["expected"]["receipts"]] == wanted, rid
        if outcome["result"] != "accepted":
            assert outcome["published"] is None and outcome["provenance"] is None, rid


def test_readings_are_listed() -> None:
    assert generator.READINGS
    assert all(isinstance(text, str) and text for text in generator.READINGS.values())
