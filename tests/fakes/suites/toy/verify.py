"""The toy suite's one rule: the adapter's sum is the row's expected sum."""

from __future__ import annotations

from typing import Any

from interop.suites.toy.scenarios import ToySet

from interop.results import CombinationError, RowVerdict, Status


def verify_set(
    scenario_set: ToySet, answers: Any
) -> tuple[list[RowVerdict], list[CombinationError]]:
    """A verdict per row: passed when the answer for its id is its expected sum, failed
    when it is another number or missing. Answers that are not an object of ids are a
    report problem of the whole set."""
    if not isinstance(answers, dict):
        message = f"the report is not an object of row ids: {type(answers).__name__}"
        return [], [CombinationError("report", "ReportMalformed", message)]
    verdicts: list[RowVerdict] = []
    for row in scenario_set.rows:
        actual = answers.get(row.id)
        if actual == row.expected and type(actual) is int:
            verdicts.append(
                RowVerdict(scenario_set.name, row.id, Status.PASSED, row.expected, actual)
            )
        else:
            error = "no answer" if row.id not in answers else f"{actual!r} is not {row.expected}"
            verdicts.append(
                RowVerdict(
                    scenario_set.name, row.id, Status.FAILED, row.expected, actual, error=error
                )
            )
    return verdicts, []
