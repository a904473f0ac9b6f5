"""The isolation suite's verdict on one case: the capture's record, then the event part.

Input: the case, what its upload origin recorded (every request, every failed
TLS handshake), what the redirect target recorded, the client's report and
the event server's receipt entries of that client run. The upload rules are
applied to each recorded request (`origins.judge`); here they are joined with
the per-case rules (exactly one request, the step's own bytes, nothing at the
redirect target, the client reporting the status the origin answered), and
the event part is judged by the lifecycle verifier with the upload step
removed (the upload went to another origin, so the event server must have
recorded none). Each rule names its error class (docs/errors.md); a row
passes only when none fails. A missing upload never passes.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from interop.jsonvalue import shown
from interop.results import CombinationError, RowVerdict, Status
from interop.suites.isolation.origins import Captured
from interop.suites.isolation.scenarios import SET, IsolationCase
from interop.suites.lifecycle.verify import verify_set

Problem = tuple[str, str]  # (error class, message)
# The order a row's headline is chosen in: what the suite is for first.
PRIORITY = (
    "CaptureLeak",
    "CaptureIdentity",
    "RedirectFollowed",
    "CaptureMissing",
    "CaptureRepeated",
    "CaptureTarget",
    "CaptureFraming",
    "CaptureIntegrity",
    "UploadStatusMismatch",
    "CookieNotSet",
)
CERTIFICATE_REFUSED = "CERTIFICATE_VERIFY_FAILED"  # the capture's side: a certificate came


@dataclass
class OriginRecord:
    """What one case's origins saw."""

    captured: list[Captured] = field(default_factory=list)
    handshakes: list[str] = field(default_factory=list)  # failure reasons, in order
    followed: list[Captured] = field(default_factory=list)  # at the redirect target


def capture_problems(item: IsolationCase, record: OriginRecord) -> list[Problem]:
    """Every broken upload rule of one case, most telling first."""
    case = item.case
    problems: list[Problem] = []
    for reason in record.handshakes:
        if reason == CERTIFICATE_REFUSED:
            problems.append(
                (
                    "CaptureLeak",
                    "a TLS client certificate was presented to the capture (one it could not "
                    "verify: the handshake failed)",
                )
            )
    if not record.captured:
        failed = sorted(set(record.handshakes))
        detail = f"; {len(record.handshakes)} TLS handshake(s) failed ({', '.join(failed)})"
        problems.append(
            (
                "CaptureMissing",
                f"no upload reached the {case.origin} capture origin"
                f"{detail if failed else ''}: a missing upload is never isolation",
            )
        )
    elif len(record.captured) > 1:
        problems.append(
            (
                "CaptureRepeated",
                f"{len(record.captured)} requests reached the capture for one upload step",
            )
        )
    body = case.body
    want = (len(body), hashlib.sha256(body).hexdigest())
    for captured in record.captured:
        problems += captured.problems
        if captured.complete and (captured.size, captured.sha256) != want:
            problems.append(
                (
                    "CaptureIntegrity",
                    f"the capture received {captured.size} bytes (sha256 "
                    f"{captured.sha256[:12]}...), the step's are {want[0]} ({want[1][:12]}...)",
                )
            )
    if case.cookie and any(c.cookies_before == 0 for c in record.captured):
        problems.append(
            (
                "CookieNotSet",
                "the upload reached the capture before the event server had answered with its "
                "cookie: the case proves nothing",
            )
        )
    if record.followed:
        problems.append(
            (
                "RedirectFollowed",
                f"the redirect target received {len(record.followed)} request(s): "
                f"{', '.join(f'{c.method} {c.target}' for c in record.followed)}",
            )
        )
    return problems


def _order(problems: list[Problem]) -> list[Problem]:
    rank = {name: n for n, name in enumerate(PRIORITY)}
    return sorted(problems, key=lambda p: rank.get(p[0], len(PRIORITY)))


def _result(report: Any, row_id: str) -> dict[str, Any] | None:
    results = report.get("results") if isinstance(report, dict) else None
    if not isinstance(results, list):
        return None
    return next((r for r in results if isinstance(r, dict) and r.get("id") == row_id), None)


def _without_upload_statuses(report: Any) -> Any:
    """The report the lifecycle verifier judges: the upload statuses cleared (they are
    judged here, against what the origin answered)."""
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        return report
    copied = copy.deepcopy(report)
    for result in copied["results"]:
        actual = result.get("actual") if isinstance(result, dict) else None
        if isinstance(actual, dict) and "uploadStatuses" in actual:
            actual["uploadStatuses"] = []
    return copied


def verify_case(
    item: IsolationCase,
    record: OriginRecord,
    *,
    report: Any,
    entries: Any,
    client_exit: int | None,
    language: str,
    blind: bool,
    stage: str,
    prior_errors: list[CombinationError],
) -> tuple[RowVerdict, list[CombinationError]]:
    """One case's row and the combination errors of its client run."""
    judged, errors = verify_set(
        SET,
        [item.event_part()],
        report=_without_upload_statuses(report),
        entries=entries,
        client_exit=client_exit,
        language=language,
        blind=blind,
        stage=stage,
        prior_errors=prior_errors,
    )
    event = judged[0]
    result = _result(report, item.id)
    actual = result.get("actual") if result is not None else None
    row = RowVerdict(SET, item.id, Status.FAILED, item.expected, actual, event.adapter_status)
    problems = capture_problems(item, record)
    wanted = item.expected["uploadStatuses"]
    got = actual.get("uploadStatuses") if isinstance(actual, dict) else None
    if event.status != Status.UNSUPPORTED and got is not None and got != wanted:
        answered = [c.status for c in record.captured]
        problems.append(
            (
                "UploadStatusMismatch",
                f"the client reports uploadStatuses {shown(got, 60)}; the origin answered "
                f"{answered}, the case expects {wanted}",
            )
        )
    problems = _order(problems)
    event_failed = event.status == Status.FAILED
    classes = {k for k, _ in problems} | set(event.diagnostics.get("classes", []))
    if event.status == Status.UNSUPPORTED and not errors:
        row.status = Status.UNSUPPORTED
        row.error = event.error
    elif problems:
        kind, message = problems[0]
        more = len(problems) - 1 + (1 if event_failed else 0)
        row.error = f"{kind}: {message}" + (f" (+{more} more)" if more else "")
    elif errors:
        row.error = "combination failed: " + ", ".join(sorted({e.error_class for e in errors}))
    elif event_failed:
        row.error = event.error
    else:
        row.status = Status.PASSED
    if classes:
        row.diagnostics["classes"] = sorted(classes)
    if event_failed and (problems or errors):
        row.diagnostics["eventPart"] = event.error
    row.diagnostics["origin"] = item.case.origin
    row.diagnostics["independentUploads"] = len(record.captured)
    row.diagnostics["credentialIsolationVerified"] = row.status == Status.PASSED
    row.diagnostics["captures"] = [c.summary() for c in record.captured]
    if record.handshakes:
        row.diagnostics["handshakeFailures"] = list(record.handshakes)
    if item.case.origin == "redirect":
        row.diagnostics["redirectTargetRequests"] = len(record.followed)
    return row, errors
