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


# -- the compiled checks (schemacheck) ---------------------------------------------


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _changed(node: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    if not path:
        return value
    copied = copy.deepcopy(node)
    parent = copied
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copied


# values put in place of a member: every JSON type, the boolean/number look-alikes,
# strings that pass or fail the formats and an object with a dispatch key
_LEAVES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    "",
    "x",
    "https://a.test/x",
    "2026-01-01T00:00:00Z",
    "2026-13-01T00:00:00Z",
    [],
    {},
    ["x"],
    {"type": "x"},
]


def _mutants(message: Any, rnd: Any, count: int) -> Iterator[Any]:
    """Copies of a message with one member replaced by another JSON value or
    removed, chosen by ``rnd``, and one with an unknown member added."""
    places = list(_paths(message))
    for _ in range(count):
        place = rnd.choice(places)
        if place and rnd.random() < 0.3:
            yield _changed(message, place, None, delete=True)
        else:
            yield _changed(message, place, copy.deepcopy(rnd.choice(_LEAVES)))
    if isinstance(message, dict):
        yield {**message, "zzUnknown": 1}


def _definitions(fast: schemas.SchemaSet) -> list[str]:
    """Every schema file and every ``$defs`` entry: the names validators are built for."""
    names = []
    for file_name, document in fast._documents.items():
        names.append(file_name)
        names += [f"{file_name}#/$defs/{name}" for name in document.get("$defs", {})]
    return names


def test_every_canonical_schema_is_compiled(both: Any) -> None:
    fast, _plain = both
    names = _definitions(fast)
    assert len(names) > 50
    left = [name for name in names if fast.check(name) is None]
    # only a folder of definitions (``gapFor``: members named after fields) is left
    # to jsonschema, which ignores members that are no keyword
    assert left == ["common.schema.json#/$defs/gapFor"]
    assert all(fast.check(name) is not None for name in NAMES)


def test_compiled_checks_give_the_verdicts_of_jsonschema(both: Any) -> None:
    """On every distinct object of every scenario file, on broken copies of the
    messages, and on seeded random mutants: the compiled check of each message
    schema, and of every definition for the objects, says what jsonschema says on
    the schemas as written."""
    import random

    fast, plain = both
    files = sorted((REPO / "scenarios").glob("*.json")) + sorted(
        (REPO / "scenarios" / "upstream").glob("*.json")
    )
    distinct: dict[str, Any] = {}
    for path in files:
        for message in _messages(json.loads(path.read_text(encoding="utf-8"))):
            distinct.setdefault(json.dumps(message, sort_keys=True), message)
    rnd = random.Random(20261202)
    compared = valid = 0
    for message in distinct.values():
        for instance in (message, *_broken(message), *_mutants(message, rnd, 3)):
            for name in NAMES:
                verdict = fast.check(name)(instance)  # type: ignore[misc]
                expected = plain.validator(name).is_valid(instance)
                assert verdict == expected, (name, json.dumps(instance)[:400])
                compared += 1
                valid += verdict
    assert compared > 20_000 and 0 < valid < compared


