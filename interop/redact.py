"""The one redaction function: no secret reaches a report or a log."""

from __future__ import annotations

import base64
import bisect
import json
import re
import threading

PLACEHOLDER = "[REDACTED]"
_VOLATILE = (
    (re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+"), r"\1:<port>"),
    (re.compile(r"\bpid \d+"), "pid <pid>"),
)


_BREAK = re.compile(r"[\r\n][ \t\r\n]*")


def _across_lines(text: str, secrets: list[str]) -> str:
    """Redact secrets that a line break (and the next line's indentation) splits."""
    pieces: list[str] = []
    joined_starts: list[int] = []  # where each piece starts in the joined view
    text_starts: list[int] = []  # and in `text`
    length = 0
    position = 0
    for found in _BREAK.finditer(text):
        joined_starts.append(length)
        text_starts.append(position)
        pieces.append(text[position : found.start()])
        length += found.start() - position
        position = found.end()
    joined_starts.append(length)
    text_starts.append(position)
    pieces.append(text[position:])
    joined = "".join(pieces)

    def in_text(index: int) -> int:
        piece = bisect.bisect_right(joined_starts, index) - 1
        return text_starts[piece] + index - joined_starts[piece]

    spans: list[tuple[int, int]] = []
    for secret in secrets:
        start = joined.find(secret)
        while start != -1:
            spans.append((in_text(start), in_text(start + len(secret) - 1) + 1))
            start = joined.find(secret, start + len(secret))
    for begin, end in sorted(set(spans), reverse=True):
        text = text[:begin] + PLACEHOLDER + text[end:]
    return text


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
        """Register a secret with its encodings: JSON-escaped, base64 and base64url."""
        if len(secret) < 8:
            raise ValueError("refusing to register a secret shorter than 8 characters")
        raw = secret.encode("utf-8")
        forms = {secret, json.dumps(secret)[1:-1]}
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            text = encoded.decode("ascii")
            forms.update({text, text.rstrip("=")})
        with self._lock:
            self._secrets.update(form for form in forms if len(form) >= 8)

    def __call__(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, PLACEHOLDER)
        if "\n" in text:
            text = _across_lines(text, secrets)
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
