"""The deterministic report document: sorted, compact, no timings, ports, paths, pids or secrets.

Shape (`reportVersion` 3):

- `suites`: the suites of the run, in the order asked;
- `sets`: each suite's scenario sets, each once (`suite`, `name`, file, sha256),
  with every row's id and expectation, in file order; a set is named by its
  suite and its name (two suites may run the same file);
- `combinations`: per combination its status, reason, errors, row counts, and
  per set a `digests` list aligned with that set's rows (a short fingerprint of
  what a passed row derived, `null` for a row that did not pass) plus the rows
  that did not pass, whole (`actual`, `error`, the adapter's own status);
- `summary`: counts of combinations and of the rows listed, and of the rows
  not judged (inapplicable or not run) apart, in all and per suite;
- `incomplete`: true when the run was interrupted.

A passed row's `actual` is kept whole only with `full=True` (`--full-report`);
the digest still shows a changed actual in a later diff.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from interop.grid import Combination
from interop.results import (  # rows_of: read here, kept below the report package
    STATUSES,
    CombinationError,
    Outcome,
    RowVerdict,
    Status,
    rows_of,
)

REPORT_VERSION = 3


def _counts(statuses: list[str]) -> dict[str, int]:
    counted = Counter(statuses)
    return {str(status): counted.get(str(status), 0) for status in STATUSES}


@dataclass
class _Listed:
    """The rows a document lists, as (suite, status): those of its combinations' results
    (`listed`), and those of its combinations never judged (`skipped`: inapplicable or
    not run, their suite's rows counted apart)."""

    listed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def build_document(
    outcomes: list[Outcome],
    meta: dict[str, Any],
    sets: list[dict[str, Any]],
    *,
    incomplete: bool = False,
    full: bool = False,
) -> dict[str, Any]:
    """The report as a JSON value. `meta` holds only deterministic run facts; `sets`
    describes each scenario set, its `rows` being (id, expectation) in file order."""
    order = {(s["suite"], s["name"]): [row_id for row_id, _ in s["rows"]] for s in sets}
    counted = _Listed()
    combinations = [
        _combination(outcome, order, full, counted)
        for outcome in sorted(outcomes, key=lambda o: (o.suite, o.combination))
    ]
    return {
        "reportVersion": REPORT_VERSION,
        **meta,
        "incomplete": incomplete,
        "summary": _summary(meta, combinations, counted),
        "sets": [
            {**s, "rows": [{"id": row_id, "expected": expected} for row_id, expected in s["rows"]]}
            for s in sets
        ],
        "combinations": combinations,
    }


def _combination(
    outcome: Outcome, order: dict[tuple[str, str], list[str]], full: bool, counted: _Listed
) -> dict[str, Any]:
    """One combination's entry: its status, errors (sorted), row counts, results per set,
    the reason it did not run and the shapes it saw; its rows added to `counted`."""
    results = _results(outcome, order, full, counted)
    status = outcome.status
    if status in (Status.INAPPLICABLE, Status.NOT_RUN):
        counted.skipped.extend([(outcome.suite, str(status))] * outcome.skipped_rows)
    combination: dict[str, Any] = {
        "suite": outcome.suite,
        **outcome.combination.as_json(),
        "status": str(status),
        "errors": sorted(
            (e.as_json() for e in outcome.errors),
            key=lambda e: (e["stage"], e["class"], e["message"]),
        ),
        "counts": _counts([str(r.status) for r in outcome.rows]),
        "results": results,
    }
    reason = outcome.inapplicable or outcome.not_run
    if reason is not None:
        combination["reason"] = reason
    if outcome.shapes:
        combination["shapes"] = dict(sorted(outcome.shapes.items()))
    return combination


def _results(
    outcome: Outcome, order: dict[tuple[str, str], list[str]], full: bool, counted: _Listed
) -> dict[str, Any]:
    """Per set (sorted by name), in the set's row order (a set the report does not
    describe: sorted ids): `digests`, one per row (a passed row's, `null` for a row that
    did not pass or with `full`), and the rows listed whole (those that did not pass;
    every row with `full`)."""
    by_set: dict[str, dict[str, RowVerdict]] = {}
    for row in outcome.rows:
        by_set.setdefault(row.set, {})[row.id] = row
    results: dict[str, Any] = {}
    for set_name, rows in sorted(by_set.items()):
        ids = order.get((outcome.suite, set_name), sorted(rows))
        counted.listed.extend((outcome.suite, str(rows[i].status)) for i in ids if i in rows)
        entry: dict[str, Any] = {
            "digests": [
                rows[i].as_json()["digest"]
                if i in rows and rows[i].status == Status.PASSED and not full
                else None
                for i in ids
            ],
            "rows": [
                rows[i].as_json(full=full)
                for i in ids
                if i in rows and (full or rows[i].status != Status.PASSED)
            ],
        }
        results[set_name] = entry
    return results


def _summary(
    meta: dict[str, Any], combinations: list[dict[str, Any]], counted: _Listed
) -> dict[str, Any]:
    """Counts of the combinations, of the rows listed and of the rows not judged, in all
    and per suite (the run's suites in order, then any other a combination names)."""
    listed, skipped = counted.listed, counted.skipped
    names = list(dict.fromkeys([*meta.get("suites", []), *(c["suite"] for c in combinations)]))
    per_suite = {
        name: {
            "combinations": _counts([c["status"] for c in combinations if c["suite"] == name]),
            "rows": _counts([status for suite, status in listed if suite == name]),
            "rowsNotJudged": _counts([status for suite, status in skipped if suite == name]),
        }
        for name in names
    }
    return {
        "combinations": _counts([c["status"] for c in combinations]),
        "rows": _counts([status for _, status in listed]),
        "rowsNotJudged": _counts([status for _, status in skipped]),
        "suites": per_suite,
    }


def read_outcomes(document: dict[str, Any]) -> list[Outcome]:
    """The outcomes a report was written from (passed rows carry their digest only)."""
    outcomes: list[Outcome] = []
    for entry in document["combinations"]:
        combination = Combination(
            entry["client"], entry["server"], entry["transport"], entry["auth"]
        )
        outcome = Outcome(entry["suite"], combination)
        outcome.errors = [CombinationError.from_json(e) for e in entry["errors"]]
        outcome.shapes = dict(entry.get("shapes", {}))
        if entry["status"] == Status.INAPPLICABLE:
            outcome.inapplicable = entry.get("reason", "")
        elif entry["status"] == Status.NOT_RUN:
            outcome.not_run = entry.get("reason", "")
        for row in rows_of(document, entry):
            verdict = RowVerdict.from_json(row["set"], row, row["expected"])
            if "digest" in row:
                verdict.diagnostics["digest"] = row["digest"]
            outcome.rows.append(verdict)
        outcomes.append(outcome)
    return outcomes


def build_timings(
    outcomes: list[Outcome],
    total: float,
    started: int = 0,
    timeline: list[dict[str, Any]] | None = None,
    cpu: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Seconds per suite and per combination, the run's total, the number of
    processes the harness started (`processStarts`; the adapters' own children not),
    the schedule (`jobs`: each job's suite, combinations, planned cost, CPU share,
    start and end in seconds since the run began, in the order they started), and
    CPU seconds (`cpuSeconds`: the harness's, and per adapter and role those of the
    processes that exited by themselves, with the children they waited for)."""
    suites: dict[str, float] = {}
    combinations: dict[str, float] = {}
    for outcome in outcomes:
        suites[outcome.suite] = suites.get(outcome.suite, 0.0) + outcome.seconds
        combinations[f"{outcome.suite}/{outcome.combination.key}"] = round(outcome.seconds, 3)
    return {
        "totalSeconds": round(total, 3),
        "processStarts": started,
        "suites": {k: round(v, 3) for k, v in sorted(suites.items())},
        "combinations": dict(sorted(combinations.items())),
        "jobs": list(timeline or []),
        "cpuSeconds": cpu or {"harness": 0.0, "adapters": {}},
    }
