"""The compaction suite's verdict (docs/COMPACTION.md, "What the harness checks").

Input: one set's rows (those of the transport), the client's report and the
server's receipt entries. Each boundary's calls are found by their request id
(`<row>:before`, `<row>:after`), so rows need no positional assignment.
"""

from __future__ import annotations

from typing import Any

from interop.jsonvalue import first_difference, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.schema import canonical
from interop.suites.common import check_step_report, conclude, prejudge
from interop.suites.compaction.scenarios import CompactionRow
from interop.suites.lifecycle.verify import Entries, check_entries

Problem = tuple[str, str]
KINDS = ("received", "replied", "observed", "chain-settled")
BOUNDARIES = ("before", "after")


def _short(value: Any) -> str:
    return shown(value, 140)


def _mine(log: Entries, row: CompactionRow) -> list[int]:
    ids = {row.boundary_id(b) for b in BOUNDARIES}
    return log.naming_any(("scenario", row.id), *((k, i) for i in ids for k in ("id", "eventId")))


def _kinds(row: CompactionRow, log: Entries) -> list[Problem]:
    """No receipt of the row of a kind a compaction run never has."""
    foreign = sorted({log.all[i]["kind"] for i in _mine(log, row)} - set(KINDS))
    if foreign:
        return [("ChainReceipts", f"receipt kinds a compaction run never has: {foreign}")]
    return []


def _calls(row: CompactionRow, log: Entries, boundary: str) -> list[Problem]:
    """One boundary's calls: the proof's requests received in order (the first
    difference named), each valid, each answered once after its receipt (a scripted
    timeout never) before the next is sent."""
    problems: list[Problem] = []
    rid = row.boundary_id(boundary)
    received, replied = log.of("received", rid), log.of("replied", rid)
    got = [log.all[i]["message"] for i in received]
    wanted = row.proof[boundary]
    if len(got) != len(wanted) or not all(
        strict_equal(g, w) for g, w in zip(got, wanted, strict=False)
    ):
        detail = f"{len(wanted)} {boundary} calls in the proof, {len(got)} received"
        for number, (g, w) in enumerate(zip(got, wanted, strict=False)):
            found = first_difference(w, g)
            if found is not None:
                detail = (
                    f"{boundary} call {number}: {found[0]}: expected {_short(found[1])}, "
                    f"got {_short(found[2])}"
                )
                break
        problems.append(("ChainRequests", detail))
    for message in got:
        issue = canonical().issue("intercept-request.schema.json", message)
        if issue is not None:
            problems.append(("ReceivedInvalid", f"{rid}: {issue}"))
    answered = [row.fault(boundary, n) != "timeout" for n in range(len(received))]
    pattern = [k for ok in answered for k in (("received", "replied") if ok else ("received",))]
    if len(replied) != sum(answered):
        problems.append(
            (
                "ChainCalls",
                f"{rid}: {len(replied)} replies to {len(received)} calls (a scripted "
                "timeout has none)",
            )
        )
    elif [log.all[i]["kind"] for i in sorted(received + replied)] != pattern:
        problems.append(("ChainCalls", f"{rid}: a call was sent before the previous reply"))
    return problems


def _settlement(row: CompactionRow, log: Entries, boundary: str) -> list[Problem]:
    """One boundary's settlement: one chain-settled mark when it ran (none when it did
    not), after its last call's receipt, and no observation before it."""
    problems: list[Problem] = []
    rid = row.boundary_id(boundary)
    received, replied = log.of("received", rid), log.of("replied", rid)
    settled = log.marks(row.id, "chain-settled", rid)
    # the after boundary ran when the compaction applied, or when its own
    # fail-closed failure stopped the application
    ran = (
        boundary == "before"
        or row.expected["applied"] is True
        or bool(row.expected["after"]["failures"])
    )
    if len(settled) != (1 if ran else 0):
        problems.append(
            (
                "ChainSettlement",
                f"{rid}: {len(settled)} chain-settled marks; {1 if ran else 0} required",
            )
        )
    last_call = max(received + replied, default=-1)
    if settled and settled[0] < last_call:
        problems.append(("ChainSettlement", f"{rid}: settled before its last call's receipt"))
    for i in log.of("observed", rid):
        if not settled or i < settled[0]:
            problems.append(
                ("ChainSettlement", f"{rid}: an observation came before the boundary settled")
            )
    return problems


