"""Contract v1's elicitation adapter: an SDK's own `interop/elicitation.*`, run the
way upstream's elicitation driver runs it (docs/ELICITATION.md, "With a contract
v1 adapter"; shared facts: upstream `interop/elicitation_matrix.py@a9adb1a1`).

Upstream does not run this adapter from adapter.json: its driver knows one
command per language, starts the receiver (`server <schemaDir>
authenticated:<sender>`, bearer tokens in `AHP_ELICITATION_TOKEN` /
`AHP_ELICITATION_UPLOAD_TOKEN`, one `{"endpoint"}` line on stdout), and makes the
sender (`client`, a plan on stdin) post one step per process, rebinding upload
aliases to the receiver's refs itself. Here either side may be ours:

- a v1 **receiver** behind our client: the harness serves the control calls our
  client makes (`/health`, `/mark`, `/receipts`, `/shutdown`) in front of it and
  reads the receiver's own `POST /receipts` (`[{message, bytes, summary}]`),
  placing each row-start mark where the receiver's record stood when it came;
- a v1 **sender** before our server: the harness runs the row's steps through
  it, one process per step as upstream does, and reports what each answered.

Nothing here judges: the suite's verifier does, from these records.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.jsonvalue import JsonError, loads
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime import process
from interop.runtime.context import RunContext
from interop.runtime.control import ControlError, call
from interop.runtime.post import PostFailed, post
from interop.runtime.server import Server, ServerStartError, log_tail
from interop.suites.elicitation.scenarios import ElicitationRow, ElicitationSet
from interop.suites.v1control import Entries
from interop.suites.v1fixture import Fixture, find_command, is_v1, run_plan

# Upstream's driver runs one command per SDK, from the SDK's root: the python-sdk's
# `.venv/bin/python interop/elicitation.py`, `node interop/elicitation.mjs`, Go's
# `cmd/elicitation` (built by adapter_builds.py) and Rust's `target/debug/elicitation`
# (elicitation_matrix.py@a9adb1a1). A checkout is recognised by the file it has.
NONCORE = (
    "interop/elicitation.py",
    "interop/elicitation.mjs",
    "cmd/elicitation",
    "target/debug/elicitation",
)
SOURCE = "upstream interop/elicitation_matrix.py@a9adb1a1"
RECEIPT_SHAPE = (
    "contract v1 elicitation receiver: POST /receipts [{message, bytes, summary}], "
    "row-start marks placed by the harness"
)
EVENT_TOKEN_ENV = "AHP_ELICITATION_TOKEN"
UPLOAD_TOKEN_ENV = "AHP_ELICITATION_UPLOAD_TOKEN"
STEP_TIMEOUT = 30.0  # upstream's per sender invocation
WIRE_ONLY = (
    "contract v1's elicitation adapters speak HTTP with a bearer token only "
    f"({SOURCE}); this combination is not one upstream runs"
)
SENDER_NO_HOST = (
    "contract v1's elicitation sender only posts the bytes it is given; its host rules "
    f"(atomic effects) run offline in its `check` command, with no server ({SOURCE})"
)
RECEIVER_NO_SCRIPT = (
    "contract v1's elicitation receiver answers every accepted event with the no-effect "
    f"reply and reads no scripted responses ({SOURCE}); this row needs scripted effects"
)


def command_of(adapter: Adapter) -> tuple[list[str], dict[str, str]] | str:
    """The v1 elicitation adapter's command and environment, or why there is none."""
    return find_command(adapter, NONCORE, "elicitation", SOURCE)


def not_for_v1(row: ElicitationRow, client: Adapter, server: Adapter) -> str | None:
    """Why a row cannot run with a v1 side, else None."""
    if row.atomic is not None and is_v1(client):
        return SENDER_NO_HOST
    if row.atomic is not None and is_v1(server) and row.raw.get("responses"):
        return RECEIVER_NO_SCRIPT
    return None


def subset(scenario_set: ElicitationSet, rows: list[ElicitationRow]) -> ElicitationSet:
    return replace(scenario_set, rows=tuple(rows))


