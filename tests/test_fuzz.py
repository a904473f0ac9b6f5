"""The differential fuzzer: its generator, its comparison, its shrinker, and planted bugs."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.fuzz.compare import Said, classes, compare, differing_keys
from interop.fuzz.generate import BOUNDARIES, FuzzCase, can_continue, generate
from interop.fuzz.shrink import rename, smaller
from interop.fuzz.values import MAX_EXACT
from interop.schema import SchemaSet
from tests.conftest import named

BUGGY = Path(__file__).parent / "fakes" / "buggy_client.py"


def _walk(value: Any) -> Any:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


# ---------------------------------------------------------------- generator


def test_every_generated_request_is_canonical() -> None:
    schema = SchemaSet(ROOT / "schemas" / "draft")
    cases = generate(11, 120) + generate(12345, 120)
    assert {c.boundary for c in cases} == set(BOUNDARIES)
    for case in cases:
        issue = schema.issue("intercept-request.schema.json", case.scenario["request"])
        assert issue is None, f"{case.id}: {issue}"


def test_rows_depend_only_on_seed_and_index() -> None:
    assert generate(5, 40) == generate(5, 90)[:40]
    assert generate(5, 10, start=30) == generate(5, 40)[30:]
    assert generate(5, 20) != generate(6, 20)
    for case in generate(5, 20):
        assert case.scenario["request"]["id"] == case.id
        assert case.scenario["request"]["params"]["event"]["id"] == case.id


def test_generator_stays_out_of_what_the_protocol_leaves_undefined() -> None:
    for case in generate(77, 3000):
        params = case.scenario["request"]["params"]
        state = params.get("state")
        if isinstance(state, dict):
            assert "instructions" not in state and "injections" not in state, case.id
            if state.get("flow") == "continue":
                assert can_continue(params["capabilities"]), case.id
        for value in _walk(case.scenario):
            if isinstance(value, int | float) and not isinstance(value, bool):
                assert abs(value) <= MAX_EXACT, case.id
        if case.boundary == "user.elicitation.result":
            elicitation = params["event"]["elicitation"]
            accepted_form = elicitation["mode"] == "form" and elicitation["action"] == "accept"
            if not accepted_form:
                assert case.ignore == ("effective",), case.id


def test_generator_reaches_every_effect_and_fault() -> None:
    kinds: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for case in generate(3, 3000):
        response = case.scenario["response"]
        if not isinstance(response, dict) or not isinstance(response.get("result"), dict):
            faults["envelope"] += 1
            continue
        if response.get("id") != case.id:
            faults["correlation"] += 1
        effects = response["result"].get("effects")
        if not isinstance(effects, list):
            faults["effects"] += 1
            continue
        advertised = case.scenario["request"]["params"]["capabilities"]["effects"]
        for effect in effects:
            if isinstance(effect, dict):
                kinds[str(effect.get("type"))] += 1
                if effect.get("type") not in advertised:
                    faults["unadvertised"] += 1
        modifies = [e for e in effects if isinstance(e, dict) and e.get("type") == "modify"]
        if len(modifies) >= 2:
            faults["several-modifies"] += 1
    for kind in ("deny", "allow", "ask", "modify", "message", "return", "flow", "inject"):
        assert kinds[kind] > 20, kind
    assert kinds["org.example.audit"] + kinds["escalate"] + kinds["Deny"] > 10
    for fault in ("envelope", "correlation", "effects", "unadvertised", "several-modifies"):
        assert faults[fault] > 5, fault


# ---------------------------------------------------------------- comparison and shrinking


def _case(response: Any = None) -> FuzzCase:
    request = {"id": "r", "params": {"event": {"id": "r", "type": "tool.before"}}}
    return FuzzCase(0, "tool.before", {"id": "r", "request": request, "response": response})


def test_differing_keys_name_the_class() -> None:
    done = "completed"
    a = Said(done, {"decision": "allow", "executed": True, "messages": []})
    assert differing_keys(a, Said(done, {"decision": "allow", "executed": 1, "messages": []})) == (
        "executed",
    )
    assert differing_keys(a, Said(done, {"rejected": True})) == ("rejected",)
    assert differing_keys(a, Said("failed", None, "transport")) == ("status",)
    assert differing_keys(a, Said(done, {**a.actual, "flow": "stop"})) == ("flow",)
    assert differing_keys(Said("failed"), Said("failed")) == ()
    same = Said(done, {"decision": "allow", "executed": True, "messages": [], "n": 1.0})
    assert differing_keys(same, Said(done, {**a.actual, "n": 1})) == ()


def test_compare_leaves_out_undefined_keys_and_groups_by_keys() -> None:
    case = FuzzCase(0, "user.elicitation.result", {"id": "e"}, ignore=("effective",))
    left = {"status": "completed", "actual": {"decision": "allow", "effective": {"content": None}}}
    right = {"status": "completed", "actual": {"decision": "allow", "effective": {"content": {}}}}
    assert compare(case, {"a": left, "b": right}) is None
    found = compare(
        _case(), {"a": left, "b": {"status": "completed", "actual": {"rejected": True}}}
    )
    assert found is not None and found.keys == ("rejected",)
    grouped = classes([found, found])
    assert list(grouped) == [("rejected",)]


def test_smaller_values_are_simpler_and_rename_keeps_a_wrong_id_wrong() -> None:
    assert next(iter(smaller({"a": [1, 2]}))) == {}
    assert [] in list(smaller([{"x": 1}]))
    assert list(smaller(True)) == [] and list(smaller(0)) == []
    scenario = {
        "id": "old",
        "request": {"id": "old", "params": {"event": {"id": "old"}}},
        "response": {"id": "old-other"},
    }
    renamed = rename(scenario, "new")
    assert renamed["request"]["id"] == renamed["request"]["params"]["event"]["id"] == "new"
    assert renamed["response"]["id"] == "new-other"
    assert scenario["id"] == "old"


# ---------------------------------------------------------------- planted bugs, end to end


def _buggy(tmp_path: Path, bug: str) -> Path:
    directory = tmp_path / "adapters" / f"buggy-{bug}"
    directory.mkdir(parents=True)
    python = ROOT / "adapters" / "python"
    manifest = {
        "language": f"buggy-{bug}",
        "client": [sys.executable, str(BUGGY), "--bug", bug, "--language", f"buggy-{bug}"],
        "server": [str(python / ".venv" / "bin" / "python"), "-m", "ahp_py", "server"],
        "extensions": {"blind": True, "receiptLog": True, "profiles": ["strict"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


@pytest.mark.skipif(
    not (ROOT / "adapters" / "python" / ".venv").is_dir(), reason="the Python adapter is not built"
)
def test_planted_bugs_are_found_and_minimised(tmp_path: Path) -> None:
    output = tmp_path / "fuzz"
    # With this seed both planted bugs show on several of the 300 rows.
    argv = ["fuzz", "--seed", "11", "--count", "300", "--boundaries", "tool.before"]
    argv += ["--clients", "python", "buggy-deep-merge", "buggy-stop-ignored", "--server", "python"]
    argv += ["--output", str(output), "--quiet", "--timeout", "60"]
    for bug in ("deep-merge", "stop-ignored"):
        argv += ["--adapter-dir", named(_buggy(tmp_path, bug))]
    assert main(argv) == 1
    summary = json.loads((output / "summary.json").read_text())
    found = {tuple(c["keys"]) for c in summary["classes"]}
    assert any("input" in keys for keys in found), found
    assert any("executed" in keys for keys in found), found
    for entry in summary["classes"]:
        assert entry["minimisedEffects"] <= 2, entry
        shrunk = json.loads((output / entry["file"]).read_text())
        said = shrunk["fuzz"]["said"]
        assert set(said) == {"python", "buggy-deep-merge", "buggy-stop-ignored"}
        assert shrunk["scenarios"][0]["id"] == entry["rows"][0]
    assert not summary["clientErrors"] and not summary["unrun"]
