"""The one place that compares what was expected with what happened.

Input: one scenario set, the client's report, the server's receipts and the
client's exit status. Output: a verdict per scenario row plus combination-level
errors. Any combination-level error fails every row of the combination.
The harness never applies an effect here: it only compares.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from interop.jsonvalue import strict_equal
from interop.scenarios import Scenario, ScenarioSet

SEMANTIC_KEYS = (
    "result",
    "flow",
    "injections",
    "continuationInstructions",
    "continuationRemaining",
    "rejected",
)
REJECTED = {"rejected": True}
HOST_LAYER = "host-input-schema"
PASSED, FAILED, UNSUPPORTED, INAPPLICABLE = "passed", "failed", "unsupported", "inapplicable"
ROW_STATUSES = (PASSED, FAILED, UNSUPPORTED, INAPPLICABLE)
BLIND_STATUSES = ("completed", "failed", "unsupported")
V1_STATUSES = ("passed", "failed", "unsupported", "inapplicable")


@dataclass(frozen=True)
class CombinationError:
    """A named failure of a whole combination at one stage."""

    stage: str
    error_class: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"stage": self.stage, "class": self.error_class, "message": self.message}


@dataclass
class RowVerdict:
    set: str
    id: str
    status: str
    expected: Any
    actual: Any = None
    adapter_status: str | None = None
    error: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "set": self.set,
            "id": self.id,
            "status": self.status,
            "expected": self.expected,
            "actual": self.actual,
            "adapterStatus": self.adapter_status,
        }
        if self.error is not None:
            row["error"] = self.error
        if self.diagnostics:
            row["diagnostics"] = self.diagnostics
        return row


@dataclass
class SetVerdict:
    rows: list[RowVerdict]
    errors: list[CombinationError]


def expectation(scenario: Scenario) -> Any:
    """What the report shows as `expected` for a row."""
    if scenario.expect_error:
        if scenario.host_expected is not None:
            return {"rejected": True, "or hostExpected": scenario.host_expected}
        return dict(REJECTED)
    return scenario.expected


def judge(scenario: Scenario, entry: dict[str, Any]) -> str | None:
    """None when `entry` shows the expected outcome, else the first difference."""
    if "actual" not in entry:
        return "the result has no 'actual'"
    actual = entry["actual"]
    if scenario.expect_error:
        if strict_equal(actual, REJECTED):
            return None
        if scenario.host_expected is not None and entry.get("sdkAccepted") is True:
            if entry.get("hostAccepted") is not False or entry.get("rejectionLayer") != HOST_LAYER:
                return (
                    "a host-layer rejection needs hostAccepted: false and "
                    f"rejectionLayer: {HOST_LAYER!r}"
                )
            if strict_equal(actual, scenario.host_expected):
                return None
            return "host-layer rejection: actual differs from hostExpected"
        return "expected the whole response to be rejected ({'rejected': true})"
    expected = scenario.expected or {}
    if not isinstance(actual, dict):
        return "'actual' must be an object"
    for key in sorted(expected):
        if key not in actual:
            return f"missing key {key!r}"
        if not strict_equal(actual[key], expected[key]):
            return f"key {key!r} differs"
    for key in SEMANTIC_KEYS:
        if key in actual and key not in expected:
            return f"unexpected key {key!r}"
    return None


def check_report(
    report: Any, language: str, scenario_ids: set[str], blind: bool, stage: str
) -> tuple[dict[str, dict[str, Any]], list[CombinationError]]:
    errors: list[CombinationError] = []
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        return {}, [
            CombinationError(stage, "ReportMalformed", "report must be {language, results: [...]}")
        ]
    if report.get("language") != language:
        errors.append(
            CombinationError(
                stage,
                "LanguageMismatch",
                f"report language {report.get('language')!r} is not the adapter's {language!r}",
            )
        )
    entries: dict[str, dict[str, Any]] = {}
    counts: Counter[str] = Counter()
    allowed = BLIND_STATUSES if blind else V1_STATUSES
    for index, entry in enumerate(report["results"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            errors.append(
                CombinationError(stage, "ReportMalformed", f"results[{index}] has no string id")
            )
            continue
        if entry.get("status") not in allowed:
            errors.append(
                CombinationError(
                    stage,
                    "ReportMalformed",
                    f"results[{index}] ({entry['id']}): status {entry.get('status')!r} "
                    f"is not one of {', '.join(allowed)}",
                )
            )
        counts[entry["id"]] += 1
        entries[entry["id"]] = entry
    unknown = sorted(set(counts) - scenario_ids)
    duplicated = sorted(i for i, n in counts.items() if n > 1)
    missing = sorted(scenario_ids - set(counts))
    if unknown:
        errors.append(
            CombinationError(stage, "ResultUnknownId", f"unknown ids: {', '.join(unknown[:5])}")
        )
    if duplicated:
        errors.append(
            CombinationError(
                stage, "ResultDuplicateId", f"ids reported twice: {', '.join(duplicated[:5])}"
            )
        )
    if missing:
        errors.append(
            CombinationError(
                stage,
                "ResultMissing",
                f"{len(missing)} ids not reported, e.g. {', '.join(missing[:5])}",
            )
        )
    return entries, errors


def check_receipts(
    receipts: list[Any], scenarios: dict[str, Scenario], sent: set[str], stage: str
) -> list[CombinationError]:
    errors: list[CombinationError] = []
    counts: Counter[str] = Counter()
    for index, receipt in enumerate(receipts):
        rid = receipt.get("id") if isinstance(receipt, dict) else None
        if not isinstance(rid, str) or rid not in scenarios:
            errors.append(
                CombinationError(
                    stage, "ReceiptUnknown", f"receipt {index} has an unknown id {rid!r}"
                )
            )
            continue
        counts[rid] += 1
        if not strict_equal(receipt, scenarios[rid].request):
            errors.append(
                CombinationError(
                    stage, "ReceiptMismatch", f"{rid}: the server received a different request"
                )
            )
    duplicated = sorted(i for i, n in counts.items() if n > 1)
    if duplicated:
        errors.append(
            CombinationError(
                stage, "ReceiptDuplicate", f"received twice: {', '.join(duplicated[:5])}"
            )
        )
    missing = sorted(sent - set(counts))
    if missing:
        errors.append(
            CombinationError(
                stage,
                "ReceiptMissing",
                f"{len(missing)} requests never received, e.g. {', '.join(missing[:5])}",
            )
        )
    return errors


def verify_set(
    scenario_set: ScenarioSet,
    *,
    report: Any,
    receipts: list[Any] | None,
    client_exit: int | None,
    language: str,
    blind: bool,
    stage: str,
    prior_errors: list[CombinationError] | None = None,
) -> SetVerdict:
    """Judge every row of one scenario set for one combination."""
    errors = list(prior_errors or [])
    scenarios = scenario_set.by_id()
    entries: dict[str, dict[str, Any]] = {}
    if report is not None:
        entries, report_errors = check_report(report, language, set(scenarios), blind, stage)
        errors.extend(report_errors)
    elif not any(e.error_class.startswith("Report") for e in errors):
        errors.append(CombinationError(stage, "ReportMissing", "the client wrote no report"))
    # A client following contract v1 exits nonzero when one of its rows failed;
    # the rows themselves say which, so only blind clients must exit 0.
    if client_exit not in (0, None) and blind:
        errors.append(
            CombinationError(stage, "ClientExit", f"client exited with status {client_exit}")
        )
    if report is not None:
        sent = {
            i for i, e in entries.items() if i in scenarios and e.get("status") != "unsupported"
        }
        if receipts is None:
            errors.append(
                CombinationError(stage, "ReceiptsUnavailable", "no receipts were captured")
            )
        else:
            errors.extend(check_receipts(receipts, scenarios, sent, stage))
    rows: list[RowVerdict] = []
    for scenario in scenario_set.scenarios:
        entry = entries.get(scenario.id)
        row = RowVerdict(
            set=scenario_set.name,
            id=scenario.id,
            status=FAILED,
            expected=expectation(scenario),
            actual=entry.get("actual") if entry else None,
            adapter_status=entry.get("status") if entry else None,
        )
        if entry is not None:
            for key in ("sdkAccepted", "hostAccepted", "rejectionLayer"):
                if key in entry:
                    row.diagnostics[key] = entry[key]
            if isinstance(entry.get("error"), str):
                row.error = entry["error"]
        if errors:
            row.error = "combination failed: " + ", ".join(sorted({e.error_class for e in errors}))
        elif entry is None:
            row.error = "no result"
        elif row.adapter_status in (UNSUPPORTED, INAPPLICABLE):
            row.status = row.adapter_status
        elif row.adapter_status == FAILED:
            row.error = row.error or "the client reported a failure"
        else:
            difference = judge(scenario, entry)
            if difference is None:
                row.status = PASSED
                row.error = None
            else:
                row.error = difference
        rows.append(row)
    return SetVerdict(rows=rows, errors=errors)
