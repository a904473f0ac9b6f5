"""The harness's schema fast paths (the dispatching allOf, references followed once,
valid array items remembered) choose the same first issue as the schemas evaluated as
written, on every message of every scenario file and on copies broken along the
dispatch paths."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

import interop.schema as schema_module
from interop import ROOT
from interop.jsonvalue import load_file
from interop.schema import (
    InlinedEcmaValidator,
    PlainEcmaValidator,
    SchemaIssue,
    SchemaSet,
    first_issue,
)

DRAFT = ROOT / "schemas" / "draft"
NAMES = (
    "intercept-request.schema.json",
    "intercept-response.schema.json",
    "observe-notification.schema.json",
    "capabilities-response.schema.json",
    "event.schema.json",
)


def messages(node: Any) -> Iterator[Any]:
    """Each JSON-RPC message and each event inside a scenario file."""
    if isinstance(node, dict):
        if "jsonrpc" in node or {"type", "source"} <= node.keys():
            yield node
        for value in node.values():
            yield from messages(value)
    elif isinstance(node, list):
        for value in node:
            yield from messages(value)


def broken(message: dict[str, Any]) -> Iterator[Any]:
    """One change each where the dispatch looks: the event's type (wrong kind, unknown,
    gone), the event itself not an object, the first effect changed."""
    params = message.get("params")
    has_event = isinstance(params, dict) and isinstance(params.get("event"), dict)
    for change in (12, "no.such.type", None, [1], "event-not-an-object"):
        copied = copy.deepcopy(message)
        target = copied["params"]["event"] if has_event else copied
        if change == "event-not-an-object":
            if not has_event:
                continue
            copied["params"]["event"] = "event"
        elif change is None:
            target.pop("type", None)
        else:
            target["type"] = change
        yield copied
    result = message.get("result")
    if isinstance(result, dict) and isinstance(result.get("effects"), list) and result["effects"]:
        for change in ({"type": 1}, {}, "allow", {"type": "no-such-effect"}):
            copied = copy.deepcopy(message)
            copied["result"]["effects"][0] = change
            yield copied


def instances() -> Iterator[Any]:
    files = sorted((ROOT / "scenarios").glob("*.json"))
    files += sorted((ROOT / "scenarios" / "upstream").glob("*.json"))
    for path in files:
        for message in messages(load_file(path)):
            yield message
            yield from broken(message)


@pytest.fixture(scope="module")
def sets() -> tuple[SchemaSet, SchemaSet]:
    return SchemaSet(DRAFT), SchemaSet(DRAFT, fast=False)


def test_the_same_first_issue_on_every_scenario_message(sets: tuple[SchemaSet, SchemaSet]) -> None:
    fast, plain = sets
    compared = valid = 0
    for instance in instances():
        for name in NAMES:
            mine = first_issue(list(fast.validator(name).iter_errors(instance)))
            written = first_issue(list(plain.validator(name).iter_errors(instance)))
            assert mine == written, (name, instance)
            compared += 1
            valid += mine is None
    assert compared > 20_000 and 1_000 < valid < compared - 1_000


def test_the_fast_paths_are_in_use(sets: tuple[SchemaSet, SchemaSet]) -> None:
    fast, plain = sets
    assert type(plain.validator(NAMES[0])) is PlainEcmaValidator
    assert plain.validator(NAMES[0]).schema == {"$ref": fast.documents[NAMES[0]]["$id"]}
    inlined = fast.validator(NAMES[0]).schema
    assert "$ref" not in inlined and "$id" not in inlined and "properties" in inlined


def test_a_cycle_stays_a_reference(tmp_path: Any) -> None:
    (tmp_path / "tree.schema.json").write_text(
        '{"$id": "https://example.test/tree.schema.json", "type": "object",'
        ' "required": ["name"],'
        ' "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}',
        encoding="utf-8",
    )
    tree = SchemaSet(tmp_path).validator("tree.schema.json")
    assert tree.schema["properties"]["kids"]["items"] == {
        "$ref": "https://example.test/tree.schema.json"
    }
    assert tree.is_valid({"name": 1, "kids": [{"name": 2, "kids": []}]})
    assert not tree.is_valid({"name": 1, "kids": [{"kids": []}]})


def test_an_unknown_fragment_is_named(sets: tuple[SchemaSet, SchemaSet]) -> None:
    with pytest.raises(KeyError, match="no such subschema"):
        sets[0].validator("common.schema.json#/$defs/no-such-definition")


def test_valid_items_are_remembered_and_an_item_that_breaks_is_still_found(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "log.schema.json").write_text(
        '{"$id": "https://example.test/log.schema.json", "type": "array",'
        ' "prefixItems": [{"const": "head"}],'
        ' "items": {"$ref": "#/$defs/entry"},'
        ' "$defs": {"entry": {"type": "object", "required": ["kind"],'
        ' "properties": {"kind": {"enum": ["sent", "received"]},'
        ' "tags": {"type": "array", "items": {"type": "string"}}}}}}',
        encoding="utf-8",
    )
    fast, plain = SchemaSet(tmp_path), SchemaSet(tmp_path, fast=False)
    assert type(fast.validator("log.schema.json")) is InlinedEcmaValidator
    good = {"kind": "sent", "tags": ["a", "b"]}
    logs = [
        ["head", good, good],
        ["head", good, {"kind": "lost"}, good],  # one item breaks among remembered ones
        ["head", good, {"kind": "sent", "tags": ["a", 2]}],  # deeper, in a nested array
        [good, good],  # a remembered item in the prefix is still judged by `prefixItems`
        ["head", {"tags": []}, good],
        ["head", good, good],
    ]

    def same(log: list[Any]) -> None:
        mine = fast.validator("log.schema.json").iter_errors(log)
        written = plain.validator("log.schema.json").iter_errors(log)
        assert [(e.json_path, e.message) for e in mine] == [
            (e.json_path, e.message) for e in written
        ], log

    for log in logs * 2:
        same(log)
    remembered = set().union(*schema_module._VALID_ITEMS.values())
    assert json.dumps(good) in remembered and '{"kind": "lost"}' not in remembered
    monkeypatch.setattr("interop.schema.ITEM_MEMO_LIMIT", 2)  # forgotten at once, then again
    for log in logs * 2:
        same(log)
    assert fast.issue("log.schema.json", logs[1]) == SchemaIssue(
        "$[2].kind", "'lost' is not one of ['sent', 'received']"
    )
