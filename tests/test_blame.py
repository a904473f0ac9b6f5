"""The blame table (interop/blame.py, docs/blame.md): every error class is a rule that
names the side it judges, and a report row's rules are read as the verifiers wrote them."""

from __future__ import annotations

from interop.blame import JUDGES, RULES, UNCLASSIFIED, row_rules
from interop.coverage import load_requirements
from interop.results import ERRORS


def test_every_error_class_is_a_rule_with_its_side_and_known_requirements() -> None:
    assert set(RULES) == set(ERRORS)
    ids = {e["id"] for e in load_requirements()}
    for rule in RULES.values():
        assert rule.judges in JUDGES, rule
        assert set(rule.requirements) <= ids, rule
        assert rule.basis, rule


def test_a_rows_rules_come_from_its_classes_its_error_or_its_combination() -> None:
    row = {
        "error": "ChainCalls: x (+1 more)",
        "diagnostics": {"classes": ["ChainCalls", "ChainSettlement"]},
    }
    assert [r.name for r in row_rules(row, [])] == ["ChainCalls", "ChainSettlement"]
    core = {"error": '$.input.path: expected "a", got "b"'}
    (rule,) = row_rules(core, [])
    assert (rule.name, rule.judges) == ("ClientResult", "client")
    assert "AHP-EDIT-001" in rule.requirements and "AHP-DEC-002" not in rule.requirements
    failed = {"error": "combination failed: ClientExit, ProcessLeak"}
    errors = [
        {"stage": "client[core]", "class": "ClientExit", "message": "exited 2"},
        {"stage": "server-stop", "class": "ProcessLeak", "message": "left 1"},
    ]
    assert [(r.name, r.judges) for r in row_rules(failed, errors)] == [
        ("ClientExit", "client"),
        ("ProcessLeak", "server"),
    ]
    assert row_rules({"error": "something nobody named"}, []) == [UNCLASSIFIED]
