"""`python -m interop smoke --adapter-dir PATH`: bring up a new adapter, check it end to end.

A checklist of the contract, each item passed or failed with the fix. An adapter
that declares our extensions (`extensions.blind`) is checked against our
contract; any other against the upstream contract v1 and the extensions it
declares, nothing else: a check of ours or of an undeclared extension is listed
as not checked, never failed, and its rows come from the upstream vectors.
The items:
the manifest, the build, a server over HTTP (readiness, control API, a known
row answered unchanged and receipted, an unknown id answered with a JSON-RPC
error and receipted, a barrier held until released, nothing on stdout,
shutdown, nothing left running), the server over stdio (one line in, one
line out, nothing else on stdout), an unusable config (exit 2), and the
client against a reference server on a few core rows plus one event it
cannot know (which it must call `unsupported`, never pass or fail).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from interop import ROOT
from interop.contract.manifest import Adapter, AdapterDir, ManifestError, load_manifest, manifest_in
from interop.jsonvalue import JsonError, dumps_canonical, loads
from interop.results import ERRORS, Status
from interop.runtime import process
from interop.runtime.client import run_client
from interop.runtime.context import RunContext, Timeouts, run_context, write_json
from interop.runtime.control import ControlError, call
from interop.runtime.post import PostFailed, post
from interop.runtime.server import Server, ServerStartError
from interop.suites import v1fixture
from interop.suites.compaction import upstream as compaction_v1
from interop.suites.core.scenarios import load_set
from interop.suites.core.verify import verify_set
from interop.suites.elicitation import upstream as elicitation_v1

ROWS = (  # a few core rows: a decision, a rejection, a supplied result, an edit
    "tool.before.decision.no-effects-runs-tool",
    "tool.before.decision.deny-blocks-tool",
    "tool.before.return.null",
    "tool.before.modify.merge-replaces-nested-object-whole",
    "tool.before.envelope.jsonrpc-1-0",
)
V1_ROWS = (  # the same, from the upstream vectors (a contract v1 adapter is checked on them)
    "empty-response-preserves-input",
    "deny-blocks",
    "return-null-preserved",
    "modify-merge-shallow-null-literal",
    "wrong-jsonrpc-version",
)
# What `POST /shutdown` answers, by contract: ours, and each published upstream revision
# (the upstream python-sdk core server: {stopping: true}; upstream LIFECYCLE.md: {ok: true}).
SHUTDOWN_ANSWERS = {
    "ours": ({"shutdown": True},),
    "v1": ({"shutdown": True}, {"stopping": True}, {"ok": True}),
}
UNKNOWN_EVENT = "smoke.turn-start-is-not-a-core-boundary"
BARRIER = "smoke-gate"


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""
    fix: str = ""
    checked: bool = True  # False: not part of the contract checked (listed, never failed)


@dataclass
class Checklist:
    contract: str = "ours"  # "ours", or "v1": the upstream contract and declared extensions
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, problem: str | None, fix: str = "") -> bool:
        self.checks.append(Check(name, problem is None, problem or "", fix if problem else ""))
        mark = "ok  " if problem is None else "FAIL"
        print(f"{mark} {name}" + (f": {problem}" if problem else ""), file=sys.stderr, flush=True)
        if problem and fix:
            print(f"     fix: {fix}", file=sys.stderr, flush=True)
        return problem is None

    def skip(self, name: str, reason: str) -> None:
        """A check that is not part of the contract checked: listed, never failed."""
        self.checks.append(Check(name, True, reason, checked=False))
        print(f"--   {name}: not checked ({reason})", file=sys.stderr, flush=True)

    def ours(self, name: str) -> bool:
        """True when a rule of our contract (not of v1) is checked; else listed as skipped."""
        if self.contract == "ours":
            return True
        self.skip(name, "our contract's rule, not contract v1's")
        return False

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def _fix(error_class: str) -> str:
    return ERRORS[error_class].action


def _post(url: str, body: bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(
        parts.hostname or "127.0.0.1", parts.port, timeout=timeout
    )
    try:
        connection.request(
            "POST", parts.path or "/", body=body, headers={"Content-Type": "application/json"}
        )
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def _rows(work: Path, contract: str) -> tuple[Path, list[dict[str, Any]], dict[str, Any]]:
    """A small scenario file: some core rows (ours, or the upstream vectors for a v1
    adapter), one barrier row and one unknown event."""
    source, wanted = (
        ("core.json", ROWS) if contract == "ours" else ("upstream/scenarios.json", V1_ROWS)
    )
    core = load_set(ROOT / "scenarios" / source)
    chosen = [s.raw for s in core.scenarios if s.id in wanted]
    assert len(chosen) == len(wanted), f"a smoke row is missing from scenarios/{source}"
    held = json.loads(json.dumps(chosen[0]))
    for place in (held, held["request"], held["request"]["params"]["event"]):
        place["id"] = "smoke.barrier-holds-the-reply"
    held["response"]["id"] = held["id"]
    held["barrier"] = BARRIER
    unknown = {
        "id": UNKNOWN_EVENT,
        "request": {
            "jsonrpc": "2.0",
            "id": UNKNOWN_EVENT,
            "method": "hooks/intercept",
            "params": {
                "protocolVersion": "draft",
                "event": {
                    "id": UNKNOWN_EVENT,
                    "source": "urn:ahp-interop:smoke",
                    "type": "turn.start",
                    "time": "2026-05-04T08:30:00Z",
                    "session": {"id": "smoke"},
                    "turn": {"id": "turn-1"},
                    "trigger": "user",
                    "items": [],
                },
                "capabilities": {"effects": ["deny", "message"]},
            },
        },
        "response": {
            "jsonrpc": "2.0",
            "id": UNKNOWN_EVENT,
            "result": {"protocolVersion": "draft", "effects": []},
        },
        "expected": {"decision": "allow", "executed": True, "messages": []},
        "tags": ["smoke"],
    }
    rows = [*chosen, held, unknown]
    path = work / "smoke.json"
    path.write_text(dumps_canonical({"version": 1, "scenarios": rows}), encoding="utf-8")
    return path, rows, held


def _server_checks(
    ctx: RunContext,
    adapter: Adapter,
    rows_file: Path,
    rows: list[Any],
    held: dict[str, Any],
    checks: Checklist,
) -> None:
    server = Server(ctx, adapter, "http", "none", rows_file)
    stdout_file = server.home / "stdout.log"
    server.stdout_log = stdout_file
    try:
        server.start()
    except ServerStartError as exc:
        checks.add(
            "server starts (readiness file, GET /health)",
            f"{exc.error_class}: {exc}",
            _fix(exc.error_class),
        )
        server.stop()
        return
    checks.add("server starts (readiness file, GET /health)", None)
    try:
        _exchange_checks(server, rows, held, checks)
        if adapter.server_reuse:
            try:
                server.reset(rows_file)
                problem = None
            except ControlError as exc:
                problem = str(exc)
            checks.add(
                "POST /reset answers {reset: true} [ext serverReuse]", problem, _fix("ResetFailed")
            )
    finally:
        answers = SHUTDOWN_ANSWERS[checks.contract]
        try:
            answer = call(server.control, "POST", "/shutdown", {}, timeout=5)
            problem = None if answer in answers else f"it answered {json.dumps(answer)[:120]}"
        except ControlError as exc:
            problem = str(exc)
        shown = " or ".join(json.dumps(a) for a in answers)
        checks.add(
            f"POST /shutdown answers {shown}",
            problem,
            "answer, then exit 0 (docs/CONTRACT.md, control listener)",
        )
        exited = None
        if server.spawned is not None:
            try:
                exited = process.wait_exit(server.spawned, 5.0)
            except process.WatchdogExpired:
                exited = None
        checks.add(
            "the server exits 0 after /shutdown",
            None if exited == 0 else f"it {process.describe_exit(exited)}",
            "exit 0 once /shutdown has answered",
        )
        server.stop()
        checks.add(
            "nothing of the server is left running",
            None if not server.leaks else f"left running: {', '.join(server.leaks)}",
            _fix("ProcessLeak"),
        )
        printed = stdout_file.read_bytes() if stdout_file.exists() else b""
        checks.add(
            "an HTTP server prints nothing on stdout",
            None if not printed.strip() else f"stdout had {printed[:80]!r}",
            "write diagnostics to stderr only",
        )


def _exchange_checks(
    server: Server, rows: list[Any], held: dict[str, Any], checks: Checklist
) -> None:
    """A running HTTP server's exchanges: a scenario's request answered with its
    response, an unknown id with a JSON-RPC error (our contract), both receipted in
    order, and a barrier row's reply held until POST /release."""
    known = rows[0]
    _answer_check(server, known, checks)
    wanted = [known["id"]]
    if _unknown_id_check(server, known, checks):
        wanted.append("smoke.no-such-scenario")
    _receipts_check(server, wanted, checks)
    _barrier_check(server, held, checks)


