"""One typed home for results: statuses, error classes, row verdicts, outcomes; JSON in and out.

Every suite reports in these types, and a report read back from disk becomes
the same types again (`Outcome.from_json`), so reports can be combined,
compared and re-rendered. The error classes are one table (`ERRORS`), the
source of docs/errors.md (`python -m interop errors` prints it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from interop.grid import Combination
from interop.jsonvalue import dumps_compact


class Status(StrEnum):
    """The status of a row or a combination. Only `passed` is a pass."""

    PASSED = "passed"
    FAILED = "failed"
    UNSUPPORTED = "unsupported"  # the implementation says it does not do this yet
    INAPPLICABLE = "inapplicable"  # the suite's rules exclude it (with a reason)
    NOT_RUN = "not-run"  # it could have run but did not (interrupted, an earlier stage failed)
    # a failure listed in known-failures.json (interop/known.py): neither a pass nor a failure
    KNOWN_FAILING = "known-failing"
    # failed, then passed when run again alone (--recheck) or in another repetition
    # (--repeat): a verdict that cannot be trusted, never a pass
    FLAKY = "flaky"


STATUSES = tuple(Status)


@dataclass(frozen=True)
class ErrorKind:
    name: str
    meaning: str
    action: str


def _kinds(*rows: tuple[str, str, str]) -> dict[str, ErrorKind]:
    return {name: ErrorKind(name, meaning, action) for name, meaning, action in rows}


ERRORS: dict[str, ErrorKind] = _kinds(
    (
        "ManifestInvalid",
        "An adapter.json does not satisfy schemas/contract/adapter.schema.json.",
        "Fix the field the message names; `python -m interop smoke --adapter-dir PATH` checks it.",
    ),
    (
        "ServerSpawn",
        "The server command could not be started (not found, not executable).",
        "Run `nox -s build` (or `python -m interop build --adapter-dir PATH`); check the command.",
    ),
    (
        "ServerExit",
        "The server exited before it was ready, or while clients still needed it.",
        "Read the server log named in the message; the exit status or signal is given.",
    ),
    (
        "StartupTimeout",
        "The server wrote no readiness file within --startup-timeout.",
        "Check that it writes the readiness file atomically after listening (docs/CONTRACT.md).",
    ),
    (
        "ReadinessMalformed",
        "The readiness file is not valid JSON or fails schemas/contract/readiness.schema.json.",
        "Write {endpoint, controlEndpoint, pid} with loopback URLs.",
    ),
    (
        "HealthFailed",
        "GET /health on the control listener did not answer {ready: true}.",
        "Serve the control listener before writing the readiness file.",
    ),
    (
        "ResetFailed",
        "POST /reset failed on a server that declares serverReuse.",
        "Implement /reset or drop extensions.serverReuse from the manifest.",
    ),
    (
        "ControlMalformed",
        "A control answer fails schemas/contract/control.schema.json.",
        "Answer exactly the shapes docs/CONTRACT.md gives for the control listener.",
    ),
    (
        "ClientSpawn",
        "The client command could not be started.",
        "Build the adapter; check the command in adapter.json.",
    ),
    (
        "ClientTimeout",
        "The client did not exit within --timeout (its watchdog).",
        "Look for a hang in its log; raise --timeout for a slow machine.",
    ),
    (
        "ClientExit",
        "A blind client exited with a nonzero status or was killed by a signal.",
        "Read the client log; a blind client exits 0 once it has written its report.",
    ),
    (
        "ReportMissing",
        "The client wrote no report file.",
        "Write the report to config.reportFile before exiting.",
    ),
    (
        "ReportMalformed",
        "The report is not valid JSON or fails schemas/contract/client-report.schema.json.",
        "Write {language, results: [{id, status, actual?, error?}]}.",
    ),
    (
        "LanguageMismatch",
        "The report's language is not the manifest's.",
        "Report config.language (or the manifest's language).",
    ),
    (
        "ResultUnknownId",
        "The report has a result for an id the scenario file does not have.",
        "Report exactly the scenario ids of config.scenarioFile.",
    ),
    (
        "ResultDuplicateId",
        "The report has two results for one id.",
        "Report each scenario once.",
    ),
    (
        "ResultMissing",
        "The report has no result for some scenario ids.",
        "Report every scenario, with status unsupported where it is not implemented.",
    ),
    (
        "ReceiptsUnavailable",
        "The server's receipts could not be read (GET /receipts failed).",
        "Serve GET /receipts, or declare receiptLog and write the log.",
    ),
    (
        "ReceiptMalformed",
        "A receipt line or answer fails schemas/contract/receipt-line.schema.json.",
        "Write one compact {kind, message} line per receipt.",
    ),
    (
        "ReceiptUnknown",
        "The server received a request with an id the scenario file does not have.",
        "The client must send each scenario's request unchanged.",
    ),
    (
        "ReceiptMismatch",
        "The server received a request that differs from the scenario's.",
        "The client must send each request exactly as the scenario file gives it.",
    ),
    (
        "ReceiptDuplicate",
        "The server received one request twice.",
        "Send each request exactly once.",
    ),
    (
        "ReceiptMissing",
        "The client reported a row whose request the server never received.",
        "Send every request the client reports (or report it unsupported).",
    ),
    (
        "ProcessLeak",
        "A process was still running after its owner finished.",
        "Kill the whole process tree you start (stdio servers included) before exiting.",
    ),
    (
        "ClientResult",
        "A core row's actual differs from its expected outcome: the client derived another "
        "result from the scripted response (the path is named).",
        "Apply the response as docs/scenarios.md's composition rules say, for the path named.",
    ),
    (
        "ClientFailed",
        "The client reported a row failed, and no capture shows what its server answered (HTTP), "
        "so the evidence cannot tell which side broke the exchange.",
        "Read the client's error and the server's log; the row's repro bundle has the frames.",
    ),
    (
        "ClientFailedOnScript",
        "The client reported a row failed although the capture (the stdio relay) shows its "
        "server answered the scripted response unchanged.",
        "Accept and apply the scripted response (docs/scenarios.md); the client's error says "
        "why it refused.",
    ),
    (
        "ClientCredential",
        "The capture of a re-run shows the client sent its request without the run's valid "
        "credential for the auth mode, and the server refused it.",
        "Send the configured credential (docs/AUTH.md) on every request.",
    ),
    (
        "ServerRefusedCredential",
        "The capture of a re-run shows the server refused (HTTP 4xx/5xx) a request that carried "
        "the run's valid credential for the auth mode.",
        "Accept the mode's valid credential (docs/AUTH.md): check the issuer, audience and keys "
        "the server config names.",
    ),
    (
        "ServerRefused",
        "The capture of a re-run shows the server answered the scripted request with an HTTP "
        "error in a mode without a credential.",
        "Answer each scenario's request with its response (docs/CONTRACT.md, 'Replies').",
    ),
    (
        "ServerAltered",
        "The server answered something other than the row's scripted response, so the row proves "
        "nothing of the client.",
        "Send each scenario's response unchanged (docs/CONTRACT.md, 'Replies').",
    ),
    (
        "RecordContradictsWire",
        "The re-run's capture contradicts the server's own record (its receipt entries): an "
        "entry no exchange carried, an exchange it answered that the record lacks, or two "
        "entries in an order the exchanges rule out. The rules that read that record are "
        "not charged to the client.",
        "Record each receipt as it happens (docs/LIFECYCLE.md, 'Control'): `received` on "
        "arrival, `replied` just before writing the answer, each mark as posted.",
    ),
    (
        "ReportedRecordContradictsWire",
        "Over stdio the client reports its server's record; the stdio relay's lines contradict "
        "it (a received message no line carried). Either the server recorded it wrongly or "
        "the client reported it wrongly.",
        "Record what was read from stdin unchanged (server); report the server's entries "
        "unchanged (client).",
    ),
    (
        "LifecycleResult",
        "A lifecycle row's actual differs from its expected outcome (the path is named).",
        "Follow docs/LIFECYCLE.md for the step the path points to.",
    ),
    (
        "AttemptMismatch",
        "A request was received or replied a different number of times than the steps sent it.",
        "Send each `send` step once; a bypassSDK replay is one more send.",
    ),
    (
        "AttemptOrder",
        "A reply was recorded before its request's receipt.",
        "Record `received` before holding and `replied` just before writing.",
    ),
    (
        "ReceivedMismatch",
        "The server received a request other than the scenario's (after ref rebinding).",
        "Send each request unchanged except for upload aliases rebound to receiver refs.",
    ),
    (
        "ReceivedInvalid",
        "A received request or observation fails its canonical schema.",
        "Validate every outgoing message with the canonical schemas.",
    ),
    (
        "UploadBeforeUse",
        "A message referred to a body ref before a 201 upload of it.",
        "Finish (and confirm) every upload before the message that refers to it.",
    ),
    (
        "UploadMismatch",
        "An upload step has no receipt declaring its size and sha256, or its receipt has "
        "another status, or a receipt declares what no step does (the row's; outside every "
        "upload row, the combination's).",
        "Upload each step's bytes once, declaring the step's size and sha256.",
    ),
    (
        "RefReused",
        "A receiver gave one ref to two different bodies.",
        "Allocate a new ref for every new body (identical bytes may share one).",
    ),
    (
        "MilestoneMismatch",
        "The accepted or cancelled marks are not the published or cancelled ids.",
        "Mark accepted when publishing and cancelled when cancelling, once each.",
    ),
    (
        "AcquiredMismatch",
        "The acquired marks are not the first takes of replies the steps call for.",
        "Mark acquired exactly when a receive stages a pending request's reply.",
    ),
    (
        "AcquiredOrder",
        "A reply was marked acquired before the server replied.",
        "Mark acquired only after the reply arrived.",
    ),
    (
        "AcceptedOrder",
        "A request was marked accepted before its reply was taken.",
        "Publish only a staged reply (or a fail-open after the request was received).",
    ),
    (
        "CancelOrder",
        "A cancellation is out of order with the request's receipt, reply or acquisition.",
        "Mark cancelled at the cancel step, in step order.",
    ),
    (
        "StrayFrame",
        "An emitted frame was not dropped and marked discarded before the live reply.",
        "Drop frames with no pending request, mark them, and only then go on.",
    ),
    (
        "LateReplyOrder",
        "A cancelled request's late reply is out of order with the next request's.",
        "Keep the cancelled request's late reply apart from the live one.",
    ),
    (
        "ObservationMismatch",
        "The hooks/observe notifications received are not the ones the steps call for.",
        "Send the settled effective event, the step's items, refs rebound, once per step.",
    ),
    (
        "ObservationOrder",
        "An observation arrived before its boundary was accepted or cancelled.",
        "Observe only after settlement.",
    ),
    (
        "ChainReceipts",
        "A chain's receipts hold a kind a chain never has.",
        "A chain records received, replied, cancelled, chain-settled, observed, observer-blocked.",
    ),
    (
        "ChainRequests",
        "A chain's calls are not chainProof.requests (state carried forward, projections).",
        "Carry the permission forward and project items per subscription (docs/LIFECYCLE.md).",
    ),
    (
        "ChainCalls",
        "A chain's calls were not serial (a call before the previous reply).",
        "Call interceptors one after another.",
    ),
    (
        "ChainObservations",
        "A chain's notifications are not chainProof.observations.",
        "Notify uncalled interceptors and observers with the settled input and their projection.",
    ),
    (
        "ChainSettlement",
        "A chain has no single chain-settled mark, or observed before it settled.",
        "Mark chain-settled once, after the last reply (or the interrupt), before notifying.",
    ),
    (
        "ChainInterrupt",
        "An interrupted chain is out of order or observed something.",
        "Cancel and settle before releasing the first call; observe nothing.",
    ),
    (
        "HeldObservers",
        "Held observers were not marked observer-blocked after settlement, or marked unheld.",
        "Mark observer-blocked once per held notification, after chain-settled.",
    ),
    (
        "ProbeFailed",
        "A receiver probe got another answer than the contract's.",
        "See the probe's row: docs/LIFECYCLE.md lists each receiver rule.",
    ),
    (
        "CatalogueResult",
        "A catalogue row's actual (sent, registrations) differs from its expected.",
        "Follow docs/CATALOGUE.md for the step the path points to (notify, register).",
    ),
    (
        "DiscoveryCount",
        "The server did not record exactly one hooks/capabilities exchange, first.",
        "Send one hooks/capabilities request before the first step; record it as discovery.",
    ),
    (
        "DiscoveryInvalid",
        "The discovery request or response is schema-invalid, or their ids differ.",
        "Send the canonical request; answer it with the same id and a valid manifest.",
    ),
    (
        "DiscoveryMismatch",
        "The client's reported discovery differs from the server's recorded response.",
        "Report the response exactly as received.",
    ),
    (
        "ManifestMismatch",
        "The discovered manifest is not the catalogue one (strict) or fails the upstream checks.",
        "Answer with the manifest docs/CATALOGUE.md states.",
    ),
    (
        "DeliveryMismatch",
        "A scenario's receipts are not the expected observed/rejected verdicts, in order.",
        "Judge each notification: schema (400), lineage (409), else observed (docs/CATALOGUE.md).",
    ),
    (
        "ReceiptCount",
        "The server recorded more deliveries than the scenarios sent.",
        "Send each notify/rawNotify message once; record one verdict per notification.",
    ),
    (
        "CaptureMissing",
        "No upload reached the isolation suite's capture origin for the case (nothing, or only "
        "a failed TLS handshake): a missing upload never counts as isolation.",
        "Send the step's upload to its own upload.endpoint (a step's upload block replaces the "
        "config's), over HTTPS with its upload.tls.caFile; the message names a failed handshake.",
    ),
    (
        "CaptureRepeated",
        "More than one request reached the capture origin for one upload step.",
        "Send each upload step once; never retry an upload that was answered.",
    ),
    (
        "CaptureTarget",
        "The upload was not a POST to the step's upload.endpoint exactly (path and query).",
        "Use the configured endpoint as it is: no route added, the query kept.",
    ),
    (
        "CaptureFraming",
        "The upload's framing broke a rule: not exactly one Content-Length, Content-Type and "
        "AHP-Content-SHA256, a Transfer-Encoding or Content-Encoding, a non-canonical length or "
        "one over 1 MiB, a type other than application/octet-stream, or a body shorter than it.",
        "Send raw octets with one exact Content-Length, one Content-Type: "
        "application/octet-stream and one AHP-Content-SHA256; no chunking, no coding.",
    ),
    (
        "CaptureIntegrity",
        "The declared AHP-Content-SHA256 is not the hash of the bytes received, or the bytes "
        "are not the upload step's.",
        "Send the step's decoded bytes unchanged and declare their lowercase hex SHA-256.",
    ),
    (
        "CaptureIdentity",
        "The upload carried an AHP-Subscription or AHP-Content-Ref header: the sender named a "
        "subscription or chose a ref (the receiver allocates refs from the credential's scope).",
        "Send no subscription or ref header on an upload.",
    ),
    (
        "CaptureLeak",
        "A credential the step's upload block does not configure reached the upload origin: "
        "Authorization, Proxy-Authorization or Cookie, or a TLS client certificate (the message "
        "says whose: the event's bearer, the upload token, the event server's cookie...).",
        "Resolve upload credentials from the upload block alone: no event token, no config "
        "upload token when a step's block has none, no cookie jar, no event client certificate.",
    ),
    (
        "RedirectFollowed",
        "The sender followed the upload origin's 307: the redirect target received a request.",
        "Never follow a redirect on an upload; report the 3xx status as the upload's status.",
    ),
    (
        "UploadStatusMismatch",
        "The client's uploadStatuses are not the one status its upload origin answered (201, or "
        "307 from the redirecting origin).",
        "Report the HTTP status of each upload step as received, once per step.",
    ),
    (
        "AuthAccepted",
        "A server served a request whose credential is missing, forged or malformed.",
        "Refuse it before reading the body: docs/AUTH.md names the rule each case breaks.",
    ),
    (
        "AuthStatus",
        "A server refused a bad credential with a status other than the case allows.",
        "Answer 401 (or 403; 400 or 431 only for a malformed header).",
    ),
    (
        "AuthUnnamed",
        "A server ended the connection without an HTTP status or a TLS alert.",
        "Refuse in the handshake with an alert, or after it with HTTP 401/403; never just close.",
    ),
    (
        "ReceiptChanged",
        "A refused request reached the application: the server's receipts changed.",
        "Authenticate before anything is recorded or dispatched.",
    ),
    (
        "ServerUnhealthy",
        "The server stopped answering GET /health after a probe.",
        "Survive every bad request and keep serving.",
    ),
    (
        "PositiveFailed",
        "An honest request (a positive control) was not served as the scenario says.",
        "Accept every valid credential form (docs/AUTH.md), then answer as in the core suite.",
    ),
    (
        "ClientSentToUntrusted",
        "A client sent a request (or its secret) to a peer it must not trust.",
        "Verify the server certificate and host; never follow token redirects or plain HTTP.",
    ),
    (
        "ClientClaimedDelivery",
        "A client reports a row delivered though the peer it had to refuse received nothing.",
        "Report a refused peer as the row's transport failure.",
    ),
    (
        "ClientPositiveFailed",
        "A client did not deliver to the honest peer that controls its refusal rows.",
        "Deliver the row once to a trusted peer (docs/AUTH.md, client rows).",
    ),
    (
        "CookieNotSet",
        "In the isolation suite's cookie case the upload came before the event server had "
        "answered with its cookie, so the case proves nothing.",
        "Run the steps in order: the intercept before the upload step is answered first.",
    ),
    (
        "HostResult",
        "A contract v1 compaction-wire host reported a case's outcome (instructions, summary, "
        "generated, applied, failures, messages, downstream) other than the case expects.",
        "Apply each supplier's reply as docs/COMPACTION.md ('A contract v1 host') and the core "
        "rules say; the row's wire diagnostics show each reply.",
    ),
    (
        "HostWire",
        "A contract v1 compaction-wire host's calls, as they crossed the harness's gate, differ "
        "from the case plan or the rules of a compaction request (count, supplier, ids, "
        "capabilities, after-event fields, schema), or carried no supplier's token.",
        "Make one hooks/intercept call per supplier, in order, with its token, carrying the "
        "current text inline (docs/COMPACTION.md, 'A contract v1 host').",
    ),
    (
        "HostTrace",
        "A contract v1 compaction-wire host's own trace differs from the calls that crossed "
        "the gate.",
        "Trace each call's supplier, request and response as sent and received.",
    ),
    (
        "HostReceipts",
        "The server recorded other calls of a case than those it answered through the gate.",
        "Record each served compaction call once, before its reply (docs/COMPACTION.md).",
    ),
    (
        "CompactionResult",
        "A compaction row's actual (outcome, summary, provenance, calls) differs from expected.",
        "Follow docs/COMPACTION.md, steps 1 to 5, for the path named.",
    ),
    (
        "NegativeRecorded",
        "A request the server had to refuse with -32602 was recorded.",
        "Validate before recording; refuse invalid compaction requests without a receipt.",
    ),
    (
        "NegativeAccepted",
        "A request the server had to refuse did not get the JSON-RPC error -32602.",
        "Answer an invalid request with error -32602 (docs/COMPACTION.md, the server).",
    ),
    (
        "ElicitationOutcome",
        "An elicitation wire step's outcome (accepted or refused, HTTP status, stdio error, "
        "the no-effect reply) differs from expected.",
        "Apply the receiver's checks of docs/ELICITATION.md in order; refuse with 400 (409 for "
        "unknown content) or -32602 over stdio.",
    ),
    (
        "ElicitationReceipts",
        "The receiver's elicitation receipts for a row differ from expected: a refused message "
        "was recorded, an accepted one is missing, or a summary differs.",
        "Record only accepted events, with the summaries of docs/ELICITATION.md (bodies as "
        "sent, provenance from authenticatedSource).",
    ),
    (
        "ElicitationUploads",
        "A row's upload receipts do not match its upload steps (count, status, declared size "
        "or digest, the ref the client bound), or different bytes share a ref.",
        "Record every upload attempt as sent; allocate a new ref for different bytes.",
    ),
    (
        "ElicitationResult",
        "An atomic elicitation row's actual (request, result, published, provenance) differs "
        "from expected.",
        'Follow docs/ELICITATION.md, "What the host (client) does for an atomic row".',
    ),
    (
        "Cancelled",
        "The run was interrupted before this finished.",
        "Run it again.",
    ),
    (
        "HarnessError",
        "The harness itself failed (a bug); its traceback is in NAME-logs/harness.log.",
        "Report it with harness.log attached.",
    ),
)


class UnknownErrorClass(ValueError):
    pass


_STAGE_SET = re.compile(r"\[([^\]]+)\]$")


def errors_covered(stages: list[str], rows: list[tuple[str, str]]) -> bool:
    """Whether known-failing (or flaky) rows stand for a combination's errors (rows: (set,
    status)). An error whose stage names a set (`client[catalogue]`; a part of it run
    apart, `client[catalogue.row+2]`) is covered when that set has a known-failing row
    and none that passed; one that names no set of the rows, when the whole
    combination has a known-failing row and none that passed."""
    for stage in stages:
        found = _STAGE_SET.search(stage)
        name = found.group(1) if found else None
        mine = [
            status
            for set_name, status in rows
            if name is not None and (name == set_name or name.startswith(set_name + "."))
        ]
        scope = mine or [status for _, status in rows]
        standing = Status.KNOWN_FAILING in scope or Status.FLAKY in scope
        if not standing or Status.PASSED in scope:
            return False
    return True


@dataclass(frozen=True)
class CombinationError:
    """A named failure of a whole combination at one stage."""

    stage: str
    error_class: str
    message: str

    def __post_init__(self) -> None:
        if self.error_class not in ERRORS:
            raise UnknownErrorClass(f"{self.error_class!r} is not in interop.results.ERRORS")

    def as_json(self) -> dict[str, str]:
        return {"stage": self.stage, "class": self.error_class, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CombinationError:
        return cls(data["stage"], data["class"], data["message"])


def digest(value: Any) -> str:
    """A short, stable fingerprint of a JSON value (what a passed row derived)."""
    return hashlib.sha256(dumps_compact(value).encode("utf-8")).hexdigest()[:12]


ALLOCATED = "<allocated at run time>"


def masked(value: Any, keys: frozenset[str]) -> Any:
    """`value` with the values of `keys` (at any depth) replaced by `ALLOCATED`."""
    if isinstance(value, dict):
        return {k: ALLOCATED if k in keys else masked(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, keys) for v in value]
    return value


@dataclass
class RowVerdict:
    set: str
    id: str
    status: Status
    expected: Any = None
    actual: Any = None
    adapter_status: str | None = None
    error: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # keys of `actual` whose values a peer allocates afresh in every run (an upload's
    # ref): left out of a passed row's digest, so the same inputs give the same report
    allocated: frozenset[str] = frozenset()

    def as_json(self, *, full: bool = False) -> dict[str, Any]:
        """A passed row keeps only a digest of its actual unless `full`."""
        row: dict[str, Any] = {"id": self.id, "status": str(self.status)}
        if self.status == Status.PASSED and not full:
            row["digest"] = digest(masked(self.actual, self.allocated))
        else:
            row["actual"] = self.actual
            row["adapterStatus"] = self.adapter_status
        if self.error is not None:
            row["error"] = self.error
        if self.diagnostics:
            row["diagnostics"] = self.diagnostics
        return row

    @classmethod
    def from_json(cls, set_name: str, data: dict[str, Any], expected: Any = None) -> RowVerdict:
        return cls(
            set=set_name,
            id=data["id"],
            status=Status(data["status"]),
            expected=expected,
            actual=data.get("actual"),
            adapter_status=data.get("adapterStatus"),
            error=data.get("error"),
            diagnostics=dict(data.get("diagnostics", {})),
        )


@dataclass
class Outcome:
    """Everything the report needs about one combination in one suite."""

    suite: str
    combination: Combination
    rows: list[RowVerdict] = field(default_factory=list)
    errors: list[CombinationError] = field(default_factory=list)
    seconds: float = 0.0
    inapplicable: str | None = None  # the suite's reason, when it excludes the combination
    not_run: str | None = None  # why it never ran, when it could have
    skipped_rows: int = 0  # rows not judged (inapplicable or not run)
    # the upstream contract shapes read from its adapters (what was read -> which shape)
    shapes: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        if self.inapplicable is not None:
            return Status.INAPPLICABLE
        if self.not_run is not None:
            return Status.NOT_RUN
        if any(r.status == Status.FAILED for r in self.rows) or not self.rows:
            return Status.FAILED
        known = any(r.status == Status.KNOWN_FAILING for r in self.rows)
        rows = [(r.set, str(r.status)) for r in self.rows]
        if self.errors and not errors_covered([e.stage for e in self.errors], rows):
            return Status.FAILED
        if any(r.status == Status.FLAKY for r in self.rows):
            return Status.FLAKY
        if known:
            return Status.KNOWN_FAILING
        if any(r.status == Status.UNSUPPORTED for r in self.rows):
            return Status.UNSUPPORTED
        if any(r.status == Status.NOT_RUN for r in self.rows):
            return Status.NOT_RUN
        if not any(r.status == Status.PASSED for r in self.rows):
            return Status.INAPPLICABLE  # the suite's rules exclude every row it has
        return Status.PASSED  # rows a suite excludes (inapplicable) are counted apart


def error_table() -> str:
    """The error classes as a Markdown table: the body of docs/errors.md."""
    lines = ["| class | what happened | what to do |", "|---|---|---|"]
    lines += [f"| `{k.name}` | {k.meaning} | {k.action} |" for k in ERRORS.values()]
    return "\n".join(lines)


def rows_of(document: dict[str, Any], combination: dict[str, Any]) -> list[dict[str, Any]]:
    """Every row of one combination, expanded: set, id, status, expected, actual or digest."""
    suite = combination["suite"]
    mine = [s for s in document["sets"] if s["suite"] == suite]
    expected = {s["name"]: {row["id"]: row["expected"] for row in s["rows"]} for s in mine}
    ids = {s["name"]: [row["id"] for row in s["rows"]] for s in mine}
    out: list[dict[str, Any]] = []
    for set_name, result in combination["results"].items():
        whole = {row["id"]: row for row in result["rows"]}
        for row_id, digest in zip(ids.get(set_name, []), result["digests"], strict=False):
            row = whole.get(row_id)
            if row is None:
                if digest is None:  # a row of the set this combination never had
                    continue
                row = {"id": row_id, "status": "passed", "digest": digest}
            out.append({"set": set_name, **row, "expected": expected[set_name].get(row_id)})
    return out
