"""The isolation suite's upload origins: what a capture records and the upload rules.

- `Capture`: an upload origin (runtime/origin.py's `Origin`, on loopback) that
  records each raw request (header names and counts, framing, body size and
  hash, whether a TLS client certificate was presented; never a credential's
  value) and applies the upload rules: a clean upload gets 201 `{ref, size,
  sha256}` with a fresh `urn:uuid:` ref (or, redirecting, 307 to another
  origin), anything else 400.
- `secret_label`: whose secret a sensitive header's value carries.

The cookie relay in front of the event server is runtime/origin.py's
`CookieRelay`. Every origin is threaded, one request per capture connection,
and stopped (joined) by `close()`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from interop.runtime.listener import TlsContext
from interop.runtime.origin import CANONICAL_LENGTH, Answer, Arrival, Origin
from interop.trust import ISSUER

MAX_BYTES = 1024 * 1024
CONTENT_TYPE = "application/octet-stream"
HASH_HEADER = "ahp-content-sha256"
FRAMING = ("content-length", "content-type", HASH_HEADER)
CODINGS = ("transfer-encoding", "content-encoding")
IDENTITY = ("ahp-subscription", "ahp-content-ref")
SENSITIVE = ("authorization", "proxy-authorization", "cookie")
SHOWN = {
    "content-length": "Content-Length",
    "content-type": "Content-Type",
    HASH_HEADER: "AHP-Content-SHA256",
    "transfer-encoding": "Transfer-Encoding",
    "content-encoding": "Content-Encoding",
    "ahp-subscription": "AHP-Subscription",
    "ahp-content-ref": "AHP-Content-Ref",
    "authorization": "Authorization",
    "proxy-authorization": "Proxy-Authorization",
    "cookie": "Cookie",
}


@dataclass
class Captured:
    """One request as the origin saw it. Values are kept only for framing headers;
    a sensitive header is kept as its name and a label of whose it looked like."""

    method: str
    target: str
    tls: bool
    client_certificate: str | None  # None, or a label (the event's, another)
    headers: dict[str, int]  # lower-case name -> count
    framing: dict[str, list[str]]  # content-length, content-type, hash, codings -> values
    sensitive: dict[str, list[str]]  # name -> label per occurrence
    size: int  # bytes read
    sha256: str  # of the bytes read
    complete: bool  # the whole declared body arrived
    status: int = 0
    ref: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (error class, message)
    cookies_before: int | None = None  # cookie case: answers the relay had sent by then

    def summary(self) -> dict[str, Any]:
        """What a report may show: no value of a sensitive header, no ref."""
        shown: dict[str, Any] = (
            {} if self.cookies_before is None else {"cookiesSetBefore": self.cookies_before}
        )
        return {
            **shown,
            "method": self.method,
            "target": self.target,
            "tls": self.tls,
            "clientCertificate": self.client_certificate,
            "headers": dict(sorted(self.headers.items())),
            "sensitive": dict(sorted(self.sensitive.items())),
            "size": self.size,
            "sha256": self.sha256,
            "status": self.status,
        }


# ---------------------------------------------------------------- the capture


class Capture:
    """An upload origin: records every request, answers by the rules.

    `redirect`: a clean upload is answered 307 with `Location: redirect` instead
    of 201. `labels` names a sensitive header's value (never stored) and
    `certificate_label` a presented client certificate (DER) for the record.
    """

    def __init__(
        self,
        path: str,
        *,
        context: TlsContext | None = None,
        redirect: str | None = None,
        labels: Callable[[str, str], str] | None = None,
        certificate_label: Callable[[bytes], str] | None = None,
    ) -> None:
        self.path = path
        self.redirect = redirect
        self.cookies: Callable[[], int] | None = None  # set for the cookie case
        self.labels = labels or (lambda name, value: "a value")
        self.certificate_label = certificate_label or (lambda der: "a certificate")
        self.captured: list[Captured] = []
        self.handshakes: list[str] = []  # why each failed TLS handshake failed
        self._lock = threading.Lock()
        self.origin = Origin(
            self.answer,
            limit=MAX_BYTES,
            context=context,
            on_handshake_failure=self.handshake_failed,
        )

    @property
    def endpoint(self) -> str:
        return self.origin.url(self.path)

    def close(self) -> None:
        self.origin.close()

    def handshake_failed(self, exc: BaseException) -> None:
        reason = getattr(exc, "reason", None) or type(exc).__name__
        with self._lock:
            self.handshakes.append(str(reason))

    def record(self, captured: Captured) -> None:
        with self._lock:
            self.captured.append(captured)

    def snapshot(self) -> tuple[list[Captured], list[str]]:
        with self._lock:
            return list(self.captured), list(self.handshakes)

    def answer(self, arrival: Arrival) -> Answer:
        """The request recorded, judged and answered by the upload rules (recorded
        before the answer is sent: a client may exit as soon as it reads it)."""
        captured = self.captured_of(arrival)
        if self.cookies is not None:
            captured.cookies_before = self.cookies()
        captured.problems = judge(captured, self.path)
        if captured.problems:
            captured.status = 400
            answer = Answer(400, [], b"")
        elif self.redirect is not None:
            captured.status = 307
            answer = Answer(307, [("Location", self.redirect)], b"")
        else:
            captured.status = 201
            captured.ref = f"urn:uuid:{uuid.uuid4()}"
            receipt = {"ref": captured.ref, "size": captured.size, "sha256": captured.sha256}
            payload = json.dumps(receipt, separators=(",", ":")).encode()
            answer = Answer(201, [("Content-Type", "application/json")], payload)
        self.record(captured)
        return answer

    def captured_of(self, arrival: Arrival) -> Captured:
        """What the record keeps of a request: header counts, framing values, a label
        per sensitive value and for a presented certificate, the body's size and hash."""
        counts: dict[str, int] = {}
        framing: dict[str, list[str]] = {n: [] for n in (*FRAMING, *CODINGS)}
        sensitive: dict[str, list[str]] = {}
        for name, value in arrival.headers:
            lower = name.lower()
            counts[lower] = counts.get(lower, 0) + 1
            if lower in framing:
                framing[lower].append(value.strip())
            if lower in SENSITIVE:
                sensitive.setdefault(lower, []).append(self.labels(lower, value))
        certificate = None
        if arrival.certificate:
            certificate = self.certificate_label(arrival.certificate)
        return Captured(
            method=arrival.method,
            target=arrival.target,
            tls=arrival.tls,
            client_certificate=certificate,
            headers=counts,
            framing=framing,
            sensitive=sensitive,
            size=len(arrival.body),
            sha256=hashlib.sha256(arrival.body).hexdigest(),
            complete=arrival.complete,
        )


