"""The auth suite's verdicts (docs/AUTH.md, "What passes"): one place, one error class a rule.

A negative passes only when the server refused it with a named observation (an
allowed HTTP status, or a TLS alert it actually sent), stayed healthy, and no
receipt appeared; a bare EOF or reset is never a refusal. A positive control
passes when it is served exactly as an honest request is. A client refusal row
passes when the untrustworthy peer received nothing.
"""

from __future__ import annotations

from typing import Any

from interop.jsonvalue import JsonError, loads, strict_equal
from interop.results import RowVerdict, Status
from interop.runtime.probe import Observation
from interop.schema import canonical
from interop.suites.auth.cases import Case

# The alerts a TLS stack sends when it refuses a client certificate (or its absence).
ALERTS = frozenset(
    {
        "TLSV13_ALERT_CERTIFICATE_REQUIRED",
        "TLSV1_ALERT_UNKNOWN_CA",
        "SSLV3_ALERT_BAD_CERTIFICATE",
        "SSLV3_ALERT_HANDSHAKE_FAILURE",
        "TLSV1_ALERT_ACCESS_DENIED",
        "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
        "SSLV3_ALERT_CERTIFICATE_EXPIRED",
        "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        "TLSV1_ALERT_DECRYPT_ERROR",
    }
)
SERVER_SET = "server-probes"
CLIENT_SET = "client-refusals"


def negative_expected(case: Case) -> dict[str, Any]:
    refusal = [f"HTTP {s}" for s in case.statuses]
    if "mtls" in case.modes or case.name.startswith("plain-http"):
        refusal.append("a TLS alert")
    return {"refused": " or ".join(refusal), "healthy": True, "receiptsChanged": False}


def judge_negative(
    row_id: str, case: Case, seen: Observation, healthy: bool, changed: bool
) -> RowVerdict:
    actual = {**seen.as_json(), "healthy": healthy, "receiptsChanged": changed}
    row = RowVerdict(SERVER_SET, row_id, Status.FAILED, negative_expected(case), actual)
    if seen.kind == "http" and seen.status is not None and 200 <= seen.status < 300:
        row.error = (
            f"AuthAccepted: the server answered {seen.detail} to a forged or missing credential"
        )
    elif changed:
        row.error = (
            "ReceiptChanged: the refused request reached the application (a receipt appeared)"
        )
    elif not healthy:
        row.error = "ServerUnhealthy: the server stopped answering GET /health after this probe"
    elif seen.kind == "http" and seen.status not in case.statuses:
        row.error = (
            f"AuthStatus: {seen.detail}; a refusal here is {negative_expected(case)['refused']}"
        )
    elif (
        seen.kind == "http"
        or (seen.kind == "tls-alert" and (seen.alert in ALERTS or _plain(case)))
        # a TLS listener cannot answer plain HTTP in HTTP: closing is its refusal
        or (_plain(case) and seen.kind in ("eof", "reset", "error"))
    ):
        row.status = Status.PASSED
    else:
        row.error = (
            f"AuthUnnamed: {seen.detail}; a refusal must be an HTTP status or a TLS alert the "
            "server sent (a bare EOF or reset proves nothing)"
        )
    return row


def _plain(case: Case) -> bool:
    return case.name.startswith("plain-http")


def positive_expected(route: str) -> dict[str, Any]:
    return {
        "status": 200,
        "answer": "the scenario's response" if route == "intercept" else "a capabilities object",
        "receipts": 1 if route == "intercept" else 0,
    }


def judge_positive(
    row_id: str,
    route: str,
    seen: Observation,
    *,
    response: Any,
    receipt_delta: int,
    healthy: bool,
) -> RowVerdict:
    expected = positive_expected(route)
    actual: dict[str, Any] = {**seen.as_json(), "receiptsAdded": receipt_delta, "healthy": healthy}
    row = RowVerdict(SERVER_SET, row_id, Status.FAILED, expected, actual)
    if seen.kind != "http" or seen.status != 200:
        row.error = f"PositiveFailed: {seen.detail}; an honest request must be served (HTTP 200)"
        return row
    try:
        body = loads(seen.body)
    except JsonError as exc:
        row.error = f"PositiveFailed: the answer is not JSON: {exc}"
        return row
    if route == "intercept" and not strict_equal(body, response):
        row.error = "PositiveFailed: the answer is not the scenario's response"
    elif route == "capabilities" and (issue := _capabilities_issue(body)):
        row.error = f"PositiveFailed: {issue}"
    elif route == "intercept" and receipt_delta != 1:
        row.error = f"PositiveFailed: {receipt_delta} receipts for one served request"
    elif not healthy:
        row.error = "ServerUnhealthy: the server stopped answering GET /health"
    else:
        row.status = Status.PASSED
    return row


def judge_refusal(
    row_id: str, *, reached: dict[str, int], finished: bool, claimed: bool
) -> RowVerdict:
    """A client facing an untrustworthy peer: `reached` counts what each forbidden peer got."""
    expected = {"reached": dict.fromkeys(reached, 0), "finished": True, "claimedDelivered": False}
    actual = {"reached": reached, "finished": finished, "claimedDelivered": claimed}
    row = RowVerdict(CLIENT_SET, row_id, Status.FAILED, expected, actual)
    leaks = [f"{name} ({count})" for name, count in reached.items() if count]
    if leaks:
        row.error = f"ClientSentToUntrusted: requests reached {', '.join(leaks)}"
    elif not finished:
        row.error = "ClientTimeout: the client did not finish"
    elif claimed:
        row.error = (
            "ClientClaimedDelivery: the client reports the row delivered though nothing arrived"
        )
    else:
        row.status = Status.PASSED
    return row


def judge_client_control(
    row_id: str, *, arrived: int, finished: bool, delivered: bool
) -> RowVerdict:
    """The same client against an honest peer: it must send (else its refusals prove nothing)."""
    expected = {"arrived": 1, "finished": True, "delivered": True}
    actual = {"arrived": arrived, "finished": finished, "delivered": delivered}
    row = RowVerdict(CLIENT_SET, row_id, Status.FAILED, expected, actual)
    if arrived == 1 and finished and delivered:
        row.status = Status.PASSED
    else:
        row.error = (
            f"ClientPositiveFailed: {arrived} requests arrived at the honest peer "
            f"(finished {finished}, reported delivered {delivered}); the refusal rows "
            "need a client that sends to a peer it should trust"
        )
    return row


def _capabilities_issue(body: Any) -> str | None:
    """What is wrong with a `GET /capabilities` answer: it is the bare capabilities
    object contract v1 clients read (upstream `test_auth_matrix.py` validates it against
    `capabilities.schema.json`), not a JSON-RPC envelope."""
    if isinstance(body, dict) and "jsonrpc" in body:
        return (
            "the discovery answer is a JSON-RPC envelope where a capabilities object was "
            "expected (GET /capabilities answers the object itself, docs/CONTRACT.md)"
        )
    issue = canonical().issue("capabilities.schema.json", body)
    return f"the capabilities answer is invalid: {issue}" if issue else None
