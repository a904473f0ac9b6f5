"""Tests of tools/generate_scenarios.py and the core scenario set it writes."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
GENERATOR = TOOLS / "generate_scenarios.py"
CORE = REPO / "scenarios" / "core.json"
DOCS = REPO / "docs" / "scenarios.md"

sys.path.insert(0, str(TOOLS))
import generate_scenarios  # noqa: E402
from scenario_lint import lint  # noqa: E402
from scenario_model import Negative, expect_target, rejected_rows  # noqa: E402

# docs/scenarios.md "Boundaries in the core set": event -> modify target.
BOUNDARY_TARGETS = {
    "tool.before": "input",
    "tool.after": "output",
    "turn.finish.before": "response",
    "model.request.before": "request",
    "context.compact.before": "instructions",
    "context.compact.after": "summary",
    "user.message.outbound": "content",
    "user.elicitation.result": "content",
    "workspace.change.before": "workspace",
}
NEGATIVE_CLASSES = {
    "schema-invalid",
    "capability-invalid",
    "correlation-invalid",
    "application-invalid",
}


def run_generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    document = json.loads(CORE.read_text(encoding="utf-8"))
    assert set(document) == {"version", "scenarios"}
    assert document["version"] == 1
    rows: list[dict[str, Any]] = document["scenarios"]
    return rows


def event_type(row: dict[str, Any]) -> str:
    value: str = row["request"]["params"]["event"]["type"]
    return value


def positives(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (row for row in rows if "expected" in row)


def test_committed_file_is_reproduced() -> None:
    result = run_generator("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_generation_is_deterministic() -> None:
    first = generate_scenarios.render(generate_scenarios.build())
    second = generate_scenarios.render(generate_scenarios.build())
    assert first == second
    assert first.endswith("}\n")


def test_ids_are_unique_and_match_the_requests(scenarios: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in scenarios]
    assert len(ids) == len(set(ids))
    for row in scenarios:
        assert row["request"]["id"] == row["id"]
        assert row["request"]["params"]["event"]["id"] == row["id"]


def test_set_is_large_enough(scenarios: list[dict[str, Any]]) -> None:
    assert len(scenarios) >= 150


def test_every_boundary_has_positive_and_negative_rows(scenarios: list[dict[str, Any]]) -> None:
    for boundary in BOUNDARY_TARGETS:
        rows = [row for row in scenarios if event_type(row) == boundary]
        assert any("expected" in row for row in rows), f"{boundary}: no positive row"
        assert any(row.get("expectError") is True for row in rows), f"{boundary}: no negative row"
    assert {event_type(row) for row in scenarios} == set(BOUNDARY_TARGETS)


def test_every_positive_row_asserts_the_effective_target(scenarios: list[dict[str, Any]]) -> None:
    for row in positives(scenarios):
        target = BOUNDARY_TARGETS[event_type(row)]
        expected = row["expected"]
        assert set(expected.get("effective", {})) == {target}, row["id"]
        for key in ("decision", "executed", "messages"):
            assert key in expected, f"{row['id']}: {key}"
        assert ("input" in expected) == (event_type(row) == "tool.before"), row["id"]


def test_rejected_rows_name_one_negative_class(scenarios: list[dict[str, Any]]) -> None:
    for row in scenarios:
        if row.get("expectError") is not True:
            assert "negative" not in row["tags"], row["id"]
            continue
        assert "expected" not in row, row["id"]
        assert {"negative", "atomic-rejection"} <= set(row["tags"]), row["id"]
        assert len(NEGATIVE_CLASSES & set(row["tags"])) == 1, row["id"]
    classes = {tag for row in scenarios for tag in row["tags"] if tag in NEGATIVE_CLASSES}
    assert classes == NEGATIVE_CLASSES


def test_host_rule_rows_carry_host_expectations(scenarios: list[dict[str, Any]]) -> None:
    host_rows = [row for row in scenarios if "hostExpected" in row]
    assert host_rows
    for row in host_rows:
        assert "application-invalid" in row["tags"], row["id"]
        assert row["request"]["params"]["event"]["tool"]["name"] == "task", row["id"]
        assert row["hostExpected"]["executed"] is False, row["id"]


def test_check_fails_on_a_tampered_copy(tmp_path: Path) -> None:
    copy_path = tmp_path / "core.json"
    written = run_generator("--output", str(copy_path))
    assert written.returncode == 0, written.stderr
    assert run_generator("--check", "--output", str(copy_path)).returncode == 0

    document = json.loads(copy_path.read_text(encoding="utf-8"))
    target = document["scenarios"][3]
    target["tags"] = [*target["tags"], "tampered"]
    copy_path.write_text(
        json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    result = run_generator("--check", "--output", str(copy_path))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert repr(target["id"]) in lines[0]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda text: text.rstrip("\n"), "formatting differs"),
        (lambda text: text.replace("\n", "\r\n"), "formatting differs"),
        (lambda text: json.dumps(json.loads(text), indent=2) + "\n", "formatting differs"),
        (lambda text: "{", "not valid JSON"),
    ],
)
def test_check_fails_on_any_byte_difference(tmp_path: Path, change: Any, needle: str) -> None:
    copy_path = tmp_path / "core.json"
    assert run_generator("--output", str(copy_path)).returncode == 0
    copy_path.write_bytes(change(copy_path.read_text(encoding="utf-8")).encode("utf-8"))
    result = run_generator("--check", "--output", str(copy_path))
    assert result.returncode == 1
    assert needle in result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


def test_check_fails_on_a_missing_or_shortened_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    result = run_generator("--check", "--output", str(missing))
    assert result.returncode == 1 and "missing" in result.stdout

    short = tmp_path / "short.json"
    assert run_generator("--output", str(short)).returncode == 0
    document = json.loads(short.read_text(encoding="utf-8"))
    dropped = document["scenarios"].pop()
    short.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    result = run_generator("--check", "--output", str(short))
    assert result.returncode == 1 and repr(dropped["id"]) in result.stdout


def test_output_option_leaves_the_committed_file_alone(tmp_path: Path) -> None:
    before = CORE.read_bytes()
    assert run_generator("--output", str(tmp_path / "elsewhere.json")).returncode == 0
    assert CORE.read_bytes() == before


def test_rejected_rows_fall_back_to_the_group_request() -> None:
    usual = {"type": "tool.before", "session": {"id": "s"}}
    other = {"type": "tool.before", "session": {"id": "t"}}
    caps = {"effects": ["allow"]}
    first, second = rejected_rows(
        "g.",
        "group",
        usual,
        caps,
        [
            Negative("plain", "schema-invalid", [{"type": "audit"}], ["extra"]),
            Negative("own", "capability-invalid", [], event=other, caps={"effects": []}),
        ],
    )
    assert first["id"] == "g.plain"
    assert first["request"]["params"]["event"]["session"] == {"id": "s"}
    assert first["request"]["params"]["capabilities"] == caps
    assert first["response"]["result"]["effects"] == [{"type": "audit"}]
    assert first["tags"] == ["group", "extra", "negative", "schema-invalid", "atomic-rejection"]
    assert second["request"]["params"]["event"]["session"] == {"id": "t"}
    assert second["request"]["params"]["capabilities"] == {"effects": []}
    assert second["tags"] == ["group", "negative", "capability-invalid", "atomic-rejection"]


def test_expect_target_names_only_its_target() -> None:
    packed = expect_target("output", [], decision="allow", executed=False, flow="stop")
    assert packed == {
        "decision": "allow",
        "executed": False,
        "messages": [],
        "effective": {"output": []},
        "flow": "stop",
    }


def test_lint_rejects_a_row_without_effective(scenarios: list[dict[str, Any]]) -> None:
    assert lint(copy.deepcopy(scenarios)) == []
    broken = copy.deepcopy(next(positives(scenarios)))
    del broken["expected"]["effective"]
    assert any("effective" in problem for problem in lint([broken]))


def test_lint_rejects_capabilities_the_event_does_not_allow(
    scenarios: list[dict[str, Any]],
) -> None:
    row = copy.deepcopy(next(r for r in scenarios if event_type(r) == "tool.after"))
    row["request"]["params"]["capabilities"]["effects"].append("return")
    assert any("not allowed" in problem for problem in lint([row]))


def test_lint_rejects_numbers_outside_i_json(scenarios: list[dict[str, Any]]) -> None:
    row = copy.deepcopy(next(positives(scenarios)))
    row["response"]["result"]["effects"].append({"type": "return", "value": 2**53})
    assert any("I-JSON" in problem and "effects[" in problem for problem in lint([row]))


def test_lint_rejects_permission_where_there_is_none(scenarios: list[dict[str, Any]]) -> None:
    row = copy.deepcopy(next(r for r in positives(scenarios) if event_type(r) == "tool.after"))
    rest = {k: v for k, v in row["expected"].items() if k != "decision"}
    row["expected"] = {"decision": "allow", "permission": "none", **rest}
    assert any("permission semantics" in problem for problem in lint([row]))


def test_docs_table_matches_the_generated_groups() -> None:
    assert generate_scenarios.summary_table() in DOCS.read_text(encoding="utf-8")


def test_conformance_checker_accepts_the_set() -> None:
    checker = TOOLS / "check_conformance.py"
    if not checker.is_file():
        pytest.skip("tools/check_conformance.py is not present")
    result = subprocess.run(
        [sys.executable, str(checker), "--scenarios", str(CORE)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if "format checking unavailable" in result.stdout + result.stderr:
        pytest.skip("jsonschema format support is not installed")
    assert result.returncode == 0, result.stdout + result.stderr