class V1Receiver(Fixture):
    """A contract v1 elicitation receiver (`server <schemaDir> authenticated:<sender>`)
    with our control calls served in front of it."""

    source = SOURCE

    def __init__(
        self, ctx: RunContext, adapter: Adapter, principal: str, token: str, upload_token: str
    ) -> None:
        super().__init__(ctx, adapter, "elicitation-v1")
        self.principal = principal  # `authenticated:...`: who its auth says the sender is
        self.token = token
        self.upload_token = upload_token

    def start(self) -> None:
        found = command_of(self.adapter)
        if isinstance(found, str):
            raise ServerStartError("ServerSpawn", found)
        argv, env = found
        env[EVENT_TOKEN_ENV] = self.token
        env[UPLOAD_TOKEN_ENV] = self.upload_token
        schema_dir = str(self.ctx.schema_dir(self.adapter))
        self.launch([*argv, "server", schema_dir, self.principal], env)
        self.endpoint = self.base + "/hooks/intercept"
        self.upload_endpoint = self.base + "/upload"

    def upstream_entries(self) -> Entries:
        """The receiver's own record (`POST /receipts`, the event token), as entries of
        our elicitation receipts: `{kind: elicitation, eventId, type, summary}`."""
        headers = {"Authorization": "Bearer " + self.token}
        try:
            status, body, _ = post(self.base + "/receipts", b"", headers, 10.0)
        except PostFailed as exc:
            return None, f"POST /receipts: {exc}"
        if status != 200:
            return None, f"POST /receipts answered {status}"
        try:
            listed = loads(body, origin="POST /receipts")
        except JsonError as exc:
            return None, str(exc)
        if not isinstance(listed, list):
            return None, "POST /receipts must answer a list of {message, bytes, summary}"
        entries: list[dict[str, Any]] = []
        for index, item in enumerate(listed):
            message = item.get("message") if isinstance(item, dict) else None
            params = message.get("params") if isinstance(message, dict) else None
            event = params.get("event") if isinstance(params, dict) else None
            if not isinstance(event, dict) or "summary" not in item:
                return None, f"POST /receipts entry {index} is not {{message, bytes, summary}}"
            entries.append(
                {
                    "kind": "elicitation",
                    "eventId": event.get("id"),
                    "type": event.get("type"),
                    "summary": item["summary"],
                }
            )
        return entries, None


def start_server(
    ctx: RunContext,
    server: Adapter,
    scenario_set: ElicitationSet,
    auth: str,
    server_file: Path,
    upload_token: str,
) -> Server | V1Receiver:
    """Our server (lifecycleServer, suite elicitation) or a v1 receiver, started. A v1
    receiver is told the file's `authenticatedSource` as the sender's identity (its
    `authenticated:<sender>` argument), which ours read from the file."""
    if is_v1(server):
        principal = scenario_set.document["authenticatedSource"]
        receiver = V1Receiver(ctx, server, principal, ctx.trust.bearer_token, upload_token)
        try:
            receiver.start()
        except ServerStartError:
            receiver.stop()
            raise
        return receiver
    ours = Server(
        ctx,
        server,
        "http",
        auth,
        server_file,
        command_key="lifecycleServer",
        extra={"suite": "elicitation", "uploadAuth": {"token": upload_token}},
    )
    ours.start()
    if ours.upload_endpoint is None:
        ours.stop()
        raise ServerStartError("ReadinessMalformed", "an elicitation server needs uploadEndpoint")
    return ours


@dataclass
class SenderRun:
    """What a v1 sender did for a set: a report in the shape of our clients'."""

    report: dict[str, Any]
    errors: list[CombinationError] = field(default_factory=list)


def _bind(value: Any, refs: dict[str, str]) -> Any:
    """Our contract's rebinding (docs/ELICITATION.md `send`): every `items[].body.ref`
    equal to a bound alias becomes the receiver's ref; upstream's driver rebinds
    before each intercept the same way."""
    if isinstance(value, dict):
        out = {k: _bind(v, refs) for k, v in value.items()}
        body = out.get("body")
        if isinstance(body, dict) and isinstance(body.get("ref"), str) and body["ref"] in refs:
            out["body"] = {**body, "ref": refs[body["ref"]]}
        return out
    if isinstance(value, list):
        return [_bind(v, refs) for v in value]
    return value


def run_sender(
    ctx: RunContext,
    client: Adapter,
    server: Server | V1Receiver,
    rows: list[ElicitationRow],
    auth: str,
    upload_token: str,
    stranger: str,
    set_name: str,
) -> SenderRun:
    """Each wire row's steps through the v1 sender, one process per step, after its
    row-start mark; what each step answered, reported as our client would."""
    found = command_of(client)
    if isinstance(found, str):
        return SenderRun({}, [CombinationError(f"client[{set_name}]", "ClientSpawn", found)])
    argv, env = found
    home = ctx.unique(f"elicitation-v1-sender-{client.name}")
    sender = _Sender(
        ctx=ctx,
        client=client,
        argv=argv,
        env=env,
        home=home,
        log=home / "client.log",
        server=server,
        token=ctx.trust.bearer_token if auth == "bearer" else "",
        upload_token=upload_token,
        credentials={"upload": upload_token, "unauthorized": stranger, "none": ""},
    )
    results = [_sender_row(sender, row) for row in rows]
    ctx.keep_log(sender.log, f"client-{client.name}-{set_name}.log")
    return SenderRun({"language": client.language, "results": results})


@dataclass
class _Sender:
    """A v1 sender's run over a set: its command and environment, its folder and the
    one log every step process appends to, the server it posts to, the event token it
    presents (the run's bearer token with bearer auth, else none), the upload token,
    and the upload token a step's `credential` names (`upload`, `unauthorized`: a
    stranger's, `none`)."""

    ctx: RunContext
    client: Adapter
    argv: list[str]
    env: dict[str, str]
    home: Path
    log: Path
    server: Server | V1Receiver
    token: str
    upload_token: str
    credentials: dict[str, str]