def _observations(row: CompactionRow, log: Entries, notifications: bool) -> list[Problem]:
    """The observations of both boundaries: each one of the proof's notifications
    (matched in any order, each once; none asserted without `notifications`), valid;
    none of the proof missing."""
    problems: list[Problem] = []
    ids = {row.boundary_id(b) for b in BOUNDARIES}
    observed = [
        log.all[i]
        for i in log.naming_any(*(("eventId", ident) for ident in ids))
        if log.all[i]["kind"] == "observed"
    ]
    remaining = list(row.proof["observations"]) if notifications else []
    for entry in observed:
        match = next((w for w in remaining if strict_equal(entry["message"], w)), None)
        if match is None:
            problems.append(
                ("ChainObservations", f"an unexpected observation {_short(entry['message'])}")
            )
        else:
            remaining.remove(match)
        issue = canonical().issue("observe-notification.schema.json", entry["message"])
        if issue is not None:
            problems.append(("ReceivedInvalid", f"observation: {issue}"))
    if remaining:
        problems.append(
            ("ChainObservations", f"{len(remaining)} notifications of the proof never arrived")
        )
    return problems


def verify_run(row: CompactionRow, log: Entries, *, notifications: bool = True) -> list[Problem]:
    """The row's receipts against its proof. `notifications`: whether the server
    records the notifications it gets (a contract v1 compaction-wire receiver takes
    none: then the proof's observations are not asserted, the client's report of
    whom it notified still is). In this order: receipt kinds, each boundary's calls
    and settlement, the observations."""
    problems = _kinds(row, log)
    for boundary in BOUNDARIES:
        problems += _calls(row, log, boundary)
        problems += _settlement(row, log, boundary)
    problems += _observations(row, log, notifications)
    return problems


def verify_negative(row: CompactionRow, log: Entries, actual: Any) -> list[Problem]:
    problems: list[Problem] = []
    negative = row.negative or {}
    ident = negative.get("id")
    event = (
        negative.get("params", {}).get("event", {})
        if isinstance(negative.get("params"), dict)
        else {}
    )
    event_id = event.get("id") if isinstance(event, dict) else None
    named = [
        (key, value) for key, value in (("id", ident), ("eventId", event_id)) if value is not None
    ]
    recorded = [log.all[i] for i in log.naming_any(*named)]
    if recorded:
        problems.append(
            ("NegativeRecorded", f"the refused request was recorded ({recorded[0]['kind']})")
        )
    if not strict_equal(actual, row.expected):
        problems.append(
            (
                "NegativeAccepted",
                f"expected the answer {_short(row.expected)}, the client got {_short(actual)}",
            )
        )
    return problems


def verify_set(
    set_name: str,
    rows: list[CompactionRow],
    *,
    report: Any,
    entries: Any,
    client_exit: int | None,
    language: str,
    stage: str,
    prior_errors: list[CombinationError],
    notifications: bool = True,
) -> tuple[list[RowVerdict], list[CombinationError]]:
    results, errors = check_step_report(
        report,
        schema="lifecycle-report.schema.json",
        language=language,
        ids={r.id for r in rows},
        client_exit=client_exit,
        stage=stage,
        prior=prior_errors,
    )
    good, entry_errors = (
        check_entries(entries, stage) if report is not None or entries is not None else ([], [])
    )
    errors += entry_errors
    log = Entries(good)
    verdicts: list[RowVerdict] = []
    for row in rows:
        entry = results.get(row.id)
        verdict = RowVerdict(set_name, row.id, Status.FAILED, row.expected)
        verdicts.append(verdict)
        if not prejudge(verdict, entry, errors):
            continue
        assert entry is not None
        problems: list[Problem]
        if row.negative is not None:
            problems = verify_negative(row, log, entry.get("actual"))
        else:
            problems = []
            found = first_difference(row.expected, entry.get("actual"))
            if found is not None:
                problems.append(
                    (
                        "CompactionResult",
                        f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}",
                    )
                )
            problems += verify_run(row, log, notifications=notifications)
            if not notifications and row.proof.get("observations"):
                verdict.diagnostics["notAssertedForV1"] = (
                    "the server's receipt of the notifications (proof.observations): a "
                    "contract v1 compaction-wire receiver takes none"
                )
        conclude(verdict, problems)
    return verdicts, errors
