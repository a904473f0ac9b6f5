"""Catalogue receiver probes: the harness itself asks a server's receiver for its verdicts.

Run on every HTTP combination whose rows passed, after its receipts were
read, against that combination's server (its lineage state then holds the
set's events; the probes use identities of their own). Each probe is a row
of the set `catalogue-receiver-probes` (docs/CATALOGUE.md, "Receiver
probes"); the expected answer of each is written here by hand from the
contract, the actual is what the server answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interop.jsonvalue import first_difference
from interop.results import RowVerdict, Status
from interop.runtime.context import RunContext
from interop.runtime.probe import Answer, event_token, send, tls_context
from interop.runtime.server import Server

SET = "catalogue-receiver-probes"
SOURCE = "urn:ahp-interop:catalogue-probe"
ACCEPTED = (202, 204)  # the HTTP binding's answers to an accepted notification

EXPECTED: dict[str, dict[str, Any]] = {
    "capabilities-200-with-the-same-id": {"status": 200, "id": "receiver-probe"},
    "observe-accepted": {"accepted": True, "body": ""},
    "observe-schema-invalid-400": {"status": 400},
    "observe-self-parent-409": {"status": 409},
    "observe-redelivery-accepted": {"accepted": True},
    "observe-identity-reused-409": {"status": 409},
    "observe-child-of-a-rejected-event-accepted": {"accepted": True},
    "observe-no-op-actual-change-409": {"status": 409},
}


def skipped(status: Status, reason: str) -> list[RowVerdict]:
    """Every probe row, none run (`status` inapplicable or not-run) for `reason`."""
    return [
        RowVerdict(SET, name, status, expected, error=reason) for name, expected in EXPECTED.items()
    ]


def _event(ident: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": ident, "source": SOURCE, "time": "2026-12-01T09:30:00Z", "type": kind, **fields}


def _observe(event: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }
    return json.dumps(message).encode()


def _turn_end(ident: str) -> dict[str, Any]:
    return _event(
        ident,
        "turn.end",
        turn={"id": "probe-turn"},
        outcome="completed",
        continuationCount=0,
        items=[],
    )


def _task(ident: str, kind: str, **task: Any) -> dict[str, Any]:
    return _event(ident, kind, task={"id": "probe-task", "operation": "create", **task})


def _base(endpoint: str) -> str:
    base = endpoint[: -len("/intercept")] if endpoint.endswith("/intercept") else endpoint
    return base.rstrip("/")


@dataclass(frozen=True)
class _Receiver:
    """A catalogue server's receiver as an honest client reaches it: its base URL, the
    mode's event credential (if any) and, over https, the mode's TLS."""

    base: str
    headers: list[tuple[str, str]]
    context: Any  # over https an ssl.SSLContext (runtime.probe.tls_context), else None

    def post(self, path: str, body: bytes) -> Answer:
        """`body` sent to the route `path` below the base URL."""
        return send(self.base + path, headers=self.headers, body=body, context=self.context)

    def observe(self, event: dict[str, Any]) -> Answer:
        """A `hooks/observe` of `event`."""
        return self.post("/observe", _observe(event))


def _receiver(ctx: RunContext, server: Server, mode: str) -> _Receiver:
    """The receiver of `server` as an honest client of `mode` reaches it."""
    base = _base(server.endpoint or "")
    headers = [("Content-Type", "application/json")]
    token = event_token(ctx.trust, mode, ctx.profile)
    if token is not None:
        headers.append(("Authorization", f"Bearer {token}"))
    context = tls_context(ctx.trust, mode, ctx.profile) if base.startswith("https:") else None
    return _Receiver(base, headers, context)


def _probes(receiver: _Receiver) -> list[tuple[str, Callable[[], Answer]]]:
    """Every probe by name, in the order they run: each one's answer may depend on the
    events the receiver recorded or refused before it."""
    capabilities = {
        "jsonrpc": "2.0",
        "id": "receiver-probe",
        "method": "hooks/capabilities",
        "params": {"protocolVersion": "draft"},
    }
    accepted = _turn_end("receiver-probe:accepted")
    invalid = {k: v for k, v in _turn_end("receiver-probe:invalid").items() if k != "outcome"}
    cyclic = _task("receiver-probe:cycle", "task.change.before", change={"status": "open"})
    cyclic["parentEventId"] = "receiver-probe:cycle"
    reused = _task("receiver-probe:accepted", "task.change.before", change={"status": "open"})
    # the self-parented event was rejected, so it is unknown and a child naming it is
    # free; had it been recorded, this child of another task would be the wrong kind
    child = _event(
        "receiver-probe:child",
        "task.change.after",
        task={"id": "another-probe-task", "operation": "create", "change": {"status": "open"}},
    )
    child["parentEventId"] = "receiver-probe:cycle"
    no_op = _event(
        "receiver-probe:no-op",
        "task.change.after",
        task={
            "id": "probe-task",
            "operation": "update",
            "change": {"status": "open"},
            "prior": {"status": "open"},
        },
    )
    return [
        (
            "capabilities-200-with-the-same-id",
            lambda: receiver.post("/capabilities", json.dumps(capabilities).encode()),
        ),
        ("observe-accepted", lambda: receiver.observe(accepted)),
        ("observe-schema-invalid-400", lambda: receiver.observe(invalid)),
        ("observe-self-parent-409", lambda: receiver.observe(cyclic)),
        ("observe-redelivery-accepted", lambda: receiver.observe(accepted)),
        ("observe-identity-reused-409", lambda: receiver.observe(reused)),
        ("observe-child-of-a-rejected-event-accepted", lambda: receiver.observe(child)),
        ("observe-no-op-actual-change-409", lambda: receiver.observe(no_op)),
    ]


def _probe_row(name: str, make: Callable[[], Answer]) -> RowVerdict:
    """The probe's row: its answer (status, whether accepted, body, the JSON reply's id;
    a connection error is the actual) judged on the keys EXPECTED names."""
    expected = EXPECTED[name]
    try:
        answer = make()
        actual: dict[str, Any] = {
            "status": answer.status,
            "accepted": answer.status in ACCEPTED,
            "body": answer.body.decode("utf-8", "replace"),
        }
        reply = answer.json()
        if isinstance(reply, dict):
            actual["id"] = reply.get("id")
    except OSError as exc:
        actual = {"status": None, "error": str(exc)}
    shown = {k: actual.get(k) for k in expected}
    found = first_difference(expected, shown)
    row = RowVerdict(SET, name, Status.PASSED, expected, actual)
    if found is not None:
        row.status = Status.FAILED
        row.error = (
            f"ProbeFailed: {found[0]}: expected {json.dumps(found[1])}, "
            f"got {json.dumps(found[2], default=str)}"
        )
    return row


def run_probes(ctx: RunContext, server: Server, mode: str) -> list[RowVerdict]:
    """Every probe against one running catalogue server, in order."""
    receiver = _receiver(ctx, server, mode)
    return [_probe_row(name, make) for name, make in _probes(receiver)]
