"""Rows of the elicitation set (in progress)."""

from __future__ import annotations

from elicitation_wire import JSON


def rows() -> list[JSON]:
    return []
