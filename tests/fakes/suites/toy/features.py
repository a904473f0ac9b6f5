"""The features of a toy row: a sum of two numbers, with or without a negative one."""

from __future__ import annotations

from typing import Any

SHAPES = ("negative", "sum")


def row_features(row: dict[str, Any]) -> set[str]:
    found = {"toy:sum"}
    if any(isinstance(row.get(k), int) and row[k] < 0 for k in ("a", "b")):
        found.add("toy:negative")
    return found
