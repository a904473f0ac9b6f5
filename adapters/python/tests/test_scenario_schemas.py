"""Every scenario file of ``schemas/scenario-files.json`` against its format's schema.

The index (written by the harness from the suites' declarations) names each scenario
file, relative to the repository root, and the file of ``schemas/scenarios/`` its
format is. Every adapter validates the same files against the same schemas, each with
its own validator: here the SDK's ``SchemaSet`` over ``schemas/scenarios/`` (every
schema registered by its ``$id``, so ``common.schema.json#/$defs/...`` resolves
against ``https://interop.ahp.test/schemas/scenarios/common.schema.json``; ECMA
patterns, formats checked) and its jsonschema validator, which lists every problem.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REPO_ROOT

from ahp_py.sdk import codec, schemas

INDEX = REPO_ROOT / "schemas" / "scenario-files.json"
SCENARIO_SCHEMAS = REPO_ROOT / "schemas" / "scenarios"
SHOWN = 20  # problems listed per file


@pytest.fixture(scope="module")
def scenario_schemas() -> schemas.SchemaSet:
    return schemas.SchemaSet(SCENARIO_SCHEMAS)


def _dotted(path: list[Any]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _step_key(step: str | int) -> tuple[int, str]:
    """Path steps in document order: indexes by number, keys by name."""
    return (step, "") if isinstance(step, int) else (-1, step)


def _problem(file: str, document: Any, error: Any) -> str:
    """``<file>: scenarios[3] (id 'x'): expected: <what>``: the file, the row, the field."""
    path = list(error.absolute_path)
    parts = [file]
    field = "(root)"
    if len(path) >= 2 and path[0] == "scenarios" and isinstance(path[1], int):
        row = document["scenarios"][path[1]]
        row_id = row.get("id") if isinstance(row, dict) else None
        parts.append(f"scenarios[{path[1]}]" + (f" (id {row_id!r})" if row_id else ""))
        path, field = path[2:], "(the row)"
    parts.append(_dotted(path) or field)
    message = " ".join(error.message.split())
    parts.append(message if len(message) <= 300 else message[:297] + "...")
    return ": ".join(parts)


def problems(schema_set: schemas.SchemaSet, schema: str, file: str, document: Any) -> list[str]:
    """Every problem of ``document`` against ``schema`` (a file of the set), in path order."""
    errors = schema_set.validator(schema).iter_errors(document)
    ordered = sorted(errors, key=lambda e: [_step_key(step) for step in e.absolute_path])
    return [_problem(file, document, error) for error in ordered]


def test_every_indexed_scenario_file_fits_its_schema(
    scenario_schemas: schemas.SchemaSet,
) -> None:
    assert INDEX.is_file(), f"{INDEX} is gone: the scenario files' index moved?"
    files = json.loads(INDEX.read_text(encoding="utf-8"))["files"]
    assert files, f"{INDEX} lists no scenario files"
    assert "common.schema.json" in scenario_schemas.names()
    failed: list[str] = []
    for entry in files:
        file, schema = entry["file"], entry["schema"]
        assert schema in scenario_schemas.names(), (
            f"{file}: no schema {schema} in schemas/scenarios/"
        )
        document = codec.loads((REPO_ROOT / file).read_bytes())
        found = problems(scenario_schemas, schema, file, document)
        if found:
            failed.append(f"{file} breaks {schema} ({len(found)} problems):")
            failed.extend(f"  {line}" for line in found[:SHOWN])
    assert not failed, "\n".join(failed)


def test_a_misspelt_key_in_a_row_is_refused(scenario_schemas: schemas.SchemaSet) -> None:
    row: dict[str, Any] = {"id": "typo-1", "request": {}, "response": None, "tags": []}
    good = {"version": 1, "scenarios": [{**row, "expected": {"decision": "deny"}}]}
    bad = {"version": 1, "scenarios": [{**row, "expected": {"decison": "deny"}}]}
    assert problems(scenario_schemas, "core.schema.json", "good.json", good) == []
    found = problems(scenario_schemas, "core.schema.json", "typo.json", bad)
    assert found, "a misspelt key was accepted"
    assert found[0].startswith("typo.json: scenarios[0] (id 'typo-1'): expected: "), found
    assert "decison" in found[0], found
