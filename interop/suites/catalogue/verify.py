"""The catalogue suite's verdict (docs/CATALOGUE.md, "What the harness checks").

Input: one set's scenarios, the client's report, the server's receipt entries
in the order recorded, the client's exit status and the trust profile. The
client ran the scenarios in file order against one server, so the delivery
receipts are assigned to scenarios in that order: each scenario owns as many
as it expects to have sent. Each rule that fails names its error class
(docs/errors.md); a row passes only when no rule fails.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import first_difference, load_file, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.schema import canonical
from interop.suites.catalogue.scenarios import CatalogueScenario
from interop.suites.common import check_step_report, conclude, prejudge

MANIFEST = Path(__file__).parent / "manifest.json"  # written by hand from docs/CATALOGUE.md
# What the upstream verifier requires of a server's manifest (compat): observe for
# the 22 event types its vector sends, no hook.failure, managedPolicy scopes.
UPSTREAM_OBSERVED = (
    "tool.before",
    "tool.after",
    "turn.start",
    "turn.finish.before",
    "turn.end",
    "turn.progress",
    "model.request.before",
    "model.response.after",
    "model.error",
    "model.switch.before",
    "model.switch.after",
    "tool.permission.request",
    "tool.permission.resolved",
    "tool.progress",
    "tool.batch.after",
    "context.compact.before",
    "context.compact.after",
    "task.change.before",
    "task.change.after",
    "workspace.change.before",
    "workspace.change.after",
    "file.changed",
)
Problem = tuple[str, str]


@functools.cache
def catalogue_manifest() -> Any:
    return load_file(MANIFEST)


def _short(value: Any) -> str:
    return shown(value, 140)


def check_entries(entries: Any, stage: str) -> tuple[list[dict[str, Any]], list[CombinationError]]:
    """The entries when each is a catalogue receipt; else one ReceiptMalformed per bad entry."""
    if not isinstance(entries, list):
        return [], [CombinationError(stage, "ReceiptsUnavailable", "no receipt entries")]
    errors = []
    good: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        problem = contract_problem("catalogue-control.schema.json#/$defs/entry", entry)
        if problem is not None:
            errors.append(CombinationError(stage, "ReceiptMalformed", f"entry {index}: {problem}"))
        else:
            good.append(entry)
    return good, errors


def manifest_problem(manifest: Any, profile: str) -> str | None:
    """Why a discovered manifest is not the catalogue's (strict) or fails the upstream checks."""
    if profile == "strict":
        found = first_difference(catalogue_manifest(), manifest)
        if found is None:
            return None
        return f"{found[0]}: the contract's manifest has {_short(found[1])}, got {_short(found[2])}"
    events = manifest.get("events", []) if isinstance(manifest, dict) else []
    modes = {
        e.get("event"): e.get("modes", [])
        for e in events
        if isinstance(e, dict) and isinstance(e.get("modes"), list)
    }
    missing = [t for t in UPSTREAM_OBSERVED if "observe" not in modes.get(t, [])]
    if missing:
        return f"observe is not advertised for {', '.join(missing[:5])}"
    if "hook.failure" in modes:
        return "hook.failure is advertised; it must be unsupported"
    policy = manifest.get("managedPolicy") if isinstance(manifest, dict) else None
    scopes = policy.get("scopes") if isinstance(policy, dict) else None
    if scopes != ["user", "project"]:
        return f"managedPolicy.scopes is {_short(scopes)}, not ['user', 'project']"
    return None


def check_discovery(
    entries: list[dict[str, Any]], report: Any, profile: str, stage: str
) -> list[CombinationError]:
    """Exactly one discovery receipt, first; valid; equal to the report's; the manifest M."""
    found = [i for i, e in enumerate(entries) if e["kind"] == "discovery"]
    if found != [0]:
        where = "none" if not found else f"at positions {found}"
        return [
            CombinationError(
                stage,
                "DiscoveryCount",
                f"one hooks/capabilities receipt, first, is required; found {where}",
            )
        ]
    entry = entries[0]
    request, response = entry["request"], entry["response"]
    errors = []
    for schema, value in (
        ("capabilities-request.schema.json", request),
        ("capabilities-response.schema.json", response),
    ):
        issue = canonical().issue(schema, value)
        if issue is not None:
            errors.append(CombinationError(stage, "DiscoveryInvalid", f"{schema}: {issue}"))
    if not errors and not strict_equal(request.get("id"), response.get("id")):
        errors.append(
            CombinationError(
                stage,
                "DiscoveryInvalid",
                f"the response id {_short(response.get('id'))} is not the request's "
                f"{_short(request.get('id'))}",
            )
        )
    discovered = report.get("discovery") if isinstance(report, dict) else None
    if not strict_equal(discovered, response):
        errors.append(
            CombinationError(
                stage,
                "DiscoveryMismatch",
                f"the client reports discovery {_short(discovered)}; the server answered "
                f"{_short(response)}",
            )
        )
    if not errors:
        problem = manifest_problem(response["result"]["manifest"], profile)
        if problem is not None:
            errors.append(CombinationError(stage, "ManifestMismatch", problem))
    return errors


