"""The deterministic report document: sorted, no timings, ports, paths, pids or secrets."""

from __future__ import annotations

from collections import Counter
from typing import Any

from interop.suites.base import Outcome
from interop.verify import ROW_STATUSES

REPORT_VERSION = 1


def _counts(statuses: list[str]) -> dict[str, int]:
    counted = Counter(statuses)
    return {status: counted.get(status, 0) for status in ROW_STATUSES}


def build_document(outcomes: list[Outcome], meta: dict[str, Any]) -> dict[str, Any]:
    """The report as a JSON value. `meta` holds only deterministic run facts."""
    ordered = sorted(outcomes, key=lambda o: (o.suite, o.combination))
    combinations: list[dict[str, Any]] = []
    scenario_statuses: list[str] = []
    for outcome in ordered:
        rows = sorted((r.as_json() for r in outcome.rows), key=lambda r: (r["set"], r["id"]))
        scenario_statuses.extend(r["status"] for r in rows)
        scenario_statuses.extend(["inapplicable"] * outcome.inapplicable_rows)
        combinations.append(
            {
                "suite": outcome.suite,
                **outcome.combination.as_json(),
                "status": outcome.status,
                "errors": sorted(
                    (e.as_json() for e in outcome.errors),
                    key=lambda e: (e["stage"], e["class"], e["message"]),
                ),
                "results": rows,
            }
        )
    return {
        "reportVersion": REPORT_VERSION,
        **meta,
        "summary": {
            "combinations": _counts([c["status"] for c in combinations]),
            "scenarios": _counts(scenario_statuses),
        },
        "combinations": combinations,
    }


def build_timings(outcomes: list[Outcome], total: float) -> dict[str, Any]:
    suites: dict[str, float] = {}
    combinations: dict[str, float] = {}
    for outcome in outcomes:
        suites[outcome.suite] = suites.get(outcome.suite, 0.0) + outcome.seconds
        combinations[f"{outcome.suite}/{outcome.combination.key}"] = round(outcome.seconds, 3)
    return {
        "totalSeconds": round(total, 3),
        "suites": {k: round(v, 3) for k, v in sorted(suites.items())},
        "combinations": dict(sorted(combinations.items())),
    }
