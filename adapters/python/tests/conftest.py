"""Shared fixtures: paths, canonical schemas, the expectation check (tests only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ADAPTER_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = ADAPTER_DIR.parents[1]
UPSTREAM_SCENARIOS = REPO_ROOT / "scenarios" / "upstream" / "scenarios.json"
CORE_SCENARIOS = REPO_ROOT / "scenarios" / "core.json"
UPSTREAM_FIXTURES = REPO_ROOT / "scenarios" / "upstream" / "fixtures" / "draft"
SEMANTIC_KEYS = (
    "result",
    "flow",
    "injections",
    "continuationInstructions",
    "continuationRemaining",
    "rejected",
)

sys.path.insert(0, str(ADAPTER_DIR))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ahp_py import schemas  # noqa: E402
from ahp_py.codec import json_equal  # noqa: E402


def load_scenarios(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return list(json.loads(path.read_text(encoding="utf-8"))["scenarios"])


def mismatch(scenario: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """None when ``actual`` meets the scenario's expectation, else what differs."""
    if scenario.get("expectError"):
        return (
            None
            if actual == {"rejected": True}
            else f"expected rejection, got {actual}"
        )
    expected = scenario["expected"]
    for key, value in expected.items():
        if key not in actual or not json_equal(actual[key], value):
            return f"{key}: expected {value!r}, got {actual.get(key, '<absent>')!r}"
    for key in SEMANTIC_KEYS:
        if key in actual and key not in expected:
            return f"{key} must be absent, got {actual[key]!r}"
    return None


@pytest.fixture(scope="session")
def schema_set() -> schemas.SchemaSet:
    try:
        return schemas.load()
    except schemas.SchemaError as exc:
        pytest.skip(f"canonical schemas unavailable: {exc}")
