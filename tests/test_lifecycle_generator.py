"""Tests of tools/generate_lifecycle_scenarios.py and the lifecycle set it writes.

The set must be reproduced byte for byte, load with the harness's loader, be
schema-valid in every message it makes anyone send, and cover what
docs/LIFECYCLE.md asks of it (every step op on every transport it can run on,
each operational failure under both policies, silent observers).
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

from interop.schema import canonical
from interop.suites.lifecycle.scenarios import load_set
from interop.suites.lifecycle.suite import _content_sources
from interop.suites.lifecycle.verify import expected_observation

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
GENERATOR = TOOLS / "generate_lifecycle_scenarios.py"
LIFECYCLE = REPO / "scenarios" / "lifecycle.json"
UPSTREAM = [
    REPO / "scenarios" / "upstream" / "lifecycle-scenarios.json",
    REPO / "scenarios" / "upstream" / "observation-chain-scenarios.json",
]

sys.path.insert(0, str(TOOLS))
import generate_lifecycle_scenarios as generator  # noqa: E402

TRANSPORTS = ("http", "stdio")
OPS = {"send", "send+bypassSDK", "wait", "release", "receive", "accept", "cancel"}
OPS |= {"failOpen", "observe", "upload"}
FAILURES = ("server-error", "malformed", "timeout", "wrong-id", "unreachable")


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
    loaded: dict[str, Any] = json.loads(LIFECYCLE.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def rows(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["scenarios"])


def chains(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "chain" in row]


def steps(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if "chain" not in row]


def transports(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(row.get("transports", TRANSPORTS))


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


# ---------------------------------------------------------------- the file


def test_check_reproduces_the_file() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_names_the_first_differing_scenario(tmp_path: Path, rows: list[Any]) -> None:
    document = json.loads(LIFECYCLE.read_text(encoding="utf-8"))
    victim = document["scenarios"][5]
    victim["expected"]["ignored"].append("tampered")
    altered = tmp_path / "lifecycle.json"
    altered.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    result = run_generator("--check", "--output", str(altered))
    assert result.returncode == 1
    assert repr(victim["id"]) in result.stdout
    missing = run_generator("--check", "--output", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "missing" in missing.stdout


def test_writing_elsewhere_gives_the_same_bytes(tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    result = run_generator("--output", str(output))
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == LIFECYCLE.read_bytes()
    assert generator.render(generator.build()) == generator.render(generator.build())


def test_the_harness_loads_it(document: dict[str, Any]) -> None:
    loaded = load_set(LIFECYCLE)
    assert 40 <= len(loaded.scenarios) <= 55
    assert document["version"] == 1
    assert set(document) == {"version", "description", "scenarios"}
    # The loader keeps extra top-level keys: the files the adapters get carry them too.
    assert loaded.document["description"] == document["description"]


def test_the_lint_accepts_the_set_and_refuses_a_broken_one(rows: list[Any]) -> None:
    assert generator.lint(rows) == []
    broken = copy.deepcopy(rows)
    broken.append(copy.deepcopy(broken[0]))
    broken[1]["requests"]["a"]["id"] = "someone-else"
    problems = generator.lint(broken)
    assert any("duplicate scenario id" in p for p in problems)
    assert any("requests.a must have id" in p for p in problems)


# ---------------------------------------------------------------- our own values


def test_ids_are_ours_and_unique(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert all(sid.startswith("lc-") for sid in ids)
    upstream = {row["id"] for path in UPSTREAM for row in json.loads(path.read_text())["scenarios"]}
    assert not set(ids) & upstream
    for row in rows:
        for key, request in row["requests"].items():
            assert request["id"] == f"{row['id']}:{key}"
            assert request["params"]["event"]["id"] == request["id"]
            assert request["params"]["event"]["source"] == "urn:ahp:interop"
            assert request["params"]["event"]["tool"]["name"] == "task"


def test_no_upstream_input_value_is_reused(rows: list[dict[str, Any]]) -> None:
    upstream_values: set[str] = set()
    for path in UPSTREAM:
        for node in walk(json.loads(path.read_text())):
            if isinstance(node, dict) and isinstance(node.get("value"), str):
                upstream_values.add(node["value"])
    assert {"original", "settled", "first", "second"} <= upstream_values
    ours = {
        node["value"]
        for node in walk(rows)
        if isinstance(node, dict) and isinstance(node.get("value"), str)
    }
    assert not ours & upstream_values


def test_numbers_are_i_json_integers(rows: list[dict[str, Any]]) -> None:
    for node in walk(rows):
        assert not isinstance(node, float)
        if isinstance(node, int) and not isinstance(node, bool):
            assert abs(node) <= 2**53 - 1


# ---------------------------------------------------------------- schema validity


def test_every_message_is_schema_valid(rows: list[dict[str, Any]]) -> None:
    schemas = canonical()
    problems = []

    def check(schema: str, message: Any, where: str) -> None:
        issue = schemas.issue(schema, message)
        if issue is not None:
            problems.append(f"{where}: {issue}")

    def check_response(message: Any, where: str) -> None:
        if "error" in message:
            check("json-rpc-message.schema.json", message, where)
            assert set(message) == {"jsonrpc", "id", "error"}, where
        else:
            check("intercept-response.schema.json", message, where)

    for row in rows:
        sid = row["id"]
        for key, request in row["requests"].items():
            check("intercept-request.schema.json", request, f"{sid} requests.{key}")
        for key, response in row["responses"].items():
            check_response(response, f"{sid} responses.{key}")
        for key, sequence in row.get("responseSequences", {}).items():
            for n, entry in enumerate(sequence):
                if "fault" not in entry:
                    check_response(entry, f"{sid} responseSequences.{key}[{n}]")
        for n, step in enumerate(row["steps"]):
            if step["op"] == "emit":
                check("intercept-response.schema.json", step["response"], f"{sid} steps[{n}]")
            if step["op"] == "observe":
                scenario = next(s for s in load_set(LIFECYCLE).scenarios if s.id == sid)
                wanted = expected_observation(scenario, step, {})
                check("observe-notification.schema.json", wanted["message"], f"{sid} steps[{n}]")
        proof = row.get("chainProof", {"requests": [], "observations": []})
        for n, request in enumerate(proof["requests"]):
            check("intercept-request.schema.json", request, f"{sid} chainProof.requests[{n}]")
        for n, note in enumerate(proof["observations"]):
            check("observe-notification.schema.json", note, f"{sid} chainProof.observations[{n}]")
    assert problems == []


# ---------------------------------------------------------------- step rows


def test_every_step_op_runs_on_every_transport_it_can(rows: list[dict[str, Any]]) -> None:
    for transport in TRANSPORTS:
        used = set().union(
            *(generator.ops_of(r) for r in steps(rows) if transport in transports(r))
        )
        wanted = OPS | ({"emit"} if transport == "stdio" else set())
        assert used == wanted, transport


def test_restricted_rows_say_why(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        if "transports" in row:
            assert row["transports"] in (["http"], ["stdio"]), row["id"]
            assert isinstance(row["inapplicableReason"], str) and row["inapplicableReason"]
        emits = any(step["op"] == "emit" for step in row["steps"])
        assert emits == (transports(row) == ("stdio",)), row["id"]
    # A schedule with two outstanding requests runs over HTTP only.
    for row in steps(rows):
        pending: set[str] = set()
        most = 0
        for step in row["steps"]:
            if step["op"] == "send" and not step.get("bypassSDK"):
                pending.add(step["key"])
            elif step["op"] == "receive":
                pending.discard(step["slot"])
            most = max(most, len(pending))
        assert (most > 1) == (transports(row) == ("http",)), row["id"]


def test_step_expectations_match_the_steps(rows: list[dict[str, Any]]) -> None:
    for row in steps(rows):
        expected = row["expected"]
        sid = row["id"]
        ids = {request["id"] for request in row["requests"].values()}
        assert set(expected["states"]) == set(expected["published"]) <= ids, sid
        assert set(expected["cancelled"]) <= ids, sid
        for state in expected["states"].values():
            assert list(state)[:4] == ["decision", "executed", "input", "messages"], sid
            assert set(state) <= {"decision", "executed", "input", "messages", "flow"}, sid
        observes = [s for s in row["steps"] if s["op"] == "observe"]
        assert [o["subscription"] for o in expected["observations"]] == [
            s["subscription"] for s in observes
        ], sid
        uploads = [s for s in row["steps"] if s["op"] == "upload"]
        assert len(uploads) == len(expected["uploadStatuses"]), sid


def test_body_refs_are_uploaded_in_the_row_before_use(rows: list[dict[str, Any]]) -> None:
    aliases: list[str] = []
    for row in steps(rows):
        statuses = iter(row["expected"]["uploadStatuses"])
        stored: set[str] = set()
        sent = {key: False for key in row["requests"]}
        for step in row["steps"]:
            if step["op"] == "upload":
                aliases.append(step["ref"])
                if next(statuses) == 201:
                    stored.add(step["ref"])
            messages = []
            if step["op"] == "send" and not sent[step["key"]]:
                sent[step["key"]] = True
                messages.append(row["requests"][step["key"]])
            if step["op"] == "observe":
                messages.append(step.get("items", []))
            for node in walk(messages):
                if isinstance(node, dict) and isinstance(node.get("body"), dict):
                    assert node["body"]["ref"] in stored, (row["id"], node)
    # Aliases are unique, so the harness's content sources are never ambiguous.
    assert len(aliases) == len(set(aliases))
    loaded = load_set(LIFECYCLE)
    for transport in TRANSPORTS:
        sources = _content_sources(loaded, transport)
        assert len({s["descriptor"]["ref"] for s in sources}) == len(sources)
    assert 401 in {
        s for row in rows if "chain" not in row for s in row["expected"]["uploadStatuses"]
    }


# ---------------------------------------------------------------- chain rows


def failure_of(row: dict[str, Any]) -> tuple[str, str, int] | None:
    """(kind, policy, position) of the row's one operational failure, if it has one."""
    subs = [s for s in row["chain"]["subscriptions"] if s["mode"] == "intercept"]
    rid = row["requests"]["a"]["id"]
    sequence = row.get("responseSequences", {}).get("a", [])
    received = [s for s in subs if s["backend"] != "unreachable"]
    for position, sub in enumerate(subs):
        if sub["backend"] == "unreachable":
            return "unreachable", sub["failurePolicy"], position
    for n, entry in enumerate(sequence):
        kind = entry.get("fault") or ("wrong-id" if entry.get("id") != rid else None)
        if kind is not None:
            return kind, received[n]["failurePolicy"], n
    return None


