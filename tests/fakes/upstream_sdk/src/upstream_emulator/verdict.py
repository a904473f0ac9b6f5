"""The client's own status for a row, as upstream clients report it.

This is the only place the scenario's `expected` / `expectError` is read, and
only after `actual` was computed: a rejection passes an `expectError` row;
otherwise every expected key must deep-equal the same key of `actual`.
"""

from __future__ import annotations

from typing import Any

from upstream_emulator.jsonequal import same

MISMATCH = "Expected outcome mismatch"


def own_status(scenario: dict[str, Any], actual: Any) -> tuple[str, str | None]:
    if scenario.get("expectError") is True:
        rejected = same(actual, {"rejected": True})
        return ("passed", None) if rejected else ("failed", MISMATCH)
    expected = scenario.get("expected")
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return "failed", MISMATCH
    for key, value in expected.items():
        if key not in actual or not same(value, actual[key]):
            return "failed", MISMATCH
    return "passed", None
