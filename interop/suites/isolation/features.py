"""The features of an isolation case: the lifecycle row it sends and its origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interop.suites.features import op_features, wire_features
from interop.suites.isolation.scenarios import CASES, load_sets

SHAPES = ("cookie", "plain", "redirect", "tls")


def row_features(row: dict[str, Any]) -> set[str]:
    found = wire_features(row) | op_features(row)
    case = next((c for c in CASES if c.id == row.get("id")), None)
    if case is not None:
        found.add(f"isolation:{case.origin}")
        if case.cookie:
            found.add("isolation:cookie")
    return found


def derived_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The suite makes its rows in code from one lifecycle row of `path`: its cases by id."""
    return {case.id: case.raw for found in load_sets([path]) for case in found.cases}
