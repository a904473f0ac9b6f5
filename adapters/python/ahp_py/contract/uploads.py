"""Uploads in the lifecycle contract: the server's receipts of every attempt,
and where a client finds its upload credential.

Server: every attempt on the upload listener is recorded ``{"kind": "upload",
"ref"?, "status", "size", "sha256"}`` with the size and hash the sender
declared (``ref`` only on a 201), before the answer goes out. Client: the
bearer token is read from the environment variable the config names (never
printed); a variable that is not set means no credential is sent.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..sdk.upload import Attempt, ContentStore, UploadReceiver
from .entries import UPLOAD, EntryLog


def upload_receiver(token: str, store: ContentStore, entries: EntryLog) -> UploadReceiver:
    def attempted(attempt: Attempt) -> None:
        entry: dict[str, Any] = {"kind": UPLOAD}
        if attempt.ref is not None:
            entry["ref"] = attempt.ref
        entry.update(status=attempt.status, size=attempt.size, sha256=attempt.sha256)
        entries.record(entry)

    return UploadReceiver(token, store, attempted)


def upload_token(variable: str) -> str | None:
    token = os.environ.get(variable)
    if not token:
        print(
            f"ahp_py client: ${variable} is not set: uploading without a credential",
            file=sys.stderr,
            flush=True,
        )
        return None
    return token