def expected_entries(scenario: CatalogueScenario) -> list[dict[str, Any]]:
    """The receipts a scenario's expectation calls for, in order."""
    wanted = []
    for message, verdict in zip(scenario.sent, scenario.deliveries, strict=True):
        event = message["params"]["event"]
        if verdict["accepted"]:
            entry = {"kind": "observed", "eventId": event["id"], "event": event}
        else:
            entry = {"kind": "rejected", "eventId": event["id"], "errorKind": verdict["errorKind"]}
        wanted.append({**entry, "message": message})
    return wanted


def _project(expected: dict[str, Any], actual: Any) -> Any:
    """The client's actual, with `rule` dropped where the expectation names none."""
    if not isinstance(actual, dict) or not isinstance(actual.get("registrations"), list):
        return actual
    projected = copy.deepcopy(actual)
    for want, got in zip(expected["registrations"], projected["registrations"], strict=False):
        if isinstance(got, dict) and "rule" not in want:
            got.pop("rule", None)
    return projected


def _v1_expected(judged: dict[str, Any]) -> dict[str, Any]:
    """What a contract v1 client is judged on: `rule` [ext] is ours, not v1's."""
    registrations = judged.get("registrations")
    if not isinstance(registrations, list):
        return judged
    return {
        **judged,
        "registrations": [
            {k: v for k, v in r.items() if k != "rule"} if isinstance(r, dict) else r
            for r in registrations
        ],
    }


def verify_deliveries(scenario: CatalogueScenario, got: list[dict[str, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    wanted = expected_entries(scenario)
    for number, want in enumerate(wanted):
        if number >= len(got):
            problems.append(
                (
                    "DeliveryMismatch",
                    f"sent[{number}] ({want['eventId']}): no receipt; expected {want['kind']}",
                )
            )
            continue
        entry = got[number]
        found = first_difference(want, entry)
        if found is not None:
            problems.append(
                (
                    "DeliveryMismatch",
                    f"sent[{number}] ({want['eventId']}): {found[0]}: expected "
                    f"{_short(found[1])}, got {_short(found[2])}",
                )
            )
        if entry["kind"] == "observed":
            issue = canonical().issue("observe-notification.schema.json", entry["message"])
            if issue is not None:
                problems.append(("ReceivedInvalid", f"sent[{number}]: {issue}"))
    return problems


def verify_set(
    set_name: str,
    scenarios: list[CatalogueScenario],
    *,
    report: Any,
    entries: Any,
    client_exit: int | None,
    language: str,
    profile: str,
    stage: str,
    prior_errors: list[CombinationError],
    blind: bool = True,
) -> tuple[list[RowVerdict], list[CombinationError]]:
    """Judge every row of one set (one client run) into row verdicts and combination errors
    (a contract v1 client, `blind=False`, on the keys v1 defines)."""
    results, errors = check_step_report(
        report,
        schema="catalogue-report.schema.json",
        language=language,
        ids={s.id for s in scenarios},
        client_exit=client_exit,
        stage=stage,
        prior=prior_errors,
    )
    good, entry_errors = (
        check_entries(entries, stage) if report is not None or entries is not None else ([], [])
    )
    errors += entry_errors
    if not errors:
        errors += check_discovery(good, report, profile, stage)
    deliveries = [e for e in good if e["kind"] != "discovery"]
    cursor = 0
    rows: list[RowVerdict] = []
    for scenario in scenarios:
        count = len(scenario.sent)
        mine = deliveries[cursor : cursor + count]
        cursor += count
        entry = results.get(scenario.id)
        row = RowVerdict(set_name, scenario.id, Status.FAILED, scenario.expected)
        rows.append(row)
        if not prejudge(row, entry, errors):
            continue
        assert entry is not None
        problems: list[Problem] = []
        judged = {k: v for k, v in scenario.expected.items() if k != "deliveries"}
        if not blind:
            judged = _v1_expected(judged)
        found = first_difference(judged, _project(judged, entry.get("actual")))
        if found is not None:
            problems.append(
                (
                    "CatalogueResult",
                    f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}",
                )
            )
        problems += verify_deliveries(scenario, mine)
        conclude(row, problems)
    if not errors and len(deliveries) > cursor:
        errors.append(
            CombinationError(
                stage,
                "ReceiptCount",
                f"{len(deliveries) - cursor} delivery receipts after the last scenario's",
            )
        )
    return rows, errors
