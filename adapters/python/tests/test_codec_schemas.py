"""Strict JSON and the schema layer: ECMA patterns and real format checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ahp_py.sdk import codec, schemas


def test_json_equal_keeps_booleans_apart_from_numbers() -> None:
    assert not codec.json_equal(True, 1)
    assert not codec.json_equal(0, False)
    assert codec.json_equal(1, 1.0)
    assert codec.json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not codec.json_equal([1, 2], [2, 1])
    assert not codec.json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not codec.json_equal(None, {})
    assert not codec.json_equal("1", 1)


def test_json_equal_ignores_key_order() -> None:
    assert codec.json_equal({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"d": 3, "c": 2}, "a": 1})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, True),
        (2.0, True),
        (10**20, True),
        (0, False),
        (-1, False),
        (1.5, False),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
    ],
)
def test_positive_integer(value: object, expected: bool) -> None:
    assert codec.is_positive_integer(value) is expected


@pytest.mark.parametrize(
    "text",
    ['{"a":1,"a":2}', "NaN", '{"a":Infinity}', '{"a":1} {"b":2}', "", b"\xff\xfe"],
)
def test_loads_rejects_non_strict_json(text: str | bytes) -> None:
    with pytest.raises(codec.JsonDecodeError):
        codec.loads(text)


def test_loads_and_dumps_round_trip() -> None:
    value = codec.loads(b' {"x": [1, 2.5, "\xc3\xa9", null, true]}\n')
    assert codec.dumps(value) == '{"x":[1,2.5,"\u00e9",null,true]}'


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("^[a-f0-9]{64}$", "a" * 64, True),
        ("^[a-f0-9]{64}$", "a" * 64 + "\n", False),
        ("^abc$", "abc\n", False),
        ("^\\d+$", "123", True),
        ("^\\d+$", "\u0663", False),  # Arabic-Indic digit: not an ECMA \d
        ("^[\\d.]+$", "1.2", True),
        ("^[$]x$", "$x", True),
        ("^a\\$$", "a$", True),
        ("^(?<word>\\w+)$", "hello_1", True),
        ("^\\w+$", "h\u00e9", False),
    ],
)
def test_ecma_patterns(pattern: str, subject: str, matches: bool) -> None:
    assert bool(re.search(schemas.ecma_to_python(pattern), subject)) is matches


def test_formats_and_patterns_are_enforced(schema_set: schemas.SchemaSet) -> None:
    from builders import request

    good = request("tool.before", ["deny"])
    assert schema_set.error(schemas.INTERCEPT_REQUEST, good) is None
    bad_time = request("tool.before", ["deny"])
    bad_time["params"]["event"]["time"] = "20260101T000000Z"
    assert schema_set.error(schemas.INTERCEPT_REQUEST, bad_time) is not None
    bad_source = request("tool.before", ["deny"])
    bad_source["params"]["event"]["source"] = "not a uri"
    assert schema_set.error(schemas.INTERCEPT_REQUEST, bad_source) is not None
    bad_extension = request("tool.before", ["deny"])
    bad_extension["params"]["extensions"] = {"com.example.x\n": {}}
    assert schema_set.error(schemas.INTERCEPT_REQUEST, bad_extension) is not None


def test_every_builder_request_is_canonical(schema_set: schemas.SchemaSet) -> None:
    from builders import PAYLOADS, request

    for event_type in PAYLOADS:
        req = request(event_type, ["message"])
        assert schema_set.error(schemas.INTERCEPT_REQUEST, req) is None, event_type


def test_discovery_manifest_is_canonical(schema_set: schemas.SchemaSet) -> None:
    from ahp_py.sdk.manifest import discovery_result

    message = {"jsonrpc": "2.0", "id": "discovery", "result": discovery_result()}
    assert schema_set.error(schemas.CAPABILITIES_RESPONSE, message) is None


def test_get_capabilities_is_the_bare_tool_before_capabilities(
    schema_set: schemas.SchemaSet,
) -> None:
    """What ``GET /capabilities`` answers, for the core manifest and ``M``: exactly
    the ``capabilities`` of the ``tool.before`` intercept entry, valid under the
    canonical capabilities.schema.json (what upstream clients validate)."""
    from ahp_py.sdk.manifest import discovery_manifest, get_capabilities
    from ahp_py.suites.catalogue import catalogue_manifest

    for manifest in (discovery_manifest(), catalogue_manifest()):
        [entry] = [
            e
            for e in manifest["events"]
            if e["event"] == "tool.before" and "intercept" in e["modes"]
        ]
        got = get_capabilities(manifest)
        assert got == entry["capabilities"] and "jsonrpc" not in got
        assert schema_set.error("capabilities.schema.json", got) is None
        got["effects"].clear()  # a copy: the manifest is left as it is
        assert entry["capabilities"]["effects"]


def test_get_capabilities_without_tool_before_is_the_first_intercept_entry() -> None:
    from ahp_py.sdk.manifest import get_capabilities

    manifest = {
        "events": [
            {"event": "tool.before", "modes": ["observe"]},
            {"event": "turn.start", "modes": ["intercept"], "capabilities": {"effects": ["deny"]}},
            {"event": "tool.after", "modes": ["intercept"], "capabilities": {"effects": []}},
        ]
    }
    assert get_capabilities(manifest) == {"effects": ["deny"]}
    with pytest.raises(ValueError):
        get_capabilities({"events": [{"event": "tool.before", "modes": ["observe"]}]})


def test_missing_schema_directory_is_an_error(tmp_path: object) -> None:
    from pathlib import Path

    with pytest.raises(schemas.SchemaError):
        schemas.SchemaSet(Path(str(tmp_path)))


def test_every_slot_definition_exists(schema_set: schemas.SchemaSet) -> None:
    """Each definition the engine validates against is in schemas/draft."""
    from ahp_py.sdk.boundaries import BOUNDARIES, DEFINITIONS

    assert {b.definition for b in BOUNDARIES.values()} <= set(DEFINITIONS)
    for name in DEFINITIONS:
        file_name, _, pointer = name.partition("#")
        assert file_name in schema_set.names() and pointer.startswith("/$defs/")
        assert schema_set.validator(name) is schema_set.validator(name)  # cached


def test_unknown_definition_is_an_error(schema_set: schemas.SchemaSet) -> None:
    for make_ready in (schema_set.validator, schema_set.prepare, schema_set.check):
        with pytest.raises(schemas.SchemaError, match="noSuchThing"):
            make_ready("content-item.schema.json#/$defs/noSuchThing")
        with pytest.raises(schemas.SchemaError, match="no-such"):
            make_ready("no-such.schema.json#/$defs/messages")


def test_jsonschema_is_imported_only_for_a_rejected_instance() -> None:
    """Valid messages are judged by the compiled checks alone: a process that
    sees no invalid one never imports jsonschema."""
    import subprocess
    import sys

    program = (
        "import json, sys\n"
        "from ahp_py.sdk import schemas\n"
        "s = schemas.load()\n"
        "s.prepare(schemas.INTERCEPT_REQUEST)\n"
        "rows = json.load(open('../../scenarios/core.json'))['scenarios']\n"
        "sent = [row['request'] for row in rows if 'request' in row]\n"
        "ok = [m for m in sent if s.check(schemas.INTERCEPT_REQUEST)(m)]\n"
        "assert len(ok) > 100 and all(s.error(schemas.INTERCEPT_REQUEST, m) is None for m in ok)\n"
        "print('jsonschema' in sys.modules)\n"
        "print(s.error(schemas.INTERCEPT_REQUEST, {'jsonrpc': '2.0'}) is not None)\n"
        "print('jsonschema' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.stdout.split() == ["False", "True", "True"], done.stderr


def test_definition_errors_name_the_definition(schema_set: schemas.SchemaSet) -> None:
    from ahp_py.sdk.boundaries import WORKSPACE_CHANGE

    assert schema_set.error(WORKSPACE_CHANGE, {"cwd": "/a"}) is None
    error = schema_set.error(WORKSPACE_CHANGE, {"cwd": ""})
    assert error and error.startswith(WORKSPACE_CHANGE) and "cwd" in error