def _answer_check(server: Server, known: dict[str, Any], checks: Checklist) -> None:
    """The scenario's request is answered 200 with its response, unchanged."""
    status, body = _post(server.endpoint, json.dumps(known["request"]).encode())
    try:
        answer = loads(body)
    except JsonError as exc:
        answer = f"<{exc}>"
    checks.add(
        "a scenario's request is answered 200 with its response, unchanged",
        None if status == 200 and answer == known["response"] else f"HTTP {status}: {body[:120]!r}",
        "send the scenario's `response` unchanged (docs/CONTRACT.md, Replies)",
    )


def _unknown_id_check(server: Server, known: dict[str, Any], checks: Checklist) -> bool:
    """Under our contract, a request of an id no scenario has gets JSON-RPC error -32602
    with its id; True when it was sent (it must be receipted too)."""
    name = "an unknown id gets JSON-RPC error -32602 with its id"
    if not checks.ours(name):
        return False
    stranger = json.loads(json.dumps(known["request"]))
    for place in (stranger, stranger["params"]["event"]):
        place["id"] = "smoke.no-such-scenario"
    status, body = _post(server.endpoint, json.dumps(stranger).encode())
    try:
        error = loads(body)
    except JsonError:
        error = None
    good = (
        isinstance(error, dict)
        and error.get("id") == "smoke.no-such-scenario"
        and isinstance(error.get("error"), dict)
        and error["error"].get("code") == -32602
    )
    checks.add(
        name,
        None if good else f"HTTP {status}: {body[:120]!r}",
        "answer {jsonrpc, id, error: {code: -32602, message}} and still receipt it",
    )
    return True


