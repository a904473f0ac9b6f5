"""The fast paths (the allOf dispatch of schemas.discriminate, the references
inlined at load) give the verdicts of the schemas as written, on every message of
every scenario file and on broken copies."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ahp_py.sdk import schemas

REPO = Path(__file__).resolve().parents[3]
NAMES = [
    schemas.INTERCEPT_REQUEST,
    schemas.INTERCEPT_RESPONSE,
    schemas.OBSERVE_NOTIFICATION,
    schemas.CAPABILITIES_RESPONSE,
]


def _messages(node: Any) -> Iterator[Any]:
    """Every JSON-RPC-looking object and every event anywhere in a scenario file."""
    if isinstance(node, dict):
        if "jsonrpc" in node or ("type" in node and "source" in node):
            yield node
        for value in node.values():
            yield from _messages(value)
    elif isinstance(node, list):
        for value in node:
            yield from _messages(value)


def _broken(message: Any) -> Iterator[Any]:
    """Copies with one change each along the dispatch paths: a type that is not a
    string, an unknown type, a missing type, params.event not an object."""
    if not isinstance(message, dict):
        return
    event = (
        message.get("params", {}).get("event") if isinstance(message.get("params"), dict) else None
    )
    target = event if isinstance(event, dict) else message
    for value in (7, "no.such.type", None):
        copied = copy.deepcopy(message)
        inner = copied["params"]["event"] if target is event else copied
        if value is None:
            inner.pop("type", None)
        else:
            inner["type"] = value
        yield copied
    if isinstance(event, dict):
        copied = copy.deepcopy(message)
        copied["params"]["event"] = ["not", "an", "object"]
        yield copied
    effects = (
        message.get("result", {}).get("effects")
        if isinstance(message.get("result"), dict)
        else None
    )
    if isinstance(effects, list) and effects:
        for value in ([], "deny", {"type": 3}):
            copied = copy.deepcopy(message)
            copied["result"]["effects"][0] = value
            yield copied


@pytest.fixture(scope="module")
def both() -> tuple[schemas.SchemaSet, schemas.SchemaSet]:
    return schemas.SchemaSet(), schemas.SchemaSet(discriminated=False)


def test_same_verdicts_on_every_scenario_message(both: Any) -> None:
    fast, plain = both
    files = sorted((REPO / "scenarios").glob("*.json")) + sorted(
        (REPO / "scenarios" / "upstream").glob("*.json")
    )
    compared = valid = 0
    for path in files:
        for message in _messages(json.loads(path.read_text(encoding="utf-8"))):
            for instance in (message, *_broken(message)):
                for name in NAMES:
                    verdict = fast.validator(name).is_valid(instance)
                    assert verdict == plain.validator(name).is_valid(instance), (path.name, name)
                    compared += 1
                    valid += verdict
    assert compared > 10_000 and 0 < valid < compared


def test_the_fast_path_is_in_use() -> None:
    document = schemas.SchemaSet()._documents["event.schema.json"]
    assert schemas.DISCRIMINATED in document and "allOf" not in document


def _refs(node: Any, seen: set[int]) -> set[str]:
    """The ``$ref`` values left anywhere in an inlined schema (shared nodes once)."""
    if id(node) in seen or not isinstance(node, dict | list):
        return set()
    seen.add(id(node))
    values = node.values() if isinstance(node, dict) else node
    ref = node.get("$ref") if isinstance(node, dict) else None
    found = {ref} if isinstance(ref, str) else set()
    return found.union(*(_refs(value, seen) for value in values))


def test_references_are_inlined_except_cycles() -> None:
    fast = schemas.SchemaSet()
    request = fast.validator(schemas.INTERCEPT_REQUEST).schema
    assert "$id" not in request and "$defs" not in request
    left = _refs(request, set())
    # what stays is absolute and points back into a subschema being inlined
    assert all(ref.startswith(schemas.SCHEMA_BASE) for ref in left), left
    plain = schemas.SchemaSet(discriminated=False)
    assert _refs(plain.validator(schemas.INTERCEPT_REQUEST).schema, set())


def test_a_reference_cycle_stays_a_reference(tmp_path: Path) -> None:
    (tmp_path / "tree.schema.json").write_text(
        json.dumps(
            {
                "$schema": schemas.DRAFT_2020_12,
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#"}}},
                "required": ["name"],
            }
        ),
        encoding="utf-8",
    )
    fast = schemas.SchemaSet(tmp_path)
    validator = fast.validator("tree.schema.json")
    items = validator.schema["properties"]["children"]["items"]
    assert items == {"$ref": schemas.SCHEMA_BASE + "tree.schema.json"}
    assert validator.is_valid({"name": 1, "children": [{"name": 2, "children": []}]})
    assert not validator.is_valid({"name": 1, "children": [{"children": []}]})
