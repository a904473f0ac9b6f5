"""Receiver probes: the harness itself asks a lifecycle server's receivers what they accept.

Run on every HTTP combination whose rows passed, against that combination's
server, each probe a row of the set `receiver-probes` (docs/LIFECYCLE.md,
"What the harness checks"). The expected outcome of each is written here by
hand from the contract; the actual is what the server answered.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interop.jsonvalue import first_difference
from interop.results import RowVerdict, Status
from interop.runtime.context import RunContext
from interop.runtime.probe import Answer, event_token, send, tls_context
from interop.runtime.server import Server

SET = "receiver-probes"
PROBE_BYTES = bytes(range(256)) + b"\x00\xff\xfe"
CHANGED = b"changed bytes"
OCTETS = ("Content-Type", "application/octet-stream")
ACCEPTED = {"accepted": True, "body": ""}  # an accepted notification: 202 or 204, no body


EXPECTED: dict[str, dict[str, Any]] = {
    "upload-201-with-receipt": {
        "status": 201,
        "receipt": ["ref", "sha256", "size"],
        "size": len(PROBE_BYTES),
        "sha256": hashlib.sha256(PROBE_BYTES).hexdigest(),
    },
    "changed-bytes-get-a-new-ref": {"status": 201, "newRef": True},
    "upload-without-credential-401": {"status": 401},
    "upload-with-another-credential-401": {"status": 401},
    "upload-with-two-authorization-headers-400": {"status": 400},
    "upload-chunked-400": {"status": 400},
    "upload-content-encoded-400": {"status": 400},
    "upload-shorter-than-its-length-400": {"status": 400},
    "upload-over-the-limit-413": {"status": 413},
    "upload-with-the-event-credential-401": {"status": 401},
    "observe-a-stored-ref-accepted": {"accepted": True, "body": ""},
    "observe-with-size-in-the-body-400": {"status": 400},
    "observe-with-hash-in-the-body-400": {"status": 400},
    "observe-the-same-again-accepted": {"accepted": True, "body": ""},
    "observe-a-never-uploaded-ref-409": {"status": 409},
    "observe-a-never-uploaded-message-part-ref-409": {"status": 409},
    "no-answer-redirects": {"redirects": []},
}
NO_TOKEN = "this auth mode has no event token to present on the upload route"
# The probes upstream's lifecycle driver runs too (interop/lifecycle_matrix.py, receiver
# probes); the others check rules of our contract only, and a contract v1 server is not
# probed on them (its rows are unsupported, naming why).
V1_PROBES = frozenset(
    {
        "upload-201-with-receipt",
        "changed-bytes-get-a-new-ref",
        "upload-without-credential-401",
        "upload-with-another-credential-401",
        "observe-a-stored-ref-accepted",
        "observe-with-size-in-the-body-400",
        "observe-with-hash-in-the-body-400",
        "observe-the-same-again-accepted",
        "observe-a-never-uploaded-ref-409",
    }
)
OURS_ONLY = "a probe of our contract only, not of contract v1's receiver probes (docs/LIFECYCLE.md)"


def skipped(status: Status, reason: str) -> list[RowVerdict]:
    """Every probe row, none run (`status` inapplicable or not-run) for `reason`."""
    return [
        RowVerdict(SET, name, status, expected, error=reason) for name, expected in EXPECTED.items()
    ]


@dataclass
class Probe:
    name: str
    expected: dict[str, Any]
    actual: dict[str, Any]

    def verdict(self) -> RowVerdict:
        found = first_difference(self.expected, {k: self.actual.get(k) for k in self.expected})
        row = RowVerdict(SET, self.name, Status.PASSED, self.expected, self.actual)
        if found is not None:
            row.status = Status.FAILED
            row.error = (
                f"ProbeFailed: {found[0]}: expected {json.dumps(found[1])}, "
                f"got {json.dumps(found[2], default=str)}"
            )
        return row


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _upload_headers(
    data: bytes, token: str | None, *extra: tuple[str, str]
) -> list[tuple[str, str]]:
    headers = [OCTETS, ("AHP-Content-SHA256", _sha(data))]
    if token is not None:
        headers.append(("Authorization", f"Bearer {token}"))
    return [*headers, *extra]


def _observe_url(endpoint: str) -> str:
    base = endpoint[: -len("/intercept")] if endpoint.endswith("/intercept") else endpoint
    return base.rstrip("/") + "/observe"


def _observation(template: dict[str, Any], body: dict[str, Any]) -> bytes:
    event = copy.deepcopy(template["params"]["event"])
    event["id"] = "receiver-probe-event"
    event["items"] = [
        {
            "id": "receiver-probe-item",
            "kind": "attachment",
            "mediaType": "application/octet-stream",
            "selection": "body",
            "body": body,
        }
    ]
    message = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }
    return json.dumps(message).encode()


def _message_part_observation(template: dict[str, Any], body: dict[str, Any]) -> bytes:
    """A `tool.after` observation (its items are messages) whose one message has an
    attachment part with `body`: every body ref of the items counts, the parts of
    message items too (docs/LIFECYCLE.md, "Server")."""
    source = template["params"]["event"]
    event = {
        "id": "receiver-probe-message-event",
        "source": source["source"],
        "type": "tool.after",
        "time": source["time"],
        "call": {"id": "receiver-probe-call"},
        "tool": copy.deepcopy(source["tool"]),
        "path": "native",
        "outcome": "ok",
        "execution": {"status": "executed"},
        "items": [
            {
                "id": "receiver-probe-message",
                "role": "tool",
                "parts": [
                    {
                        "id": "receiver-probe-message-part",
                        "kind": "attachment",
                        "mediaType": "application/octet-stream",
                        "selection": "body",
                        "body": body,
                    }
                ],
            }
        ],
    }
    if "session" in source:
        event["session"] = copy.deepcopy(source["session"])
    message = {
        "jsonrpc": "2.0",
        "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event},
    }
    return json.dumps(message).encode()


def run_probes(
    ctx: RunContext,
    server: Server,
    mode: str,
    token: str,
    stranger: str,
    template: dict[str, Any],
    *,
    v1: bool = False,
) -> list[RowVerdict]:
    """Every probe against one running server; `template` is a scenario request to observe.
    A contract v1 server (`v1`) is probed on upstream's probes only."""
    ours = not v1
    upload = server.upload_endpoint or ""
    probes: list[Probe] = []
    statuses: list[int] = []

    def post(url: str, **options: Any) -> Answer:
        answer = send(url, **options)
        statuses.append(answer.status)
        return answer

    def upload_probe(name: str, expected: int, build: Callable[[], Answer]) -> None:
        try:
            answer = build()
            probes.append(Probe(name, {"status": expected}, {"status": answer.status}))
        except OSError as exc:
            probes.append(Probe(name, {"status": expected}, {"status": None, "error": str(exc)}))

    first = post(upload, headers=_upload_headers(PROBE_BYTES, token), body=PROBE_BYTES)
    receipt = first.json()
    probes.append(
        Probe(
            "upload-201-with-receipt",
            EXPECTED["upload-201-with-receipt"],
            {
                "status": first.status,
                "receipt": sorted(receipt) if isinstance(receipt, dict) else receipt,
                "size": receipt.get("size") if isinstance(receipt, dict) else None,
                "sha256": receipt.get("sha256") if isinstance(receipt, dict) else None,
            },
        )
    )
    ref = receipt.get("ref") if isinstance(receipt, dict) else None
    changed = post(upload, headers=_upload_headers(CHANGED, token), body=CHANGED)
    other = changed.json()
    new_ref = other.get("ref") if isinstance(other, dict) else None
    probes.append(
        Probe(
            "changed-bytes-get-a-new-ref",
            {"status": 201, "newRef": True},
            {"status": changed.status, "newRef": bool(new_ref) and new_ref != ref},
        )
    )
    upload_probe(
        "upload-without-credential-401",
        401,
        lambda: post(upload, headers=_upload_headers(CHANGED, None), body=CHANGED),
    )
    upload_probe(
        "upload-with-another-credential-401",
        401,
        lambda: post(upload, headers=_upload_headers(CHANGED, stranger), body=CHANGED),
    )
    if ours:
        upload_probe(
            "upload-with-two-authorization-headers-400",
            400,
            lambda: post(
                upload,
                headers=_upload_headers(CHANGED, token, ("Authorization", f"Bearer {token}")),
                body=CHANGED,
            ),
        )
        upload_probe(
            "upload-chunked-400",
            400,
            lambda: post(
                upload,
                headers=_upload_headers(CHANGED, token, ("Transfer-Encoding", "chunked")),
                body=b"d\r\nchanged bytes\r\n0\r\n\r\n",
            ),
        )
        upload_probe(
            "upload-content-encoded-400",
            400,
            lambda: post(
                upload,
                headers=_upload_headers(CHANGED, token, ("Content-Encoding", "gzip")),
                body=CHANGED,
            ),
        )
        upload_probe(
            "upload-shorter-than-its-length-400",
            400,
            lambda: post(
                upload, headers=_upload_headers(CHANGED, token), body=CHANGED, declared_length=40
            ),
        )
        upload_probe(
            "upload-over-the-limit-413",
            413,
            lambda: post(
                upload,
                headers=_upload_headers(b"", token, ("Content-Length", str(1048577))),
                body=b"",
            ),
        )
    credential = event_token(ctx.trust, mode, ctx.profile)
    if credential is not None and ours:
        upload_probe(
            "upload-with-the-event-credential-401",
            401,
            lambda: post(upload, headers=_upload_headers(CHANGED, credential), body=CHANGED),
        )
    # Observations on the event route, with the event credential of the mode.
    context = (
        tls_context(ctx.trust, mode, ctx.profile) if server.endpoint.startswith("https") else None
    )
    event_headers = [("Content-Type", "application/json")]
    if credential is not None:
        event_headers.append(("Authorization", f"Bearer {credential}"))
    observe = _observe_url(server.endpoint)

    def observe_probe(
        name: str,
        body: dict[str, Any],
        expected: dict[str, Any],
        build: Callable[[dict[str, Any], dict[str, Any]], bytes] = _observation,
    ) -> None:
        try:
            answer = post(
                observe, headers=event_headers, body=build(template, body), context=context
            )
            actual = {
                "status": answer.status,
                "accepted": answer.status in (202, 204),  # AHP-HTTP-001: either
                "body": answer.body.decode("utf-8", "replace"),
            }
        except OSError as exc:
            actual = {"status": None, "error": str(exc)}
        probes.append(Probe(name, expected, actual))

    if isinstance(ref, str):
        observe_probe("observe-a-stored-ref-accepted", {"ref": ref}, ACCEPTED)
        observe_probe(
            "observe-with-size-in-the-body-400",
            {"ref": ref, "size": len(PROBE_BYTES) + 1, "sha256": _sha(PROBE_BYTES)},
            {"status": 400},
        )
        observe_probe(
            "observe-with-hash-in-the-body-400",
            {"ref": ref, "sha256": "0" * 64},
            {"status": 400},
        )
        observe_probe("observe-the-same-again-accepted", {"ref": ref}, ACCEPTED)
    observe_probe("observe-a-never-uploaded-ref-409", {"ref": "never-uploaded"}, {"status": 409})
    if ours:
        observe_probe(
            "observe-a-never-uploaded-message-part-ref-409",
            {"ref": "never-uploaded"},
            {"status": 409},
            _message_part_observation,
        )
        probes.append(
            Probe(
                "no-answer-redirects",
                {"redirects": []},
                {"redirects": sorted({s for s in statuses if 300 <= s < 400})},
            )
        )
    found = {probe.name: probe.verdict() for probe in probes}
    rows = []
    for name, expected in EXPECTED.items():
        if name in found:
            rows.append(found[name])
        elif v1 and name not in V1_PROBES:
            rows.append(RowVerdict(SET, name, Status.UNSUPPORTED, expected, error=OURS_ONLY))
        elif name == "upload-with-the-event-credential-401":
            rows.append(RowVerdict(SET, name, Status.INAPPLICABLE, expected, error=NO_TOKEN))
        else:
            rows.append(
                RowVerdict(
                    SET,
                    name,
                    Status.FAILED,
                    expected,
                    error="ProbeFailed: not run: the first upload gave no ref",
                )
            )
    return rows