def _receipts_check(server: Server, wanted: list[str], checks: Checklist) -> None:
    """The requests sent (`wanted`, in order) are the first receipts, without problems."""
    receipts, problems = server.receipts(0)
    ids = [r.get("id") for r in receipts or [] if isinstance(r, dict)]
    checks.add(
        "the request is receipted" if len(wanted) == 1 else "both requests are receipted, in order",
        None
        if ids[: len(wanted)] == wanted and not problems
        else f"receipts {ids} {'; '.join(p.message for p in problems)}",
        "record each intercept request (receiptLog or GET /receipts) before replying",
    )


def _barrier_check(server: Server, held: dict[str, Any], checks: Checklist) -> None:
    """The barrier row's request, sent from a thread, is receipted (within 10 s) while
    its reply is still pending, and answered 200 once POST /release frees the barrier."""
    got: dict[str, Any] = {}

    def send_held() -> None:
        try:
            got["answer"] = _post(server.endpoint, json.dumps(held["request"]).encode(), timeout=15)
        except OSError as exc:
            got["answer"] = (0, str(exc).encode())

    sender = threading.Thread(target=send_held, daemon=True)
    sender.start()
    deadline = time.monotonic() + 10
    seen = False
    while time.monotonic() < deadline and not seen:
        receipts, _ = server.receipts(0)
        seen = any(isinstance(r, dict) and r.get("id") == held["id"] for r in receipts or [])
        if not seen:
            time.sleep(0.05)
    sender.join(0.5)  # after the receipt, a held reply must still be pending
    early = "answer" in got
    try:
        call(server.control, "POST", "/release", {"barrier": BARRIER}, timeout=5)
    except ControlError as exc:
        checks.add("POST /release answers", str(exc), "answer {released: name}")
    sender.join(10)
    checks.add(
        "a barrier holds the reply until POST /release",
        None
        if seen and not early and got.get("answer", (0,))[0] == 200
        else (
            "the request was never receipted"
            if not seen
            else "the reply came before the release"
            if early
            else "no reply after the release"
        ),
        "hold the reply of a scenario naming `barrier` until POST /release (docs/CONTRACT.md)",
    )


