"""The allOf dispatch fast path (schemas.discriminate) gives the verdicts of the
schemas as written, on every message of every scenario file and on broken copies."""

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
