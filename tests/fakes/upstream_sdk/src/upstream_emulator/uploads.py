"""The raw upload receiver: `POST /content` on its own loopback listener.

Raw octets with `Content-Type: application/octet-stream`, an exact
`Content-Length` and `AHP-Content-SHA256` (hex). `Authorization: Bearer
<uploadAuth.token>` or 401; a body of another size or hash (a sender that
declares more than it sends and half-closes included) 400. Success stores the
bytes and answers 201 `{ref, size, sha256}`, the ref allocated here. Every
attempt is recorded `{kind: "upload", status, size, sha256, ref?}` with the size
and hash the sender declared. A declared length over 1 MiB (the `upload.maxBytes`
the runner hands its clients) is refused 413 without reading the body: this
emulator's choice, not a fact about upstream receivers.
"""

from __future__ import annotations

import hashlib
import re
import threading
import uuid

from upstream_emulator.httpserve import Reply, Request, Route, bearer_ok
from upstream_emulator.ledger import Ledger

HEX = re.compile(r"[0-9a-f]{64}")
OCTETS = "application/octet-stream"
MAX_BYTES = 1048576


def upload_route(ledger: Ledger, token: str | None) -> Route:
    """`token` None: uploads are refused (no `uploadAuth` configured)."""
    stored: dict[str, bytes] = {}
    lock = threading.Lock()

    def route(request: Request) -> Reply:
        if (request.method, request.path) != ("POST", "/content"):
            return Reply(404, {"error": "Not found"})
        size = request.length if request.length is not None else 0
        declared = request.headers.get("AHP-Content-SHA256") or ""

        def answer(status: int, body: object, ref: str | None = None) -> Reply:
            entry = {"kind": "upload", "status": status, "size": size, "sha256": declared}
            if ref is not None:
                entry["ref"] = ref
            ledger.record(entry)
            return Reply(status, body, close=status != 201)

        if token is None or not bearer_ok(request, token):
            return answer(401, {"error": "Unauthorized"})
        content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip()
        if content_type != OCTETS or not HEX.fullmatch(declared):
            return answer(400, {"error": "Invalid upload headers"})
        if size > MAX_BYTES:
            return answer(413, {"error": "Too large"})
        data = request.body()
        if data is None or len(data) != size:
            return answer(400, {"error": "Size mismatch"})
        if hashlib.sha256(data).hexdigest() != declared:
            return answer(400, {"error": "Hash mismatch"})
        ref = f"urn:uuid:{uuid.uuid4()}"
        with lock:
            stored[ref] = data  # immutable: a ref is never reused
        return answer(201, {"ref": ref, "size": size, "sha256": declared}, ref)

    return route