def _stdio_checks(
    ctx: RunContext, adapter: Adapter, rows_file: Path, rows: list[Any], checks: Checklist
) -> None:
    """The server over stdio (`_stdio_exchange`), then, under our contract, an unusable
    config refused (`_bad_config_check`)."""
    home = ctx.unique("smoke-stdio")
    (home / "ready").mkdir()
    auth, _ = ctx.trust.server_auth("none", ctx.profile)
    config = write_json(
        home / "config.json",
        {
            "transport": "stdio",
            "readinessFile": str(home / "ready" / "readiness.json"),
            "scenarioFile": str(rows_file),
            "auth": auth,
            "schemaDir": str(ctx.schema_dir(adapter)),
        },
    )
    _stdio_exchange(ctx, adapter, config, rows[0], checks)
    if checks.contract != "ours":
        checks.skip("an unusable config exits 2 with a message [ext]", "no extension declared")
        return
    _bad_config_check(adapter, home, checks)


def _stdio_exchange(
    ctx: RunContext, adapter: Adapter, config: Path, row: dict[str, Any], checks: Checklist
) -> None:
    """The server started over stdio with `config` (in its own folder, which names the
    owner of its processes), the row's request as one line on stdin, then EOF: exactly
    one line out, the row's response, and exit 0 within 30 s; whatever it started is
    killed."""
    command = [*adapter.commands["server"], "--config", str(config)]
    owner = f"smoke:{config.parent.name}"
    ctx.registry.owner_enter(owner)
    try:
        completed = subprocess.run(
            command,
            cwd=adapter.directory,
            input=(json.dumps(row["request"]) + "\n").encode(),
            capture_output=True,
            timeout=30,
            env={**os.environ, process.OWNER_VARIABLE: owner},
        )
        lines = completed.stdout.splitlines()
        problem = None
        if len(lines) != 1:
            problem = f"stdout had {len(lines)} lines: {completed.stdout[:120]!r}"
        else:
            try:
                if loads(lines[0]) != row["response"]:
                    problem = "the line is not the scenario's response"
            except JsonError as exc:
                problem = str(exc)
        checks.add(
            "over stdio: one request line in, one response line out, nothing else",
            problem,
            "write only JSON-RPC lines to stdout; diagnostics to stderr",
        )
        checks.add(
            "over stdio: EOF on stdin ends the server with status 0",
            None
            if completed.returncode == 0
            else f"it {process.describe_exit(completed.returncode)}",
            "exit 0 at EOF",
        )
    except subprocess.TimeoutExpired:
        checks.add(
            "over stdio: EOF on stdin ends the server",
            "still running after 30 s",
            "exit at EOF on stdin",
        )
    finally:
        process.kill_owner(owner)
        ctx.registry.owner_exit(owner)


def _bad_config_check(adapter: Adapter, home: Path, checks: Checklist) -> None:
    """A config without readinessFile: the server exits 2 at once (within 30 s) with a
    message on stderr."""
    bad = write_json(home / "bad-config.json", {"transport": "stdio"})
    try:
        result = subprocess.run(
            [*adapter.commands["server"], "--config", str(bad)],
            cwd=adapter.directory,
            capture_output=True,
            timeout=30,
        )
        checks.add(
            "an unusable config exits 2 with a message [ext]",
            None
            if result.returncode == 2 and result.stderr.strip()
            else f"it {process.describe_exit(result.returncode)}; stderr {result.stderr[-120:]!r}",
            "exit 2 with one stderr line naming the file and the field",
        )
    except subprocess.TimeoutExpired:
        checks.add(
            "an unusable config exits 2 with a message [ext]",
            "still running after 30 s",
            "refuse a config without readinessFile at once",
        )


