"""Tests of tools/generate_compaction_scenarios.py and the compaction set it writes.

The set must be reproduced byte for byte, load with the harness's loader,
make nobody send a schema-invalid message (the negatives excepted, which
must be invalid), cover every upstream compaction case, and keep the after
requests consistent with the before boundary (docs/COMPACTION.md step 4).
The cross-checks here are independent of the row definitions: they read the
written file, never the generator's builders.
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

from interop.schema import SchemaSet
from interop.suites.compaction.scenarios import load_set

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
GENERATOR = TOOLS / "generate_compaction_scenarios.py"
COMPACTION = REPO / "scenarios" / "compaction.json"

sys.path.insert(0, str(TOOLS))
import generate_compaction_scenarios as generator  # noqa: E402

WIRE_CASES = (
    "chain",
    "supplied",
    "before-atomic",
    "after-atomic",
    "after-closed",
    "before-closed",
    "before-open",
    "after-open",
)
RUNTIME_CASES = (
    "unchanged",
    "before-chain",
    "after-chain",
    "both-boundaries",
    "supplied-still-after",
    "later-input-invalidates-return",
    "same-input-keeps-return",
    "return-bound-after-edits",
    "last-return-wins",
    "deny-beats-return",
    "before-wrong-target-fail-open",
    "before-wrong-target-fail-closed",
    "after-wrong-target-fail-open",
    "after-wrong-target-fail-closed",
    "before-compound-rollback",
    "after-compound-rollback",
    "candidate-invalidation-rollback",
    "after-fail-closed-prevents-application",
    "before-merge-invalid",
    "after-merge-invalid",
    "nontext-invalid",
    "after-return-invalid",
    "observe-only-no-modifications",
    "callback-failure-open",
    "callback-failure-closed",
    "unicode-empty",
    "deny-missing-reason",
    "deny-empty-reason",
    "malformed-response-array",
)
NEGATIVE_CASES = (
    "missing-trigger",
    "before-summary-capability",
    "scalar-instructions",
    "text-body-ref",
)
# Replies that are schema-invalid on purpose (the failure they cause is the point).
INVALID_REPLIES = {
    "cmp-after-summary-number",
    "cmp-deny-without-reason",
    "cmp-deny-empty-reason",
    "cmp-effects-not-a-list",
}
# Every id and literal of the upstream compaction drivers (case names,
# supplier names, texts, item ids, refs); none may appear as a value here.
# Protocol vocabulary the upstream also uses as a name ("deny", an effect type;
# "supplied", a provenance kind) is left out.
VOCABULARY = {"deny", "supplied"}
UPSTREAM_STRINGS = {
    *WIRE_CASES,
    *RUNTIME_CASES,
    *(f"{c}-{b}-{i}" for c in WIRE_CASES for b in ("before", "after") for i in range(4)),
    *(f"{c}:{b}" for c in (*WIRE_CASES, *RUNTIME_CASES) for b in ("before", "after")),
    *(f"{c}:context" for c in WIRE_CASES),
    "edit", "watch", "redact", "cache", "same", "one", "two", "invalid",
    "prefix", "broken", "clear", "unreachable",
    "base", "new", "clean", "cached", "stale", "fresh", "old", "kept", "leaked",
    "bad", "wrong", "safe", "summary:base", "summary:new", ":one", ":two", ":safe",
    ":prefix", "base:one", "base:one:two", "summary:base:one:two", "cached:safe",
    "summary:base:prefix", "Host policy", "世界 😀", "summary:世界 😀",
    "logical-summary", "urn:not-uploaded",
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
    loaded: dict[str, Any] = json.loads(COMPACTION.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["scenarios"])


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet(REPO / "schemas" / "draft")


def runs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "negative" not in row]


def negatives(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "negative" in row]


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


# ---------------------------------------------------------------- reproduction


def test_check_reproduces_the_file() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_names_the_first_differing_row(tmp_path: Path, rows: list[Any]) -> None:
    changed = copy.deepcopy(rows)
    changed[5]["expected"]["applied"] = not changed[5]["expected"]["applied"]
    altered = tmp_path / "compaction.json"
    altered.write_text(generator.render(changed), encoding="utf-8")
    result = run_generator("--check", "--output", str(altered))
    assert result.returncode == 1
    assert repr(rows[5]["id"]) in result.stdout
    missing = run_generator("--check", "--output", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "missing" in missing.stdout


def test_writing_elsewhere_gives_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    result = run_generator("--output", str(output))
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == COMPACTION.read_bytes()


def test_the_harness_loads_it() -> None:
    loaded = load_set(COMPACTION)
    assert len(loaded.rows) >= 41


def test_the_lint_accepts_the_set_and_refuses_a_broken_one(rows: list[Any]) -> None:
    assert generator.lint(rows) == []
    broken = copy.deepcopy(rows)
    broken[0]["expected"]["before"]["called"].append("cmp-nobody")
    assert any("called" in p for p in generator.lint(broken))


# ---------------------------------------------------------------- counts, ids, coverage


def test_row_counts(rows: list[dict[str, Any]]) -> None:
    assert len(runs(rows)) >= 37
    assert len(negatives(rows)) == 4


def test_ids_are_ours_and_unique(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("cmp-") for i in ids)
    for row in runs(rows):
        for name in ("before", "after"):
            subs = [s["id"] for s in row[name]]
            assert all(s.startswith(f"{row['id']}:") for s in subs), row["id"]


def test_every_upstream_case_maps_to_rows(rows: list[dict[str, Any]]) -> None:
    wanted = {f"wire:{c}" for c in WIRE_CASES}
    wanted |= {f"runtime:{c}" for c in RUNTIME_CASES}
    wanted |= {f"negative:{c}" for c in NEGATIVE_CASES}
    assert len(wanted) == 8 + 29 + 4
    assert set(generator.UPSTREAM_CASES) == wanted
    by_id = {row["id"]: row for row in rows}
    for case, ids in generator.UPSTREAM_CASES.items():
        assert ids, case
        for rid in ids:
            assert rid in by_id, (case, rid)
            assert ("negative" in by_id[rid]) == case.startswith("negative:"), (case, rid)


def test_no_upstream_id_or_text_is_reused(rows: list[dict[str, Any]]) -> None:
    for node in walk(rows):
        if isinstance(node, str):
            assert node in VOCABULARY or node not in UPSTREAM_STRINGS, node
            assert "leaked" not in node and "logical-summary" not in node, node


def test_numbers_are_i_json_integers(rows: list[dict[str, Any]]) -> None:
    for node in walk(rows):
        assert not isinstance(node, float)
        if isinstance(node, int) and not isinstance(node, bool):
            assert abs(node) <= 2**53 - 1


def test_both_transports_unless_said_why(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if "transports" in row:
            assert row.get("inapplicableReason"), row["id"]


# ---------------------------------------------------------------- schema validity


def test_every_request_and_observation_is_schema_valid(
    rows: list[dict[str, Any]], schemas: SchemaSet
) -> None:
    problems = []

    def check(schema: str, message: Any, where: str) -> None:
        issue = schemas.issue(schema, message)
        if issue is not None:
            problems.append(f"{where}: {issue}")

    for row in runs(rows):
        rid = row["id"]
        check("intercept-request.schema.json", row["request"], f"{rid} request")
        for name in ("before", "after"):
            for n, call in enumerate(row["proof"][name]):
                check("intercept-request.schema.json", call, f"{rid} proof.{name}[{n}]")
        for n, note in enumerate(row["proof"]["observations"]):
            check("observe-notification.schema.json", note, f"{rid} proof.observations[{n}]")
        if rid in INVALID_REPLIES:
            continue
        for name, sequence in row["responseSequences"].items():
            for n, entry in enumerate(sequence):
                if "fault" not in entry:
                    check("intercept-response.schema.json", entry, f"{rid} {name}[{n}]")
    assert problems == []


def test_deliberately_invalid_replies_are_invalid(
    rows: list[dict[str, Any]], schemas: SchemaSet
) -> None:
    by_id = {row["id"]: row for row in rows}
    for rid in INVALID_REPLIES:
        entries = [e for s in by_id[rid]["responseSequences"].values() for e in s]
        assert any(schemas.issue("intercept-response.schema.json", e) for e in entries), rid


def test_negatives_are_schema_invalid(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    for row in negatives(rows):
        assert row["expected"] == {"error": -32602}
        assert schemas.issue("intercept-request.schema.json", row["negative"]), row["id"]
        assert row["negative"]["id"] not in {
            f"{r['id']}:{b}" for r in runs(rows) for b in ("before", "after")
        }


# ---------------------------------------------------------------- consistency (step 4)


def test_before_calls_carry_the_before_event(rows: list[dict[str, Any]]) -> None:
    for row in runs(rows):
        rid, request = row["id"], row["request"]
        calls = row["proof"]["before"]
        if calls:
            assert calls[0] == request, rid
        for call in calls:
            event = call["params"]["event"]
            assert event["items"] == request["params"]["event"]["items"], rid
            assert call["params"]["capabilities"] == request["params"]["capabilities"], rid


def test_after_requests_derive_from_the_before_boundary(rows: list[dict[str, Any]]) -> None:
    executions = {
        "generated": {"status": "executed"},
        "supplied": {"status": "skipped", "reason": "supplied_result"},
    }
    for row in runs(rows):
        rid, expected = row["id"], row["expected"]
        before = row["request"]["params"]["event"]
        items = [{"id": item["id"]} for item in before["items"]]
        caps = (
            {"effects": []}
            if row["afterObserveOnly"]
            else {"effects": ["modify"], "modify": {"summary": {"replace": True, "merge": False}}}
        )
        after_events = [c["params"]["event"] for c in row["proof"]["after"]]
        after_events += [
            n["params"]["event"]
            for n in row["proof"]["observations"]
            if n["params"]["event"]["type"] == "context.compact.after"
        ]
        stopped_after = not expected["applied"] and bool(expected["after"]["failures"])
        if not expected["applied"]:
            assert expected["summary"] is None and expected["execution"] is None, rid
            assert expected["provenance"] is None, rid
            if not stopped_after:  # nothing compacted: no after boundary at all
                assert after_events == [], rid
                continue
        else:
            assert expected["execution"] == executions[expected["provenance"]["kind"]], rid
        for call in row["proof"]["after"]:
            assert call["id"] == f"{rid}:after" and call["params"]["capabilities"] == caps, rid
        for event in after_events:
            assert event["id"] == f"{rid}:after", rid
            assert event["parentEventId"] == f"{rid}:before", rid
            assert event["removed"] == items, rid
            if not stopped_after:
                assert event["execution"] == expected["execution"], rid
            for key in ("source", "time", "session"):
                assert event[key] == before[key], rid
        if expected["provenance"] is not None and expected["provenance"]["kind"] == "supplied":
            supplier = expected["provenance"]["supplier"]
            assert supplier in expected["before"]["called"], rid
            assert supplier not in expected["before"]["failures"], rid


def test_generated_summaries_follow_step_3(rows: list[dict[str, Any]]) -> None:
    # An independent restatement of step 3, applied to the written values.
    for row in runs(rows):
        rid, expected = row["id"], row["expected"]
        if not expected["applied"] or expected["provenance"] != {"kind": "generated"}:
            continue
        count = len(row["request"]["params"]["event"]["items"])
        texts = [part["text"] for part in expected["instructions"]]
        body = f"Summary of {count} items."
        if any(texts):
            body += " Instructions: " + " ".join(texts)
        made = [
            {
                "id": f"{rid}:summary",
                "kind": "text",
                "mediaType": "text/plain",
                "selection": "body",
                "text": body,
            }
        ]
        first = (
            row["proof"]["after"][0]["params"]["event"]
            if row["proof"]["after"]
            else row["proof"]["observations"][-1]["params"]["event"]
        )
        assert first["summary"] == made, rid


def test_observations_carry_settled_values(rows: list[dict[str, Any]]) -> None:
    for row in runs(rows):
        rid, expected = row["id"], row["expected"]
        notes = row["proof"]["observations"]
        for note in notes:
            event = note["params"]["event"]
            assert set(note) == {"jsonrpc", "method", "params"}, rid
            if event["type"] == "context.compact.before":
                assert event.get("instructions", []) == expected["instructions"], rid
            elif expected["applied"]:
                assert event["summary"] == expected["summary"], rid
            else:  # an after failure stopped it: notified with the summary it started with
                started = row["proof"]["after"][0]["params"]["event"]["summary"]
                assert event["summary"] == started, rid
        kinds = [n["params"]["event"]["type"] for n in notes]
        assert kinds.count("context.compact.before") == len(expected["before"]["observations"]), rid
        assert kinds.count("context.compact.after") == len(expected["after"]["observations"]), rid


def test_timeouts_have_deadlines(rows: list[dict[str, Any]]) -> None:
    for row in runs(rows):
        timed = any(
            e.get("fault") == "timeout" for s in row["responseSequences"].values() for e in s
        )
        if not timed:
            continue
        for name in ("before", "after"):
            for sub in row[name]:
                if sub["mode"] == "intercept":
                    assert sub.get("timeoutMs") in (250, 10000), (row["id"], sub["id"])
                    if sub["id"] in row["expected"][name]["failures"]:
                        assert sub["timeoutMs"] == 250, (row["id"], sub["id"])


def test_readings_are_listed() -> None:
    assert generator.READINGS
    assert all(isinstance(text, str) and text for text in generator.READINGS.values())
