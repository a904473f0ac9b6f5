"""A recording HTTP relay between a client and its server: the wire evidence of a re-run.

When a failed row is run again alone (the runner's recheck), the client talks to
this relay instead of its server. It accepts the client's connection as the
server would (plain HTTP, or TLS with the server's own certificate and, for mTLS,
the same demand of a client certificate), forwards each request to the server
unchanged (over TLS, presenting the run's client certificate where the mode asks
for one) and sends the server's answer back unchanged. Each exchange is kept as a
frame: the request line, its headers with every credential replaced by a verdict
of the harness (`<the run's credential>` or `<not the run's credential>`: never a
secret), its body, and the answer's status, headers and body. A credential is
judged only by the run's own trust (interop/trust.py `credential_valid`).

`replies()` gives what the server answered per request id, in the shape the
core verdict reads from the stdio relay (`(id, parsed answer)`), with an HTTP
refusal as `{"httpStatus": N, "credential": "valid" | "invalid" | None}`.
Nothing here judges: the verifiers and docs/blame.md do.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from interop.trust import Trust

CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie")
TIMEOUT = 60.0


@dataclass
class Frame:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    status: int
    answer_headers: list[tuple[str, str]] = field(default_factory=list)
    answer: bytes = b""
    credential: bool | None = None  # the run's valid credential (None: the mode has none)

    def as_json(self) -> dict[str, Any]:
        return {
            "request": {
                "method": self.method,
                "path": self.path,
                "headers": [list(h) for h in self.headers],
                "body": self.body.decode("utf-8", "replace"),
            },
            "answer": {
                "status": self.status,
                "headers": [list(h) for h in self.answer_headers],
                "body": self.answer.decode("utf-8", "replace"),
            },
        }


class Capture:
    """The relay for one client run against `target` (the server's endpoint)."""

    def __init__(self, trust: Trust, mode: str, profile: str, target: str) -> None:
        self.trust = trust
        self.mode = mode
        self.profile = profile
        self.target = urlsplit(target)
        self.frames: list[Frame] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.endpoint = ""

    def _tls(self) -> bool:
        return self.target.scheme == "https"

    def start(self) -> None:
        capture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def _relay(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size > 0 else b""
                frame = capture.forward(self.command, self.path, list(self.headers.items()), body)
                self.send_response(frame.status)
                for name, value in frame.answer_headers:
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(frame.answer)))
                self.end_headers()
                self.wfile.write(frame.answer)

            do_POST = _relay
            do_GET = _relay

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self._tls():
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(
                self.trust.path("server.pem"), self.trust.path("server-key.pem")
            )
            if self.mode == "mtls":
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(self.trust.path("ca.pem"))
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        scheme = "https" if self._tls() else "http"
        self.endpoint = f"{scheme}://127.0.0.1:{server.server_address[1]}{self.target.path}"

    def forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Frame:
        given = [v for k, v in headers if k.lower() == "authorization"]
        credential = self.trust.credential_valid(self.mode, self.profile, given)
        kept = [(k, v) for k, v in headers if k.lower() != "host"]
        shown = [
            (k, _verdict(credential) if k.lower() in CREDENTIAL_HEADERS else v) for k, v in kept
        ]
        try:
            connection = self._connection()
            connection.request(method, path, body=body, headers=dict(kept))
            response = connection.getresponse()
            frame = Frame(
                method, path, shown, body, response.status, response.getheaders(), response.read()
            )
            connection.close()
        except (OSError, http.client.HTTPException) as exc:
            message = json.dumps({"error": f"the capture relay could not reach the server: {exc}"})
            frame = Frame(method, path, shown, body, 502, [], message.encode())
        frame.credential = credential
        with self._lock:
            self.frames.append(frame)
        return frame

    def _connection(self) -> http.client.HTTPConnection:
        host, port = self.target.hostname or "127.0.0.1", self.target.port
        if not self._tls():
            connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT)
        else:
            context = ssl.create_default_context(cafile=self.trust.path("ca.pem"))
            if self.mode == "mtls":
                context.load_cert_chain(
                    self.trust.path("client.pem"), self.trust.path("client-key.pem")
                )
            connection = http.client.HTTPSConnection(host, port, timeout=TIMEOUT, context=context)
        connection.connect()
        assert connection.sock is not None
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def replies(self) -> list[tuple[Any, Any]]:
        """What the server answered each request (by its JSON-RPC id): the parsed answer,
        or for a refusal `{"httpStatus", "credential"}`."""
        found: list[tuple[Any, Any]] = []
        for frame in self.frames:
            try:
                request = json.loads(frame.body)
            except ValueError:
                continue
            ident = request.get("id") if isinstance(request, dict) else None
            if frame.status != 200:
                credential = (
                    None
                    if frame.credential is None
                    else ("valid" if frame.credential else "invalid")
                )
                found.append((ident, {"httpStatus": frame.status, "credential": credential}))
                continue
            try:
                found.append((ident, json.loads(frame.answer)))
            except ValueError:
                found.append((ident, {"unparsed": frame.answer.decode("utf-8", "replace")}))
        return found

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _verdict(valid: bool | None) -> str:
    if valid is None:
        return "<a credential this mode does not use>"
    return "<the run's credential>" if valid else "<not the run's credential>"
