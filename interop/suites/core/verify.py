"""The core suite's verdict: the one place that compares expected with actual.

Input: one scenario set, the client's report, the server's receipts and the
client's exit status. Output: a verdict per scenario row plus combination-level
errors. Any combination-level error fails every row of the combination.
The harness never applies an effect here: it only compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from interop.jsonvalue import first_difference, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.runtime.process import describe_exit
from interop.suites.common import check_receipts, check_report
from interop.suites.core.scenarios import REJECTED, Scenario, ScenarioSet, expectation

SEMANTIC_KEYS = (
    "result",
    "flow",
    "injections",
    "continuationInstructions",
    "continuationRemaining",
    "rejected",
)
HOST_LAYER = "host-input-schema"
# What contract v1 asks a client to report (upstream `interop/CONTRACT.md`, `matrix.py`):
# these keys, `executed` only where upstream reads it. Our other keys (`effective`,
# `permission`) and readings (`executed` at other boundaries) are ours: a v1 client
# is not judged on them, and its row names what was left unasserted.
V1_KEYS = (
    "decision",
    "executed",
    "input",
    "messages",
    "result",
    "flow",
    "injections",
    "continuationInstructions",
    "continuationRemaining",
)
V1_EXECUTED = ("tool.before", "turn.finish.before")


CONTINUATION_KEYS = ("continuationInstructions", "continuationRemaining")
EXT_TAG = "ext:"  # a row of our contract only: `ext:NAME` (docs/scenarios.md)


def asserted(scenario: Scenario, blind: bool) -> tuple[dict[str, Any], list[str]]:
    """The expected keys a client is judged on, and those left unasserted (a v1 client
    is judged on the keys contract v1 defines, ours on every key). Contract v1 reports
    the continuation keys with a flow outcome only; ours always where a continue is
    advertised."""
    expected = scenario.expected or {}
    if blind:
        return expected, []
    event = scenario.request.get("params", {}).get("event", {}).get("type")
    kept = {
        k: v
        for k, v in expected.items()
        if k in V1_KEYS
        and (k != "executed" or event in V1_EXECUTED)
        and (k not in CONTINUATION_KEYS or "flow" in expected)
    }
    return kept, sorted(set(expected) - set(kept))


def extension(scenario: Scenario) -> str | None:
    """The reading of our contract a row relies on (its `ext:NAME` tag), else None."""
    found = [t[len(EXT_TAG) :] for t in scenario.tags if t.startswith(EXT_TAG)]
    return found[0] if found else None


@dataclass
class SetVerdict:
    rows: list[RowVerdict]
    errors: list[CombinationError]


def judge(scenario: Scenario, entry: dict[str, Any], blind: bool = True) -> str | None:
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
            found = first_difference(scenario.host_expected, actual)
            if found is None:
                return None
            return "host-layer rejection: " + _describe(*found)
        return f"expected the whole response to be rejected, got {shown(actual)}"
    expected, _ = asserted(scenario, blind)
    if not isinstance(actual, dict):
        return f"'actual' must be an object, got {shown(actual)}"
    for key in sorted(expected):
        if key not in actual:
            return f"$.{key}: missing (expected {shown(expected[key])})"
        found = first_difference(expected[key], actual[key], f"$.{key}")
        if found is not None:
            return _describe(*found)
    for key in SEMANTIC_KEYS:
        if key in actual and key not in (scenario.expected or {}):
            return f"$.{key}: not expected here, got {shown(actual[key])}"
    return None


def _refusal(answer: dict[str, Any]) -> tuple[str, str]:
    """The class and message of an HTTP refusal the capture saw, by the credential the
    client presented (the harness judges it against the run's own trust)."""
    status = answer.get("httpStatus")
    credential = answer.get("credential")
    if credential == "invalid":
        return "ClientCredential", (
            f"the server answered HTTP {status} to a request that did not carry the run's "
            "credential for this mode (the capture shows it)"
        )
    if credential == "valid":
        return "ServerRefusedCredential", (
            f"the server answered HTTP {status} to a request carrying the run's valid "
            "credential (the capture shows it)"
        )
    return "ServerRefused", f"the server answered HTTP {status} to the scripted request"


def _describe(path: str, expected: Any, actual: Any) -> str:
    """`$.input.range.end: expected 60, got 61` (each side shortened to one line)."""
    return f"{path}: expected {shown(expected)}, got {shown(actual)}"


def _delivered(entry: dict[str, Any]) -> bool:
    """Whether a client's result says the row's request was sent and its answer applied."""
    status = entry.get("status")
    if status in ("completed", "passed"):
        return True
    return status == Status.FAILED and entry.get("actual") is not None


@dataclass
class _Run:
    """What one client run leaves to judge its rows by: the report's entries by row id,
    the combination's errors (any one fails every row), the rows the client reported
    failed that the server never receipted, and a relayed server's answers by the id of
    the request before each."""

    entries: dict[str, dict[str, Any]]
    errors: list[CombinationError]
    unreceipted: set[str]
    answered: dict[Any, list[Any]]


def _answers(replies: list[tuple[Any, Any]] | None) -> dict[Any, list[Any]]:
    """A relayed server's answers grouped by the id of the request before each."""
    answered: dict[Any, list[Any]] = {}
    for request_id, value in replies or []:
        answered.setdefault(request_id, []).append(value)
    return answered


def _report_entries(
    report: Any, ids: set[str], *, language: str, blind: bool, stage: str, prior: bool
) -> tuple[dict[str, dict[str, Any]], list[CombinationError]]:
    """The report's entries by id and what is wrong with it; no report is ReportMissing
    unless an error is already known (`prior`: a client that never ran, its server did
    not start, wrote nothing)."""
    if report is not None:
        return check_report(report, language, ids, blind, stage)
    if not prior:
        return {}, [CombinationError(stage, "ReportMissing", "the client wrote no report")]
    return {}, []


def _exit_errors(client_exit: int | None, blind: bool, stage: str) -> list[CombinationError]:
    """A client following contract v1 exits 1 when one of its rows failed; the rows
    themselves say which, so only blind clients must exit 0. Any other status (2, a
    signal) is a failure of either."""
    if client_exit not in (0, None) and (blind or client_exit != 1):
        return [CombinationError(stage, "ClientExit", f"the client {describe_exit(client_exit)}")]
    return []


def _receipt_errors(
    entries: dict[str, dict[str, Any]],
    scenarios: dict[str, Scenario],
    receipts: list[Any] | None,
    stage: str,
) -> tuple[list[CombinationError], set[str]]:
    """The rows the client says it delivered and applied must each be receipted (a
    missing one fails the combination: the client claims what never happened). A row
    it reports failed with nothing applied (e.g. the server answered HTTP 400) fails on
    its own, and a missing receipt is said on that row. Returns the errors and the rows
    reported failed that no receipt names."""
    sent = {i for i, e in entries.items() if i in scenarios and _delivered(e)}
    if receipts is None:
        return [CombinationError(stage, "ReceiptsUnavailable", "no receipts were captured")], set()
    seen = {r.get("id") for r in receipts if isinstance(r, dict)}
    unreceipted = {
        i
        for i, e in entries.items()
        if i in scenarios and i not in sent and e.get("status") == Status.FAILED
    } - seen
    requests = {sid: s.request for sid, s in scenarios.items()}
    return check_receipts(receipts, requests, sent, stage), unreceipted


def _new_row(
    scenario_set: ScenarioSet, scenario: Scenario, entry: dict[str, Any] | None
) -> RowVerdict:
    """The row, failed until judged, with what the client reported of it: its actual,
    status, error and acceptance diagnostics."""
    row = RowVerdict(
        set=scenario_set.origin(scenario.id),
        id=scenario.id,
        status=Status.FAILED,
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
    return row


def _row_verdict(
    scenario_set: ScenarioSet, scenario: Scenario, run: _Run, blind: bool
) -> RowVerdict:
    """One row's verdict, the first cause that applies: the combination failed, the
    server refused or altered the row's request, no result, a row the client could not
    run, a row of our contract a v1 client is not judged on, else the client's result."""
    entry = run.entries.get(scenario.id)
    row = _new_row(scenario_set, scenario, entry)
    got = run.answered.get(scenario.request.get("id"), [])
    refused = [v for v in got if isinstance(v, dict) and "httpStatus" in v]
    altered = [v for v in got if v not in refused and not strict_equal(v, scenario.response)]
    if run.errors:
        row.error = "combination failed: " + ", ".join(sorted({e.error_class for e in run.errors}))
    elif refused:  # the capture: the server refused the request (a recheck over HTTP)
        kind, said = _refusal(refused[0])
        row.diagnostics["classes"] = [kind]
        row.error = f"{kind}: {said}"
    elif altered:
        row.diagnostics["classes"] = ["ServerAltered"]
        row.error = (
            f"ServerAltered: the server answered {shown(altered[0])}, not the scenario's "
            "response, so the row proves nothing of the client (a server sends the "
            "scripted response unchanged, docs/CONTRACT.md 'Replies')"
        )
    elif entry is None:
        row.error = "no result"
    elif row.adapter_status in (Status.UNSUPPORTED, Status.INAPPLICABLE):
        row.status = Status(row.adapter_status)
    elif not blind and (needed := extension(scenario)) is not None:
        row.status = Status.UNSUPPORTED
        row.error = (
            f"needs our contract's reading {needed!r} (docs/scenarios.md, 'Rows of our "
            "contract only'), which contract v1 does not share: not judged for a v1 client"
        )
    else:
        _judge_result(
            row,
            scenario,
            entry,
            blind,
            unreceipted=scenario.id in run.unreceipted,
            captured=bool(got),
        )
    return row


def _judge_result(
    row: RowVerdict,
    scenario: Scenario,
    entry: dict[str, Any],
    blind: bool,
    *,
    unreceipted: bool,
    captured: bool,
) -> None:
    """A row the client ran: failed as it reported when it is blind or applied nothing
    (`unreceipted`: the server never receipted it; `captured`: a capture shows the
    server's answers were all the scripted one), else passed when its actual is the
    expected one. A v1 client's own passed or failed is a diagnostic: its actual is
    judged."""
    if row.adapter_status == Status.FAILED and (blind or entry.get("actual") is None):
        row.error = row.error or "the client reported a failure"
        if unreceipted:
            row.error += " (the server never receipted the request)"
        # a capture (the stdio relay, a recheck's HTTP relay) shows whether the client
        # failed on its script: then the server's answers were all the scripted one
        row.diagnostics["classes"] = ["ClientFailedOnScript" if captured else "ClientFailed"]
        return
    if not blind:
        _, unasserted = asserted(scenario, blind)
        if unasserted:
            row.diagnostics["notAssertedForV1"] = unasserted
    difference = judge(scenario, entry, blind)
    if difference is None:
        row.status = Status.PASSED
        row.error = None
    else:
        row.error = difference


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
    wire: bool = True,
    replies: list[tuple[Any, Any]] | None = None,
) -> SetVerdict:
    """Judge every row of one scenario set for one combination.

    `wire=False` judges an in-process replay: no server, so no receipts. `replies`
    (a relayed stdio server's answers, by the id of the request before each): a row
    whose server answered anything but its scripted response proves nothing of the
    client and fails, naming the server.
    """
    errors = list(prior_errors or [])
    scenarios = scenario_set.by_id()
    entries, report_errors = _report_entries(
        report, set(scenarios), language=language, blind=blind, stage=stage, prior=bool(errors)
    )
    errors += report_errors
    errors += _exit_errors(client_exit, blind, stage)
    unreceipted: set[str] = set()  # rows the client could not deliver, never receipted
    if report is not None and wire:
        receipt_errors, unreceipted = _receipt_errors(entries, scenarios, receipts, stage)
        errors += receipt_errors
    run = _Run(entries, errors, unreceipted, _answers(replies))
    rows = [_row_verdict(scenario_set, s, run, blind) for s in scenario_set.scenarios]
    return SetVerdict(rows=rows, errors=errors)
