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

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from interop.trust import Trust

if TYPE_CHECKING:
    from interop.runtime.context import RunContext

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
    channel: str = "event"  # which of the server's listeners: event, control, upload
    arrived: int = 0  # monotonic ns: the whole request had reached the relay
    done: int = 0  # monotonic ns: the whole answer had come back from the server

    def as_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "arrivedNs": self.arrived,
            "doneNs": self.done,
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
    """The relay for one client run against `target` (the server's endpoint).

    `channel` names the listener in the frames; `credential` replaces the run's
    credential verdict (an upload listener's own token; None: a listener without
    one); `client_certificate=False` lets a client in without a certificate where
    the mode is mTLS (a listener the mode's certificate is not for)."""

    def __init__(
        self,
        trust: Trust,
        mode: str,
        profile: str,
        target: str,
        *,
        channel: str = "event",
        credential: Callable[[list[str]], bool | None] | None = None,
        client_certificate: bool = True,
    ) -> None:
        self.trust = trust
        self.mode = mode
        self.profile = profile
        self.target = urlsplit(target)
        self.channel = channel
        self.judge = credential or (
            lambda given: self.trust.credential_valid(self.mode, self.profile, given)
        )
        self.client_certificate = client_certificate
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
            timeout = TIMEOUT  # a client that stalls frees its thread

            def log_message(self, *_: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()  # headers and body go in two writes: never wait on Nagle
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _relay(self) -> None:
                raw, body, short = _read_body(self.rfile, self.headers)
                frame = capture.forward(
                    self.command, self.path, list(self.headers.items()), raw, body, short
                )
                self.send_response(frame.status)
                for name, value in frame.answer_headers:
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(frame.answer)))
                if short:  # the client half-closed: nothing more will come
                    self.close_connection = True
                self.end_headers()
                try:
                    self.wfile.write(frame.answer)
                except OSError:  # the client had hung up: the frame keeps the answer
                    self.close_connection = True

            do_POST = _relay
            do_GET = _relay

        server = _Quiet(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self._tls():
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(
                self.trust.path("server.pem"), self.trust.path("server-key.pem")
            )
            if self.mode == "mtls":
                context.verify_mode = (
                    ssl.CERT_REQUIRED if self.client_certificate else ssl.CERT_OPTIONAL
                )
                context.load_verify_locations(self.trust.path("ca.pem"))
            server.socket = context.wrap_socket(  # the handshake runs in the handler's
                server.socket,
                server_side=True,
                do_handshake_on_connect=False,  # thread
            )
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        scheme = "https" if self._tls() else "http"
        self.endpoint = f"{scheme}://127.0.0.1:{server.server_address[1]}{self.target.path}"

    def forward(
        self,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        raw: bytes,
        body: bytes | None = None,
        short: bool = False,
    ) -> Frame:
        """Send the request on as it came: its headers in order (duplicates kept; `Host`
        names the server), its body's bytes as framed (`raw`; chunks stay chunks), and,
        when the client half-closed before its declared length, half-close too.
        `body` is the decoded body the frame keeps (default `raw`)."""
        arrived = time.monotonic_ns()
        body = raw if body is None else body
        given = [v for k, v in headers if k.lower() == "authorization"]
        credential = self.judge(given)
        kept = [(k, v) for k, v in headers if k.lower() != "host"]
        shown = [
            (k, _verdict(credential) if k.lower() in CREDENTIAL_HEADERS else v) for k, v in kept
        ]
        host = f"{self.target.hostname or '127.0.0.1'}:{self.target.port}"
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in kept) + "\r\n"
        try:
            sock = self._connect()
            try:
                # a server that answers before reading it all (413) and closes: its
                with contextlib.suppress(OSError):  # answer may still be there to read
                    sock.sendall(head.encode("latin-1") + raw)
                if short:  # the TCP half-close, under TLS too (the session stays readable)
                    socket.socket.shutdown(sock, socket.SHUT_WR)
                response = http.client.HTTPResponse(sock, method=method)
                response.begin()
                frame = Frame(
                    method, path, shown, body, response.status, response.getheaders(),
                    response.read(),
                )  # fmt: skip
            finally:
                sock.close()
        except (OSError, http.client.HTTPException) as exc:
            message = json.dumps({"error": f"the capture relay could not reach the server: {exc}"})
            frame = Frame(method, path, shown, body, 502, [], message.encode())
        frame.credential = credential
        frame.channel, frame.arrived, frame.done = self.channel, arrived, time.monotonic_ns()
        with self._lock:
            self.frames.append(frame)
        return frame

    def _connect(self) -> socket.socket:
        host, port = self.target.hostname or "127.0.0.1", self.target.port or 80
        sock = socket.create_connection((host, port), timeout=TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self._tls():
            return sock
        context = ssl.create_default_context(cafile=self.trust.path("ca.pem"))
        if self.mode == "mtls":
            context.load_cert_chain(
                self.trust.path("client.pem"), self.trust.path("client-key.pem")
            )
        return context.wrap_socket(sock, server_hostname=host)

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
            self._server = None  # once: a caller's cleanup may stop it again


class _Quiet(ThreadingHTTPServer):
    """A relay's listener: a client that hangs up or fails its handshake is the
    exchange's business (the frame shows what came back), never a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


def _read_body(rfile: Any, headers: Any) -> tuple[bytes, bytes, bool]:
    """A request's body as it crossed (`raw`: chunk framing kept), decoded, and whether
    the client half-closed before the length it declared."""
    if "chunked" in str(headers.get("Transfer-Encoding", "")).lower():
        raw, body = bytearray(), bytearray()
        while True:
            line = rfile.readline(65537)
            raw += line
            if not line:
                return bytes(raw), bytes(body), True
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while True:  # trailers, up to the blank line
                    trailer = rfile.readline(65537)
                    raw += trailer
                    if trailer in (b"\r\n", b"\n", b""):
                        return bytes(raw), bytes(body), trailer == b""
            chunk = rfile.read(size + 2)
            raw += chunk
            body += chunk[:size]
            if len(chunk) < size + 2:
                return bytes(raw), bytes(body), True
    try:
        size = int(headers.get("Content-Length") or 0)
    except ValueError:
        size = 0
    data = rfile.read(size) if size > 0 else b""
    return data, data, len(data) < size


def _verdict(valid: bool | None) -> str:
    if valid is None:
        return "<a credential this mode does not use>"
    return "<the run's credential>" if valid else "<not the run's credential>"


class Relays:
    """The recording relays of one step client run, in front of each of the server's
    HTTP listeners (event, control, upload), when the run is a recheck
    (`ctx.capture`); otherwise the server's own endpoints, untouched.

    `upload_token` is the upload listener's own token, judged there in place of
    the event credential."""

    def __init__(
        self,
        ctx: RunContext,
        mode: str,
        endpoint: str,
        control: str,
        upload: str | None = None,
        upload_token: str | None = None,
    ) -> None:
        self.endpoint, self.control, self.upload = endpoint, control, upload
        self.captures: list[Capture] = []
        if not ctx.capture:
            return

        def relay(target: str, **options: Any) -> str:
            capture = Capture(ctx.trust, mode, ctx.profile, target, **options)
            capture.start()
            self.captures.append(capture)
            return capture.endpoint

        self.endpoint = relay(endpoint)
        if control:
            self.control = relay(
                control, channel="control", credential=_none, client_certificate=False
            )
        if upload:
            wanted = f"Bearer {upload_token}" if upload_token else None
            self.upload = relay(
                upload,
                channel="upload",
                credential=lambda given: None if wanted is None else given == [wanted],
                client_certificate=False,
            )

    def stop(self) -> None:
        for capture in self.captures:
            capture.stop()

    def frames(self) -> list[Frame]:
        """Every exchange, in the order it reached the relays."""
        return sorted((f for c in self.captures for f in c.frames), key=lambda f: f.arrived)

    def keep(self, ctx: RunContext, key: str, set_name: str) -> None:
        """The frames into the report's logs (`<key>/capture-<set>.json`), when recording."""
        if self.captures:
            path = ctx.unique(f"capture-{set_name}") / "frames.json"
            path.write_text(json.dumps([f.as_json() for f in self.frames()], indent=1))
            ctx.keep_log(path, f"{key}/capture-{set_name}.json")


def _none(_: list[str]) -> None:
    return None
