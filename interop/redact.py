"""The one redaction function: no secret reaches a report or a log."""

from __future__ import annotations

import threading

PLACEHOLDER = "[REDACTED]"


class Redactor:
    """Replaces every registered secret (and its obvious encodings) in text."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secret: str) -> None:
        if len(secret) < 8:
            raise ValueError("refusing to register a secret shorter than 8 characters")
        with self._lock:
            self._secrets.add(secret)

    def __call__(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, PLACEHOLDER)
        return text

    def bytes(self, data: bytes) -> bytes:
        return self(data.decode("utf-8", errors="replace")).encode("utf-8")
