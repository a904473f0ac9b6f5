#!/usr/bin/env python3
"""Generate the project's own elicitation scenario set, scenarios/elicitation.json.

    python3 tools/generate_elicitation_scenarios.py           write the file
    python3 tools/generate_elicitation_scenarios.py --check   exit 1 unless the file on disk
                                                              is reproduced byte for byte
    ... --output PATH          use PATH instead of scenarios/elicitation.json

The wire rows live in elicitation_receiver.py (exchanges, envelope and body
refusals), elicitation_uploads.py (uploads, attachments, selections, gaps),
elicitation_forms.py (submitted forms against the requested schema) and
elicitation_correlation.py (parent, source, session, liveness, concurrency);
the atomic rows in elicitation_host.py. They are built with the envelopes of
elicitation_wire.py and the fixtures of elicitation_common.py. The format and
the rules are docs/ELICITATION.md; every outcome, receipt and host result is
written by hand. READINGS lists the points of the text the rows depend on
that it leaves open.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import elicitation_correlation  # noqa: E402
import elicitation_forms  # noqa: E402
import elicitation_host  # noqa: E402
import elicitation_receiver  # noqa: E402
import elicitation_uploads  # noqa: E402
import scenario_file  # noqa: E402
from elicitation_wire import AUTHENTICATED_SOURCE  # noqa: E402

DEFAULT_OUTPUT = TOOLS_DIR.parent / "scenarios" / "elicitation.json"
FORMAT_VERSION = 1
MAX_EXACT = 2**53 - 1
STEP_OPS = {"upload", "send"}
CREDENTIALS = {"upload", "unauthorized", "none"}
ACTUAL_KEYS = ["request", "result", "published", "provenance"]
REQUEST_VERDICTS = {"allowed", "denied", "rejected"}
RESULT_VERDICTS = {"accepted", "rejected", "not-sent"}

# Points of docs/ELICITATION.md the rows depend on that its text leaves open.
# Rows whose message id is not its event id on purpose (refused at step 1).
OTHER_ID_ROWS = {"eli-envelope-id-not-event-id"}

READINGS: dict[str, str] = {
    "not-elicitation-step-1": (
        "Step 1 refuses an intercept whose event is not an elicitation even when it is "
        "valid against intercept-request (eli-not-elicitation, a user.message.outbound); "
        "eli-not-interceptable is a user.attention, which the schema itself refuses."
    ),
    "strict-result-text": (
        "Step 5 says 'parses as one JSON object' without step 4's 'strictly'; the rows "
        "read CONTRACT.md (every JSON text is parsed strictly) for the result text too: "
        "a duplicate key in it is refused (eli-result-text-duplicate-key)."
    ),
    "body-validation-label": (
        "The selection form of a result summary says bodyValidation 'not-selected' "
        "whenever either part is withheld, also when the result part itself is "
        "body-selected (eli-selection-metadata-body, eli-selection-omit-body-decline)."
    ),
    "refused-result-keeps-request-live": (
        "A refused result answers nothing: its request stays live and a later valid "
        "result is accepted (eli-result-gap-after-answer, eli-concurrent-two-live)."
    ),
    "duplicate-request-id": (
        "A request whose id is a live request's id is refused even when the message is "
        "the same bytes (eli-concurrent-two-live: no idempotent replay)."
    ),
    "wrong-session-exists": (
        "Rows may share no session, so a correlation row's 'another existing session' is "
        "made by the row itself: a second request, accepted, in <row id>:session-other "
        "(its receipt is expected), then the result names that session."
    ),
    "unbound-alias-after-refused-upload": (
        "An upload refused with 400 or 401 binds nothing, so the event sent after it "
        "carries the alias itself as its ref: 409 (eli-upload-bad-digest, "
        "eli-upload-wrong-credential, eli-upload-no-credential)."
    ),
    "metadata-request-result-rules": (
        "A result whose request was withheld is still held to the MCP definition, the "
        "action match and the content-only-on-an-accepted-form rule; only the form "
        "schema is skipped (eli-selection-metadata-body answers outside the enum)."
    ),
    "atomic-deny-after-return": (
        "'The first decision wins' at the request: a deny anywhere in the reply makes "
        "request 'denied' even after an accepted return (eli-atomic-return-then-deny)."
    ),
}


def build() -> list[dict[str, Any]]:
    scenarios = [
        *elicitation_receiver.rows(),
        *elicitation_uploads.rows(),
        *elicitation_forms.rows(),
        *elicitation_correlation.rows(),
        *elicitation_host.rows(),
    ]
    problems = lint(scenarios)
    if problems:
        raise SystemExit("elicitation scenario set is malformed:\n  " + "\n  ".join(problems))
    return scenarios


def render(scenarios: list[dict[str, Any]]) -> str:
    document = {
        "version": FORMAT_VERSION,
        "suite": "elicitation",
        "authenticatedSource": AUTHENTICATED_SOURCE,
        "scenarios": scenarios,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- lint (shape only)


def _numbers(value: Any, path: str) -> list[str]:
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return []
    if isinstance(value, int):
        return [] if abs(value) <= MAX_EXACT else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _numbers(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _numbers(v, f"{path}[{i}]")]
    return [f"{path} (not JSON)"]


def _event(message: Any) -> dict[str, Any] | None:
    params = message.get("params") if isinstance(message, dict) else None
    event = params.get("event") if isinstance(params, dict) else None
    return event if isinstance(event, dict) else None


def _lint_wire(row: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """Problems, the event ids the row's sends carry, the session ids they use."""
    rid = row["id"]
    problems: list[str] = []
    events: list[str] = []
    sessions: list[str] = []
    accepted: list[Any] = []
    steps, expected = row["steps"], row["expected"]
    if list(expected) != ["steps", "receipts"]:
        problems.append(f"{rid}: expected keys must be steps, receipts")
    outcomes = expected["steps"]
    if len(outcomes) != len(steps):
        problems.append(f"{rid}: one expected outcome per step")
    for n, (step, outcome) in enumerate(zip(steps, outcomes, strict=False)):
        if step.get("op") not in STEP_OPS or outcome.get("op") != step.get("op"):
            problems.append(f"{rid}: step {n} op and outcome op differ")
        if step["op"] == "upload":
            if step.get("credential") not in CREDENTIALS or not step.get("alias"):
                problems.append(f"{rid}: step {n} upload needs an alias and a credential")
            if set(outcome) != {"op", "status"}:
                problems.append(f"{rid}: step {n} upload outcome is op and status")
        else:
            if set(outcome) != {"op", "outcome", "status"}:
                problems.append(f"{rid}: step {n} send outcome is op, outcome and status")
            if (outcome["outcome"] == "accepted") != (outcome["status"] == 200):
                problems.append(f"{rid}: step {n} accepted exactly with 200")
            event = _event(step["message"])
            if event is None:
                continue
            eid = event.get("id")
            if not isinstance(eid, str) or not eid.startswith(f"{rid}:"):
                problems.append(f"{rid}: step {n} event id must start with {rid}:")
            elif step["message"].get("id") != eid and rid not in OTHER_ID_ROWS:
                problems.append(f"{rid}: step {n} JSON-RPC id must be the event id")
            elif eid not in events:
                events.append(eid)
            if outcome["outcome"] == "accepted":
                accepted.append(eid)
            session = event.get("session", {}).get("id")
            if session is not None and session not in sessions:
                sessions.append(session)
                if not session.startswith(f"{rid}:"):
                    problems.append(f"{rid}: session {session} is not the row's own")
    recorded = [r.get("eventId") for r in expected["receipts"]]
    if recorded != accepted or any(set(r) != {"eventId", "summary"} for r in expected["receipts"]):
        problems.append(f"{rid}: receipts are {{eventId, summary}} of the accepted sends, in order")
    return problems, events, sessions


