"""A contract v1 compaction-wire host before our servers (docs/COMPACTION.md, "A
contract v1 host"; upstream source: `interop/compaction_wire_matrix.py@8f91ac41`
in the spec repository).

Upstream's host (`<cmd> host`, the SDK's compaction-wire adapter) reads no
scenario file: it takes case plans on stdin, `{cases: [{name, before: [{supplier,
failurePolicy}], after}], schema, transport, endpoint, credentials: {supplier:
{token, uploadToken}}, receiverCommand}`, composes every request itself, and
prints per case `{name, result, trace, downstream}`. Each supplier is one
`hooks/intercept` call, made over HTTP with that supplier's bearer token, or over
stdio by spawning `receiverCommand + ["stdio", supplier]` for the one call.

The set `scenarios/compaction-host.json` holds those plans with each supplier's
reply and what the host must report, written by hand. Here our server gets the
replies as its `responseSequences` (the n-th call of a boundary, the n-th
supplier's effects) and the host gets the plans without them. Between the two
sits the gate, a listener of the harness: it takes a supplier's token and
forwards the call to our server with the run's bearer token in its place, or
(over stdio) takes the call from the relay the host spawned for it
(runtime/line_relay.py) and writes it to our server's stdin. The bytes go
through unchanged both ways, and the gate records every call as it was (wire
evidence). Nothing here judges: `verify_host` compares what the host reported,
what crossed the gate and what our server recorded with the set's expectations.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from interop.contract.manifest import Adapter
from interop.jsonvalue import first_difference, shown, strict_equal
from interop.results import CombinationError, RowVerdict, Status
from interop.runtime import line_relay, listener, process
from interop.runtime.context import RunContext
from interop.runtime.post import PostFailed, post
from interop.runtime.server import Server, log_tail
from interop.schema import canonical
from interop.suites.common import conclude
from interop.suites.compaction.scenarios import BOUNDARIES, CompactionRow
from interop.suites.compaction.upstream import SOURCE, command_of
from interop.suites.lifecycle.verify import Entries, check_entries
from interop.suites.v1fixture import run_plan

FORM = "host-plans"
REPORT_SHAPE = (
    "contract v1 compaction-wire host: `host` over upstream's case plans, printing "
    "[{name, result, trace, downstream}]; its calls read where they crossed the harness's gate"
)
HOST_TIMEOUT = 240.0  # seconds: upstream's driver gives the host as long
STDIO_CALL_TIMEOUT = 20.0  # seconds: upstream's host gives a stdio call as long
RELAY_PATH = "/relay/"  # the gate's route for the relay's calls: /relay/<supplier>
RELAY_SECRET = "AHP-Relay-Secret"  # the header the relay's calls present the secret in
TARGET = {"before": "instructions", "after": "summary"}
NOT_A_V1_HOST = (
    "upstream's compaction-wire case plans, which a contract v1 host (`host`) takes; "
    "our hosts run the rows of scenarios/compaction.json"
)
BOTH_V1 = (
    "both sides are contract v1 SDKs: upstream's own compaction_wire_matrix.py pairs a host "
    "with a receiver; here a v1 host runs against our servers"
)
HOST_ONLY_BEARER = (
    "contract v1's compaction-wire host presents one bearer token per supplier "
    f"({SOURCE}): over HTTP it runs with bearer only"
)
NO_UPLOADS = (
    "the compaction suite's servers take no uploads: compaction text is inline "
    "(docs/COMPACTION.md; upstream compaction_wire_matrix.py@8f91ac41: 'Inline text requires "
    "no attachment upload on either transport')"
)


# The set -------------------------------------------------------------------------


def server_rows(rows: list[CompactionRow]) -> list[dict[str, Any]]:
    """Our server's rows: the n-th call of `<case>:<boundary>` is answered with the
    n-th supplier's effects, as a JSON-RPC result sent unchanged."""
    return [
        {
            "id": row.id,
            "responseSequences": {
                boundary: [
                    {
                        "jsonrpc": "2.0",
                        "id": f"{row.id}:{boundary}",
                        "result": {"protocolVersion": "draft", "effects": s["effects"]},
                    }
                    for s in row.raw[boundary]
                ]
                for boundary in BOUNDARIES
                if row.raw[boundary]
            },
        }
        for row in rows
    ]