def test_chains_are_shaped_like_the_upstream_ones(rows: list[dict[str, Any]]) -> None:
    for row in chains(rows):
        sid = row["id"]
        assert row["steps"] == [] and list(row["requests"]) == ["a"], sid
        assert list(row["expected"]) == ["called", "failures", "observations", "input"], sid
        assert set(row["chainProof"]) == {"requests", "observations"}, sid
        assert set(row["chain"]) == {"subscriptions", "interrupt", "holdObservers"}, sid
        sequence = row.get("responseSequences", {}).get("a", [])
        assert len(sequence) == len(row["chainProof"]["requests"]), sid
        assert len(row["chainProof"]["observations"]) == len(row["expected"]["observations"]), sid
        for sub in row["chain"]["subscriptions"]:
            assert sub["id"].startswith(f"{sid}:"), sid
            if sub["mode"] == "observe":
                assert "timeoutMs" not in sub and sub["backend"] != "unreachable", sid


def test_each_operational_failure_under_both_policies(rows: list[dict[str, Any]]) -> None:
    seen: dict[tuple[str, str], str] = {}
    at_b = 0
    for row in chains(rows):
        found = failure_of(row)
        if found is None:
            continue
        kind, policy, position = found
        sid = row["id"]
        assert (kind, policy) not in seen, sid
        seen[(kind, policy)] = sid
        at_b += position == 1
        intercepts = [s for s in row["chain"]["subscriptions"] if s["mode"] == "intercept"]
        failing = intercepts[position]
        assert row["expected"]["failures"] == [failing["id"]], sid
        for sub in intercepts:
            assert sub["timeoutMs"] == (250 if sub is failing else 10000), sid
            if sub is not failing:
                assert sub["failurePolicy"] != policy, sid  # only the failing policy decides
        called = row["expected"]["called"]
        original = row["requests"]["a"]["params"]["event"]["tool"]["input"]
        if policy == "fail-open":
            assert called == [s["id"] for s in intercepts], sid  # later calls still happen
        else:
            assert called == [s["id"] for s in intercepts[: position + 1]], sid
            assert row["expected"]["input"] == original, sid
            for request in row["chainProof"]["requests"]:
                assert request["params"]["event"]["tool"]["input"] == original, sid
        requested = len(row["chainProof"]["requests"])
        assert requested == len(called) - (kind == "unreachable"), sid
    assert set(seen) == {(k, p) for k in FAILURES for p in ("fail-open", "fail-closed")}
    assert at_b * 2 >= len(seen)


def test_silent_observers_and_held_observers(rows: list[dict[str, Any]]) -> None:
    silent = [row for row in chains(rows) if "observeFaults" in row]
    assert len(silent) >= 2
    assert any(row["chain"]["holdObservers"] for row in silent)
    for row in silent:
        entries = row["observeFaults"]["a"]
        assert "silent" in entries and entries.index("silent") < len(
            row["expected"]["observations"]
        )
        assert row["expected"]["failures"] == []
    held = [
        row for row in chains(rows) if row["chain"]["holdObservers"] and "observeFaults" not in row
    ]
    assert any(
        sum(s["mode"] == "observe" for s in row["chain"]["subscriptions"]) == 3 for row in held
    )
    interrupted = [row for row in chains(rows) if row["chain"]["interrupt"]]
    assert len(interrupted) == 1
    (row,) = interrupted
    modes = [s["mode"] for s in row["chain"]["subscriptions"]]
    assert modes.count("intercept") == 3 and modes.count("observe") == 2
    assert row["expected"]["observations"] == [] and row["chainProof"]["observations"] == []