def _client_checks(
    ctx: RunContext, adapter: Adapter, reference: Adapter, rows: list[Any], checks: Checklist
) -> None:
    unheld = [r for r in rows if "barrier" not in r]  # a held reply would wait for ever
    rows_file = ctx.unique("smoke-client-rows") / "smoke.json"
    rows_file.write_text(dumps_canonical({"version": 1, "scenarios": unheld}), encoding="utf-8")
    scenario_set = load_set(rows_file, "smoke")
    server = Server(
        ctx,
        reference,
        "http",
        "none",
        scenario_set.write_blind(ctx.unique("smoke-set") / "blind.json"),
    )
    try:
        server.start()
    except ServerStartError as exc:
        checks.add(
            f"reference server {reference.name} starts",
            str(exc),
            f"build {reference.name} (python -m interop build)",
        )
        return
    try:
        run = run_client(
            ctx,
            adapter,
            stage="smoke client",
            scenario_file=scenario_set.write_blind(ctx.unique("smoke-client") / "blind.json")
            if adapter.blind
            else scenario_set.path,
            transport="http",
            auth="none",
            endpoint=server.endpoint,
        )
        receipts, receipt_errors = server.receipts(0)
        verdict = verify_set(
            scenario_set,
            report=run.report,
            receipts=receipts,
            client_exit=run.exit_code,
            language=adapter.language,
            blind=adapter.blind,
            stage="smoke client",
            prior_errors=run.errors + receipt_errors,
        )
        for error in verdict.errors:
            checks.add(f"client: {error.error_class}", error.message, _fix(error.error_class))
        by_id = {r.id: r for r in verdict.rows}
        unknown = by_id.get(UNKNOWN_EVENT)
        name = "client: an event it cannot know is reported unsupported"
        if checks.ours(name):
            checks.add(
                name,
                None
                if unknown is not None and unknown.status == Status.UNSUPPORTED
                else f"reported {unknown.adapter_status if unknown else 'nothing'}",
                "report status unsupported (with an error) for an event type it does not implement",
            )
        wrong = [r for r in verdict.rows if r.id != UNKNOWN_EVENT and r.status != Status.PASSED]
        checks.add(
            f"client: {len(verdict.rows) - 1} core rows pass against {reference.name}",
            None if not wrong else "; ".join(f"{r.id}: {r.error}" for r in wrong[:3]),
            "see docs/scenarios.md for the rule the row names",
        )
    finally:
        server.stop()


def _started(receiver: v1fixture.Fixture, checks: Checklist, name: str, fix: str) -> bool:
    """Start a contract v1 receiver for its checks: the first check, `name`, is that it
    announced its endpoint (on a failure it is stopped again)."""
    try:
        receiver.start()
    except ServerStartError as exc:
        checks.add(name, str(exc), fix)
        receiver.stop()
        return False
    checks.add(name, None)
    return True


def _elicitation_checks(ctx: RunContext, adapter: Adapter, checks: Checklist) -> None:
    """A contract v1 SDK's elicitation receiver, found by upstream's convention
    (docs/ELICITATION.md, "With a contract v1 adapter"): it announces its endpoint,
    serves its record to the event token, refuses another token, takes an upload."""
    name = "the elicitation receiver (interop/elicitation.*) announces its endpoint"
    if isinstance(elicitation_v1.command_of(adapter), str):
        checks.skip(name, "the SDK has no elicitation adapter: that suite is unsupported for it")
        return
    token, upload_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    for secret in (token, upload_token):
        ctx.redactor.add(secret)
    receiver = elicitation_v1.V1Receiver(ctx, adapter, "authenticated:smoke", token, upload_token)
    fix = (
        'start with `server SCHEMA_DIR authenticated:SENDER` and print {"endpoint": '
        '"http://127.0.0.1:PORT"} as the first stdout line (upstream elicitation_matrix.py)'
    )
    if not _started(receiver, checks, name, fix):
        return
    try:
        bearer = {"Authorization": "Bearer " + token}
        status, body, _ = post(receiver.base + "/receipts", b"", bearer, 10.0)
        listed = json.loads(body) if status == 200 else None
        checks.add(
            "POST /receipts with the event token answers 200 and a list",
            None if isinstance(listed, list) else f"answered {status}: {body[:120]!r}",
            "serve the accepted records as [{message, bytes, summary}] to AHP_ELICITATION_TOKEN",
        )
        stranger = {"Authorization": "Bearer " + secrets.token_urlsafe(12)}
        status, _, _ = post(receiver.base + "/receipts", b"", stranger, 10.0)
        checks.add(
            "another token is refused 401",
            None if status == 401 else f"answered {status}",
            "answer 401 unless there is exactly one Authorization: Bearer of the right token",
        )
        raw = b"smoke upload"
        headers = {
            "Authorization": "Bearer " + upload_token,
            "Content-Type": "application/octet-stream",
            "AHP-Content-SHA256": hashlib.sha256(raw).hexdigest(),
        }
        status, body, _ = post(receiver.base + "/upload", raw, headers, 10.0)
        descriptor = json.loads(body) if status == 201 else None
        checks.add(
            "an upload with the upload token answers 201 {ref, size, sha256}",
            None
            if isinstance(descriptor, dict)
            and descriptor.get("size") == len(raw)
            and descriptor.get("sha256") == headers["AHP-Content-SHA256"]
            and isinstance(descriptor.get("ref"), str)
            else f"answered {status}: {body[:120]!r}",
            "store the raw octets under AHP_ELICITATION_UPLOAD_TOKEN and answer 201",
        )
    except (OSError, ValueError, http.client.HTTPException, PostFailed) as exc:
        checks.add("the elicitation receiver answers", str(exc), fix)
    finally:
        receiver.stop()


