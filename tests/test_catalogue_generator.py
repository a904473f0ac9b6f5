"""Tests of tools/generate_catalogue_scenarios.py and the catalogue set it writes.

The set must be reproduced byte for byte, and cover what docs/CATALOGUE.md
asks of it, counted from the canonical schemas rather than from the
generator's own lists: every event type of common.schema.json#/$defs/eventType
encoded at least twice (a minimal and a richer message) and rejected at
least once when schema-invalid; each lineage rule and each registration rule
accepted and rejected. The hand-written verdicts are checked against the
canonical schemas where a schema decides them (schema-rejected messages are
invalid, every other sent message valid; a registration document is
schema-invalid exactly when its rule is `schema`).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interop.schema import SchemaSet

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
GENERATOR = TOOLS / "generate_catalogue_scenarios.py"
CATALOGUE = REPO / "scenarios" / "catalogue.json"
UPSTREAM = REPO / "scenarios" / "upstream" / "catalogue-scenarios.json"
SCHEMAS = REPO / "schemas" / "draft"

sys.path.insert(0, str(TOOLS))
import generate_catalogue_scenarios as generator  # noqa: E402
from catalogue_wire import LINEAGE_RULES, RULES, Row  # noqa: E402

NOTE = "observe-notification.schema.json"
OK = {"accepted": True, "errorKind": None}
SCHEMA = {"accepted": False, "errorKind": "schema"}
LINEAGE = {"accepted": False, "errorKind": "lineage"}
OUR_SOURCE = "urn:ahp-interop:catalogue:"


def run_generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet(SCHEMAS)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["scenarios"])


@pytest.fixture(scope="module")
def tagged() -> list[Row]:
    return generator.tagged_rows()


@pytest.fixture(scope="module")
def event_types() -> list[str]:
    common = json.loads((SCHEMAS / "common.schema.json").read_text(encoding="utf-8"))
    types: list[str] = common["$defs"]["eventType"]["enum"]
    return types


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def sends(row: dict[str, Any], schemas: SchemaSet) -> list[tuple[str, Any]]:
    """(op, message) of every message the client sends, judged by the schema, in order."""
    out = []
    for step in row["steps"]:
        if step["op"] == "rawNotify":
            out.append(("rawNotify", step["message"]))
        elif step["op"] == "notify" and schemas.issue(NOTE, step["message"]) is None:
            out.append(("notify", step["message"]))
    return out


def verdicts(row: dict[str, Any], schemas: SchemaSet) -> list[tuple[str, Any, Any]]:
    """(op, message, expected delivery) for each sent message."""
    return [
        (op, message, verdict)
        for (op, message), verdict in zip(
            sends(row, schemas), row["expected"]["deliveries"], strict=True
        )
    ]


# ---------------------------------------------------------------- the file


def test_check_reproduces_the_file() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_names_the_first_differing_scenario(tmp_path: Path) -> None:
    document = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    victim = document["scenarios"][40]
    victim["expected"]["deliveries"].append({"accepted": True, "errorKind": None})
    altered = tmp_path / "catalogue.json"
    altered.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    result = run_generator("--check", "--output", str(altered))
    assert result.returncode == 1
    assert repr(victim["id"]) in result.stdout
    # A byte-level change that leaves the JSON equal is caught too.
    spaced = tmp_path / "spaced.json"
    spaced.write_bytes(CATALOGUE.read_bytes().replace(b"\n", b"\r\n", 1))
    assert run_generator("--check", "--output", str(spaced)).returncode == 1
    missing = run_generator("--check", "--output", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "missing" in missing.stdout


def test_writing_elsewhere_gives_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    result = run_generator("--output", str(output))
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == CATALOGUE.read_bytes()
    assert generator.render(generator.build()) == generator.render(generator.build())


def test_the_format(document: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    assert list(document) == ["version", "suite", "description", "scenarios"]
    assert document["version"] == 1 and document["suite"] == "catalogue"
    for row in rows:
        keys = ["id", "category", "steps", "expected", "requests", "responses"]
        assert list(row) in (keys, [*keys, "reading"]), row["id"]
        assert row["category"] in ("execution", "lineage", "registration"), row["id"]
        assert list(row["expected"]) == ["sent", "registrations", "deliveries"], row["id"]
        assert row["requests"] == {} and row["responses"] == {}, row["id"]
        assert row["steps"], row["id"]
        for step in row["steps"]:
            if step["op"] == "register":
                assert list(step) == ["op", "registration", "requirements", "context"]
                assert set(step["context"]) == {"interactive", "environment"}
            else:
                assert step["op"] in ("notify", "rawNotify") and list(step) == ["op", "message"]
                assert isinstance(step["message"]["params"]["event"]["id"], str)


def test_the_harness_loads_it(document: dict[str, Any]) -> None:
    from interop.suites.catalogue.scenarios import load_set

    loaded = load_set(CATALOGUE)
    assert len(loaded.scenarios) == len(document["scenarios"]) >= 200
    assert loaded.document["description"] == document["description"]


def test_the_lint_accepts_the_set_and_refuses_a_broken_one(tagged: list[Row]) -> None:
    assert generator.lint(tagged) == []
    broken = copy.deepcopy(tagged)
    broken.append(broken[0])
    first_sent = broken[1].scenario["expected"]["sent"]
    first_sent.append(first_sent[0])
    problems = generator.lint(broken)
    assert any("duplicate scenario id" in p for p in problems)
    assert any("sent must be" in p for p in problems)


# ---------------------------------------------------------------- our own values


def test_ids_are_ours_and_unique(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert all(sid.startswith("cat-") for sid in ids)


def test_no_upstream_id_source_or_time_is_reused(rows: list[dict[str, Any]]) -> None:
    upstream = json.loads(UPSTREAM.read_text(encoding="utf-8"))["scenarios"]

    def values(scenarios: list[dict[str, Any]], key: str) -> set[Any]:
        return {
            node[key]
            for row in scenarios
            for node in walk(row["steps"])
            if isinstance(node, dict) and isinstance(node.get(key), str)
        }

    their_ids = {row["id"] for row in upstream} | values(upstream, "id")
    our_ids = {row["id"] for row in rows} | values(rows, "id")
    assert not their_ids & our_ids

    def envelope(scenarios: list[dict[str, Any]], key: str) -> set[Any]:
        return {
            step["message"]["params"]["event"].get(key)
            for row in scenarios
            for step in row["steps"]
            if step["op"] != "register"
        }

    for key in ("source", "time"):
        theirs, ours = envelope(upstream, key), envelope(rows, key)
        assert theirs and ours and not theirs & ours, key
    for source in envelope(rows, "source"):
        # One deliberately invalid source (not a URI); every other one is ours.
        assert source.startswith(OUR_SOURCE) or " " in source, source


def test_numbers_are_integers(rows: list[dict[str, Any]]) -> None:
    for node in walk(rows):
        assert not isinstance(node, float)
        if isinstance(node, int) and not isinstance(node, bool):
            assert abs(node) <= 2**53 - 1


def test_rows_do_not_share_event_identities(rows: list[dict[str, Any]]) -> None:
    """Lineage state lasts for the file: an identity and every parent named stay in one row."""
    owner: dict[tuple[str, str], set[str]] = defaultdict(set)
    sent_ids: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        for step in row["steps"]:
            if step["op"] == "register":
                continue
            evt = step["message"]["params"]["event"]
            owner[(evt.get("source"), evt["id"])].add(row["id"])
            sent_ids[evt["id"]].add(row["id"])
    assert {k: v for k, v in owner.items() if len(v) > 1} == {}
    for row in rows:
        for step in row["steps"]:
            if step["op"] != "register":
                parent = step["message"]["params"]["event"].get("parentEventId")
                if parent is not None:
                    assert sent_ids.get(parent, {row["id"]}) == {row["id"]}, row["id"]


# ---------------------------------------------------------------- sent and deliveries


def test_sent_is_every_raw_and_valid_notify_message(
    rows: list[dict[str, Any]], schemas: SchemaSet
) -> None:
    for row in rows:
        expected = row["expected"]
        assert expected["sent"] == [m for _, m in sends(row, schemas)], row["id"]
        assert len(expected["deliveries"]) == len(expected["sent"]), row["id"]
        registers = [s for s in row["steps"] if s["op"] == "register"]
        assert len(expected["registrations"]) == len(registers), row["id"]
        for verdict in expected["deliveries"]:
            assert verdict in (OK, SCHEMA, LINEAGE), row["id"]


def test_verdicts_agree_with_the_schema(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    problems = []
    for row in rows:
        for op, message, verdict in verdicts(row, schemas):
            issue = schemas.issue(NOTE, message)
            where = f"{row['id']} {message['params']['event']['id']}"
            if verdict == SCHEMA and issue is None:
                problems.append(f"{where}: schema-rejected but valid")
            if verdict != SCHEMA and issue is not None:
                problems.append(f"{where}: {verdict} but invalid: {issue}")
            # The set's convention: notify is accepted, rawNotify rejected.
            if (op == "notify") != (verdict == OK):
                problems.append(f"{where}: {op} with {verdict}")
    assert problems == []


def test_a_notify_the_client_must_refuse(rows: list[dict[str, Any]], schemas: SchemaSet) -> None:
    refusing = [
        row
        for row in rows
        if any(
            s["op"] == "notify" and schemas.issue(NOTE, s["message"]) is not None
            for s in row["steps"]
        )
    ]
    assert refusing and all(row["category"] == "execution" for row in refusing)
    assert any(row["expected"]["sent"] == [] for row in refusing)
    assert any(row["expected"]["sent"] for row in refusing)


# ---------------------------------------------------------------- every event type


def test_every_event_type_is_covered(
    rows: list[dict[str, Any]], schemas: SchemaSet, event_types: list[str]
) -> None:
    assert len(event_types) == 32 and "hook.failure" in event_types
    accepted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rejected: Counter[str] = Counter()
    for row in rows:
        for op, message, verdict in verdicts(row, schemas):
            evt = message["params"]["event"]
            if op == "notify" and verdict == OK:
                accepted[evt["type"]].append(evt)
            if op == "rawNotify" and verdict == SCHEMA:
                rejected[evt["type"]] += 1
    for type_ in event_types:
        events = accepted[type_]
        shapes = {frozenset(evt) for evt in events}
        assert len(shapes) >= 2, f"{type_}: two accepted notifies with other optional fields"
        bodies = {json.dumps({k: v for k, v in e.items() if k != "id"}) for e in events}
        assert len(bodies) >= 2, f"{type_}: two distinct accepted messages"
        assert rejected[type_] >= 1, f"{type_}: a schema-invalid rawNotify"


def test_minimal_rows_have_only_required_fields(
    tagged: list[Row], schemas: SchemaSet, event_types: list[str]
) -> None:
    minimal = {}
    for r in tagged:
        if r.tag == "minimal":
            evt = r.scenario["steps"][0]["message"]["params"]["event"]
            minimal[evt["type"]] = r.scenario["steps"][0]["message"]
    assert sorted(minimal) == sorted(event_types)
    for type_, message in minimal.items():
        assert schemas.issue(NOTE, message) is None, type_
        for key in message["params"]["event"]:
            less = copy.deepcopy(message)
            del less["params"]["event"][key]
            assert schemas.issue(NOTE, less) is not None, f"{type_}: {key} is optional"


def test_rich_rows_carry_optional_fields(tagged: list[Row], event_types: list[str]) -> None:
    minimal_keys: dict[str, set[str]] = {}
    rich: dict[str, dict[str, Any]] = {}
    for r in tagged:
        evt = r.scenario["steps"][0].get("message", {}).get("params", {}).get("event", {})
        if r.tag == "minimal":
            minimal_keys[evt["type"]] = set(evt)
        elif r.tag == "rich":
            rich[evt["type"]] = evt
    assert sorted(rich) == sorted(event_types)
    for type_, evt in rich.items():
        extra = set(evt) - minimal_keys[type_]
        assert "extensions" in extra and len(extra) >= 2, type_
        assert all("." in key for key in evt["extensions"]), type_
        assert "session" in evt, type_
    synthesized = [
        node
        for evt in rich.values()
        for node in walk(evt)
        if isinstance(node, dict) and node.get("synthesized") is True
    ]
    assert len(synthesized) >= 10
    assert sum("gaps" in evt for evt in rich.values()) >= 3
    assert sum(bool(evt.get("items")) for evt in rich.values()) >= 25


def test_invalid_variants_vary_the_breakage(tagged: list[Row]) -> None:
    kinds = Counter(
        r.tag.split(":", 1)[1]
        for r in tagged
        if isinstance(r.tag, str) and r.tag.startswith("invalid:")
    )
    assert {"missing", "enum", "forbidden", "closed", "type", "conditional"} <= set(kinds)
    assert sum(kinds.values()) >= 50


# ---------------------------------------------------------------- lineage


def test_lineage_messages_are_schema_valid_when_lineage_decides(
    rows: list[dict[str, Any]], schemas: SchemaSet
) -> None:
    for row in rows:
        for _, message, verdict in verdicts(row, schemas):
            if verdict == LINEAGE:
                assert schemas.issue(NOTE, message) is None, row["id"]


def test_each_lineage_rule_is_accepted_and_rejected(tagged: list[Row]) -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    for r in tagged:
        if r.scenario["category"] != "lineage":
            continue
        assert r.tag in LINEAGE_RULES, r.id
        deliveries = r.scenario["expected"]["deliveries"]
        assert isinstance(r.tag, str)
        if all(d == OK for d in deliveries):
            seen[r.tag].add("accepted")
        if LINEAGE in deliveries:
            seen[r.tag].add("rejected")
    assert {rule: seen[rule] for rule in LINEAGE_RULES} == {
        rule: {"accepted", "rejected"} for rule in LINEAGE_RULES
    }
    assert sum(r.scenario["category"] == "lineage" for r in tagged) >= 30


def test_lineage_rows_exercise_the_named_cases(rows: list[dict[str, Any]]) -> None:
    lineage = {row["id"] for row in rows if row["category"] == "lineage"}
    for sid in (
        "cat-lin-redelivery",
        "cat-lin-identity-other-type",
        "cat-lin-identity-other-parent",
        "cat-lin-identity-other-task",
        "cat-lin-cycle-self",
        "cat-lin-cycle-late-parent",
        "cat-lin-task-actual-other-operation",
        "cat-lin-workspace-actual-other-kind",
        "cat-lin-late-proposal-other-task",
        "cat-lin-noop-task-empty-change",
        "cat-lin-noop-workspace-equal-prior",
        "cat-lin-noop-file-equal",
        "cat-lin-filtered-parent",
        "cat-lin-other-source-parent",
        "cat-lin-rejected-parent-unknown",
        "cat-lin-chain-task",
        "cat-lin-chain-workspace-file",
    ):
        assert sid in lineage, sid


# ---------------------------------------------------------------- registration


def test_registration_schema_validity_matches_the_rule(
    rows: list[dict[str, Any]], schemas: SchemaSet
) -> None:
    documents = 0
    for row in rows:
        registers = [s for s in row["steps"] if s["op"] == "register"]
        for step, entry in zip(registers, row["expected"]["registrations"], strict=True):
            documents += 1
            assert entry == {"accepted": True} or (
                list(entry) == ["accepted", "rule"] and entry["accepted"] is False
            ), row["id"]
            invalid = schemas.issue("registration.schema.json", step["registration"]) is not None
            assert invalid == (entry.get("rule") == "schema"), row["id"]
    assert documents >= 26


def test_each_registration_rule_is_accepted_and_rejected(tagged: list[Row]) -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    for r in tagged:
        if r.scenario["category"] != "registration":
            continue
        tags = r.tag if isinstance(r.tag, tuple) else (r.tag,)
        entries = r.scenario["expected"]["registrations"]
        assert len(tags) == len(entries), r.id
        for tag, entry in zip(tags, entries, strict=True):
            assert tag in RULES, r.id
            if entry["accepted"]:
                seen[tag].add("accepted")
            else:
                assert entry["rule"] == tag, r.id
                seen[tag].add("rejected")
    assert {rule: seen[rule] for rule in RULES} == {
        rule: {"accepted", "rejected"} for rule in RULES
    }


def test_registration_rows_use_their_own_backends(rows: list[dict[str, Any]]) -> None:
    upstream = json.loads(UPSTREAM.read_text(encoding="utf-8"))["scenarios"]

    def backends(scenarios: list[dict[str, Any]]) -> set[str]:
        return {
            hook["id"]
            for row in scenarios
            for step in row["steps"]
            if step["op"] == "register"
            for hook in step["registration"]["hooks"]
        }

    assert backends(rows) and not backends(rows) & backends(upstream)
    for row in rows:
        if row["category"] == "registration":
            assert row["expected"]["sent"] == [] and row["expected"]["deliveries"] == []
