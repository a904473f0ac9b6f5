"""Step suites hand consecutive sets that name nothing alike to one client run
(`merge_groups`), and every row keeps its own set's name."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.suites.base import identifiers, merge_groups
from interop.suites.catalogue.scenarios import load_sets as load_catalogue
from interop.suites.lifecycle.scenarios import load_sets as load_lifecycle

UPSTREAM = ROOT / "scenarios" / "upstream"


def test_merge_groups_needs_disjoint_names_and_the_same_file_outside_scenarios() -> None:
    docs = {
        "a": ({"version": 1, "description": "ours"}, {"x", "y"}),
        "b": ({"version": 1}, {"z"}),  # description is prose: ignored
        "c": ({"version": 1}, {"x"}),  # names x, as a does: apart
        "d": ({"version": 1, "suite": "other"}, {"w"}),  # differs outside: apart
        "e": ({"version": 1, "suite": "other"}, {"v"}),
    }
    groups = merge_groups(list(docs), lambda k: docs[k][0], lambda k: docs[k][1])
    assert groups == [["a", "b"], ["c"], ["d", "e"]]


def test_identifiers_are_the_strings_under_stateful_keys_at_any_depth() -> None:
    row = {"id": "r", "steps": [{"message": {"params": {"event": {"id": "e", "source": "s"}}}}]}
    row["steps"].append({"op": "upload", "ref": "u", "size": 3, "name": 7})
    assert identifiers(row) == {"r", "e", "s", "u"}
    assert identifiers(row, frozenset({"ref"})) == {"u"}


def test_lifecycle_runs_ours_with_upstream_and_the_chain_file_alone() -> None:
    sets = load_lifecycle(
        [
            ROOT / "scenarios" / "lifecycle.json",
            UPSTREAM / "lifecycle-scenarios.json",
            UPSTREAM / "observation-chain-scenarios.json",
        ]
    )
    runs = sets.runs()
    assert [r.name for r in runs] == [
        "lifecycle+lifecycle-scenarios",
        "observation-chain-scenarios",
    ]
    merged = runs[0]
    assert [s.id for s in merged.scenarios] == [s.id for s in sets[0].scenarios + sets[1].scenarios]
    assert {merged.origin(s.id) for s in sets[1].scenarios} == {"lifecycle-scenarios"}
    assert {merged.origin(s.id) for s in sets[0].scenarios} == {"lifecycle"}
    assert runs[1].origin(sets[2].scenarios[0].id) == "observation-chain-scenarios"


def _clashing_copy(source: Path, target: Path, change: Any) -> Path:
    document = json.loads(source.read_text(encoding="utf-8"))
    document = change(copy.deepcopy(document))
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_a_lifecycle_set_sharing_a_request_id_runs_alone(tmp_path: Path) -> None:
    ours = ROOT / "scenarios" / "lifecycle.json"
    taken = json.loads(ours.read_text())["scenarios"][0]["requests"]
    taken_id = next(iter(taken.values()))["id"]

    def share(document: dict[str, Any]) -> dict[str, Any]:
        row = document["scenarios"][0]
        next(iter(row["requests"].values()))["id"] = taken_id
        return document

    copied = _clashing_copy(UPSTREAM / "lifecycle-scenarios.json", tmp_path / "copy.json", share)
    assert [r.name for r in load_lifecycle([ours, copied]).runs()] == ["lifecycle", "copy"]


def test_catalogue_runs_ours_with_upstream_unless_a_source_is_shared(tmp_path: Path) -> None:
    ours = ROOT / "scenarios" / "catalogue.json"
    upstream = UPSTREAM / "catalogue-scenarios.json"
    (run,) = load_catalogue([ours, upstream]).runs()
    assert run.name == "catalogue+catalogue-scenarios"
    assert run.origin(run.scenarios[-1].id) == "catalogue-scenarios"
    assert run.origin(run.scenarios[0].id) == "catalogue"
    mine = identifiers(json.loads(ours.read_text()))
    source = next(s for s in mine if s.startswith("urn:"))

    def share(document: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(document).replace('"urn:ahp:catalogue"', json.dumps(source))
        shared: dict[str, Any] = json.loads(text)
        return shared

    copied = _clashing_copy(upstream, tmp_path / "copy.json", share)
    assert [r.name for r in load_catalogue([ours, copied]).runs()] == ["catalogue", "copy"]