def _sender_row(sender: _Sender, row: ElicitationRow) -> dict[str, Any]:
    """One row's result as our client reports it: its row-start mark posted, then its
    steps in order, one sender process each, an upload's ref bound to its alias for
    the sends after it; the first step that did not run fails the row."""
    try:
        call(
            sender.server.control,
            "POST",
            "/mark",
            {"scenario": row.id, "kind": "row-start", "id": row.id},
        )
    except ControlError as exc:
        return {"id": row.id, "status": "failed", "error": f"POST /mark: {exc}"}
    refs: dict[str, str] = {}
    steps: list[dict[str, Any]] = []
    for index, step in enumerate(row.steps):
        upload = step["op"] == "upload"
        plan = _upload_plan(sender, step) if upload else _send_plan(sender, step, refs)
        answered, problem = _one_step(sender, plan)
        if problem is not None:
            failure = f"step {index} ({step['op']}): {problem}"
            return {"id": row.id, "status": "failed", "error": failure}
        assert answered is not None
        status, text = answered
        steps.append(_upload_step(step, status, text, refs) if upload else _send_step(status, text))
    return {"id": row.id, "status": "completed", "actual": {"steps": steps}}


def _upload_plan(sender: _Sender, step: dict[str, Any]) -> dict[str, Any]:
    """An upload step's one-step plan: its bytes posted to the server's `/upload` with
    their SHA-256 (the step's own when it gives one) and the upload token its
    `credential` names."""
    raw = base64.b64decode(step["bodyBase64"])
    digest = step.get("sha256") or _sha256(raw)
    plan_step = {
        "path": "/upload",
        "bytes": step["bodyBase64"],
        "headers": {
            "Content-Type": "application/octet-stream",
            "AHP-Content-SHA256": digest,
        },
    }
    return {
        "endpoint": (sender.server.upload_endpoint or "").removesuffix("/upload"),
        "token": sender.token,
        "uploadToken": sender.credentials[step["credential"]],
        "steps": [plan_step],
    }


def _send_plan(sender: _Sender, step: dict[str, Any], refs: dict[str, str]) -> dict[str, Any]:
    """A send step's one-step plan: its message, with the aliases uploaded so far bound
    to their refs, posted to the server's `/hooks/intercept`."""
    message = _bind(step["message"], refs)
    plan_step = {
        "path": "/hooks/intercept",
        "bytes": base64.b64encode(json.dumps(message).encode()).decode(),
        "headers": {"Content-Type": "application/json"},
    }
    return {
        "endpoint": sender.server.endpoint.rstrip("/").removesuffix("/hooks/intercept"),
        "token": sender.token,
        "uploadToken": sender.upload_token,
        "steps": [plan_step],
    }


def _upload_step(
    step: dict[str, Any], status: int, text: str, refs: dict[str, str]
) -> dict[str, Any]:
    """An upload step as our client reports it: the status and, when the server
    answered 201 with a string `ref`, that ref, then bound to the step's alias in
    `refs`."""
    ref = None
    if status == 201:
        try:
            ref = json.loads(text).get("ref")
        except (ValueError, AttributeError):
            ref = None
        if isinstance(ref, str):
            refs[step["alias"]] = ref
    return {"op": "upload", "status": status, "ref": ref}


def _send_step(status: int, text: str) -> dict[str, Any]:
    """A send step as our client reports it: accepted (200, with the response) or
    rejected, and the JSON-RPC error code when the answer carries an integer one."""
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return {
        "op": "send",
        "outcome": "accepted" if status == 200 else "rejected",
        "status": status,
        "error": code if isinstance(code, int) else None,
        "response": parsed if status == 200 else None,
    }


def _sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _one_step(sender: _Sender, plan: dict[str, Any]) -> tuple[tuple[int, str] | None, str | None]:
    """One `client` process over a one-step plan: ((status, body), None) or (None, why)."""
    ctx, log = sender.ctx, sender.log
    plan_file = sender.home / f"plan-{secrets.token_hex(4)}.json"
    plan_file.write_text(json.dumps(plan), encoding="utf-8")
    ran = run_plan(
        ctx, sender.client, [*sender.argv, "client"], sender.env, plan_file, log, STEP_TIMEOUT
    )
    plan_file.unlink()
    if ran.failed == "timeout":
        return None, f"the sender did not finish in {STEP_TIMEOUT:.0f}s"
    if ran.failed is not None:
        return None, ran.why
    text = ran.printed
    if ran.code != 0:
        return None, f"the sender {process.describe_exit(ran.code)}{log_tail(ctx, log, 3)}"
    try:
        answered = json.loads(text)
        status, body = answered[0]["status"], answered[0]["body"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None, f"the sender printed {text[:200]!r}, not [{{status, body}}]"
    if not isinstance(status, int) or not isinstance(body, str):
        return None, f"the sender printed {text[:200]!r}, not [{{status, body}}]"
    return (status, body), None


def unsupported_rows(
    outcome: Outcome, set_name: str, rows: list[tuple[ElicitationRow, str]]
) -> None:
    outcome.rows += [
        RowVerdict(set_name, row.id, Status.UNSUPPORTED, row.expected, error=reason)
        for row, reason in rows
    ]