@pytest.mark.parametrize(
    ("schema", "instances"),
    [
        ({"const": 1}, [1, 1.0, True, "1", [1]]),
        ({"const": False}, [False, 0, None, []]),
        ({"const": [1, {"a": True}]}, [[1, {"a": True}], [True, {"a": 1}], [1.0, {"a": True}]]),
        ({"enum": ["a", 1, None]}, ["a", 1, True, None, 1.0, "b", ["a"], {"a": 1}]),
        ({"enum": ["a", "b"]}, ["a", "c", ["a"], {}, 1]),
        ({"type": "integer"}, [1, 1.0, 1.5, True, "1"]),
        ({"type": ["number", "null"]}, [1, 1.5, None, False, "x"]),
        ({"type": "object", "minProperties": 2}, [{}, {"a": 1}, {"a": 1, "b": 2}, [1, 2]]),
        (
            {
                "properties": {"a": {"type": "string"}},
                "patternProperties": {"^x": {"type": "integer"}},
                "additionalProperties": False,
            },
            [{"a": "s"}, {"a": 1}, {"x1": 2}, {"x1": "s"}, {"b": 1}, [], "s"],
        ),
        ({"additionalProperties": {"type": "string"}}, [{"a": "s"}, {"a": 1}, 3]),
        ({"propertyNames": {"pattern": "^[a-z]+$"}}, [{"ab": 1}, {"aB": 1}, {}, "AB"]),
        ({"prefixItems": [{"type": "string"}], "items": False}, [["a"], ["a", 1], [1], [], "a"]),
        (
            {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
            [["a", 1], ["a", "b"]],
        ),
        ({"contains": {"type": "string"}}, [[1, "a"], [1, 2], [], "a"]),
        (
            {"contains": {"type": "string"}, "minContains": 2, "maxContains": 2},
            [["a"], ["a", "b"], ["a", "b", "c"], [1]],
        ),
        (
            {"contains": {"type": "string"}, "minContains": 0, "maxContains": 1},
            [[], [1], ["a", "b"]],
        ),
        (
            {"uniqueItems": True},
            [
                [1, 2],
                [1, 1],
                [1, True],
                [1, 1.0],
                [{"a": 1}, {"a": 1}],
                [[1], [True], [1]],
                [0, False],
                ["a", "b", "a"],
            ],
        ),
        ({"minItems": 1, "maxItems": 2}, [[], [1], [1, 2, 3], "ab"]),
        ({"minLength": 2, "maxLength": 3}, ["a", "ab", "abcd", "\U0001f600\U0001f600", 5]),
        ({"pattern": "^a\\d$"}, ["a1", "a1\n", "a\u0661", "b1", 1]),
        ({"minimum": 1, "maximum": 3}, [0, 1, 3, 3.5, True, "2"]),
        ({"exclusiveMinimum": 1, "exclusiveMaximum": 3}, [1, 2, 3, 2.5]),
        ({"format": "uri"}, ["https://a.test/x", "not a uri", "", 5]),
        (
            {"format": "date-time"},
            ["2026-01-01T00:00:00Z", "2026-01-01t00:00:00z", "2026-01-01", 1],
        ),
        ({"anyOf": [{"type": "string"}, {"minimum": 2}]}, ["a", 1, 3, None]),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 3, 2.5, "a"]),
        ({"not": {"type": "string"}}, ["a", 1]),
        (
            {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}},
            [{"a": 1}, {"a": 1, "b": 2}, {"c": 1}, {}, 5],
        ),
        ({"then": {"required": ["b"]}, "type": "object"}, [{}, {"b": 1}, 5]),
        (True, [1, None]),
        (False, [1, None]),
        ({"allOf": [{"type": "object"}, {"required": ["a"]}]}, [{"a": 1}, {}, []]),
    ],
)
def test_each_keyword_agrees_with_jsonschema(schema: Any, instances: list[Any]) -> None:
    from jsonschema import Draft202012Validator

    fast = schemas.SchemaSet()
    schema = schemas.translate_patterns(schema)  # ECMA patterns, as the set loads them
    reference = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    check = fast._compiler.compile(schema)  # type: ignore[union-attr]
    verdicts = [(instance, check(instance)) for instance in instances]
    assert verdicts == [(instance, reference.is_valid(instance)) for instance in instances]
    assert {verdict for _, verdict in verdicts} == {True, False} or schema in (True, False)


def test_a_cycle_compiles_once_and_recurses() -> None:
    fast = schemas.SchemaSet()
    tree: dict[str, Any] = {"type": "object", "properties": {}, "required": ["v"]}
    tree["properties"]["kids"] = {"type": "array", "items": tree}
    check = fast._compiler.compile(tree)  # type: ignore[union-attr]
    assert check({"v": 1, "kids": [{"v": 2, "kids": []}]})
    assert not check({"v": 1, "kids": [{"kids": []}]})


def test_an_unknown_keyword_keeps_jsonschema(tmp_path: Path) -> None:
    """A schema with a keyword the compiler does not know is not compiled; its
    verdicts and reasons are jsonschema's."""
    (tmp_path / "odd.schema.json").write_text(
        json.dumps({"type": "integer", "multipleOf": 3}), encoding="utf-8"
    )
    odd = schemas.SchemaSet(tmp_path)
    assert odd.check("odd.schema.json") is None
    assert odd.error("odd.schema.json", 6) is None
    assert "multiple of 3" in (odd.error("odd.schema.json", 7) or "")


def test_a_rejected_instance_is_judged_again_by_jsonschema(tmp_path: Path) -> None:
    """What a compiled check rejects is not rejected on its word: a check that
    refuses everything changes no verdict and no reason."""
    (tmp_path / "n.schema.json").write_text(
        json.dumps({"type": "object", "required": ["a"]}), encoding="utf-8"
    )
    strict = schemas.SchemaSet(tmp_path)
    strict.check("n.schema.json")
    strict._checks["n.schema.json"] = lambda _instance: False
    assert strict.error("n.schema.json", {"a": 1}) is None
    assert "'a' is a required property" in (strict.error("n.schema.json", {}) or "")
