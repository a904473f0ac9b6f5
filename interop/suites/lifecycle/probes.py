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
from dataclasses import dataclass, field
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


@dataclass
class _Probing:
    """The probes against one server as they run: each probe in the order run, and the
    HTTP status of every answer the server gave (`no-answer-redirects` reads them all)."""

    probes: list[Probe] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)

    def post(self, url: str, **options: Any) -> Answer:
        """`send` to `url`, the answer's status kept."""
        answer = send(url, **options)
        self.statuses.append(answer.status)
        return answer

    def status_probe(self, name: str, expected: int, build: Callable[[], Answer]) -> None:
        """A probe judged on its HTTP status alone; a connection error is its actual."""
        try:
            answer = build()
            self.probes.append(Probe(name, {"status": expected}, {"status": answer.status}))
        except OSError as exc:
            self.probes.append(
                Probe(name, {"status": expected}, {"status": None, "error": str(exc)})
            )


@dataclass(frozen=True)
class _UploadRoute:
    """The server's upload listener, the run's upload credential (`token`) and another
    client's (`stranger`)."""

    url: str
    token: str
    stranger: str


@dataclass(frozen=True)
class _EventRoute:
    """The server's observe route with what an honest client presents there: the mode's
    event credential (if any) and, over https, its TLS; `template` is the scenario request
    whose event each observation copies."""

    url: str
    headers: list[tuple[str, str]]
    context: Any  # over https an ssl.SSLContext (runtime.probe.tls_context), else None
    template: dict[str, Any]


