"""Checks every suite shares: a client's report, and the receipts a server kept.

A suite judges what its rows mean; these only check that the report and the
receipts are whole and honest (every id exactly once, every request received
exactly once and unchanged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import dumps_compact, strict_equal
from interop.memo import IdentityMemo
from interop.results import CombinationError, RowVerdict, Status
from interop.runtime.process import describe_exit

BLIND_STATUSES = ("completed", "failed", "unsupported")
V1_STATUSES = ("passed", "failed", "unsupported", "inapplicable")


def check_report(
    report: Any, language: str, scenario_ids: set[str], blind: bool, stage: str
) -> tuple[dict[str, dict[str, Any]], list[CombinationError]]:
    """The report's entries by id, and what is wrong with the report as a whole."""
    problem = contract_problem("client-report.schema.json", report)
    if problem is not None and (
        not isinstance(report, dict) or not isinstance(report.get("results"), list)
    ):
        return {}, [CombinationError(stage, "ReportMalformed", f"report {problem}")]
    errors: list[CombinationError] = []
    if problem is not None:
        errors.append(CombinationError(stage, "ReportMalformed", f"report {problem}"))
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


# Compact texts of scenario requests (fuzzing makes new requests: forgotten at the limit).
REQUEST_TEXT_LIMIT = 20_000
_REQUEST_TEXTS: IdentityMemo[str] = IdentityMemo(REQUEST_TEXT_LIMIT)


def _same_request(receipt: Any, request: Any) -> bool:
    """`strict_equal`, with the request's compact text made once per run: every
    combination compares its receipts with the same scenario requests."""
    if receipt != request:  # looser than strict typing: unequal is unequal
        return False
    text = _REQUEST_TEXTS.made((request,), lambda: dumps_compact(request))
    try:
        if dumps_compact(receipt) == text:
            return True
    except (TypeError, ValueError):
        pass
    return strict_equal(receipt, request)


def check_receipts(
    receipts: list[Any], requests: Mapping[str, Any], sent: set[str], stage: str
) -> list[CombinationError]:
    """Every receipt is one of `requests` (by id), unchanged, once; every `sent` id arrived."""
    errors: list[CombinationError] = []
    counts: Counter[str] = Counter()
    for index, receipt in enumerate(receipts):
        rid = receipt.get("id") if isinstance(receipt, dict) else None
        if not isinstance(rid, str) or rid not in requests:
            errors.append(
                CombinationError(
                    stage, "ReceiptUnknown", f"receipt {index} has an unknown id {rid!r}"
                )
            )
            continue
        counts[rid] += 1
        if not _same_request(receipt, requests[rid]):
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


def check_step_report(
    report: Any,
    *,
    schema: str,
    language: str,
    ids: set[str],
    client_exit: int | None,
    stage: str,
    prior: list[CombinationError],
) -> tuple[dict[str, dict[str, Any]], list[CombinationError]]:
    """A step-driven client's report (every suite past core): its results by id, and
    what is wrong with it as a whole, after `prior` (the run's own errors): schema,
    language, every id exactly once, the client's exit status."""
    errors = list(prior)
    results: dict[str, dict[str, Any]] = {}
    if report is not None:
        problem = contract_problem(schema, report)
        if problem is not None:
            errors.append(CombinationError(stage, "ReportMalformed", f"report {problem}"))
        elif report.get("language") != language:
            errors.append(
                CombinationError(
                    stage,
                    "LanguageMismatch",
                    f"report language {report.get('language')!r} is not the adapter's {language!r}",
                )
            )
        else:
            counts = Counter(r["id"] for r in report["results"])
            results = {r["id"]: r for r in report["results"]}
            for kind, found in (
                ("ResultUnknownId", sorted(set(counts) - ids)),
                ("ResultMissing", sorted(ids - set(counts))),
                ("ResultDuplicateId", sorted(i for i, n in counts.items() if n > 1)),
            ):
                if found:
                    errors.append(CombinationError(stage, kind, ", ".join(found[:5])))
    elif not errors:
        errors.append(CombinationError(stage, "ReportMissing", "the client wrote no report"))
    if client_exit not in (0, None):
        errors.append(
            CombinationError(stage, "ClientExit", f"the client {describe_exit(client_exit)}")
        )
    return results, errors


def prejudge(row: RowVerdict, entry: dict[str, Any] | None, errors: list[CombinationError]) -> bool:
    """Fill what a row's report entry says before its rules are checked: the actual, a
    combination failure, no result, `unsupported`, a status other than completed or
    passed. True when the row is left for its rules (status still failed)."""
    if entry is not None:
        row.actual = entry.get("actual")
        row.adapter_status = entry.get("status")
    if errors:
        row.error = "combination failed: " + ", ".join(sorted({e.error_class for e in errors}))
        return False
    if entry is None:
        row.error = "no result"
        return False
    status = entry.get("status", "passed")
    if status == "unsupported":
        row.status = Status.UNSUPPORTED
        row.error = entry.get("error") or "unsupported"
        return False
    if status not in ("completed", "passed"):
        row.error = entry.get("error") or f"the client reported {status}"
        return False
    return True


def conclude(row: RowVerdict, problems: list[tuple[str, str]]) -> None:
    """A judged row: passed with no problem, else failed naming the first (and how many more)."""
    if problems:
        kind, message = problems[0]
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        row.error = f"{kind}: {message}{more}"
        row.diagnostics["classes"] = sorted({k for k, _ in problems})
    else:
        row.status = Status.PASSED
