"""Who a failure blames, and which requirements its rule enforces (docs/blame.md).

Every error class (`interop.results.ERRORS`) is a rule, and every rule judges one
side of an exchange on the evidence the harness has:

- `server`: what the server did on its own: started, answered its control calls,
  answered its script unchanged, refused what it had to, recorded what it served;
- `client`: what the client did, read from evidence the server cannot have
  shaped: what it derived from a response shown to be the scripted one, what it
  reported, what it sent as the server's record or the harness's capture shows it;
- `either`: the evidence cannot tell (a request the client says it sent and the
  server never recorded, a client that waited past its deadline on a silent
  server); such a failure is charged to neither side, and said so;
- `stage`: a contract failure of whichever process the error's stage names
  (`server...`, `client[...]`); `run`: the run itself (an interrupt, a harness
  bug), charged to nobody.

`requirements` are the ids the rule enforces (interop/coverage/requirements.json).
Coverage charges a failed row's requirements only to the side its rules judge,
and only those of its requirements the row exercises; a rule that enforces a
contract duty of ours and no protocol requirement charges its side a contract
failure. `row_rules` reads a report row's rules: the classes the verifier named,
or those of a failed combination, or, for a core row, the one its error states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

JUDGES = ("client", "server", "either", "stage", "run")


@dataclass(frozen=True)
class Rule:
    name: str
    judges: str
    requirements: tuple[str, ...] = ()
    basis: str = ""  # why this side (for `either`: why the evidence cannot tell)


# Requirement groups (ids of interop/coverage/requirements.json)
DECISION = ("AHP-DEC-001", "AHP-DEC-002", "AHP-DEC-003", "AHP-COMP-001", "AHP-CAP-001")
EDITS = ("AHP-EDIT-001", "AHP-COMP-001", "AHP-CONTENT-001", "AHP-CONTENT-002")
REFUSALS = ("AHP-CORE-003", "AHP-CAP-001", "AHP-CORE-004", "AHP-VER-001", "AHP-COMP-001",
            "AHP-EDIT-001", "AHP-RPC-001")  # fmt: skip
CHAINS = ("AHP-COMP-001", "AHP-FAIL-001", "AHP-FAIL-002", "AHP-REG-002")
DERIVED = tuple(dict.fromkeys(DECISION + EDITS + REFUSALS + CHAINS + ("AHP-TB-001",)))
WIRE = ("AHP-RPC-001", "AHP-RPC-002", "AHP-CORE-004", "AHP-VER-001", "AHP-CAP-002",
        "AHP-TB-001", "AHP-CONTENT-001", "AHP-CONTENT-002", "AHP-EXT-001")  # fmt: skip
OBSERVING = ("AHP-RPC-002", "AHP-REG-002", "AHP-COMP-001")
UPLOADS = ("AHP-HTTP-001", "AHP-CONTENT-001")
SECRETS = ("AHP-SEC-001",)
AUTH = ("AHP-AUTH-001", "AHP-SEC-001")
REGISTRATION = ("AHP-REG-001", "AHP-REG-002", "AHP-CAP-001", "AHP-FAIL-001")

SERVER_RECORD = "read from the server's own record of what it received"
NO_CAPTURE = "client or server: no capture of the exchange"
MARKS = "the client's marks"  # as the server's record holds them
MARKS_ORDER = "the client's marks against the record"
# the bases a record the capture contradicts (RecordContradictsWire) leaves without evidence
READS_RECORD = (SERVER_RECORD, NO_CAPTURE, MARKS, MARKS_ORDER)


def _rules(*rows: tuple[str, str, tuple[str, ...], str]) -> dict[str, Rule]:
    return {name: Rule(name, judges, reqs, basis) for name, judges, reqs, basis in rows}


RULES: dict[str, Rule] = _rules(
    # the run and the contract's processes
    ("ManifestInvalid", "run", (), "an adapter.json, before any exchange"),
    ("ServerSpawn", "server", (), "the server's command"),
    ("ServerExit", "server", (), "the server's process"),
    ("StartupTimeout", "server", (), "the server's readiness"),
    ("ReadinessMalformed", "server", (), "the server's readiness file"),
    ("HealthFailed", "server", (), "the server's control listener"),
    ("ResetFailed", "server", (), "the server's control listener"),
    ("ControlMalformed", "server", (), "the server's control answers"),
    ("ClientSpawn", "client", (), "the client's command"),
    ("ClientTimeout", "either", (), "a client waits on its server: a hang on either side"),
    ("ClientExit", "client", (), "the client's process"),
    ("ReportMissing", "client", (), "the client's report"),
    ("ReportMalformed", "client", (), "the client's report"),
    ("LanguageMismatch", "client", (), "the client's report"),
    ("ResultUnknownId", "client", (), "the client's report"),
    ("ResultDuplicateId", "client", (), "the client's report"),
    ("ResultMissing", "client", (), "the client's report"),
    ("ReceiptsUnavailable", "server", (), "the server's control listener"),
    ("ReceiptMalformed", "server", (), "the server's record"),
    ("ProcessLeak", "stage", (), "the process that left it"),
    ("Cancelled", "run", (), "the run was interrupted"),
    ("HarnessError", "run", (), "a bug of the harness"),
    # core: the client's delivery and derivation, the server's script
    ("ReceiptUnknown", "client", ("AHP-CORE-004",), SERVER_RECORD),
    ("ReceiptMismatch", "client", ("AHP-CORE-004",), SERVER_RECORD),
    ("ReceiptDuplicate", "client", ("AHP-RPC-002",), SERVER_RECORD),
    ("ReceiptMissing", "either", (), NO_CAPTURE),
    ("ClientResult", "client", DERIVED, "derived from a response shown to be the scripted one"),
    ("ClientFailed", "either", (), NO_CAPTURE),
    (
        "ClientFailedOnScript",
        "client",
        DERIVED,
        "the client failed a row whose scripted response the capture shows it got",
    ),
    ("ClientCredential", "client", AUTH, "the capture: the request lacked the run's credential"),
    (
        "ServerRefusedCredential",
        "server",
        AUTH,
        "the capture: the server refused the run's valid credential",
    ),
    ("ServerRefused", "server", ("AHP-HTTP-001",), "the capture: an HTTP error for the script"),
    (
        "ServerAltered",
        "server",
        (),
        "the capture shows another answer than the script",
    ),
    # the step suites' record against the recheck's wire (interop/suites/wire.py)
    ("RecordContradictsWire", "server", (), "the capture contradicts the server's own record"),
    (
        "ReportedRecordContradictsWire",
        "either",
        (),
        "the stdio relay's lines contradict the record the client reported from its server",
    ),
    # lifecycle: steps, chains, observers
    ("LifecycleResult", "client", DERIVED, "the client's report of what it derived"),
    ("AttemptMismatch", "client", ("AHP-CORE-004", "AHP-FAIL-002"), SERVER_RECORD),
    ("AttemptOrder", "server", (), "the server's record"),
    ("ReceivedMismatch", "client", WIRE, SERVER_RECORD),
    ("ReceivedInvalid", "client", WIRE, SERVER_RECORD),
    ("UploadBeforeUse", "client", UPLOADS, SERVER_RECORD),
    ("UploadMismatch", "either", UPLOADS, NO_CAPTURE),
    ("RefReused", "server", UPLOADS, "the refs the server allocated"),
    ("MilestoneMismatch", "client", ("AHP-FAIL-002",), MARKS),
    ("AcquiredMismatch", "client", ("AHP-FAIL-002",), MARKS),
    ("AcquiredOrder", "client", ("AHP-FAIL-002",), MARKS_ORDER),
    ("AcceptedOrder", "client", ("AHP-FAIL-002",), MARKS_ORDER),
    ("CancelOrder", "client", ("AHP-FAIL-002",), MARKS_ORDER),
    ("StrayFrame", "client", ("AHP-CORE-004", "AHP-STDIO-001"), MARKS),
    ("LateReplyOrder", "client", ("AHP-CORE-004", "AHP-FAIL-002"), SERVER_RECORD),
    ("ObservationMismatch", "client", OBSERVING, SERVER_RECORD),
    ("ObservationOrder", "client", OBSERVING, SERVER_RECORD),
    ("ChainReceipts", "server", (), "the server's record"),
    ("ChainRequests", "client", CHAINS + WIRE, SERVER_RECORD),
    ("ChainCalls", "client", ("AHP-COMP-001",), SERVER_RECORD),
    ("ChainObservations", "client", OBSERVING, SERVER_RECORD),
    ("ChainSettlement", "client", OBSERVING, MARKS_ORDER),
    ("ChainInterrupt", "client", ("AHP-COMP-001",), MARKS_ORDER),
    ("HeldObservers", "server", OBSERVING, "the server's record of held observers"),
    (
        "ProbeFailed",
        "server",
        ("AHP-HTTP-001", "AHP-RPC-002", "AHP-RPC-001"),
        "the harness's own probe of the receiver",
    ),
    # catalogue
    ("CatalogueResult", "client", DERIVED + REGISTRATION, "the client's report"),
    ("DiscoveryCount", "client", ("AHP-RPC-002",), SERVER_RECORD),
    ("DiscoveryInvalid", "either", ("AHP-RPC-001", "AHP-RPC-002"), NO_CAPTURE),
    ("DiscoveryMismatch", "either", ("AHP-RPC-002",), NO_CAPTURE),
    ("ManifestMismatch", "server", ("AHP-REG-001", "AHP-CAP-001"), "the manifest it answered"),
    ("DeliveryMismatch", "client", REGISTRATION + OBSERVING, SERVER_RECORD),
    ("ReceiptCount", "client", ("AHP-REG-002", "AHP-RPC-002"), SERVER_RECORD),
    # isolation: the harness's capture origin sees the client's upload itself
    ("CaptureMissing", "client", UPLOADS, "the harness's capture origin"),
    ("CaptureRepeated", "client", UPLOADS, "the harness's capture origin"),
    ("CaptureTarget", "client", UPLOADS, "the harness's capture origin"),
    ("CaptureFraming", "client", UPLOADS, "the harness's capture origin"),
    ("CaptureIntegrity", "client", UPLOADS, "the harness's capture origin"),
    ("CaptureIdentity", "client", UPLOADS + SECRETS, "the harness's capture origin"),
    ("CaptureLeak", "client", SECRETS, "the harness's capture origin"),
    ("RedirectFollowed", "client", SECRETS, "the harness's redirect target"),
    ("UploadStatusMismatch", "client", UPLOADS, "the client's report against the capture"),
    ("CookieNotSet", "client", (), "the case's order of steps"),
    # auth: the harness probes the server, and plays the peer a client must refuse
    ("AuthAccepted", "server", AUTH, "the harness's own probe"),
    ("AuthStatus", "server", AUTH, "the harness's own probe"),
    ("AuthUnnamed", "server", AUTH, "the harness's own probe"),
    ("ReceiptChanged", "server", AUTH, "the harness's own probe and the server's record"),
    ("ServerUnhealthy", "server", (), "the harness's own probe"),
    ("PositiveFailed", "server", AUTH, "the harness's own honest request"),
    ("ClientSentToUntrusted", "client", SECRETS + AUTH, "the harness's untrusted peer"),
    ("ClientClaimedDelivery", "client", (), "the client's report against the peer's record"),
    (
        "ClientPositiveFailed",
        "either",
        AUTH,
        "the honest peer's record: the client or its credential",
    ),
    # compaction
    ("HostResult", "client", DERIVED, "the host's report"),
    ("HostWire", "client", WIRE + CHAINS, "the harness's gate saw the calls"),
    ("HostTrace", "client", (), "the host's trace against the gate's record"),
    ("HostReceipts", "server", (), "the server's record against the gate's"),
    ("CompactionResult", "client", DERIVED, "the client's report"),
    ("NegativeRecorded", "server", REFUSALS, "the server's record"),
    ("NegativeAccepted", "either", REFUSALS, NO_CAPTURE),
    # elicitation
    ("ElicitationOutcome", "either", REFUSALS + WIRE, NO_CAPTURE),
    ("ElicitationReceipts", "server", REFUSALS + WIRE, "the receiver's record"),
    ("ElicitationUploads", "either", UPLOADS, NO_CAPTURE),
    ("ElicitationResult", "client", DERIVED, "the host's report"),
)

# a core row's first differing key -> the requirements a client's derivation of it enforces
CORE_PATHS: dict[str, tuple[str, ...]] = {
    "decision": DECISION,
    "result": DECISION,
    "permission": DECISION,
    "executed": ("AHP-DEC-002", "AHP-SEC-001"),
    "input": EDITS,
    "effective": EDITS,
    "messages": EDITS,
    "injections": EDITS,
    "flow": ("AHP-COMP-001",),
    "continuationInstructions": ("AHP-COMP-001",),
    "continuationRemaining": ("AHP-COMP-001",),
    "rejected": REFUSALS,
}

_CLASS = re.compile(r"^([A-Z][A-Za-z]+):")
_PATH = re.compile(r"^(?:host-layer rejection: )?\$\.([A-Za-z]+)")


def row_rules(row: dict[str, Any], combination_errors: list[dict[str, Any]]) -> list[Rule]:
    """The rules a failed report row broke, most telling first."""
    diagnostics = row.get("diagnostics") or {}
    error = str(row.get("error") or "")
    classes = [c for c in diagnostics.get("classes", []) if c in RULES]
    if error.startswith("combination failed:"):
        return [
            _staged(RULES[str(e.get("class"))], e)
            for e in combination_errors
            if str(e.get("class")) in RULES
        ]
    found = _CLASS.match(error)
    first = found.group(1) if found else None
    if first in RULES and first not in classes:
        classes.insert(0, first)
    elif first in classes:
        classes.remove(first)
        classes.insert(0, first)
    if "RecordContradictsWire" in classes:  # the record those rules read is false
        classes = [c for c in classes if RULES[c].basis not in READS_RECORD]
    if classes:
        return [RULES[c] for c in classes]
    path = _PATH.match(error)
    if path is not None:
        reqs = CORE_PATHS.get(path.group(1), DERIVED)
        return [Rule("ClientResult", "client", reqs, RULES["ClientResult"].basis)]
    if error.startswith("expected the whole response to be rejected"):
        return [Rule("ClientResult", "client", REFUSALS, RULES["ClientResult"].basis)]
    if error == "no result":
        return [RULES["ResultMissing"]]
    if error.startswith("the client reported a failure"):
        return [RULES["ClientFailed"]]
    return [UNCLASSIFIED]


# a failed row that names no rule: charged to neither side, every requirement it
# exercises undetermined
UNCLASSIFIED = Rule("Unclassified", "either", ("*",), "the row names no rule")


def _staged(rule: Rule, error: dict[str, Any]) -> Rule:
    """A contract rule judged by the side its error's stage names."""
    if rule.judges != "stage":
        return rule
    stage = str(error.get("stage", ""))
    side = "server" if stage.startswith(("server", "receipts")) else "client"
    side = side if stage.startswith(("server", "client", "receipts")) else "run"
    return Rule(rule.name, side, rule.requirements, f"the {side} (stage {stage})")


def placed(rule: Rule, row: dict[str, Any], sides: dict[str, str], server_wide: bool) -> Rule:
    """The rule as the whole record places it:

    - a known failure whose known-failures.json entry names an adapter (an outside
      SDK, its finding cited to the spec) is charged to the side that adapter held;
    - a rule that blames the client on the server's own record, on a row that failed
      with every client of that server, is undetermined: the server is the common
      factor, and its record is the evidence in question.
    """
    known = row.get("known")
    named = known.get("adapter") if isinstance(known, dict) else None
    if isinstance(known, dict) and named and rule.judges in ("client", "server", "either"):
        held = [role for role, adapter in sides.items() if adapter == named]
        if len(held) == 1:
            basis = f"the known-failures.json entry cites {named} ({held[0]}): {known['pattern']}"
            return Rule(rule.name, held[0], rule.requirements, basis)
    if server_wide and rule.judges == "client" and rule.basis == SERVER_RECORD:
        basis = (
            "the row failed with every client of this server: its record, the evidence, "
            "is in question"
        )
        return Rule(rule.name, "either", rule.requirements, basis)
    return rule