def plan_cases(rows: list[CompactionRow]) -> list[dict[str, Any]]:
    """The host's case plans: the suppliers without their replies."""
    return [
        {
            "name": row.id,
            **{
                boundary: [
                    {"supplier": s["supplier"], "failurePolicy": s["failurePolicy"]}
                    for s in row.raw[boundary]
                ]
                for boundary in BOUNDARIES
            },
        }
        for row in rows
    ]


# The gate ------------------------------------------------------------------------


@dataclass
class Call:
    """One call as it crossed the gate: the supplier it was made for, the path, the
    request's bytes, and the status and bytes it was answered with."""

    scope: str | None
    path: str
    request: bytes
    status: int
    reply: bytes

    def describe(self) -> str:
        text = self.reply.decode("utf-8", "replace")
        return f"{self.scope or '?'} {self.path} -> {self.status} {shown(text, 200)}"

    def json(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            return None


class Gate:
    """The harness's listener between a v1 host and our server (see the module's
    text). Every call is recorded in `calls`, in the order it came."""

    def __init__(
        self, ctx: RunContext, server: Server, credentials: dict[str, dict[str, str]], home: Path
    ):
        self.ctx = ctx
        self.server = server
        # a supplier's event token, and its upload token for /upload
        self.scopes = {c["token"]: scope for scope, c in credentials.items()}
        self.upload_scopes = {c["uploadToken"]: scope for scope, c in credentials.items()}
        self.secret = secrets.token_urlsafe(24)
        ctx.redactor.add(self.secret)
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._http: listener.Listener | None = None
        self.endpoint = ""
        self.config = home / "gate.json"

    def record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def start(self) -> None:
        self._http = listener.serve(self.answer)
        self.endpoint = self._http.url()
        line_relay.write_config(
            self.config,
            url=self.endpoint + RELAY_PATH,
            headers={RELAY_SECRET: self.secret, "Content-Type": "application/json"},
            words=["stdio"],
            label="host_relay",
            peer="gate",
        )

    def answer(self, request: listener.Request) -> listener.Reply:
        """A POST of the host (`serve`) or of its relay (`relay`), answered as JSON."""
        body = request.body or b""
        if request.path.startswith(RELAY_PATH):
            status, reply = self.relay(request.path, request.headers.get(RELAY_SECRET), body)
        else:
            given = request.headers.get_all("Authorization")
            status, reply = self.serve(request.path, given, body)
        return listener.Reply(status, reply)

    def serve(self, path: str, authorization: list[str] | None, body: bytes) -> tuple[int, bytes]:
        """An HTTP call of the host: an upload (refused: NO_UPLOADS) or an intercept
        forwarded to our server with the run's credential in place of the supplier's."""
        given = authorization or []
        scope = None
        if len(given) == 1 and given[0].startswith("Bearer "):
            tokens = self.upload_scopes if path == "/upload" else self.scopes
            scope = tokens.get(given[0].removeprefix("Bearer "))
        if path == "/upload":
            reply = json.dumps({"error": NO_UPLOADS}).encode()
            self.record(Call(scope, path, body, 404, reply))
            return 404, reply
        if path != "/hooks/intercept" or self.server.transport != "http":
            where = f"no {path} here (transport {self.server.transport})"
            reply = json.dumps({"error": where}).encode()
            self.record(Call(scope, path, body, 404, reply))
            return 404, reply
        if scope is None:
            reply = json.dumps({"error": "no supplier has this bearer token"}).encode()
            self.record(Call(None, path, body, 401, reply))
            return 401, reply
        status, reply = _post(self.ctx, self.server.endpoint, body)
        self.record(Call(scope, path, body, status, reply))
        return status, reply

    def relay(self, path: str, secret: str | None, body: bytes) -> tuple[int, bytes]:
        """A stdio call the host's relay carried: written to our server's stdin, its
        answer line returned."""
        if secret is None or not hmac.compare_digest(secret, self.secret):
            return 403, json.dumps({"error": "not this run's relay"}).encode()
        scope = unquote(path.removeprefix(RELAY_PATH))
        answer = self.server.exchange(body, answer=True, timeout=STDIO_CALL_TIMEOUT)
        if answer is None:
            reply = f"our server answered nothing in {STDIO_CALL_TIMEOUT:.0f}s".encode()
            self.record(Call(scope, "stdio", body, 504, reply))
            return 504, json.dumps({"error": reply.decode()}).encode()
        self.record(Call(scope, "stdio", body, 200, answer))
        return 200, answer

    def receiver_command(self) -> list[str]:
        """What the host spawns per stdio call (+ `stdio <supplier>`)."""
        return line_relay.command(self.config)

    def stop(self) -> None:
        if self._http is not None:
            self._http.close()


def _post(ctx: RunContext, endpoint: str, body: bytes) -> tuple[int, bytes]:
    """POST an intercept to our server with the run's bearer token."""
    headers = {
        "Authorization": f"Bearer {ctx.trust.bearer_token}",
        "Content-Type": "application/json",
    }
    try:
        status, reply, _ = post(endpoint, body, headers, 30.0, cafile=str(ctx.trust.path("ca.pem")))
    except PostFailed as exc:
        return 502, json.dumps({"error": f"our server: {exc}"}).encode()
    return status, reply


# The host ------------------------------------------------------------------------


def run_host(
    ctx: RunContext, client: Adapter, plan: dict[str, Any], home: Path, set_name: str
) -> tuple[Any, list[CombinationError]]:
    """The v1 host over the plan: its printed list, or the combination's error."""
    stage = f"client[{set_name}]"
    found = command_of(client)
    if isinstance(found, str):
        return None, [CombinationError(stage, "ClientSpawn", found)]
    argv, env = found
    plan_file = home / "host-plan.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    log = home / "client.log"
    ran = run_plan(ctx, client, [*argv, "host"], env, plan_file, log, HOST_TIMEOUT)
    if ran.failed is not None:
        kind = {"spawn": "ClientSpawn", "cancelled": "Cancelled"}.get(ran.failed, "ClientTimeout")
        why = ran.why or f"the host ran past {HOST_TIMEOUT:.0f}s"
        return None, [CombinationError(stage, kind, why)]
    text = ran.printed
    if ran.code != 0:
        tail = log_tail(ctx, log, 3)
        said = f"the host {process.describe_exit(ran.code or 0)}{tail}"
        return None, [CombinationError(stage, "ClientExit", said)]
    try:
        outputs = json.loads(text)
    except ValueError:
        outputs = None
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        return None, [
            CombinationError(
                stage,
                "ReportMalformed",
                f"the host printed {shown(text, 200)}, not a list of {{name, result, trace, "
                f"downstream}} ({SOURCE})",
            )
        ]
    return outputs, []


# The verdict ---------------------------------------------------------------------


def _text(parts: Any) -> str | None:
    """The text of a list of text parts (their texts joined), None when it is not one.
    In the host's own report (not on the wire) a string is its text: upstream's host
    reports strings before 8f91ac41 and text parts since."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list) or not all(
        isinstance(p, dict) and p.get("kind") == "text" and isinstance(p.get("text"), str)
        for p in parts
    ):
        return None
    return "".join(p["text"] for p in parts)


def _event(request: Any) -> dict[str, Any]:
    params = request.get("params") if isinstance(request, dict) else None
    event = params.get("event") if isinstance(params, dict) else None
    return event if isinstance(event, dict) else {}


def _carried(call: Call) -> str | None:
    """The text of the target a call carried (instructions before, summary after)."""
    event = _event(call.json(call.request))
    boundary = str(event.get("type", "")).removeprefix("context.compact.")
    return _text(event.get(TARGET.get(boundary, "instructions")))


def _reported(output: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """What the host reported, in the shape of `expected` (but `seen`, which the wire
    gives), and the problems of its shape."""
    problems: list[tuple[str, str]] = []
    result = output.get("result")
    if not isinstance(result, dict):
        return {}, [("HostResult", f"result is {shown(result, 120)}, not an object")]
    actual: dict[str, Any] = {}
    for key in ("instructions", "summary"):
        value = result.get(key)
        text = _text(value)
        if text is None and not (key == "summary" and value is None):
            problems.append(
                ("HostResult", f"result.{key} is {shown(value, 120)}, not a list of text parts")
            )
        actual[key] = text
    for key in ("generated", "applied"):
        actual[key] = result.get(key)
    failures = result.get("failures")
    actual["failures"] = len(failures) if isinstance(failures, list) else failures
    if result.get("messages") != []:
        problems.append(
            (
                "HostResult",
                f"result.messages is {shown(result.get('messages'), 120)}: a message "
                "staged in a reply that failed leaked, or messages are missing",
            )
        )
    return actual, problems


@dataclass
class _Intercept:
    """One intercept of a case as it crossed the gate, with its place in the plan: the
    `n`-th call of `boundary` (counted from 0), whose ids must be `ident`
    (`<case>:<boundary>`), its request parsed (a JSON object: a call whose event has a
    boundary's type is one) and that request's event."""

    ident: str
    boundary: str
    n: int
    call: Call
    request: Any
    event: dict[str, Any]


def _wire_problems(
    row: CompactionRow, calls: list[Call], expected: dict[str, Any]
) -> list[tuple[str, str]]:
    """The case's intercepts as they crossed the gate, against the plan and the rules
    a host's requests follow (docs/COMPACTION.md, "A contract v1 host"). Calls are
    counted per boundary in the order they crossed; the after call's `removed` is read
    against the items of the last before call that carried a list of them."""
    problems: list[tuple[str, str]] = []
    counts = {b: 0 for b in BOUNDARIES}
    items: list[Any] = []
    for call in calls:
        request = call.json(call.request)
        event = _event(request)
        boundary = str(event.get("type", "")).removeprefix("context.compact.")
        if boundary not in BOUNDARIES:
            problems.append(("HostWire", f"a call carried event type {event.get('type')!r}"))
            continue
        ident = f"{row.id}:{boundary}"
        plan = row.raw[boundary]
        n = counts[boundary]
        counts[boundary] += 1
        if n >= len(plan):
            problems.append(("HostWire", f"{ident}: call {n} has no supplier in the plan"))
            continue
        intercept = _Intercept(ident, boundary, n, call, request, event)
        problems += _request_problems(intercept, plan[n]["supplier"])
        problems += _grant_problems(intercept)
        if boundary == "before" and isinstance(event.get("items"), list):
            items = event["items"]
        if boundary == "after":
            problems += _after_problems(intercept, row.id, items, expected["generated"])
    return problems


def _request_problems(intercept: _Intercept, supplier: str) -> list[tuple[str, str]]:
    """An intercept against its plan: made with its supplier's token, a `hooks/intercept`
    whose request id and event id are both its `ident`, valid by the canonical
    intercept-request schema."""
    problems: list[tuple[str, str]] = []
    ident, n, call, request = intercept.ident, intercept.n, intercept.call, intercept.request
    if call.scope != supplier:
        problems.append(
            (
                "HostWire",
                f"{ident}: call {n} was made for {call.scope!r}, the plan's supplier "
                f"{n} is {supplier!r}",
            )
        )
    if request.get("method") != "hooks/intercept" or request.get("id") != ident:
        problems.append(
            (
                "HostWire",
                f"{ident}: call {n} is {request.get('method')!r} with id {request.get('id')!r}",
            )
        )
    if intercept.event.get("id") != ident:
        problems.append(("HostWire", f"{ident}: the event's id is {intercept.event.get('id')!r}"))
    issue = canonical().issue("intercept-request.schema.json", request)
    if issue is not None:
        problems.append(("HostWire", f"{ident}: call {n}: {issue}"))
    return problems


def _grant_problems(intercept: _Intercept) -> list[tuple[str, str]]:
    """The intercept's `capabilities.modify`: a boundary grants a replace of its target
    only (instructions before, summary after), `{<target>: {replace: true, merge: <bool>}}`."""
    request = intercept.request
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    modify = (params.get("capabilities") or {}).get("modify")
    target = TARGET[intercept.boundary]
    grant = modify.get(target) if isinstance(modify, dict) else None
    if (
        not isinstance(modify, dict)
        or set(modify) != {target}
        or not isinstance(grant, dict)
        or grant.get("replace") is not True
        or not isinstance(grant.get("merge"), bool)
    ):
        return [
            (
                "HostWire",
                f"{intercept.ident}: capabilities.modify is {shown(modify, 120)}; "
                f"the boundary grants a replace of {target} only",
            )
        ]
    return []


def _after_problems(
    intercept: _Intercept, case: str, items: list[Any], generated: Any
) -> list[tuple[str, str]]:
    """The after call's links to its before call: `parentEventId` the before event's id,
    `removed` the ids of the items the before call carried, and `execution` executed
    when the host generated the summary, else skipped with reason `supplied_result`."""
    event = intercept.event
    execution = (
        {"status": "executed"} if generated else {"status": "skipped", "reason": "supplied_result"}
    )
    removed = [{"id": i.get("id")} for i in items if isinstance(i, dict)]
    problems: list[tuple[str, str]] = []
    for key, want in (
        ("parentEventId", f"{case}:before"),
        ("removed", removed),
        ("execution", execution),
    ):
        if not strict_equal(event.get(key), want):
            problems.append(
                (
                    "HostWire",
                    f"{intercept.ident}: {key} is {shown(event.get(key), 120)}, "
                    f"expected {shown(want, 120)}",
                )
            )
    return problems


def _trace_problems(output: dict[str, Any], calls: list[Call]) -> list[tuple[str, str]]:
    """The host's own trace against the calls that crossed the gate."""
    trace = output.get("trace")
    if not isinstance(trace, list):
        return [("HostTrace", f"trace is {shown(trace, 80)}, not a list")]
    if len(trace) != len(calls):
        return [("HostTrace", f"the host traced {len(trace)} calls, {len(calls)} were made")]
    for n, (entry, call) in enumerate(zip(trace, calls, strict=True)):
        said = {
            "subscription": call.scope,
            "request": call.json(call.request),
            "response": call.json(call.reply),
        }
        found = first_difference(said, entry)
        if found is not None:
            return [
                (
                    "HostTrace",
                    f"trace[{n}]{found[0][1:]}: the wire had {shown(found[1], 120)}, "
                    f"the host traced {shown(found[2], 120)}",
                )
            ]
    return []


@dataclass
class _Evidence:
    """What a set's cases are judged from: every call that crossed the gate, in order;
    our server's record; the host's outputs by case name (a case reported once has one);
    the combination's errors."""

    calls: list[Call]
    log: Entries
    by_name: dict[str, list[dict[str, Any]]]
    errors: list[CombinationError]


@dataclass
class _Case:
    """A case's calls: `mine` every call made with one of its suppliers' tokens, `wire`
    those but uploads (its intercepts), both in the order they crossed the gate."""

    row: CompactionRow
    mine: list[Call]
    wire: list[Call]


def verify_host(
    set_name: str,
    rows: list[CompactionRow],
    outputs: Any,
    calls: list[Call],
    entries: Any,
    errors: list[CombinationError],
) -> tuple[list[RowVerdict], list[CombinationError]]:
    """Each case from what the host reported (`outputs`), what crossed the gate
    (`calls`) and what our server recorded (`entries`). The combination's errors
    (`errors`, our server's record's, a call no supplier's token names) fail every case."""
    good, errors = _set_errors(set_name, calls, entries, errors)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for output in outputs or []:
        by_name.setdefault(str(output.get("name")), []).append(output)
    evidence = _Evidence(calls, Entries(good), by_name, errors)
    return [_case_verdict(set_name, row, evidence) for row in rows], errors


def _set_errors(
    set_name: str, calls: list[Call], entries: Any, errors: list[CombinationError]
) -> tuple[list[dict[str, Any]], list[CombinationError]]:
    """Our server's good entries, and the combination's errors: those given, the
    entries' own, and one for the calls no supplier's token names (they belong to no
    case)."""
    good, entry_errors = check_entries(entries, f"server[{set_name}]") if entries else ([], [])
    errors = [*errors, *entry_errors]
    strangers = [c for c in calls if c.scope is None]
    if strangers:
        errors.append(
            CombinationError(
                f"client[{set_name}]",
                "HostWire",
                f"{len(strangers)} calls carried no supplier's token, the first: "
                f"{strangers[0].describe()}",
            )
        )
    return good, errors


def _case_verdict(set_name: str, row: CompactionRow, evidence: _Evidence) -> RowVerdict:
    """A case's verdict: failed with the combination's errors named when there are any,
    or when the host did not report it exactly once; else judged from its output. The
    calls made for it are its `wire` diagnostics either way."""
    verdict = RowVerdict(set_name, row.id, Status.FAILED, row.expected)
    suppliers = {s["supplier"] for b in BOUNDARIES for s in row.raw[b]}
    mine = [c for c in evidence.calls if c.scope in suppliers]
    case = _Case(row, mine, [c for c in mine if c.path != "/upload"])
    if mine:
        verdict.diagnostics["wire"] = [c.describe() for c in mine]
    if evidence.errors:
        verdict.error = "combination failed: " + ", ".join(
            sorted({e.error_class for e in evidence.errors})
        )
        return verdict
    found = evidence.by_name.get(row.id, [])
    if len(found) != 1:
        verdict.error = f"the host reported this case {len(found)} times"
        return verdict
    _judge_output(verdict, case, found[0], evidence.log)
    return verdict


def _judge_output(verdict: RowVerdict, case: _Case, output: dict[str, Any], log: Entries) -> None:
    """The case's one output judged: its `actual` is what the host reported, with `seen`
    the targets its intercepts carried; the problems, in order: the calls that crossed
    the gate, the result's shape, the result against the expectation, downstream, the
    intercepts, the host's trace, our server's record."""
    actual, reported = _reported(output)
    actual["seen"] = [_carried(c) for c in case.wire]
    problems = [*_gate_problems(case), *reported]
    verdict.actual = actual
    result = output.get("result")
    failures = result.get("failures") if isinstance(result, dict) else None
    if failures:
        verdict.diagnostics["hostFailures"] = shown(failures, 600)
    problems += _result_problems(case.row, output, actual)
    problems += _wire_problems(case.row, case.wire, case.row.expected)
    problems += _trace_problems(output, case.wire)
    problems += _receipt_problems(case, log)
    conclude(verdict, problems)


def _gate_problems(case: _Case) -> list[tuple[str, str]]:
    """The case's calls at the gate: every one answered 200, and as many intercepts as
    the case expects targets `seen`."""
    refused = [c for c in case.mine if c.status != 200]
    expected = len(case.row.expected["seen"])
    if not refused and len(case.wire) == expected:
        return []
    first = f"; the first refused: {refused[0].describe()}" if refused else ""
    return [
        (
            "HostWire",
            f"{len(case.wire)} calls crossed the gate, the case makes {expected}{first}",
        )
    ]


def _result_problems(
    row: CompactionRow, output: dict[str, Any], actual: dict[str, Any]
) -> list[tuple[str, str]]:
    """What the host reported against the expectation: `actual` (the first difference),
    and `downstream` (the expected summary when it is applied, else nothing)."""
    problems: list[tuple[str, str]] = []
    difference = first_difference(row.expected, actual)
    if difference is not None:
        problems.append(
            (
                "HostResult",
                f"{difference[0]}: expected {shown(difference[1], 120)}, "
                f"got {shown(difference[2], 120)}",
            ),
        )
    downstream = [row.expected["summary"]] if row.expected["applied"] else []
    if _texts(output.get("downstream")) != downstream:
        problems.append(
            (
                "HostResult",
                f"downstream is {shown(output.get('downstream'), 120)}, "
                f"expected {shown(downstream, 120)}",
            )
        )
    return problems


def _receipt_problems(case: _Case, log: Entries) -> list[tuple[str, str]]:
    """Our server's record of the case (its `received` entries of both boundaries, in
    record order) against the intercepts it answered through the gate (200 with a
    JSON-RPC result): the same requests, in the same order."""
    accepted = [
        c.json(c.request)
        for c in case.wire
        if c.status == 200 and isinstance(c.json(c.reply), dict) and "result" in c.json(c.reply)
    ]
    ident = case.row.id
    received = [
        log.all[i]["message"]
        for i in sorted(
            log.of("received", f"{ident}:before") + log.of("received", f"{ident}:after")
        )
    ]
    if len(received) != len(accepted) or not all(
        strict_equal(a, b) for a, b in zip(accepted, received, strict=False)
    ):
        return [
            (
                "HostReceipts",
                f"our server recorded {len(received)} calls of this case, "
                f"{len(accepted)} were answered through the gate",
            )
        ]
    return []


def _texts(value: Any) -> Any:
    """`downstream` as texts: a list of strings stays, a list of text-part lists
    becomes their texts."""
    if isinstance(value, list):
        return [v if isinstance(v, str) else _text(v) for v in value]
    return value