def _receipt_probes(probing: _Probing, route: _UploadRoute) -> str | None:
    """`upload-201-with-receipt` and `changed-bytes-get-a-new-ref`: two honest uploads of
    different bytes. Returns the first upload's ref (None: its receipt names no string)."""
    first = probing.post(
        route.url, headers=_upload_headers(PROBE_BYTES, route.token), body=PROBE_BYTES
    )
    receipt = first.json()
    probing.probes.append(
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
    changed = probing.post(route.url, headers=_upload_headers(CHANGED, route.token), body=CHANGED)
    other = changed.json()
    new_ref = other.get("ref") if isinstance(other, dict) else None
    probing.probes.append(
        Probe(
            "changed-bytes-get-a-new-ref",
            {"status": 201, "newRef": True},
            {"status": changed.status, "newRef": bool(new_ref) and new_ref != ref},
        )
    )
    return ref if isinstance(ref, str) else None


def _credential_probes(probing: _Probing, route: _UploadRoute) -> None:
    """An upload without a credential, and one with another client's: each a 401."""
    probing.status_probe(
        "upload-without-credential-401",
        401,
        lambda: probing.post(route.url, headers=_upload_headers(CHANGED, None), body=CHANGED),
    )
    probing.status_probe(
        "upload-with-another-credential-401",
        401,
        lambda: probing.post(
            route.url, headers=_upload_headers(CHANGED, route.stranger), body=CHANGED
        ),
    )


def _framing_probes(probing: _Probing, route: _UploadRoute) -> None:
    """The uploads our contract refuses for their framing (not probed on a contract v1
    server): two Authorization headers, chunked, content-encoded, shorter than its
    Content-Length (each a 400), and over the limit of 1048576 bytes (a 413)."""
    upload, token = route.url, route.token
    probing.status_probe(
        "upload-with-two-authorization-headers-400",
        400,
        lambda: probing.post(
            upload,
            headers=_upload_headers(CHANGED, token, ("Authorization", f"Bearer {token}")),
            body=CHANGED,
        ),
    )
    probing.status_probe(
        "upload-chunked-400",
        400,
        lambda: probing.post(
            upload,
            headers=_upload_headers(CHANGED, token, ("Transfer-Encoding", "chunked")),
            body=b"d\r\nchanged bytes\r\n0\r\n\r\n",
        ),
    )
    probing.status_probe(
        "upload-content-encoded-400",
        400,
        lambda: probing.post(
            upload,
            headers=_upload_headers(CHANGED, token, ("Content-Encoding", "gzip")),
            body=CHANGED,
        ),
    )
    probing.status_probe(
        "upload-shorter-than-its-length-400",
        400,
        lambda: probing.post(
            upload, headers=_upload_headers(CHANGED, token), body=CHANGED, declared_length=40
        ),
    )
    probing.status_probe(
        "upload-over-the-limit-413",
        413,
        lambda: probing.post(
            upload,
            headers=_upload_headers(b"", token, ("Content-Length", str(1048577))),
            body=b"",
        ),
    )


def _event_route(
    ctx: RunContext,
    server: Server,
    mode: str,
    credential: str | None,
    template: dict[str, Any],
) -> _EventRoute:
    """The observe route beside the server's event endpoint, presenting `credential` (the
    event credential of `mode`, None: none) and the mode's TLS over https."""
    context = (
        tls_context(ctx.trust, mode, ctx.profile) if server.endpoint.startswith("https") else None
    )
    headers = [("Content-Type", "application/json")]
    if credential is not None:
        headers.append(("Authorization", f"Bearer {credential}"))
    return _EventRoute(_observe_url(server.endpoint), headers, context, template)


def _observe_probe(
    probing: _Probing,
    route: _EventRoute,
    name: str,
    body: dict[str, Any],
    expected: dict[str, Any],
    build: Callable[[dict[str, Any], dict[str, Any]], bytes] = _observation,
) -> None:
    """One observation whose attachment has `body`, judged on `expected`: its actual is
    the status, whether it was accepted and the answer's body; a connection error is its
    actual."""
    try:
        answer = probing.post(
            route.url,
            headers=route.headers,
            body=build(route.template, body),
            context=route.context,
        )
        actual = {
            "status": answer.status,
            "accepted": answer.status in (202, 204),  # AHP-HTTP-001: either
            "body": answer.body.decode("utf-8", "replace"),
        }
    except OSError as exc:
        actual = {"status": None, "error": str(exc)}
    probing.probes.append(Probe(name, expected, actual))


def _stored_ref_probes(probing: _Probing, route: _EventRoute, ref: str) -> None:
    """Observations of the first upload's `ref`: accepted, refused (400) when the body
    also declares a size or a hash, and accepted again when sent twice."""
    _observe_probe(probing, route, "observe-a-stored-ref-accepted", {"ref": ref}, ACCEPTED)
    _observe_probe(
        probing,
        route,
        "observe-with-size-in-the-body-400",
        {"ref": ref, "size": len(PROBE_BYTES) + 1, "sha256": _sha(PROBE_BYTES)},
        {"status": 400},
    )
    _observe_probe(
        probing,
        route,
        "observe-with-hash-in-the-body-400",
        {"ref": ref, "sha256": "0" * 64},
        {"status": 400},
    )
    _observe_probe(probing, route, "observe-the-same-again-accepted", {"ref": ref}, ACCEPTED)


def _rows(probes: list[Probe], v1: bool) -> list[RowVerdict]:
    """A row for every probe in EXPECTED's order: the verdict of each probe run; one not
    run is unsupported (a probe of our contract on a contract v1 server), inapplicable
    (no event credential in the mode) or failed (no ref to observe)."""
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
    """Every probe against one running server, in this order (each one's answer may
    depend on those before); `template` is a scenario request to observe. A contract v1
    server (`v1`) is probed on upstream's probes only."""
    ours = not v1
    probing = _Probing()
    upload = _UploadRoute(server.upload_endpoint or "", token, stranger)
    ref = _receipt_probes(probing, upload)
    _credential_probes(probing, upload)
    if ours:
        _framing_probes(probing, upload)
    credential = event_token(ctx.trust, mode, ctx.profile)
    if credential is not None and ours:
        probing.status_probe(
            "upload-with-the-event-credential-401",
            401,
            lambda: probing.post(
                upload.url, headers=_upload_headers(CHANGED, credential), body=CHANGED
            ),
        )
    # Observations on the event route, with the event credential of the mode.
    observe = _event_route(ctx, server, mode, credential, template)
    if ref is not None:
        _stored_ref_probes(probing, observe, ref)
    _observe_probe(
        probing,
        observe,
        "observe-a-never-uploaded-ref-409",
        {"ref": "never-uploaded"},
        {"status": 409},
    )
    if ours:
        _observe_probe(
            probing,
            observe,
            "observe-a-never-uploaded-message-part-ref-409",
            {"ref": "never-uploaded"},
            {"status": 409},
            _message_part_observation,
        )
        probing.probes.append(
            Probe(
                "no-answer-redirects",
                {"redirects": []},
                {"redirects": sorted({s for s in probing.statuses if 300 <= s < 400})},
            )
        )
    return _rows(probing.probes, v1)
