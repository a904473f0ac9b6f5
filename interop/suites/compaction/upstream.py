"""Contract v1's compaction-wire receiver behind our hosts (docs/COMPACTION.md, "With
a contract v1 adapter"; upstream source: `interop/compaction_wire_matrix.py`
@8f91ac41 in the spec repository).

Upstream does not run it from adapter.json: its driver knows one command per
language (`interop/compaction_wire.py`, `interop/compaction-wire.mjs`, Go's
`cmd/compaction-wire`, Rust's `target/debug/compaction_wire`) and starts the
receiver as `<cmd> <schemaDir> <storeDir> <subscriptions.json> server`. The
receiver prints `{"endpoint"}`, serves `/upload` and `/hooks/intercept`, knows a
subscription only by its credential (`AHP_COMPACTION_TOKENS`, a JSON map token ->
scope), answers every accepted call of a scope with that scope's action from
the subscriptions file (`{"kind": "effects", "effects": [...]}` or an append),
refuses an invalid request with -32602, and appends each accepted exchange to
`<storeDir>/receipts.jsonl` as `{subscription, request, response}`.

Our host calls one backend with one credential, and our rows script the n-th
reply of each boundary. So every scripted reply becomes a scope of its own
(`<boundary id>#<n>`) whose action is that reply's effects, and the harness,
between our client and the receiver, forwards the n-th call of a boundary
with that scope's token in place of the run's: the bytes and every other
header go through unchanged, and the answer comes back unchanged. Over stdio
upstream's host spawns the receiver once per call (`stdio <scope>`); there our
host starts the harness's bridge as its server (`stdio_bridge.py`), which
does the same for each line. The receiver's record is read back as our
receipts (`received`, then `replied`, per line) with the client's marks
placed where it stood. The receiver takes
no notification (it serves `/upload` and `/hooks/intercept` only): a
`hooks/observe` is not sent to it, over HTTP (the forwarder answers 204, as
an accepting receiver would, with nothing recorded) as over stdio, and the
server-side receipt of notifications is not asserted (the host's report of
whom it notified still is). Rows the receiver cannot play are unsupported
with the reason: scripted faults or replies other than a list of effects,
and replies the schema refuses (it validates its own and sends none it
refuses). What the receiver answered each call is kept (`answers`) as wire
evidence for a failed row. Nothing here judges: the suite's verifier does.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.runtime import listener
from interop.runtime.context import RunContext
from interop.runtime.post import PostFailed, post
from interop.runtime.server import ServerStartError
from interop.schema import canonical
from interop.suites.compaction.scenarios import CompactionRow, CompactionSet
from interop.suites.compaction.stdio_bridge import (
    NOT_SENT,
    ScopeCalls,
    describe,
    is_notification,
    read_receipts,
    request_id,
    scope_name,
)
from interop.suites.v1control import Entries
from interop.suites.v1fixture import Fixture, find_command

NONCORE = (
    "interop/compaction_wire.py",
    "interop/compaction-wire.mjs",
    "cmd/compaction-wire",
    "target/debug/compaction_wire",
)
SOURCE = "upstream interop/compaction_wire_matrix.py@8f91ac41"
RECEIPT_SHAPE = (
    "contract v1 compaction-wire receiver: <storeDir>/receipts.jsonl "
    "{subscription, request, response}, one scope per scripted reply"
)
TOKENS_ENV = "AHP_COMPACTION_TOKENS"
UPLOAD_TOKENS_ENV = "AHP_COMPACTION_UPLOAD_TOKENS"
INTERCEPT = "/hooks/intercept"
STDIO_CALL_TIMEOUT = 20  # seconds: upstream's host waits as long for a stdio receiver
RECEIVER_ONLY_BEARER = (
    "contract v1's compaction-wire receiver knows a subscription by its bearer token "
    f"alone ({SOURCE}): over HTTP it runs with bearer only"
)
HOST_OWN_CASES = (
    "contract v1's compaction-wire host (`host`) composes its own requests from upstream's "
    "case plans and reads no scenario file: it runs the plans of scenarios/compaction-host.json "
    f"({SOURCE}); our rows script the requests a host sends"
)
EFFECTS_ONLY = (
    "contract v1's compaction-wire receiver answers a scope with one fixed list of effects "
    f"({SOURCE}); this row scripts a fault or another reply"
)

VALID_REPLIES = (
    "contract v1's compaction-wire receiver validates its own reply against intercept-response "
    f"and sends none it refuses (it answers -32602 and records nothing) ({SOURCE}); this row "
    "scripts a reply the schema refuses"
)
RESPONSE = "intercept-response.schema.json"


def command_of(adapter: Adapter) -> tuple[list[str], dict[str, str]] | str:
    """The v1 compaction-wire adapter's command and environment, or why there is none."""
    return find_command(adapter, NONCORE, "compaction-wire", SOURCE)


