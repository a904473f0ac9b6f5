"""The elicitation suite's verdict (docs/ELICITATION.md, "What the harness checks").

Input: one set's rows (those of the transport), the client's report and the
server's receipt entries in the order recorded. Each row owns the entries
from its `row-start` mark to the next row's; rows need no positional
assignment beyond that. Each rule that fails names its error class
(docs/errors.md); a row passes only when no rule fails.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import first_difference, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.suites.common import check_step_report, conclude, prejudge
from interop.suites.elicitation.scenarios import ElicitationRow

Problem = tuple[str, str]
ENTRY_SCHEMA = "elicitation-control.schema.json#/$defs/entry"
REPORT_SCHEMA = "elicitation-report.schema.json"
ROW_KINDS = ("upload", "elicitation")
INVALID_PARAMS = -32602
ALLOCATED = frozenset({"ref"})  # an upload's ref: the receiver allocates it in each run


def _short(value: Any) -> str:
    return shown(value, 140)


def check_entries(entries: Any, stage: str) -> tuple[list[dict[str, Any]], list[CombinationError]]:
    """The entries when each is a known receipt; else one ReceiptMalformed per bad entry."""
    if not isinstance(entries, list):
        return [], [CombinationError(stage, "ReceiptsUnavailable", "no receipt entries")]
    errors, good = [], []
    for index, entry in enumerate(entries):
        problem = contract_problem(ENTRY_SCHEMA, entry)
        if problem is not None:
            errors.append(CombinationError(stage, "ReceiptMalformed", f"entry {index}: {problem}"))
        else:
            good.append(entry)
    return good, errors


def segments(entries: list[dict[str, Any]]) -> tuple[dict[str, list[dict[str, Any]]], list[Any]]:
    """Each row's entries (from its row-start mark to the next one) by row id, and
    the entries recorded before any mark (a server records nothing unprompted)."""
    owned: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] | None = None
    stray: list[Any] = []
    for entry in entries:
        if entry["kind"] == "row-start":
            current = owned.setdefault(entry["scenario"], [])
            current.append(entry)
        elif current is None:
            stray.append(entry)
        else:
            current.append(entry)
    return owned, stray


def _no_effect(message: Any) -> dict[str, Any]:
    ident = message.get("id") if isinstance(message, dict) else None
    return {"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": "draft", "effects": []}}


def check_receipts(row: ElicitationRow, owned: list[dict[str, Any]] | None) -> list[Problem]:
    if owned is None:
        return [("ElicitationReceipts", "no row-start mark for this row: its receipts are unknown")]
    problems: list[Problem] = []
    marks = [e for e in owned if e["kind"] == "row-start"]
    if len(marks) != 1:
        problems.append(("ElicitationReceipts", f"{len(marks)} row-start marks; one required"))
    foreign = sorted({e["kind"] for e in owned} - {"row-start", *ROW_KINDS})
    if foreign:
        problems.append(("ElicitationReceipts", f"receipt kinds this suite never has: {foreign}"))
    got = [
        {"eventId": e["eventId"], "summary": e["summary"]}
        for e in owned
        if e["kind"] == "elicitation"
    ]
    wanted = row.expected["receipts"]
    found = first_difference(wanted, got)
    if found is not None:
        if len(got) > len(wanted):
            extra = got[len(wanted)]
            detail = (
                f"{len(got)} receipts, {len(wanted)} expected: the receiver recorded "
                f"{extra['eventId']!r}, a message it had to refuse"
                if all(strict_equal(g, w) for g, w in zip(got, wanted, strict=False))
                else f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}"
            )
        else:
            detail = f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}"
        problems.append(("ElicitationReceipts", detail))
    return problems


def check_uploads(
    row: ElicitationRow, owned: list[dict[str, Any]], reported: list[Any]
) -> list[Problem]:
    problems: list[Problem] = []
    uploads = [e for e in owned if e["kind"] == "upload"]
    planned = [(i, s) for i, s in enumerate(row.steps) if s["op"] == "upload"]
    if len(uploads) != len(planned):
        return [
            (
                "ElicitationUploads",
                f"{len(planned)} upload steps, {len(uploads)} upload receipts",
            )
        ]
    refs_by_bytes: dict[str, str] = {}
    for entry, (index, step) in zip(uploads, planned, strict=True):
        body = base64.b64decode(step["bodyBase64"])
        digest = hashlib.sha256(body).hexdigest()
        declared = step.get("sha256", digest)
        if entry["size"] != len(body) or entry["sha256"] != declared:
            problems.append(
                (
                    "ElicitationUploads",
                    f"step {index}: the receipt declares size {entry['size']} and sha256 "
                    f"{entry['sha256'][:12]}..., the step {len(body)} and {declared[:12]}...",
                )
            )
        report = reported[index] if index < len(reported) else None
        status = report.get("status") if isinstance(report, dict) else None
        if entry["status"] != status:
            problems.append(
                (
                    "ElicitationUploads",
                    f"step {index}: the receiver recorded {entry['status']}, "
                    f"the client reported {status}",
                )
            )
        if entry["status"] != 201:
            if "ref" in entry:
                problems.append(("ElicitationUploads", f"step {index}: a refused upload has a ref"))
            continue
        ref = entry.get("ref")
        if not isinstance(report, dict) or report.get("ref") != ref:
            problems.append(
                (
                    "ElicitationUploads",
                    f"step {index}: the client bound {_short(report and report.get('ref'))}, "
                    f"the receiver allocated {ref!r}",
                )
            )
        for other, other_ref in refs_by_bytes.items():
            if other != digest and other_ref == ref:
                problems.append(
                    ("ElicitationUploads", f"step {index}: different bytes share the ref {ref!r}")
                )
        refs_by_bytes.setdefault(digest, ref or "")
    return problems


def check_reported_refs(row: ElicitationRow, reported: list[Any]) -> list[Problem]:
    """A v1 receiver records no uploads: what is left to check is what its 201s
    answered (upstream's driver checks the same): different bytes, different refs."""
    problems: list[Problem] = []
    refs: dict[str, str] = {}
    for index, (step, got) in enumerate(zip(row.steps, reported, strict=False)):
        if step["op"] != "upload" or not isinstance(got, dict) or got.get("status") != 201:
            continue
        ref = got.get("ref")
        if not isinstance(ref, str) or not ref:
            problems.append(("ElicitationUploads", f"step {index}: a 201 without a ref"))
            continue
        digest = hashlib.sha256(base64.b64decode(step["bodyBase64"])).hexdigest()
        if refs.setdefault(ref, digest) != digest:
            problems.append(
                ("ElicitationUploads", f"step {index}: different bytes share the ref {ref!r}")
            )
    return problems


# A v1 receiver answers every refusal 400 (upstream interop/elicitation.py@116f517c);
# the 409 for a ref it never stored is our lifecycle reading, not upstream's.
V1_REFUSALS = {400: (400, 409), 409: (400, 409)}


def verify_wire(
    row: ElicitationRow,
    owned: list[dict[str, Any]] | None,
    actual: Any,
    transport: str,
    v1_receiver: bool = False,
) -> list[Problem]:
    problems: list[Problem] = []
    steps = actual.get("steps") if isinstance(actual, dict) else None
    if not isinstance(steps, list) or len(steps) != len(row.steps):
        return [
            (
                "ElicitationOutcome",
                f"actual.steps must list {len(row.steps)} step outcomes, got {_short(steps)}",
            )
        ]
    for index, (step, wanted, got) in enumerate(
        zip(row.steps, row.expected["steps"], steps, strict=True)
    ):
        if not isinstance(got, dict) or got.get("op") != step["op"]:
            problems.append(("ElicitationOutcome", f"step {index}: {_short(got)} is not its op"))
            continue
        keys = ["status"] if step["op"] == "upload" else ["outcome"]
        if step["op"] == "send" and transport == "http":
            keys.append("status")
        for key in keys:
            if (
                v1_receiver
                and key == "status"
                and step["op"] == "send"
                and got.get(key) in V1_REFUSALS.get(wanted[key], ())
            ):
                continue
            if got.get(key) != wanted[key] or type(got.get(key)) is not type(wanted[key]):
                problems.append(
                    (
                        "ElicitationOutcome",
                        f"step {index} ({step['op']}): expected {key} {wanted[key]!r}, "
                        f"got {_short(got.get(key))}",
                    )
                )
        if step["op"] != "send":
            continue
        refused = wanted["outcome"] == "rejected" and transport == "stdio"
        if refused and got.get("error") != INVALID_PARAMS:
            problems.append(
                (
                    "ElicitationOutcome",
                    f"step {index}: a refusal over stdio is error {INVALID_PARAMS}, "
                    f"got {_short(got.get('error'))}",
                )
            )
        if wanted["outcome"] == "accepted" and got.get("outcome") == "accepted":
            reply = _no_effect(step["message"])
            if transport == "http" and not strict_equal(got.get("response"), reply):
                problems.append(
                    (
                        "ElicitationOutcome",
                        f"step {index}: the accepted reply is not the no-effect reply "
                        f"{_short(reply)}: {_short(got.get('response'))}",
                    )
                )
    problems += check_receipts(row, owned)
    if v1_receiver:
        problems += check_reported_refs(row, steps)
    elif owned is not None:
        problems += check_uploads(row, owned, steps)
    return problems


def verify_atomic(
    row: ElicitationRow, owned: list[dict[str, Any]] | None, actual: Any
) -> list[Problem]:
    problems: list[Problem] = []
    found = first_difference(row.expected["actual"], actual)
    if found is not None:
        problems.append(
            (
                "ElicitationResult",
                f"{found[0]}: expected {_short(found[1])}, got {_short(found[2])}",
            )
        )
    problems += check_receipts(row, owned)
    if owned is not None and any(e["kind"] == "upload" for e in owned):
        problems.append(("ElicitationUploads", "an atomic row uploads nothing"))
    return problems


def verify_set(
    set_name: str,
    rows: list[ElicitationRow],
    *,
    transport: str,
    report: Any,
    entries: Any,
    client_exit: int | None,
    language: str,
    stage: str,
    prior_errors: list[CombinationError],
    v1_receiver: bool = False,
) -> tuple[list[RowVerdict], list[CombinationError]]:
    """`v1_receiver`: the server is a contract v1 elicitation receiver, which records
    no uploads and refuses with 400 (docs/ELICITATION.md, "With a contract v1
    adapter")."""
    results, errors = check_step_report(
        report,
        schema=REPORT_SCHEMA,
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
    owned, stray = segments(good)
    if stray and not errors:
        errors.append(
            CombinationError(
                stage,
                "ElicitationReceipts",
                f"{len(stray)} receipts before the first row-start mark, e.g. {_short(stray[0])}",
            )
        )
    verdicts: list[RowVerdict] = []
    for row in rows:
        entry = results.get(row.id)
        verdict = RowVerdict(set_name, row.id, Status.FAILED, row.expected)
        verdicts.append(verdict)
        if not prejudge(verdict, entry, errors):
            continue
        assert entry is not None
        mine = owned.get(row.id)
        if row.atomic is not None:
            problems = verify_atomic(row, mine, entry.get("actual"))
        else:
            problems = verify_wire(row, mine, entry.get("actual"), transport, v1_receiver)
            verdict.allocated = ALLOCATED  # the receiver's upload refs
            if v1_receiver and any(s["op"] == "upload" for s in row.steps):
                verdict.diagnostics["notAssertedForV1"] = [
                    "upload receipts (a v1 receiver records none)"
                ]
        conclude(verdict, problems)
    return verdicts, errors