def judge(captured: Captured, path: str) -> list[tuple[str, str]]:
    """The upload rules, each broken one as (error class, message)."""
    problems: list[tuple[str, str]] = []
    if captured.method != "POST" or captured.target != path:
        problems.append(
            (
                "CaptureTarget",
                f"{captured.method} {captured.target}, the step's endpoint is POST {path}",
            )
        )
    counts = captured.headers
    for name in FRAMING:
        if counts.get(name, 0) != 1:
            problems.append(
                ("CaptureFraming", f"{counts.get(name, 0)} {SHOWN[name]} headers, one needed")
            )
    for name in CODINGS:
        if counts.get(name, 0):
            problems.append(("CaptureFraming", f"a {SHOWN[name]} header {captured.framing[name]}"))
    lengths = captured.framing["content-length"]
    if len(lengths) == 1:
        if not CANONICAL_LENGTH.fullmatch(lengths[0]):
            problems.append(("CaptureFraming", f"Content-Length {lengths[0]!r} is not canonical"))
        elif int(lengths[0]) > MAX_BYTES:
            problems.append(("CaptureFraming", f"Content-Length {lengths[0]} is over 1 MiB"))
        elif not captured.complete:
            problems.append(
                ("CaptureFraming", f"{captured.size} bytes arrived of {lengths[0]} declared")
            )
    types = captured.framing["content-type"]
    if len(types) == 1 and types[0] != CONTENT_TYPE:
        problems.append(("CaptureFraming", f"Content-Type {types[0]!r}, not {CONTENT_TYPE}"))
    hashes = captured.framing[HASH_HEADER]
    if len(hashes) == 1 and captured.complete and hashes[0] != captured.sha256:
        problems.append(
            (
                "CaptureIntegrity",
                f"AHP-Content-SHA256 {hashes[0][:16]}... is not the sha256 of the "
                f"{captured.size} bytes received ({captured.sha256[:16]}...)",
            )
        )
    for name in IDENTITY:
        if counts.get(name, 0):
            problems.append(("CaptureIdentity", f"the upload carried {SHOWN[name]}"))
    for name in SENSITIVE:
        for label in captured.sensitive.get(name, []):
            problems.append(("CaptureLeak", f"the upload carried {SHOWN[name]} ({label})"))
    if captured.client_certificate is not None:
        problems.append(
            (
                "CaptureLeak",
                f"a TLS client certificate was presented ({captured.client_certificate})",
            )
        )
    return problems


def secret_label(
    secrets: dict[str, str], redacts: Callable[[str], bool]
) -> Callable[[str, str], str]:
    """A labeller of sensitive header values: whose secret it carries (by the run's own
    secrets, given as label -> value), a harness JWT by its purpose, else "a value"."""

    def label(name: str, value: str) -> str:
        for what, secret in secrets.items():
            if secret and secret in value:
                return what
        token = value.split(" ", 1)[1].strip() if " " in value else value
        purpose = _jwt_purpose(token)
        if purpose is not None:
            return f"the event's {purpose} token"
        return "another run secret" if redacts(value) else "a value"

    return label


def _jwt_purpose(token: str) -> str | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, TypeError):
        return None
    if isinstance(claims, dict) and claims.get("iss") == ISSUER:
        return str(claims.get("purpose", "event"))
    return None