def _calls(row: CompactionRow, boundary: str) -> int:
    """How many calls of a boundary can reach the run's server: its intercept
    subscriptions on a backend other than the reserved unreachable one."""
    subs = row.raw.get(boundary) or []
    return sum(
        1 for s in subs if s.get("mode") == "intercept" and s.get("backend") != "unreachable"
    )


def _effects(row: CompactionRow, boundary: str, entry: Any) -> list[Any] | None:
    """The effects of a scripted reply the receiver can send as it is, else None."""
    if not isinstance(entry, dict) or set(entry) != {"jsonrpc", "id", "result"}:
        return None
    result = entry["result"]
    if entry["jsonrpc"] != "2.0" or entry["id"] != row.boundary_id(boundary):
        return None
    if not isinstance(result, dict) or set(result) != {"protocolVersion", "effects"}:
        return None
    effects = result["effects"]
    return effects if result["protocolVersion"] == "draft" and isinstance(effects, list) else None


def not_for_v1(row: CompactionRow) -> str | None:
    """Why a row cannot run against a v1 receiver, else None."""
    if row.negative is not None:
        return None
    for boundary in ("before", "after"):
        sequence = row.raw.get("responseSequences", {}).get(boundary) or []
        calls = _calls(row, boundary)  # no sequence: the row expects no call there
        if any(_effects(row, boundary, e) is None for e in sequence[:calls]):
            return EFFECTS_ONLY
        if any(canonical().issue(RESPONSE, e) is not None for e in sequence[:calls]):
            return VALID_REPLIES
    return None


def scopes_of(rows: list[CompactionRow]) -> dict[tuple[str, int], dict[str, Any]]:
    """A scope per call a row's server can get: (request id, n) -> the n-th scripted
    reply's action (the last one again past the end; none for a boundary with no
    scripted reply, whose call the receiver refuses as unknown, 401). A negative's
    one call gets a scope with no effects: the receiver must refuse it before its
    action counts."""
    scopes: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        if row.negative is not None:
            ident = row.negative.get("id")
            if isinstance(ident, str):
                scopes[(ident, 0)] = {"kind": "effects", "effects": []}
            continue
        for boundary in ("before", "after"):
            sequence = row.raw.get("responseSequences", {}).get(boundary) or []
            for n in range(_calls(row, boundary) if sequence else 0):
                effects = _effects(row, boundary, sequence[min(n, len(sequence) - 1)])
                scopes[(row.boundary_id(boundary), n)] = {"kind": "effects", "effects": effects}
    return scopes


def scope_names(scopes: dict[tuple[str, int], dict[str, Any]]) -> dict[tuple[str, int], str]:
    """Each scope's name in the subscriptions file: `<request id>#<n>`."""
    return {key: scope_name(*key) for key in scopes}


def write_subscriptions(
    home: Path, scopes: dict[tuple[str, int], dict[str, Any]]
) -> tuple[Path, Path]:
    """The receiver's subscriptions file (scope name -> action) and its store folder."""
    names = scope_names(scopes)
    store = home / "store"
    store.mkdir(parents=True, exist_ok=True)
    subscriptions = home / "subscriptions.json"
    actions = {names[key]: action for key, action in scopes.items()}
    subscriptions.write_text(json.dumps(actions, indent=1), encoding="utf-8")
    return subscriptions, store


def subset(scenario_set: CompactionSet, rows: list[CompactionRow]) -> CompactionSet:
    return replace(scenario_set, rows=tuple(rows))


