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


def _occurrences(text: str, secrets: set[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        start = text.find(secret)
        while start != -1:
            spans.append((start, start + len(secret)))
            start = text.find(secret, start + 1)
    return spans


def _covered(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with one placeholder over each stretch the spans cover (overlapping or
    touching spans make one stretch: no piece of an overlapping secret is left)."""
    pieces: list[str] = []
    position = 0
    end = -1
    for begin, stop in sorted(spans):
        if begin > end:  # a new stretch
            if end >= 0:
                pieces.append(PLACEHOLDER)
            pieces.append(text[position:begin])
            end = stop
        else:
            end = max(end, stop)
        position = end
    if end >= 0:
        pieces.append(PLACEHOLDER)
    pieces.append(text[position:])
    return "".join(pieces)


_BREAK = re.compile(r"[\r\n][ \t\r\n]*")


class _Finder:
    """Which of the registered secrets occur in a text, found in one pass.

    Every secret is made of the characters of the set's alphabet, so each of its
    occurrences lies inside one maximal run of such characters: the runs are cut
    out at C speed, and only the distinct ones are looked into, by the secrets'
    first `width` characters. The cost grows with the text, not with text times
    secrets (a 15 MB JUnit file against thousands of secret forms: 12 s with a
    search per secret).

    Secrets are added in place (the run registers new ones as combinations start,
    between redactions): a secret no shorter than `width` joins its head's list,
    and the pattern is compiled again only when the alphabet grows. A shorter one
    needs a finder of its own (`add` returns False)."""

    def __init__(self, secrets: set[str]) -> None:
        self.width = min(len(s) for s in secrets)
        self._alphabet: set[str] = set()
        self._runs = re.compile("")
        self._heads: dict[str, list[str]] = {}
        self.add(secrets)

    def add(self, secrets: set[str]) -> bool:
        """Add secrets (the caller holds the redactor's lock); False when one is
        shorter than `width`, and nothing was added."""
        if any(len(s) < self.width for s in secrets):
            return False
        for secret in secrets:
            self._heads.setdefault(secret[: self.width], []).append(secret)
        alphabet = self._alphabet.union(*secrets)
        if alphabet != self._alphabet:
            self._alphabet = alphabet
            characters = "".join(re.escape(c) for c in sorted(alphabet))
            self._runs = re.compile(f"[{characters}]{{{self.width},}}")
        return True

    def present(self, text: str) -> set[str]:
        found: set[str] = set()
        heads, width = self._heads, self.width
        for run in set(self._runs.findall(text)):
            for start in range(len(run) - width + 1):
                for secret in heads.get(run[start : start + width], ()):
                    if run.startswith(secret, start):
                        found.add(secret)
        return found


def _across_lines(text: str, finder: _Finder) -> str:
    """Redact secrets that a line break (and the next line's indentation) splits."""
    secrets = finder.present(_BREAK.sub("", text))
    if not secrets:
        return text
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

    spans = [(in_text(b), in_text(e - 1) + 1) for b, e in _occurrences(joined, secrets)]
    return _covered(text, spans)


class Redactor:
    """Replaces every registered secret (and its obvious encodings) in text."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._finder: _Finder | None = None  # made at the first redaction
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
            new = {form for form in forms if len(form) >= 8} - self._secrets
            if new:
                self._secrets |= new
                if self._finder is not None and not self._finder.add(new):
                    self._finder = None  # a shorter secret: made again, by the next redaction

    def _current(self) -> _Finder | None:
        with self._lock:
            if self._finder is None and self._secrets:
                self._finder = _Finder(self._secrets)
            return self._finder

    def __call__(self, text: str) -> str:
        finder = self._current()
        if finder is None:
            return text
        present = finder.present(text)
        if present:
            text = _covered(text, _occurrences(text, present))
        if "\n" in text or "\r" in text:
            text = _across_lines(text, finder)
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