def _lint_atomic(row: dict[str, Any]) -> list[str]:
    rid = row["id"]
    problems: list[str] = []
    request = row["atomic"]["request"]
    if request.get("id") != f"{rid}:request" or _event(request) is None:
        problems.append(f"{rid}: atomic.request has id {rid}:request")
    elif _event(request).get("id") != f"{rid}:request":  # type: ignore[union-attr]
        problems.append(f"{rid}: atomic.request's event has id {rid}:request")
    if not set(row["responses"]) <= {f"{rid}:request", f"{rid}:result"}:
        problems.append(f"{rid}: responses are keyed {rid}:request / {rid}:result")
    for key, response in row["responses"].items():
        if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
            problems.append(f"{rid}: responses[{key}] is a JSON-RPC response")
    outcome = row["expected"]["actual"]
    if list(outcome) != ACTUAL_KEYS:
        problems.append(f"{rid}: actual keys must be {', '.join(ACTUAL_KEYS)}")
    elif (
        outcome["request"] not in REQUEST_VERDICTS
        or outcome["result"] not in RESULT_VERDICTS
        or (outcome["result"] == "accepted") != (outcome["published"] is not None)
        or (outcome["result"] == "accepted") != (outcome["provenance"] is not None)
        or (outcome["request"] != "allowed" and outcome["result"] != "not-sent")
    ):
        problems.append(f"{rid}: actual is not a possible host report")
    receipts = row["expected"]["receipts"]
    wanted = [f"{rid}:request"]
    if outcome.get("result") in ("accepted", "rejected"):
        wanted.append(f"{rid}:result")
    if [r.get("eventId") for r in receipts] != wanted:
        problems.append(f"{rid}: receipts are the request's, and the result's when sent")
    return problems


def lint(scenarios: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    ids = Counter(row["id"] for row in scenarios)
    problems += [f"{rid}: duplicate scenario id" for rid, n in ids.items() if n > 1]
    owners: dict[str, str] = {}
    for row in scenarios:
        rid = row["id"]
        if not rid.startswith("eli-"):
            problems.append(f"{rid}: our scenario ids start with eli-")
        if "transports" in row and "inapplicableReason" not in row:
            problems.append(f"{rid}: a row restricted to one transport says why")
        problems += [f"{rid}: number outside I-JSON at {p}" for p in _numbers(row, "$")]
        if "atomic" in row:
            if set(row) != {"id", "atomic", "responses", "expected"}:
                problems.append(f"{rid}: an atomic row is id, atomic, responses, expected")
            problems += _lint_atomic(row)
            continue
        found, events, sessions = _lint_wire(row)
        problems += found
        for name in (*events, *sessions):
            if owners.setdefault(name, rid) != rid:
                problems.append(f"{rid}: {name} is also used by {owners[name]}")
    return problems


def counts(scenarios: list[dict[str, Any]]) -> dict[str, int]:
    atomic = sum(1 for row in scenarios if "atomic" in row)
    return {"wire": len(scenarios) - atomic, "atomic": atomic}


# ---------------------------------------------------------------- check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="scenario file to write or check"
    )
    parser.add_argument(
        "--check", action="store_true", help="verify the file instead of writing it"
    )
    args = parser.parse_args(argv)
    scenarios = build()
    return scenario_file.write_or_check(
        args.output,
        render(scenarios),
        len(scenarios),
        check=args.check,
        script="generate_elicitation_scenarios.py",
    )


if __name__ == "__main__":
    sys.exit(main())