class V1Receiver(Fixture):
    """A contract v1 compaction-wire receiver, with our control calls served and the
    scope forwarder (above) in front of it. `endpoint` is the forwarder's."""

    source = SOURCE

    def __init__(
        self,
        ctx: RunContext,
        adapter: Adapter,
        scopes: dict[tuple[str, int], dict[str, Any]],
        token: str,
    ) -> None:
        super().__init__(ctx, adapter, "compaction-v1")
        self.token = token  # the run's bearer token, which our client sends
        self.scopes = scopes
        self.names = scope_names(scopes)
        self.tokens = {name: secrets.token_urlsafe(24) for name in self.names.values()}
        for secret in self.tokens.values():
            ctx.redactor.add(secret)
        self.store = self.home / "store"
        self.calls = ScopeCalls(self.tokens)
        self.answers: dict[str, list[str]] = {}  # request id -> what the receiver answered
        self._lock = threading.Lock()
        self._forwarder: listener.Listener | None = None

    def start(self) -> None:
        found = command_of(self.adapter)
        if isinstance(found, str):
            raise ServerStartError("ServerSpawn", found)
        argv, env = found
        config, self.store = write_subscriptions(self.home, self.scopes)
        env[TOKENS_ENV] = json.dumps({t: name for name, t in self.tokens.items()})
        uploads = {secrets.token_urlsafe(24): name for name in self.tokens}
        for secret in uploads:
            self.ctx.redactor.add(secret)
        env[UPLOAD_TOKENS_ENV] = json.dumps(uploads)
        schema_dir = str(self.ctx.schema_dir(self.adapter))
        self.launch([*argv, schema_dir, str(self.store), str(config), "server"], env)
        self._serve_forwarder()

    def scope_token(self, ident: str | None) -> str | None:
        """The token of the scope this call is for (ScopeCalls), None for none."""
        name = self.calls.scope(ident)
        return self.tokens[name] if name is not None else None

    def note(self, path: str, ident: str | None, status: int, reply: bytes) -> None:
        """What the receiver answered a call, kept by the call's id (wire evidence)."""
        said = describe(f"{path}: HTTP {status}", reply) if status != 204 else NOT_SENT
        with self._lock:
            self.answers.setdefault(str(ident), []).append(said)

    def _serve_forwarder(self) -> None:
        self._forwarder = listener.serve(self.forward, bare=True, nodelay=True)
        self.endpoint = self._forwarder.url(INTERCEPT)

    def forward(self, request: listener.Request) -> listener.Reply:
        """A call of our client, sent on to the receiver: a notification is not (the
        receiver takes none: answered 204, as over stdio); an intercept with the run's
        token goes with its scope's token in its place, every other header and the
        bytes unchanged, and the receiver's answer comes back unchanged."""
        body = request.body or b""
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        if is_notification(body):
            self.note(request.path, None, 204, b"")
            return listener.Reply(204, b"", None)
        given = request.headers.get_all("Authorization") or []
        ident = request_id(body)
        if request.path == INTERCEPT and given == [f"Bearer {self.token}"]:
            scope = self.scope_token(ident)
            if scope is not None:
                headers = {
                    k: (f"Bearer {scope}" if k.lower() == "authorization" else v)
                    for k, v in headers.items()
                }
        status, reply, kind = _forward(self.base + request.path, body, headers)
        self.note(request.path, ident, status, reply)
        return listener.Reply(status, reply, kind)

    def upstream_entries(self) -> Entries:
        return read_receipts(self.store)

    def stop(self) -> None:
        if self._forwarder is not None:
            self._forwarder.close()
        super().stop()


def _forward(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str | None]:
    """POST to the receiver; a failure to reach it is answered 502 with the cause."""
    try:
        return post(url, body, headers, 30.0)
    except PostFailed as exc:
        return 502, json.dumps({"error": f"the receiver: {exc}"}).encode(), "application/json"


def stdio_bridge_keys(
    ctx: RunContext,
    server: Adapter,
    scopes: dict[tuple[str, int], dict[str, Any]],
    home: Path,
) -> tuple[dict[str, Any], Path]:
    """The client config keys that make our host start the stdio bridge in front of
    the v1 receiver (suites/compaction/stdio_bridge.py), and where the bridge notes
    what each receiver process answered."""
    found = command_of(server)
    assert not isinstance(found, str)  # checked before: an SDK without one is unsupported
    argv, env = found
    subscriptions, store = write_subscriptions(home, scopes)
    (home / "ready").mkdir(exist_ok=True)
    answers = home / "answers.jsonl"
    schema_dir = str(ctx.schema_dir(server))
    config = {
        "readinessFile": str(home / "ready" / "readiness.json"),
        "receiver": [*argv, schema_dir, str(store), str(subscriptions)],
        "cwd": str(server.directory),
        "env": {k: env[k] for k in ("PYTHONPATH",) if k in env},
        "scopes": sorted(scope_names(scopes).values()),
        "store": str(store),
        "answers": str(answers),
        "timeoutSeconds": STDIO_CALL_TIMEOUT,
    }
    config_path = home / "bridge-config.json"
    config_path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    command = [sys.executable, "-m", "interop.suites.compaction.stdio_bridge"]
    keys = {"serverCommand": command, "serverCwd": str(home), "serverConfig": str(config_path)}
    return keys, answers


def read_answers(path: Path) -> dict[str, list[str]]:
    """The bridge's notes of what each receiver process answered, by request id."""
    found: dict[str, list[str]] = {}
    if not path.exists():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            note = json.loads(line)
        except ValueError:
            continue
        found.setdefault(str(note.get("id")), []).append(str(note.get("said")))
    return found