SMOKE_COMPACTION = "smoke-compaction:before"


def _compaction_request(ident: str, *, trigger: bool = True) -> dict[str, Any]:
    """A small valid context.compact.before request (inline text, docs/COMPACTION.md)."""
    text = {"id": "smoke-ins", "kind": "text", "mediaType": "text/plain", "selection": "body"}
    event: dict[str, Any] = {
        "id": ident,
        "source": "urn:ahp-interop:smoke",
        "type": "context.compact.before",
        "time": "2026-04-11T09:30:00Z",
        "items": [
            {
                "id": "smoke-m1",
                "role": "user",
                "parts": [{**text, "id": "smoke-m1:t", "text": "hi"}],
            }
        ],
        "instructions": [{**text, "text": "Keep it short."}],
    }
    if trigger:
        event["trigger"] = "manual"
    capabilities = {
        "effects": ["modify"],
        "modify": {"instructions": {"replace": True, "merge": False}},
    }
    params = {"protocolVersion": "draft", "event": event, "capabilities": capabilities}
    return {"jsonrpc": "2.0", "id": ident, "method": "hooks/intercept", "params": params}


def _compaction_checks(ctx: RunContext, adapter: Adapter, checks: Checklist) -> None:
    """A contract v1 SDK's compaction-wire receiver, found by upstream's convention
    (docs/COMPACTION.md, "With a contract v1 adapter"): it announces its endpoint,
    answers a valid call with its scope's action and records it, refuses another
    token 401, and refuses an invalid request -32602 without recording it."""
    name = "the compaction-wire receiver (interop/compaction_wire.*) announces its endpoint"
    if isinstance(compaction_v1.command_of(adapter), str):
        checks.skip(name, "the SDK has no compaction-wire adapter: its rows are unsupported")
        return
    refused = "smoke-compaction-refused:before"
    scopes = {(SMOKE_COMPACTION, 0): {"kind": "effects", "effects": []}}
    scopes[(refused, 0)] = {"kind": "effects", "effects": []}
    receiver = compaction_v1.V1Receiver(ctx, adapter, scopes, secrets.token_urlsafe(24))
    fix = (
        "start with `SCHEMA_DIR STORE_DIR SUBSCRIPTIONS server` and print "
        '{"endpoint": "http://127.0.0.1:PORT"} as the first stdout line '
        "(upstream compaction_wire_matrix.py)"
    )
    if not _started(receiver, checks, name, fix):
        return
    url = receiver.base + compaction_v1.INTERCEPT

    def send(token: str, request: dict[str, Any]) -> tuple[int, Any]:
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        status, body, _ = post(url, json.dumps(request).encode(), headers, 10.0)
        return status, (json.loads(body) if body else None)

    try:
        token = receiver.tokens[receiver.names[(SMOKE_COMPACTION, 0)]]
        status, answer = send(token, _compaction_request(SMOKE_COMPACTION))
        entries, _ = receiver.upstream_entries()
        result = answer.get("result") if isinstance(answer, dict) else None
        checks.add(
            "a valid context.compact.before (inline text) is answered with its scope's "
            "action and recorded",
            None
            if status == 200 and result == {"protocolVersion": "draft", "effects": []} and entries
            else f"answered {status}: {json.dumps(answer)[:160]}; {len(entries or [])} recorded",
            "accept canonical inline text parts (schema/draft/content-item.schema.json: text is "
            "inline, only non-text media are body references), answer the scope's action and "
            "append {subscription, request, response} to STORE_DIR/receipts.jsonl",
        )
        status, _ = send(secrets.token_urlsafe(12), _compaction_request("x"))
        checks.add(
            "another token is refused 401",
            None if status == 401 else f"answered {status}",
            "answer 401 unless one Authorization: Bearer carries a token of AHP_COMPACTION_TOKENS",
        )
        before = len(receiver.upstream_entries()[0] or [])
        token = receiver.tokens[receiver.names[(refused, 0)]]
        status, answer = send(token, _compaction_request(refused, trigger=False))
        error = answer.get("error") if isinstance(answer, dict) else None
        after = len(receiver.upstream_entries()[0] or [])
        checks.add(
            "an invalid request (no trigger) is answered -32602 and not recorded",
            None
            if isinstance(error, dict) and error.get("code") == -32602 and after == before
            else f"answered {status}: {json.dumps(answer)[:160]}; recorded {after - before}",
            "validate every request against intercept-request; refuse with -32602, record nothing",
        )
    except (OSError, ValueError, http.client.HTTPException, PostFailed) as exc:
        checks.add("the compaction-wire receiver answers", str(exc), fix)
    finally:
        receiver.stop()


