"""schemas/scenarios/: every scenario file fits its format's schema, and a broken one is
refused by its suite's loader in one line naming the file, the row and the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.jsonvalue import load_file
from interop.schema import SchemaSet
from interop.suites.base import ScenarioError
from interop.suites.catalogue import scenarios as catalogue
from interop.suites.compaction import scenarios as compaction
from interop.suites.core import scenarios as core
from interop.suites.elicitation import scenarios as elicitation
from interop.suites.isolation import scenarios as isolation
from interop.suites.lifecycle import scenarios as lifecycle
from interop.suites.scenario_schema import (
    SCHEMA_DIR,
    formats,
    problems,
    row_problem,
    schemas,
    validate_document,
)

SCENARIOS = ROOT / "scenarios"
UPSTREAM = SCENARIOS / "upstream"

# every scenario file of the repository, and the format it is in
FILES = {
    SCENARIOS / "core.json": "core",
    SCENARIOS / "lifecycle.json": "lifecycle",
    SCENARIOS / "catalogue.json": "catalogue",
    SCENARIOS / "compaction.json": "compaction",
    SCENARIOS / "compaction-host.json": "compaction-host",
    SCENARIOS / "elicitation.json": "elicitation",
    UPSTREAM / "scenarios.json": "core",
    UPSTREAM / "lifecycle-scenarios.json": "lifecycle",
    UPSTREAM / "observation-chain-scenarios.json": "lifecycle",
    UPSTREAM / "catalogue-scenarios.json": "catalogue",
}

# the loader of each format (the compaction loader reads both of its forms)
LOADERS: dict[str, Callable[[Path], Any]] = {
    "core": core.load_set,
    "lifecycle": lifecycle.load_set,
    "catalogue": catalogue.load_set,
    "compaction": compaction.load_set,
    "compaction-host": compaction.load_set,
    "elicitation": elicitation.load_set,
}


def test_every_scenario_file_is_listed_with_its_format() -> None:
    on_disk = {*SCENARIOS.glob("*.json"), *UPSTREAM.glob("*.json")}
    assert on_disk == set(FILES)
    assert sorted(set(FILES.values())) == formats() == sorted(LOADERS)


def test_every_scenario_schema_is_valid_draft_2020_12() -> None:
    checked = SchemaSet(SCHEMA_DIR, check=True)
    for name, document in checked.documents.items():
        assert document["$id"] == "https://interop.ahp.test/schemas/scenarios/" + name
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document.get("title"), name


@pytest.mark.parametrize("path", sorted(FILES), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_scenario_file_fits_its_schema_and_loads(path: Path) -> None:
    document = load_file(path)
    assert problems(document, FILES[path]) == []
    validate_document(path, document, FILES[path])
    loaded = LOADERS[FILES[path]](path)
    assert len(loaded.scenarios) == len(document["scenarios"])


def test_the_isolation_cases_are_lifecycle_rows() -> None:
    """The isolation suite derives its rows in code from an upstream lifecycle row: each
    derived row, with the upload block a run gives it, is a row of the lifecycle format."""
    (cases,) = isolation.load_sets([UPSTREAM / "lifecycle-scenarios.json"])
    block = {"endpoint": "https://127.0.0.1:1/upload", "timeoutMs": 5000, "maxBytes": 1024}
    for case in cases.cases:
        tls = {**block, "tls": {"caFile": "/ca.pem"}}
        for row in (case.raw, case.row(block, blind=False), case.row(tls, blind=False)):
            assert row_problem(row, "lifecycle") is None, case.id
        assert row_problem(case.event_part().raw, "lifecycle") is None


def test_a_name_no_schema_has_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no scenario schema 'cores'; the formats are catalogue"):
        validate_document(Path("x.json"), {}, "cores")


# ---------------------------------------------------------------- broken files


def _renamed(node: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """`node` with the key `old` spelt `new`, in the same place."""
    return {new if key == old else key: value for key, value in node.items()}


def _at(document: dict[str, Any], path: tuple[str | int, ...]) -> Any:
    node: Any = document
    for step in path:
        node = node[step]
    return node


def _misspell(path: tuple[str | int, ...], old: str, new: str) -> Callable[[Any], None]:
    """Misspell the key `old` of the object at `path` (below the document)."""

    def change(document: Any) -> None:
        parent = _at(document, path[:-1])
        parent[path[-1]] = _renamed(parent[path[-1]], old, new)

    return change


def _retype(path: tuple[str | int, ...], value: Any) -> Callable[[Any], None]:
    def change(document: Any) -> None:
        _at(document, path[:-1])[path[-1]] = value

    return change


# (file, row index, change, the field named, words the message must hold)
MISSPELT = [
    (
        "core.json",
        12,
        _misspell(("scenarios", 12, "expected"), "decision", "decison"),
        "expected.decison",
        "unknown key (did you mean 'decision'?); the keys here are decision,",
    ),
    (
        "core.json",
        3,
        _misspell(("scenarios", 3), "expected", "expectd"),
        "expectd",
        "unknown key (did you mean 'expected'?)",
    ),
    (
        "upstream/scenarios.json",
        0,
        _misspell(("scenarios", 0), "tags", "tag"),
        "tag",
        "unknown key (did you mean 'tags'?)",
    ),
    (
        "lifecycle.json",
        0,
        _misspell(("scenarios", 0, "steps", 0), "slot", "slott"),
        "steps[0].slott",
        "unknown key (did you mean 'slot'?); the keys here are op, key, slot, bypassSDK",
    ),
    (
        "upstream/observation-chain-scenarios.json",
        1,
        _misspell(("scenarios", 1, "chain", "subscriptions", 0), "failurePolicy", "failPolicy"),
        "chain.subscriptions[0].failPolicy",
        "did you mean 'failurePolicy'?",
    ),
    (
        "upstream/lifecycle-scenarios.json",
        2,
        _misspell(("scenarios", 2, "expected"), "published", "publish"),
        "expected.publish",
        "did you mean 'published'?",
    ),
    (
        "catalogue.json",
        5,
        _misspell(("scenarios", 5, "expected", "deliveries", 0), "accepted", "acepted"),
        "expected.deliveries[0].acepted",
        "unknown key (did you mean 'accepted'?); the keys here are accepted, errorKind",
    ),
    (
        "upstream/catalogue-scenarios.json",
        0,
        _misspell(("scenarios", 0), "category", "categry"),
        "categry",
        "did you mean 'category'?",
    ),
    (
        "compaction.json",
        0,
        _misspell(("scenarios", 0, "before", 0), "failurePolicy", "failurepolicy"),
        "before[0].failurepolicy",
        "did you mean 'failurePolicy'?",
    ),
    (
        "compaction-host.json",
        1,
        _misspell(("scenarios", 1, "expected"), "generated", "generatd"),
        "expected.generatd",
        "did you mean 'generated'?",
    ),
    (
        "elicitation.json",
        0,
        _misspell(("scenarios", 0, "steps", 0), "message", "mesage"),
        "steps[0].mesage",
        "unknown key (did you mean 'message'?); the keys here are op, message",
    ),
]

WRONG_TYPE = [
    ("core.json", 12, ("expected", "executed"), "yes", "expected a boolean, got a string"),
    ("upstream/scenarios.json", 1, ("tags",), "deny", "expected an array, got a string"),
    ("lifecycle.json", 1, ("steps", 1, "count"), "1", "expected an integer, got a string"),
    ("upstream/lifecycle-scenarios.json", 0, ("requests",), [], "expected an object"),
    ("catalogue.json", 2, ("category",), 5, "5 is not one of execution, lineage, registration"),
    ("upstream/catalogue-scenarios.json", 0, ("steps",), {}, "expected an array, got an object"),
    ("compaction.json", 1, ("afterObserveOnly",), "no", "expected a boolean, got a string"),
    ("compaction-host.json", 0, ("expected", "failures"), "1", "expected an integer"),
    ("elicitation.json", 2, ("expected", "receipts"), {}, "expected an array, got an object"),
]


def _load_broken(tmp_path: Path, name: str, change: Callable[[Any], None]) -> str:
    source = SCENARIOS / name
    document = json.loads(source.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / source.name
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        LOADERS[FILES[source]](path)
    return str(caught.value)


@pytest.mark.parametrize(("name", "row", "change", "field", "words"), MISSPELT)
def test_a_misspelt_key_is_refused_naming_file_row_and_field(
    tmp_path: Path, name: str, row: int, change: Any, field: str, words: str
) -> None:
    document = json.loads((SCENARIOS / name).read_text(encoding="utf-8"))
    rid = document["scenarios"][row]["id"]
    message = _load_broken(tmp_path, name, change)
    head = f"{tmp_path / Path(name).name}: scenarios[{row}] (id {rid!r}): {field}: "
    assert message.startswith(head), message
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize(("name", "row", "where", "value", "words"), WRONG_TYPE)
def test_a_wrong_type_is_refused_naming_file_row_and_field(
    tmp_path: Path, name: str, row: int, where: tuple[str | int, ...], value: Any, words: str
) -> None:
    document = json.loads((SCENARIOS / name).read_text(encoding="utf-8"))
    rid = document["scenarios"][row]["id"]
    field = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in where).lstrip(".")
    message = _load_broken(tmp_path, name, _retype(("scenarios", row, *where), value))
    head = f"{tmp_path / Path(name).name}: scenarios[{row}] (id {rid!r}): {field}: "
    assert message.startswith(head), message
    assert words in message


def test_every_format_refuses_a_misspelt_key_and_a_wrong_type() -> None:
    covered = {FILES[SCENARIOS / name] for name, *_ in MISSPELT}
    assert covered == set(formats())
    assert {FILES[SCENARIOS / name] for name, *_ in WRONG_TYPE} == set(formats())


# ---------------------------------------------------------------- which problem, worded how


def _core_document() -> dict[str, Any]:
    return json.loads((SCENARIOS / "core.json").read_text(encoding="utf-8"))


def test_the_first_problem_in_the_file_is_named_and_every_row_listed() -> None:
    document = _core_document()
    document["scenarios"][40]["expected"]["decision"] = "maybe"
    document["scenarios"][7]["tags"] = "decision"
    document["scenarios"][7]["expected"]["executed"] = 1
    with pytest.raises(
        ScenarioError, match=r"^x\.json: scenarios\[7\] \(id '[^']+'\): expected\.ex"
    ):
        validate_document(Path("x.json"), document, "core")
    found = [(p.row, p.field) for p in problems(document, "core")]
    assert found == [(7, "expected.executed"), (40, "expected.decision")]
    assert "is not one of allow, ask, deny" in str(problems(document, "core")[1])


def test_problems_outside_the_rows_name_the_field_alone() -> None:
    document = _core_document()
    document["version"] = 2
    with pytest.raises(ScenarioError, match=r"^x\.json: version: must be 1, got 2"):
        validate_document(Path("x.json"), document, "core")
    with pytest.raises(ScenarioError, match=r"^x\.json: scenarios: must not be empty"):
        validate_document(Path("x.json"), {"version": 1, "scenarios": []}, "core")
    with pytest.raises(ScenarioError, match=r"^x\.json: expected an object, got an array"):
        validate_document(Path("x.json"), [], "core")
    document = _core_document()
    document["scenarios"][2] = "a row"
    with pytest.raises(ScenarioError, match=r"^x\.json: scenarios\[2\]: expected an object"):
        validate_document(Path("x.json"), document, "core")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            lambda r: r.pop("expected"),
            "expected: missing; required here: expected; a row has exactly one of expected "
            "and expectError: true",
        ),
        (lambda r: r.update(expectError=True), "expected: a row has exactly one of"),
        (lambda r: r.update(hostExpected={}), "hostExpected: hostExpected is allowed only beside"),
        (lambda r: r.update(tags=["a", "a"]), "tags: holds the same item twice"),
        (lambda r: r.update(id=""), "id: must be a non-empty string"),
        (
            lambda r: r["expected"]["effective"].update(inptu=1),
            "expected.effective.inptu: unknown key (did you mean 'input'?)",
        ),
    ],
)
def test_core_rows_are_refused_in_words(change: Any, words: str) -> None:
    document = _core_document()
    row = next(r for r in document["scenarios"] if "expected" in r)
    change(row)
    with pytest.raises(ScenarioError) as caught:
        validate_document(Path("core.json"), document, "core")
    assert words in str(caught.value)


def _lifecycle_document(chain: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    document = json.loads((SCENARIOS / "lifecycle.json").read_text(encoding="utf-8"))
    row = next(r for r in document["scenarios"] if ("chain" in r) == chain)
    return document, row


@pytest.mark.parametrize(
    ("chain", "change", "words"),
    [
        (False, lambda r: r["steps"][0].update(op="sned"), "(did you mean 'send'?)"),
        (False, lambda r: r.update(chainProof={}), "chainProof: needs 'chain' beside it"),
        (False, lambda r: r["requests"]["a"].pop("id"), "requests.a.id: missing"),
        (
            False,
            lambda r: r["expected"].update(called=[]),
            "the keys here are published, cancelled, ignored,",
        ),
        (True, lambda r: r.pop("chainProof"), "chainProof: missing"),
        (True, lambda r: r["expected"].update(states={}), "expected.states: unknown key"),
        (
            True,
            lambda r: r["requests"].update(b=r["requests"].pop("a")),
            "requests.a: missing; required here: a; a chain's boundary request is requests.a",
        ),
        (
            True,
            lambda r: r.update(responseSequences={"a": [{"fault": "explode"}]}),
            'responseSequences.a[0].fault: "explode" is not one of server-error, malformed, '
            "timeout; a fault is exactly",
        ),
        (
            False,
            lambda r: r.update(responseSequences={"a": [{"fault": "timeout"}]}),
            "responseSequences.a[0]: faults are for chains only",
        ),
        (
            True,
            lambda r: r["chain"]["subscriptions"][0].update(timeoutMs=0),
            "timeoutMs: must be at least 1, got 0; the subscription's deadline: a positive integer",
        ),
    ],
)
def test_lifecycle_rows_are_refused_in_words(chain: bool, change: Any, words: str) -> None:
    document, row = _lifecycle_document(chain)
    change(row)
    with pytest.raises(ScenarioError) as caught:
        validate_document(Path("lifecycle.json"), document, "lifecycle")
    assert words in str(caught.value)


def test_what_no_schema_says_stays_in_the_loaders(tmp_path: Path) -> None:
    """The references between a row's parts and ids unique in a file: in code, worded the
    same way (file, row, field)."""
    document, row = _lifecycle_document(chain=False)
    row["steps"][0]["key"] = "z"
    path = tmp_path / "lifecycle.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    index = document["scenarios"].index(row)
    with pytest.raises(ScenarioError) as caught:
        lifecycle.load_set(path)
    assert str(caught.value).startswith(
        f"{path}: scenarios[{index}] (id {row['id']!r}): steps[0].key: names unknown request 'z'"
    )
    document = _core_document()
    document["scenarios"].append(copy.deepcopy(document["scenarios"][0]))
    path = tmp_path / "core.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    last = len(document["scenarios"]) - 1
    with pytest.raises(ScenarioError, match=rf"scenarios\[{last}\] \(id '[^']+'\): duplicate"):
        core.load_set(path)


def test_a_row_is_checked_alone_for_the_core_generator() -> None:
    row = copy.deepcopy(_core_document()["scenarios"][0])
    assert row_problem(row, "core") is None
    row["expected"]["decison"] = row["expected"].pop("decision")
    assert (row_problem(row, "core") or "").startswith(
        "expected.decison: unknown key (did you mean 'decision'?)"
    )


def test_one_schema_set_serves_every_load() -> None:
    assert schemas() is schemas()
