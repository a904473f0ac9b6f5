"""The one redaction function: no secret reaches a report or a log."""

from __future__ import annotations

import re
import threading

PLACEHOLDER = "[REDACTED]"
_VOLATILE = (
    (re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+"), r"\1:<port>"),
    (re.compile(r"\bpid \d+"), "pid <pid>"),
)


class Redactor:
    """Replaces every registered secret (and its obvious encodings) in text."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._paths: dict[str, str] = {}
        self._lock = threading.Lock()

    def add_path(self, path: str, placeholder: str) -> None:
        """Replace a run-specific path (e.g. the temp dir) with a stable placeholder."""
        with self._lock:
            self._paths[path] = placeholder

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

    def stable(self, text: str) -> str:
        """Redact, then replace what varies between runs: paths, ports, pids."""
        text = self(text)
        with self._lock:
            paths = sorted(self._paths.items(), key=lambda item: len(item[0]), reverse=True)
        for path, placeholder in paths:
            text = text.replace(path, placeholder)
        for pattern, replacement in _VOLATILE:
            text = pattern.sub(replacement, text)
        return text

    def bytes(self, data: bytes) -> bytes:
        return self(data.decode("utf-8", errors="replace")).encode("utf-8")