def _without(adapter: Adapter, role: str) -> str:
    return f"extensions.roles gives {adapter.name} no {role} in the core suite"


def smoke(
    target: AdapterDir, reference: Adapter | None, build: bool = True, spec: Path | None = None
) -> int:
    """The checklist for one adapter; `spec`: the spec's schemas for a v1 adapter."""
    checks = Checklist()
    try:
        adapter = load_manifest(manifest_in(target.path.resolve()), target.name)
    except ManifestError as exc:
        checks.add("adapter.json is valid", str(exc), _fix("ManifestInvalid"))
        return 1
    checks.add("adapter.json is valid", None)
    if build and adapter.command("build") is not None:
        result = subprocess.run(
            list(adapter.commands["build"]), cwd=adapter.directory, capture_output=True, timeout=900
        )
        checks.add(
            "the build command succeeds",
            None
            if result.returncode == 0
            else f"it {process.describe_exit(result.returncode)}: {result.stderr[-200:]!r}",
            "run the build command by hand in the adapter folder",
        )
    checks.contract = "ours" if adapter.blind else "v1"
    print(
        f"smoke {adapter.name}: checking "
        + (
            "our contract (it declares extensions.blind)"
            if adapter.blind
            else "the upstream contract v1 and the extensions it declares (docs/CONTRACT.md)"
        ),
        file=sys.stderr,
    )
    profile = "strict" if "strict" in adapter.profiles else "compat"
    with tempfile.TemporaryDirectory(prefix="ahp-smoke-") as temporary:
        work = Path(temporary)
        rows_file, rows, held = _rows(work, checks.contract)
        with run_context(
            logs=work / "logs",
            auth=["none"],
            profile=profile,
            timeouts=Timeouts(startup=30.0, client=120.0),
            spec_schemas=spec,
        ) as ctx:
            if adapter.has_role("core", "server"):
                if adapter.auth is None or "none" in adapter.auth:
                    _server_checks(ctx, adapter, rows_file, rows, held, checks)
                else:
                    checks.skip(
                        "the server over HTTP",
                        "smoke checks HTTP without authentication; extensions.auth declares "
                        f"{', '.join(adapter.auth)}",
                    )
                _stdio_checks(ctx, adapter, rows_file, rows, checks)
            else:
                checks.skip("the server", _without(adapter, "server"))
            if checks.contract == "v1":
                _elicitation_checks(ctx, adapter, checks)
                _compaction_checks(ctx, adapter, checks)
            if not adapter.has_role("core", "client"):
                checks.skip("the client", _without(adapter, "client"))
            elif reference is not None:
                _client_checks(ctx, adapter, reference, rows, checks)
    failed = [c for c in checks.checks if not c.passed]
    checked = [c for c in checks.checks if c.checked]
    skipped = len(checks.checks) - len(checked)
    print(
        f"smoke {adapter.name}: {len(checked) - len(failed)} of {len(checked)} checks passed"
        + (f", {skipped} not checked (each listed above with its reason)" if skipped else ""),
        file=sys.stderr,
    )
    return 0 if not failed else 1
