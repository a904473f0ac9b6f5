"""Shared fixtures: paths, canonical schemas, and the contract schemas that every
file and answer the adapter writes is validated against (tests only)."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ADAPTER_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = ADAPTER_DIR.parents[1]
UPSTREAM_SCENARIOS = REPO_ROOT / "scenarios" / "upstream" / "scenarios.json"
CORE_SCENARIOS = REPO_ROOT / "scenarios" / "core.json"
UPSTREAM_FIXTURES = REPO_ROOT / "scenarios" / "upstream" / "fixtures" / "draft"
CONTRACT_SCHEMAS = REPO_ROOT / "schemas" / "contract"
CONTRACT_BASE = "https://interop.ahp.test/schemas/contract/"

sys.path.insert(0, str(ADAPTER_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ahp_py.sdk import schemas  # noqa: E402


def load_scenarios(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return list(json.loads(path.read_text(encoding="utf-8"))["scenarios"])


@cache
def _contract_validator(name: str) -> Any:
    """A Draft 2020-12 validator of ``file`` or ``file#/$defs/x`` in schemas/contract/,
    with a ``referencing`` registry over that folder (formats checked)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = []
    for path in sorted(CONTRACT_SCHEMAS.glob("*.schema.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        resources.append((document["$id"], Resource.from_contents(document)))
    registry: Registry[Any] = Registry().with_resources(resources)
    file_name, _, pointer = name.partition("#")
    schema = {"$ref": CONTRACT_BASE + file_name + (f"#{pointer}" if pointer else "")}
    return Draft202012Validator(
        schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def assert_contract(name: str, instance: Any) -> None:
    """``instance`` satisfies ``schemas/contract/<name>`` (e.g. ``readiness.schema.json``
    or ``control.schema.json#/$defs/health``)."""
    errors = sorted(_contract_validator(name).iter_errors(instance), key=str)
    assert not errors, f"{name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors
    )


CONTROL_ANSWERS = {
    "/health": "health",
    "/receipts": "receipts",
    "/release": "released",
    "/reset": "reset",
    "/shutdown": "shutdown",
}


def assert_control_answer(path: str, answer: Any) -> None:
    assert_contract(f"control.schema.json#/$defs/{CONTROL_ANSWERS[path]}", answer)


def assert_receipt_log(path: Path) -> list[dict[str, Any]]:
    """Every line of a receipt log, each checked against receipt-line.schema.json."""
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for entry in entries:
        assert_contract("receipt-line.schema.json", entry)
    return entries


@pytest.fixture(scope="session")
def schema_set() -> schemas.SchemaSet:
    try:
        return schemas.load()
    except schemas.SchemaError as exc:
        pytest.skip(f"canonical schemas unavailable: {exc}")
